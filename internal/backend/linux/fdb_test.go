package linux

import (
	"context"
	"errors"
	"net"
	"net/http"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/swmgr/swmgr/internal/apierr"
	"github.com/swmgr/swmgr/internal/bind"
	"github.com/swmgr/swmgr/internal/model"
)

// TestMacTable: the bridge's forwarding database as MacTableEntryState:
// the hosts behind fpPort1 and fpPort2 are learned on their ports once
// they talked, a static entry is static, the ports' own addresses are not
// listed, and without a bridge the table is empty. (A bridge made here by
// hand: the host kernel may lack the VLAN filtering a Vlan needs; the
// table is read the same way.) ClearMacTable flushes the learned entries
// of a port, of a VLAN, of all, never the static one, and refuses a LAG
// the switch lacks with a 404.
func TestMacTable(t *testing.T) {
	needPing(t)
	l := newLab(t, 2, KernelOptions{})
	l.k.Close()
	l.k = nil
	be, err := New(Options{Kernel: KernelOptions{Netns: l.sw, VRFNetnsPrefix: l.prefix + "vrf-"}, Log: quiet()})
	if err != nil {
		t.Fatal(err)
	}
	defer be.Close()
	if got, err := be.MacTable(context.Background()); err != nil || len(got) != 0 {
		t.Fatalf("without a bridge: %v %v, want an empty table", got, err)
	}
	run(t, "ip", "-n", l.sw, "link", "add", BridgeName, "type", "bridge")
	for _, p := range []string{"fpPort1", "fpPort2"} {
		run(t, "ip", "-n", l.sw, "link", "set", p, "master", BridgeName, "up")
	}
	run(t, "ip", "-n", l.sw, "link", "set", BridgeName, "up")
	run(t, "bridge", "-n", l.sw, "fdb", "add", "02:00:00:00:00:99", "dev", "fpPort1", "master", "static")
	l.host(1, "ip", "addr", "add", "10.30.0.1/24", "dev", "eth0")
	l.host(2, "ip", "addr", "add", "10.30.0.2/24", "dev", "eth0")
	if !eventually(10*time.Second, func() bool { return l.ping(1, "10.30.0.2") }) {
		t.Fatal("host 1 cannot reach host 2 through the bridge")
	}
	hostMAC := func(i int) string {
		hw, err := net.ParseMAC(strings.Fields(strings.SplitN(l.host(i, "cat", "/sys/class/net/eth0/address"), "\n", 2)[0])[0])
		if err != nil {
			t.Fatal(err)
		}
		return hw.String()
	}
	want := map[string]string{hostMAC(1): "fpPort1 learned", hostMAC(2): "fpPort2 learned", "02:00:00:00:00:99": "fpPort1 static"}
	own := map[string]bool{}
	for _, p := range []string{"fpPort1", "fpPort2", BridgeName} {
		out := run(t, "ip", "netns", "exec", l.sw, "cat", "/sys/class/net/"+p+"/address")
		own[strings.TrimSpace(out)] = true
	}
	got, err := be.MacTable(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	seen := map[string]model.Object{}
	for _, o := range got {
		seen[o.Str("MacAddr")] = o
		if own[o.Str("MacAddr")] {
			t.Errorf("the switch's own address is listed: %v", o)
		}
	}
	for mac, w := range want {
		o, ok := seen[mac]
		if !ok {
			t.Errorf("%s (%s) not listed: %v", mac, w, got)
			continue
		}
		if g := o.Str("Port") + " " + o.Str("Type"); g != w || o.Int("VlanId") != 0 || o.Int("Age") < 0 {
			t.Errorf("%s: %v, want %s in VLAN 0", mac, o, w)
		}
	}
	if len(got) != len(want) {
		t.Errorf("table %v: want exactly %d entries", got, len(want))
	}

	// ClearMacTable: a dry run lists, a run flushes the learned entries of
	// the port named, then of all; the static one stays.
	clear := func(dry bool, fields model.Object) (map[string]any, error) {
		kind := model.Builtin().Lookup(model.Action, "ClearMacTable")
		f := model.Object{"VlanId": int64(0), "IntfRef": ""}
		for k, v := range fields {
			f[k] = v
		}
		r, err := be.DataplaneActions()["ClearMacTable"].Run(context.Background(), bind.Call{Kind: kind, Fields: f, DryRun: dry})
		v, _ := r.Value.(map[string]any)
		return v, err
	}
	macs := func() string {
		got, err := be.MacTable(context.Background())
		if err != nil {
			t.Fatal(err)
		}
		var out []string
		for _, o := range got {
			out = append(out, o.Str("MacAddr"))
		}
		sort.Strings(out)
		return strings.Join(out, " ")
	}
	sorted := func(m ...string) string { sort.Strings(m); return strings.Join(m, " ") }
	if v, err := clear(true, model.Object{"IntfRef": "fpPort1"}); err != nil || v["Cleared"] != 1 || macs() != sorted(hostMAC(1), hostMAC(2), "02:00:00:00:00:99") {
		t.Errorf("dry run on fpPort1: %v %v; table %s", v, err, macs())
	}
	if v, err := clear(false, model.Object{"IntfRef": "fpPort1"}); err != nil || v["Cleared"] != 1 || macs() != sorted(hostMAC(2), "02:00:00:00:00:99") {
		t.Errorf("clear fpPort1: %v %v; table %s", v, err, macs())
	}
	var ae *apierr.Error
	if _, err := clear(false, model.Object{"IntfRef": "PortChannel7"}); !errors.As(err, &ae) || ae.Status != http.StatusNotFound || !strings.Contains(ae.Message, "PortChannel7") {
		t.Errorf("clear of a LAG the switch lacks: %v", err)
	}
	if v, err := clear(false, model.Object{"VlanId": int64(10)}); err != nil || v["Cleared"] != 0 || macs() != sorted(hostMAC(2), "02:00:00:00:00:99") {
		t.Errorf("clear VLAN 10 (the bridge has only VLAN 0): %v %v; table %s", v, err, macs())
	}
	if v, err := clear(false, nil); err != nil || v["Cleared"] != 1 || macs() != "02:00:00:00:00:99" {
		t.Errorf("clear all: %v %v; table %s", v, err, macs())
	}
}
