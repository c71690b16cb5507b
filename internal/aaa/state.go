package aaa

import (
	"context"
	"sync"
	"sync/atomic"

	"github.com/swmgr/swmgr/internal/accounts"
	"github.com/swmgr/swmgr/internal/backend"
	"github.com/swmgr/swmgr/internal/model"
)

// StateBackend adds this package's state (ConnFailReason, OperStatus,
// accounting and syslog counters) to the state the backend gives of its
// kinds.
type StateBackend struct {
	backend.Backend
	svc   atomic.Pointer[Service]
	once  sync.Once
	inner map[string]*backend.Driver
}

// WrapState wraps be; Attach gives it the service once there is one.
func WrapState(be backend.Backend) *StateBackend { return &StateBackend{Backend: be} }

// Attach sets the service whose state is shown.
func (s *StateBackend) Attach(svc *Service) { s.svc.Store(svc) }

// Accounts passes the wrapped backend's accounts through.
func (s *StateBackend) Accounts() accounts.Accounts {
	if k, ok := s.Backend.(backend.AccountKeeper); ok {
		return k.Accounts()
	}
	return nil
}

// Drivers implements backend.Backend.
func (s *StateBackend) Drivers() map[string]*backend.Driver {
	inner := s.Backend.Drivers()
	out := make(map[string]*backend.Driver, len(inner))
	for name, d := range inner {
		out[name] = d
	}
	for _, name := range kinds {
		d := backend.Driver{}
		if in := inner[name]; in != nil {
			d = *in
		}
		innerState, kind := d.State, name
		d.State = func(ctx context.Context, o model.Object) (model.Object, error) {
			var st model.Object
			if innerState != nil {
				var err error
				if st, err = innerState(ctx, o); err != nil {
					return nil, err
				}
			}
			svc := s.svc.Load()
			if svc == nil {
				return st, nil
			}
			if st == nil {
				st = model.Object{}
			}
			for k, v := range svc.State(kind, o) {
				st[k] = v
			}
			return st, nil
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
