package test

import (
	"encoding/json"
	"fmt"
	"maps"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/swmgr/swmgr/internal/ansible"
	"github.com/swmgr/swmgr/internal/model"
)

// What each switch of the fabric gets is declared once, as steps: a step
// is one kind and, per switch, the objects of that kind it gets (their
// fields by wire name). The same steps are applied over REST (one call per
// object, as an operator's script does) or as an Ansible playbook of the
// collection's resource modules (one task per step, each switch's objects
// its inventory variables), so the two builds configure the same fabric.

// fabricObject is one object's fields by wire name.
type fabricObject map[string]any

// fabricStep is one kind and the objects of it each switch gets (none:
// the switch skips the step).
type fabricStep struct {
	kind    string
	objects func(sw *fabricSwitch) []fabricObject
}

// onLeaves is objects for the leaves only.
func onLeaves(objects func(sw *fabricSwitch, n string) []fabricObject) func(sw *fabricSwitch) []fabricObject {
	return func(sw *fabricSwitch) []fabricObject {
		if !strings.HasPrefix(sw.name, "leaf") {
			return nil
		}
		return objects(sw, hostNumber(sw.name))
	}
}

// fabricPorts and hostPortsOf are the switch's ports to other switches
// and to its host, sorted.
func (sw *fabricSwitch) fabricPorts() (ports []string) {
	for _, port := range slices.Sorted(maps.Keys(sw.links)) {
		if sw.links[port] != "host" {
			ports = append(ports, port)
		}
	}
	return ports
}

func (sw *fabricSwitch) hostPortsOf() (ports []string) {
	for _, port := range slices.Sorted(maps.Keys(sw.links)) {
		if sw.links[port] == "host" {
			ports = append(ports, port)
		}
	}
	return ports
}

// underlaySteps: fabric ports up with their IPv6 link-local addresses, a
// loopback, eBGP unnumbered to every neighbour switch in one peer group
// (spines share AS 65100, each leaf has its own), multipath, BFD on every
// session, LLDP; a leaf's uplinks are unnumbered (they borrow the
// loopback's IPv4 address: what the relay's servers answer to arrives on
// an interface with one), its host ports come up, and a routed one gets
// the host's gateway address.
func (f *fabric) underlaySteps() []fabricStep {
	each := func(ports []string, extra fabricObject) []fabricObject {
		var out []fabricObject
		for _, port := range ports {
			o := fabricObject{"IntfRef": port}
			maps.Copy(o, extra)
			out = append(out, o)
		}
		return out
	}
	return []fabricStep{
		{"SystemParam", func(sw *fabricSwitch) []fabricObject {
			return []fabricObject{{"Vrf": "default", "Hostname": sw.name}}
		}},
		{"LLDPGlobal", func(sw *fabricSwitch) []fabricObject {
			return []fabricObject{{"Enable": true, "TranmitInterval": 5}}
		}},
		{"Port", func(sw *fabricSwitch) []fabricObject {
			return each(append(sw.fabricPorts(), sw.hostPortsOf()...), fabricObject{"AdminState": "UP"})
		}},
		{"LogicalIntf", func(sw *fabricSwitch) []fabricObject { return []fabricObject{{"Name": "Loopback1"}} }},
		{"IPv4Intf", func(sw *fabricSwitch) []fabricObject {
			_, id := sw.identity()
			out := []fabricObject{{"IntfRef": "Loopback1", "IpAddr": id + "/32"}}
			if !f.shape.bonded {
				out = append(out, each(sw.hostPortsOf(), fabricObject{"IpAddr": sw.gateway()})...)
			}
			return out
		}},
		{"IPv4Unnumbered", onLeaves(func(sw *fabricSwitch, _ string) []fabricObject {
			return each(sw.fabricPorts(), fabricObject{"Interface": "Loopback1"})
		})},
		{"IPv6Intf", func(sw *fabricSwitch) []fabricObject { return each(sw.fabricPorts(), nil) }},
		{"BGPGlobal", func(sw *fabricSwitch) []fabricObject {
			as, id := sw.identity()
			return []fabricObject{{"Vrf": "default", "ASNum": as, "RouterId": id, "UseMultiplePaths": true, "EBGPMaxPaths": 4,
				"Redistribution": []fabricObject{{"Sources": "CONNECTED"}}}}
		}},
		{"BfdSessionParam", func(sw *fabricSwitch) []fabricObject {
			return []fabricObject{{"Name": "fast", "DesiredMinTxInterval": f.shape.bfdInterval, "RequiredMinRxInterval": f.shape.bfdInterval, "LocalMultiplier": 3}}
		}},
		{"BGPv4PeerGroup", func(sw *fabricSwitch) []fabricObject {
			return []fabricObject{{"Name": "FABRIC", "PeerAS": "external", "HoldTime": 9, "KeepaliveTime": 3, "ConnectRetryTime": 1, "BfdEnable": true, "BfdSessionParam": "fast"}}
		}},
		{"BGPv4Neighbor", func(sw *fabricSwitch) []fabricObject {
			return each(sw.fabricPorts(), fabricObject{"PeerGroup": "FABRIC"})
		}},
	}
}

// overlaySteps add the overlay to the underlay: on each leaf the host's
// LAG, VLAN 10 as VNI 100, the leaf's VLAN 2N with its gateway in VRF
// red, red's L3 VNI 4001 (VLAN 4001) with its connected subnets in BGP,
// the VTEP on Loopback1 and EVPN with every VNI advertised; on every
// switch EVPN activated for the FABRIC peer group.
func (f *fabric) overlaySteps() []fabricStep {
	return []fabricStep{
		{"LaPortChannel", onLeaves(func(sw *fabricSwitch, _ string) []fabricObject {
			return []fabricObject{{"IntfRef": "PortChannel1", "IntfRefList": []string{"fpPort3", "fpPort4"}, "Interval": 0}}
		})},
		{"Vlan", onLeaves(func(sw *fabricSwitch, n string) []fabricObject {
			return []fabricObject{{"VlanId": 10, "IntfList": []string{"PortChannel1"}}, {"VlanId": 20 + int(n[0]-'0'), "IntfList": []string{"PortChannel1"}},
				{"VlanId": 4001, "AutoState": "DOWN"}}
		})},
		{"VxlanEndpoint", onLeaves(func(sw *fabricSwitch, _ string) []fabricObject {
			return []fabricObject{{"Vrf": "default", "SourceInterface": "Loopback1"}}
		})},
		{"VxlanInstance", onLeaves(func(sw *fabricSwitch, _ string) []fabricObject { return []fabricObject{{"Vni": 100, "VlanId": 10}} })},
		{"Vrf", onLeaves(func(sw *fabricSwitch, _ string) []fabricObject { return []fabricObject{{"Vrf": "red"}} })},
		{"IPv4Intf", onLeaves(func(sw *fabricSwitch, n string) []fabricObject {
			return []fabricObject{{"IntfRef": "vlan2" + n, "IpAddr": "10.2" + n + ".0.1/24", "Vrf": "red"}}
		})},
		{"EvpnL3Vni", onLeaves(func(sw *fabricSwitch, _ string) []fabricObject {
			return []fabricObject{{"Vrf": "red", "Vni": 4001, "VlanId": 4001}}
		})},
		{"BGPVrf", onLeaves(func(sw *fabricSwitch, _ string) []fabricObject {
			return []fabricObject{{"Name": "red", "Redistribution": []fabricObject{{"Sources": "CONNECTED"}}}}
		})},
		{"BGPL2vpnEvpn", onLeaves(func(sw *fabricSwitch, _ string) []fabricObject {
			return []fabricObject{{"Vrf": "default", "AdvertiseAllVni": true}}
		})},
		{"BGPL2vpnEvpnNeighbor", func(sw *fabricSwitch) []fabricObject { return []fabricObject{{"Neighbor": "FABRIC"}} }},
	}
}

// relayInRedSteps: leaf2 relays DHCP of VLAN 22 in VRF red to host1's
// server, the L3 VNI's VLAN interface borrowing the address of a loopback
// of red (see proveRelayInVRF).
func relayInRedSteps() []fabricStep {
	onLeaf2 := func(objects ...fabricObject) func(sw *fabricSwitch) []fabricObject {
		return func(sw *fabricSwitch) []fabricObject {
			if sw.name != "leaf2" {
				return nil
			}
			return objects
		}
	}
	return []fabricStep{
		{"LogicalIntf", onLeaf2(fabricObject{"Name": "LoopbackRed"})},
		{"IPv4Intf", onLeaf2(fabricObject{"IntfRef": "LoopbackRed", "IpAddr": "10.254.2.1/32", "Vrf": "red"})},
		{"IPv4Unnumbered", onLeaf2(fabricObject{"IntfRef": "vlan4001", "Interface": "LoopbackRed", "Vrf": "red"})},
		{"DhcpRelayGlobal", onLeaf2(fabricObject{"Vrf": "default", "Enable": true})},
		{"DhcpRelayIntf", onLeaf2(fabricObject{"IntfRef": "vlan22", "ServerIp": []string{"10.21.0.10"}, "Vrf": "red"})},
	}
}

// apply gives every switch its objects of the steps: through the
// collection's playbook when the fabric is built with Ansible (the steps
// are remembered, so that the whole play can be run again), else over
// REST, one call per object (PATCH for a kind with one object or objects
// that exist already, such as ports; POST for the others).
func (f *fabric) apply(steps []fabricStep) {
	t := f.t
	t.Helper()
	names := []string{"spine1", "spine2", "leaf1", "leaf2"}
	begin := time.Now()
	if f.ansible != nil {
		f.applied = append(f.applied, steps...)
		r := runPlaybook(t, f.ansible, f.inventoryOf(steps), f.playbookOf(steps))
		if failed := r.failures(); len(failed) > 0 {
			t.Fatalf("the play failed: %v\n%s", failed, tail(r.raw, 3000))
		}
		t.Logf("configured %d kinds on 4 switches with ansible-playbook in %s", len(steps), time.Since(begin).Round(time.Millisecond))
		return
	}
	reg := model.Builtin()
	for _, name := range names {
		sw := f.switches[name]
		for _, step := range steps {
			k := reg.Lookup(model.Config, step.kind)
			if k == nil {
				t.Fatalf("no config kind %s", step.kind)
			}
			for _, o := range step.objects(sw) {
				body, err := json.Marshal(o)
				if err != nil {
					t.Fatal(err)
				}
				if k.Singleton || k.Discovered {
					sw.s.expect(t, 200, "PATCH", "/config/"+step.kind, string(body))
				} else {
					sw.s.expect(t, 201, "POST", "/config/"+step.kind, string(body))
				}
			}
		}
	}
	t.Logf("configured %d kinds on 4 switches over REST in %s", len(steps), time.Since(begin).Round(time.Millisecond))
}

// playbookOf is one task per step, the resource module of its kind with
// the objects of the inventory variable step<N>, on the switches that have
// it; or, when the fabric is built in one commit per switch, one task of
// swmgr_config with every step's objects (the inventory variable
// resources), one revision per switch.
func (f *fabric) playbookOf(steps []fabricStep) string {
	var b strings.Builder
	b.WriteString("- hosts: switches\n  gather_facts: false\n  module_defaults:\n    group/swmgr.switch.swmgr: \"{{ swmgr_connection }}\"\n  tasks:\n")
	if f.ansibleOneCommit {
		b.WriteString("    - name: the fabric, one revision per switch\n      swmgr.switch.swmgr_config:\n        resources: \"{{ resources }}\"\n      when: resources | length > 0\n")
		return b.String()
	}
	for i, step := range steps {
		fmt.Fprintf(&b, "    - name: step%d %s\n      swmgr.switch.swmgr_%s:\n        config: \"{{ step%[1]d }}\"\n      when: step%[1]d is defined\n",
			i, step.kind, ansible.Snake(step.kind))
	}
	return b.String()
}

// inventoryOf is the fabric's inventory (JSON, which is YAML): each
// switch's URL and, per step it has objects of, the variable step<N>:
// the objects with their Ansible option names (one object, not a list,
// for a kind that has one); for a build in one commit, the same as the
// list resources of swmgr_config.
func (f *fabric) inventoryOf(steps []fabricStep) string {
	reg := model.Builtin()
	hosts := map[string]any{}
	for name, sw := range f.switches {
		vars := map[string]any{"swmgr_connection": map[string]string{"url": "http://" + sw.s.addr}}
		resources := []map[string]any{}
		for i, step := range steps {
			objs := step.objects(sw)
			if len(objs) == 0 {
				continue
			}
			var config any = snakeKeys(objs)
			if reg.Lookup(model.Config, step.kind).Singleton {
				config = snakeKeys(objs[0])
			}
			vars[fmt.Sprintf("step%d", i)] = config
			resources = append(resources, map[string]any{"kind": step.kind, "config": config})
		}
		if f.ansibleOneCommit {
			vars["resources"] = resources
		}
		hosts[name] = vars
	}
	inv := map[string]any{"all": map[string]any{"children": map[string]any{"switches": map[string]any{
		"hosts": hosts, "vars": map[string]string{"ansible_connection": "local"}}}}}
	b, err := json.MarshalIndent(inv, "", " ")
	if err != nil {
		f.t.Fatal(err)
	}
	return string(b)
}

// snakeKeys renames the fields of objects, nested ones too, to their
// Ansible option names.
func snakeKeys(v any) any {
	switch v := v.(type) {
	case fabricObject:
		out := map[string]any{}
		for k, x := range v {
			out[ansible.Snake(k)] = snakeKeys(x)
		}
		return out
	case []fabricObject:
		out := make([]any, len(v))
		for i, x := range v {
			out[i] = snakeKeys(x)
		}
		return out
	}
	return v
}

// provePlayIdempotent runs every step applied through Ansible again as one
// play: nothing changes.
func (f *fabric) provePlayIdempotent() {
	t := f.t
	t.Helper()
	again := runPlaybook(t, f.ansible, f.inventoryOf(f.applied), f.playbookOf(f.applied))
	if failed := again.failures(); len(failed) > 0 || again.changed() != 0 {
		t.Errorf("the play run again: %d changed, failures %v; want nothing changed\n%s", again.changed(), failed, tail(again.raw, 3000))
		return
	}
	t.Logf("the %d steps applied, run again as one play, changed nothing", len(f.applied))
}

// TestFabricStepsAgreeThroughRESTAndAnsible applies every step of the
// fabric, underlay, overlay and relay in red, to simulated switches twice:
// over REST to four, as a playbook of a task per step to four others and
// as a playbook of one swmgr_config commit per switch to four more: every
// kind the steps name reads the same on each Ansible build of a switch as
// on its REST build. It checks on any
// kernel the playbook of what only the VM's kernel runs
// (TestFabricOverlayThroughAnsible, which also runs the play again).
func TestFabricStepsAgreeThroughRESTAndAnsible(t *testing.T) {
	env := ansibleEnv(t)
	steps := func(f *fabric) []fabricStep {
		return slices.Concat(f.underlaySteps(), f.overlaySteps(), relayInRedSteps())
	}
	build := func(env []string, oneCommit bool) *fabric {
		f := &fabric{t: t, shape: inTheVM(), switches: map[string]*fabricSwitch{}, hostNS: map[string]string{}, ansible: env, ansibleOneCommit: oneCommit}
		for _, name := range []string{"spine1", "spine2", "leaf1", "leaf2"} {
			f.switches[name] = &fabricSwitch{name: name, links: map[string]string{}, macs: map[string]string{},
				s: startServer(t, "", "--backend", "sim", "--ports", "4")}
		}
		for _, c := range f.cables() {
			f.wire(c)
		}
		// As TestFabricOverlay applies them: the relay in red later, when
		// leaf2 alone has objects of its steps.
		f.apply(slices.Concat(f.underlaySteps(), f.overlaySteps()))
		f.apply(relayInRedSteps())
		return f
	}
	overREST := build(nil, false)
	kinds := map[string]bool{}
	for _, step := range steps(overREST) {
		kinds[step.kind] = true
	}
	for how, throughAnsible := range map[string]*fabric{"a task per step": build(env, false), "one swmgr_config commit": build(env, true)} {
		for _, name := range []string{"spine1", "spine2", "leaf1", "leaf2"} {
			for _, kind := range slices.Sorted(maps.Keys(kinds)) {
				rest := objects(overREST.switches[name].s.listAll(t, "/config/"+kind+"s", 100))
				play := objects(throughAnsible.switches[name].s.listAll(t, "/config/"+kind+"s", 100))
				want, _ := json.Marshal(rest)
				got, _ := json.Marshal(play)
				if string(got) != string(want) {
					t.Errorf("%s's %s through Ansible, %s:\n%s\nover REST:\n%s", name, kind, how, got, want)
				}
			}
		}
	}
}
