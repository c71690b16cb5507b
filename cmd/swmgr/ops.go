package main

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"net/http"
	"strings"
	"syscall"
	"time"

	"github.com/swmgr/swmgr/internal/bind"
	"github.com/swmgr/swmgr/internal/engine"
	"github.com/swmgr/swmgr/internal/engine/candidates"
	"github.com/swmgr/swmgr/internal/model"
	"github.com/swmgr/swmgr/internal/obs"
	"github.com/swmgr/swmgr/internal/openapi"
	"github.com/swmgr/swmgr/internal/store"
)

// observability is what serve adds for operators: metrics, the access
// log, the health endpoints, and the API document and browser.
type observability struct {
	metrics *obs.Metrics   // nil with --metrics=false
	access  *obs.AccessLog // nil with --access-log=false
	health  obs.Health
	apiDoc  []byte        // the OpenAPI document, generated once from the engine's registry
	web     *webUI        // the web page, in front of authentication
	token   *metricsToken // nil without --metrics-token-file
}

// accessLog is the logger of the access lines (buffered: see serve).
func newObservability(o *serveOptions, accessLog *obs.AccessLog, log *slog.Logger) (*observability, error) {
	ob := &observability{}
	if o.metrics {
		ob.metrics = obs.NewMetrics()
	}
	if o.accessLog {
		ob.access = accessLog
	}
	var err error
	ob.token, err = openMetricsToken(o, log)
	return ob, err
}

// watch hooks the metrics into the store and the engine.
func (ob *observability) watch(st *store.Store, eng *engine.Engine, cands *candidates.Staging, table *bind.Table, log *slog.Logger) {
	ob.apiDoc = openapi.JSON(eng.Registry())
	if ob.metrics == nil {
		return
	}
	st.ObserveBatches(ob.metrics.ObserveBatch)
	ob.metrics.Watch(obs.Source{
		Registry:    eng.Registry(),
		Revision:    eng.Revision,
		Subscribers: eng.Feed().Subscribers,
		Candidates: func() int {
			c, _ := cands.List(nil)
			return len(c)
		},
		ListState: func(ctx context.Context, k *model.Kind, marker uint64, count int) ([]byte, error) {
			if k.Class == model.State {
				// A state-only kind is not stored: its objects come from
				// its source, through the binding table, as one page.
				objs, err := table.StateObjects(ctx, k)
				if err != nil {
					return nil, err
				}
				page := struct {
					MoreExist bool
					Objects   []struct{ Object model.Object }
				}{}
				for _, o := range objs {
					page.Objects = append(page.Objects, struct{ Object model.Object }{o})
				}
				return json.Marshal(page)
			}
			return eng.List(ctx, k, marker, count, true, nil)
		},
		Confirmation: func() (uint64, time.Time, bool) {
			c, err := eng.PendingConfirm()
			if err != nil || c == nil {
				return 0, time.Time{}, false
			}
			return c.Revision, time.Unix(0, c.Deadline), true
		},
		Log: log,
	})
}

// inner goes behind authentication: /metrics needs credentials except on
// the loopback listener, like the API.
func (ob *observability) inner(api http.Handler) http.Handler {
	if ob.metrics == nil {
		return api
	}
	metrics := ob.metrics.Handler()
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path == "/metrics" {
			metrics.ServeHTTP(w, r)
			return
		}
		api.ServeHTTP(w, r)
	})
}

// outer goes in front of authentication: the health endpoints, the API
// document and its browser, and the web page's files and login are
// public, /metrics with the metrics token needs no login, and the access
// log and request metrics see every request, refused ones included.
func (ob *observability) outer(authed http.Handler) http.Handler {
	browser := openapi.Browser()
	pageOrAPI := ob.web.route(authed)
	var metrics http.Handler
	if ob.metrics != nil {
		metrics = ob.metrics.Handler()
	}
	h := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		switch p := r.URL.Path; {
		case ob.token.sent(r):
			ob.token.serve(w, r, metrics)
		case p == obs.HealthzPath || p == obs.ReadyzPath:
			ob.health.ServeHTTP(w, r)
		case p == openapi.BrowserPath[:len(openapi.BrowserPath)-1] || strings.HasPrefix(p, openapi.BrowserPath):
			browser.ServeHTTP(w, r)
		case p == openapi.Path && (r.Method == http.MethodGet || r.Method == http.MethodHead):
			w.Header().Set("Content-Type", "application/json; charset=UTF-8")
			w.Header().Set("Access-Control-Allow-Origin", "*")
			w.Write(ob.apiDoc)
		default:
			pageOrAPI.ServeHTTP(w, r)
		}
	})
	return obs.Wrap(h, obs.HandlerOptions{Access: ob.access, Metrics: ob.metrics})
}

// ready marks the service ready and tells systemd (Type=notify).
func (ob *observability) ready(log *slog.Logger) {
	ob.health.SetReady()
	if sent, err := obs.Notify("READY=1\nSTATUS=serving"); err != nil {
		log.Warn("cannot notify systemd", "err", err)
	} else if sent {
		log.Debug("notified systemd: ready")
	}
}

// probeListen checks, before anything is created, that addr can be bound,
// so that a start that cannot listen leaves no data directory behind.
func probeListen(flag, addr string) error {
	if addr == "" {
		return nil
	}
	ln, err := net.Listen("tcp", addr)
	if err != nil {
		if errors.Is(err, syscall.EACCES) {
			if flag == "--https" {
				return fmt.Errorf("%s %s: permission denied: run as root or give --https 127.0.0.1:8443", flag, addr)
			}
			return fmt.Errorf("%s %s: permission denied: run as root or give a port above 1023", flag, addr)
		}
		if flag == "--https" {
			return fmt.Errorf("--https: %w (give a free address, or --https \"\" to disable HTTPS)", err)
		}
		return fmt.Errorf("%s: %w", flag, err)
	}
	ln.Close()
	return nil
}
