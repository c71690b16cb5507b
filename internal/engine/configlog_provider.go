package engine

import (
	"context"

	"github.com/swmgr/swmgr/internal/bind"
	"github.com/swmgr/swmgr/internal/model"
)

// ConfigLog is the config log as a provider: it keeps the entries of the
// config log's kind (read by the front doors through the engine) and
// clears them (model.ActionClearConfigLog).
func (e *Engine) ConfigLog() bind.Provider { return configLogProvider{e} }

type configLogProvider struct{ e *Engine }

func (configLogProvider) Name() string { return "config log" }

func (p configLogProvider) Bindings() []bind.Binding {
	rows := []bind.Binding{{Kind: model.ActionClearConfigLog, Action: &bind.Action{Run: p.clear}}}
	for _, k := range p.e.reg.Kinds() {
		if k.Source == model.SourceConfigLog {
			rows = append(rows, bind.Binding{Kind: k.Name, Log: true})
		}
	}
	return rows
}

func (p configLogProvider) clear(ctx context.Context, c bind.Call) (bind.Result, error) {
	return bind.Result{}, p.e.ClearLog(ctx, c.Meta, c.Log)
}
