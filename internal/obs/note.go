// Package obs makes swmgr observable: one access-log line per request,
// Prometheus metrics (requests, commits, the store, the backend, logins,
// the change feed, and per-port counters read from the state forms), the
// health endpoints and sd_notify.
//
// The engine and the store are not instrumented from inside: they take
// small observer callbacks (engine.ObserveCommits, store.ObserveBatches),
// the backend is wrapped, and the REST layer leaves a Note in the request's
// context saying which route class it served and which revision it made.
package obs

import "context"

// Note is what the REST layer tells the access log and the metrics about a
// request it served.
type Note struct {
	Class    string // route class, e.g. config_id; "" lets the path decide
	Revision uint64 // the revision the request made, if any
}

type noteKey struct{}

// NoteFrom returns the request's Note, or nil when nothing observes it.
func NoteFrom(ctx context.Context) *Note {
	n, _ := ctx.Value(noteKey{}).(*Note)
	return n
}

// SetRevision records the revision a request made (no-op without a Note).
func SetRevision(ctx context.Context, rev uint64) {
	if n := NoteFrom(ctx); n != nil && rev != 0 {
		n.Revision = rev
	}
}

// SetClass records the route class of a request (no-op without a Note).
func SetClass(ctx context.Context, class string) {
	if n := NoteFrom(ctx); n != nil {
		n.Class = class
	}
}
