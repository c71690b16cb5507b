package api

import (
	"bytes"
	"encoding/json"
	"io"
	"net/http"
	"strings"
	"testing"
)

// badInputFixture seeds objects for the bad inputs to collide with and
// refer to.
func badInputFixture(t *testing.T) (*txnServer, map[string]string) {
	s := newTxnServer(t)
	ids := map[string]string{}
	for _, c := range []struct{ name, method, path, body string }{
		{"vrf", "POST", "/config/Vrf", `{"Vrf":"red"}`},
		{"intf", "POST", "/config/IPv4Intf", `{"IntfRef":"fpPort1","IpAddr":"10.0.0.1/24","Vrf":"red"}`},
		{"span", "POST", "/config/Span", `{"SpanSessionName":"mirror1","DstIntfRef":"fpPort2","SrcIntfRefList":["fpPort3"]}`},
		{"ntp", "POST", "/config/NtpServer", `{"IpAddr":"10.0.0.9"}`},
		{"cas", "POST", "/config/ConfigArchiveServer", `{"IpAddr":"archive.example.com","Password":"archive-pw"}`},
		{"bgp", "PATCH", "/config/BGPGlobal", `{"ASNum":"65001","RouterId":"10.0.0.1"}`},
		{"nbr", "POST", "/config/BGPv4Neighbor", `{"NeighborAddress":"10.0.0.2","PeerAS":"65002"}`},
		{"breakout", "PATCH", "/config/Port", `{"IntfRef":"fpPort4","BreakOutMode":"4x10"}`},
		{"sub", "POST", "/config/IPv4Intf", `{"IntfRef":"fpPort4s1","IpAddr":"10.4.0.1/24"}`},
		{"vlan", "POST", "/config/Vlan", `{"VlanId":10,"UntagIntfList":["fpPort7"],"IntfList":["fpPort8"]}`},
		{"svi", "POST", "/config/IPv4Intf", `{"IntfRef":"vlan10","IpAddr":"10.10.0.1/24"}`},
		{"loopback", "POST", "/config/LogicalIntf", `{"Name":"Loopback1"}`},
		{"lo-addr", "POST", "/config/IPv4Intf", `{"IntfRef":"Loopback1","IpAddr":"10.255.0.1/32"}`},
		{"route", "POST", "/config/IPv4Route", `{"DestinationNw":"192.168.1.0","NetworkMask":"255.255.255.0","NextHop":[{"NextHopIp":"10.10.0.2"}]}`},
		{"redist", "PATCH", "/config/BGPGlobal", `{"Redistribution":[{"Sources":"CONNECTED"}]}`},
		{"relay-on", "PATCH", "/config/DhcpRelayGlobal", `{"Enable":true}`},
		{"relay", "POST", "/config/DhcpRelayIntf", `{"IntfRef":"vlan10","ServerIp":["10.4.0.9"]}`},
	} {
		code, body, _ := s.do(c.method, c.path, c.body)
		if code != 201 && code != 200 {
			t.Fatalf("fixture %s: %d %v", c.name, code, body)
		}
		ids[c.name], _ = body["ObjectId"].(string)
	}
	// A candidate with one staged edit, for the commit rows.
	code, body, _ := s.do("POST", "/candidates", `{"Comment":"staged"}`)
	if code != 201 {
		t.Fatalf("fixture candidate: %d %v", code, body)
	}
	ids["cand"], _ = body["CandidateId"].(string)
	if code, body, _ := s.do("POST", "/candidates/"+ids["cand"]+"/config/NtpServer", `{"IpAddr":"10.0.0.77"}`); code != 201 {
		t.Fatalf("fixture staged edit: %d %v", code, body)
	}
	return s, ids
}

// TestBadInputsChangeNothing sends malformed, invalid and refused requests:
// each gets the documented status and error body, and the store is
// byte-identical before and after.
func TestBadInputsChangeNothing(t *testing.T) {
	s, ids := badInputFixture(t)
	big := `{"IpAddr":"10.9.9.9","Pad":"` + strings.Repeat("x", MaxBody) + `"}`
	tests := []struct {
		name, method, path, body string
		hdr                      []string
		status                   int
		code                     string
	}{
		// Malformed JSON.
		{"truncated object", "POST", "/config/NtpServer", `{"IpAddr":"10.1.1.1"`, nil, 400, "malformed_json"},
		{"trailing garbage", "POST", "/config/NtpServer", `{"IpAddr":"10.1.1.1"} {}`, nil, 400, "malformed_json"},
		{"array body", "POST", "/config/NtpServer", `[{"IpAddr":"10.1.1.1"}]`, nil, 400, "malformed_json"},
		{"string body", "POST", "/config/NtpServer", `"10.1.1.1"`, nil, 400, "malformed_json"},
		{"number body", "PATCH", "/config/NtpServer", `42`, nil, 400, "malformed_json"},
		{"not JSON", "POST", "/config/Vrf", `Vrf=blue`, nil, 400, "malformed_json"},
		{"duplicate field", "POST", "/config/NtpServer", `{"IpAddr":"10.1.1.1","IpAddr":"10.1.1.2"}`, nil, 400, "malformed_json"},
		{"name and alias both", "POST", "/config/User", `{"Name":"bob","NAME":"bob","Password":"longenough"}`, nil, 400, "malformed_json"},
		{"bad escape", "POST", "/config/Vrf", `{"Vrf":"\x"}`, nil, 400, "malformed_json"},
		// Wrong types.
		{"string for int", "POST", "/config/NtpServer", `{"IpAddr":"10.1.1.1","MinPoll":"6"}`, nil, 400, "wrong_type"},
		{"int for string", "POST", "/config/Vrf", `{"Vrf":7}`, nil, 400, "wrong_type"},
		{"string for bool", "POST", "/config/NtpServer", `{"IpAddr":"10.1.1.1","Prefer":"true"}`, nil, 400, "wrong_type"},
		{"string for list", "POST", "/config/Span", `{"SpanSessionName":"m2","DstIntfRef":"fpPort5","SrcIntfRefList":"fpPort6"}`, nil, 400, "wrong_type"},
		{"list of numbers", "POST", "/config/Span", `{"SpanSessionName":"m2","DstIntfRef":"fpPort5","SrcIntfRefList":[6]}`, nil, 400, "wrong_type"},
		{"null value", "PATCH", "/config/Port", `{"IntfRef":"fpPort1","Mtu":null}`, nil, 400, "wrong_type"},
		{"fraction", "PATCH", "/config/Port", `{"IntfRef":"fpPort1","Mtu":1500.5}`, nil, 400, "wrong_type"},
		{"object for string", "PATCH", "/config/SystemParam", `{"Hostname":{"a":1}}`, nil, 400, "wrong_type"},
		// Unknown fields.
		{"unknown field", "POST", "/config/NtpServer", `{"IpAddr":"10.1.1.1","Burst":true}`, nil, 400, "unknown_field"},
		{"wrong case field", "POST", "/config/NtpServer", `{"ipaddr":"10.1.1.1"}`, nil, 400, "unknown_field"},
		{"misspelt secret", "POST", "/config/User", `{"Name":"bob","Pasword":"longenough"}`, nil, 400, "unknown_field"},
		{"FlexSwitch patch form", "PATCH", "/config/Span", `{"SpanSessionName":"mirror1","patch":[{"op":"add","path":"/SrcIntfRefList","value":["fpPort5"]}]}`, nil, 400, "unknown_field"},
		{"state field on input", "PATCH", "/config/Port", `{"IntfRef":"fpPort1","OperState":"UP"}`, nil, 400, "unknown_field"},
		// Invalid values.
		{"bad IPv4", "POST", "/config/BGPv4Neighbor", `{"NeighborAddress":"10.0.0.300","PeerAS":"65002"}`, nil, 400, "invalid_value"},
		{"IPv6 for IPv4", "PATCH", "/config/BGPGlobal", `{"RouterId":"2001:db8::1"}`, nil, 400, "invalid_value"},
		{"CIDR without length", "POST", "/config/IPv4Intf", `{"IntfRef":"fpPort5","IpAddr":"10.5.0.1"}`, nil, 400, "invalid_value"},
		{"network address", "POST", "/config/IPv4Intf", `{"IntfRef":"fpPort5","IpAddr":"10.5.0.0/24"}`, nil, 400, "invalid_value"},
		{"broadcast address", "POST", "/config/IPv4Intf", `{"IntfRef":"fpPort5","IpAddr":"10.5.0.255/24"}`, nil, 400, "invalid_value"},
		{"bad FQDN", "POST", "/config/NtpServer", `{"IpAddr":"ntp_server.example.com"}`, nil, 400, "invalid_value"},
		{"single-label name", "POST", "/config/NtpServer", `{"IpAddr":"ntp"}`, nil, 400, "invalid_value"},
		{"AS zero", "PATCH", "/config/BGPGlobal", `{"ASNum":"0"}`, nil, 400, "invalid_value"},
		{"AS too large", "POST", "/config/BGPv4Neighbor", `{"NeighborAddress":"10.0.0.3","PeerAS":"4294967296"}`, nil, 400, "invalid_value"},
		{"bad asdot", "POST", "/config/BGPv4Neighbor", `{"NeighborAddress":"10.0.0.3","PeerAS":"1.65536"}`, nil, 400, "invalid_value"},
		{"bad port name", "POST", "/config/Span", `{"SpanSessionName":"m2","DstIntfRef":"eth0","SrcIntfRefList":["fpPort6"]}`, nil, 400, "invalid_value"},
		{"enum not allowed", "PATCH", "/config/Port", `{"IntfRef":"fpPort1","AdminState":"SHUTDOWN"}`, nil, 400, "invalid_value"},
		{"mirror direction", "POST", "/config/Span", `{"SpanSessionName":"m2","DstIntfRef":"fpPort5","SrcIntfRefList":["fpPort6"],"MirrorDir":"IN"}`, nil, 400, "invalid_value"},
		{"timestamp value", "POST", "/config/ConfigArchiveServer", `{"IpAddr":"b.example.com","Timestamp":"always"}`, nil, 400, "invalid_value"},
		{"MinPoll below range", "POST", "/config/NtpServer", `{"IpAddr":"10.1.1.1","MinPoll":3}`, nil, 400, "invalid_value"},
		{"MaxPoll above range", "POST", "/config/NtpServer", `{"IpAddr":"10.1.1.1","MaxPoll":18}`, nil, 400, "invalid_value"},
		{"MinPoll over MaxPoll", "PATCH", "/config/NtpServer", `{"IpAddr":"10.0.0.9","MinPoll":12,"MaxPoll":8}`, nil, 400, "invalid_value"},
		{"Interval out of range", "POST", "/config/ConfigArchiveServer", `{"IpAddr":"b.example.com","Interval":-1}`, nil, 400, "invalid_value"},
		{"RetryCount out of range", "PATCH", "/config/ConfigArchiveServer", `{"IpAddr":"archive.example.com","RetryCount":11}`, nil, 400, "invalid_value"},
		{"Timeout out of range", "PATCH", "/config/ConfigArchiveServer", `{"IpAddr":"archive.example.com","Timeout":0}`, nil, 400, "invalid_value"},
		{"Mtu out of range", "PATCH", "/config/Port", `{"IntfRef":"fpPort1","Mtu":10000}`, nil, 400, "invalid_value"},
		{"Speed out of range", "PATCH", "/config/Port", `{"IntfRef":"fpPort1","Speed":5}`, nil, 400, "invalid_value"},
		{"Nonce without Passphrase", "PATCH", "/config/ConfigArchiveServer", `{"IpAddr":"archive.example.com","Nonce":"abc"}`, nil, 400, "invalid_value"},
		{"short password", "POST", "/config/User", `{"Name":"bob","Password":"short"}`, nil, 400, "invalid_value"},
		{"bad user name", "POST", "/config/User", `{"Name":"Bob Smith","Password":"longenough"}`, nil, 400, "invalid_value"},
		{"bad timezone", "PATCH", "/config/SystemParam", `{"Timezone":"Mars/Olympus_Mons"}`, nil, 400, "invalid_value"},
		{"bad hostname", "PATCH", "/config/SystemParam", `{"Hostname":"sw 1"}`, nil, 400, "invalid_value"},
		{"hold time 1", "POST", "/config/BGPv4Neighbor", `{"NeighborAddress":"10.0.0.3","PeerAS":"65003","HoldTime":1}`, nil, 400, "invalid_value"},
		{"mirror destination as another session's source", "POST", "/config/Span", `{"SpanSessionName":"m3","DstIntfRef":"fpPort6","SrcIntfRefList":["fpPort2"]}`, nil, 409, "conflict"},
		{"mirror source as another session's destination", "POST", "/config/Span", `{"SpanSessionName":"m3","DstIntfRef":"fpPort3","SrcIntfRefList":["fpPort6"]}`, nil, 409, "conflict"},
		{"span destination in sources", "POST", "/config/Span", `{"SpanSessionName":"m2","DstIntfRef":"fpPort5","SrcIntfRefList":["fpPort5"]}`, nil, 400, "invalid_value"},
		{"description too long", "PATCH", "/config/Port", `{"IntfRef":"fpPort1","Description":"` + strings.Repeat("d", 65) + `"}`, nil, 400, "invalid_value"},
		{"sub-port broken out", "PATCH", "/config/Port", `{"IntfRef":"fpPort4s2","BreakOutMode":"1x40"}`, nil, 400, "invalid_value"},
		{"unsupported speed (switch)", "PATCH", "/config/Port", `{"IntfRef":"fpPort1","Speed":12345}`, nil, 400, "backend_failed"},
		{"sub-port too fast (switch)", "PATCH", "/config/Port", `{"IntfRef":"fpPort4s2","Speed":40000}`, nil, 400, "backend_failed"},
		{"bad dry_run", "POST", "/config/NtpServer?dry_run=perhaps", `{"IpAddr":"10.1.1.1"}`, nil, 400, "invalid_value"},
		// Missing fields.
		{"missing key", "POST", "/config/NtpServer", `{"MinPoll":6}`, nil, 400, "missing_field"},
		{"missing required", "POST", "/config/IPv4Intf", `{"IntfRef":"fpPort5"}`, nil, 400, "missing_field"},
		{"missing password", "POST", "/config/User", `{"Name":"bob"}`, nil, 400, "missing_field"},
		{"update without key", "PATCH", "/config/NtpServer", `{"MinPoll":5}`, nil, 400, "missing_field"},
		{"missing action field", "POST", "/action/Rollback", `{}`, nil, 400, "missing_field"},
		// Keys, create-only and read-only fields.
		{"key change by id", "PATCH", "/config/NtpServer/" + ids["ntp"], `{"IpAddr":"10.0.0.10"}`, nil, 400, "key_change"},
		{"key change of a port by id", "PATCH", "/config/IPv4Intf/" + ids["intf"], `{"IntfRef":"fpPort6"}`, nil, 400, "key_change"},
		{"read-only field", "PATCH", "/config/Port", `{"IntfRef":"fpPort1","IfIndex":99}`, nil, 400, "read_only_field"},
		{"read-only MAC", "PATCH", "/config/Port", `{"IntfRef":"fpPort1","MacAddr":"00:00:00:00:00:01"}`, nil, 400, "read_only_field"},
		{"query key disagrees with body", "PATCH", "/config/NtpServer?IpAddr=10.0.0.9", `{"IpAddr":"10.0.0.8","MinPoll":5}`, nil, 400, "invalid_value"},
		{"non-key in query", "GET", "/config/NtpServer?MinPoll=6", ``, nil, 400, "unknown_field"},
		{"non-key in the query of a config log read", "GET", "/state/ConfigLog?SeqNum=1&API=ntpserver", ``, nil, 400, "unknown_field"},
		// A query parameter a request does not read is refused, not ignored:
		// the client would be told Success for something else than it asked.
		{"key in the query of a create", "POST", "/config/NtpServer?IpAddr=10.1.1.2", `{"IpAddr":"10.1.1.1"}`, nil, 400, "unknown_field"},
		{"field in the query of a create", "POST", "/config/NtpServer?MinPoll=7", `{"IpAddr":"10.1.1.1"}`, nil, 400, "unknown_field"},
		{"unknown parameter on a create", "POST", "/config/Vrf?Bogus=1", `{"Vrf":"blue"}`, nil, 400, "unknown_field"},
		{"field in the query of an action", "POST", "/action/Rollback?dry_run=true&Revision=2", `{"Revision":1}`, nil, 400, "unknown_field"},
		{"key in the query of an update by id", "PATCH", "/config/NtpServer/" + ids["ntp"] + "?IpAddr=10.0.0.8", `{"MinPoll":5}`, nil, 400, "unknown_field"},
		{"key in the query of a delete by id", "DELETE", "/config/NtpServer/" + ids["ntp"] + "?IpAddr=10.0.0.8", ``, nil, 400, "unknown_field"},
		{"key in the query of a read by id", "GET", "/config/NtpServer/" + ids["ntp"] + "?IpAddr=10.0.0.8", ``, nil, 400, "unknown_field"},
		{"key in the query of a state read by id", "GET", "/state/NtpServer/" + ids["ntp"] + "?IpAddr=10.0.0.8", ``, nil, 400, "unknown_field"},
		{"key in the body of a delete by id", "DELETE", "/config/NtpServer/" + ids["ntp"], `{"IpAddr":"10.0.0.8"}`, nil, 400, "unknown_field"},
		{"unknown field in the body of a read by id", "GET", "/config/NtpServer/" + ids["ntp"], `{"Bogus":1}`, nil, 400, "unknown_field"},
		{"Confirm in the query of a commit", "POST", "/candidates/" + ids["cand"] + "/commit?Confirm=60", `{}`, nil, 400, "unknown_field"},
		{"Comment in the query of a new candidate", "POST", "/candidates?Comment=x", `{}`, nil, 400, "unknown_field"},
		{"a parameter on a confirmation", "POST", "/revisions/1/confirm?Revision=2", `{}`, nil, 400, "unknown_field"},
		{"a parameter on a candidate's diff", "GET", "/candidates/" + ids["cand"] + "/diff?Kind=Vlan", ``, nil, 400, "unknown_field"},
		{"key in the query of a staged create", "POST", "/candidates/" + ids["cand"] + "/config/NtpServer?IpAddr=10.1.1.2", `{"IpAddr":"10.1.1.1"}`, nil, 400, "unknown_field"},
		// Unknown kinds, keys and ids.
		{"unknown kind", "POST", "/config/Widget", `{"WidgetId":10}`, nil, 404, "unknown_kind"},
		{"unknown kind plural", "GET", "/config/Widgets", ``, nil, 404, "unknown_kind"},
		{"state of unknown kind", "GET", "/state/Lldp", ``, nil, 404, "unknown_kind"},
		{"kind with symbols", "GET", "/config/Ntp-Server", ``, nil, 404, "unknown_kind"},
		{"unknown key", "GET", "/config/NtpServer?IpAddr=10.9.9.9", ``, nil, 404, "not_found"},
		{"unknown key delete", "DELETE", "/config/Vrf", `{"Vrf":"blue"}`, nil, 404, "not_found"},
		{"unknown key update", "PATCH", "/config/Port", `{"IntfRef":"fpPort99","AdminState":"UP"}`, nil, 404, "not_found"},
		{"unknown uuid", "GET", "/config/NtpServer/0f8fad5b-d9cb-469f-a165-70867728950e", ``, nil, 404, "not_found"},
		{"malformed uuid", "DELETE", "/config/NtpServer/not-a-uuid", ``, nil, 404, "not_found"},
		{"uuid of another kind", "GET", "/config/Vrf/" + ids["ntp"], ``, nil, 404, "not_found"},
		{"unknown path", "GET", "/config", ``, nil, 404, "not_found"},
		{"too many segments", "GET", "/config/NtpServer/a/b", ``, nil, 404, "not_found"},
		{"unknown action", "POST", "/action/Reboot", `{}`, nil, 404, "unknown_kind"},
		{"unknown revision", "GET", "/revisions/99999", ``, nil, 404, "not_found"},
		{"unknown candidate", "POST", "/candidates/feedbeef/commit", `{}`, nil, 404, "not_found"},
		// Duplicates, dangling and live references.
		{"duplicate create", "POST", "/config/NtpServer", `{"IpAddr":"10.0.0.9"}`, nil, 409, "duplicate"},
		{"duplicate VRF default", "POST", "/config/Vrf", `{"Vrf":"default"}`, nil, 409, "duplicate"},
		{"dangling port", "POST", "/config/IPv4Intf", `{"IntfRef":"fpPort99","IpAddr":"10.99.0.1/24"}`, nil, 400, "dangling_reference"},
		{"dangling VRF", "POST", "/config/IPv4Intf", `{"IntfRef":"fpPort5","IpAddr":"10.5.0.1/24","Vrf":"blue"}`, nil, 400, "dangling_reference"},
		{"dangling span source", "PATCH", "/config/Span", `{"SpanSessionName":"mirror1","SrcIntfRefList":["fpPort3","fpPort77"]}`, nil, 400, "dangling_reference"},
		{"dangling BGP VRF", "POST", "/config/BGPVrf", `{"Name":"green"}`, nil, 400, "dangling_reference"},
		{"delete referenced VRF", "DELETE", "/config/Vrf", `{"Vrf":"red"}`, nil, 409, "referenced"},
		{"delete referenced VRF by id", "DELETE", "/config/Vrf/" + ids["vrf"], ``, nil, 409, "referenced"},
		{"un-breakout a used sub-port", "PATCH", "/config/Port", `{"IntfRef":"fpPort4","BreakOutMode":"1x40"}`, nil, 409, "referenced"},
		// DHCP relay: servers in a VRF that does not exist or not the
		// interface's, an unknown interface or one without an address, a
		// server that is not unicast, the relay's address taken away.
		{"relay servers in a missing VRF", "POST", "/config/DhcpRelayIntf", `{"IntfRef":"fpPort1","ServerIp":["10.0.0.9"],"Vrf":"blue"}`, nil, 400, "dangling_reference"},
		{"relay servers in another VRF", "POST", "/config/DhcpRelayIntf", `{"IntfRef":"fpPort1","ServerIp":["10.0.0.9"]}`, nil, 400, "invalid_value"},
		{"relay on an unknown interface", "POST", "/config/DhcpRelayIntf", `{"IntfRef":"fpPort99","ServerIp":["10.0.0.9"]}`, nil, 400, "dangling_reference"},
		{"relay on an interface without address", "POST", "/config/DhcpRelayIntf", `{"IntfRef":"fpPort5","ServerIp":["10.0.0.9"]}`, nil, 400, "invalid_value"},
		{"relay to a multicast server", "POST", "/config/DhcpRelayIntf", `{"IntfRef":"Loopback1","ServerIp":["224.0.0.9"]}`, nil, 400, "invalid_value"},
		{"relay to a broadcast server", "PATCH", "/config/DhcpRelayIntf", `{"IntfRef":"vlan10","ServerIp":["10.4.0.9","255.255.255.255"]}`, nil, 400, "invalid_value"},
		{"relay to no server", "PATCH", "/config/DhcpRelayIntf", `{"IntfRef":"vlan10","ServerIp":[]}`, nil, 400, "invalid_value"},
		{"relay hop limit 0", "PATCH", "/config/DhcpRelayGlobal", `{"HopCountLimit":0}`, nil, 400, "invalid_value"},
		{"delete a relay's address", "DELETE", "/config/IPv4Intf", `{"IntfRef":"vlan10"}`, nil, 409, "referenced"},
		// Methods.
		{"create a singleton", "POST", "/config/SystemParam", `{}`, nil, 405, "method_not_allowed"},
		{"delete a singleton", "DELETE", "/config/BGPGlobal", ``, nil, 405, "method_not_allowed"},
		{"create a port", "POST", "/config/Port", `{"IntfRef":"fpPort9"}`, nil, 405, "method_not_allowed"},
		{"delete a port", "DELETE", "/config/Port", `{"IntfRef":"fpPort1"}`, nil, 405, "method_not_allowed"},
		{"PUT", "PUT", "/config/NtpServer", `{"IpAddr":"10.1.1.1"}`, nil, 405, "method_not_allowed"},
		{"POST to a list", "POST", "/config/NtpServers", `{"IpAddr":"10.1.1.1"}`, nil, 405, "method_not_allowed"},
		{"write to state", "POST", "/state/Port", `{"IntfRef":"fpPort1"}`, nil, 405, "method_not_allowed"},
		{"GET an action", "GET", "/action/ClearConfigLog", ``, nil, 405, "method_not_allowed"},
		// Paging.
		{"Count zero", "GET", "/config/NtpServers?Count=0", ``, nil, 400, "bad_paging"},
		{"Count negative", "GET", "/config/NtpServers?Count=-1", ``, nil, 400, "bad_paging"},
		{"Count not a number", "GET", "/config/NtpServers?Count=abc", ``, nil, 400, "bad_paging"},
		{"Count too large", "GET", "/config/NtpServers?Count=1025", ``, nil, 400, "bad_paging"},
		{"marker negative", "GET", "/config/NtpServers?CurrentMarker=-1", ``, nil, 400, "bad_paging"},
		{"unknown list parameter", "GET", "/config/NtpServers?Sort=IpAddr", ``, nil, 400, "bad_paging"},
		{"Count twice", "GET", "/config/NtpServers?Count=abc&Count=5", ``, nil, 400, "malformed_query"},
		// Query strings that do not parse or repeat a parameter: never
		// ignored, never "last one wins".
		{"dry_run=true%", "POST", "/config/NtpServer?dry_run=true%", `{"IpAddr":"10.1.1.1"}`, nil, 400, "malformed_query"},
		{"dry_run=true;", "POST", "/config/NtpServer?dry_run=true;", `{"IpAddr":"10.1.1.1"}`, nil, 400, "malformed_query"},
		{"dry_run%=true", "POST", "/config/NtpServer?dry_run%=true", `{"IpAddr":"10.1.1.1"}`, nil, 400, "malformed_query"},
		{"dry_run twice", "POST", "/config/NtpServer?dry_run=true&dry_run=false", `{"IpAddr":"10.1.1.1"}`, nil, 400, "malformed_query"},
		{"dry_run=true; on PATCH", "PATCH", "/config/NtpServer?dry_run=true;", `{"IpAddr":"10.0.0.9","MinPoll":5}`, nil, 400, "malformed_query"},
		{"dry_run=true% on DELETE", "DELETE", "/config/NtpServer/" + ids["ntp"] + "?dry_run=true%", ``, nil, 400, "malformed_query"},
		{"dry_run=true% on an action", "POST", "/action/Rollback?dry_run=true%", `{"Revision":1}`, nil, 400, "malformed_query"},
		{"dry_run=true; on a candidate commit", "POST", "/candidates/" + ids["cand"] + "/commit?dry_run=true;", `{}`, nil, 400, "malformed_query"},
		{"dry_run twice on a candidate commit", "POST", "/candidates/" + ids["cand"] + "/commit?dry_run=true&dry_run=false", `{}`, nil, 400, "malformed_query"},
		{"dry_run%=true on a staged write", "POST", "/candidates/" + ids["cand"] + "/config/NtpServer?dry_run%=true", `{"IpAddr":"10.1.1.2"}`, nil, 400, "malformed_query"},
		{"Count=0;", "GET", "/config/NtpServers?Count=0;", ``, nil, 400, "malformed_query"},
		{"Count=%zz", "GET", "/config/NtpServers?Count=%zz", ``, nil, 400, "malformed_query"},
		{"%zz=1 on a list", "GET", "/config/NtpServers?%zz=1", ``, nil, 400, "malformed_query"},
		{"%zz=1 on revisions", "GET", "/revisions?%zz=1", ``, nil, 400, "malformed_query"},
		{"key twice in the query", "GET", "/config/NtpServer?IpAddr=10.0.0.9&IpAddr=10.0.0.9", ``, nil, 400, "malformed_query"},
		{"non-UTF-8 query value", "GET", "/config/Vrf?Vrf=%ff", ``, nil, 400, "malformed_query"},
		// Users may not take over system accounts or privileged groups.
		{"user named root", "POST", "/config/User", `{"Name":"root","Password":"longenough"}`, nil, 400, "invalid_value"},
		{"user in group sudo", "POST", "/config/User", `{"Name":"eve","Group":"sudo","Password":"longenough"}`, nil, 400, "invalid_value"},
		{"address on a broken-out port", "POST", "/config/IPv4Intf", `{"IntfRef":"fpPort4","IpAddr":"10.44.0.1/24"}`, nil, 400, "invalid_value"},
		{"breakout of a used port", "PATCH", "/config/Port", `{"IntfRef":"fpPort1","BreakOutMode":"4x10"}`, nil, 409, "referenced"},
		// Values that were accepted and should not be.
		{"empty Hostname", "PATCH", "/config/SystemParam", `{"Hostname":""}`, nil, 400, "invalid_value"},
		{"empty SourceIntf", "PATCH", "/config/NtpServer", `{"IpAddr":"10.0.0.9","SourceIntf":""}`, nil, 400, "invalid_value"},
		{"neighbor 0.0.0.0", "POST", "/config/BGPv4Neighbor", `{"NeighborAddress":"0.0.0.0","PeerAS":"65003"}`, nil, 400, "invalid_value"},
		{"neighbor broadcast", "POST", "/config/BGPv4Neighbor", `{"NeighborAddress":"255.255.255.255","PeerAS":"65003"}`, nil, 400, "invalid_value"},
		{"neighbor multicast", "POST", "/config/BGPv4Neighbor", `{"NeighborAddress":"224.0.0.5","PeerAS":"65003"}`, nil, 400, "invalid_value"},
		{"NTP server 0.0.0.0", "POST", "/config/NtpServer", `{"IpAddr":"0.0.0.0"}`, nil, 400, "invalid_value"},
		{"NTP server broadcast", "POST", "/config/NtpServer", `{"IpAddr":"255.255.255.255"}`, nil, 400, "invalid_value"},
		{"NTP server multicast", "POST", "/config/NtpServer", `{"IpAddr":"224.0.1.1"}`, nil, 400, "invalid_value"},
		{"NTP server IPv6 multicast", "POST", "/config/NtpServer", `{"IpAddr":"ff05::101"}`, nil, 400, "invalid_value"},
		{"loopback on a port", "POST", "/config/IPv4Intf", `{"IntfRef":"fpPort5","IpAddr":"127.0.0.1/8"}`, nil, 400, "invalid_value"},
		{"same address twice in a VRF", "POST", "/config/IPv4Intf", `{"IntfRef":"fpPort5","IpAddr":"10.0.0.1/24","Vrf":"red"}`, nil, 409, "conflict"},
		{"same address, other length, in a VRF", "POST", "/config/IPv4Intf", `{"IntfRef":"fpPort5","IpAddr":"10.0.0.1/16","Vrf":"red"}`, nil, 409, "conflict"},
		{"same address by update in a VRF", "PATCH", "/config/IPv4Intf", `{"IntfRef":"fpPort4s1","IpAddr":"10.0.0.1/24","Vrf":"red"}`, nil, 409, "conflict"},
		{"invalid UTF-8", "POST", "/config/Vrf", "{\"Vrf\":\"v1\",\"Name\":\"caf\xe9\"}", nil, 400, "malformed_json"},
		{"lone surrogate", "POST", "/config/Vrf", `{"Vrf":"v1","Name":"\ud800"}`, nil, 400, "malformed_json"},
		{"password with U+0085", "POST", "/config/User", `{"Name":"bob","Password":"longenough\u0085"}`, nil, 400, "invalid_value"},
		{"password with U+200B", "POST", "/config/User", `{"Name":"bob","Password":"longenough\u200b"}`, nil, 400, "invalid_value"},
		// Another spelling of an existing key is that key.
		{"IPv4-mapped spelling of a key", "POST", "/config/NtpServer", `{"IpAddr":"::ffff:10.0.0.9"}`, nil, 409, "duplicate"},
		{"upper-case FQDN with a dot", "POST", "/config/ConfigArchiveServer", `{"IpAddr":"ARCHIVE.Example.COM."}`, nil, 409, "duplicate"},
		{"IPv4-mapped neighbor", "POST", "/config/BGPv4Neighbor", `{"NeighborAddress":"::ffff:10.0.0.2","PeerAS":"65002"}`, nil, 409, "duplicate"},
		// The kinds FlexSwitch's labs configure and their nested records
		//: wrong type, out of range, dangling, duplicate.
		{"VlanId as a string", "POST", "/config/Vlan", `{"VlanId":"20"}`, nil, 400, "wrong_type"},
		{"VlanId zero", "POST", "/config/Vlan", `{"VlanId":0}`, nil, 400, "invalid_value"},
		{"VlanId 4095", "POST", "/config/Vlan", `{"VlanId":4095}`, nil, 400, "invalid_value"},
		{"Vlan members not a list", "POST", "/config/Vlan", `{"VlanId":20,"UntagIntfList":"fpPort5"}`, nil, 400, "wrong_type"},
		{"Vlan member not a port name", "POST", "/config/Vlan", `{"VlanId":20,"IntfList":["eth0"]}`, nil, 400, "invalid_value"},
		{"Vlan dangling member", "POST", "/config/Vlan", `{"VlanId":20,"IntfList":["fpPort99"]}`, nil, 400, "dangling_reference"},
		{"Vlan on a broken-out port", "POST", "/config/Vlan", `{"VlanId":20,"IntfList":["fpPort4"]}`, nil, 400, "invalid_value"},
		{"Vlan AutoState", "POST", "/config/Vlan", `{"VlanId":20,"AutoState":"AUTO"}`, nil, 400, "invalid_value"},
		{"Vlan duplicate", "POST", "/config/Vlan", `{"VlanId":10}`, nil, 409, "duplicate"},
		{"port tagged and untagged", "POST", "/config/Vlan", `{"VlanId":20,"IntfList":["fpPort5"],"UntagIntfList":["fpPort5"]}`, nil, 400, "invalid_value"},
		{"port untagged in two VLANs", "POST", "/config/Vlan", `{"VlanId":20,"UntagIntfList":["fpPort7"]}`, nil, 409, "conflict"},
		{"VLAN member with an address", "POST", "/config/Vlan", `{"VlanId":20,"IntfList":["fpPort1"]}`, nil, 409, "conflict"},
		{"address on a VLAN member", "POST", "/config/IPv4Intf", `{"IntfRef":"fpPort8","IpAddr":"10.8.0.1/24"}`, nil, 409, "conflict"},
		{"delete a VLAN in use", "DELETE", "/config/Vlan", `{"VlanId":10}`, nil, 409, "referenced"},
		{"delete a VLAN in use by id", "DELETE", "/config/Vlan/" + ids["vlan"], ``, nil, 409, "referenced"},
		{"address on a missing VLAN", "POST", "/config/IPv4Intf", `{"IntfRef":"vlan30","IpAddr":"10.30.0.1/24"}`, nil, 400, "dangling_reference"},
		{"address on vlan4095", "POST", "/config/IPv4Intf", `{"IntfRef":"vlan4095","IpAddr":"10.30.0.1/24"}`, nil, 400, "invalid_value"},
		{"second address on a VLAN", "POST", "/config/IPv4Intf", `{"IntfRef":"vlan10","IpAddr":"10.11.0.1/24"}`, nil, 409, "duplicate"},
		{"LogicalIntf named like a port", "POST", "/config/LogicalIntf", `{"Name":"fpPort9"}`, nil, 400, "invalid_value"},
		{"LogicalIntf named like a VLAN", "POST", "/config/LogicalIntf", `{"Name":"vlan20"}`, nil, 400, "invalid_value"},
		{"LogicalIntf name too long", "POST", "/config/LogicalIntf", `{"Name":"Loopback12345678"}`, nil, 400, "invalid_value"},
		{"LogicalIntf Type", "POST", "/config/LogicalIntf", `{"Name":"Loopback2","Type":"Tunnel"}`, nil, 400, "invalid_value"},
		{"LogicalIntf duplicate", "POST", "/config/LogicalIntf", `{"Name":"Loopback1"}`, nil, 409, "duplicate"},
		{"delete a LogicalIntf in use", "DELETE", "/config/LogicalIntf", `{"Name":"Loopback1"}`, nil, 409, "referenced"},
		{"NextHop not a list", "POST", "/config/IPv4Route", `{"DestinationNw":"192.168.2.0","NetworkMask":"255.255.255.0","NextHop":{"NextHopIp":"10.10.0.2"}}`, nil, 400, "wrong_type"},
		{"NextHop element not an object", "POST", "/config/IPv4Route", `{"DestinationNw":"192.168.2.0","NetworkMask":"255.255.255.0","NextHop":["10.10.0.2"]}`, nil, 400, "wrong_type"},
		{"NextHop Weight as a string", "POST", "/config/IPv4Route", `{"DestinationNw":"192.168.2.0","NetworkMask":"255.255.255.0","NextHop":[{"NextHopIp":"10.10.0.2","Weight":"1"}]}`, nil, 400, "wrong_type"},
		{"NextHop Weight 256", "POST", "/config/IPv4Route", `{"DestinationNw":"192.168.2.0","NetworkMask":"255.255.255.0","NextHop":[{"NextHopIp":"10.10.0.2","Weight":256}]}`, nil, 400, "invalid_value"},
		{"NextHop unknown sub-field", "POST", "/config/IPv4Route", `{"DestinationNw":"192.168.2.0","NetworkMask":"255.255.255.0","NextHop":[{"NextHopIp":"10.10.0.2","Gateway":"x"}]}`, nil, 400, "unknown_field"},
		{"NextHop without NextHopIp", "POST", "/config/IPv4Route", `{"DestinationNw":"192.168.2.0","NetworkMask":"255.255.255.0","NextHop":[{"Weight":1}]}`, nil, 400, "missing_field"},
		{"NextHop listed twice", "POST", "/config/IPv4Route", `{"DestinationNw":"192.168.2.0","NetworkMask":"255.255.255.0","NextHop":[{"NextHopIp":"10.10.0.2"},{"NextHopIp":"10.10.0.2","Weight":2}]}`, nil, 400, "invalid_value"},
		{"NextHopIntRef not an interface", "POST", "/config/IPv4Route", `{"DestinationNw":"192.168.2.0","NetworkMask":"255.255.255.0","NextHop":[{"NextHopIp":"10.10.0.2","NextHopIntRef":"eth 0"}]}`, nil, 400, "invalid_value"},
		{"route Cost 256", "POST", "/config/IPv4Route", `{"DestinationNw":"192.168.2.0","NetworkMask":"255.255.255.0","Cost":256,"NextHop":[{"NextHopIp":"10.10.0.2"}]}`, nil, 400, "invalid_value"},
		{"route duplicate", "POST", "/config/IPv4Route", `{"DestinationNw":"192.168.1.0","NetworkMask":"255.255.255.0","NextHop":[{"NextHopIp":"10.10.0.3"}]}`, nil, 409, "duplicate"},
		{"Redistribution not a list", "PATCH", "/config/BGPGlobal", `{"Redistribution":"CONNECTED"}`, nil, 400, "wrong_type"},
		{"Redistribution unknown source", "PATCH", "/config/BGPGlobal", `{"Redistribution":[{"Sources":"RIP"}]}`, nil, 400, "invalid_value"},
		{"Redistribution source twice", "PATCH", "/config/BGPGlobal", `{"Redistribution":[{"Sources":"CONNECTED"},{"Sources":"STATIC,connected"}]}`, nil, 400, "invalid_value"},
		{"Redistribution Policy missing", "PATCH", "/config/BGPGlobal", `{"Redistribution":[{"Sources":"STATIC","Policy":"p1"}]}`, nil, 400, "dangling_reference"},
		{"Redistribution Policy read as a command", "PATCH", "/config/BGPGlobal", `{"Redistribution":[{"Sources":"STATIC","Policy":"p1 permit 10"}]}`, nil, 400, "invalid_value"},
		{"policy condition naming a missing set", "POST", "/config/PolicyCondition", `{"Name":"c1","ConditionType":"MatchDstIpPrefix","PrefixSet":"nosuch"}`, nil, 400, "dangling_reference"},
		{"policy condition by protocol", "POST", "/config/PolicyCondition", `{"Name":"c1","ConditionType":"MatchProtocol","Protocol":"STATIC"}`, nil, 400, "invalid_value"},
		{"prefix with host bits", "POST", "/config/PolicyPrefixSet", `{"Name":"s1","PrefixList":[{"Prefix":"10.1.2.3/8"}]}`, nil, 400, "invalid_value"},
		{"prefix range past the family", "POST", "/config/PolicyPrefixSet", `{"Name":"s1","PrefixList":[{"Prefix":"10.0.0.0/8","MaskLengthRange":"8-33"}]}`, nil, 400, "invalid_value"},
		{"policy name with a newline", "POST", "/config/PolicyPrefixSet", `{"Name":"s1\nrouter bgp 1","PrefixList":[{"Prefix":"10.0.0.0/8"}]}`, nil, 400, "invalid_value"},
		{"LLDP interval 1", "PATCH", "/config/LLDPGlobal", `{"TranmitInterval":1}`, nil, 400, "invalid_value"},
		{"LLDP Enable as a string", "PATCH", "/config/LLDPGlobal", `{"Enable":"true"}`, nil, 400, "wrong_type"},
		{"neighbor in a peer group named as an address", "POST", "/config/BGPv4Neighbor", `{"NeighborAddress":"10.0.0.5","PeerAS":"65005","PeerGroup":"10.0.0.1"}`, nil, 400, "invalid_value"},
		{"unnumbered neighbor on no interface", "POST", "/config/BGPv4Neighbor", `{"IntfRef":"no such port","PeerAS":"65005"}`, nil, 400, "invalid_value"},
		{"neighbor IntfRef as a number", "GET", "/config/BGPv4Neighbor", `{"IntfRef":0,"NeighborAddress":"10.0.0.2"}`, nil, 400, "wrong_type"},
		{"patch form: remove a missing element", "PATCH", "/config/Vlan", `{"VlanId":10,"patch":[{"op":"remove","path":"IntfList","value":["fpPort5"]}]}`, nil, 400, "invalid_value"},
		{"patch form: add a dangling port", "PATCH", "/config/Vlan", `{"VlanId":10,"patch":[{"op":"add","path":"IntfList","value":["fpPort99"]}]}`, nil, 400, "dangling_reference"},
		{"patch form: unknown member", "PATCH", "/config/Vlan", `{"VlanId":10,"patch":[{"op":"add","path":"IntfList","value":["fpPort5"],"extra":1}]}`, nil, 400, "unknown_field"},
		{"patch form: capitalised members", "PATCH", "/config/Vlan", `{"VlanId":10,"patch":[{"Op":"add","Path":"IntfList","Value":["fpPort5"]}]}`, nil, 400, "unknown_field"},
		{"patch form: op given twice", "PATCH", "/config/Vlan", `{"VlanId":10,"patch":[{"op":"remove","path":"IntfList","value":["fpPort5"],"op":"add"}]}`, nil, 400, "malformed_json"},
		{"patch form: op not a string", "PATCH", "/config/Vlan", `{"VlanId":10,"patch":[{"op":1,"path":"IntfList","value":["fpPort5"]}]}`, nil, 400, "wrong_type"},
		{"patch form: add a record already there", "PATCH", "/config/BGPGlobal", `{"patch":[{"op":"add","path":"Redistribution","value":[{"Sources":"CONNECTED"}]}]}`, nil, 400, "invalid_value"},
		{"patch form in a candidate: remove a missing element", "PATCH", "/candidates/" + ids["cand"] + "/config/Vlan", `{"VlanId":10,"patch":[{"op":"remove","path":"UntagIntfList","value":"fpPort5"}]}`, nil, 400, "invalid_value"},
		{"patch form in a candidate: untagged twice", "PATCH", "/candidates/" + ids["cand"] + "/config/Vlan", `{"VlanId":10,"patch":[{"op":"add","path":"IntfList","value":"fpPort7"}]}`, nil, 400, "invalid_value"},
		{"patch form in a candidate: a missing object", "PATCH", "/candidates/" + ids["cand"] + "/config/Vlan", `{"VlanId":30,"patch":[{"op":"add","path":"IntfList","value":"fpPort5"}]}`, nil, 404, "not_found"},
		// Size and preconditions.
		{"oversize body", "POST", "/config/NtpServer", big, nil, 413, "body_too_large"},
		{"stale If-Match", "PATCH", "/config/NtpServer", `{"IpAddr":"10.0.0.9","MinPoll":5}`, []string{"If-Match", `"1"`}, 412, "precondition_failed"},
		{"stale If-Match delete", "DELETE", "/config/NtpServer/" + ids["ntp"], ``, []string{"If-Match", `"2"`}, 412, "precondition_failed"},
		{"If-Match on a create", "POST", "/config/NtpServer", `{"IpAddr":"10.0.0.77"}`, []string{"If-Match", `"1"`}, 412, "precondition_failed"},
		{"If-Match * on a create", "POST", "/config/NtpServer", `{"IpAddr":"10.0.0.77"}`, []string{"If-Match", `*`}, 412, "precondition_failed"},
		{"If-Match on a create in a candidate", "POST", "/candidates/" + ids["cand"] + "/config/NtpServer", `{"IpAddr":"10.0.0.77"}`, []string{"If-Match", `"1"`}, 412, "precondition_failed"},
		{"If-Match on an action", "POST", "/action/SaveConfig", `{"FileName":"never-written"}`, []string{"If-Match", `"1"`}, 412, "precondition_failed"},
		{"If-Match on a dry run of an action", "POST", "/action/ResetConfig?dry_run=true", `{}`, []string{"If-Match", `"1"`}, 412, "precondition_failed"},
	}
	if len(tests) < 60 {
		t.Fatalf("only %d bad inputs", len(tests))
	}
	seen := map[string]bool{}
	for _, tt := range tests {
		if seen[tt.name] {
			t.Fatalf("two rows named %q", tt.name)
		}
		seen[tt.name] = true
		t.Run(tt.name, func(t *testing.T) {
			before := s.dump()
			req, _ := http.NewRequest(tt.method, s.url+tt.path, strings.NewReader(tt.body))
			for i := 0; i+1 < len(tt.hdr); i += 2 {
				req.Header.Set(tt.hdr[i], tt.hdr[i+1])
			}
			resp, err := http.DefaultClient.Do(req)
			if err != nil {
				t.Fatal(err)
			}
			data, _ := io.ReadAll(resp.Body)
			resp.Body.Close()
			if resp.StatusCode != tt.status {
				t.Fatalf("status %d, want %d: %s", resp.StatusCode, tt.status, data)
			}
			var body struct {
				Result string
				Error  struct {
					Status  int
					Code    string
					Message string
				}
				ObjectId string
			}
			if err := json.Unmarshal(data, &body); err != nil {
				t.Fatalf("body is not JSON: %q", data)
			}
			if body.Error.Status != tt.status || body.Error.Code != tt.code || body.Error.Message == "" || body.Result != "Error: "+body.Error.Message {
				t.Fatalf("error body %s; want Status %d, Code %q, Result \"Error: <Message>\"", data, tt.status, tt.code)
			}
			if tt.status == 405 && resp.Header.Get("Allow") == "" {
				t.Fatal("405 without an Allow header")
			}
			if tt.code == "duplicate" && tt.name == "duplicate create" && body.ObjectId != ids["ntp"] {
				t.Fatalf("duplicate names ObjectId %q, want the existing %s", body.ObjectId, ids["ntp"])
			}
			if after := s.dump(); !bytes.Equal(before, after) {
				t.Fatal("the store changed")
			}
		})
	}
	// Secrets of refused requests are not in the config log either.
	_, log, _ := s.do("GET", "/state/ConfigLogs", ``)
	raw, _ := json.Marshal(log)
	for _, secret := range []string{"archive-pw", "longenough"} {
		if bytes.Contains(raw, []byte(secret)) {
			t.Fatalf("the config log holds %q", secret)
		}
	}
}

// TestNoOpUpdateMakesNoRevision checks the positive twin of the table: an
// update that changes nothing is a 200 and leaves the store as it was.
func TestNoOpUpdateMakesNoRevision(t *testing.T) {
	s, _ := badInputFixture(t)
	before := s.dump()
	code, _, hdr := s.do("PATCH", "/config/NtpServer", `{"IpAddr":"10.0.0.9","MinPoll":6}`)
	if code != 200 || hdr.Get("ETag") == "" {
		t.Fatalf("no-op update: %d", code)
	}
	if !bytes.Equal(before, s.dump()) {
		t.Fatal("a no-op update changed the store")
	}
}
