package test

import (
	"os"
	"os/exec"
	"slices"
	"strings"
	"testing"
)

// TestLAGOnSimulatedSwitch: a LAG (LaPortChannel PortChannel<N>) is an
// interface: a VLAN takes it as a member and an address as its interface,
// and the rules between a LAG, its members and their users are refused
// with a 409 naming the objects. Its state and its members' LACP state
// follow the member ports.
func TestLAGOnSimulatedSwitch(t *testing.T) {
	s := startServer(t, "", "--ports", "8")
	for _, p := range []string{"fpPort1", "fpPort2", "fpPort3", "fpPort5"} {
		s.expect(t, 200, "PATCH", "/config/Port", `{"IntfRef":"`+p+`","AdminState":"UP"}`)
	}
	s.expect(t, 200, "PATCH", "/config/Port", `{"IntfRef":"fpPort8","BreakOutMode":"4x10"}`)
	lag := s.expect(t, 201, "POST", "/config/LaPortChannel", `{"IntfRef":"PortChannel1","IntfRefList":["fpPort1","fpPort2"],"MinLinks":2}`)
	checkFields(t, "PortChannel1", s.expect(t, 200, "GET", "/config/LaPortChannel", `{"IntfRef":"PortChannel1"}`).object(),
		map[string]any{"IntfRef": "PortChannel1", "IntfRefList": []any{"fpPort1", "fpPort2"}, "LagType": 0, "MinLinks": 2, "Interval": 1, "LacpMode": 0,
			"SystemIdMac": "00-00-00-00-00-00", "SystemPriority": 32768, "LagHash": 0, "AdminState": "UP"})
	s.expect(t, 201, "POST", "/config/Vlan", `{"VlanId":20,"IntfList":["PortChannel1"],"UntagIntfList":["fpPort5"]}`)
	s.expect(t, 201, "POST", "/config/LaPortChannel", `{"IntfRef":"PortChannel2","IntfRefList":["fpPort3"],"LagType":1}`)
	s.expect(t, 201, "POST", "/config/IPv4Intf", `{"IntfRef":"PortChannel2","IpAddr":"10.2.0.1/24"}`)

	for _, tt := range []struct {
		status             int
		method, path, body string
		says               []string
	}{
		{409, "POST", "/config/LaPortChannel", `{"IntfRef":"PortChannel3","IntfRefList":["fpPort2","fpPort4"]}`, []string{"fpPort2", "PortChannel1", "PortChannel3", "at most one LAG"}},
		{409, "POST", "/config/IPv4Intf", `{"IntfRef":"fpPort1","IpAddr":"10.1.0.1/24"}`, []string{"fpPort1", "PortChannel1", "10.1.0.1/24"}},
		{409, "POST", "/config/Vlan", `{"VlanId":30,"UntagIntfList":["fpPort2"]}`, []string{"fpPort2", "PortChannel1", "VLAN 30"}},
		{409, "PATCH", "/config/LaPortChannel", `{"IntfRef":"PortChannel1","IntfRefList":["fpPort1","fpPort2","fpPort5"],"MinLinks":2}`, []string{"fpPort5", "PortChannel1", "VLAN 20"}},
		{409, "DELETE", "/config/LaPortChannel", `{"IntfRef":"PortChannel1"}`, []string{"Vlan", "PortChannel1"}},
		{409, "DELETE", "/config/LaPortChannel", `{"IntfRef":"PortChannel2"}`, []string{"IPv4Intf", "PortChannel2"}},
		{409, "PATCH", "/config/Port", `{"IntfRef":"fpPort1","BreakOutMode":"4x10"}`, []string{"fpPort1", "PortChannel1"}},
		{400, "POST", "/config/LaPortChannel", `{"IntfRef":"PortChannel6","IntfRefList":["fpPort8"]}`, []string{"fpPort8 is broken out", "fpPort8s1..fpPort8s4"}},
		{409, "POST", "/config/LaPortChannel", `{"IntfRef":"PortChannel4","IntfRefList":["fpPort6","fpPort7"],"MinLinks":1}`, nil}, // speeds: fpPort7 is set to 10000 below
		{400, "POST", "/config/LaPortChannel", `{"IntfRef":"PortChannel0","IntfRefList":["fpPort6"]}`, []string{`PortChannel0`, `is not a port channel like PortChannel1 (N 1..9999)`}},
		{400, "POST", "/config/LaPortChannel", `{"IntfRef":"PortChannel5","IntfRefList":["fpPort6"],"MinLinks":2}`, []string{"MinLinks 2", "1 member"}},
		{400, "POST", "/config/LaPortChannel", `{"IntfRef":"PortChannel5","IntfRefList":["fpPort6"],"SystemIdMac":"00-11\n22-33-44-55"}`, []string{"SystemIdMac"}},
		{400, "POST", "/config/Vlan", `{"VlanId":31,"IntfList":["vlan20"]}`, []string{"vlan20", "a port like fpPort1 or fpPort1s2 or a port channel like PortChannel1"}},
	} {
		if tt.says == nil {
			s.expect(t, 200, "PATCH", "/config/Port", `{"IntfRef":"fpPort7","Speed":10000}`)
			tt.says = []string{"fpPort6", "fpPort7", "one speed"}
		}
		r := s.do(t, tt.method, tt.path, tt.body)
		if r.code != tt.status {
			t.Errorf("%s %s %s: %s; want %d", tt.method, tt.path, tt.body, r, tt.status)
			continue
		}
		for _, w := range tt.says {
			if !strings.Contains(string(r.raw), w) {
				t.Errorf("%s %s %s: %s; want it to say %q", tt.method, tt.path, tt.body, r, w)
			}
		}
	}

	// Both members up: the LAG and the VLAN over it are up; one down takes
	// the LAG (MinLinks 2) and the VLAN with it.
	lagState := func() map[string]any {
		return s.expect(t, 200, "GET", "/state/LaPortChannel", `{"IntfRef":"PortChannel1"}`).object()
	}
	if st := lagState(); st["OperState"] != "UP" || jsonOf(st["IntfRefListUpInBundle"]) != `["fpPort1","fpPort2"]` {
		t.Errorf("LaPortChannel state with both members up: %v", st)
	}
	members := objects(s.listAll(t, "/state/LaPortChannelIntfRefLists", 10))
	if len(members) != 3 {
		t.Fatalf("member states: %v", members)
	}
	for _, m := range members {
		hasFields(t, "LaPortChannelIntfRefListState", m, "IntfRef", "LagIntfRef", "OperState", "IfIndex", "Activity", "Timeout", "Synchronization", "Aggregatable", "Collecting", "Distributing", "Defaulted", "SystemId", "OperKey", "PartnerId", "PartnerKey",
			"Selected", "PartnerSystemPriority", "PartnerPortNum", "PartnerPortPriority", "PartnerActivity", "PartnerTimeout", "PartnerSynchronization", "PartnerAggregatable", "PartnerCollecting", "PartnerDistributing", "PartnerDefaulted")
		if m["OperState"] != "UP IN BUNDLE" || m["Collecting"] != true || m["Distributing"] != true || m["Selected"] != true {
			t.Errorf("member with its port up: %v", m)
		}
		// The simulated LACP partner is in sync and numbers its ports as
		// the member list; a static LAG's members have no partner.
		lacp := m["LagIntfRef"] == "PortChannel1"
		if (m["PartnerId"] != "") != lacp || m["PartnerCollecting"] != lacp || m["PartnerDefaulted"] == lacp ||
			lacp && m["PartnerPortNum"] != map[any]float64{"fpPort1": 1, "fpPort2": 2}[m["IntfRef"]] {
			t.Errorf("member's partner: %v", m)
		}
	}
	s.expect(t, 200, "PATCH", "/config/Port", `{"IntfRef":"fpPort2","AdminState":"DOWN"}`)
	if st := lagState(); st["OperState"] != "DOWN" || jsonOf(st["IntfRefListUpInBundle"]) != `["fpPort1"]` {
		t.Errorf("LaPortChannel state with one of MinLinks 2 down: %v", st)
	}
	if v := s.expect(t, 200, "GET", "/state/Vlan", `{"VlanId":20}`).object(); v["OperState"] != "UP" { // fpPort5 is up
		t.Errorf("VLAN 20 with fpPort5 up: %v", v)
	}
	s.expect(t, 200, "PATCH", "/config/LaPortChannel", `{"IntfRef":"PortChannel1","MinLinks":1}`)
	if st := lagState(); st["OperState"] != "UP" {
		t.Errorf("LaPortChannel state with MinLinks 1 and one member up: %v", st)
	}
	// ClearMacTable: the simulated switch learns nothing; a LAG it lacks
	// is a 404, a VLAN out of range a 400.
	if r := s.expect(t, 200, "POST", "/action/ClearMacTable?dry_run=true", `{"IntfRef":"PortChannel1","VlanId":20}`); r.body["Cleared"] != 0.0 || r.body["DryRun"] != true {
		t.Errorf("ClearMacTable dry run: %s", r)
	}
	s.expect(t, 200, "POST", "/action/ClearMacTable", `{}`)
	if r := s.do(t, "POST", "/action/ClearMacTable", `{"IntfRef":"PortChannel9"}`); r.code != 404 || !strings.Contains(string(r.raw), "PortChannel9") {
		t.Errorf("ClearMacTable of a LAG the switch lacks: %s", r)
	}
	if r := s.do(t, "POST", "/action/ClearMacTable", `{"VlanId":4095}`); r.code != 400 || !strings.Contains(string(r.raw), "VlanId") {
		t.Errorf("ClearMacTable of VLAN 4095: %s", r)
	}
	s.expect(t, 200, "DELETE", "/config/Vlan", `{"VlanId":20}`)
	s.expect(t, 200, "DELETE", "/config/LaPortChannel/"+lag.str("ObjectId"), "")
	if ms := objects(s.listAll(t, "/state/LaPortChannelIntfRefLists", 10)); len(ms) != 1 || ms[0]["LagIntfRef"] != "PortChannel2" {
		t.Errorf("member states after PortChannel1 went: %v", ms)
	}
}

// lagSDKScript makes the FlexSwitch SDK's LAG calls as it makes them
// (createLaPortChannel, getAllLaPortChannelStates,
// getAllLaPortChannelIntfRefListStates): a POST of the object, paged GETs of
// the state lists.
const lagSDKScript = `
import json, sys, requests
base = sys.argv[1]
hdr = {'Accept': 'application/json', 'Content-Type': 'application/json'}
obj = {'IntfRef': 'PortChannel7', 'IntfRefList': ['fpPort1', 'fpPort2'], 'MinLinks': 1, 'SystemPriority': 32768, 'Interval': 1,
       'LagHash': 0, 'AdminState': 'UP', 'SystemIdMac': '00-00-00-00-00-00', 'LagType': 0, 'LacpMode': 0}
r = requests.post(base + '/config/LaPortChannel', data=json.dumps(obj), headers=hdr, timeout=15)
if r.status_code != 201:
    sys.exit('createLaPortChannel: %d %s' % (r.status_code, r.text))
for kind in ['LaPortChannel', 'LaPortChannelIntfRefList']:
    objs, c = [], 0
    while True:
        r = requests.get(base + '/state/%ss?CurrentMarker=%d&NextMarker=%d&Count=1' % (kind, c, c), headers=hdr, timeout=15)
        if r.status_code != 200:
            sys.exit('getAll%sStates: %d %s' % (kind, r.status_code, r.text))
        objs += r.json()['Objects']
        if not r.json()['MoreExist']:
            break
        c = r.json()['NextMarker']
    print(kind, ' '.join(sorted(o['Object']['IntfRef'] + ':' + o['Object']['OperState'] for o in objs)))
`

// The FlexSwitch SDK's LAG calls work unchanged.
func TestFlexSwitchSDKLAGCalls(t *testing.T) {
	if err := exec.Command("python3", "-c", "import requests").Run(); err != nil {
		if os.Getenv("CI") != "" {
			t.Fatalf("python3 with requests is missing (.ci/run installs python3-requests): %v", err)
		}
		t.Skipf("needs python3 with requests (CI installs python3-requests): %v", err)
	}
	s := startServer(t, "")
	for _, p := range []string{"fpPort1", "fpPort2"} {
		s.expect(t, 200, "PATCH", "/config/Port", `{"IntfRef":"`+p+`","AdminState":"UP"}`)
	}
	out, err := exec.Command("python3", "-c", lagSDKScript, s.base).CombinedOutput()
	if err != nil {
		t.Fatalf("SDK calls: %v\n%s", err, out)
	}
	lines := strings.Split(strings.TrimSpace(string(out)), "\n")
	want := []string{"LaPortChannel PortChannel7:UP", "LaPortChannelIntfRefList fpPort1:UP IN BUNDLE fpPort2:UP IN BUNDLE"}
	if !slices.Equal(lines, want) {
		t.Errorf("SDK reads %q; want %q", lines, want)
	}
}
