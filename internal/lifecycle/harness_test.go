package lifecycle

import (
	"context"
	"encoding/json"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/swmgr/swmgr/internal/api"
	"github.com/swmgr/swmgr/internal/backend"
	"github.com/swmgr/swmgr/internal/backend/sim"
	"github.com/swmgr/swmgr/internal/bind"
	"github.com/swmgr/swmgr/internal/configfile"
	"github.com/swmgr/swmgr/internal/engine"
	"github.com/swmgr/swmgr/internal/engine/candidates"
	"github.com/swmgr/swmgr/internal/engine/enginetest"
	"github.com/swmgr/swmgr/internal/engine/history"
	"github.com/swmgr/swmgr/internal/engine/users"
	"github.com/swmgr/swmgr/internal/model"
	"github.com/swmgr/swmgr/internal/store"
)

// switchHarness is swmgr in-process, wired as cmd/swmgr/serve.go wires it:
// a real bbolt store and secrets box in a temporary data directory, the
// simulated switch, the engine, this package and the REST handler.
type switchHarness struct {
	t     testing.TB
	dir   string
	st    *store.Store
	eng   *engine.Engine
	lc    *Lifecycle
	table *bind.Table
	srv   *httptest.Server
	base  string
}

// fastKDF keeps tests quick; the header records the costs.
var fastKDF = configfile.KDFParams{Time: 1, Memory: 1024, Threads: 1}

type harnessOptions struct {
	ports   int
	dataDir string
	tune    func(*Options)
	// reg is the model (default: the builtin one).
	reg *model.Registry
	// given, when set, is told every change the simulated switch is given.
	given func(backend.Change)
}

func newSwitch(t testing.TB, ho harnessOptions) *switchHarness {
	t.Helper()
	dir := ho.dataDir
	if dir == "" {
		dir = t.TempDir()
	}
	if ho.ports == 0 {
		ho.ports = 8
	}
	d := enginetest.OpenDataDir(t, dir)
	st, box, acc := d.St, d.Box, d.Acc
	log := slog.New(slog.NewTextHandler(io.Discard, nil))
	so := sim.Options{Ports: ho.ports, Version: "harness", Accounts: acc, OwnAccounts: true, CLIShell: "/bin/false"}
	if ho.given != nil {
		so.Fault = func(c backend.Change) error { ho.given(c); return nil }
	}
	if ho.reg == nil {
		ho.reg = model.Builtin()
	}
	be := sim.New(so)
	// The engine applies through a table, as the service's does, so that
	// the lifecycle's shares of state are bound like the service binds them.
	table := bind.NewTable(ho.reg)
	if err := table.Bind(bind.Rows{Of: "simulated switch", Rows: bind.Drivers(be.Drivers())}); err != nil {
		t.Fatal(err)
	}
	eng := engine.New(ho.reg, st, tableBackend{be, table}, box, log)
	o := Options{Engine: eng, Sealer: box, DataDir: dir, Version: "test", Log: log, KDF: &fastKDF, Backoff: 100 * time.Millisecond, Settle: 200 * time.Millisecond}
	if ho.tune != nil {
		ho.tune(&o)
	}
	lc, err := New(o)
	if err != nil {
		t.Fatal(err)
	}
	if err := eng.Start(context.Background()); err != nil {
		t.Fatal(err)
	}
	hist, cands := history.New(eng), candidates.New(eng)
	if err := cands.Start(context.Background()); err != nil {
		t.Fatal(err)
	}
	if err := hist.Start(context.Background()); err != nil {
		t.Fatal(err)
	}
	if err := lc.Start(context.Background()); err != nil {
		t.Fatal(err)
	}
	if err := table.Bind(lc, hist, eng.ConfigLog(), users.Actions(eng, acc)); err != nil {
		t.Fatal(err)
	}
	if err := table.SealPartial(); err != nil {
		t.Fatal(err)
	}
	h := api.New(api.Options{Engine: eng, History: hist, Candidates: cands, Table: table, Log: log})
	srv := httptest.NewServer(h)
	sh := &switchHarness{t: t, dir: dir, st: st, eng: eng, lc: lc, table: table, srv: srv, base: srv.URL + "/public/v1"}
	t.Cleanup(sh.close)
	return sh
}

// save runs SaveConfig as caller does through any front door: through
// the table, which checks who may.
func (s *switchHarness) save(caller bind.Caller, fields model.Object) error {
	k := s.eng.Registry().Named("SaveConfig")
	obj := k.Defaults()
	for n, v := range fields {
		obj[n] = v
	}
	_, err := s.table.Run(s.t.(*testing.T).Context(), bind.Call{Kind: k, Fields: obj, Caller: caller})
	return err
}

// tableBackend is a backend whose drivers are a table's.
type tableBackend struct {
	backend.Backend
	table *bind.Table
}

func (b tableBackend) Drivers() map[string]*backend.Driver { return b.table.Drivers() }

func (s *switchHarness) close() {
	if s.srv == nil {
		return
	}
	s.srv.CloseClientConnections()
	s.srv.Close()
	s.lc.Close()
	s.st.Close()
	s.srv = nil
}

// do sends a request and returns the status and body.
func (s *switchHarness) do(method, path, body string) (int, []byte) {
	s.t.Helper()
	req, err := http.NewRequest(method, s.base+path, strings.NewReader(body))
	if err != nil {
		s.t.Fatal(err)
	}
	if body != "" {
		req.Header.Set("Content-Type", "application/json")
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		s.t.Fatal(err)
	}
	defer resp.Body.Close()
	out, _ := io.ReadAll(resp.Body)
	return resp.StatusCode, out
}

// must sends a request that must succeed and decodes its body into v.
func (s *switchHarness) must(method, path, body string, v any) {
	s.t.Helper()
	code, out := s.do(method, path, body)
	if code != http.StatusOK && code != http.StatusCreated {
		s.t.Fatalf("%s %s %s: %d %s", method, path, body, code, out)
	}
	if v != nil {
		if err := json.Unmarshal(out, v); err != nil {
			s.t.Fatalf("%s %s: %v in %s", method, path, err, out)
		}
	}
}

// objectState is one object as a snapshot sees it.
type objectState struct {
	id  string
	obj model.Object
}

// snapshot reads every config object with its ObjectId, keyed by kind and
// store key.
func (s *switchHarness) snapshot() (uint64, map[string]objectState) {
	s.t.Helper()
	out := map[string]objectState{}
	rev, err := s.eng.Snapshot(context.Background(), nil, nil, func(k *model.Kind, o model.Object) error {
		out[k.Name+"|"+k.Key(o)] = objectState{obj: o}
		return nil
	})
	if err != nil {
		s.t.Fatal(err)
	}
	// ObjectIds through the API, as clients see them.
	for _, k := range s.eng.Registry().Kinds() {
		if k.Class != model.Config {
			continue
		}
		var page struct {
			Objects []struct {
				Object   json.RawMessage
				ObjectId string
			}
		}
		s.must("GET", "/config/"+k.Name+"s?Count=1024", "", &page)
		for _, o := range page.Objects {
			body, _ := model.DecodeBody(o.Object)
			fields, err := k.Parse(body)
			if err != nil {
				s.t.Fatal(err)
			}
			full := k.Defaults()
			for n, v := range fields {
				full[n] = v
			}
			key := k.Name + "|" + k.Key(full)
			st := out[key]
			st.id = o.ObjectId
			out[key] = st
		}
	}
	return rev, out
}

func (s *switchHarness) revision() uint64 { return s.eng.Revision() }
