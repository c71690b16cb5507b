package aaa

import (
	"context"
	"sync/atomic"

	"github.com/swmgr/swmgr/internal/backend"
	"github.com/swmgr/swmgr/internal/model"
)

// Provider is this package's part of the composition: the drivers of
// Tacacs, TacacsGlobal, RadiusServer, AAAGlobal and SyslogCollector, and
// the handler of the CLI's command records (CommandAction). There
// is nothing to apply at the switch (the Service follows the commits
// through the change feed); their state (ConnFailReason, OperStatus,
// accounting and syslog counters) is the Service's, attached once it
// exists.
type Provider struct {
	// Registry declares the secret words masked in a CLI command's record.
	Registry *model.Registry
	svc      atomic.Pointer[Service]
}

// Attach sets the service whose state is shown.
func (p *Provider) Attach(s *Service) { p.svc.Store(s) }

// Kinds are the kinds the Provider drives.
func Kinds() []string { return append([]string(nil), kinds...) }

// Drivers returns the drivers of the kinds.
func (p *Provider) Drivers() map[string]*backend.Driver {
	ds := make(map[string]*backend.Driver, len(kinds))
	for _, kind := range kinds {
		ds[kind] = &backend.Driver{
			Apply: func(ctx context.Context, c backend.Change) (model.Object, error) { return nil, nil },
			State: func(ctx context.Context, o model.Object) (model.Object, error) {
				svc := p.svc.Load()
				if svc == nil {
					return nil, nil
				}
				return svc.State(kind, o), nil
			},
		}
	}
	return ds
}
