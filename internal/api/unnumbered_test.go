package api

import (
	"strings"
	"testing"
)

// TestUnnumberedValidation: an unnumbered interface borrows the IPv4
// address of a loopback of its VRF and has none of its own; what would
// break that is refused with its status, a message naming the interfaces,
// and nothing changed. A lent address changes in one commit with its
// borrowers made again; the simulated switch's state says the address
// borrowed.
func TestUnnumberedValidation(t *testing.T) {
	s := newTxnServer(t)
	for _, c := range []struct{ method, path, body string }{
		{"POST", "/config/Vrf", `{"Vrf":"red"}`},
		{"POST", "/config/LogicalIntf", `{"Name":"Loopback1"}`},
		{"POST", "/config/IPv4Intf", `{"IntfRef":"Loopback1","IpAddr":"10.255.0.1/32"}`},
		{"POST", "/config/LogicalIntf", `{"Name":"Loopback2"}`},
		{"POST", "/config/IPv4Intf", `{"IntfRef":"Loopback2","IpAddr":"10.255.0.2/32","Vrf":"red"}`},
		{"POST", "/config/LogicalIntf", `{"Name":"Loopback3"}`},
		{"POST", "/config/IPv4Intf", `{"IntfRef":"fpPort1","IpAddr":"10.0.0.1/24"}`},
		{"POST", "/config/IPv4Unnumbered", `{"IntfRef":"fpPort2","Interface":"Loopback1"}`},
		{"POST", "/config/IPv4Unnumbered", `{"IntfRef":"fpPort3","Interface":"Loopback1"}`},
		{"POST", "/config/IPv4Unnumbered", `{"IntfRef":"fpPort4","Interface":"Loopback2","Vrf":"red"}`},
		{"POST", "/config/Vlan", `{"VlanId":10,"IntfList":["fpPort6"]}`},
		{"POST", "/config/LaPortChannel", `{"IntfRef":"PortChannel1","IntfRefList":["fpPort7"]}`},
	} {
		if code, body, _ := s.do(c.method, c.path, c.body); code != 201 {
			t.Fatalf("%s %s %s: %d %v", c.method, c.path, c.body, code, body)
		}
	}
	for _, tt := range []struct {
		name, method, path, body string
		status                   int
		code, says               string
	}{
		{"a borrower with its own address", "POST", "/config/IPv4Unnumbered", `{"IntfRef":"fpPort1","Interface":"Loopback1"}`, 400, "invalid_value", "fpPort1 has an IPv4 address of its own"},
		{"from a loopback without address", "POST", "/config/IPv4Unnumbered", `{"IntfRef":"fpPort5","Interface":"Loopback3"}`, 400, "invalid_value", "Loopback3 has no IPv4 address"},
		{"from a port", "POST", "/config/IPv4Unnumbered", `{"IntfRef":"fpPort5","Interface":"fpPort1"}`, 400, "dangling_reference", "fpPort1"},
		{"from another VRF's loopback", "POST", "/config/IPv4Unnumbered", `{"IntfRef":"fpPort5","Interface":"Loopback2"}`, 400, "invalid_value", `in VRF "red"`},
		{"into a VRF that does not exist", "POST", "/config/IPv4Unnumbered", `{"IntfRef":"fpPort5","Interface":"Loopback1","Vrf":"blue"}`, 400, "dangling_reference", "blue"},
		{"a loopback borrowing", "POST", "/config/IPv4Unnumbered", `{"IntfRef":"Loopback3","Interface":"Loopback1"}`, 400, "invalid_value", "Loopback3 is a loopback"},
		{"without a loopback", "POST", "/config/IPv4Unnumbered", `{"IntfRef":"fpPort5"}`, 400, "missing_field", "Interface"},
		{"delete a lent address", "DELETE", "/config/IPv4Intf", `{"IntfRef":"Loopback1"}`, 409, "referenced", "fpPort2, fpPort3 borrow its address"},
		{"change a lent address", "PATCH", "/config/IPv4Intf", `{"IntfRef":"Loopback1","IpAddr":"10.255.0.9/32"}`, 409, "referenced", "fpPort2, fpPort3 borrow its address"},
		{"move a lent address to another VRF", "PATCH", "/config/IPv4Intf", `{"IntfRef":"Loopback1","Vrf":"red"}`, 409, "invalid_value", "fpPort2, fpPort3 borrow its address"},
		{"an address on a borrower", "POST", "/config/IPv4Intf", `{"IntfRef":"fpPort2","IpAddr":"10.2.0.1/24"}`, 409, "invalid_value", "fpPort2 borrows Loopback1's address"},
		{"delete a lending loopback", "DELETE", "/config/LogicalIntf", `{"Name":"Loopback2"}`, 409, "referenced", "Loopback2"},
		{"a VLAN member borrowing", "POST", "/config/IPv4Unnumbered", `{"IntfRef":"fpPort6","Interface":"Loopback1"}`, 400, "invalid_value", "fpPort6 is a member of vlan10"},
		{"a borrower into a VLAN", "POST", "/config/Vlan", `{"VlanId":20,"IntfList":["fpPort2"]}`, 409, "conflict", "port fpPort2 borrows a loopback's address"},
		{"a LAG member borrowing", "POST", "/config/IPv4Unnumbered", `{"IntfRef":"fpPort7","Interface":"Loopback1"}`, 400, "invalid_value", "fpPort7 is a member of PortChannel1"},
		{"a borrower into a LAG", "PATCH", "/config/LaPortChannel", `{"IntfRef":"PortChannel1","IntfRefList":["fpPort7","fpPort3"]}`, 409, "conflict", "port fpPort3 borrows a loopback's address"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			before := s.dump()
			code, body, _ := s.do(tt.method, tt.path, tt.body)
			e, _ := body["Error"].(map[string]any)
			msg, _ := e["Message"].(string)
			if code != tt.status || e["Code"] != tt.code || !strings.Contains(msg, tt.says) {
				t.Errorf("%d %v %q, want %d %s saying %q", code, e["Code"], msg, tt.status, tt.code, tt.says)
			}
			if string(s.dump()) != string(before) {
				t.Errorf("the refused request changed the store")
			}
		})
	}

	// The simulated switch says what each borrows.
	code, body, _ := s.do("GET", "/state/IPv4Unnumbered?IntfRef=fpPort4", "")
	if code != 200 || body["Object"].(map[string]any)["IpAddr"] != "10.255.0.2/32" {
		t.Errorf("fpPort4's state: %d %v, want IpAddr 10.255.0.2/32", code, body)
	}

	// The lent address changes in one commit that makes its borrowers again.
	code, body, _ = s.do("POST", "/candidates", `{"Comment":"renumber Loopback1"}`)
	if code != 201 {
		t.Fatalf("candidate: %d %v", code, body)
	}
	cand := "/candidates/" + body["CandidateId"].(string)
	for _, c := range []struct{ method, path, body string }{
		{"DELETE", "/config/IPv4Unnumbered", `{"IntfRef":"fpPort2"}`},
		{"DELETE", "/config/IPv4Unnumbered", `{"IntfRef":"fpPort3"}`},
		{"PATCH", "/config/IPv4Intf", `{"IntfRef":"Loopback1","IpAddr":"10.255.0.9/32"}`},
		{"POST", "/config/IPv4Unnumbered", `{"IntfRef":"fpPort2","Interface":"Loopback1"}`},
		{"POST", "/config/IPv4Unnumbered", `{"IntfRef":"fpPort3","Interface":"Loopback1"}`},
	} {
		if code, body, _ := s.do(c.method, cand+c.path, c.body); code >= 300 {
			t.Fatalf("stage %s %s %s: %d %v", c.method, c.path, c.body, code, body)
		}
	}
	if code, body, _ := s.do("POST", cand+"/commit", `{}`); code != 200 {
		t.Fatalf("commit: %d %v", code, body)
	}
	code, body, _ = s.do("GET", "/state/IPv4Unnumbered?IntfRef=fpPort3", "")
	if code != 200 || body["Object"].(map[string]any)["IpAddr"] != "10.255.0.9/32" {
		t.Errorf("fpPort3's state after the renumbering: %d %v, want IpAddr 10.255.0.9/32", code, body)
	}
}
