package main

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"net/http"
	"os"
	"os/signal"
	"path/filepath"
	"runtime/debug"
	"syscall"
	"time"

	"github.com/spf13/cobra"

	"github.com/swmgr/swmgr/internal/api"
	"github.com/swmgr/swmgr/internal/backend"
	"github.com/swmgr/swmgr/internal/backend/sim"
	"github.com/swmgr/swmgr/internal/engine"
	"github.com/swmgr/swmgr/internal/model"
	"github.com/swmgr/swmgr/internal/secrets"
	"github.com/swmgr/swmgr/internal/store"
)

type serveOptions struct {
	dataDir   string
	http      string
	https     string
	backend   string
	ports     int
	logFormat string
	logLevel  string
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
	f.StringVar(&o.https, "https", "", "HTTPS listen address (not available yet in this build; must be \"\")")
	f.StringVar(&o.backend, "backend", "sim", "switch backend: sim (simulated switch)")
	f.IntVar(&o.ports, "ports", 32, "front-panel ports of the simulated switch")
	f.StringVar(&o.logFormat, "log-format", "text", "log format: text or json")
	f.StringVar(&o.logLevel, "log-level", "info", "log level: debug, info, warn or error")
	return cmd
}

func newLogger(format, level string) (*slog.Logger, error) {
	var lv slog.Level
	if err := lv.UnmarshalText([]byte(level)); err != nil {
		return nil, fmt.Errorf("--log-level %q: use debug, info, warn or error", level)
	}
	opts := &slog.HandlerOptions{Level: lv}
	switch format {
	case "text":
		return slog.New(slog.NewTextHandler(os.Stderr, opts)), nil
	case "json":
		return slog.New(slog.NewJSONHandler(os.Stderr, opts)), nil
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
	log, err := newLogger(o.logFormat, o.logLevel)
	if err != nil {
		return err
	}
	if o.https != "" {
		return errors.New("--https: HTTPS is not available in this build yet; use --https \"\"")
	}
	if o.http == "" {
		return errors.New("no listener: give --http")
	}
	if o.ports < 1 || o.ports > 512 {
		return fmt.Errorf("--ports %d: use 1..512", o.ports)
	}
	var be backend.Backend
	switch o.backend {
	case "sim":
		be = sim.New(sim.Options{Ports: o.ports, Version: version()})
	default:
		return fmt.Errorf("--backend %q: use sim", o.backend)
	}
	defer be.Close()

	st, err := store.Open(o.dataDir)
	if err != nil {
		return err
	}
	defer st.Close()
	box, err := secrets.Open(o.dataDir)
	if err != nil {
		return err
	}
	eng := engine.New(model.Builtin(), st, be, box, log)
	if err := eng.Start(ctx); err != nil {
		return fmt.Errorf("start: %w", err)
	}

	ln, err := net.Listen("tcp", o.http)
	if err != nil {
		return fmt.Errorf("--http: %w", err)
	}
	srv := &http.Server{
		Handler:           api.New(eng, log),
		ReadHeaderTimeout: 10 * time.Second,
		IdleTimeout:       2 * time.Minute,
		ErrorLog:          slog.NewLogLogger(log.Handler(), slog.LevelWarn),
	}
	log.Info("swmgr serving", "http", ln.Addr().String(), "data_dir", o.dataDir, "backend", be.Name(), "version", version(), "revision", eng.Revision())
	errc := make(chan error, 1)
	go func() { errc <- srv.Serve(ln) }()
	select {
	case err := <-errc:
		return fmt.Errorf("http: %w", err)
	case <-ctx.Done():
	}
	log.Info("shutting down")
	sctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	if err := srv.Shutdown(sctx); err != nil {
		log.Warn("shutdown", "err", err)
	}
	return nil
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
