// Package testserver runs swmgr's whole request stack in process for tests
// and examples of other packages: a bbolt store and the service as package
// service assembles it (the simulated switch, its own account files, the
// lifecycle without archive uploads), behind the front doors' half swmgr
// serve runs (package access: the same verifier, peers, throttle,
// sessions and first admin), on a loopback HTTP listener (credentials
// optional, as swmgr serve's) and an HTTPS one (credentials required).
package testserver

import (
	"context"
	"crypto/tls"
	"io"
	"log/slog"
	"net"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"

	"github.com/swmgr/swmgr/internal/access"
	"github.com/swmgr/swmgr/internal/accounts"
	"github.com/swmgr/swmgr/internal/api"
	"github.com/swmgr/swmgr/internal/engine"
	"github.com/swmgr/swmgr/internal/lifecycle"
	"github.com/swmgr/swmgr/internal/secrets"
	"github.com/swmgr/swmgr/internal/service"
	"github.com/swmgr/swmgr/internal/store"
)

// AdminPassword is the password of the User "admin" every server starts with.
const AdminPassword = "testserver-admin-pw"

// Server is one running stack.
type Server struct {
	URL         string // http://127.0.0.1:port (no credentials needed)
	TLSURL      string // https://127.0.0.1:port (Basic credentials required)
	CertFile    string // the HTTPS certificate, PEM
	Fingerprint string // SHA-256 of the HTTPS certificate, hex
	Engine      *engine.Engine
	Handler     *api.Server
	// ConnContext is the plain listener's http.Server.ConnContext (the
	// slot of the peer's identity), for benchmarks that call its handler
	// without a network.
	ConnContext func(context.Context, net.Conn) context.Context

	dir   string
	st    *store.Store
	svc   *service.Service
	plain *httptest.Server
	tls   *httptest.Server
}

// Options modify Start.
type Options struct {
	Ports int // ports of the simulated switch (default 8)
	// Wrap, if set, wraps the API handler (inside authentication), as
	// swmgr serve adds its middleware.
	Wrap func(http.Handler) http.Handler
	// Outer, if set, wraps the plain listener's handler outside
	// authentication.
	Outer func(http.Handler) http.Handler
}

// Start runs a fresh stack in a new directory under dir ("" for one of
// its own, removed by Close).
func Start(dir string, opts Options) (*Server, error) {
	owned := dir == ""
	if owned {
		d, err := os.MkdirTemp("", "swmgr-testserver-")
		if err != nil {
			return nil, err
		}
		dir = d
	}
	s := &Server{dir: dir}
	if !owned {
		s.dir = ""
	}
	if err := s.start(dir, opts); err != nil {
		s.Close()
		return nil, err
	}
	return s, nil
}

func (s *Server) start(dir string, opts Options) error {
	st, err := store.Open(dir)
	if err != nil {
		return err
	}
	s.st = st
	box, err := secrets.Open(dir)
	if err != nil {
		return err
	}
	acc, err := accounts.OpenFiles(filepath.Join(dir, "accounts"), accounts.FilesOptions{Scheme: accounts.SHA512, WriteBehind: true})
	if err != nil {
		return err
	}
	log := slog.New(slog.NewTextHandler(io.Discard, nil))
	ports := opts.Ports
	if ports == 0 {
		ports = 8
	}
	ctx := context.Background()
	// The front doors' half is serve's (access.Open): the verifier with
	// central AAA and the accounts, the local peers, the throttle, the
	// sessions, the first admin.
	doors, svc, err := access.Open(ctx, access.Options{}, service.Options{Store: st, Box: box, DataDir: dir, Version: "testserver", Log: log, Dataplane: service.Sim, Ports: ports,
		Accounts: acc, OwnAccounts: true, CLIShell: "/usr/local/bin/swmgr", Lifecycle: lifecycle.Options{NoScheduler: true}})
	if err != nil {
		return err
	}
	s.svc = svc
	if err := doors.FirstAdmin(ctx, func() (string, string, error) { return AdminPassword, "testserver.AdminPassword", nil }); err != nil {
		return err
	}
	s.Engine = svc.Engine
	s.Handler = svc.Handler
	var h http.Handler = s.Handler
	if opts.Wrap != nil {
		h = opts.Wrap(h)
	}
	// Without credentials, plain HTTP serves the local OS user on the other
	// end: this process's own uid, which is admin (as for swmgr serve).
	plain := doors.Handler(h, true)
	if opts.Outer != nil {
		plain = opts.Outer(plain)
	}
	s.plain = httptest.NewUnstartedServer(plain)
	s.plain.Config.ConnContext = doors.Peers.ConnContext
	s.ConnContext = doors.Peers.ConnContext
	s.plain.Start()
	s.URL = s.plain.URL
	s.tls = httptest.NewUnstartedServer(doors.Handler(h, false))
	s.tls.StartTLS()
	s.TLSURL = s.tls.URL
	cert := s.tls.Certificate()
	s.Fingerprint = fingerprint(cert.Raw)
	s.CertFile = filepath.Join(dir, "testserver-cert.pem")
	if err := os.WriteFile(s.CertFile, pemCert(cert.Raw), 0o644); err != nil {
		return err
	}
	return nil
}

// TLSConfig trusts the server's certificate.
func (s *Server) TLSConfig() *tls.Config {
	return s.tls.Client().Transport.(*http.Transport).TLSClientConfig
}

// Serve serves ln like URL (credentials optional), for tests of other
// transports such as a Unix socket; close the returned server when done.
func (s *Server) Serve(ln net.Listener) *http.Server {
	srv := &http.Server{Handler: s.plain.Config.Handler, ConnContext: s.plain.Config.ConnContext}
	go srv.Serve(ln)
	return srv
}

// CloseClientConnections drops every open connection of both listeners
// (as a restart would), streams included.
func (s *Server) CloseClientConnections() {
	s.Handler.DropStreamConnections()
	s.plain.CloseClientConnections()
	s.tls.CloseClientConnections()
}

// Close stops the listeners and the store and removes the directory if
// Start made it.
func (s *Server) Close() {
	if s.Handler != nil {
		s.Handler.CloseStreams()
	}
	if s.plain != nil {
		s.plain.CloseClientConnections()
		s.plain.Close()
	}
	if s.tls != nil {
		s.tls.CloseClientConnections()
		s.tls.Close()
	}
	if s.svc != nil {
		s.svc.Close()
	}
	if s.st != nil {
		s.st.Close()
	}
	if s.dir != "" {
		os.RemoveAll(s.dir)
	}
}
