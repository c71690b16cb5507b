package aaa_test

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"math/rand/v2"
	"os"
	"os/exec"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/swmgr/swmgr/internal/aaa"
	"github.com/swmgr/swmgr/internal/aaa/aaatest"
	"github.com/swmgr/swmgr/internal/apierr"
	"github.com/swmgr/swmgr/internal/backend"
	"github.com/swmgr/swmgr/internal/bind"
	"github.com/swmgr/swmgr/internal/engine"
	"github.com/swmgr/swmgr/internal/engine/enginetest"
	"github.com/swmgr/swmgr/internal/model"
	"github.com/swmgr/swmgr/internal/syncbuf"
	"github.com/swmgr/swmgr/internal/testneed"
	"github.com/swmgr/swmgr/internal/testport"
)

const tacSecret, radSecret = "tac-shared-key", "rad-shared-key"

var users = []aaatest.User{
	{Name: "tadmin", Password: "admin-pass-1", PrivLvl: 15, ServiceType: "Administrative-User"},
	{Name: "toper", Password: "oper-pass-1", PrivLvl: 7, ServiceType: "NAS-Prompt-User"},
	{Name: "tread", Password: "read-pass-1", PrivLvl: 1},
	{Name: "tnothing", Password: "nothing-pass-1"},
	{Name: "rfilter", Password: "filter-pass-1", FilterID: "swmgr-operator"},
}

// fixture is an engine with a started Service on it, and its log.
type fixture struct {
	f       *enginetest.Fixture
	svc     *aaa.Service
	log     *syncbuf.Buffer
	changes *int64
	mu      sync.Mutex
}

func newFixture(t *testing.T) *fixture {
	return newFixtureWith(t, nil)
}

// newFixtureWith is newFixture with the options tweak changes.
func newFixtureWith(t *testing.T, tweak func(fx *fixture, o *aaa.Options)) *fixture {
	fx := &fixture{f: enginetest.New(t, t.TempDir()), log: &syncbuf.Buffer{}, changes: new(int64)}
	o := aaa.Options{Source: fx.f.E, Log: slog.New(slog.NewTextHandler(fx.log, nil)), OnChange: func() {
		fx.mu.Lock()
		*fx.changes++
		fx.mu.Unlock()
	}}
	if tweak != nil {
		tweak(fx, &o)
	}
	fx.svc = aaa.New(o)
	if err := fx.svc.Start(context.Background()); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(fx.svc.Close)
	return fx
}

func (fx *fixture) apply(t *testing.T, op backend.Op, kind string, fields model.Object) uint64 {
	t.Helper()
	fx.mu.Lock()
	*fx.changes = 0
	fx.mu.Unlock()
	out := fx.f.MustApply(fx.f.Edit(op, kind, fields))
	rev := out.Revision
	// The service reads the configuration after the commit: wait for it.
	enginetest.WaitFor(t, "the AAA configuration to be read", func() bool { return fx.changed() > 0 })
	return rev
}

// applyAs is apply as the user of meta.
func (fx *fixture) applyAs(t *testing.T, meta engine.Meta, op backend.Op, kind string, fields model.Object) {
	t.Helper()
	fx.mu.Lock()
	*fx.changes = 0
	fx.mu.Unlock()
	if _, err := fx.f.E.Apply(context.Background(), []engine.Edit{fx.f.Edit(op, kind, fields)}, meta, nil); err != nil {
		t.Fatal(err)
	}
	enginetest.WaitFor(t, "the AAA configuration to be read", func() bool { return fx.changed() > 0 })
}

func (fx *fixture) changed() int64 {
	fx.mu.Lock()
	defer fx.mu.Unlock()
	return *fx.changes
}

func (fx *fixture) login(t *testing.T, name, pw string) aaa.Result {
	t.Helper()
	r, err := fx.svc.Login(context.Background(), name, pw, "127.0.0.1")
	if err != nil {
		t.Fatalf("login %s: %v", name, err)
	}
	return r
}

func tacacs(s *aaatest.Tacacs) model.Object {
	return model.Object{"ServerIp": s.Host, "Port": int64(s.Port), "Secret": s.Secret, "AuthService": "login"}
}

// TestTacacsLoginRoles logs in against tacquito's server: the role comes
// from priv-lvl (15 admin, 7 operator, 1 or nothing read-only), a wrong
// password is the server's no, and TacacsGlobal Enable "false" leaves
// logins to the local users.
func TestTacacsLoginRoles(t *testing.T) {
	srv := aaatest.StartTacacs(t, tacSecret, users)
	fx := newFixture(t)
	fx.apply(t, backend.Create, "Tacacs", tacacs(srv))
	if r := fx.login(t, "tadmin", "admin-pass-1"); r.Answered {
		t.Fatalf("TacacsGlobal is not enabled, yet the server was asked: %+v", r)
	}
	fx.apply(t, backend.Update, "TacacsGlobal", model.Object{"Enable": "true"})
	for _, c := range []struct {
		name, pw, group string
		ok              bool
	}{
		{"tadmin", "admin-pass-1", aaa.RoleAdmin, true},
		{"toper", "oper-pass-1", aaa.RoleOperator, true},
		{"tread", "read-pass-1", aaa.RoleReadOnly, true},
		{"tnothing", "nothing-pass-1", aaa.RoleReadOnly, true},
		{"tadmin", "wrong-password", "", false},
		{"nobody", "whatever-1", "", false},
	} {
		r := fx.login(t, c.name, c.pw)
		if !r.Answered || r.OK != c.ok || r.Group != c.group || r.Method != "tacacs+" {
			t.Errorf("%s/%s: %+v, want answered, ok %v, group %q; server said: %s", c.name, c.pw, r, c.ok, c.group, tail(srv.Output()))
		}
	}
	st := fx.svc.State("Tacacs", model.Object{"ServerIp": srv.Host})
	if st["ConnFailReason"] != "" {
		t.Errorf("state: %v", st)
	}
}

// TestRadiusLoginRoles logs in against FreeRADIUS: Service-Type gives
// admin and operator, Filter-Id too, nothing gives read-only; a wrong
// password is an Access-Reject.
func TestRadiusLoginRoles(t *testing.T) {
	srv := aaatest.StartRadius(t, radSecret, users)
	fx := newFixture(t)
	fx.apply(t, backend.Create, "RadiusServer", model.Object{"ServerIp": srv.Host, "Port": int64(srv.Port), "AcctPort": int64(srv.AcctPort), "Secret": radSecret, "Timeout": int64(2)})
	for _, c := range []struct {
		name, pw, group string
		ok              bool
	}{
		{"tadmin", "admin-pass-1", aaa.RoleAdmin, true},
		{"toper", "oper-pass-1", aaa.RoleOperator, true},
		{"tread", "read-pass-1", aaa.RoleReadOnly, true},
		{"rfilter", "filter-pass-1", aaa.RoleOperator, true},
		{"tadmin", "wrong-password", "", false},
	} {
		r := fx.login(t, c.name, c.pw)
		if !r.Answered || r.OK != c.ok || r.Group != c.group || r.Method != "radius" {
			t.Errorf("%s/%s: %+v, want answered, ok %v, group %q; server said: %s", c.name, c.pw, r, c.ok, c.group, tail(srv.Output()))
		}
	}
}

// TestOrderAndFallback: TACACS+ down passes to RADIUS; both down leaves
// the login to the local users, which is logged; AuthOrder radius first
// asks RADIUS first.
func TestOrderAndFallback(t *testing.T) {
	tac := aaatest.StartTacacs(t, tacSecret, []aaatest.User{{Name: "both", Password: "tacacs-pass-1", PrivLvl: 15}})
	rad := aaatest.StartRadius(t, radSecret, []aaatest.User{{Name: "both", Password: "radius-pass-1"}})
	fx := newFixture(t)
	fx.apply(t, backend.Update, "TacacsGlobal", model.Object{"Enable": "true", "Timeout": int64(1)})
	fx.apply(t, backend.Create, "Tacacs", tacacs(tac))
	fx.apply(t, backend.Create, "RadiusServer", model.Object{"ServerIp": rad.Host, "Port": int64(rad.Port), "AcctPort": int64(0), "Secret": radSecret, "Timeout": int64(1), "Retries": int64(0)})
	if r := fx.login(t, "both", "tacacs-pass-1"); r.Method != "tacacs+" || !r.OK || r.Group != aaa.RoleAdmin {
		t.Errorf("TACACS+ first: %+v", r)
	}
	fx.apply(t, backend.Update, "AAAGlobal", model.Object{"AuthOrder": []string{"radius", "tacacs+"}})
	if r := fx.login(t, "both", "radius-pass-1"); r.Method != "radius" || !r.OK || r.Group != aaa.RoleReadOnly {
		t.Errorf("RADIUS first: %+v", r)
	}
	fx.apply(t, backend.Update, "AAAGlobal", model.Object{"AuthOrder": []string{"tacacs+", "radius"}})
	tac.Stop()
	if r := fx.login(t, "both", "radius-pass-1"); r.Method != "radius" || !r.OK {
		t.Errorf("TACACS+ down: %+v, want RADIUS's answer", r)
	}
	if st := fx.svc.State("Tacacs", model.Object{"ServerIp": tac.Host}); st["ConnFailReason"] == "" {
		t.Errorf("TACACS+ down, yet no ConnFailReason: %v", st)
	}
	rad.Stop()
	if r := fx.login(t, "both", "radius-pass-1"); r.Answered {
		t.Errorf("both down: %+v, want no answer (the local users decide)", r)
	}
	if !strings.Contains(fx.log.String(), "no AAA server answered; checking the local users") {
		t.Errorf("the fallback is not logged: %s", fx.log)
	}
	if st := fx.svc.State("AAAGlobal", nil); st["LocalFallbacks"] != int64(1) {
		t.Errorf("AAAGlobal state: %v", st)
	}
}

// server is the object of a server, to create.
type server struct {
	kind string
	o    model.Object
}

// tacacsAt is a Tacacs of tacSecret at host and port.
func tacacsAt(host string, port int) server {
	return server{"Tacacs", model.Object{"ServerIp": host, "Port": int64(port), "Secret": tacSecret}}
}

// radiusAt is a RadiusServer of radSecret at host, port and acctPort (0:
// no accounting), of Timeout 1 and no retry.
func radiusAt(host string, port, acctPort, priority int) server {
	return server{"RadiusServer", model.Object{"ServerIp": host, "Port": int64(port), "AcctPort": int64(acctPort), "Secret": radSecret,
		"Timeout": int64(1), "Retries": int64(0), "Priority": int64(priority)}}
}

// TestLoginAsksServersInOrder: a login asks the methods of AuthOrder in
// order and each method's servers in theirs (Tacacs by creation, RADIUS by
// Priority); a server that times out, cannot be reached or answers with
// an error passes to the next one, and the first answer, yes or no, is
// final. ConnFailReason names exactly the servers that did not answer,
// TacacsGlobal's OperStatus says whether a TACACS+ server answered, and
// when none of any method did, the local users decide (LocalFallbacks).
// Servers are real: tacquito, FreeRADIUS, a TCP server that accepts and
// never answers, a UDP socket that never answers, and ports where nothing
// listens. Each has an address of its own on loopback (ServerIp is the key).
func TestLoginAsksServersInOrder(t *testing.T) {
	tac := aaatest.StartTacacs(t, tacSecret, []aaatest.User{{Name: "both", Password: "tacacs-pass-1", PrivLvl: 15}})
	rad := aaatest.StartRadius(t, radSecret, []aaatest.User{{Name: "both", Password: "radius-pass-1"}})
	hang := aaatest.StartHanging(t, "127.0.0.3")
	silent := aaatest.StartSilent(t, "127.0.0.4")
	var (
		tacOK       = server{"Tacacs", tacacs(tac)}
		tacOtherKey = server{"Tacacs", model.Object{"ServerIp": tac.Host, "Port": int64(tac.Port), "Secret": "not-the-servers-key", "AuthService": "login"}}
		tacHang     = tacacsAt(hang.Host, hang.Port)
		tacGone     = tacacsAt("127.0.0.2", testport.TCP(t))
		radOK       = func(priority int) server { return radiusAt(rad.Host, rad.Port, 0, priority) }
		radSilent   = func(priority int) server { return radiusAt(silent.Host, silent.Port, 0, priority) }
		radGone     = func(priority int) server { return radiusAt("127.0.0.5", testport.UDP(t), 0, priority) }
	)
	for _, c := range []struct {
		name     string
		order    []string
		servers  []server // created in this order
		password string
		want     aaa.Result // but TTL
		failed   []string   // "kind ServerIp" of each server with a ConnFailReason
		tacUp    string     // TacacsGlobal's OperStatus after the login
	}{
		{"the first TACACS+ server answers: the next is not asked", nil, []server{tacOK, tacHang}, "tacacs-pass-1",
			aaa.Result{Answered: true, OK: true, Group: aaa.RoleAdmin, Method: "tacacs+"}, nil, "UP"},
		{"a TACACS+ server that times out passes to the next", nil, []server{tacHang, tacOK}, "tacacs-pass-1",
			aaa.Result{Answered: true, OK: true, Group: aaa.RoleAdmin, Method: "tacacs+"}, []string{"Tacacs 127.0.0.3"}, "UP"},
		{"an unreachable TACACS+ server passes to the next", nil, []server{tacGone, tacOK}, "tacacs-pass-1",
			aaa.Result{Answered: true, OK: true, Group: aaa.RoleAdmin, Method: "tacacs+"}, []string{"Tacacs 127.0.0.2"}, "UP"},
		{"a TACACS+ server's no is final", nil, []server{tacOK, radOK(1)}, "radius-pass-1",
			aaa.Result{Answered: true, Method: "tacacs+"}, nil, "UP"},
		{"a TACACS+ server of another key passes to RADIUS", nil, []server{tacOtherKey, radOK(1)}, "radius-pass-1",
			aaa.Result{Answered: true, OK: true, Group: aaa.RoleReadOnly, Method: "radius"}, []string{"Tacacs 127.0.0.1"}, "DOWN"},
		{"no TACACS+ server answers: RADIUS is asked", nil, []server{tacHang, tacGone, radOK(1)}, "radius-pass-1",
			aaa.Result{Answered: true, OK: true, Group: aaa.RoleReadOnly, Method: "radius"}, []string{"Tacacs 127.0.0.3", "Tacacs 127.0.0.2"}, "DOWN"},
		{"RADIUS servers are asked by Priority", nil, []server{radSilent(2), radOK(1)}, "radius-pass-1",
			aaa.Result{Answered: true, OK: true, Group: aaa.RoleReadOnly, Method: "radius"}, nil, ""},
		{"a RADIUS server that times out passes to the next", nil, []server{radSilent(1), radOK(2)}, "radius-pass-1",
			aaa.Result{Answered: true, OK: true, Group: aaa.RoleReadOnly, Method: "radius"}, []string{"RadiusServer 127.0.0.4"}, ""},
		{"an unreachable RADIUS server passes to the next, whose no is final", []string{"radius", "tacacs+"}, []server{tacOK, radGone(1), radOK(2)}, "tacacs-pass-1",
			aaa.Result{Answered: true, Method: "radius"}, []string{"RadiusServer 127.0.0.5"}, ""},
		{"no server answers: the local users decide", nil, []server{tacGone, radSilent(1), radGone(2)}, "radius-pass-1",
			aaa.Result{}, []string{"Tacacs 127.0.0.2", "RadiusServer 127.0.0.4", "RadiusServer 127.0.0.5"}, "DOWN"},
	} {
		t.Run(c.name, func(t *testing.T) {
			fx := newFixture(t)
			global := model.Object{"Accounting": false} // no record to wait on a server that does not answer
			if c.order != nil {
				global["AuthOrder"] = c.order
			}
			fx.apply(t, backend.Update, "AAAGlobal", global)
			fx.apply(t, backend.Update, "TacacsGlobal", model.Object{"Enable": "true", "Timeout": int64(1)})
			for _, s := range c.servers {
				fx.apply(t, backend.Create, s.kind, s.o)
			}
			r := fx.login(t, "both", c.password)
			if r.TTL == 0 && r.Answered {
				t.Errorf("answered with no TTL: %+v", r)
			}
			r.TTL = 0
			if r != c.want {
				t.Errorf("login: %+v, want %+v; the log: %s", r, c.want, fx.log)
			}
			for _, s := range c.servers {
				ip := s.o.Str("ServerIp")
				reason := fx.svc.State(s.kind, model.Object{"ServerIp": ip})["ConnFailReason"]
				if want := slices.Contains(c.failed, s.kind+" "+ip); (reason != "") != want {
					t.Errorf("%s %s: ConnFailReason %q; want one: %v", s.kind, ip, reason, want)
				}
			}
			if st := fx.svc.State("TacacsGlobal", nil); st["OperStatus"] != c.tacUp {
				t.Errorf("TacacsGlobal OperStatus %q, want %q", st["OperStatus"], c.tacUp)
			}
			fallbacks := int64(0)
			if !c.want.Answered {
				fallbacks = 1
			}
			if st := fx.svc.State("AAAGlobal", nil); st["LocalFallbacks"] != fallbacks {
				t.Errorf("LocalFallbacks %v, want %d", st["LocalFallbacks"], fallbacks)
			}
		})
	}
}

// TestSlowServerHoldsNoOtherLogin: with a server that accepts and never
// answers, logins of different users wait for it side by side: each has
// a connection open to it at once, none waiting for another's turn.
func TestSlowServerHoldsNoOtherLogin(t *testing.T) {
	h := aaatest.StartHanging(t, "127.0.0.1")
	fx := newFixture(t)
	fx.apply(t, backend.Update, "AAAGlobal", model.Object{"Accounting": false}) // no record to hang on it too
	fx.apply(t, backend.Update, "TacacsGlobal", model.Object{"Enable": "true", "Timeout": int64(30)})
	fx.apply(t, backend.Create, "Tacacs", model.Object{"ServerIp": h.Host, "Port": int64(h.Port), "Secret": "k"})
	const n = 8
	ctx, cancel := context.WithCancel(context.Background())
	var wg sync.WaitGroup
	for i := 0; i < n; i++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			fx.svc.Login(ctx, fmt.Sprintf("user%d", i), "password-1", "")
		}()
	}
	enginetest.WaitFor(t, "every login to reach the slow server at once", func() bool { return h.Conns() == n })
	cancel()
	wg.Wait()
}

// TestAccountingRecordsArrive: a commit's record, naming the user, the
// revision and what changed, reaches tacquito's accounting log and
// FreeRADIUS's detail file.
func TestAccountingRecordsArrive(t *testing.T) {
	tac := aaatest.StartTacacs(t, tacSecret, users)
	rad := aaatest.StartRadius(t, radSecret, users)
	fx := newFixture(t)
	fx.apply(t, backend.Update, "TacacsGlobal", model.Object{"Enable": "true"})
	fx.apply(t, backend.Create, "Tacacs", tacacs(tac))
	fx.apply(t, backend.Create, "RadiusServer", model.Object{"ServerIp": rad.Host, "Port": int64(rad.Port), "AcctPort": int64(rad.AcctPort), "Secret": radSecret, "Timeout": int64(2)})
	out, err := fx.f.E.Apply(context.Background(), []engine.Edit{fx.f.Edit(backend.Create, "NtpServer", model.Object{"IpAddr": "192.0.2.10"})}, engine.Meta{Source: "rest", User: "tadmin"}, nil)
	if err != nil {
		t.Fatal(err)
	}
	want := fmt.Sprintf("commit revision %d (rest): create NtpServer IpAddr=192.0.2.10", out.Revision)
	enginetest.WaitFor(t, "the record at tacquito", func() bool { return strings.Contains(tac.Accounting(), want) })
	enginetest.WaitFor(t, "the record at FreeRADIUS", func() bool { return strings.Contains(rad.Accounting(), want) })
	if !strings.Contains(tac.Accounting(), "tadmin") || !strings.Contains(rad.Accounting(), `User-Name = "tadmin"`) {
		t.Errorf("the records do not name the user:\n%s\n%s", tac.Accounting(), rad.Accounting())
	}
	for _, secret := range []string{tacSecret, radSecret} {
		if strings.Contains(tac.Accounting()+rad.Accounting()+fx.log.String(), secret) {
			t.Errorf("a record or the log holds the secret %q", secret)
		}
	}
}

// TestAccountingDropsCounted: with the only server down, records that
// cannot be sent are counted as dropped (and logged), and commits do not
// wait for them.
func TestAccountingDropsCounted(t *testing.T) {
	fx := newFixture(t)
	fx.apply(t, backend.Update, "TacacsGlobal", model.Object{"Enable": "true", "Timeout": int64(1)})
	fx.apply(t, backend.Create, "Tacacs", model.Object{"ServerIp": "127.0.0.1", "Port": int64(testport.TCP(t)), "Secret": "k"})
	for i := 0; i < 3; i++ {
		fx.f.MustApply(fx.f.Edit(backend.Create, "NtpServer", model.Object{"IpAddr": fmt.Sprintf("192.0.2.%d", i+1)}))
	}
	enginetest.WaitFor(t, "the records to be counted as dropped", func() bool {
		st := fx.svc.State("AAAGlobal", nil)
		return st["AccountingDropped"].(int64) >= 1
	})
	if !strings.Contains(fx.log.String(), "accounting record dropped") {
		t.Errorf("the drop is not logged: %s", fx.log)
	}
	_ = time.Second
}

// TestAccountingFirstServerOfEachMethod: a record goes to the first server
// of each method of AuthOrder that takes it (Tacacs by creation, RADIUS by
// Priority, only those with an AcctPort), the later servers of that method
// not asked; a server that cannot be reached or does not answer passes it
// to the next of its method. One method's taking it is enough for it to
// count as sent; when none takes it, it is dropped and counted. Servers
// are real: tacquito, FreeRADIUS, a TCP server that accepts and never
// answers, a UDP socket that never answers (both counting who asks them),
// and ports where nothing listens.
func TestAccountingFirstServerOfEachMethod(t *testing.T) {
	tac := aaatest.StartTacacs(t, tacSecret, users)
	rad := aaatest.StartRadius(t, radSecret, users)
	hang := aaatest.StartHanging(t, "127.0.0.3")
	silent := aaatest.StartSilent(t, "127.0.0.4")
	var (
		tacOK     = server{"Tacacs", tacacs(tac)}
		tacHang   = tacacsAt(hang.Host, hang.Port)
		tacGone   = tacacsAt("127.0.0.2", testport.TCP(t))
		radOK     = func(priority int) server { return radiusAt(rad.Host, testport.UDP(t), rad.AcctPort, priority) }
		radSilent = func(priority int) server { return radiusAt(silent.Host, testport.UDP(t), silent.Port, priority) }
		radGone   = func(priority int) server { return radiusAt("127.0.0.5", testport.UDP(t), testport.UDP(t), priority) }
		radNoAcct = func(priority int) server { return radiusAt("127.0.0.6", testport.UDP(t), 0, priority) }
	)
	for i, c := range []struct {
		name      string
		order     []string
		tacacsOff bool
		servers   []server // created in this order
		atTac     bool     // the record reaches tacquito
		atRad     bool     // the record reaches FreeRADIUS
		hangAsked bool     // the hanging TCP server was asked
		silAsked  bool     // the silent UDP socket was asked
		sent      bool     // counted sent; else dropped (when any server takes accounting)
	}{
		{name: "the first TACACS+ server takes it: the next is not asked", servers: []server{tacOK, tacHang}, atTac: true, sent: true},
		{name: "an unreachable TACACS+ server passes it to the next", servers: []server{tacGone, tacOK}, atTac: true, sent: true},
		{name: "a TACACS+ server that times out passes it to the next", servers: []server{tacHang, tacOK}, atTac: true, hangAsked: true, sent: true},
		{name: "the first server of each method takes it", servers: []server{tacOK, radOK(1)}, atTac: true, atRad: true, sent: true},
		{name: "the first RADIUS server by Priority takes it: the next is not asked", servers: []server{radSilent(2), radOK(1)}, atRad: true, sent: true},
		{name: "a silent RADIUS server passes it to the next by Priority", servers: []server{radOK(2), radSilent(1)}, atRad: true, silAsked: true, sent: true},
		{name: "an unreachable RADIUS server passes it to the next", servers: []server{radOK(2), radGone(1)}, atRad: true, sent: true},
		{name: "a RADIUS server without AcctPort takes none: the next does", servers: []server{radNoAcct(1), radOK(2)}, atRad: true, sent: true},
		{name: "one method taking it is enough", servers: []server{tacGone, radOK(1)}, atRad: true, sent: true},
		{name: "RADIUS first in AuthOrder: each method's first still takes it", order: []string{"radius", "tacacs+"}, servers: []server{tacOK, tacHang, radOK(1), radSilent(2)}, atTac: true, atRad: true, sent: true},
		{name: "a method not in AuthOrder gets none", order: []string{"tacacs+"}, servers: []server{tacOK, radSilent(1)}, atTac: true, sent: true},
		{name: "TACACS+ not enabled gets none", tacacsOff: true, servers: []server{tacHang, radOK(1)}, atRad: true, sent: true},
		{name: "no server takes it: dropped", servers: []server{tacGone, radGone(1)}},
		{name: "no server takes accounting: nothing queued", servers: []server{radNoAcct(1)}},
	} {
		t.Run(c.name, func(t *testing.T) {
			fx := newFixture(t)
			global := model.Object{"Accounting": false} // on once every server is there
			if c.order != nil {
				global["AuthOrder"] = c.order
			}
			fx.apply(t, backend.Update, "AAAGlobal", global)
			fx.apply(t, backend.Update, "TacacsGlobal", model.Object{"Enable": fmt.Sprint(!c.tacacsOff), "Timeout": int64(1)})
			accounts := false
			for _, s := range c.servers {
				fx.apply(t, backend.Create, s.kind, s.o)
				accounts = accounts || (s.kind == "Tacacs" && !c.tacacsOff) || (s.kind == "RadiusServer" && s.o.Int("AcctPort") != 0)
			}
			hang0, sil0 := hang.Conns(), silent.Got()
			// Two records, of a user the servers know: the commit that
			// turns accounting on, and this one.
			meta := engine.Meta{Source: "rest", User: "tadmin"}
			fx.applyAs(t, meta, backend.Update, "AAAGlobal", model.Object{"Accounting": true})
			ip := fmt.Sprintf("192.0.2.%d", 100+i)
			if _, err := fx.f.E.Apply(context.Background(), []engine.Edit{fx.f.Edit(backend.Create, "NtpServer", model.Object{"IpAddr": ip})}, meta, nil); err != nil {
				t.Fatal(err)
			}
			records := int64(0)
			if accounts {
				records = 2
			}
			counted := func() (sent, dropped int64) {
				st := fx.svc.State("AAAGlobal", nil)
				return st["AccountingSent"].(int64), st["AccountingDropped"].(int64)
			}
			// Dropping takes three attempts a record: longer than WaitFor waits.
			for deadline := time.Now().Add(time.Minute); ; time.Sleep(10 * time.Millisecond) {
				if s, d := counted(); s+d >= records {
					break
				}
				if time.Now().After(deadline) {
					t.Fatalf("the records were not all sent or dropped: %v; the log: %s", fx.svc.State("AAAGlobal", nil), fx.log)
				}
			}
			want := "create NtpServer IpAddr=" + ip
			if c.atTac {
				enginetest.WaitFor(t, "the record at tacquito", func() bool { return strings.Contains(tac.Accounting(), want) })
			}
			if c.atRad {
				enginetest.WaitFor(t, "the record at FreeRADIUS", func() bool { return strings.Contains(rad.Accounting(), want) })
			}
			if got := strings.Contains(tac.Accounting(), want); got != c.atTac {
				t.Errorf("the record at tacquito: %v, want %v:\n%s", got, c.atTac, tail(tac.Accounting()))
			}
			if got := strings.Contains(rad.Accounting(), want); got != c.atRad {
				t.Errorf("the record at FreeRADIUS: %v, want %v", got, c.atRad)
			}
			if got := hang.Conns() > hang0; got != c.hangAsked {
				t.Errorf("the hanging TACACS+ server asked: %v, want %v", got, c.hangAsked)
			}
			if got := silent.Got() > sil0; got != c.silAsked {
				t.Errorf("the silent RADIUS server asked: %v, want %v", got, c.silAsked)
			}
			wantSent, wantDropped := int64(0), records
			if c.sent {
				wantSent, wantDropped = records, 0
			}
			if s, d := counted(); s != wantSent || d != wantDropped {
				t.Errorf("AccountingSent %d, AccountingDropped %d; want %d, %d; the log: %s", s, d, wantSent, wantDropped, fx.log)
			}
		})
	}
}

func tail(s string) string {
	if len(s) > 3000 {
		return s[len(s)-3000:]
	}
	return s
}

// command runs the CLI's command-record action as user would through
// REST.
func command(t *testing.T, p bind.Provider, user, line, where string) error {
	t.Helper()
	reg := model.Builtin()
	k := reg.Named(aaa.CommandAction)
	if k == nil || !k.RecordsCommands || !k.NotLogged {
		t.Fatalf("the model declares no %s action that records commands unlogged", aaa.CommandAction)
	}
	fields := k.Defaults()
	fields["Command"], fields["Context"], fields["Session"], fields["Seq"] = line, where, "s1", int64(7)
	for _, row := range p.Bindings() {
		if row.Kind == aaa.CommandAction && row.Action != nil {
			_, err := row.Action.Run(context.Background(), bind.Call{Kind: k, Fields: fields, Meta: engine.Meta{User: user, Source: "cli", Addr: "127.0.0.1:40000"}})
			return err
		}
	}
	t.Fatalf("%s binds no %s action", p.Name(), aaa.CommandAction)
	return nil
}

// TestCommandRecordsArrive: a CLI command's record reaches tacquito's
// accounting log and FreeRADIUS's detail file with the user of the
// request, the command line (its secret value masked, whatever the
// client sent) and the context; no secret reaches a record or the log.
func TestCommandRecordsArrive(t *testing.T) {
	tac := aaatest.StartTacacs(t, tacSecret, users)
	rad := aaatest.StartRadius(t, radSecret, users)
	fx := newFixtureWith(t, func(_ *fixture, o *aaa.Options) { o.Instance = "inst1" })
	p := fx.svc.Provider(model.Builtin())
	fx.apply(t, backend.Update, "TacacsGlobal", model.Object{"Enable": "true"})
	fx.apply(t, backend.Create, "Tacacs", tacacs(tac))
	fx.apply(t, backend.Create, "RadiusServer", model.Object{"ServerIp": rad.Host, "Port": int64(rad.Port), "AcctPort": int64(rad.AcctPort), "Secret": radSecret, "Timeout": int64(2)})
	const typed = "typed-key-9"
	if err := command(t, p, "toper", "show ntp server", "enable"); err != nil {
		t.Fatal(err)
	}
	if err := command(t, p, "toper", `secret "`+typed+`"`, "enable config tacacs server 192.0.2.9"); err != nil {
		t.Fatal(err)
	}
	enginetest.WaitFor(t, "the records at tacquito", func() bool {
		return strings.Contains(tac.Accounting(), "cmd=show ntp server") && strings.Contains(tac.Accounting(), "cmd=secret ********")
	})
	enginetest.WaitFor(t, "the records at FreeRADIUS", func() bool {
		return strings.Contains(rad.Accounting(), "shell:cmd=show ntp server") && strings.Contains(rad.Accounting(), "shell:cmd=secret ********")
	})
	acct := tac.Accounting()
	for _, want := range []string{`"toper"`, "task_id=inst1-cli-s1-7", "service=shell", "swmgr-context=enable config tacacs server 192.0.2.9"} {
		if !strings.Contains(acct, want) {
			t.Errorf("tacquito's records lack %q:\n%s", want, acct)
		}
	}
	for _, want := range []string{`User-Name = "toper"`, `Acct-Session-Id = "swmgr-inst1-cli-s1-7"`, `Reply-Message = "show ntp server"`, `Calling-Station-Id = "127.0.0.1"`} {
		if !strings.Contains(rad.Accounting(), want) {
			t.Errorf("FreeRADIUS's records lack %q:\n%s", want, rad.Accounting())
		}
	}
	for _, secret := range []string{typed, tacSecret, radSecret} {
		if strings.Contains(tac.Accounting()+rad.Accounting()+fx.log.String(), secret) {
			t.Errorf("a record or the log holds %q", secret)
		}
	}
	if st := fx.svc.State("AAAGlobal", nil); st["AccountingSent"].(int64) < 2 {
		t.Errorf("state: %v", st)
	}
}

// TestCommandRecordsBounded: a user's records past the burst are refused
// (429) and counted as dropped, another user's are not held by them; with
// no server taking accounting nothing is queued.
func TestCommandRecordsBounded(t *testing.T) {
	// A stopped clock: the bucket does not refill while the loop runs,
	// however slow the machine.
	stopped := time.Now()
	fx := newFixtureWith(t, func(_ *fixture, o *aaa.Options) { o.Now = func() time.Time { return stopped } })
	p := fx.svc.Provider(model.Builtin())
	refused := 0
	for i := 0; i < aaa.CommandBurst+20; i++ {
		if err := command(t, p, "flood", "show version", "enable"); err != nil {
			var e *apierr.Error
			if !errors.As(err, &e) || e.Status != 429 {
				t.Fatalf("record %d: %v, want 429", i, err)
			}
			refused++
		}
	}
	if refused != 20 {
		t.Errorf("%d records refused past a burst of %d, want the 20 over it", refused, aaa.CommandBurst)
	}
	if err := command(t, p, "other", "show version", "enable"); err != nil {
		t.Errorf("another user's record: %v", err)
	}
	if st := fx.svc.State("AAAGlobal", nil); st["AccountingDropped"] != int64(refused) || st["AccountingQueued"] != int64(0) {
		t.Errorf("state %v, want %d dropped, none queued", st, refused)
	}
}

// testNetns makes a network namespace with lo up and addrs on lo, removed
// when the test ends.
func testNetns(t *testing.T, addrs ...string) string {
	t.Helper()
	if os.Geteuid() != 0 {
		if os.Getenv("CI") != "" {
			t.Fatal("a network namespace needs root")
		}
		t.Skip("skipping: a network namespace needs root")
	}
	testneed.Program(t, "iproute2", "ip")
	ns := fmt.Sprintf("aaasrc%05d", rand.IntN(100000))
	if out, err := exec.Command("ip", "netns", "add", ns).CombinedOutput(); err != nil {
		t.Fatalf("ip netns add: %v %s", err, out)
	}
	t.Cleanup(func() { exec.Command("ip", "netns", "del", ns).Run() })
	cmds := [][]string{{"-n", ns, "link", "set", "lo", "up"}}
	for _, a := range addrs {
		cmds = append(cmds, []string{"-n", ns, "addr", "add", a, "dev", "lo"})
	}
	for _, c := range cmds {
		if out, err := exec.Command("ip", c...).CombinedOutput(); err != nil {
			t.Fatalf("ip %s: %v %s", strings.Join(c, " "), err, out)
		}
	}
	return ns
}

// TestTacacsSourceIntf: on the simulated switch, connections to a Tacacs
// server come from the address configured on its SourceIntf (an
// IPv4Intf): a tacquito that serves only that address answers. With a
// SourceIntf that has no address they come from the routing table's
// source, which that server does not serve, and the log says why.
func TestTacacsSourceIntf(t *testing.T) {
	// swmgr and the server in a namespace of their own, where 192.0.2.2
	// is a local address (on lo) as it would be on the switch's port.
	ns := testNetns(t, "192.0.2.2/32")
	tac := aaatest.StartTacacsWith(t, tacSecret, users, aaatest.TacacsOptions{Clients: []string{"192.0.2.2/32"}, Netns: ns})
	fx := newFixtureWith(t, func(fx *fixture, o *aaa.Options) { o.SourceAddr = fx.f.Sim.SourceAddr })
	fx.apply(t, backend.Update, "AAAGlobal", model.Object{"Accounting": false})
	fx.apply(t, backend.Update, "TacacsGlobal", model.Object{"Enable": "true", "Timeout": int64(2)})
	fx.f.MustApply(fx.f.Edit(backend.Create, "IPv4Intf", model.Object{"IntfRef": "fpPort1", "IpAddr": "192.0.2.2/24"}))
	srv := tacacs(tac)
	srv["SourceIntf"] = "fpPort1"
	fx.apply(t, backend.Create, "Tacacs", srv)
	login := func() (aaa.Result, error) {
		var r aaa.Result
		var err error
		aaatest.InNetns(t, ns, func() { r, err = fx.svc.Login(context.Background(), "tadmin", "admin-pass-1", "127.0.0.1") })
		return r, err
	}
	if r, err := login(); err != nil || !r.Answered || !r.OK || r.Group != aaa.RoleAdmin {
		t.Fatalf("login from SourceIntf fpPort1's 192.0.2.2: %+v %v; server said: %s", r, err, tail(tac.Output()))
	}
	fx.apply(t, backend.Update, "Tacacs", model.Object{"ServerIp": tac.Host, "SourceIntf": "fpPort2"})
	if r, err := login(); err != nil || r.Answered {
		t.Errorf("login with SourceIntf fpPort2 (no address): %+v %v, want no answer from a server that serves only 192.0.2.2", r, err)
	}
	if !strings.Contains(fx.log.String(), "SourceIntf fpPort2 has no IPv4 address") || !strings.Contains(fx.log.String(), "take the routing table's source address") {
		t.Errorf("the fallback to the routing table's source is not logged:\n%s", fx.log)
	}
	if st := fx.svc.State("Tacacs", model.Object{"ServerIp": tac.Host}); st["ConnFailReason"] == "" {
		t.Errorf("state %v, want a ConnFailReason", st)
	}
}

// TestTacacsSourceNotLocal: a SourceIntf whose address this process
// cannot send from (configured on the switch, not on any of the host's
// interfaces: swmgr in another namespace than the switch's) does not
// stop the login: the connection is made again from the routing table's
// source, and the log says why.
func TestTacacsSourceNotLocal(t *testing.T) {
	if b, err := os.ReadFile("/proc/sys/net/ipv4/ip_nonlocal_bind"); err == nil && strings.TrimSpace(string(b)) != "0" {
		t.Skip("skipping: ip_nonlocal_bind is on, so any address can be bound")
	}
	tac := aaatest.StartTacacs(t, tacSecret, users)
	fx := newFixtureWith(t, func(fx *fixture, o *aaa.Options) { o.SourceAddr = fx.f.Sim.SourceAddr })
	fx.apply(t, backend.Update, "AAAGlobal", model.Object{"Accounting": false})
	fx.apply(t, backend.Update, "TacacsGlobal", model.Object{"Enable": "true", "Timeout": int64(2)})
	fx.f.MustApply(fx.f.Edit(backend.Create, "IPv4Intf", model.Object{"IntfRef": "fpPort1", "IpAddr": "192.0.2.50/24"}))
	srv := tacacs(tac)
	srv["SourceIntf"] = "fpPort1"
	fx.apply(t, backend.Create, "Tacacs", srv)
	for i := 0; i < 2; i++ {
		if r := fx.login(t, "tadmin", "admin-pass-1"); !r.Answered || !r.OK || r.Group != aaa.RoleAdmin {
			t.Errorf("login: %+v, want the server's answer from the routing table's source", r)
		}
	}
	if !strings.Contains(fx.log.String(), "the address 192.0.2.50 of SourceIntf fpPort1 cannot be sent from here") {
		t.Errorf("the fallback is not logged:\n%s", fx.log)
	}
	// Said once, not once per connection (each login makes two).
	if n := strings.Count(fx.log.String(), "routing table's source"); n != 1 {
		t.Errorf("the fallback is logged %d times, want once:\n%s", n, fx.log)
	}
	if strings.Contains(fx.log.String(), "from SourceIntf again") {
		t.Errorf("the log says the interface's address is used again:\n%s", fx.log)
	}
}

// TestLoginStormLeavesOthersTheirShare: against a server that accepts and
// never answers, 120 logins at once from one client under new names get
// MaxLoginsPerClient checks (the rest are refused naming that client),
// another client's login is still checked, and a local user's name takes
// no slot at all: from the storming client, and once every slot is taken
// by clients enough, it is still checked. Every check that is not refused
// has a connection of its own at the server.
func TestLoginStormLeavesOthersTheirShare(t *testing.T) {
	h := aaatest.StartHanging(t, "127.0.0.1")
	fx := newFixtureWith(t, func(fx *fixture, o *aaa.Options) {
		o.LocalUser = func(ctx context.Context, name string) bool { return name == "localadmin" }
	})
	fx.apply(t, backend.Update, "AAAGlobal", model.Object{"Accounting": false}) // no record to hang on it too
	fx.apply(t, backend.Update, "TacacsGlobal", model.Object{"Enable": "true", "Timeout": int64(60)})
	fx.apply(t, backend.Create, "Tacacs", model.Object{"ServerIp": h.Host, "Port": int64(h.Port), "Secret": "k"})
	const perClient, total = 64 / 8, 64
	ctx, cancel := context.WithCancel(context.Background())
	var wg sync.WaitGroup
	defer func() { cancel(); wg.Wait() }()
	var mu sync.Mutex
	refused := map[string]int{} // client (or "all") -> logins refused
	login := func(name, client string) {
		wg.Add(1)
		go func() {
			defer wg.Done()
			_, err := fx.svc.Login(ctx, name, "password-1", client)
			var busy *aaa.ClientBusyError
			mu.Lock()
			defer mu.Unlock()
			switch {
			case errors.As(err, &busy) && errors.Is(err, aaa.ErrBusy):
				refused[busy.Client]++
			case errors.Is(err, aaa.ErrBusy):
				refused["all"]++
			}
		}()
	}
	refusedOf := func(client string) int {
		mu.Lock()
		defer mu.Unlock()
		return refused[client]
	}
	for i := range 120 {
		login(fmt.Sprintf("storm%d", i), "192.0.2.66")
	}
	enginetest.WaitFor(t, "the storm's checks to reach the server or be refused", func() bool {
		return h.Conns() == perClient && refusedOf("192.0.2.66") == 120-perClient
	})
	login("central", "198.51.100.7")
	enginetest.WaitFor(t, "another client's login to reach the server", func() bool { return h.Conns() == perClient+1 })
	login("localadmin", "192.0.2.66")
	enginetest.WaitFor(t, "a local user's login from the storming client to reach the server", func() bool { return h.Conns() == perClient+2 })
	// Clients enough take every slot: then any other name is refused,
	// the local user's is not.
	for c, free := 0, total-perClient-1; free > 0; c++ {
		n := min(perClient, free)
		for i := range n {
			login(fmt.Sprintf("more%d-%d", c, i), fmt.Sprintf("203.0.113.%d", c+1))
		}
		free -= n
		enginetest.WaitFor(t, "another client's checks to reach the server", func() bool { return h.Conns() == total+1-free })
	}
	if n := refusedOf("all"); n != 0 {
		t.Fatalf("%d logins refused before every slot was taken", n)
	}
	login("late", "198.51.100.8")
	enginetest.WaitFor(t, "a login to be refused once every slot is taken", func() bool { return refusedOf("all") == 1 })
	login("localadmin", "198.51.100.9")
	enginetest.WaitFor(t, "a local user's login to reach the server with every slot taken", func() bool { return h.Conns() == total+2 })
	if n := refusedOf("192.0.2.66"); n != 120-perClient {
		t.Errorf("the storming client: %d refused, want %d", n, 120-perClient)
	}
}

// forwardedTacacs is a fixture whose only server is tacquito, reached
// through a forwarder that counts its sessions, with accounting off until
// the test turns it on. before, if set, is told of the service before the
// configuration is made.
func forwardedTacacs(t *testing.T, before func(*aaa.Service)) (*aaatest.Tacacs, *aaatest.Forwarding, *fixture, model.Object) {
	tac := aaatest.StartTacacs(t, tacSecret, users)
	fwd := aaatest.StartForwarding(t, "127.0.0.1", tac.Addr)
	fx := newFixture(t)
	if before != nil {
		before(fx.svc)
	}
	fx.apply(t, backend.Update, "AAAGlobal", model.Object{"Accounting": false})
	fx.apply(t, backend.Update, "TacacsGlobal", model.Object{"Enable": "true", "Timeout": int64(5)})
	server := model.Object{"ServerIp": fwd.Host, "Port": int64(fwd.Port), "Secret": tac.Secret}
	fx.apply(t, backend.Create, "Tacacs", server)
	return tac, fwd, fx, server
}

// TestRefusedRecordsHoldUpNoOther: records tacquito refuses (those of a
// user it has no accounter for: the local root's commits) are each sent
// once, not again, and dropped and counted at once; so a central user's
// record queued behind a dozen of them reaches the server after exactly
// one session each, the refusals are counted per server and the drops
// globally. Counted on the wire: every TACACS+ session is a connection
// through a forwarder in front of tacquito.
func TestRefusedRecordsHoldUpNoOther(t *testing.T) {
	tac, fwd, fx, server := forwardedTacacs(t, nil)
	central := engine.Meta{Source: "rest", User: "tadmin"}
	fx.applyAs(t, central, backend.Update, "AAAGlobal", model.Object{"Accounting": true}) // accounted: one session
	counter := func(kind string, o model.Object, field string) int64 {
		n, _ := fx.svc.State(kind, o)[field].(int64)
		return n
	}
	enginetest.WaitFor(t, "the first record to be sent", func() bool { return counter("AAAGlobal", nil, "AccountingSent") == 1 })
	before := fwd.Conns()

	const refused = 12
	for i := range refused {
		if _, err := fx.f.E.Apply(context.Background(), []engine.Edit{fx.f.Edit(backend.Create, "NtpServer", model.Object{"IpAddr": fmt.Sprintf("192.0.2.%d", i+1)})},
			engine.Meta{Source: "cli", User: "root"}, nil); err != nil {
			t.Fatal(err)
		}
	}
	out, err := fx.f.E.Apply(context.Background(), []engine.Edit{fx.f.Edit(backend.Create, "NtpServer", model.Object{"IpAddr": "192.0.2.99"})}, central, nil)
	if err != nil {
		t.Fatal(err)
	}
	want := fmt.Sprintf("commit revision %d (rest): create NtpServer IpAddr=192.0.2.99", out.Revision)
	// However long the refused records take (three attempts a second apart
	// each, before the change), the central record arrives: then count.
	for deadline := time.Now().Add(2 * time.Minute); !strings.Contains(tac.Accounting(), want); time.Sleep(10 * time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatalf("the central user's record did not arrive: %v; the log: %s", fx.svc.State("AAAGlobal", nil), tail(fx.log.String()))
		}
	}
	if got := fwd.Conns() - before; got != refused+1 {
		t.Errorf("%d TACACS+ sessions until the central user's record arrived behind %d refused ones; want %d (each refused record sent once)", got, refused, refused+1)
	}
	enginetest.WaitFor(t, "the central record to be counted", func() bool { return counter("AAAGlobal", nil, "AccountingSent") == 2 })
	if got := counter("Tacacs", server, "AccountingRefused"); got != refused {
		t.Errorf("the server's AccountingRefused %d, want %d", got, refused)
	}
	if got := counter("Tacacs", server, "AccountingSent"); got != 2 {
		t.Errorf("the server's AccountingSent %d, want 2", got)
	}
	if got := counter("AAAGlobal", nil, "AccountingDropped"); got != refused {
		t.Errorf("AccountingDropped %d, want %d", got, refused)
	}
	if strings.Contains(tac.Accounting(), "192.0.2.1 ") || strings.Count(tac.Accounting(), "create NtpServer") != 1 {
		t.Errorf("tacquito logged a refused record:\n%s", tail(tac.Accounting()))
	}
}

// TestUnansweredRecordsHoldUpNoOther: records the only server did not
// answer (it was down) wait for their next attempt aside, however long
// that is (here an hour): a central user's record made once the server is
// back reaches it at once, and the others still wait, counted in
// AccountingRetrying and the server's AccountingUnanswered.
func TestUnansweredRecordsHoldUpNoOther(t *testing.T) {
	tac, fwd, fx, server := forwardedTacacs(t, func(s *aaa.Service) { aaa.SetAccountingRetryWait(s, time.Hour) })
	fwd.SetDown(true)
	central := engine.Meta{Source: "rest", User: "tadmin"}
	fx.applyAs(t, central, backend.Update, "AAAGlobal", model.Object{"Accounting": true})
	const waiting = 5 // with the record of the commit above
	for i := range waiting - 1 {
		if _, err := fx.f.E.Apply(context.Background(), []engine.Edit{fx.f.Edit(backend.Create, "NtpServer", model.Object{"IpAddr": fmt.Sprintf("192.0.2.%d", i+1)})}, central, nil); err != nil {
			t.Fatal(err)
		}
	}
	enginetest.WaitFor(t, "every record's first attempt to find the server down", func() bool { return fwd.Conns() == waiting })
	fwd.SetDown(false)
	out, err := fx.f.E.Apply(context.Background(), []engine.Edit{fx.f.Edit(backend.Create, "NtpServer", model.Object{"IpAddr": "192.0.2.99"})}, central, nil)
	if err != nil {
		t.Fatal(err)
	}
	want := fmt.Sprintf("commit revision %d (rest): create NtpServer IpAddr=192.0.2.99", out.Revision)
	enginetest.WaitFor(t, "the record made once the server is back", func() bool { return strings.Contains(tac.Accounting(), want) })
	if strings.Count(tac.Accounting(), "commit revision") != 1 {
		t.Errorf("records still waiting for their next attempt reached the server:\n%s", tail(tac.Accounting()))
	}
	// The server logs the record before swmgr has read its answer.
	enginetest.WaitFor(t, "the record counted sent", func() bool { return fx.svc.State("AAAGlobal", nil)["AccountingSent"] == int64(1) })
	st := fx.svc.State("AAAGlobal", nil)
	if st["AccountingRetrying"] != int64(waiting) || st["AccountingSent"] != int64(1) || st["AccountingDropped"] != int64(0) {
		t.Errorf("AAAGlobal state %v; want %d retrying, 1 sent, none dropped", st, waiting)
	}
	if got := fx.svc.State("Tacacs", server)["AccountingUnanswered"]; got != int64(waiting) {
		t.Errorf("the server's AccountingUnanswered %v, want %d", got, waiting)
	}
}

// TestUnansweredRecordSentAgain: a record the server did not answer (it
// was down) is sent again once it is back, counted sent, not dropped.
func TestUnansweredRecordSentAgain(t *testing.T) {
	tac, fwd, fx, server := forwardedTacacs(t, nil)
	fwd.SetDown(true)
	fx.applyAs(t, engine.Meta{Source: "rest", User: "tadmin"}, backend.Update, "AAAGlobal", model.Object{"Accounting": true})
	enginetest.WaitFor(t, "the first attempt to find the server down", func() bool { return fwd.Conns() == 1 })
	fwd.SetDown(false)
	enginetest.WaitFor(t, "the record to be sent again", func() bool { return fx.svc.State("AAAGlobal", nil)["AccountingSent"] == int64(1) })
	if !strings.Contains(tac.Accounting(), "update AAAGlobal") {
		t.Errorf("the record is not at the server:\n%s", tail(tac.Accounting()))
	}
	if st := fx.svc.State("Tacacs", server); st["AccountingUnanswered"] != int64(1) || st["AccountingSent"] != int64(1) {
		t.Errorf("the server's state %v; want 1 unanswered, 1 sent", st)
	}
}
