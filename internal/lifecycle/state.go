package lifecycle

import (
	"context"
	"sync"
	"sync/atomic"
	"time"

	"github.com/swmgr/swmgr/internal/accounts"
	"github.com/swmgr/swmgr/internal/backend"
	"github.com/swmgr/swmgr/internal/model"
)

// StateBackend adds the lifecycle's state to a backend's: SystemParam's
// saved and running revisions, and each ConfigArchiveServer's archive state.
// It is the one place the engine meets this package on reads; with declared
// state sources it becomes two of them.
type StateBackend struct {
	backend.Backend
	lc    atomic.Pointer[Lifecycle]
	once  sync.Once
	inner map[string]*backend.Driver
}

// WrapState wraps be; Attach gives it the lifecycle once there is one.
func WrapState(be backend.Backend) *StateBackend { return &StateBackend{Backend: be} }

// Attach sets the lifecycle whose state is shown.
func (s *StateBackend) Attach(l *Lifecycle) { s.lc.Store(l) }

// Accounts passes the wrapped backend's accounts through.
func (s *StateBackend) Accounts() accounts.Accounts {
	if k, ok := s.Backend.(backend.AccountKeeper); ok {
		return k.Accounts()
	}
	return nil
}

// Drivers implements backend.Backend: the wrapped backend's, with the
// lifecycle's state added to SystemParam's and ConfigArchiveServer's.
func (s *StateBackend) Drivers() map[string]*backend.Driver {
	inner := s.Backend.Drivers()
	out := make(map[string]*backend.Driver, len(inner))
	for name, d := range inner {
		out[name] = d
	}
	for _, name := range []string{"SystemParam", archiveKind} {
		d := backend.Driver{}
		if in := inner[name]; in != nil {
			d = *in
		}
		innerState, kindName := d.State, name
		d.State = func(ctx context.Context, o model.Object) (model.Object, error) {
			var st model.Object
			var err error
			if innerState != nil {
				st, err = innerState(ctx, o)
			}
			return s.state(kindName, st, err, o)
		}
		out[name] = &d
	}
	return out
}

// ApplyBatch implements backend.Batcher, through the wrapped backend's
// batch when it has one.
func (s *StateBackend) ApplyBatch(ctx context.Context, commits []*backend.Commit) (int, error) {
	s.once.Do(func() { s.inner = s.Backend.Drivers() })
	return backend.ApplyBatch(ctx, s.Backend, s.inner, commits)
}

func (s *StateBackend) state(kind string, st model.Object, err error, o model.Object) (model.Object, error) {
	l := s.lc.Load()
	if err != nil || l == nil {
		return st, err
	}
	if st == nil {
		st = model.Object{}
	}
	switch kind {
	case "SystemParam":
		saved := l.Saved()
		running := l.eng.Revision()
		st["RunningRevision"] = int64(running)
		st["SavedRevision"] = int64(saved.Revision)
		st["UnsavedChanges"] = running != saved.Revision
		if !saved.At.IsZero() {
			st["LastSaved"] = saved.At.Format(time.RFC3339) + " to " + saved.To
		}
	case archiveKind:
		name := l.eng.Registry().Lookup(model.Config, archiveKind).Key(o)
		if pin, ok := l.sftp.Pins.Get(endpointOf(o)); ok {
			st["HostKey"] = pin.Fingerprint
		}
		as, ok := l.sched.State(name)
		if !ok {
			break
		}
		st["LastAttempt"] = stamp(as.LastAttempt)
		st["LastSuccess"] = stamp(as.LastSuccess)
		st["LastError"] = as.LastError
		st["LastFile"] = as.LastFile
		st["LastRevision"] = int64(as.LastRevision)
		st["NextRun"] = stamp(as.NextRun)
		st["Uploads"] = as.Uploads
		st["Failures"] = as.Failures
	}
	return st, nil
}

func stamp(t time.Time) string {
	if t.IsZero() {
		return ""
	}
	return t.UTC().Format(time.RFC3339)
}
