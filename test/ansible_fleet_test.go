package test

import (
	"fmt"
	"strings"
	"testing"
)

// The fleet role with one switch that refuses the change (its MTU, a
// templated number, is out of range) and one whose address answers
// nothing: nothing is committed anywhere, and the report says exactly
// which switch refused (with the switch's reason), which was unreachable
// (one line naming its address), and that the others were not committed
// because of them. The numbers, given as strings, reach the switches as
// numbers.
func TestAnsibleFleetRefusalAndUnreachable(t *testing.T) {
	env := ansibleEnv(t)
	servers := []*server{startServer(t, ""), startServer(t, ""), startServer(t, "")}
	dead := freeAddr(t) // nothing listens there
	inv := "all:\n  children:\n    switches:\n      hosts:\n"
	for i, s := range servers {
		mtu := 9000
		if i == 1 {
			mtu = 99999 // out of range: sw2 refuses
		}
		// Quoted: a string, as an inventory fed from a CMDB has it.
		inv += fmt.Sprintf("        sw%d: {swmgr_connection: {url: \"http://%s\"}, port_mtu: \"%d\"}\n", i+1, s.addr, mtu)
	}
	deadSwitch := fmt.Sprintf("        sw4: {swmgr_connection: {url: \"https://%s\", timeout: 5}, port_mtu: \"9000\"}\n", dead)
	inv += deadSwitch
	inv += "      vars:\n        ansible_connection: local\n"
	change := `{"fleet_comment": "fleet mtu", "fleet_confirm_seconds": 60,
 "fleet_resources": [{"kind": "Port", "config": [{"intf_ref": "fpPort1", "mtu": "{{ port_mtu }}", "admin_state": "UP"}]}]}`
	before := make([]int, len(servers))
	for i, s := range servers {
		before[i] = runningRevisionOf(t, s)
	}
	r := runPlaybook(t, env, inv, "swmgr.switch.fleet_change", "-e", change)

	reports := map[string]string{}
	for _, h := range []string{"sw1", "sw2", "sw3", "sw4"} {
		reports[h] = fmt.Sprint(r.task("Report", h)["msg"])
	}
	if m := reports["sw2"]; !strings.Contains(m, "sw2: REFUSED the change: ") || !strings.Contains(m, "Mtu") || !strings.Contains(m, "99999") {
		t.Errorf("sw2's report: %q; want it refused, with the switch's reason", m)
	}
	if m := reports["sw4"]; !strings.Contains(m, "sw4: UNREACHABLE: cannot reach https://"+dead) || strings.Contains(m, "Traceback") || strings.Contains(m, "\n") {
		t.Errorf("sw4's report: %q; want one line naming its address", m)
	}
	for _, h := range []string{"sw1", "sw3"} {
		if m := reports[h]; !strings.Contains(m, h+": not committed (sw2 refused, sw4 unreachable)") {
			t.Errorf("%s's report: %q; want not committed because of sw2 and sw4", h, m)
		}
	}
	summary := fmt.Sprint(r.task("Report the fleet", "sw1")["msg"])
	if want := "fleet switches: refused: sw2; unreachable: sw4; not committed: sw1, sw3;"; summary != want {
		t.Errorf("the fleet's report: %q, want %q", summary, want)
	}
	failed := fmt.Sprint(r.task("Fail the play when the fleet did not succeed", "sw1")["msg"])
	if !strings.Contains(failed, "not confirmed anywhere (sw2 refused, sw4 unreachable)") {
		t.Errorf("the play's failure: %q", failed)
	}
	for _, task := range r.failures() {
		if strings.Contains(task, "ansible_failed_task") || strings.Contains(task, "undefined") {
			t.Errorf("the role's own error path failed: %s", task)
		}
	}
	for i, s := range servers {
		if got := runningRevisionOf(t, s); got != before[i] {
			t.Errorf("sw%d: revision %d after a refused fleet change; want %d (nothing committed)", i+1, got, before[i])
		}
	}
	if t.Failed() {
		t.Logf("%s", tail(r.raw, 6000))
	}

	// The same change without the refusal and the dead switch: the
	// templated MTU reaches each switch as a number.
	inv = strings.Replace(strings.Replace(inv, `port_mtu: "99999"`, `port_mtu: "9000"`, 1), deadSwitch, "", 1)
	r = runPlaybook(t, env, inv, "swmgr.switch.fleet_change", "-e", change)
	if f := r.failures(); len(f) > 0 {
		t.Fatalf("the fleet change failed: %v\n%s", f, tail(r.raw, 4000))
	}
	for i, s := range servers {
		port := s.expect(t, 200, "GET", "/config/Port?IntfRef=fpPort1", "").object()
		if port["Mtu"] != float64(9000) {
			t.Errorf("sw%d: Mtu %v, want 9000", i+1, port["Mtu"])
		}
	}
}

// swmgr_bgpv4_neighbor addresses a neighbor by its address alone (Vrf and
// IntfRef take the model's defaults, "default" and ""), and values given in
// the wrong type for the model (a number for the string PeerAS, "true" for
// the boolean MultiHopEnable, "4" for the integer MultiHopTTL) reach the
// switch in the right one.
func TestAnsibleNeighborByAddressWithTemplatedValues(t *testing.T) {
	env := ansibleEnv(t)
	s := startServer(t, "")
	s.expect(t, 200, "PATCH", "/config/BGPGlobal", `{"ASNum":"65001","RouterId":"10.0.0.1"}`)
	play := playHeader + `    - name: add the neighbor by its address
      swmgr.switch.swmgr_bgpv4_neighbor:
        config:
          - neighbor_address: 10.1.1.2
            peer_as: 65002
            multi_hop_enable: "true"
            multi_hop_ttl: "{{ '4' }}"
    - name: change it by its address
      swmgr.switch.swmgr_bgpv4_neighbor:
        config:
          - neighbor_address: 10.1.1.2
            description: core
      register: changed_again
    - name: delete it by its address
      swmgr.switch.swmgr_bgpv4_neighbor:
        state: deleted
        config:
          - neighbor_address: 10.1.1.2
      register: deleted
`
	r := runPlaybook(t, env, inventoryOf(s), play)
	if f := r.failures(); len(f) > 0 {
		t.Fatalf("the play failed: %v\n%s", f, tail(r.raw, 3000))
	}
	revs := s.listAll(t, "/revisions", 100)
	var created map[string]any
	for _, rev := range revs {
		if strings.Contains(jsonOf(rev), "MultiHopTTL") && strings.Contains(jsonOf(rev), `"create"`) {
			created = rev
		}
	}
	if created == nil || !strings.Contains(jsonOf(created), `"MultiHopTTL":4`) || !strings.Contains(jsonOf(created), `"MultiHopEnable":true`) || !strings.Contains(jsonOf(created), `"PeerAS":"65002"`) {
		t.Errorf("the neighbor as created: %s", jsonOf(created))
	}
	if r.task("change it by its address", "sw1")["changed"] != true || r.task("delete it by its address", "sw1")["changed"] != true {
		t.Errorf("the change and the delete by address: %v %v", r.task("change it by its address", "sw1"), r.task("delete it by its address", "sw1"))
	}
	if n := len(s.listAll(t, "/config/BGPv4Neighbors", 10)); n != 0 {
		t.Errorf("%d neighbors left after the delete", n)
	}
}
