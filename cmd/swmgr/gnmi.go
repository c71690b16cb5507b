package main

import (
	"fmt"
	"log/slog"
	"net"

	"github.com/swmgr/swmgr/internal/access"
	"github.com/swmgr/swmgr/internal/connlimit"
	"github.com/swmgr/swmgr/internal/gnmi"
	"github.com/swmgr/swmgr/internal/service"
)

// startGNMI serves gNMI, and gNOI beside it (newGNOI), on --gnmi, with the HTTPS certificate, the
// front doors' login check, until Stop (a subscription ends when its
// user's access does: doors.Sessions); connections are limited per
// client and handshakes bounded as the HTTPS listener's are; its RPCs go to
// the access log and the metrics as the HTTP requests do.
func startGNMI(o *serveOptions, svc *service.Service, doors *access.Access, ob *observability, log *slog.Logger) (*gnmi.Server, error) {
	cert, err := serverCertificate(o, o.gnmi, log)
	if err != nil {
		return nil, fmt.Errorf("--gnmi: %w", err)
	}
	var services []gnmi.Service
	switch g, err := newGNOI(o, svc, log); {
	case err != nil:
		return nil, err
	case g != nil:
		services = append(services, g)
	}
	srv, err := gnmi.New(gnmi.Options{
		Services: services,
		Engine:   svc.Engine, History: svc.History, State: svc.Table.StateObjects, TLS: cert.Config(), Log: log, Version: version(),
		RefusalDelay: access.RefusalDelay, HandshakeTimeout: o.headerTimeout, Access: ob.access, Metrics: ob.metrics, Sessions: doors.Sessions,
		Login: doors.Login("gNMI"), SimulatedSensors: o.backend == "sim",
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
