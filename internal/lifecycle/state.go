package lifecycle

import (
	"context"
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
	lc atomic.Pointer[Lifecycle]
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

// State implements backend.Backend.
func (s *StateBackend) State(ctx context.Context, k *model.Kind, o model.Object) (model.Object, error) {
	st, err := s.Backend.State(ctx, k, o)
	l := s.lc.Load()
	if err != nil || l == nil {
		return st, err
	}
	if st == nil {
		st = model.Object{}
	}
	switch k.Name {
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
		name := k.Key(o)
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
