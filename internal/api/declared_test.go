package api

import (
	"context"
	"encoding/json"
	"io"
	"log/slog"
	"maps"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/swmgr/swmgr/internal/auth"
	"github.com/swmgr/swmgr/internal/backend"
	"github.com/swmgr/swmgr/internal/backend/sim"
	"github.com/swmgr/swmgr/internal/bind"
	"github.com/swmgr/swmgr/internal/engine"
	"github.com/swmgr/swmgr/internal/engine/enginetest"
	"github.com/swmgr/swmgr/internal/model"
	"github.com/swmgr/swmgr/internal/openapi"
	"github.com/swmgr/swmgr/internal/openapi/openapitest"
)

// TestAccess is what each request needs of its user, as the route parsed
// here and the declarations give it (the table auth's Required had).
func TestAccess(t *testing.T) {
	reg := model.Builtin()
	for _, tc := range []struct {
		method, path string
		want         auth.Need
	}{
		{"GET", "/public/v1/config/Users", auth.NeedRead},
		{"HEAD", "/public/v1/state/Port/fpPort1", auth.NeedRead},
		{"GET", "/public/v1/events", auth.NeedRead},
		{"GET", "/anything/else", auth.NeedRead},
		{"OPTIONS", "/public/v1/config/User", auth.NeedRead},
		{"POST", "/public/v1/config/NtpServer", auth.NeedOperator},
		{"PATCH", "/public/v1/config/port/0f8fad5b-d9cb-469f-a165-70867728950e", auth.NeedOperator},
		{"DELETE", "/public/v1/config/Vrf", auth.NeedOperator},
		{"POST", "/public/v1/config/User", auth.NeedAdmin},
		{"PATCH", "/public/v1/config/user/0f8fad5b-d9cb-469f-a165-70867728950e", auth.NeedAdmin},
		{"DELETE", "/public/v1/config/USER", auth.NeedAdmin},
		{"POST", "/public/v1//config//User/", auth.NeedAdmin},
		{"POST", "/public/v1/config/Users", auth.NeedAdmin},
		{"POST", "/public/v1/action/UserPassword", auth.NeedSelf},
		{"POST", "/public/v1/action/userpassword", auth.NeedSelf},
		{"POST", "/public/v1/action/SaveConfig", auth.NeedOperator},
		{"POST", "/public/v1/action/Rollback", auth.NeedOperator},
		{"POST", "/public/v1/action/ResetConfig", auth.NeedAdmin},
		{"POST", "/public/v1/action/ResetConfigToFile", auth.NeedAdmin},
		{"POST", "/public/v1/action/clearconfiglog", auth.NeedAdmin},
		{"POST", "/public/v1/action/SomethingNew", auth.NeedAdmin},
		{"POST", "/public/v1/candidates", auth.NeedOperator},
		{"DELETE", "/public/v1/candidates/abc", auth.NeedOperator},
		{"POST", "/public/v1/candidates/abc/commit", auth.NeedOperator},
		{"POST", "/public/v1/candidates/abc/config/NtpServer", auth.NeedOperator},
		{"POST", "/public/v1/candidates/abc/config/user", auth.NeedAdmin},
		{"POST", "/public/v1/revisions/7/confirm", auth.NeedOperator},
		{"POST", "/public/v1/state/Port", auth.NeedAdmin},
		{"PUT", "/public/v1/config/NtpServer", auth.NeedOperator},
		{"POST", "/elsewhere", auth.NeedAdmin},
		{"POST", "/Public/V1/config/NtpServer", auth.NeedAdmin},
	} {
		a, _ := access(reg, tc.method, tc.path)
		if got := auth.NeedOf(a); got != tc.want {
			t.Errorf("%s %s needs %v, want %v", tc.method, tc.path, got, tc.want)
		}
	}
}

// TestRouteParsedOnce: the route Access parses reaches ServeHTTP with the
// request, which then does not parse the path again.
func TestRouteParsedOnce(t *testing.T) {
	a := newAPIHarness(t)
	s := a.h.(*Server)
	r := httptest.NewRequest("POST", "/public/v1/config/NtpServer", strings.NewReader(`{"IpAddr":"192.0.2.9"}`))
	need, r := s.Access(r)
	if need != auth.NeedOperator {
		t.Fatalf("need %v", need)
	}
	p, ok := r.Context().Value(routeKey{}).(*parsedRoute)
	if !ok || p.route.Kind == nil || p.route.Kind.Name != "NtpServer" {
		t.Fatalf("no parsed route in the request: %+v", p)
	}
	// ServeHTTP takes the parsed route: one whose kind is another (as no
	// parse of this path could give) is the one served.
	p.route.Kind = s.reg.Lookup(model.Config, "Vrf")
	w := httptest.NewRecorder()
	s.ServeHTTP(w, r)
	if w.Code != http.StatusBadRequest || !strings.Contains(w.Body.String(), `"Object":"Vrf"`) {
		t.Fatalf("ServeHTTP parsed the path again: %d %s", w.Code, w.Body)
	}
	// A route parsed for another path (a wrapper rewrote it) is not used.
	r = httptest.NewRequest("POST", "/public/v1/config/NtpServer", strings.NewReader(`{"IpAddr":"192.0.2.9"}`))
	_, r = s.Access(r)
	r.URL.Path = "/public/v1/config/Nothing"
	w = httptest.NewRecorder()
	s.ServeHTTP(w, r)
	if w.Code != http.StatusNotFound {
		t.Fatalf("a stale route was used: %d %s", w.Code, w.Body)
	}
}

// TestOpenAPIRolesAreEnforced: the role each operation of the OpenAPI
// document names is the one the server enforces for it.
func TestOpenAPIRolesAreEnforced(t *testing.T) {
	reg := model.Builtin()
	doc := openapi.Document(reg)
	fill := strings.NewReplacer("{ObjectId}", "0f8fad5b-d9cb-469f-a165-70867728950e", "{CandidateId}", "c1", "{Revision}", "7")
	n := 0
	for path, ops := range doc["paths"].(map[string]any) {
		for method, op := range ops.(map[string]any) {
			o := op.(map[string]any)
			role, ok := o["x-swmgr-role"].(string)
			if !ok {
				if sec, _ := o["security"].([]any); len(sec) == 0 {
					t.Errorf("%s %s names no role", method, path)
				}
				continue
			}
			self, _ := o["x-swmgr-self"].(string)
			a, _ := access(reg, strings.ToUpper(method), fill.Replace(path))
			if a.Role.String() != role || a.Self != self {
				t.Errorf("%s %s: the document says %s (self %q), the server enforces %+v", method, path, role, self, a)
			}
			if !strings.Contains(o["description"].(string), a.Who()) {
				t.Errorf("%s %s: the description does not say who: %q", method, path, o["description"])
			}
			n++
		}
	}
	if n < 100 {
		t.Fatalf("only %d operations checked", n)
	}
}

// declHarness is swmgr in-process (as newAPIHarness) over a registry with
// extra declared kinds and a backend with extra drivers.
type declHarness struct {
	t      *testing.T
	srv    *httptest.Server
	h      *Server
	eng    *engine.Engine
	client *http.Client
}

// extraDrivers adds drivers to a backend, for kinds that only a test
// declares.
type extraDrivers struct {
	backend.Backend
	more map[string]*backend.Driver
}

func (b extraDrivers) Drivers() map[string]*backend.Driver {
	ds := maps.Clone(b.Backend.Drivers())
	maps.Copy(ds, b.more)
	return ds
}

func newDeclHarness(t *testing.T, extra []*model.Kind, drivers map[string]*backend.Driver, providers ...bind.Provider) *declHarness {
	t.Helper()
	d := enginetest.OpenDataDir(t, t.TempDir())
	st, box, acc := d.St, d.Box, d.Acc
	reg, err := model.NewRegistry(append(model.Builtin().Kinds(), extra...)...)
	if err != nil {
		t.Fatal(err)
	}
	log := slog.New(slog.NewTextHandler(io.Discard, nil))
	be := extraDrivers{sim.New(sim.Options{Ports: 4, Version: "decl", Accounts: acc, OwnAccounts: true}), drivers}
	eng := engine.New(reg, st, be, box, log)
	if err := eng.Start(context.Background()); err != nil {
		t.Fatal(err)
	}
	hist, cands := startParts(t, eng)
	h := newServer(t, eng, hist, cands, acc, log, append(providers, bind.Rows{Of: "test drivers", Rows: bind.Drivers(drivers)})...)
	srv := httptest.NewServer(h)
	t.Cleanup(srv.Close)
	validator, err := openapitest.New(reg)
	if err != nil {
		t.Fatal(err)
	}
	return &declHarness{t: t, srv: srv, h: h, eng: eng, client: validator.Wrap(srv.Client())}
}

func (d *declHarness) do(method, path, body string) (int, map[string]any) {
	d.t.Helper()
	req, err := http.NewRequest(method, d.srv.URL+"/public/v1"+path, strings.NewReader(body))
	if err != nil {
		d.t.Fatal(err)
	}
	resp, err := d.client.Do(req)
	if err != nil {
		d.t.Fatal(err)
	}
	defer resp.Body.Close()
	data, _ := io.ReadAll(resp.Body)
	var m map[string]any
	if err := json.Unmarshal(data, &m); err != nil {
		d.t.Fatalf("%s %s: not JSON: %q", method, path, data)
	}
	return resp.StatusCode, m
}

// TestNewActionIsDeclarationPlusHandler adds an action as a new one is
// added: its declaration (fields, role, dry-runnable) and one handler.
// REST parses, validates, checks the role, dry-runs, logs and answers it;
// the OpenAPI document and the docs describe it; Check names it while it
// has no handler.
func TestNewActionIsDeclarationPlusHandler(t *testing.T) {
	// The declaration.
	echo := &model.Kind{
		Name: "EchoTest", Class: model.Action, Role: model.RoleOperator, DryRunnable: true,
		Doc: "Answers its Text, Times times.",
		Fields: []*model.Field{
			{Name: "Text", Type: model.String, Required: true, MaxLen: 32},
			{Name: "Times", Type: model.Int, Default: int64(1), Range: &model.Range{Min: 1, Max: 3}},
		},
	}
	reg, err := model.NewRegistry(append(model.Builtin().Kinds(), echo)...)
	if err != nil {
		t.Fatal(err)
	}
	// Every other action and service state bound: the table's check names
	// the new action until a provider binds it.
	var others []bind.Binding
	for _, k := range reg.Kinds() {
		switch {
		case k.Class == model.Action && k != echo:
			others = append(others, bind.Binding{Kind: k.Name, Action: &bind.Action{Run: func(context.Context, bind.Call) (bind.Result, error) { return bind.Result{}, nil }}})
		case k.Class == model.State && k.Source == model.SourceService:
			others = append(others, bind.Binding{Kind: k.Name, Source: func(context.Context) ([]model.Object, error) { return nil, nil }})
		case k.Class == model.State && k.Source == model.SourceConfigLog:
			others = append(others, bind.Binding{Kind: k.Name, Log: true})
		case k.Class == model.State:
			others = append(others, bind.Binding{Kind: k.Name, Driver: &backend.Driver{List: func(context.Context) ([]model.Object, error) { return nil, nil }}})
		case k.Class == model.Config:
			d := &backend.Driver{Apply: func(context.Context, backend.Change) (model.Object, error) { return nil, nil }}
			if k.Discovered {
				d.Discover = func(context.Context) ([]model.Object, error) { return nil, nil }
			}
			others = append(others, bind.Binding{Kind: k.Name, Driver: d})
		}
	}
	if _, err := bind.Build(reg, bind.Rows{Of: "the others", Rows: others}); err == nil || !strings.Contains(err.Error(), "EchoTest") {
		t.Fatalf("the table's check does not name the action without a provider: %v", err)
	}
	if code, m := newDeclHarness(t, []*model.Kind{echo}, nil).do("POST", "/action/EchoTest", `{"Text":"hi"}`); code != http.StatusNotImplemented {
		t.Fatalf("without a provider: %d %v", code, m)
	}

	// The provider's row.
	var (
		calls atomic.Int32
		out   atomic.Value
		d     *declHarness
	)
	run := func(ctx context.Context, c bind.Call) (bind.Result, error) {
		calls.Add(1)
		out.Store(strings.Repeat(c.Fields.Str("Text"), int(c.Fields.Int("Times"))))
		if c.DryRun {
			return bind.Result{DryRun: true}, nil
		}
		return bind.Result{}, d.eng.LogSuccess(ctx, c.Meta, c.Log)
	}
	d = newDeclHarness(t, []*model.Kind{echo}, nil, bind.Rows{Of: "echo", Rows: []bind.Binding{{Kind: "EchoTest", Action: &bind.Action{Run: run}}}})
	if code, m := d.do("POST", "/action/echotest", `{"Text":"ab","Times":2}`); code != 200 || out.Load() != "abab" {
		t.Fatalf("run: %d %v, the handler made %v", code, m, out.Load())
	}
	if code, m := d.do("POST", "/action/EchoTest?dry_run=true", `{"Text":"ab"}`); code != 200 || m["DryRun"] != true {
		t.Fatalf("dry run: %d %v", code, m)
	}
	before := calls.Load()
	for _, body := range []string{`{"Text":"ab","Times":4}`, `{"Times":1}`, `{"Text":"ab","Nope":1}`} {
		if code, m := d.do("POST", "/action/EchoTest", body); code != 400 {
			t.Errorf("%s: %d %v", body, code, m)
		}
	}
	if calls.Load() != before {
		t.Error("the handler ran for bad input")
	}
	// The config log records runs and refusals alike.
	_, page := d.do("GET", "/state/ConfigLogs", "")
	objs := page["Objects"].([]any)
	last := objs[len(objs)-1].(map[string]any)["Object"].(map[string]any)
	if last["API"] != "echotest" || !strings.Contains(last["Result"].(string), "Nope") {
		t.Errorf("last config log entry: %v", last)
	}

	// Who may run it, as declared: through auth, a reader may not.
	if need, _ := d.h.Access(httptest.NewRequest("POST", "/public/v1/action/EchoTest", nil)); need != auth.NeedOperator {
		t.Errorf("EchoTest needs %v", need)
	}
	rd := &http.Request{Header: http.Header{}}
	rd = rd.WithContext(auth.NewContext(t.Context(), auth.Identity{Name: "rd", Role: auth.Reader}))
	if _, err := d.h.table.Run(rd.Context(), bind.Call{Kind: echo, Fields: model.Object{"Text": "x"}, Caller: callerOf(rd.Context())}); err == nil {
		t.Error("a reader may run an operator's action")
	}
	// The OpenAPI document and the docs describe it.
	op, _ := openapi.Document(d.h.reg)["paths"].(map[string]any)["/public/v1/action/EchoTest"].(map[string]any)["post"].(map[string]any)
	if op["x-swmgr-role"] != "operator" {
		t.Errorf("OpenAPI: %v", op)
	}
	if md := d.h.reg.Markdown(); !strings.Contains(md, "## EchoTest (action)") || !strings.Contains(md, "Who: operators and admins. `?dry_run=true` reports") {
		t.Error("the docs do not describe EchoTest")
	}
}

// TestStateOnlyKindAnswersItsOwnData: a state-only kind that is not the
// config log (LabEntryState, a kind of the test listed by its backend driver) answers its own
// objects; the config log still answers its entries; a kind the service
// fills without a registered source is a 501 naming it.
func TestStateOnlyKindAnswersItsOwnData(t *testing.T) {
	arp := &model.Kind{
		Name: "LabEntryState", Class: model.State,
		Doc: "A neighbor's MAC address.",
		Fields: []*model.Field{
			{Name: "IpAddr", Type: model.String},
			{Name: "MacAddr", Type: model.String},
			{Name: "Intf", Type: model.String},
		},
	}
	entries := []model.Object{
		{"IpAddr": "192.0.2.1", "MacAddr": "00:00:5e:00:53:01", "Intf": "fpPort1"},
		{"IpAddr": "192.0.2.2", "MacAddr": "00:00:5e:00:53:02", "Intf": "fpPort2"},
	}
	d := newDeclHarness(t, []*model.Kind{arp}, map[string]*backend.Driver{
		"LabEntryState": {List: func(context.Context) ([]model.Object, error) { return entries, nil }},
	})
	if code, m := d.do("POST", "/config/NtpServer", `{"IpAddr":"192.0.2.9"}`); code != 201 {
		t.Fatalf("a write for the config log: %d %v", code, m)
	}
	code, page := d.do("GET", "/state/LabEntrys", "")
	if code != 200 || page["ObjCount"] != float64(2) {
		t.Fatalf("list: %d %v", code, page)
	}
	first := page["Objects"].([]any)[0].(map[string]any)["Object"].(map[string]any)
	if first["MacAddr"] != "00:00:5e:00:53:01" || first["SeqNum"] != nil {
		t.Errorf("first entry: %v", first)
	}
	code, one := d.do("GET", "/state/LabEntry?IpAddr=192.0.2.2", "")
	if code != 200 || one["Object"].(map[string]any)["Intf"] != "fpPort2" {
		t.Errorf("one: %d %v", code, one)
	}
	if code, m := d.do("GET", "/state/LabEntry?IpAddr=192.0.2.3", ""); code != 404 {
		t.Errorf("a missing entry: %d %v", code, m)
	}
	if code, m := d.do("GET", "/state/ConfigLogs", ""); code != 200 || m["ObjCount"] == float64(0) {
		t.Errorf("the config log: %d %v", code, m)
	} else if o := m["Objects"].([]any)[0].(map[string]any)["Object"].(map[string]any); o["SeqNum"] == nil {
		t.Errorf("the config log answers: %v", o)
	}
	code, m := d.do("GET", "/state/SystemStatus", "")
	if e, _ := m["Error"].(map[string]any); code != http.StatusNotImplemented || e["Object"] != "SystemStatusState" {
		t.Errorf("a service kind without its source: %d %v", code, m)
	}
}
