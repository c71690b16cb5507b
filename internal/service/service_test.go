package service

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"log/slog"
	"math/rand/v2"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/swmgr/swmgr/internal/backend"
	"github.com/swmgr/swmgr/internal/bind"
	"github.com/swmgr/swmgr/internal/engine"
	"github.com/swmgr/swmgr/internal/engine/enginetest"
	"github.com/swmgr/swmgr/internal/lifecycle"
	"github.com/swmgr/swmgr/internal/model"
	"github.com/swmgr/swmgr/internal/openapi"
	"github.com/swmgr/swmgr/internal/syncbuf"
	"github.com/swmgr/swmgr/internal/testport"
)

// openTest opens the service on a fresh data directory with the
// dataplane and o's Kinds, Drivers and Linux options; it is closed when
// the test ends.
func openTest(t *testing.T, dataplane string, tune func(*Options)) (*Service, error) {
	t.Helper()
	dir := t.TempDir()
	d := enginetest.OpenDataDir(t, dir)
	o := Options{Store: d.St, Box: d.Box, DataDir: dir, Version: "test", Dataplane: dataplane, Ports: 4,
		Accounts: d.Acc, OwnAccounts: true, CLIShell: "/bin/false", Lifecycle: lifecycle.Options{NoScheduler: true}}
	if tune != nil {
		tune(&o)
	}
	svc, err := Open(context.Background(), o)
	if err != nil {
		if tune == nil {
			t.Fatal(err)
		}
		return nil, err
	}
	t.Cleanup(func() { svc.Close() })
	return svc, nil
}

// TestEveryKindIsBound: on each dataplane (the Linux one as root, in a
// network namespace) every declared kind has the bindings its declaration
// asks for, and the accounts provider holds User and UserPassword.
func TestEveryKindIsBound(t *testing.T) {
	dataplanes := []string{Sim}
	if os.Geteuid() == 0 {
		dataplanes = append(dataplanes, Linux)
	}
	for _, dp := range dataplanes {
		t.Run(dp, func(t *testing.T) {
			var tune func(*Options)
			if dp == Linux {
				tune = linuxLab(t)
			}
			svc, err := openTest(t, dp, tune)
			if err != nil {
				t.Fatal(err)
			}
			if err := svc.Table.Check(svc.Engine.Registry()); err != nil {
				t.Fatal(err)
			}
			p := svc.Table.Providers()
			if got := strings.Join(p["accounts"], " "); got != "User UserPassword" {
				t.Errorf("the accounts provider's kinds: %q", got)
			}
			for _, b := range svc.Table.Rows() {
				t.Logf("%-22s %-8s %s", b.Kind, b.Role, b.Provider)
			}
		})
	}
}

// TestTableCheckNamesTheKind: a kind bound twice, or not at all, stops the
// start naming it.
func TestTableCheckNamesTheKind(t *testing.T) {
	reg := model.Builtin()
	svc := openSim(t)
	twice := append(svc.Table.Rows(), bind.Row{Kind: "Vlan", Provider: "elsewhere", Role: bind.RoleConfig})
	if err := bind.CheckRows(reg, twice); err == nil || !strings.Contains(err.Error(), "kind Vlan: 2 providers take the role config") {
		t.Errorf("a kind bound twice: %v", err)
	}
	var rows []bind.Row
	for _, b := range svc.Table.Rows() {
		if b.Kind != "UserPassword" {
			rows = append(rows, b)
		}
	}
	if err := bind.CheckRows(reg, rows); err == nil || !strings.Contains(err.Error(), "kind UserPassword: 0 providers take the role action") {
		t.Errorf("an action without a handler: %v", err)
	}
}

// widget is a new config kind's declaration, as package model would hold it.
func widget() *model.Kind {
	return &model.Kind{
		Name: "WidgetTest", Class: model.Config,
		Doc: "A widget of the switch.",
		Fields: []*model.Field{
			{Name: "Name", Type: model.String, Key: true, Format: model.FormatObjName},
			{Name: "Speed", Type: model.Int, Default: int64(1), Range: &model.Range{Min: 1, Max: 9}},
		},
		StateOnly: []*model.Field{{Name: "Spinning", Type: model.Bool}},
	}
}

// widgetDriver is the new kind's driver on one dataplane, as that
// dataplane's package would hold it: it keeps what it applied.
type widgetDriver struct{ applied map[string]int64 }

func (w *widgetDriver) driver() *backend.Driver {
	w.applied = map[string]int64{}
	return &backend.Driver{
		Apply: func(_ context.Context, c backend.Change) (model.Object, error) {
			if c.Op == backend.Delete {
				delete(w.applied, c.Key)
			} else {
				w.applied[c.Key] = c.After.Int("Speed")
			}
			return nil, nil
		},
		State: func(_ context.Context, o model.Object) (model.Object, error) {
			return model.Object{"Spinning": o.Int("Speed") > 1}, nil
		},
		Replay: true,
	}
}

// TestNewKindIsDeclarationPlusOneDriverPerDataplane adds a config kind as
// a new one is added: its declaration and one driver per dataplane,
// nothing else. Without a driver the start names it; with one, REST
// creates, reads (config and state), updates and deletes it, the OpenAPI
// document describes it, and the driver sees every change; on the Linux
// dataplane too (as root, in a network namespace).
func TestNewKindIsDeclarationPlusOneDriverPerDataplane(t *testing.T) {
	dataplanes := []string{Sim}
	if os.Geteuid() == 0 {
		dataplanes = append(dataplanes, Linux)
	} else {
		t.Log("the Linux dataplane needs root for a network namespace: only the simulated switch is tried")
	}
	for _, dp := range dataplanes {
		t.Run(dp, func(t *testing.T) {
			var lo func(*Options)
			if dp == Linux {
				lo = linuxLab(t)
			}
			_, err := openTest(t, dp, func(o *Options) {
				o.Kinds = []*model.Kind{widget()}
				if lo != nil {
					lo(o)
				}
			})
			if err == nil || !strings.Contains(err.Error(), "kind WidgetTest: 0 providers take the role config") {
				t.Fatalf("a declared kind without a driver: %v", err)
			}
			w := &widgetDriver{}
			svc, err := openTest(t, dp, func(o *Options) {
				o.Kinds = []*model.Kind{widget()}
				o.Drivers = map[string]map[string]*backend.Driver{dp: {"WidgetTest": w.driver()}}
				if lo != nil {
					lo(o)
				}
			})
			if err != nil {
				t.Fatal(err)
			}
			srv := httptest.NewServer(svc.Handler)
			defer srv.Close()
			do := func(method, path, body string, want int) string {
				t.Helper()
				req, _ := http.NewRequest(method, srv.URL+"/public/v1/"+path, strings.NewReader(body))
				req.Header.Set("Content-Type", "application/json")
				resp, err := srv.Client().Do(req)
				if err != nil {
					t.Fatal(err)
				}
				defer resp.Body.Close()
				b, _ := io.ReadAll(resp.Body)
				if resp.StatusCode != want {
					t.Errorf("%s %s: %d %s; want %d", method, path, resp.StatusCode, b, want)
				}
				return string(b)
			}
			do("POST", "config/WidgetTest", `{"Name":"w1","Speed":3}`, 201)
			if got := do("GET", "config/WidgetTest?Name=w1", "", 200); !strings.Contains(got, `"Speed":3`) {
				t.Errorf("config: %s", got)
			}
			if got := do("GET", "state/WidgetTest?Name=w1", "", 200); !strings.Contains(got, `"Spinning":true`) {
				t.Errorf("state: %s", got)
			}
			do("PATCH", "config/WidgetTest", `{"Name":"w1","Speed":1}`, 200)
			do("POST", "config/WidgetTest", `{"Name":"w2","Speed":10}`, 400)
			if w.applied["w1"] != 1 || len(w.applied) != 1 {
				t.Errorf("the driver has %v", w.applied)
			}
			// The lifecycle saves it and a reset removes it, as any kind.
			do("POST", "action/SaveConfig", `{}`, 200)
			if saved, err := os.ReadFile(filepath.Join(svc.dataDir, lifecycle.StartupConfig)); err != nil || !strings.Contains(string(saved), `"WidgetTest"`) {
				t.Errorf("the saved configuration: %v\n%s", err, saved)
			}
			do("DELETE", "config/WidgetTest", `{"Name":"w1"}`, 200)
			if len(w.applied) != 0 {
				t.Errorf("after the delete the driver has %v", w.applied)
			}
			if doc := string(openapi.JSON(svc.Engine.Registry())); !strings.Contains(doc, "WidgetTest") {
				t.Error("the OpenAPI document does not describe the new kind")
			}
		})
	}
}

// linuxLab makes a network namespace with two veth ports, removed when the
// test ends, and returns the options of a Linux dataplane on it.
func linuxLab(t *testing.T) func(*Options) {
	t.Helper()
	ns := fmt.Sprintf("swsvc%05d", rand.IntN(100000))
	for _, args := range [][]string{{"netns", "add", ns}, {"-n", ns, "link", "add", "swp1", "type", "veth", "peer", "name", "swp2"}} {
		if out, err := exec.Command("ip", args...).CombinedOutput(); err != nil {
			t.Fatalf("ip %s: %v\n%s", strings.Join(args, " "), err, out)
		}
		if args[0] == "netns" {
			t.Cleanup(func() { exec.Command("ip", "netns", "del", ns).Run() })
		}
	}
	return func(o *Options) { o.Linux.Netns = ns }
}

// TestTacacsSourceIsTheDataplanes: the central AAA the service builds
// reads a Tacacs server's SourceIntf address from the dataplane: the
// simulated switch's IPv4Intf, the Linux switch's kernel (its namespace,
// here not swmgr's, so the address cannot be sent from, which the log
// names).
func TestTacacsSourceIsTheDataplanes(t *testing.T) {
	for _, dp := range []string{Sim, Linux} {
		t.Run(dp, func(t *testing.T) {
			log := &syncbuf.Buffer{}
			tune := func(o *Options) { o.Log = slog.New(slog.NewTextHandler(log, nil)) }
			if dp == Linux {
				if os.Geteuid() != 0 {
					t.Skip("needs root to make a network namespace")
				}
				lab := linuxLab(t)
				tune = func(o *Options) {
					lab(o)
					o.Log = slog.New(slog.NewTextHandler(log, nil))
					for _, args := range [][]string{{"-n", o.Linux.Netns, "addr", "add", "192.0.2.50/24", "dev", "swp1"}, {"-n", o.Linux.Netns, "link", "set", "swp1", "up"}, {"-n", o.Linux.Netns, "link", "set", "swp2", "up"}} {
						if out, err := exec.Command("ip", args...).CombinedOutput(); err != nil {
							t.Fatalf("ip %s: %v\n%s", strings.Join(args, " "), err, out)
						}
					}
				}
			}
			svc, err := openTest(t, dp, tune)
			if err != nil {
				t.Fatal(err)
			}
			reg := svc.Engine.Registry()
			edit := func(op backend.Op, kind string, key, fields model.Object) engine.Edit {
				return engine.Edit{Kind: reg.Lookup(model.Config, kind), Op: op, Target: engine.Target{Key: key}, Fields: fields}
			}
			edits := []engine.Edit{
				edit(backend.Update, "AAAGlobal", model.Object{"ProfileName": "default"}, model.Object{"Accounting": false}),
				edit(backend.Update, "TacacsGlobal", model.Object{"ProfileName": "default"}, model.Object{"Enable": "true", "Timeout": int64(1)}),
			}
			intf := "swp1"
			if dp == Sim {
				intf = "fpPort1"
				edits = append(edits, edit(backend.Create, "IPv4Intf", nil, model.Object{"IntfRef": "fpPort1", "IpAddr": "192.0.2.50/24"}))
			}
			// A port nothing listens on: the login is refused, after the
			// source address is tried.
			port := testport.TCP(t)
			edits = append(edits, edit(backend.Create, "Tacacs", nil, model.Object{"ServerIp": "127.0.0.1", "Port": int64(port), "Secret": "k", "SourceIntf": intf}))
			if _, err := svc.Engine.Apply(context.Background(), edits, engine.Meta{Source: "test"}, nil); err != nil {
				t.Fatal(err)
			}
			for i := 0; !svc.AAA.Configured(); i++ {
				if i == 500 {
					t.Fatal("the AAA service did not read the Tacacs server")
				}
				time.Sleep(10 * time.Millisecond)
			}
			svc.AAA.Login(context.Background(), "someone", "password-1", "")
			if want := "the address 192.0.2.50 of SourceIntf " + intf + " cannot be sent from here"; !strings.Contains(log.String(), want) {
				t.Errorf("the log does not say %q:\n%s", want, log)
			}
		})
	}
}

// TestSystemParamStateOnLinux: on the Linux dataplane SystemParam's state
// is the shares of its providers merged in the order they are bound: the
// simulated host settings' (the distribution), the Linux dataplane's over
// them (the kernel with the features it found, the service's up time),
// and the lifecycle's revisions.
func TestSystemParamStateOnLinux(t *testing.T) {
	if os.Geteuid() != 0 {
		t.Skip("needs root to make a network namespace")
	}
	svc, err := openTest(t, Linux, linuxLab(t))
	if err != nil {
		t.Fatal(err)
	}
	b, _, err := svc.Engine.GetByKey(context.Background(), svc.Engine.Registry().Lookup(model.Config, "SystemParam"), model.Object{"Vrf": "default"}, true, nil)
	if err != nil {
		t.Fatal(err)
	}
	var got struct{ Object map[string]any }
	if err := json.Unmarshal(b, &got); err != nil {
		t.Fatal(err)
	}
	st := got.Object
	if kernel := fmt.Sprint(st["Kernel"]); !strings.HasPrefix(kernel, "Linux ") || !strings.Contains(kernel, " (") {
		t.Errorf("Kernel %q: want the Linux dataplane's, with the kernel's features", kernel)
	}
	if st["Distro"] == "" || st["Distro"] == nil || st["UpTime"] == "" || st["UpTime"] == nil {
		t.Errorf("SystemParam state %v: want the simulated host settings' Distro and an UpTime", st)
	}
	if _, ok := st["RunningRevision"]; !ok {
		t.Errorf("SystemParam state %v: no lifecycle share (RunningRevision)", st)
	}
}
