// Package obs makes swmgr observable: one access-log line per request,
// Prometheus metrics (requests, commits, the store, the backend, logins,
// the change feed, the commit awaiting confirmation, and the series the
// model declares for the state of ports, BGP sessions and NTP sources, read
// from the state forms at scrape time), the health endpoints and sd_notify.
//
// The engine and the store are not instrumented from inside, nor is the
// backend wrapped: they take small observer callbacks (the engine's commits
// and backend applies, engine.ObserveCommits and ObserveApplies;
// store.ObserveBatches), and the REST layer leaves a Note with the response
// writer saying which route class it served and which revision it made.
package obs

import "net/http"

// Note is what the REST layer tells the access log and the metrics about a
// request it served.
type Note struct {
	Class    string // route class, e.g. config_id; "" lets the path decide
	Revision uint64 // the revision the request made, if any
	// Sent counts body bytes the handler wrote past the response writer:
	// a change-feed stream taken over from net/http (api's feedStream).
	Sent int64
}

// noter is the response writer of an observed request. The Note travels
// with the writer rather than in the request's context, which would cost a
// copy of the request on every call.
type noter interface{ note() *Note }

// NoteFrom returns the Note of the request w answers, or nil when nothing
// observes it.
func NoteFrom(w http.ResponseWriter) *Note {
	for {
		if n, ok := w.(noter); ok {
			return n.note()
		}
		u, ok := w.(interface{ Unwrap() http.ResponseWriter })
		if !ok {
			return nil
		}
		w = u.Unwrap()
	}
}

// SetRevision records the revision a request made (no-op without a Note).
func SetRevision(w http.ResponseWriter, rev uint64) {
	if n := NoteFrom(w); n != nil && rev != 0 {
		n.Revision = rev
	}
}

// AddSent counts n body bytes written past the response writer, on the
// connection taken over from net/http (no-op without a Note).
func AddSent(w http.ResponseWriter, n int64) {
	if note := NoteFrom(w); note != nil {
		note.Sent += n
	}
}

// SetClass records the route class of a request (no-op without a Note).
func SetClass(w http.ResponseWriter, class string) {
	if n := NoteFrom(w); n != nil {
		n.Class = class
	}
}
