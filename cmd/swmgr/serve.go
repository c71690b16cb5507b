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
	"runtime/debug"
	"strings"
	"syscall"
	"time"

	"github.com/spf13/cobra"

	"github.com/swmgr/swmgr/internal/accounts"
	"github.com/swmgr/swmgr/internal/api"
	"github.com/swmgr/swmgr/internal/auth"
	"github.com/swmgr/swmgr/internal/backend"
	"github.com/swmgr/swmgr/internal/backend/linux"
	"github.com/swmgr/swmgr/internal/backend/sim"
	"github.com/swmgr/swmgr/internal/engine"
	"github.com/swmgr/swmgr/internal/model"
	"github.com/swmgr/swmgr/internal/secrets"
	"github.com/swmgr/swmgr/internal/store"
	"github.com/swmgr/swmgr/internal/tlscert"
)

type serveOptions struct {
	dataDir           string
	http              string
	https             string
	tlsCert, tlsKey   string
	adminPasswordFile string
	backend           string
	netns             string
	portMap           string
	ports             int
	logFormat         string
	logLevel          string

	// Set by tests only.
	accounts     accounts.Accounts                // instead of the backend's own
	noFirstAdmin bool                             // do not make the first admin
	throttle     auth.ThrottleOptions             // login throttle settings
	logOut       io.Writer                        // instead of stderr
	ready        func(httpAddr, httpsAddr string) // called once listening
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
	f.StringVar(&o.tlsCert, "tls-cert", "", "HTTPS certificate chain (PEM); default: a self-signed one made in the data directory")
	f.StringVar(&o.tlsKey, "tls-key", "", "private key of --tls-cert (PEM)")
	f.StringVar(&o.adminPasswordFile, "admin-password-file", "", "file holding the first admin's password (else $"+adminPasswordEnv+", else generated into <data-dir>/"+initialPasswordFile+")")
	f.StringVar(&o.backend, "backend", "sim", "switch backend: sim (simulated switch) or linux (this machine's kernel)")
	f.StringVar(&o.netns, "netns", "", "linux backend: the switch's network namespace (default: swmgr's own)")
	f.StringVar(&o.portMap, "port-map", "", "linux backend: file of \"fpPort<N> <netdev>\" lines (default: netdevs swp<N> or fpPort<N> are fpPort<N>)")
	f.IntVar(&o.ports, "ports", 32, "front-panel ports of the simulated switch")
	f.StringVar(&o.logFormat, "log-format", "text", "log format: text or json")
	f.StringVar(&o.logLevel, "log-level", "info", "log level: debug, info, warn or error")
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

func version() string {
	if bi, ok := debug.ReadBuildInfo(); ok {
		if bi.Main.Version != "" && bi.Main.Version != "(devel)" {
			return bi.Main.Version
		}
		for _, s := range bi.Settings {
			if s.Key == "vcs.revision" && len(s.Value) >= 12 {
				return "swmgr-dev-" + s.Value[:12]
			}
		}
	}
	return "swmgr-dev"
}

func serve(ctx context.Context, o *serveOptions) error {
	logOut := o.logOut
	if logOut == nil {
		logOut = os.Stderr
	}
	log, err := newLogger(logOut, o.logFormat, o.logLevel)
	if err != nil {
		return err
	}
	// The first admin's password is read once and kept out of the
	// environment of anything swmgr runs.
	envPassword := os.Getenv(adminPasswordEnv)
	os.Unsetenv(adminPasswordEnv)
	if o.http == "" && o.https == "" {
		return errors.New("no listener: give --http or --https")
	}
	if (o.tlsCert == "") != (o.tlsKey == "") {
		return errors.New("--tls-cert and --tls-key go together")
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

	st, err := store.Open(o.dataDir)
	if err != nil {
		return err
	}
	defer st.Close()
	box, err := secrets.Open(o.dataDir)
	if err != nil {
		return err
	}
	acc, owned, err := openAccounts(o)
	if err != nil {
		return err
	}
	var eng *engine.Engine
	verifier := auth.NewVerifier(auth.AccountsCheck(acc, func(ctx context.Context, name string) (bool, error) {
		return eng.HasUser(ctx, name)
	}), auth.VerifierOptions{})
	var be backend.Backend = sim.New(sim.Options{Ports: o.ports, Version: version(), Accounts: accounts.Observe(acc, verifier.Forget), OwnAccounts: owned, CLIShell: cliShell()})
	if o.backend == "linux" {
		// What a reconciliation puts back goes to the config log as an
		// entry of its own (API "reconcile").
		onReconcile := func(changes []string) {
			data := strings.Join(changes, "; ")
			if len(data) > 2000 {
				data = data[:2000] + "..."
			}
			req := engine.Request{Meta: engine.Meta{Source: "reconcile", Comment: "the kernel differed from the configuration"},
				Log: &engine.LogInfo{API: "reconcile", Operation: "RECONCILE", Data: data}}
			if _, err := eng.Commit(context.WithoutCancel(ctx), req); err != nil {
				log.Warn("config log entry of a reconciliation", "err", err)
			}
		}
		if be, err = openLinuxBackend(o, be, onReconcile, log); err != nil {
			return err
		}
	}
	defer be.Close()
	eng = engine.New(model.Builtin(), st, be, box, log)
	if err := eng.Start(ctx); err != nil {
		return fmt.Errorf("start: %w", err)
	}
	if !o.noFirstAdmin {
		if err := ensureFirstAdmin(ctx, eng, o, envPassword, log); err != nil {
			return err
		}
	}

	handler := api.New(eng, log)
	throttle := auth.NewThrottle(o.throttle)
	newServer := func(h http.Handler) *http.Server {
		srv := &http.Server{
			Handler:           h,
			ReadHeaderTimeout: 10 * time.Second,
			IdleTimeout:       2 * time.Minute,
			ErrorLog:          slog.NewLogLogger(log.Handler(), slog.LevelWarn),
		}
		closeFreshConnsOnShutdown(srv, log)
		return srv
	}
	var (
		servers             []*http.Server
		httpAddr, httpsAddr string
		fingerprint         string
		httpLn, httpsLn     net.Listener
	)
	if o.https != "" {
		cert, err := serverCertificate(o, o.https, log)
		if err != nil {
			return fmt.Errorf("--https: %w", err)
		}
		fingerprint = tlscert.Fingerprint(cert)
		if httpsLn, err = net.Listen("tcp", o.https); err != nil {
			return fmt.Errorf("--https: %w (give a free address, or --https \"\" to disable HTTPS)", err)
		}
		defer httpsLn.Close()
		httpsAddr = httpsLn.Addr().String()
		srv := newServer(auth.Handler(handler, auth.Options{Verifier: verifier, Throttle: throttle, Log: log, Refused: handler.LogRefused}))
		srv.TLSConfig = tlscert.Config(cert)
		servers = append(servers, srv)
	}
	if o.http != "" {
		if httpLn, err = net.Listen("tcp", o.http); err != nil {
			return fmt.Errorf("--http: %w", err)
		}
		defer httpLn.Close()
		httpAddr = httpLn.Addr().String()
		// Without credentials only on a loopback address (the local tools).
		servers = append(servers, newServer(auth.Handler(handler, auth.Options{Verifier: verifier, Throttle: throttle, Anonymous: auth.Loopback(httpAddr), Log: log, Refused: handler.LogRefused})))
	}
	errc := make(chan error, len(servers))
	for _, srv := range servers {
		if srv.TLSConfig != nil {
			go func() { errc <- fmt.Errorf("https: %w", srv.ServeTLS(httpsLn, "", "")) }()
		} else {
			go func() { errc <- fmt.Errorf("http: %w", srv.Serve(httpLn)) }()
		}
	}
	log.Info("swmgr serving", "http", httpAddr, "https", httpsAddr, "cert_sha256", fingerprint, "data_dir", o.dataDir, "backend", be.Name(), "version", version(), "revision", eng.Revision())
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
	sctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	for _, srv := range servers {
		if err := srv.Shutdown(sctx); err != nil {
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
		Run:   func(cmd *cobra.Command, _ []string) { fmt.Fprintln(cmd.OutOrStdout(), version()) },
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

// openLinuxBackend starts the Linux backend; the kinds that are not the
// dataplane's (users, BGP, NTP, system settings) stay with others until
// their own Linux drivers exist.
func openLinuxBackend(o *serveOptions, others backend.Backend, onReconcile func([]string), log *slog.Logger) (backend.Backend, error) {
	lo := linux.Options{Kernel: linux.KernelOptions{Netns: o.netns}, Version: version(), Others: others, Log: log, OnReconcile: onReconcile,
		Journal: filepath.Join(o.dataDir, "linux-apply.journal")}
	if o.portMap != "" {
		b, err := os.ReadFile(o.portMap)
		if err != nil {
			return nil, fmt.Errorf("--port-map: %w", err)
		}
		lo.PortMap, lo.PortMapName = b, o.portMap
	}
	be, err := linux.New(lo)
	if err != nil {
		return nil, fmt.Errorf("--backend linux: %w", err)
	}
	return be, nil
}
