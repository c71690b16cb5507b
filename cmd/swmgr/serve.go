package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net"
	"os"
	"os/signal"
	"path/filepath"
	"runtime"
	"runtime/debug"
	"strconv"
	"syscall"
	"time"

	"github.com/spf13/cobra"

	"github.com/swmgr/swmgr/internal/aaa"
	"github.com/swmgr/swmgr/internal/access"
	"github.com/swmgr/swmgr/internal/accounts"
	"github.com/swmgr/swmgr/internal/auth"
	"github.com/swmgr/swmgr/internal/datadir"
	"github.com/swmgr/swmgr/internal/gnmi"
	"github.com/swmgr/swmgr/internal/obs"
	"github.com/swmgr/swmgr/internal/peercred"
	"github.com/swmgr/swmgr/internal/secrets"
	"github.com/swmgr/swmgr/internal/service"
	"github.com/swmgr/swmgr/internal/store"
)

type serveOptions struct {
	dataDir           string
	http              string
	https             string
	gnmi              string // gNMI listen address; "" disables it
	tlsCert, tlsKey   string
	requireClientCert bool // refuse TLS clients without a certificate of the trust bundle
	adminPasswordFile string
	backend           string
	netns             string
	portMap           string
	ports             int
	logFormat         string
	logLevel          string
	socket            string // Unix socket path; "" disables it
	localOthers       string // read or refuse: local users who are not Users
	headerTimeout     time.Duration
	bodyTimeout       time.Duration
	maxConnsPerClient int
	reauthInterval    time.Duration // how often a stream's user is authorised again
	accessLog         bool
	metrics           bool
	metricsTokenFile  string // a bearer token that reads /metrics (metricstoken.go)
	startupConfig     string
	daemons           daemonFlags // linux backend: BGP, NTP, host settings
	gnoi              gnoiFlags   // gNOI on the gNMI port
	ztp               ztpFlags    // zero-touch provisioning

	// Set by tests only.
	accounts     accounts.Accounts                // instead of the backend's own
	noFirstAdmin bool                             // do not make the first admin
	accountsFrom string                           // --accounts: own or host
	throttle     auth.ThrottleOptions             // login throttle settings
	logOut       io.Writer                        // instead of stderr
	ready        func(httpAddr, httpsAddr string) // called once listening
	// peerCred, if set, is the kernel lookup of a local peer instead of
	// peercred.Of, made as a connection is accepted (a test makes it wait
	// until the client has closed).
	peerCred func(net.Conn) (peercred.Cred, error)
}

func defaultDataDir() string {
	if os.Geteuid() == 0 {
		return "/var/lib/swmgr"
	}
	if home, err := os.UserHomeDir(); err == nil {
		return filepath.Join(home, ".local", "state", "swmgr")
	}
	return "swmgr-data"
}

func serveCommand() *cobra.Command {
	o := &serveOptions{}
	cmd := &cobra.Command{
		Use:   "serve",
		Short: "Run the service",
		Args:  cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			ctx, stop := signal.NotifyContext(cmd.Context(), syscall.SIGTERM, os.Interrupt)
			defer stop()
			return serve(ctx, o)
		},
	}
	f := cmd.Flags()
	f.StringVar(&o.dataDir, "data-dir", defaultDataDir(), "directory of the database, keys and saved configuration")
	f.StringVar(&o.http, "http", "127.0.0.1:8080", "plain HTTP listen address (\"\" disables it)")
	f.StringVar(&o.https, "https", ":443", "HTTPS listen address, Basic credentials required (\"\" disables it)")
	f.StringVar(&o.gnmi, "gnmi", "", "gNMI listen address (gRPC with the HTTPS certificate, metadata username/password), conventionally :"+gnmi.DefaultPort+" (\"\" disables it)")
	f.StringVar(&o.tlsCert, "tls-cert", "", "HTTPS certificate chain (PEM); default: a self-signed one made in the data directory")
	f.StringVar(&o.tlsKey, "tls-key", "", "private key of --tls-cert (PEM)")
	f.BoolVar(&o.requireClientCert, "require-client-cert", false, "refuse TLS clients without a certificate signed by the trust bundle (gNSI certz; tls-client-ca.pem in the data directory); default: a certificate given is checked, none is let through to authenticate with credentials")
	f.StringVar(&o.adminPasswordFile, "admin-password-file", "", "file holding the first admin's password (else $"+adminPasswordEnv+", else generated into <data-dir>/"+initialPasswordFile+")")
	f.StringVar(&o.backend, "backend", "sim", "switch backend: sim (simulated switch) or linux (this machine's kernel)")
	f.StringVar(&o.accountsFrom, "accounts", "own", "whose accounts Users are: own (passwd and shadow files of swmgr's own in the data directory) or host (this machine's, made with useradd & co; needs root)")
	f.StringVar(&o.netns, "netns", "", "linux backend: the switch's network namespace (default: swmgr's own)")
	f.StringVar(&o.portMap, "port-map", "", "linux backend: file of \"fpPort<N> <netdev>\" lines (default: netdevs swp<N> or fpPort<N> are fpPort<N>)")
	f.IntVar(&o.ports, "ports", 32, "front-panel ports of the simulated switch")
	f.StringVar(&o.logFormat, "log-format", "text", "log format: text or json")
	f.StringVar(&o.logLevel, "log-level", "info", "log level: debug, info, warn or error")
	f.StringVar(&o.socket, "socket", defaultSocketFlag, "Unix socket for local clients, identified by SO_PEERCRED (\"\" disables it)")
	f.StringVar(&o.localOthers, "local-others", "read", "what local OS users who are not swmgr Users may do without credentials (loopback HTTP, the socket): read or refuse")
	f.DurationVar(&o.headerTimeout, "header-timeout", defaultHeaderTimeout, "time a client has to send a request's headers (and the TLS handshake)")
	f.DurationVar(&o.bodyTimeout, "body-timeout", defaultBodyTimeout, "time a client has to send a request's body, after its headers")
	f.IntVar(&o.maxConnsPerClient, "max-conns-per-client", defaultMaxConnsPerClient, "open connections per client: per OS user for local clients (loopback TCP, the Unix socket), per address otherwise; more are closed at once")
	f.DurationVar(&o.reauthInterval, "reauth-interval", auth.DefaultReauthInterval, "how often the user of an open change-feed stream or gNMI subscription is authorised again (with the central AAA servers, or the local accounts when none answers); the stream ends when that user's access has ended. A User deleted or its password set ends its streams at once")
	f.BoolVar(&o.accessLog, "access-log", true, "log one line per request and per gNMI RPC (at info level)")
	f.BoolVar(&o.metrics, "metrics", true, "serve Prometheus metrics at /metrics")
	addMetricsFlags(f, o)
	addDaemonFlags(f, &o.daemons)
	addGNOIFlags(f, &o.gnoi)
	addZTPFlags(f, &o.ztp)
	f.StringVar(&o.startupConfig, "startup-config", "", "on a new data directory, load this saved configuration (///abs/path, file:///abs/path or sftp://host/path; default: <data-dir>/startup-config if present); an encrypted one takes $"+nonceEnv+" and $"+passphraseEnv+"")
	return cmd
}

func newLogger(w io.Writer, format, level string) (*slog.Logger, error) {
	var lv slog.Level
	if err := lv.UnmarshalText([]byte(level)); err != nil {
		return nil, fmt.Errorf("--log-level %q: use debug, info, warn or error", level)
	}
	opts := &slog.HandlerOptions{Level: lv}
	switch format {
	case "text":
		return slog.New(slog.NewTextHandler(w, opts)), nil
	case "json":
		return slog.New(slog.NewJSONHandler(w, opts)), nil
	}
	return nil, fmt.Errorf("--log-format %q: use text or json", format)
}

// buildVersion and buildCommit are set when packaging, with -ldflags
// "-X main.buildVersion=1.2.3 -X main.buildCommit=<hash>"; a plain build
// reports the module version or "dev", and the commit Go recorded.
var buildVersion, buildCommit string

// buildInfo says what this binary is: its version, the commit it was built
// from ("unknown" without VCS information; "+dirty" if the tree had
// changes) and the Go version.
func buildInfo() (ver, commit, goVersion string) {
	ver, commit, goVersion = buildVersion, "unknown", runtime.Version()
	if bi, ok := debug.ReadBuildInfo(); ok {
		if ver == "" && bi.Main.Version != "" && bi.Main.Version != "(devel)" {
			ver = bi.Main.Version
		}
		dirty := false
		for _, s := range bi.Settings {
			switch s.Key {
			case "vcs.revision":
				commit = s.Value
			case "vcs.modified":
				dirty = s.Value == "true"
			}
		}
		if dirty && commit != "unknown" {
			commit += "+dirty"
		}
	}
	if buildCommit != "" {
		commit = buildCommit
	}
	if ver == "" {
		ver = "dev"
	}
	return ver, commit, goVersion
}

// version is the one-word version the log and the API report.
func version() string {
	ver, commit, _ := buildInfo()
	if ver == "dev" && len(commit) >= 12 && commit != "unknown" {
		return "dev-" + commit[:12]
	}
	return ver
}

// versionLine is what --version and `swmgr version` print.
func versionLine() string {
	ver, commit, goVersion := buildInfo()
	return fmt.Sprintf("swmgr %s (commit %s, %s %s/%s)\n", ver, commit, goVersion, runtime.GOOS, runtime.GOARCH)
}

func serve(ctx context.Context, o *serveOptions) error {
	logOut := o.logOut
	if logOut == nil {
		logOut = os.Stderr
	}
	// The access log's lines go out in batches (no write system call per
	// request); the service's own lines at once, after them.
	lines := obs.NewLineBuffer(logOut)
	defer lines.Close()
	log, err := newLogger(lines.Direct(), o.logFormat, o.logLevel)
	if err != nil {
		return err
	}
	// The SyslogCollectors get the service's lines too, once there are any.
	syslogFwd := aaa.NewForwarder()
	defer syslogFwd.Close()
	log = slog.New(syslogFwd.Handler(log.Handler()))
	var level slog.Level
	_ = level.UnmarshalText([]byte(o.logLevel)) // newLogger checked it
	accessLog := obs.NewAccessLog(lines.Buffered(), o.logFormat, level)
	env, err := takeStartEnviron()
	if err != nil {
		return err
	}
	if err := o.check(); err != nil {
		return err
	}
	ob, err := newObservability(o, accessLog, log)
	if err != nil {
		return err
	}

	dd, err := openDataDir(o)
	if err != nil {
		return err
	}
	defer dd.close()
	so, err := o.serviceOptions(dd, ob, log, syslogFwd)
	if err != nil {
		return err
	}
	// Long-lived requests (change-feed streams, gNMI subscriptions) end
	// when their user's access does: checked again when an account or
	// the central AAA configuration changes, and every --reauth-interval.
	ao := access.Options{RefuseOthers: o.localOthers == "refuse", ReauthInterval: o.reauthInterval, Throttle: o.throttle, BodyTimeout: o.bodyTimeout}
	if ob.metrics != nil {
		ao.Throttle.OnLockout = ob.metrics.Lockout
	}
	doors, svc, err := access.Open(ctx, ao, so)
	if err != nil {
		return err
	}
	// Stopped before the store closes (defers run in reverse): the
	// lifecycle, then the engine's writer finishes the request it holds,
	// refuses the rest, and its cache fill ends, then the dataplane.
	defer svc.Close()
	ob.watch(dd.st, svc.Engine, svc.Candidates, svc.Table, log)
	ob.web = newWebUI(doors.Web)
	if err := o.start(ctx, doors, svc, dd.fresh, env); err != nil {
		return err
	}

	ls, err := o.listen(ob.inner(svc.Handler), doors, ob, log)
	defer ls.close()
	if err != nil {
		return err
	}
	var gnmiServer *gnmi.Server
	if o.gnmi != "" {
		if gnmiServer, err = startGNMI(o, svc, doors, ob, log); err != nil {
			return err
		}
	}
	errc := ls.serve()
	log.Info("swmgr serving", "http", ls.httpAddr, "https", ls.httpsAddr, "socket", ls.socketPath, "cert_sha256", ls.fingerprint, "data_dir", o.dataDir, "backend", svc.Backend, "version", version(), "revision", svc.Engine.Revision())
	resumeActivation(ctx, o, log)
	ob.ready(log)
	confirmActivation(o, log)
	if o.ready != nil {
		o.ready(ls.httpAddr, ls.httpsAddr)
	}
	var serveErr error
	select {
	case serveErr = <-errc:
	case <-ctx.Done():
	}
	log.Info("shutting down")
	svc.Handler.CloseStreams() // change-feed clients would otherwise hold Shutdown for its whole timeout
	if gnmiServer != nil {
		gnmiServer.Stop(5 * time.Second)
	}
	ls.shutdown(log)
	return serveErr
}

// startEnviron is what the environment gives a start: the first admin's
// password, and the Nonce and Passphrase of an encrypted startup
// configuration.
type startEnviron struct {
	adminPassword, startupNonce, startupPassphrase string
}

// takeStartEnviron reads the start's secrets from the environment once
// and keeps them out of the environment of anything swmgr runs (and the
// first admin's password out of /proc/<pid>/environ).
func takeStartEnviron() (startEnviron, error) {
	env := startEnviron{adminPassword: os.Getenv(adminPasswordEnv)}
	if env.adminPassword != "" {
		if err := scrubEnviron(adminPasswordEnv); err != nil {
			return env, fmt.Errorf("$%s: %w; give the password with --admin-password-file instead", adminPasswordEnv, err)
		}
	}
	os.Unsetenv(adminPasswordEnv)
	env.startupNonce, env.startupPassphrase = os.Getenv(nonceEnv), os.Getenv(passphraseEnv)
	os.Unsetenv(nonceEnv)
	os.Unsetenv(passphraseEnv)
	return env, nil
}

// check resolves the options left to their defaults and checks them, then
// that the listeners can be bound: nothing is created unless they can.
func (o *serveOptions) check() error {
	if err := o.defaults(); err != nil {
		return err
	}
	if o.http == "" && o.https == "" && o.socket == "" {
		return errors.New("no listener: give --http, --https or --socket")
	}
	if (o.tlsCert == "") != (o.tlsKey == "") {
		return errors.New("--tls-cert and --tls-key go together")
	}
	if o.reauthInterval < time.Second {
		return fmt.Errorf("--reauth-interval %s: use 1s or more", o.reauthInterval)
	}
	if o.ports < 1 || o.ports > 512 {
		return fmt.Errorf("--ports %d: use 1..512", o.ports)
	}
	switch o.backend {
	case "sim":
		if o.netns != "" || o.portMap != "" {
			return errors.New("--netns and --port-map are for --backend linux")
		}
	case "linux":
	default:
		return fmt.Errorf("--backend %q: use sim or linux", o.backend)
	}
	if err := o.daemons.check(); err != nil {
		return err
	}
	for _, l := range []struct{ flag, addr string }{{"--https", o.https}, {"--http", o.http}, {"--gnmi", o.gnmi}} {
		if err := probeListen(l.flag, l.addr); err != nil {
			return err
		}
	}
	return nil
}

// dataDir is the opened data directory: the store, its key, and the
// switch's accounts.
type dataDir struct {
	st    *store.Store
	box   *secrets.Box
	acc   accounts.Accounts
	owned bool // the accounts are swmgr's own files
	// fresh: nothing was ever committed but the switch's own discovery
	// (revision 1, made by the first start before it loads the startup
	// configuration): the startup configuration applies. A first start
	// whose startup load failed leaves exactly that, and must not make the
	// next start skip the fixed file without a word.
	fresh bool
	close func()
}

// openDataDir checks and opens the data directory; close closes the store
// and removes the pid file (a clean exit leaves none).
func openDataDir(o *serveOptions) (*dataDir, error) {
	if err := checkDataDir(o.dataDir); err != nil {
		return nil, err
	}
	st, err := store.Open(o.dataDir)
	if err != nil {
		return nil, err
	}
	dd := &dataDir{st: st, close: func() {
		st.Close()
		os.Remove(filepath.Join(o.dataDir, datadir.PID))
	}}
	if err := dd.open(o); err != nil {
		dd.close()
		return nil, err
	}
	return dd, nil
}

func (dd *dataDir) open(o *serveOptions) error {
	box, inUse, err := openSecrets(o.dataDir, dd.st)
	if err != nil {
		return err
	}
	dd.box = box
	if o.accounts == nil {
		if err := checkAccounts(o.dataDir, inUse); err != nil {
			return err
		}
	}
	if h, ok := o.accounts.(*accounts.OS); ok && h.Owner == "" {
		// The host's accounts this data directory's swmgr made are
		// marked with its tag: another swmgr on the host (another data
		// directory) neither removes nor changes them at its start.
		h.Owner = box.Tag("host accounts")
	}
	if dd.acc, dd.owned, err = openAccounts(o); err != nil {
		return err
	}
	return dd.st.View(func(tx store.Txn) error { dd.fresh = tx.Revision() <= 1; return nil })
}

// serviceOptions are the service's options the flags and the data
// directory give.
func (o *serveOptions) serviceOptions(dd *dataDir, ob *observability, log *slog.Logger, syslogFwd *aaa.Forwarder) (service.Options, error) {
	so := service.Options{Store: dd.st, Box: dd.box, DataDir: o.dataDir, Version: version(), Log: log, Dataplane: o.backend, Ports: o.ports,
		Accounts: dd.acc, OwnAccounts: dd.owned, CLIShell: cliShell(), Ready: ob.health.Ready, Syslog: syslogFwd}
	if ob.metrics != nil {
		so.Observer = ob.metrics
	}
	if o.backend == service.Linux {
		var err error
		if so.Linux, err = linuxOptions(o); err != nil {
			return so, err
		}
	}
	var err error
	if so.ZTP, err = o.ztp.options(dd.fresh); err != nil {
		return so, err
	}
	return so, nil
}

// start loads the startup configuration on a new data directory, starts
// the lifecycle, makes the first admin if there is none, and starts
// zero-touch provisioning when it is armed.
func (o *serveOptions) start(ctx context.Context, doors *access.Access, svc *service.Service, fresh bool, env startEnviron) error {
	if fresh {
		if _, err := svc.Lifecycle.LoadStartup(ctx, o.startupConfig, env.startupNonce, env.startupPassphrase); err != nil {
			return err
		}
	}
	if err := svc.Lifecycle.Start(ctx); err != nil {
		return err
	}
	if !o.noFirstAdmin {
		if err := doors.FirstAdmin(ctx, func() (string, string, error) {
			return initialAdminPassword(o.dataDir, o.adminPasswordFile, env.adminPassword)
		}); err != nil {
			return err
		}
	}
	return svc.ZTP.Start(ctx)
}

func versionCommand() *cobra.Command {
	return &cobra.Command{
		Use:   "version",
		Short: "Print the version",
		Args:  cobra.NoArgs,
		Run:   func(cmd *cobra.Command, _ []string) { fmt.Fprint(cmd.OutOrStdout(), versionLine()) },
	}
}

func dumpCommand() *cobra.Command {
	var dataDir string
	cmd := &cobra.Command{
		Use:   "dump",
		Short: "Print the stored configuration, indexes and revisions as sorted hex lines (the service must be stopped)",
		Args:  cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			st, err := store.Open(dataDir)
			if err != nil {
				return err
			}
			defer st.Close()
			return st.Dump(cmd.OutOrStdout())
		},
	}
	cmd.Flags().StringVar(&dataDir, "data-dir", defaultDataDir(), "data directory")
	return cmd
}

// linuxOptions are the Linux dataplane's options the flags give.
func linuxOptions(o *serveOptions) (service.LinuxOptions, error) {
	lo := service.LinuxOptions{Netns: o.netns, ControlPlanePorts: controlPlanePorts(map[string]string{"HTTPS": o.https, "GNMI": o.gnmi})}
	o.daemons.apply(&lo)
	if o.portMap != "" {
		b, err := os.ReadFile(o.portMap)
		if err != nil {
			return lo, fmt.Errorf("--port-map: %w", err)
		}
		lo.PortMap, lo.PortMapName = b, o.portMap
	}
	return lo, nil
}

// controlPlanePorts are the TCP ports of the listeners a control-plane ACL
// rule may name, by service, from their listen addresses ("" or a port
// that is not a number: no such listener).
func controlPlanePorts(addrs map[string]string) map[string]int {
	ports := map[string]int{}
	for service, addr := range addrs {
		if addr == "" {
			continue
		}
		if _, p, err := net.SplitHostPort(addr); err == nil {
			if n, err := strconv.Atoi(p); err == nil && n > 0 && n < 65536 {
				ports[service] = n
			}
		}
	}
	return ports
}
