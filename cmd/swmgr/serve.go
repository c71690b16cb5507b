package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"os"
	"os/signal"
	"path/filepath"
	"runtime"
	"runtime/debug"
	"syscall"
	"time"

	"github.com/spf13/cobra"

	"github.com/swmgr/swmgr/internal/aaa"
	"github.com/swmgr/swmgr/internal/accounts"
	"github.com/swmgr/swmgr/internal/auth"
	"github.com/swmgr/swmgr/internal/bind"
	"github.com/swmgr/swmgr/internal/connlimit"
	"github.com/swmgr/swmgr/internal/datadir"
	"github.com/swmgr/swmgr/internal/engine/users"
	"github.com/swmgr/swmgr/internal/gnmi"
	"github.com/swmgr/swmgr/internal/obs"
	"github.com/swmgr/swmgr/internal/peercred"
	"github.com/swmgr/swmgr/internal/service"
	"github.com/swmgr/swmgr/internal/store"
	"github.com/swmgr/swmgr/internal/tlscert"
)

type serveOptions struct {
	dataDir           string
	http              string
	https             string
	gnmi              string // gNMI listen address; "" disables it
	tlsCert, tlsKey   string
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
	// The first admin's password is read once and kept out of the
	// environment of anything swmgr runs, and of /proc/<pid>/environ.
	envPassword := os.Getenv(adminPasswordEnv)
	if envPassword != "" {
		if err := scrubEnviron(adminPasswordEnv); err != nil {
			return fmt.Errorf("$%s: %w; give the password with --admin-password-file instead", adminPasswordEnv, err)
		}
	}
	os.Unsetenv(adminPasswordEnv)
	// So are the Nonce and Passphrase of an encrypted startup configuration.
	startupNonce, startupPassphrase := os.Getenv(nonceEnv), os.Getenv(passphraseEnv)
	os.Unsetenv(nonceEnv)
	os.Unsetenv(passphraseEnv)
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

	// Nothing is created unless the listeners can be bound.
	if err := probeListen("--https", o.https); err != nil {
		return err
	}
	if err := probeListen("--http", o.http); err != nil {
		return err
	}
	if err := probeListen("--gnmi", o.gnmi); err != nil {
		return err
	}
	ob, err := newObservability(o, accessLog, log)
	if err != nil {
		return err
	}

	if err := checkDataDir(o.dataDir); err != nil {
		return err
	}
	st, err := store.Open(o.dataDir)
	if err != nil {
		return err
	}
	defer func() {
		st.Close()
		os.Remove(filepath.Join(o.dataDir, datadir.PID)) // a clean exit leaves no pid file
	}()
	box, inUse, err := openSecrets(o.dataDir, st)
	if err != nil {
		return err
	}
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
	acc, owned, err := openAccounts(o)
	if err != nil {
		return err
	}
	// The verifier is built before the service (the accounts tell it of
	// their changes); central AAA, which it asks of remote logins, is given
	// to it once started, and a login that came before would be told so.
	central := &bind.Once[aaa.Service]{What: "central AAA"}
	verifier := auth.NewVerifier(auth.AccountsCheck(acc, func(ctx context.Context, name string) (bool, error) {
		return users.Exists(ctx, st, name)
	}), auth.VerifierOptions{Remote: func(ctx context.Context, name, password string) (auth.RemoteResult, error) {
		svc, err := central.Get()
		if err != nil {
			return auth.RemoteResult{}, err
		}
		var client string
		if a := auth.ClientAddr(ctx); a.IsValid() {
			client = a.String()
		}
		r, err := svc.Login(ctx, name, password, client)
		if errors.Is(err, aaa.ErrBusy) {
			err = auth.Busy(err)
		}
		return auth.RemoteResult{Answered: r.Answered, OK: r.OK, Group: r.Group, TTL: r.TTL}, err
	}})
	peers := auth.NewPeers(auth.PeerOptions{
		UserGroup:    func(ctx context.Context, name string) (string, bool, error) { return userGroup(ctx, st, acc, name) },
		RefuseOthers: o.localOthers == "refuse",
	})
	// Long-lived requests (change-feed streams, gNMI subscriptions) end
	// when their user's access does: checked again when an account or
	// the central AAA configuration changes, and every --reauth-interval.
	sessions := auth.NewSessions(auth.SessionOptions{Verifier: verifier, Interval: o.reauthInterval, Log: log})
	accountChanged := func(name string) {
		verifier.Forget(name)
		peers.Forget(name)
		sessions.Changed(name)
	}
	// New: nothing was ever committed but the switch's own discovery
	// (revision 1, made by the first start before it loads the startup
	// configuration): the startup configuration applies. A first start
	// whose startup load failed leaves exactly that, and must not make the
	// next start skip the fixed file without a word.
	var newDataDir bool
	if err := st.View(func(tx store.Txn) error { newDataDir = tx.Revision() <= 1; return nil }); err != nil {
		return err
	}
	so := service.Options{Store: st, Box: box, DataDir: o.dataDir, Version: version(), Log: log, Dataplane: o.backend, Ports: o.ports,
		Accounts: accounts.Observe(acc, accountChanged), OwnAccounts: owned, CLIShell: cliShell(), Ready: ob.health.Ready}
	if ob.metrics != nil {
		so.Observer = ob.metrics
	}
	if o.backend == service.Linux {
		if so.Linux, err = linuxOptions(o); err != nil {
			return err
		}
	}
	so.AAAChanged = func() {
		verifier.ForgetAll()
		sessions.ChangedAll()
	}
	so.Syslog, so.Sessions, so.CentralAAA = syslogFwd, sessions, central
	svc, err := service.Open(ctx, so)
	if err != nil {
		return err
	}
	// Stopped before the store closes (defers run in reverse): the
	// lifecycle, then the engine's writer finishes the request it holds,
	// refuses the rest, and its cache fill ends, then the dataplane.
	defer svc.Close()
	eng, handler, lc := svc.Engine, svc.Handler, svc.Lifecycle
	ob.watch(st, eng, svc.Candidates, log)
	if newDataDir {
		if _, err := lc.LoadStartup(ctx, o.startupConfig, startupNonce, startupPassphrase); err != nil {
			return err
		}
	}
	if err := lc.Start(ctx); err != nil {
		return err
	}
	if !o.noFirstAdmin {
		if err := ensureFirstAdmin(ctx, eng, o, envPassword, log); err != nil {
			return err
		}
	}

	inner := ob.inner(handler)
	throttleOpts := o.throttle
	if ob.metrics != nil {
		throttleOpts.OnLockout = ob.metrics.Lockout
	}
	throttle := auth.NewThrottle(throttleOpts)
	authOptions := func(local bool) auth.Options {
		ao := auth.Options{Verifier: verifier, Throttle: throttle, BodyTimeout: o.bodyTimeout, Log: log, Access: handler.Access, Refused: handler.LogRefused, RefusalDelay: time.Second}
		if local {
			ao.Peers = peers
		}
		return ao
	}
	perListener := connsPerListener()
	limit := func(ln net.Listener, what string) net.Listener {
		return connlimit.New(ln, connlimit.Options{PerClient: o.maxConnsPerClient, Total: perListener, Cred: o.peerCred, Refused: func(client string, total bool) {
			if total {
				log.Warn("connection refused: too many open connections", "listener", what, "client", client, "max", perListener)
			} else {
				log.Warn("connection refused: too many open connections from one client", "listener", what, "client", client, "max", o.maxConnsPerClient)
			}
		}})
	}
	newServer := func(h http.Handler, local bool) *http.Server {
		srv := &http.Server{
			Handler:           ob.outer(auth.Handler(h, authOptions(local))),
			ReadHeaderTimeout: o.headerTimeout,
			IdleTimeout:       2 * time.Minute,
			MaxHeaderBytes:    64 << 10,
			ErrorLog:          slog.NewLogLogger(log.Handler(), slog.LevelWarn),
		}
		if local {
			srv.ConnContext = peers.ConnContext
		}
		closeFreshConnsOnShutdown(srv, log)
		return srv
	}
	type listener struct {
		srv *http.Server
		ln  net.Listener
		tls bool
	}
	var (
		listeners                       []listener
		httpAddr, httpsAddr, socketPath string
		fingerprint                     string
	)
	if o.https != "" {
		cert, err := serverCertificate(o, o.https, log)
		if err != nil {
			return fmt.Errorf("--https: %w", err)
		}
		fingerprint = tlscert.Fingerprint(cert.Certificate())
		ln, err := net.Listen("tcp", o.https)
		if err != nil {
			return fmt.Errorf("--https: %w (give a free address, or --https \"\" to disable HTTPS)", err)
		}
		defer ln.Close()
		httpsAddr = ln.Addr().String()
		srv := newServer(inner, false)
		srv.TLSConfig = cert.Config()
		listeners = append(listeners, listener{srv, limit(ln, "https"), true})
	}
	if o.http != "" {
		ln, err := net.Listen("tcp", o.http)
		if err != nil {
			return fmt.Errorf("--http: %w", err)
		}
		defer ln.Close()
		httpAddr = ln.Addr().String()
		// Without credentials only on a loopback address (the local tools).
		listeners = append(listeners, listener{newServer(inner, auth.Loopback(httpAddr)), limit(ln, "http"), false})
	}
	if o.socket != "" {
		ln, err := listenSocket(o.socket)
		if err != nil {
			return fmt.Errorf("--socket: %w", err)
		}
		defer ln.Close()
		socketPath = o.socket
		listeners = append(listeners, listener{newServer(inner, true), limit(ln, "socket"), false})
	}
	var gnmiServer *gnmi.Server
	if o.gnmi != "" {
		if gnmiServer, err = startGNMI(o, eng, svc.History, svc.Table, verifier, throttle, sessions, ob, log); err != nil {
			return err
		}
	}
	errc := make(chan error, len(listeners))
	for _, l := range listeners {
		if l.tls {
			go func() { errc <- fmt.Errorf("https: %w", l.srv.ServeTLS(l.ln, "", "")) }()
		} else {
			go func() { errc <- fmt.Errorf("serve %s: %w", l.ln.Addr(), l.srv.Serve(l.ln)) }()
		}
	}
	log.Info("swmgr serving", "http", httpAddr, "https", httpsAddr, "socket", socketPath, "cert_sha256", fingerprint, "data_dir", o.dataDir, "backend", svc.Backend, "version", version(), "revision", eng.Revision())
	ob.ready(log)
	if o.ready != nil {
		o.ready(httpAddr, httpsAddr)
	}
	var serveErr error
	select {
	case serveErr = <-errc:
	case <-ctx.Done():
	}
	log.Info("shutting down")
	handler.CloseStreams() // change-feed clients would otherwise hold Shutdown for its whole timeout
	if gnmiServer != nil {
		gnmiServer.Stop(5 * time.Second)
	}
	sctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	for _, l := range listeners {
		if err := l.srv.Shutdown(sctx); err != nil {
			log.Warn("shutdown", "err", err)
		}
	}
	return serveErr
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
	lo := service.LinuxOptions{Netns: o.netns}
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
