package engine_test

import (
	"context"
	"strings"
	"testing"

	"github.com/swmgr/swmgr/internal/backend/sim"
	"github.com/swmgr/swmgr/internal/engine"
	"github.com/swmgr/swmgr/internal/model"
	"github.com/swmgr/swmgr/internal/store"
)

// TestStartAfterAnUpgrade: a new binary reports a new SwVersion (a field
// the switch sets, read-only to clients); its first start on the data of
// the previous one records it. Start refused it before ("SwVersion is set
// by the switch and cannot be changed"): a package upgrade left the
// service unable to start (found by test/debvm).
func TestStartAfterAnUpgrade(t *testing.T) {
	dir := t.TempDir()
	start := func(version string) (*engine.Engine, *store.Store, error) {
		return startEngine(t, dir, model.Builtin(), sim.Options{Ports: 4, Version: version})
	}
	for _, version := range []string{"1.0.0", "1.0.1", "1.0.1"} {
		e, st, err := start(version)
		if err != nil {
			t.Fatalf("start of %s: %v", version, err)
		}
		k := e.Registry().Lookup(model.Config, "SystemParam")
		b, _, err := e.GetByKey(context.Background(), k, model.Object{}, false, nil)
		if err != nil {
			t.Fatal(err)
		}
		if !strings.Contains(string(b), `"SwVersion":"`+version+`"`) {
			t.Errorf("after the start of %s: %s", version, b)
		}
		e.Close()
		st.Close()
	}
}
