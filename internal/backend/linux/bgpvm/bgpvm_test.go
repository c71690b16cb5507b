package bgpvm

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"log/slog"
	"math/rand/v2"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/swmgr/swmgr/internal/backend"
	"github.com/swmgr/swmgr/internal/backend/linux"
	"github.com/swmgr/swmgr/internal/backend/sim"
	"github.com/swmgr/swmgr/internal/bind"
	"github.com/swmgr/swmgr/internal/engine"
	"github.com/swmgr/swmgr/internal/frr"
	"github.com/swmgr/swmgr/internal/model"
	"github.com/swmgr/swmgr/internal/secrets"
	"github.com/swmgr/swmgr/internal/store"
	"github.com/swmgr/swmgr/internal/vmtest"
)

func needFRR(t *testing.T) {
	t.Helper()
	if os.Geteuid() != 0 {
		t.Skip("needs root: network namespaces and FRR")
	}
	for _, p := range []string{"/usr/lib/frr/bgpd", "/usr/lib/frr/zebra"} {
		if _, err := os.Stat(p); err != nil {
			if os.Getenv("CI") != "" {
				t.Fatalf("%s is missing; .ci/run installs Debian's frr", p)
			}
			t.Skipf("Debian's frr is not installed (%s missing); .ci/run installs it", p)
		}
	}
}

// TestRoutingInVM runs TestRoutingVRFSession in the stock-kernel VM.
func TestRoutingInVM(t *testing.T) {
	needFRR(t)
	vmtest.RunTests(t, "^TestRoutingVRFSession$", 6*time.Minute) // generous for a loaded machine, within go test's 10 min default
}

func run(t *testing.T, args ...string) string {
	t.Helper()
	out, err := exec.Command(args[0], args[1:]...).CombinedOutput()
	if err != nil {
		t.Fatalf("%s: %v\n%s", strings.Join(args, " "), err, out)
	}
	return string(out)
}

func eventually(d time.Duration, cond func() bool) bool {
	deadline := time.Now().Add(d)
	for time.Now().Before(deadline) {
		if cond() {
			return true
		}
		time.Sleep(200 * time.Millisecond)
	}
	return cond()
}

// TestRoutingVRFSession: a neighbor in VRF rtred (a VRF device, fpPort1
// enslaved to it) reaches Established with a peer FRR behind fpPort1, and
// the prefix it announces lands in the VRF's kernel table only.
func TestRoutingVRFSession(t *testing.T) {
	needFRR(t)
	id := fmt.Sprintf("rtv%05d", rand.IntN(100000))
	sw, host := id+"s", id+"h"
	for _, ns := range []string{sw, host} {
		run(t, "ip", "netns", "add", ns)
		t.Cleanup(func() { exec.Command("ip", "netns", "del", ns).Run() })
		run(t, "ip", "-n", ns, "link", "set", "lo", "up")
	}
	k, err := linux.OpenKernel(linux.KernelOptions{Netns: sw})
	if err != nil {
		t.Fatal(err)
	}
	hasVRF := k.Features().VRFDevice
	k.Close()
	if !hasVRF {
		if vmtest.InVM() {
			t.Fatal("the stock kernel in the VM has no VRF devices")
		}
		t.Skip("this kernel has no VRF devices; TestRoutingInVM runs this test in a VM with Debian's stock kernel")
	}
	run(t, "ip", "-n", sw, "link", "add", "fpPort1", "type", "veth", "peer", "name", "eth0", "netns", host)
	run(t, "ip", "-n", host, "addr", "add", "10.231.0.2/30", "dev", "eth0")
	run(t, "ip", "-n", host, "addr", "add", "203.0.113.1/24", "dev", "lo")
	run(t, "ip", "-n", host, "link", "set", "eth0", "up")
	dir, err := os.MkdirTemp("", id+"-")
	if err != nil {
		t.Fatal(err)
	}
	os.Chmod(dir, 0o755)
	t.Cleanup(func() { os.RemoveAll(dir) })

	ctx := context.Background()
	peer, err := frr.New(frr.Options{Dir: filepath.Join(dir, "peer"), Netns: host})
	if err != nil {
		t.Fatal(err)
	}
	if err := peer.Start(ctx); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(peer.Stop)
	err = peer.Apply(ctx, frr.Config{
		Instances: []frr.Instance{{ASNum: "65002", RouterID: "10.231.0.2", Redistribution: []frr.Redistribution{{Sources: "CONNECTED"}}}},
		Neighbors: []frr.Neighbor{{NeighborAddress: "10.231.0.1", PeerAS: "65001", KeepaliveTime: 3, HoldTime: 9, ConnectRetryTime: 1}},
	})
	if err != nil {
		t.Fatal(err)
	}

	quiet := slog.New(slog.NewTextHandler(io.Discard, nil))
	be, err := linux.New(linux.Options{Kernel: linux.KernelOptions{Netns: sw, VRFNetnsPrefix: id + "vrf-"}, Version: "test", Log: quiet,
		FRR: &frr.Options{Dir: filepath.Join(dir, "frr")}})
	if err != nil {
		t.Fatal(err)
	}
	data := t.TempDir()
	st, err := store.Open(data)
	if err != nil {
		t.Fatal(err)
	}
	box, err := secrets.Open(data)
	if err != nil {
		t.Fatal(err)
	}
	reg := model.Builtin()
	// As the service composes it: the kinds the backend leaves to others
	// are the simulated switch's, applied by the router before the
	// backend's kernel transaction commits.
	simulated := sim.New(sim.Options{Ports: 1})
	simDataplane, simDaemons := simulated.Dataplane(), simulated.DaemonDrivers()
	ds := bind.Compose(sim.Part{Of: sim.DataplaneProvider, Drivers: backend.Without(simDataplane, be.Dataplane())},
		sim.Part{Of: sim.DaemonsProvider, Drivers: backend.Without(simDaemons, be.DaemonDrivers())},
		linux.Part{Of: linux.DataplaneProvider, Drivers: be.Dataplane()}, linux.Part{Of: linux.DaemonsProvider, Drivers: be.DaemonDrivers()},
		sim.Part{Of: "simulated providers", Drivers: backend.Without(backend.Without(simulated.Drivers(), simDataplane), simDaemons)})
	e := engine.New(reg, st, backend.NewRouter("linux", ds, be, nil), box, quiet)
	t.Cleanup(func() { be.Close(); st.Close() })
	if err := e.Start(ctx); err != nil {
		t.Fatal(err)
	}
	edit := func(op backend.Op, kind string, fields model.Object) engine.Edit {
		k := reg.Lookup(model.Config, kind)
		ed := engine.Edit{Kind: k, Op: op, Fields: fields}
		if op == backend.Update {
			ed.Target.Key = model.Object{}
			for _, f := range k.Keys() {
				ed.Target.Key[f.Name] = fields[f.Name]
				delete(ed.Fields, f.Name)
			}
		}
		return ed
	}
	_, err = e.Apply(ctx, []engine.Edit{
		edit(backend.Create, "Vrf", model.Object{"Vrf": "rtred"}),
		edit(backend.Update, "Port", model.Object{"IntfRef": "fpPort1", "AdminState": "UP"}),
		edit(backend.Create, "IPv4Intf", model.Object{"IntfRef": "fpPort1", "IpAddr": "10.231.0.1/30", "Vrf": "rtred"}),
		edit(backend.Update, "BGPGlobal", model.Object{"Vrf": "default", "ASNum": "65001", "RouterId": "10.231.0.1"}),
		edit(backend.Create, "BGPVrf", model.Object{"Name": "rtred"}),
		edit(backend.Create, "BGPv4Neighbor", model.Object{"Vrf": "rtred", "NeighborAddress": "10.231.0.2", "PeerAS": "65002",
			"HoldTime": int64(9), "KeepaliveTime": int64(3), "ConnectRetryTime": int64(1)}),
	}, engine.Meta{Source: "test"}, nil)
	if err != nil {
		t.Fatal(err)
	}
	state := func() map[string]any {
		b, _, err := e.GetByKey(ctx, reg.Lookup(model.Config, "BGPv4Neighbor"), model.Object{"Vrf": "rtred", "NeighborAddress": "10.231.0.2"}, true, nil)
		if err != nil {
			t.Fatal(err)
		}
		var out struct{ Object map[string]any }
		json.Unmarshal(b, &out)
		return out.Object
	}
	var s map[string]any
	// FRR under software emulation on a loaded machine: minutes, not seconds.
	if !eventually(150*time.Second, func() bool {
		s = state()
		return s["SessionState"] == float64(6) && s["TotalPrefixes"].(float64) >= 1
	}) {
		rc, _ := be.FRR().RunningConfig(ctx)
		t.Fatalf("VRF session not Established with a prefix: %v\n%s", s, rc)
	}
	if !eventually(20*time.Second, func() bool {
		return strings.Contains(run(t, "ip", "-n", sw, "route", "show", "vrf", "rtred", "203.0.113.0/24"), "proto bgp")
	}) {
		t.Errorf("203.0.113.0/24 not in VRF rtred's table: %q", run(t, "ip", "-n", sw, "route", "show", "vrf", "rtred"))
	}
	if r := run(t, "ip", "-n", sw, "route", "show", "203.0.113.0/24"); r != "" {
		t.Errorf("the VRF's route leaked into the default table: %q", r)
	}
}
