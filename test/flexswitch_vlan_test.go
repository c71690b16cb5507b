package test

import (
	"bufio"
	"context"
	"fmt"
	"net/http"
	"strings"
	"testing"
	"time"
)

// revisionOf is the revision a write made: its ETag.
func revisionOf(r reply) string { return strings.Trim(r.hdr.Get("ETag"), `"`) }

// TestFlexSwitchServicesLab replays the dockerLab "services" lab's
// interface scripts (02_INTERFACE_L1, 03_INTERFACE_L2, 04_INTERFACE_L3)
// body for body, then checks every field the SDK's printers and the CLI
// read from the state they produce, and the rules an operator expects of
// VLANs.
func TestFlexSwitchServicesLab(t *testing.T) {
	s := startServer(t, "", "--ports", "6")

	// 02_INTERFACE_L1
	s.expect(t, 200, "PATCH", "/config/Port", `{"IntfRef":"fpPort1", "Description":"switch2:port1", "AdminState":"UP"}`)
	s.expect(t, 200, "PATCH", "/config/Port", `{"IntfRef":"fpPort2", "Description":"switch3:port1", "AdminState":"UP"}`)
	s.expect(t, 201, "POST", "/config/LogicalIntf", `{"Name":"Loopback1"}`)
	// 03_INTERFACE_L2
	vlan := s.expect(t, 201, "POST", "/config/Vlan", `{"VlanId":10, "UntagIntfList":["fpPort1","fpPort2","fpPort3"]}`)
	vlanID := vlan.str("ObjectId")
	// 04_INTERFACE_L3
	svi := s.expect(t, 201, "POST", "/config/IPv4Intf", `{"IntfRef":"vlan10", "AdminState":"UP", "IpAddr":"10.0.0.1/24"}`).str("ObjectId")
	s.expect(t, 201, "POST", "/config/IPv4Intf", `{"IntfRef":"Loopback1", "AdminState":"UP", "IpAddr":"1.0.0.1/32"}`)

	// The Vlan as the SDK's getVlan returns it: FlexSwitch's fields.
	v := s.expect(t, 200, "GET", "/config/Vlan", `{"VlanId":10}`)
	if v.str("ObjectId") != vlanID {
		t.Errorf("Vlan by key: %s", v)
	}
	checkFields(t, "Vlan", v.object(), map[string]any{"VlanId": 10, "UntagIntfList": []any{"fpPort1", "fpPort2", "fpPort3"}, "IntfList": []any{}, "AdminState": "UP", "AutoState": "UP", "Description": ""})
	vs := objects(s.listAll(t, "/state/Vlans", 10))
	if len(vs) != 1 {
		t.Fatalf("state/Vlans: %v", vs)
	}
	hasFields(t, "VlanState", vs[0], "VlanId", "VlanName", "OperState", "IfIndex", "SysInternalDescription")
	if vs[0]["VlanName"] != "vlan10" || vs[0]["OperState"] != "UP" || !strings.Contains(vs[0]["SysInternalDescription"].(string), "fpPort1") {
		t.Errorf("VlanState with fpPort1 up: %v", vs[0])
	}
	var sviState map[string]any
	for _, in := range objects(s.listAll(t, "/state/IPv4Intfs", 10)) {
		hasFields(t, "IPv4IntfState", in, "IntfRef", "IpAddr", "OperState", "IfIndex", "NumUpEvents", "NumDownEvents", "LastUpEventTime", "LastDownEventTime", "L2IntfType", "L2IntfId")
		if in["IntfRef"] == "vlan10" {
			sviState = in
		}
	}
	if sviState["OperState"] != "UP" || sviState["L2IntfType"] != "Vlan" || sviState["L2IntfId"] != float64(10) || sviState["IfIndex"] != vs[0]["IfIndex"] {
		t.Errorf("IPv4IntfState of vlan10: %v (VLAN %v)", sviState, vs[0])
	}
	for port, pvid := range map[string]float64{"fpPort1": 10, "fpPort3": 10, "fpPort4": 1} {
		if p := s.expect(t, 200, "GET", "/state/Port", `{"IntfRef":"`+port+`"}`).object(); p["Pvid"] != pvid {
			t.Errorf("%s Pvid %v, want %v", port, p["Pvid"], pvid)
		}
	}
	routes := map[string]map[string]any{}
	for _, r := range objects(s.listAll(t, "/state/IPv4Routes", 10)) {
		routes[r["DestinationNw"].(string)] = r
	}
	if r := routes["10.0.0.0/24"]; r == nil || r["IsNetworkReachable"] != true || r["Protocol"] != "CONNECTED" {
		t.Errorf("connected route of vlan10: %v", r)
	}

	// A VLAN in use cannot go; the refusal names its user.
	for _, target := range []struct{ path, body string }{{"/config/Vlan", `{"VlanId":10}`}, {"/config/Vlan/" + vlanID, ""}} {
		r := s.expect(t, 409, "DELETE", target.path, target.body)
		if !strings.Contains(string(r.raw), "IPv4Intf IntfRef=vlan10") {
			t.Errorf("deleting a VLAN in use: %s", r)
		}
	}
	// A port is the untagged member of one VLAN only, and not tagged and
	// untagged in one.
	s.expect(t, 409, "POST", "/config/Vlan", `{"VlanId":20, "UntagIntfList":["fpPort3"]}`)
	s.expect(t, 400, "POST", "/config/Vlan", `{"VlanId":20, "IntfList":["fpPort4"], "UntagIntfList":["fpPort4"]}`)
	s.expect(t, 201, "POST", "/config/Vlan", `{"VlanId":20, "IntfList":["fpPort3","fpPort4"], "UntagIntfList":["fpPort5"]}`)
	// A port is routed or switched: no address on a VLAN member, no VLAN
	// membership for a port with an address.
	if r := s.expect(t, 409, "POST", "/config/IPv4Intf", `{"IntfRef":"fpPort4", "IpAddr":"10.4.0.1/24"}`); !strings.Contains(string(r.raw), "vlan20") {
		t.Errorf("an address on a tagged member: %s", r)
	}
	s.expect(t, 201, "POST", "/config/IPv4Intf", `{"IntfRef":"fpPort6", "IpAddr":"10.6.0.1/24"}`)
	s.expect(t, 409, "PATCH", "/config/Vlan", `{"VlanId":20,"patch":[{"op":"add","path":"IntfList","value":"fpPort6"}]}`)
	s.expect(t, 200, "DELETE", "/config/IPv4Intf", `{"IntfRef":"fpPort6"}`)

	// The VLAN interface follows its member ports (AutoState UP)...
	s.expect(t, 200, "PATCH", "/config/Port", `{"IntfRef":"fpPort1","AdminState":"DOWN"}`)
	s.expect(t, 200, "PATCH", "/config/Port", `{"IntfRef":"fpPort2","AdminState":"DOWN"}`)
	if st := s.expect(t, 200, "GET", "/state/IPv4Intf/"+svi, "").object(); st["OperState"] != "DOWN" {
		t.Errorf("vlan10's address with every member down: %v", st)
	}
	if st := s.expect(t, 200, "GET", "/state/Vlan", `{"VlanId":10}`).object(); st["OperState"] != "DOWN" {
		t.Errorf("vlan10 with every member down: %v", st)
	}
	// ...unless AutoState is DOWN.
	s.expect(t, 200, "PATCH", "/config/Vlan", `{"VlanId":10,"AutoState":"DOWN"}`)
	if st := s.expect(t, 200, "GET", "/state/IPv4Intf/"+svi, "").object(); st["OperState"] != "UP" {
		t.Errorf("vlan10's address with AutoState DOWN: %v", st)
	}

	// The SDK's patch form on the list fields, directly...
	before := revisionOf(s.expect(t, 200, "PATCH", "/config/Vlan", `{"VlanId":10,"patch":[{"op":"add","path":"IntfList","value":["fpPort6"]}]}`))
	s.expect(t, 200, "PATCH", "/config/Vlan", `{"VlanId":10,"patch":[{"op":"remove","path":"UntagIntfList","value":"fpPort2"}]}`)
	checkFields(t, "Vlan after patches", s.expect(t, 200, "GET", "/config/Vlan/"+vlanID, "").object(),
		map[string]any{"IntfList": []any{"fpPort6"}, "UntagIntfList": []any{"fpPort1", "fpPort3"}})
	// ...and staged in a candidate: the candidate sees it, the running
	// configuration does not until the commit.
	cand := s.expect(t, 201, "POST", "/candidates", `{"Comment":"move fpPort3"}`).str("CandidateId")
	s.expect(t, 200, "PATCH", "/candidates/"+cand+"/config/Vlan", `{"VlanId":10,"patch":[{"op":"remove","path":"UntagIntfList","value":["fpPort3"]}]}`)
	s.expect(t, 200, "PATCH", "/candidates/"+cand+"/config/Vlan", `{"VlanId":10,"patch":[{"op":"add","path":"UntagIntfList","value":["fpPort2"]},{"op":"remove","path":"IntfList","value":["fpPort6"]}]}`)
	// The rule across VLANs is checked at staging, on the candidate's view:
	// fpPort3 is free in the candidate, so VLAN 20 may take it untagged once
	// it stops being tagged there.
	s.expect(t, 200, "PATCH", "/candidates/"+cand+"/config/Vlan", `{"VlanId":20,"patch":[{"op":"remove","path":"IntfList","value":"fpPort3"},{"op":"add","path":"UntagIntfList","value":"fpPort3"}]}`)
	s.expect(t, 409, "PATCH", "/candidates/"+cand+"/config/Vlan", `{"VlanId":20,"patch":[{"op":"add","path":"UntagIntfList","value":"fpPort1"}]}`)
	checkFields(t, "Vlan 10 in the candidate", s.expect(t, 200, "GET", "/candidates/"+cand+"/config/Vlan?VlanId=10", "").object(),
		map[string]any{"IntfList": []any{}, "UntagIntfList": []any{"fpPort1", "fpPort2"}})
	checkFields(t, "Vlan 10 running, before the commit", s.expect(t, 200, "GET", "/config/Vlan?VlanId=10", "").object(),
		map[string]any{"IntfList": []any{"fpPort6"}, "UntagIntfList": []any{"fpPort1", "fpPort3"}})
	commit := s.expect(t, 200, "POST", "/candidates/"+cand+"/commit", `{}`)
	committed := jsonOf(commit.body["Revision"])
	checkFields(t, "Vlan 20 after the commit", s.expect(t, 200, "GET", "/config/Vlan?VlanId=20", "").object(),
		map[string]any{"IntfList": []any{"fpPort4"}, "UntagIntfList": []any{"fpPort5", "fpPort3"}})

	// Paging through VLANs, integer keys in creation order.
	for id := 100; id < 105; id++ {
		s.expect(t, 201, "POST", "/config/Vlan", fmt.Sprintf(`{"VlanId":%d,"Description":"v%d"}`, id, id))
	}
	var got []string
	for _, o := range objects(s.listAll(t, "/config/Vlans", 2)) {
		got = append(got, jsonOf(o["VlanId"]))
	}
	if strings.Join(got, " ") != "10 20 100 101 102 103 104" {
		t.Errorf("VLANs paged 2 at a time: %v", got)
	}

	// The change feed carries the VLAN commits, from the patch on.
	feed := readFeed(t, s, before, committed)
	if !strings.Contains(feed, `"Kind":"Vlan"`) || !strings.Contains(feed, "VlanId=10") || !strings.Contains(feed, "fpPort6") {
		t.Errorf("change feed since revision %s:\n%s", before, feed)
	}

	// Rollback to the revision of the first patch: VLAN 10 and 20 as they
	// were then, the VLANs created since gone.
	s.expect(t, 200, "POST", "/action/Rollback", `{"Revision":`+before+`}`)
	checkFields(t, "Vlan 10 after the rollback", s.expect(t, 200, "GET", "/config/Vlan/"+vlanID, "").object(),
		map[string]any{"IntfList": []any{"fpPort6"}, "UntagIntfList": []any{"fpPort1", "fpPort2", "fpPort3"}, "AutoState": "DOWN"})
	checkFields(t, "Vlan 20 after the rollback", s.expect(t, 200, "GET", "/config/Vlan?VlanId=20", "").object(),
		map[string]any{"IntfList": []any{"fpPort3", "fpPort4"}, "UntagIntfList": []any{"fpPort5"}})
	s.expect(t, 404, "GET", "/config/Vlan?VlanId=100", "")

	// Once its address is gone, the VLAN can be deleted.
	s.expect(t, 200, "DELETE", "/config/IPv4Intf", `{"IntfRef":"vlan10"}`)
	s.expect(t, 200, "DELETE", "/config/Vlan", `{"VlanId":10}`)
	s.expect(t, 400, "POST", "/config/IPv4Intf", `{"IntfRef":"vlan10", "AdminState":"UP", "IpAddr":"10.0.0.1/24"}`)
	if p := s.expect(t, 200, "GET", "/state/Port", `{"IntfRef":"fpPort1"}`).object(); p["Pvid"] != float64(1) {
		t.Errorf("fpPort1 Pvid after its VLAN went: %v", p["Pvid"])
	}
}

// readFeed reads the change feed from after revision since up to and
// including revision until.
func readFeed(t *testing.T, s *server, since, until string) string {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	req, _ := http.NewRequestWithContext(ctx, "GET", s.base+"/events?since="+since, nil)
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	if resp.StatusCode != 200 {
		t.Fatalf("GET /events: %d", resp.StatusCode)
	}
	var b strings.Builder
	sc := bufio.NewScanner(resp.Body)
	sc.Buffer(make([]byte, 1<<20), 1<<20)
	last := false
	for sc.Scan() {
		line := sc.Text()
		b.WriteString(line + "\n")
		if line == "id: "+until {
			last = true
		}
		if last && strings.HasPrefix(line, "data:") {
			return b.String()
		}
	}
	t.Fatalf("the feed ended before revision %s: %v\n%s", until, sc.Err(), b.String())
	return ""
}
