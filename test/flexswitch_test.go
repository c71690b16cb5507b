// FlexSwitch's own clients: the bodies its Python SDK (flexswitchV2.py),
// its CLI and the public dockerLab lab scripts send, and the fields their
// table printers and the Prometheus exporter read. Written from the public
// sources; each step is what one of those clients does.

package test

import (
	"fmt"
	"strings"
	"testing"
	"time"
)

// sdkCreateNeighbor is the SDK's createBGPv4Neighbor body: every field,
// defaults filled in client side, with the labs' UpdateSource.
const sdkCreateNeighbor = `{"IntfRef":"","NeighborAddress":"10.1.1.2","Description":"","Disabled":false,"PeerGroup":"",
"PeerAS":"65002","LocalAS":"","UpdateSource":"Loopback1","NextHopSelf":false,"AuthPassword":"","RouteReflectorClusterId":0,
"RouteReflectorClient":false,"MultiHopEnable":false,"MultiHopTTL":0,"ConnectRetryTime":0,"HoldTime":0,"KeepaliveTime":0,
"AddPathsRx":false,"AddPathsMaxTx":0,"BfdEnable":false,"BfdSessionParam":"default","MaxPrefixes":0,
"MaxPrefixesThresholdPct":80,"MaxPrefixesDisconnect":false,"MaxPrefixesRestartTimer":0,"AdjRIBInFilter":"","AdjRIBOutFilter":""}`

// objects unwraps the Object of each element of a listing.
func objects(list []map[string]any) []map[string]any {
	out := make([]map[string]any, len(list))
	for i, e := range list {
		out[i], _ = e["Object"].(map[string]any)
	}
	return out
}

// hasFields fails unless obj has every field.
func hasFields(t *testing.T, what string, obj map[string]any, fields ...string) {
	t.Helper()
	for _, f := range fields {
		if _, ok := obj[f]; !ok {
			t.Errorf("%s lacks %s: %v", what, f, obj)
		}
	}
}

func TestFlexSwitchClients(t *testing.T) {
	s := startServer(t, "", "--ports", "4")

	// The CLI, its config monitor and labtool poll SystemStatus until Ready,
	// then print SystemSwVersion.
	st := s.expect(t, 200, "GET", "/state/SystemStatus", "").object()
	hasFields(t, "SystemStatus", st, "Name", "Ready", "Reason", "UpTime", "NumCreateCalls", "NumDeleteCalls", "NumUpdateCalls", "NumGetCalls", "NumActionCalls", "FlexDaemons")
	if st["Ready"] != true || st["Name"] != "switch" {
		t.Errorf("SystemStatus: %v", st)
	}
	if _, err := time.ParseDuration(st["UpTime"].(string)); err != nil {
		t.Errorf("UpTime: %v", err)
	}
	daemons, _ := st["FlexDaemons"].([]any)
	var names []string
	for _, d := range daemons {
		dm, _ := d.(map[string]any)
		hasFields(t, "FlexDaemons element", dm, "Name", "Enable", "State", "Reason", "StartTime", "RestartCount")
		names = append(names, dm["Name"].(string))
	}
	if got := strings.Join(names, " "); got != "store backend-sim routing ntp archive" {
		t.Errorf("FlexDaemons: %s", got)
	}
	v := s.expect(t, 200, "GET", "/state/SystemSwVersion", "").object()
	sys := s.expect(t, 200, "GET", "/config/SystemParam", "").object()
	if ver, _ := v["FlexswitchVersion"].(string); ver == "" || ver != sys["SwVersion"] {
		t.Errorf("SystemSwVersion %v, SystemParam SwVersion %v: want the same version", v, sys["SwVersion"])
	}
	if repos, _ := v["Repos"].([]any); len(repos) != 1 {
		t.Errorf("SystemSwVersion Repos: %v", v)
	}

	// lab1, in order.
	s.expect(t, 200, "GET", "/config/SystemParam", "")
	s.expect(t, 200, "PATCH", "/config/LLDPGlobal", `{"Enable":true}`)
	lldp := objects(s.listAll(t, "/state/LLDPIntfs", 100))
	if len(lldp) != 4 {
		t.Fatalf("state/LLDPIntfs: %d ports, want 4", len(lldp))
	}
	hasFields(t, "LLDPIntfState", lldp[0], "IntfRef", "IfIndex", "Enable", "LocalPort", "PeerMac", "PeerPort", "PeerHostName", "SendFrames", "ReceivedFrames",
		"PortDescription", "VlanId", "HoldTime", "SystemDescription", "SystemCapabilities", "EnabledCapabilities")
	if lldp[0]["Enable"] != true || lldp[0]["IntfRef"] != "fpPort1" {
		t.Errorf("LLDPIntfState after enable: %v", lldp[0])
	}
	s.expect(t, 200, "PATCH", "/config/Port", `{"IntfRef":"fpPort1","AdminState":"UP"}`)
	s.expect(t, 201, "POST", "/config/IPv4Intf", `{"IntfRef":"fpPort1","AdminState":"UP","IpAddr":"10.1.1.1/30"}`)
	s.expect(t, 201, "POST", "/config/LogicalIntf", `{"Name":"Loopback1"}`)
	s.expect(t, 201, "POST", "/config/IPv4Intf", `{"IntfRef":"Loopback1","IpAddr":"10.0.0.1/32"}`)
	intfs := objects(s.listAll(t, "/state/IPv4Intfs", 100))
	if len(intfs) != 2 {
		t.Fatalf("state/IPv4Intfs: %v", intfs)
	}
	for _, in := range intfs {
		hasFields(t, "IPv4IntfState", in, "IntfRef", "IpAddr", "OperState", "IfIndex", "NumUpEvents", "NumDownEvents", "LastUpEventTime", "LastDownEventTime", "L2IntfType", "L2IntfId")
		if in["OperState"] != "UP" || (in["IntfRef"] == "fpPort1" && in["LastUpEventTime"] == "") || (in["IntfRef"] == "Loopback1" && in["L2IntfType"] != "Loopback") {
			t.Errorf("IPv4IntfState: %v", in)
		}
	}
	// References to logical interfaces are checked like those to ports.
	s.expect(t, 400, "POST", "/config/IPv4Intf", `{"IntfRef":"Loopback2","IpAddr":"10.0.0.2/32"}`)
	if r := s.expect(t, 400, "POST", "/config/IPv4Intf", `{"IntfRef":"vlan10","IpAddr":"10.10.0.1/24"}`); !strings.Contains(string(r.raw), "Vlan") {
		t.Errorf("IPv4Intf on vlan10 before VLANs exist: %s", r)
	}
	s.expect(t, 409, "DELETE", "/config/LogicalIntf", `{"Name":"Loopback1"}`)

	// TORC and the labs: static routes, then the routing table.
	route := `{"DestinationNw":"192.168.10.0","NetworkMask":"255.255.255.0","NextHop":[{"NextHopIp":"10.1.1.2","NextHopIntRef":"","Weight":0}],"Protocol":"STATIC","Cost":0,"NullRoute":false}`
	s.expect(t, 201, "POST", "/config/IPv4Route", route)
	s.expect(t, 201, "POST", "/config/IPv4Route", `{"DestinationNw":"192.168.20.0","NetworkMask":"255.255.255.0","NextHop":[{"NextHopIp":"172.16.0.1"}]}`)
	s.expect(t, 400, "POST", "/config/IPv4Route", `{"DestinationNw":"192.168.30.1","NetworkMask":"255.255.255.0","NextHop":[{"NextHopIp":"10.1.1.2"}]}`)
	s.expect(t, 400, "POST", "/config/IPv4Route", `{"DestinationNw":"192.168.30.0","NetworkMask":"255.0.255.0","NextHop":[{"NextHopIp":"10.1.1.2"}]}`)
	s.expect(t, 400, "POST", "/config/IPv4Route", `{"DestinationNw":"192.168.30.0","NetworkMask":"255.255.255.0"}`)
	s.expect(t, 400, "POST", "/config/IPv4Route", `{"DestinationNw":"192.168.30.0","NetworkMask":"255.255.255.0","NextHop":[{"NextHopIp":"10.1.1.2","Gateway":"x"}]}`)
	table := map[string]map[string]any{}
	for _, r := range objects(s.listAll(t, "/state/IPv4Routes", 100)) {
		hasFields(t, "IPv4RouteState", r, "DestinationNw", "Protocol", "IsNetworkReachable", "RouteCreatedTime", "RouteUpdatedTime", "NextHopList", "PolicyList")
		table[r["DestinationNw"].(string)+" "+r["Protocol"].(string)] = r
	}
	for want, reachable := range map[string]bool{"10.1.1.0/30 CONNECTED": true, "10.0.0.1/32 CONNECTED": true, "192.168.10.0/24 STATIC": true, "192.168.20.0/24 STATIC": false} {
		if r := table[want]; r == nil || r["IsNetworkReachable"] != reachable {
			t.Errorf("routing table entry %s (reachable %v): %v", want, reachable, r)
		}
	}
	if hops, _ := table["192.168.10.0/24 STATIC"]["NextHopList"].([]any); len(hops) != 1 || hops[0].(map[string]any)["NextHopIntRef"] != "fpPort1" {
		t.Errorf("static route's next hop: %v", hops)
	}
	if r := s.expect(t, 200, "GET", "/state/IPv4Route?DestinationNw=192.168.20.0/24", "").object(); r["Protocol"] != "STATIC" || r["IsNetworkReachable"] != false {
		t.Errorf("one route of the table: %v", r)
	}
	if r := s.expect(t, 200, "GET", "/state/LLDPIntf", `{"IntfRef":"fpPort2"}`).object(); r["IntfRef"] != "fpPort2" {
		t.Errorf("LLDP state of one port: %v", r)
	}
	s.expect(t, 404, "GET", "/state/IPv4Route?DestinationNw=192.168.99.0/24", "")
	s.expect(t, 400, "GET", "/state/IPv4Route", "")
	s.expect(t, 200, "DELETE", "/config/IPv4Route", `{"DestinationNw":"192.168.10.0","NetworkMask":"255.255.255.0"}`)
	s.expect(t, 404, "GET", "/config/IPv4Route", `{"DestinationNw":"192.168.10.0","NetworkMask":"255.255.255.0"}`)
	for _, r := range objects(s.listAll(t, "/state/IPv4Routes", 100)) {
		if r["DestinationNw"] == "192.168.10.0/24" {
			t.Errorf("deleted route still in the table: %v", r)
		}
	}
	if lo := s.expect(t, 200, "GET", "/state/LogicalIntf", `{"Name":"Loopback1"}`).object(); lo["OperState"] != "UP" {
		t.Errorf("LogicalIntfState: %v", lo)
	}
	s.expect(t, 200, "PATCH", "/config/BGPGlobal", `{"ASNum":"65001","RouterId":"10.0.0.1"}`)
	id := s.expect(t, 201, "POST", "/config/BGPv4Neighbor", sdkCreateNeighbor).str("ObjectId")
	// lab1 stage 3 creates its second neighbor with only these fields.
	s.expect(t, 201, "POST", "/config/BGPv4Neighbor", `{"NeighborAddress":"10.1.3.2","PeerAS":"65003","UpdateSource":"10.1.3.1"}`)
	g := s.expect(t, 200, "GET", "/state/BGPGlobal", "")
	if g.str("ObjectId") == "" {
		t.Error("state/BGPGlobal has no ObjectId")
	}
	hasFields(t, "BGPGlobalState", g.object(), "AS", "RouterId", "Vrf", "Disabled", "Defaultv4Route", "Defaultv6Route", "DefaultMED", "TotalPaths", "Totalv4Prefixes", "Totalv6Prefixes", "Redistribution",
		"UseMultiplePaths", "EBGPMaxPaths", "EBGPAllowMultipleAS", "IBGPMaxPaths")
	nbs := objects(s.listAll(t, "/state/BGPv4Neighbors", 100))
	if len(nbs) != 2 || nbs[1]["NeighborAddress"] != "10.1.3.2" || nbs[1]["UpdateSource"] != "10.1.3.1" || nbs[1]["IntfRef"] != "" {
		t.Fatalf("state/BGPv4Neighbors: %v", nbs)
	}
	// Every field lab1's state/BGPv4Neighbors shows, and the CLI's show ip
	// bgp neighbor reads.
	hasFields(t, "BGPv4NeighborState", nbs[0], "NeighborAddress", "IntfRef", "PeerAS", "LocalAS", "UpdateSource", "PeerType", "SessionState",
		"SessionStateDuration", "TotalPrefixes", "BfdNeighborState", "Messages", "Queues", "AddPathsRx", "AddPathsMaxTx", "AdjRIBInFilter", "AdjRIBOutFilter",
		"AuthPassword", "ConnectRetryTime", "Description", "Disabled", "HoldTime", "KeepaliveTime", "MaxPrefixes", "MaxPrefixesDisconnect",
		"MaxPrefixesRestartTimer", "MaxPrefixesThresholdPct", "MultiHopEnable", "MultiHopTTL", "NextHopSelf", "PeerGroup", "RouteReflectorClient", "RouteReflectorClusterId")
	msgs, _ := nbs[0]["Messages"].(map[string]any)
	sent, _ := msgs["Sent"].(map[string]any)
	queues, _ := nbs[0]["Queues"].(map[string]any)
	if _, ok := sent["Update"]; !ok || queues["Input"] == nil {
		t.Errorf("Messages / Queues: %v %v", msgs, queues)
	}
	if nbs[0]["UpdateSource"] != "Loopback1" || nbs[0]["IntfRef"] != "" || nbs[0]["PeerType"] != float64(1) {
		t.Errorf("BGPv4NeighborState: %v", nbs[0])
	}
	s.expect(t, 200, "PATCH", "/config/BGPGlobal", `{"Redistribution":[{"Sources":"CONNECTED","Policy":""}]}`)
	red := s.expect(t, 200, "GET", "/config/BGPGlobal", "").object()["Redistribution"]
	if jsonOf(red) != `[{"Policy":"","Sources":"CONNECTED"}]` {
		t.Errorf("Redistribution: %s", jsonOf(red))
	}

	// The SDK's getBGPv4Neighbor, updateBGPv4Neighbor and
	// deleteBGPv4Neighbor send FlexSwitch's keys.
	key := `{"IntfRef":"","NeighborAddress":"10.1.1.2"}`
	if got := s.expect(t, 200, "GET", "/config/BGPv4Neighbor", key); got.str("ObjectId") != id {
		t.Errorf("get by FlexSwitch's keys: %s", got)
	}
	s.expect(t, 200, "PATCH", "/config/BGPv4Neighbor", `{"IntfRef":"","NeighborAddress":"10.1.1.2","Description":"spine1","HoldTime":9,"KeepaliveTime":3}`)
	if got := s.expect(t, 200, "GET", "/config/BGPv4Neighbor/"+id, "").object(); got["Description"] != "spine1" || got["HoldTime"] != float64(9) {
		t.Errorf("after update: %v", got)
	}
	// IntfRef is the second key: the same address on fpPort1 is another
	// neighbor (none here), not the neighbor by address.
	for _, m := range []string{"GET", "DELETE", "PATCH"} {
		s.expect(t, 404, m, "/config/BGPv4Neighbor", `{"IntfRef":"fpPort1","NeighborAddress":"10.1.1.2"}`)
	}
	s.expect(t, 200, "DELETE", "/config/BGPv4Neighbor", key)
	s.expect(t, 404, "GET", "/config/BGPv4Neighbor", key)

	// The counters moved with what this test did.
	st = s.expect(t, 200, "GET", "/state/SystemStatus", "").object()
	for _, f := range []string{"NumCreateCalls", "NumDeleteCalls", "NumUpdateCalls", "NumGetCalls"} {
		if n, _ := st[f].(string); n == "" || n == "0" {
			t.Errorf("%s: %q", f, n)
		}
	}

	// PortState carries every field the CLI's `show interface` prints.
	p := s.expect(t, 200, "GET", "/state/Port", `{"IntfRef":"fpPort1"}`).object()
	hasFields(t, "PortState", p, "IntfRef", "IfIndex", "Name", "OperState", "NumUpEvents", "NumDownEvents", "LastUpEventTime", "LastDownEventTime",
		"Pvid", "IfInOctets", "IfInUcastPkts", "IfInDiscards", "IfInErrors", "IfInUnknownProtos", "IfOutOctets", "IfOutUcastPkts",
		"IfOutDiscards", "IfOutErrors", "IfEtherUnderSizePktCnt", "IfEtherOverSizePktCnt", "IfEtherFragments", "IfEtherCRCAlignError",
		"IfEtherJabber", "IfEtherPkts", "IfEtherMCPkts", "IfEtherBcastPkts", "IfEtherPkts64OrLessOctets", "IfEtherPkts65To127Octets",
		"IfEtherPkts128To255Octets", "IfEtherPkts256To511Octets", "IfEtherPkts512To1023Octets", "IfEtherPkts1024To1518Octets",
		"ErrDisableReason", "PresentInHW", "ConfigMode", "PRBSRxErrCnt")
	if p["ConfigMode"] != "L3" {
		t.Errorf("PortState with an address: ConfigMode %v", p["ConfigMode"])
	}
}

// TestSDKPatchForm: the SDK's patchUpdate methods send
// {<keys>, "patch":[{op, path, value}]}: add appends to a list field,
// remove takes out; concurrent patches of one list all land.
func TestSDKPatchForm(t *testing.T) {
	s := startServer(t, "", "--ports", "16")
	s.expect(t, 201, "POST", "/config/Span", `{"SpanSessionName":"tap","DstIntfRef":"fpPort16","SrcIntfRefList":["fpPort1"]}`)
	s.expect(t, 200, "PATCH", "/config/Span", `{"SpanSessionName":"tap","patch":[{"op":"add","path":"SrcIntfRefList","value":["fpPort2","fpPort3"]}]}`)
	s.expect(t, 200, "PATCH", "/config/Span", `{"SpanSessionName":"tap","patch":[{"op":"remove","path":"SrcIntfRefList","value":"fpPort1"}]}`)
	if got := jsonOf(s.expect(t, 200, "GET", "/config/Span", `{"SpanSessionName":"tap"}`).object()["SrcIntfRefList"]); got != `["fpPort2","fpPort3"]` {
		t.Errorf("after add and remove: %s", got)
	}
	s.expect(t, 200, "PATCH", "/config/BGPGlobal", `{"patch":[{"op":"add","path":"Redistribution","value":[{"Sources":"STATIC","Policy":""}]}]}`)
	s.expect(t, 200, "PATCH", "/config/BGPGlobal", `{"patch":[{"op":"add","path":"Redistribution","value":{"Sources":"connected"}}]}`)
	s.expect(t, 200, "PATCH", "/config/BGPGlobal", `{"patch":[{"op":"remove","path":"Redistribution","value":[{"Sources":"STATIC"}]}]}`)
	if got := jsonOf(s.expect(t, 200, "GET", "/config/BGPGlobal", "").object()["Redistribution"]); got != `[{"Policy":"","Sources":"CONNECTED"}]` {
		t.Errorf("Redistribution after add, add, remove: %s", got)
	}
	for _, bad := range []string{
		`{"SpanSessionName":"tap","patch":[{"op":"replace","path":"SrcIntfRefList","value":["fpPort4"]}]}`,
		`{"SpanSessionName":"tap","patch":[{"op":"add","path":"MirrorDir","value":"RX"}]}`,
		`{"SpanSessionName":"tap","patch":[{"op":"add","path":"Nope","value":"x"}]}`,
		`{"SpanSessionName":"tap","patch":[{"op":"remove","path":"SrcIntfRefList","value":["fpPort9"]}]}`,
		`{"SpanSessionName":"tap","patch":[{"op":"add","path":"SrcIntfRefList","value":["fpPort2"]}]}`,
		`{"SpanSessionName":"tap","patch":[{"op":"add","path":"SrcIntfRefList","value":["fpPort16"]}]}`,
		`{"SpanSessionName":"tap","patch":[{"op":"add","path":"SrcIntfRefList","value":[7]}]}`,
		`{"SpanSessionName":"tap","patch":{}}`,
		`{"SpanSessionName":"tap","MirrorDir":"RX","patch":[{"op":"add","path":"SrcIntfRefList","value":["fpPort4"]}]}`,
	} {
		s.expect(t, 400, "PATCH", "/config/Span", bad)
	}
	s.expect(t, 404, "PATCH", "/config/Span", `{"SpanSessionName":"nope","patch":[{"op":"add","path":"SrcIntfRefList","value":["fpPort4"]}]}`)
	if got := jsonOf(s.expect(t, 200, "GET", "/config/Span", `{"SpanSessionName":"tap"}`).object()["SrcIntfRefList"]); got != `["fpPort2","fpPort3"]` {
		t.Errorf("refused patches changed the list: %s", got)
	}

	// Concurrent adds of different ports: none is lost.
	errs := make(chan error, 12)
	for i := 4; i <= 15; i++ {
		go func() {
			r, err := s.call("PATCH", "/config/Span", fmt.Sprintf(`{"SpanSessionName":"tap","patch":[{"op":"add","path":"SrcIntfRefList","value":"fpPort%d"}]}`, i))
			if err == nil && r.code != 200 {
				err = fmt.Errorf("fpPort%d: %s", i, r)
			}
			errs <- err
		}()
	}
	for i := 4; i <= 15; i++ {
		if err := <-errs; err != nil {
			t.Error(err)
		}
	}
	list, _ := s.expect(t, 200, "GET", "/config/Span", `{"SpanSessionName":"tap"}`).object()["SrcIntfRefList"].([]any)
	if len(list) != 14 {
		t.Errorf("after 12 concurrent adds: %d ports, want 14: %v", len(list), list)
	}
}
