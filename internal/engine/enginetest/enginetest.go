// Package enginetest starts a real engine for the tests of the engine's
// parts (history, candidates) and of its callers: a real bbolt store and
// secrets box in a directory of the test's, and the simulated backend,
// whose apply can be made to fail (Fixture.SetFault). OpenDataDir opens
// the store, box and account files alone, for tests that start the engine
// their own way.
package enginetest

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"path/filepath"
	"sync/atomic"
	"testing"
	"time"

	"github.com/swmgr/swmgr/internal/accounts"
	"github.com/swmgr/swmgr/internal/apierr"
	"github.com/swmgr/swmgr/internal/backend"
	"github.com/swmgr/swmgr/internal/backend/sim"
	"github.com/swmgr/swmgr/internal/datadir"
	"github.com/swmgr/swmgr/internal/engine"
	"github.com/swmgr/swmgr/internal/model"
	"github.com/swmgr/swmgr/internal/secrets"
	"github.com/swmgr/swmgr/internal/store"
)

// Fixture is a started engine on a store in Dir.
type Fixture struct {
	T   testing.TB
	Dir string
	E   *engine.Engine
	Sim *sim.Sim
	St  *store.Store
	// fault, when set (SetFault), makes the switch refuse the changes it
	// returns an error for. Atomic: the engine's own goroutines (a
	// confirmation's rollback timer) apply changes while a test sets it.
	fault atomic.Pointer[func(backend.Change) error]
}

// SetFault makes the switch refuse the changes fn returns an error for; nil
// makes it accept everything again.
func (f *Fixture) SetFault(fn func(backend.Change) error) {
	if fn == nil {
		f.fault.Store(nil)
		return
	}
	f.fault.Store(&fn)
}

// New starts an engine with the built-in kinds on the store in dir (a
// second New on the same dir is a restart); it is closed when the test ends.
func New(t testing.TB, dir string) *Fixture {
	t.Helper()
	return Start(t, dir, Options{})
}

// NewWith starts an engine with the kinds of reg, on the simulated backend
// wrapped by wrap.
func NewWith(t testing.TB, dir string, reg *model.Registry, wrap ...func(backend.Backend) backend.Backend) *Fixture {
	t.Helper()
	return Start(t, dir, Options{Registry: reg, Wrap: wrap})
}

// Options are what Start may change.
type Options struct {
	Registry *model.Registry // nil: the built-in kinds
	// Sim configures the simulated switch (zero: 8 ports, no accounts);
	// its Fault is the fixture's (SetFault).
	Sim  sim.Options
	Wrap []func(backend.Backend) backend.Backend
}

// Start starts an engine on the store in dir.
func Start(t testing.TB, dir string, o Options) *Fixture {
	t.Helper()
	if o.Registry == nil {
		o.Registry = model.Builtin()
	}
	if o.Sim.Ports == 0 {
		o.Sim.Ports, o.Sim.Version = 8, "test"
	}
	f := &Fixture{T: t, Dir: dir}
	o.Sim.Fault = func(c backend.Change) error {
		if fn := f.fault.Load(); fn != nil {
			return (*fn)(c)
		}
		return nil
	}
	f.Sim = sim.New(o.Sim)
	st, err := store.Open(dir)
	if err != nil {
		t.Fatal(err)
	}
	f.St = st
	box, err := secrets.Open(dir)
	if err != nil {
		t.Fatal(err)
	}
	var b backend.Backend = f.Sim
	for _, w := range o.Wrap {
		b = w(b)
	}
	f.E = engine.New(o.Registry, st, b, box, slog.New(slog.NewTextHandler(io.Discard, nil)))
	if err := f.E.Start(context.Background()); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { f.E.Close(); st.Close() })
	return f
}

// DataDir is what a test of the whole service opens in a data directory,
// as swmgr serve does: the store, the secrets box, and the simulated
// switch's account files (hashed with sha512crypt, which keeps tests fast).
type DataDir struct {
	St  *store.Store
	Box *secrets.Box
	Acc *accounts.Files
}

// OpenDataDir opens them in dir; the store is closed when the test ends.
func OpenDataDir(t testing.TB, dir string) DataDir {
	t.Helper()
	st, err := store.Open(dir)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { st.Close() })
	box, err := secrets.Open(dir)
	if err != nil {
		t.Fatal(err)
	}
	acc, err := accounts.OpenFiles(filepath.Join(dir, datadir.Accounts), accounts.FilesOptions{Scheme: accounts.SHA512})
	if err != nil {
		t.Fatal(err)
	}
	return DataDir{St: st, Box: box, Acc: acc}
}

// Kind is the config kind name.
func (f *Fixture) Kind(name string) *model.Kind { return f.E.Registry().Lookup(model.Config, name) }

// Edit makes an edit of kind; an update or a delete names its object by
// the key fields among fields.
func (f *Fixture) Edit(op backend.Op, kind string, fields model.Object) engine.Edit {
	k := f.Kind(kind)
	ed := engine.Edit{Kind: k, Op: op, Fields: fields}
	if op != backend.Create {
		ed.Target.Key = engine.KeyFields(k, fields)
		for _, kf := range k.Keys() {
			if _, ok := fields[kf.Name]; !ok {
				delete(ed.Target.Key, kf.Name)
			}
		}
	}
	if op == backend.Delete {
		ed.Fields = nil
	}
	return ed
}

// Apply commits edits.
func (f *Fixture) Apply(edits ...engine.Edit) (*engine.Outcome, error) {
	return f.E.Apply(context.Background(), edits, engine.Meta{Source: "test"}, nil)
}

// MustApply commits edits or fails the test.
func (f *Fixture) MustApply(edits ...engine.Edit) *engine.Outcome {
	f.T.Helper()
	out, err := f.Apply(edits...)
	if err != nil {
		f.T.Fatal(err)
	}
	return out
}

// Dump is the whole store, to compare before and after.
func (f *Fixture) Dump() []byte {
	var b bytes.Buffer
	if err := f.St.Dump(&b); err != nil {
		f.T.Fatal(err)
	}
	return b.Bytes()
}

// Exists reports whether the store holds the object of kind with key.
func (f *Fixture) Exists(kind, key string) bool {
	var ok bool
	f.St.View(func(tx store.Txn) error { _, ok, _ = tx.Get(kind, key); return nil })
	return ok
}

// Object is the stored object of kind with key, secrets included, or nil.
func (f *Fixture) Object(kind, key string) model.Object {
	var o model.Object
	f.St.View(func(tx store.Txn) error {
		rec, ok, err := tx.Get(kind, key)
		if err != nil || !ok {
			return nil
		}
		o, _ = f.E.Decode(f.Kind(kind), rec)
		return nil
	})
	return o
}

// Status is the HTTP status of an API error, or 0.
func Status(err error) int {
	var e *apierr.Error
	if errors.As(err, &e) {
		return e.Status
	}
	return 0
}

// WaitFor waits up to 10 s for cond.
func WaitFor(t testing.TB, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("timed out waiting for %s", what)
		}
		time.Sleep(10 * time.Millisecond)
	}
}

// LaterSchema is the builtin model at schema version 2 with two test
// migrations from version 1: NtpServer's MaxPoll counted from MinPoll (a
// change of unit: MinPoll 5, MaxPoll 12 become 5, 7) and BGPv4Neighbor's
// sealed AuthPassword prefixed with "md5:" (a migration of a secret, which
// must see it in clear; it fails on a redacted or missing one).
func LaterSchema(t testing.TB) *model.Registry {
	t.Helper()
	later, err := model.Builtin().WithSchema(2,
		model.Migration{From: 1, Kind: "NtpServer", Doc: "MaxPoll counted from MinPoll", Migrate: func(o map[string]any) (map[string]any, error) {
			o["MaxPoll"] = o["MaxPoll"].(float64) - o["MinPoll"].(float64)
			return o, nil
		}},
		model.Migration{From: 1, Kind: "BGPv4Neighbor", Doc: "AuthPassword prefixed with its scheme", Migrate: func(o map[string]any) (map[string]any, error) {
			p, _ := o["AuthPassword"].(string)
			if p == "" || p == "******" {
				return nil, fmt.Errorf("AuthPassword %q is not the password", p)
			}
			o["AuthPassword"] = "md5:" + p
			return o, nil
		}})
	if err != nil {
		t.Fatal(err)
	}
	return later
}
