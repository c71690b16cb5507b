package aaa

import (
	"context"

	"github.com/swmgr/swmgr/internal/backend"
	"github.com/swmgr/swmgr/internal/bind"
	"github.com/swmgr/swmgr/internal/model"
)

// ProviderName names central AAA in the binding table.
const ProviderName = "central AAA"

// Kinds are the kinds central AAA drives.
func Kinds() []string { return append([]string(nil), kinds...) }

// Config is central AAA's part of what the engine applies through: the
// drivers of Tacacs, TacacsGlobal, RadiusServer, AAAGlobal and
// SyslogCollector. There is nothing to apply at the switch: the Service
// follows the commits through the change feed.
func Config() bind.Provider { return configRows{} }

type configRows struct{}

func (configRows) Name() string { return ProviderName }

func (configRows) Bindings() []bind.Binding {
	rows := make([]bind.Binding, 0, len(kinds))
	for _, kind := range kinds {
		rows = append(rows, bind.Binding{Kind: kind, Driver: &backend.Driver{
			Apply: func(ctx context.Context, c backend.Change) (model.Object, error) { return nil, nil },
		}})
	}
	return rows
}

// Provider is the service's own rows: its share of the kinds' state
// (ConnFailReason, OperStatus, accounting and syslog counters) and the
// CLI's command records (CommandAction), whose secret words reg declares.
// It is bound once the service exists, after the engine it follows.
func (s *Service) Provider(reg *model.Registry) bind.Provider {
	return serviceRows{s: s, reg: reg}
}

type serviceRows struct {
	s   *Service
	reg *model.Registry
}

func (serviceRows) Name() string { return ProviderName }

func (p serviceRows) Bindings() []bind.Binding {
	rows := []bind.Binding{{Kind: CommandAction, Action: &bind.Action{Run: p.accountCommand}}}
	for _, kind := range kinds {
		rows = append(rows, bind.Binding{Kind: kind, Driver: &backend.Driver{
			State: func(ctx context.Context, o model.Object) (model.Object, error) { return p.s.State(kind, o), nil },
		}})
	}
	return rows
}
