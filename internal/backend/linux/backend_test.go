package linux

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/swmgr/swmgr/internal/apierr"
	"github.com/swmgr/swmgr/internal/backend"
	"github.com/swmgr/swmgr/internal/backend/sim"
	"github.com/swmgr/swmgr/internal/bind"
	"github.com/swmgr/swmgr/internal/engine"
	"github.com/swmgr/swmgr/internal/engine/history"
	"github.com/swmgr/swmgr/internal/model"
	"github.com/swmgr/swmgr/internal/secrets"
	"github.com/swmgr/swmgr/internal/store"
)

func TestParsePortMap(t *testing.T) {
	for _, tc := range []struct {
		name, in, want string // want: "" ok, else part of the error
		ports          int
	}{
		{"ok", "# front panel\nfpPort1 swp1\nfpPort2   swp2 # uplink\n\nfpPort2s1 swp2s1\n", "", 3},
		{"duplicate port", "fpPort1 swp1\nfpPort1 swp9\n", "line 2: fpPort1 is mapped twice (to swp1 on line 1 and to swp9)", 0},
		{"duplicate netdev", "fpPort1 swp1\nfpPort2 swp1\n", "line 2: netdev swp1 is mapped twice", 0},
		{"bad port", "port1 swp1\n", "line 1: \"port1\" is not a port name", 0},
		{"bad netdev", "fpPort1 a/b\n", "line 1: \"a/b\" is not a netdev name", 0},
		{"long netdev", "fpPort1 abcdefghijklmnop\n", "is not a netdev name", 0},
		{"three fields", "fpPort1 swp1 x\n", "line 1: want", 0},
		{"empty", "# nothing\n", "no ports", 0},
	} {
		t.Run(tc.name, func(t *testing.T) {
			m, err := ParsePortMap([]byte(tc.in))
			if tc.want == "" {
				if err != nil {
					t.Fatal(err)
				}
				if len(m.Ports()) != tc.ports || m.Netdev("fpPort2") != "swp2" || m.Port("swp2s1") != "fpPort2s1" {
					t.Errorf("map %v", m.byPort)
				}
				return
			}
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Fatalf("got %v, want an error with %q", err, tc.want)
			}
		})
	}
	m, err := DefaultPortMap([]string{"lo", "eth0", "swp10", "swp2", "swp1s2", "fpPort3", "vlan10"})
	if err != nil {
		t.Fatal(err)
	}
	if got := strings.Join(m.Ports(), ","); got != "fpPort1s2,fpPort2,fpPort3,fpPort10" {
		t.Errorf("default map ports %s", got)
	}
	if _, err := DefaultPortMap([]string{"swp1", "fpPort1"}); err == nil || !strings.Contains(err.Error(), "both fpPort1 and swp1 would be fpPort1") {
		t.Errorf("clash: %v", err)
	}
}

func FuzzParsePortMap(f *testing.F) {
	f.Add([]byte("fpPort1 swp1\nfpPort2s1 swp2s1 # x\n"))
	f.Add([]byte("fpPort1 swp1\nfpPort1 swp1\n"))
	f.Fuzz(func(t *testing.T, b []byte) {
		m, err := ParsePortMap(b)
		if err != nil {
			return
		}
		for _, p := range m.Ports() {
			if m.Port(m.Netdev(p)) != p {
				t.Fatalf("map is not one to one: %s", p)
			}
		}
	})
}

// TestBadPortMapRefusedAtStart: a map naming a netdev the namespace does
// not have, or a port twice, stops the backend with a clear message.
func TestBadPortMapRefusedAtStart(t *testing.T) {
	l := newLab(t, 2, KernelOptions{})
	for _, tc := range []struct{ pm, want string }{
		{"fpPort1 fpPort1\nfpPort2 swp7\n", "port map ports.conf: the port map names netdevs that do not exist: swp7 (for fpPort2)"},
		{"fpPort1 fpPort1\nfpPort2 fpPort1\n", "port map ports.conf: line 2: netdev fpPort1 is mapped twice (to fpPort1 on line 1 and to fpPort2)"},
	} {
		_, err := New(Options{Kernel: KernelOptions{Netns: l.sw}, PortMap: []byte(tc.pm), PortMapName: "ports.conf", Log: quiet()})
		if err == nil || err.Error() != tc.want {
			t.Errorf("got %v\nwant %s", err, tc.want)
		}
	}
	b, err := New(Options{Kernel: KernelOptions{Netns: l.sw}, PortMap: []byte("fpPort7 fpPort2\n"), Log: quiet()})
	if err != nil {
		t.Fatal(err)
	}
	defer b.Close()
	if b.Ports().Netdev("fpPort7") != "fpPort2" {
		t.Error("map not used")
	}
}

func quiet() *slog.Logger { return slog.New(slog.NewTextHandler(io.Discard, nil)) }

// sw is swmgr's engine on the Linux backend of a lab, with its store.
type sw struct {
	t   testing.TB
	l   *lab
	dir string
	st  *store.Store
	be  *Backend
	e   *engine.Engine
	reg *model.Registry
	rec chan []string

	hist *history.History // the engine's revisions and rollback
}

// switchOptions are a test switch's: the backend's options, and the
// simulated switch's, which keeps the kinds the backend leaves to others.
type switchOptions struct {
	Options
	Simulated sim.Options
}

func startSwitch(t testing.TB, l *lab, dir string, tweaks ...func(*switchOptions)) *sw {
	t.Helper()
	s := &sw{t: t, l: l, dir: dir, reg: model.Builtin(), rec: make(chan []string, 100)}
	opts := switchOptions{Options: Options{Kernel: KernelOptions{Netns: l.sw, VRFNetnsPrefix: l.prefix + "vrf-"}, Version: "test", Log: quiet(),
		Journal:     filepath.Join(dir, "linux-apply.journal"),
		OnReconcile: func(c []string) { s.rec <- c }},
		Simulated: sim.Options{Ports: 4}}
	for _, tweak := range tweaks {
		tweak(&opts)
	}
	be, err := New(opts.Options)
	if err != nil {
		t.Fatal(err)
	}
	s.be = be
	if s.st, err = store.Open(dir); err != nil {
		t.Fatal(err)
	}
	box, err := secrets.Open(dir)
	if err != nil {
		t.Fatal(err)
	}
	s.e = engine.New(s.reg, s.st, routed(be, sim.New(opts.Simulated)), box, quiet())
	s.hist = history.New(s.e)
	if err := s.e.Start(context.Background()); err != nil {
		t.Fatal(err)
	}
	if err := s.hist.Start(context.Background()); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(s.stop)
	return s
}

// routed is be as the service composes it (service.Open): a router over
// the composed drivers of be's parts and of the simulated switch sim for
// the kinds be leaves to others, with be the transactional provider (its
// kernel Tx first, the others' changes before it commits).
func routed(be *Backend, simulated *sim.Sim) *backend.Router {
	dataplane, daemons := be.Dataplane(), be.DaemonDrivers()
	simDataplane, simDaemons := simulated.Dataplane(), simulated.DaemonDrivers()
	ds := bind.Compose(sim.Part{Of: sim.DataplaneProvider, Drivers: backend.Without(simDataplane, dataplane)},
		sim.Part{Of: sim.DaemonsProvider, Drivers: backend.Without(simDaemons, daemons)},
		Part{Of: DataplaneProvider, Drivers: dataplane}, Part{Of: DaemonsProvider, Drivers: daemons},
		// The accounts, the archive servers, central AAA: kept by the
		// simulated switch.
		sim.Part{Of: "simulated providers", Drivers: backend.Without(backend.Without(simulated.Drivers(), simDataplane), simDaemons)})
	return backend.NewRouter("linux", ds, be, nil)
}

func (s *sw) stop() {
	if s.be != nil {
		s.be.Close()
		s.st.Close()
		s.be = nil
	}
}

func (s *sw) edit(op backend.Op, kind string, fields model.Object) engine.Edit {
	k := s.reg.Lookup(model.Config, kind)
	ed := engine.Edit{Kind: k, Op: op, Fields: fields}
	if op != backend.Create {
		ed.Target.Key = model.Object{}
		for _, f := range k.Keys() {
			if v, ok := fields[f.Name]; ok { // a key left out takes its default
				ed.Target.Key[f.Name] = v
			}
			if op == backend.Update {
				delete(ed.Fields, f.Name)
			}
		}
		if op == backend.Delete {
			ed.Fields = nil
		}
	}
	return ed
}

func (s *sw) commit(edits ...engine.Edit) error {
	_, err := s.e.Apply(context.Background(), edits, engine.Meta{Source: "test"}, nil)
	return err
}

func (s *sw) mustCommit(edits ...engine.Edit) {
	s.t.Helper()
	if err := s.commit(edits...); err != nil {
		s.t.Fatal(err)
	}
}

func (s *sw) state(kind string, key model.Object) string {
	s.t.Helper()
	b, _, err := s.e.GetByKey(context.Background(), s.reg.Lookup(model.Config, kind), key, true, nil)
	if err != nil {
		s.t.Fatal(err)
	}
	return string(b)
}

// TestEngineOnLinux drives the Linux backend through the engine and its
// store: discovery, commits of every kind of today's model, a refusal, a
// failure midway, drift repaired, and a restart that converges.
func TestEngineOnLinux(t *testing.T) {
	l := newLab(t, 4, KernelOptions{})
	l.k.Close()
	l.k = nil
	dir := t.TempDir()
	s := startSwitch(t, l, dir)
	k := s.be.Kernel()
	st := s.state("Port", model.Object{"IntfRef": "fpPort1"})
	if !strings.Contains(st, `"OperState":"DOWN"`) || !strings.Contains(st, `"PresentInHW":"YES"`) {
		t.Fatalf("port state %s", st)
	}
	up := func(p string) engine.Edit {
		return s.edit(backend.Update, "Port", model.Object{"IntfRef": p, "AdminState": "UP", "Mtu": int64(9000), "Description": "to host"})
	}
	s.mustCommit(up("fpPort1"), up("fpPort2"), up("fpPort3"), up("fpPort4"),
		s.edit(backend.Create, "Vrf", model.Object{"Vrf": "red"}),
		s.edit(backend.Create, "IPv4Intf", model.Object{"IntfRef": "fpPort1", "IpAddr": "10.0.1.1/24"}),
		s.edit(backend.Create, "IPv4Intf", model.Object{"IntfRef": "fpPort2", "IpAddr": "10.0.1.1/24", "Vrf": "red"}),
		s.edit(backend.Create, "Span", model.Object{"SpanSessionName": "mon", "DstIntfRef": "fpPort4", "SrcIntfRefList": []string{"fpPort3"}, "MirrorDir": "RX"}))
	l.host(1, "ip", "addr", "add", "10.0.1.2/24", "dev", "eth0")
	l.host(2, "ip", "addr", "add", "10.0.1.2/24", "dev", "eth0")
	for i := 1; i <= 2; i++ {
		if !eventually(5*time.Second, func() bool { return l.ping(i, "10.0.1.1") }) {
			t.Fatalf("host %d cannot reach 10.0.1.1 in its VRF", i)
		}
	}
	var pst string
	if !eventually(5*time.Second, func() bool {
		pst = s.state("Port", model.Object{"IntfRef": "fpPort1"})
		return strings.Contains(pst, `"OperState":"UP"`) && !strings.Contains(pst, `"NumUpEvents":0`) && strings.Contains(pst, `"Mtu":9000`)
	}) {
		t.Errorf("port state after up: %s", pst)
	}
	if st := s.state("IPv4Intf", model.Object{"IntfRef": "fpPort2"}); !strings.Contains(st, `"OperState":"UP"`) {
		t.Errorf("IPv4Intf state: %s", st)
	}

	// A capability refusal: 400 naming device and capability, nothing changed.
	before := l.dump()
	err := s.commit(s.edit(backend.Update, "Port", model.Object{"IntfRef": "fpPort3", "Speed": int64(25000)}))
	var ae *apierr.Error
	if !errors.As(err, &ae) || ae.Status != http.StatusBadRequest || !strings.Contains(ae.Message, "fpPort3 (netdev fpPort3) cannot change Speed 25000") {
		t.Errorf("speed change on a veth: %v", err)
	}
	// A commit failing at its third kernel change changes nothing.
	k.FailAt = func(n int, what string) error {
		if n == 3 {
			return errors.New("injected")
		}
		return nil
	}
	err = s.commit(
		s.edit(backend.Update, "Port", model.Object{"IntfRef": "fpPort3", "Mtu": int64(1400), "Description": "x"}),
		s.edit(backend.Update, "IPv4Intf", model.Object{"IntfRef": "fpPort1", "IpAddr": "10.0.7.1/24"}),
		s.edit(backend.Create, "IPv4Intf", model.Object{"IntfRef": "fpPort3", "IpAddr": "10.0.3.1/24", "Vrf": "red"}))
	k.FailAt = nil
	if err == nil || !strings.Contains(err.Error(), "injected") {
		t.Fatalf("injected failure: %v", err)
	}
	if d := diffLines(before, l.dump()); d != "" {
		t.Fatalf("a failed commit changed the kernel:\n%s", d)
	}
	drain(s.rec)

	// Drift: someone deletes the address and downs a port by hand; an
	// address swmgr does not manage stays.
	run(t, "ip", "-n", l.sw, "addr", "add", "10.99.0.1/24", "dev", "fpPort3")
	run(t, "ip", "-n", l.sw, "addr", "del", "10.0.1.1/24", "dev", "fpPort1")
	run(t, "ip", "-n", l.sw, "link", "set", "fpPort4", "down")
	if !eventually(5*time.Second, func() bool {
		out := run(t, "ip", "-n", l.sw, "-o", "addr", "show", "dev", "fpPort1")
		link := run(t, "ip", "-n", l.sw, "-o", "link", "show", "dev", "fpPort4")
		return strings.Contains(out, "10.0.1.1/24") && strings.Contains(link, ",UP")
	}) {
		t.Fatal("drift was not repaired")
	}
	select {
	case c := <-s.rec:
		t.Logf("reconcile: %v", c)
	case <-time.After(2 * time.Second):
		t.Error("no reconciliation was reported")
	}
	if out := run(t, "ip", "-n", l.sw, "-o", "addr", "show", "dev", "fpPort3"); !strings.Contains(out, "10.99.0.1/24") {
		t.Error("reconciliation removed an address swmgr does not manage")
	}

	// Restart: while swmgr is down the address goes; the next start puts
	// it back, and a restart with the kernel in order changes nothing.
	s.stop()
	run(t, "ip", "-n", l.sw, "addr", "del", "10.0.1.1/24", "dev", "fpPort1")
	s = startSwitch(t, l, dir)
	if out := run(t, "ip", "-n", l.sw, "-o", "addr", "show", "dev", "fpPort1"); !strings.Contains(out, "10.0.1.1/24") {
		t.Fatal("start did not put the address back")
	}
	if c := s.be.Reconcile(); len(c) != 0 {
		t.Errorf("reconcile after start still changed %v", c)
	}

	// Delete everything: the kernel is back to the lab's ports, up.
	s.mustCommit(
		s.edit(backend.Delete, "Span", model.Object{"SpanSessionName": "mon"}),
		s.edit(backend.Delete, "IPv4Intf", model.Object{"IntfRef": "fpPort2"}),
		s.edit(backend.Delete, "IPv4Intf", model.Object{"IntfRef": "fpPort1"}),
		s.edit(backend.Delete, "Vrf", model.Object{"Vrf": "red"}))
	if out := run(t, "ip", "-n", l.sw, "-o", "addr", "show"); strings.Contains(out, "10.0.1.1") {
		t.Errorf("addresses left: %s", out)
	}
	if _, err := s.be.Kernel().Handle().LinkByName("fpPort2"); err != nil {
		t.Errorf("fpPort2 did not come back from VRF red: %v", err)
	}
}

func drain(c chan []string) {
	for {
		select {
		case <-c:
		default:
			return
		}
	}
}

// TestCrashMidApplyConvergesAtStart stops an apply after its kernel
// changes and before the store records them, as a kill -9 would: the next
// start undoes them, keeps what the store did record, and does not touch
// it again.
func TestCrashMidApplyConvergesAtStart(t *testing.T) {
	l := newLab(t, 3, KernelOptions{})
	l.k.Close()
	l.k = nil
	dir := t.TempDir()
	s := startSwitch(t, l, dir)
	s.mustCommit(
		s.edit(backend.Update, "Port", model.Object{"IntfRef": "fpPort1", "AdminState": "UP"}),
		s.edit(backend.Create, "IPv4Intf", model.Object{"IntfRef": "fpPort1", "IpAddr": "10.0.1.1/24"}))
	recorded := l.dump()
	s.be.crashAfterKernel = true
	err := s.commit(
		s.edit(backend.Update, "Port", model.Object{"IntfRef": "fpPort2", "Mtu": int64(9000), "AdminState": "UP"}),
		s.edit(backend.Update, "IPv4Intf", model.Object{"IntfRef": "fpPort1", "IpAddr": "10.0.7.1/24"}),
		s.edit(backend.Create, "Vrf", model.Object{"Vrf": "blue"}),
		s.edit(backend.Create, "IPv4Intf", model.Object{"IntfRef": "fpPort3", "IpAddr": "10.0.3.1/24", "Vrf": "blue"}))
	if err == nil {
		t.Fatal("the simulated crash did not fail the commit")
	}
	if d := diffLines(recorded, l.dump()); d == "" {
		t.Fatal("the crashed apply changed nothing in the kernel; the test proves nothing")
	}
	s.stop()
	s = startSwitch(t, l, dir)
	if d := diffLines(recorded, l.dump()); d != "" {
		t.Fatalf("after the restart the kernel is not what the store says:\n%s", d)
	}
	// A recorded commit is not undone by the next start.
	s.mustCommit(s.edit(backend.Update, "IPv4Intf", model.Object{"IntfRef": "fpPort1", "IpAddr": "10.0.8.1/24"}))
	after := l.dump()
	s.stop()
	startSwitch(t, l, dir)
	if d := diffLines(after, l.dump()); d != "" {
		t.Fatalf("a restart changed a recorded commit:\n%s", d)
	}
}

// TestSwitchRoutesBetweenItsPorts: with an address on two ports, the
// switch forwards between them (a new namespace starts with forwarding
// off: the backend turns it on, IPv4 and IPv6), so a host behind one
// port reaches a host behind the other.
func TestSwitchRoutesBetweenItsPorts(t *testing.T) {
	l := newLab(t, 2, KernelOptions{})
	s := startSwitch(t, l, t.TempDir())
	s.mustCommit(
		s.edit(backend.Update, "Port", model.Object{"IntfRef": "fpPort1", "AdminState": "UP"}),
		s.edit(backend.Update, "Port", model.Object{"IntfRef": "fpPort2", "AdminState": "UP"}),
		s.edit(backend.Create, "IPv4Intf", model.Object{"IntfRef": "fpPort1", "IpAddr": "10.201.1.1/24"}),
		s.edit(backend.Create, "IPv4Intf", model.Object{"IntfRef": "fpPort2", "IpAddr": "10.201.2.1/24"}),
	)
	for i := 1; i <= 2; i++ {
		l.host(i, "ip", "addr", "add", fmt.Sprintf("10.201.%d.2/24", i), "dev", "eth0")
		l.host(i, "ip", "route", "add", "default", "via", fmt.Sprintf("10.201.%d.1", i))
	}
	for _, key := range []string{"net.ipv4.ip_forward", "net.ipv6.conf.all.forwarding"} {
		if got := strings.TrimSpace(run(t, "ip", "netns", "exec", l.sw, "sysctl", "-n", key)); got != "1" {
			t.Errorf("%s = %s in the switch's namespace, want 1", key, got)
		}
	}
	if out, err := exec.Command("ip", "netns", "exec", l.hosts[0], "ping", "-c", "2", "-i", "0.2", "-W", "2", "10.201.2.2").CombinedOutput(); err != nil {
		t.Fatalf("host1 cannot reach host2 through the switch: %v\n%s", err, out)
	}
}

// TestPortLinkChangesReachTheFeed: a port whose link goes down and up (the
// host's end of its cable) is handed to OnStateChange, the change feed's
// source, with its configuration and its state: OperState DOWN, then UP.
func TestPortLinkChangesReachTheFeed(t *testing.T) {
	l := newLab(t, 1, KernelOptions{})
	var mu sync.Mutex
	var events []model.Object
	s := startSwitch(t, l, t.TempDir(), func(o *switchOptions) {
		o.OnStateChange = func(kind string, obj model.Object) {
			if kind == "Port" {
				mu.Lock()
				events = append(events, obj)
				mu.Unlock()
			}
		}
	})
	s.mustCommit(s.edit(backend.Update, "Port", model.Object{"IntfRef": "fpPort1", "AdminState": "UP", "Description": "to host1"}))
	seen := func(state string) bool {
		mu.Lock()
		defer mu.Unlock()
		for _, o := range events {
			if o.Str("IntfRef") == "fpPort1" && o.Str("OperState") == state && o.Str("Description") == "to host1" {
				return true
			}
		}
		return false
	}
	if !eventually(10*time.Second, func() bool { return seen("UP") }) {
		t.Fatalf("no UP event of fpPort1 once up: %v", events)
	}
	l.host(1, "ip", "link", "set", "eth0", "down")
	if !eventually(10*time.Second, func() bool { return seen("DOWN") }) {
		t.Fatalf("no DOWN event of fpPort1 when its peer went down: %v", events)
	}
}
