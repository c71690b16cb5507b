package main

import (
	"context"
	"fmt"
	"log/slog"
	"net"
	"net/netip"
	"time"

	"github.com/swmgr/swmgr/internal/auth"
	"github.com/swmgr/swmgr/internal/bind"
	"github.com/swmgr/swmgr/internal/connlimit"
	"github.com/swmgr/swmgr/internal/engine"
	"github.com/swmgr/swmgr/internal/engine/history"
	"github.com/swmgr/swmgr/internal/gnmi"
)

// startGNMI serves gNMI on --gnmi, with the HTTPS certificate, the
// service's Verifier and Throttle, until Stop (a subscription ends when
// its user's access does: sessions); connections are limited per
// client and handshakes bounded as the HTTPS listener's are; its RPCs go to
// the access log and the metrics as the HTTP requests do.
func startGNMI(o *serveOptions, eng *engine.Engine, hist *history.History, table *bind.Table, verifier *auth.Verifier, throttle *auth.Throttle, sessions *auth.Sessions, ob *observability, log *slog.Logger) (*gnmi.Server, error) {
	cert, err := serverCertificate(o, o.gnmi, log)
	if err != nil {
		return nil, fmt.Errorf("--gnmi: %w", err)
	}
	srv, err := gnmi.New(gnmi.Options{
		Engine: eng, History: hist, State: table.StateObjects, TLS: cert.Config(), Log: log, Version: version(),
		RefusalDelay: time.Second, HandshakeTimeout: o.headerTimeout, Access: ob.access, Metrics: ob.metrics, Sessions: sessions,
		Login: func(ctx context.Context, name, password string, addr netip.Addr) (auth.Identity, *auth.Refusal) {
			return auth.Login(ctx, verifier, throttle, log, name, password, addr, "gNMI")
		},
	})
	if err != nil {
		return nil, err
	}
	ln, err := net.Listen("tcp", o.gnmi)
	if err != nil {
		return nil, fmt.Errorf("--gnmi: %w", err)
	}
	perListener := connsPerListener()
	ln = connlimit.New(ln, connlimit.Options{PerClient: o.maxConnsPerClient, Total: perListener, Cred: o.peerCred, Refused: func(client string, total bool) {
		log.Warn("gNMI connection refused: too many open connections", "client", client, "all_clients", total)
	}})
	go func() {
		if err := srv.Serve(ln); err != nil {
			log.Error("gnmi", "err", err)
		}
	}()
	log.Info("gNMI serving", "addr", ln.Addr().String())
	return srv, nil
}
