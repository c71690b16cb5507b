// The last FlexSwitch clients: its CLI's readiness and version reads, the
// comma-joined port lists of its config files, BGP neighbor state as in
// effect, FlexSwitch 1.x's configuration actions and the small deviations
// the same runs showed. Each request body is the one the client sends.

package test

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/swmgr/swmgr/internal/frr/frrtest"
)

// TestFlexSwitchCLIStarts: snap_cli waits for SystemStatus and reads
// SystemSwVersion with a body naming the object by an empty value; a
// singleton is found whatever key (or field) value a read gives.
func TestFlexSwitchCLIStarts(t *testing.T) {
	s := startServer(t, "", "--ports", "4")
	st := s.expect(t, 200, "GET", "/state/SystemStatus", `{"Name": ""}`).object()
	if st["Ready"] != true || st["Name"] != "switch" {
		t.Errorf("SystemStatus: %v", st)
	}
	v := s.expect(t, 200, "GET", "/state/SystemSwVersion", `{"FlexswitchVersion": ""}`).object()
	if ver, _ := v["FlexswitchVersion"].(string); ver == "" {
		t.Errorf("SystemSwVersion: %v", v)
	}
	for _, read := range []struct{ path, body string }{
		{"/state/SystemStatus?Name=elsewhere", ""},
		{"/state/SystemSwVersion", `{"FlexswitchVersion": "0.0.1"}`},
		{"/config/SystemParam", `{"Vrf": ""}`},
		{"/config/SystemParam", `{"Vrf": "mgmt"}`},
		{"/state/SystemParam?Vrf=", ""},
		{"/config/BGPGlobal", `{"Vrf": ""}`},
		{"/state/BGPGlobal", `{"Vrf": "x"}`},
		{"/config/LLDPGlobal", `{"Vrf": ""}`},
	} {
		if r := s.expect(t, 200, "GET", read.path, read.body); r.object() == nil {
			t.Errorf("GET %s %s: %s", read.path, read.body, r)
		}
	}
	// Still strict about what is not a field at all, and about writes.
	s.expect(t, 400, "GET", "/state/SystemStatus", `{"Nmae": ""}`)
	s.expect(t, 400, "PATCH", "/config/SystemParam", `{"Vrf": "mgmt", "Hostname": "sw2"}`)
}

// TestPortListsCommaJoinedAndRanged: every port-list field takes the
// elements FlexSwitch's switch daemon split and expanded, and stores and
// answers one name per element; bad spellings are 400s that change nothing.
func TestPortListsCommaJoinedAndRanged(t *testing.T) {
	dir := t.TempDir()
	s := startServer(t, dir, "--ports", "8")
	s.expect(t, 200, "PATCH", "/config/Port", `{"IntfRef":"fpPort2","BreakOutMode":"4x10"}`)
	s.expect(t, 201, "POST", "/config/Vlan", `{"VlanId": 100, "UntagIntfList": ["fpPort1,fpPort2s1"]}`)
	s.expect(t, 201, "POST", "/config/Vlan", `{"VlanId": 101, "IntfList": ["fpPort3-4", "fpPort2s2,fpPort2s3"]}`)
	s.expect(t, 201, "POST", "/config/Span", `{"SpanSessionName": "m1", "DstIntfRef": "fpPort8", "SrcIntfRefList": ["fpPort5-fpPort6,fpPort7"]}`)
	for path, want := range map[string]map[string]any{
		"/config/Vlan?VlanId=100":         {"UntagIntfList": []string{"fpPort1", "fpPort2s1"}, "IntfList": []string{}},
		"/config/Vlan?VlanId=101":         {"IntfList": []string{"fpPort3", "fpPort4", "fpPort2s2", "fpPort2s3"}},
		"/config/Span?SpanSessionName=m1": {"SrcIntfRefList": []string{"fpPort5", "fpPort6", "fpPort7"}},
	} {
		checkFields(t, path, s.expect(t, 200, "GET", path, "").object(), want)
	}
	// The SDK's patch form and a query string take them too.
	s.expect(t, 200, "PATCH", "/config/Vlan", `{"VlanId": 101, "patch": [{"op": "remove", "path": "IntfList", "value": "fpPort3-4"}]}`)
	checkFields(t, "Vlan 101 after the patch", s.expect(t, 200, "GET", "/config/Vlan?VlanId=101", "").object(), map[string]any{"IntfList": []string{"fpPort2s2", "fpPort2s3"}})
	s.stop(t)
	before := dump(t, dir)

	s = startServer(t, dir, "--ports", "8")
	for _, bad := range []struct{ body, says string }{
		{`{"VlanId": 200, "IntfList": ["fpPort3,eth0"]}`, `\"eth0\", which is not a port name`},
		{`{"VlanId": 200, "IntfList": ["fpPort3,"]}`, "an empty name between commas"},
		{`{"VlanId": 200, "IntfList": ["fpPort4-3"]}`, "runs backwards"},
		{`{"VlanId": 200, "IntfList": ["fpPort7-9"]}`, `Port \"fpPort9\" does not exist`},
		{`{"VlanId": 200, "IntfList": ["fpPort2s3-5"]}`, `Port \"fpPort2s5\" does not exist`},
		{`{"VlanId": 200, "IntfList": ["fpPort2s3-12"]}`, "not a number of the same kind of port"},
		{`{"VlanId": 200, "IntfList": ["fpPort3-4,fpPort4"]}`, `\"fpPort4\" is listed twice`},
		{`{"VlanId": 200, "IntfList": ["fpPort1-100000"]}`, "not a number of the same kind of port"},
		{`{"VlanId": 200, "IntfList": ["fpPort1-999"]}`, "more than a switch has"},
	} {
		if r := s.expect(t, 400, "POST", "/config/Vlan", bad.body); !strings.Contains(string(r.raw), bad.says) {
			t.Errorf("%s: %s; want it to say %q", bad.body, r, bad.says)
		}
	}
	s.expect(t, 400, "POST", "/config/Span", `{"SpanSessionName": "m2", "DstIntfRef": "fpPort8", "SrcIntfRefList": ["fpPort6-5"]}`)
	s.expect(t, 400, "PATCH", "/config/Vlan", `{"VlanId": 101, "patch": [{"op": "add", "path": "IntfList", "value": "fpPort5,x"}]}`)
	s.stop(t)
	if after := dump(t, dir); !bytes.Equal(before, after) {
		t.Fatalf("refused port lists changed the store:\nbefore:\n%s\nafter:\n%s", before, after)
	}
}

// TestFlexSwitchConfigActions: FlexSwitch 1.x's config monitor applies
// documents with ApplyConfig and ForceApplyConfig (and their ByFile
// forms) and saves to an absolute FileName.
func TestFlexSwitchConfigActions(t *testing.T) {
	dir := t.TempDir()
	s := startServer(t, dir, "--ports", "4")
	s.expect(t, 201, "POST", "/config/NtpServer", `{"IpAddr":"192.0.2.1"}`)

	// ApplyConfig merges: the given objects are created or set, the rest stays.
	apply := `{"ConfigData": {"NtpServer": [{"IpAddr": "192.0.2.2", "MinPoll": 5}], "Vlan": [{"VlanId": 10, "IntfList": ["fpPort1,fpPort2"]}], "SystemParam": [{"Vrf": "default", "Hostname": "lab1"}]}}`
	dry := s.expect(t, 200, "POST", "/action/ApplyConfig?dry_run=true", apply)
	if dry.body["DryRun"] != true {
		t.Errorf("dry run: %s", dry)
	}
	s.expect(t, 404, "GET", "/config/NtpServer?IpAddr=192.0.2.2", "")
	rev0 := revisionOf(s.expect(t, 200, "GET", "/config/SystemParam", ""))
	r := s.expect(t, 200, "POST", "/action/ApplyConfig", apply)
	if r.body["Revision"] == nil || r.body["Changes"] != float64(3) {
		t.Errorf("ApplyConfig: %s", r)
	}
	s.expect(t, 200, "GET", "/config/NtpServer?IpAddr=192.0.2.1", "")
	checkFields(t, "applied NtpServer", s.expect(t, 200, "GET", "/config/NtpServer?IpAddr=192.0.2.2", "").object(), map[string]any{"MinPoll": 5})
	checkFields(t, "applied Vlan", s.expect(t, 200, "GET", "/config/Vlan?VlanId=10", "").object(), map[string]any{"IntfList": []string{"fpPort1", "fpPort2"}})
	checkFields(t, "applied SystemParam", s.expect(t, 200, "GET", "/config/SystemParam", "").object(), map[string]any{"Hostname": "lab1"})
	if rev := revisionOf(s.expect(t, 200, "GET", "/config/SystemParam", "")); rev == rev0 {
		t.Errorf("no new revision")
	}
	revs := s.expect(t, 200, "GET", "/revisions", "").body["Objects"].([]any)
	if top := revs[0].(map[string]any)["Object"].(map[string]any); len(top["Changes"].([]any)) != 3 {
		t.Errorf("ApplyConfig is not one commit of 3 changes: %v", top)
	}

	// SaveConfig {"FileName": "/abs/dir/runningConfig.json"}, as an admin.
	saveDir := t.TempDir()
	saved := filepath.Join(saveDir, "runningConfig.json")
	r = s.expect(t, 200, "POST", "/action/SaveConfig", `{"FileName": "`+saved+`"}`)
	if r.str("File") != "file://"+saved {
		t.Errorf("SaveConfig: %s", r)
	}
	if data, err := os.ReadFile(saved); err != nil || !bytes.Contains(data, []byte(`"192.0.2.2"`)) {
		t.Fatalf("saved file: %v %.200s", err, data)
	}
	s.expect(t, 400, "POST", "/action/SaveConfig", `{"FileName": "`+saveDir+`/../x.json"}`)
	s.expect(t, 400, "POST", "/action/SaveConfig", `{"FileName": "`+saved+`", "DstFileURI": "//`+saved+`"}`)

	// ForceApplyConfig replaces: what the document does not hold goes.
	s.expect(t, 200, "POST", "/action/ForceApplyConfig", `{"ConfigData": {"NtpServer": [{"IpAddr": "192.0.2.9"}]}}`)
	s.expect(t, 404, "GET", "/config/NtpServer?IpAddr=192.0.2.1", "")
	s.expect(t, 404, "GET", "/config/Vlan?VlanId=10", "")
	checkFields(t, "reset SystemParam", s.expect(t, 200, "GET", "/config/SystemParam", "").object(), map[string]any{"Hostname": "switch"})

	// The ByFile forms read the saved file: merged back, then as the whole.
	s.expect(t, 200, "POST", "/action/ApplyConfigByFile", `{"SrcFileURI": "//`+saved+`"}`)
	s.expect(t, 200, "GET", "/config/NtpServer?IpAddr=192.0.2.9", "")
	s.expect(t, 200, "GET", "/config/Vlan?VlanId=10", "")
	s.expect(t, 200, "POST", "/action/ForceApplyConfigByFile", `{"SrcFileURI": "//`+saved+`"}`)
	s.expect(t, 404, "GET", "/config/NtpServer?IpAddr=192.0.2.9", "")
	s.expect(t, 200, "GET", "/config/NtpServer?IpAddr=192.0.2.1", "")
	// The config log never holds a document (it may carry secrets).
	logs := s.listAll(t, "/state/ConfigLogs", 100)
	for _, l := range objects(logs) {
		if l["API"] == "applyconfig" && strings.Contains(l["Data"].(string), "192.0.2.2") {
			t.Errorf("the config log holds the document: %v", l)
		}
	}
	s.stop(t)
	before := dump(t, dir)

	// A document with one bad object changes nothing, in every form.
	s = startServer(t, dir, "--ports", "4")
	badFile := filepath.Join(saveDir, "bad.json")
	os.WriteFile(badFile, []byte(`{"ConfigData": {"NtpServer": [{"IpAddr": "192.0.2.7"}, {"IpAddr": "192.0.2.8", "MinPoll": 2}]}}`), 0o600)
	for _, bad := range []struct{ action, body, says string }{
		{"ApplyConfig", `{"ConfigData": {"NtpServer": [{"IpAddr": "192.0.2.7"}, {"IpAddr": "192.0.2.8", "MinPoll": 2}]}}`, "ConfigData.NtpServer[1]: MinPoll"},
		{"ForceApplyConfig", `{"ConfigData": {"NtpServer": [{"IpAddr": "192.0.2.7"}], "Vlan": [{"VlanId": 20, "IntfList": ["fpPort9"]}]}}`, "fpPort9"},
		{"ApplyConfig", `{"ConfigData": {"NtpServer": [{"IpAddr": "192.0.2.7"}], "Gadget": [{}]}}`, "Gadget"},
		{"ApplyConfig", `{"ConfigData": {"IPv4Intf": [{"IntfRef": "Loopback9", "IpAddr": "10.9.9.9/32"}]}}`, "Loopback9"},
		{"ApplyConfig", `{"ConfigData": []}`, "ConfigData"},
		{"ApplyConfig", `{}`, "ConfigData is required"},
		{"ApplyConfigByFile", `{"SrcFileURI": "//` + badFile + `"}`, "MinPoll"},
		{"ForceApplyConfigByFile", `{"SrcFileURI": "//` + badFile + `"}`, "MinPoll"},
		{"ApplyConfigByFile", `{"SrcFileURI": "//` + badFile + `.missing"}`, "cannot read"},
	} {
		for _, q := range []string{"?dry_run=true", ""} {
			if r := s.do(t, "POST", "/action/"+bad.action+q, bad.body); r.code != 400 || !strings.Contains(string(r.raw), bad.says) {
				t.Errorf("%s%s %s: %s; want a 400 saying %q", bad.action, q, bad.body, r, bad.says)
			}
		}
	}
	s.stop(t)
	if after := dump(t, dir); !bytes.Equal(before, after) {
		t.Fatalf("refused documents changed the store:\nbefore:\n%s\nafter:\n%s", before, after)
	}
}

// TestFlexSwitchSmallDeviations: a loopback's IfIndex carries its type in
// the high bits; a lower-case "policy" is told why policies are refused.
func TestFlexSwitchSmallDeviations(t *testing.T) {
	dir := t.TempDir()
	s := startServer(t, dir, "--ports", "4")
	s.expect(t, 201, "POST", "/config/LogicalIntf", `{"Name":"Loopback1"}`)
	s.expect(t, 201, "POST", "/config/LogicalIntf", `{"Name":"Loopback2"}`)
	s.expect(t, 201, "POST", "/config/IPv4Intf", `{"IntfRef":"Loopback1","IpAddr":"10.0.0.1/32"}`)
	checkFields(t, "LogicalIntfState Loopback1", s.expect(t, 200, "GET", "/state/LogicalIntf?Name=Loopback1", "").object(), map[string]any{"IfIndex": 83886080})
	checkFields(t, "LogicalIntfState Loopback2", s.expect(t, 200, "GET", "/state/LogicalIntf?Name=Loopback2", "").object(), map[string]any{"IfIndex": 83886081})
	checkFields(t, "IPv4IntfState Loopback1", s.expect(t, 200, "GET", "/state/IPv4Intf?IntfRef=Loopback1", "").object(), map[string]any{"IfIndex": 83886080})
	// A freed id is given to the next loopback.
	s.expect(t, 200, "DELETE", "/config/LogicalIntf", `{"Name":"Loopback2"}`)
	s.expect(t, 201, "POST", "/config/LogicalIntf", `{"Name":"Loopback3"}`)
	checkFields(t, "LogicalIntfState Loopback3", s.expect(t, 200, "GET", "/state/LogicalIntf?Name=Loopback3", "").object(), map[string]any{"IfIndex": 83886081})
	// The same after a restart.
	s.stop(t)
	s = startServer(t, dir, "--ports", "4")
	checkFields(t, "LogicalIntfState Loopback1 after a restart", s.expect(t, 200, "GET", "/state/LogicalIntf?Name=Loopback1", "").object(), map[string]any{"IfIndex": 83886080})
	checkFields(t, "LogicalIntfState Loopback3 after a restart", s.expect(t, 200, "GET", "/state/LogicalIntf?Name=Loopback3", "").object(), map[string]any{"IfIndex": 83886081})

	r := s.expect(t, 400, "PATCH", "/config/BGPGlobal", `{"ASNum":"65001","Redistribution":[{"Sources":"STATIC","policy":"p1"}]}`)
	if !strings.Contains(string(r.raw), `did you mean \"Policy\"?`) {
		t.Errorf("lower-case policy: %s", r)
	}
}

// TestBGPNeighborStateInEffect: on the simulated switch a neighbor created
// without them shows the values in effect: the global AS and the default
// timers (FlexSwitch's CLI prints them).
func TestBGPNeighborStateInEffect(t *testing.T) {
	s := startServer(t, "", "--ports", "4")
	s.expect(t, 200, "PATCH", "/config/BGPGlobal", `{"ASNum":"65001","RouterId":"10.0.0.1"}`)
	s.expect(t, 201, "POST", "/config/BGPv4Neighbor", `{"NeighborAddress":"10.1.1.2","PeerAS":"65002"}`)
	s.expect(t, 201, "POST", "/config/BGPv4Neighbor", `{"NeighborAddress":"10.1.1.6","PeerAS":"65003","LocalAS":"65010","HoldTime":30,"ConnectRetryTime":5}`)
	s.expect(t, 201, "POST", "/config/BGPv4Neighbor", `{"NeighborAddress":"10.1.1.10","PeerAS":"65004","KeepaliveTime":20}`)
	byAddr := map[string]map[string]any{}
	for _, n := range objects(s.listAll(t, "/state/BGPv4Neighbors", 100)) {
		byAddr[n["NeighborAddress"].(string)] = n
	}
	checkFields(t, "defaults", byAddr["10.1.1.2"], map[string]any{"LocalAS": "65001", "HoldTime": 180, "KeepaliveTime": 60, "ConnectRetryTime": 120})
	checkFields(t, "configured", byAddr["10.1.1.6"], map[string]any{"LocalAS": "65010", "HoldTime": 30, "KeepaliveTime": 10, "ConnectRetryTime": 5})
	checkFields(t, "keepalive alone", byAddr["10.1.1.10"], map[string]any{"HoldTime": 60, "KeepaliveTime": 20})
	// The config form keeps what was asked for.
	checkFields(t, "config", s.expect(t, 200, "GET", "/config/BGPv4Neighbor?NeighborAddress=10.1.1.2", "").object(), map[string]any{"LocalAS": "", "HoldTime": 0})
	// BGPGlobal's max paths of 0 are one path in effect.
	s.expect(t, 200, "PATCH", "/config/BGPGlobal", `{"EBGPMaxPaths":0}`)
	checkFields(t, "BGPGlobalState", s.expect(t, 200, "GET", "/state/BGPGlobal", "").object(), map[string]any{"EBGPMaxPaths": 1, "AS": "65001"})
}

// TestBGPNeighborStateInEffectFRR: on the Linux backend a neighbor's state
// shows what FRR uses: the global AS, the timers negotiated with a real
// FRR peer (its hold time of 9 s is lower than the default 180), FRR's
// connect retry interval.
func TestBGPNeighborStateInEffectFRR(t *testing.T) {
	lab := frrtest.New(t, frrtest.Options{Prefix: "rte", SwitchPort: "rte1", PeerPort: "eth0", Subnet: "10.242.0", Announce: "198.18.8.1/24"})
	frrDir := filepath.Join(lab.Dir, "frr")
	t.Cleanup(func() { killDaemonsOf(frrDir) })
	portMap := filepath.Join(lab.Dir, "ports.conf")
	os.WriteFile(portMap, []byte("fpPort1 rte1\n"), 0o644)
	s := startServer(t, "", "--backend", "linux", "--netns", lab.SwitchNS, "--port-map", portMap, "--bgp", "frr", "--frr-dir", frrDir, "--ntp", "sim", "--system", "sim")
	s.expect(t, 200, "PATCH", "/config/Port", `{"IntfRef":"fpPort1","AdminState":"UP"}`)
	s.expect(t, 201, "POST", "/config/IPv4Intf", `{"IntfRef":"fpPort1","IpAddr":"10.242.0.1/30"}`)
	s.expect(t, 200, "PATCH", "/config/BGPGlobal", `{"Vrf":"default","ASNum":"65001","RouterId":"10.242.0.1"}`)
	s.expect(t, 201, "POST", "/config/BGPv4Neighbor", `{"NeighborAddress":"10.242.0.2","PeerAS":"65002"}`)
	deadline := time.Now().Add(60 * time.Second)
	var st map[string]any
	for {
		st = s.expect(t, 200, "GET", "/state/BGPv4Neighbor", `{"NeighborAddress":"10.242.0.2"}`).object()
		if st["SessionState"] == float64(6) {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("no Established session: %v", st)
		}
		time.Sleep(200 * time.Millisecond)
	}
	checkFields(t, "BGPv4NeighborState", st, map[string]any{"LocalAS": "65001", "HoldTime": 9, "KeepaliveTime": 3, "ConnectRetryTime": 120})
	checkFields(t, "BGPv4Neighbor", s.expect(t, 200, "GET", "/config/BGPv4Neighbor", `{"NeighborAddress":"10.242.0.2"}`).object(), map[string]any{"LocalAS": "", "HoldTime": 0, "ConnectRetryTime": 0})
}
