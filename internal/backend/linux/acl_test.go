package linux

import (
	"context"
	"os/exec"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/swmgr/swmgr/internal/backend"
	"github.com/swmgr/swmgr/internal/engine"
	"github.com/swmgr/swmgr/internal/model"
	"github.com/swmgr/swmgr/internal/testneed"
)

// aclLab is a switch routing between two hosts: host 1 at 10.41.1.2 on
// fpPort1, host 2 at 10.41.2.2 on fpPort2.
func aclLab(t *testing.T, tweaks ...func(*switchOptions)) (*lab, *sw) {
	t.Helper()
	testneed.Program(t, "nftables", "nft")
	l := newLab(t, 2, KernelOptions{})
	s := startSwitch(t, l, t.TempDir(), tweaks...)
	run(t, "ip", "netns", "exec", l.sw, "sysctl", "-qw", "net.ipv4.ip_forward=1")
	for i := 1; i <= 2; i++ {
		p := "fpPort" + strconv.Itoa(i)
		s.mustCommit(s.edit(backend.Update, "Port", model.Object{"IntfRef": p, "AdminState": "UP"}),
			s.edit(backend.Create, "IPv4Intf", model.Object{"IntfRef": p, "IpAddr": "10.41." + strconv.Itoa(i) + ".1/24"}))
		l.host(i, "ip", "addr", "add", "10.41."+strconv.Itoa(i)+".2/24", "dev", "eth0")
		l.host(i, "ip", "route", "add", "default", "via", "10.41."+strconv.Itoa(i)+".1")
	}
	return l, s
}

// tcpFrom host i to addr:port: "refused" (the packet passed and was
// answered with a reset), "dropped" (no answer within a second) or the
// error.
func tcpFrom(l *lab, i int, addr string, port int) string {
	return tcpIn(l.hosts[i-1], addr, port)
}

// tcpIn is tcpFrom from the namespace ns.
func tcpIn(ns, addr string, port int) string {
	err := exec.Command("ip", "netns", "exec", ns, "timeout", "1", "bash", "-c", "echo > /dev/tcp/"+addr+"/"+strconv.Itoa(port)).Run()
	if ee, ok := err.(*exec.ExitError); ok {
		switch ee.ExitCode() {
		case 124:
			return "dropped"
		case 1:
			return "refused"
		}
	}
	return "unexpected: " + func() string {
		if err == nil {
			return "connected"
		}
		return err.Error()
	}()
}

// ruleCounts are the AclRuleState objects by rule name.
func ruleCounts(t *testing.T, s *sw) map[string]model.Object {
	t.Helper()
	objs, err := s.be.AclRuleStates(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	out := map[string]model.Object{}
	for _, o := range objs {
		out[o.Str("RuleName")] = o
	}
	return out
}

// TestACLOnLinux: a deny rule of an ingress ACL on fpPort1 drops host 1's
// TCP to port 8080 of host 2 and counts it; TCP to another port and ping
// pass; deleting the ACL lets 8080 through again and leaves no table
// behind.
func TestACLOnLinux(t *testing.T) {
	l, s := aclLab(t)
	needPing(t)
	if got := tcpFrom(l, 1, "10.41.2.2", 8080); got != "refused" {
		t.Fatalf("before any ACL, TCP to 8080: %s", got)
	}
	s.mustCommit(
		s.edit(backend.Create, "AclRule", model.Object{"RuleName": "deny-web", "SourceIp": "10.41.1.2", "Proto": "TCP", "L4DstPort": int64(8080), "Action": "Deny"}),
		s.edit(backend.Create, "AclRule", model.Object{"RuleName": "permit-rest"}),
		s.edit(backend.Create, "Acl", model.Object{"AclName": "edge", "Direction": "IN", "IntfList": []string{"fpPort1"}, "RuleNameList": []string{"deny-web", "permit-rest"}}))
	if got := tcpFrom(l, 1, "10.41.2.2", 8080); got != "dropped" {
		t.Fatalf("TCP to 8080 with the deny rule: %s", got)
	}
	if got := tcpFrom(l, 1, "10.41.2.2", 8081); got != "refused" {
		t.Fatalf("TCP to 8081 with the deny rule of 8080: %s", got)
	}
	if !l.ping(1, "10.41.2.2") {
		t.Fatal("ping does not pass an ACL that denies TCP 8080 only")
	}
	c := ruleCounts(t, s)
	if c["deny-web"].Int("MatchedPackets") < 1 || c["deny-web"].Int("MatchedBytes") < 40 || c["deny-web"].Str("Action") != "Deny" || c["deny-web"].Int("Sequence") != 1 {
		t.Fatalf("deny-web's counters: %v", c["deny-web"])
	}
	if c["permit-rest"].Int("MatchedPackets") < 2 { // the SYN to 8081 and the ping
		t.Fatalf("permit-rest's counters: %v", c["permit-rest"])
	}
	s.mustCommit(s.edit(backend.Delete, "Acl", model.Object{"AclName": "edge", "Direction": "IN"}))
	if got := tcpFrom(l, 1, "10.41.2.2", 8080); got != "refused" {
		t.Fatalf("TCP to 8080 after the ACL's delete: %s", got)
	}
	if out := run(t, "ip", "netns", "exec", l.sw, "nft", "list", "table", "netdev", "swmgr_acl"); strings.Contains(out, "chain") {
		t.Fatalf("the deleted ACL left chains:\n%s", out)
	}
}

// TestACLReplacementIsAtomic floods UDP to port 8080 (denied by every
// version of the ACL) and 8081 (allowed) from host 1 while the ACL is
// replaced again and again, each time by rules of another shape: host 2,
// counting with its own nft rule, must receive the 8081 flood and never a
// packet to 8080. A replacement that left a moment without rules (two nft
// runs, a flush then the new rules) lets some through.
func TestACLReplacementIsAtomic(t *testing.T) {
	l, s := aclLab(t)
	run(t, "ip", "netns", "exec", l.hosts[1], "nft", "add table inet count; add chain inet count in { type filter hook input priority 0; }; add rule inet count in udp dport 8080 counter; add rule inet count in udp dport 8081 counter")
	shapes := [][]model.Object{
		{{"RuleName": "a-eq", "Proto": "UDP", "L4DstPort": int64(8080), "Action": "Deny"}},
		{{"RuleName": "b-range", "Proto": "UDP", "L4PortMatch": "RANGE", "L4MinPort": int64(8079), "L4MaxPort": int64(8080), "Action": "Deny"}, {"RuleName": "b-allow", "Proto": "UDP", "L4DstPort": int64(8081)}},
	}
	var names [][]string
	for _, shape := range shapes {
		var n []string
		for _, r := range shape {
			s.mustCommit(s.edit(backend.Create, "AclRule", r))
			n = append(n, r.Str("RuleName"))
		}
		names = append(names, n)
	}
	s.mustCommit(s.edit(backend.Create, "Acl", model.Object{"AclName": "edge", "Direction": "IN", "IntfList": []string{"fpPort1"}, "RuleNameList": names[0]}))

	flood := exec.Command("ip", "netns", "exec", l.hosts[0], "bash", "-c", "while :; do echo x > /dev/udp/10.41.2.2/8080; echo x > /dev/udp/10.41.2.2/8081; done")
	if err := flood.Start(); err != nil {
		t.Fatal(err)
	}
	defer func() { flood.Process.Kill(); flood.Wait() }()
	const replacements = 40
	for i := 1; i <= replacements; i++ {
		s.mustCommit(s.edit(backend.Update, "Acl", model.Object{"AclName": "edge", "Direction": "IN", "RuleNameList": names[i%2]}))
	}
	flood.Process.Kill()
	flood.Wait()
	counted := run(t, "ip", "netns", "exec", l.hosts[1], "nft", "list", "chain", "inet", "count", "in")
	got := map[string]int{}
	for _, line := range strings.Split(counted, "\n") {
		f := strings.Fields(line)
		for j := range f {
			if f[j] == "packets" && j+1 < len(f) && len(f) > 2 {
				n, _ := strconv.Atoi(f[j+1])
				got[f[2]] = n
			}
		}
	}
	if got["8081"] == 0 {
		t.Fatalf("the flood did not run (host 2 counted nothing to 8081):\n%s", counted)
	}
	if got["8080"] != 0 {
		t.Fatalf("%d packets to the denied port 8080 passed during %d replacements of the ACL:\n%s", got["8080"], replacements, counted)
	}
	t.Logf("%d packets to 8081 passed, none to 8080, during %d replacements", got["8081"], replacements)
}

// TestControlPlaneACLKeepsLoopback: a control-plane rule that denies the
// SSH listener's port to every source drops host 1's connections to the
// switch, while the switch's own connections over lo still pass (the
// loopback's accept comes before every rule); deleting the rule lets
// host 1 in again.
func TestControlPlaneACLKeepsLoopback(t *testing.T) {
	l, s := aclLab(t, func(o *switchOptions) { o.ControlPlanePorts = map[string]int{"SSH": 2222} })
	run(t, "ip", "-n", l.sw, "addr", "add", "10.41.99.1/32", "dev", "lo")
	if got := tcpFrom(l, 1, "10.41.1.1", 2222); got != "refused" {
		t.Fatalf("before the rule, host 1 to the switch's 2222: %s", got)
	}
	s.mustCommit(s.edit(backend.Create, "ControlPlaneAclRule", model.Object{"Name": "no-ssh", "Sequence": int64(10), "Service": "SSH", "Action": "Deny"}))
	if got := tcpFrom(l, 1, "10.41.1.1", 2222); got != "dropped" {
		t.Fatalf("with a deny-all rule, host 1 to the switch's 2222: %s", got)
	}
	for _, addr := range []string{"127.0.0.1", "10.41.99.1", "10.41.1.1"} {
		if got := tcpIn(l.sw, addr, 2222); got != "refused" {
			t.Fatalf("with a deny-all rule, the switch to its own %s:2222 over lo: %s", addr, got)
		}
	}
	err := s.commit(s.edit(backend.Create, "ControlPlaneAclRule", model.Object{"Name": "gnmi", "Sequence": int64(20), "Service": "GNMI"}))
	if err == nil || !strings.Contains(err.Error(), "runs no GNMI listener") {
		t.Fatalf("a rule for a listener the switch does not run: %v", err)
	}
	s.mustCommit(s.edit(backend.Delete, "ControlPlaneAclRule", model.Object{"Name": "no-ssh"}))
	if got := tcpFrom(l, 1, "10.41.1.1", 2222); got != "refused" {
		t.Fatalf("after the rule's delete, host 1 to the switch's 2222: %s", got)
	}
}

// TestVMACLOnLAGAndVlan (in the VM: bonding, VLAN-filtering bridges and
// 802.1Q) binds an IN ACL to a static LAG of fpPort1 and fpPort2 and an
// OUT ACL to the VLAN interface vlan10 of fpPort3: host 1 (bonded on the
// LAG) is refused TCP 8080 by the LAG's ACL and, toward host 3 behind
// vlan10, TCP 9090 by the SVI's; other ports pass; both rules
// count. Deleting the LAG with its ACL and the VLAN with its ACL in one
// commit leaves no chain (the hooks' devices go in the same commit).
func TestVMACLOnLAGAndVlan(t *testing.T) {
	testneed.Program(t, "nftables", "nft")
	l := newLab(t, 3, KernelOptions{})
	l.k.Close()
	l.k = nil
	s := startSwitch(t, l, t.TempDir())
	k := s.be.Kernel()
	needFeature(t, k, k.Features().Bond && k.Features().BridgeVLAN && k.Features().VLAN, "bonding, VLAN-filtering bridges and 802.1Q")
	run(t, "ip", "netns", "exec", l.sw, "sysctl", "-qw", "net.ipv4.ip_forward=1")
	var edits []engine.Edit
	for i := 1; i <= 3; i++ {
		edits = append(edits, s.edit(backend.Update, "Port", model.Object{"IntfRef": "fpPort" + strconv.Itoa(i), "AdminState": "UP"}))
	}
	edits = append(edits,
		s.edit(backend.Create, "LaPortChannel", model.Object{"IntfRef": "PortChannel1", "IntfRefList": []string{"fpPort1", "fpPort2"}, "LagType": int64(model.LagTypeStatic)}),
		s.edit(backend.Create, "IPv4Intf", model.Object{"IntfRef": "PortChannel1", "IpAddr": "10.42.1.1/24"}),
		s.edit(backend.Create, "Vlan", model.Object{"VlanId": int64(10), "UntagIntfList": []string{"fpPort3"}}),
		s.edit(backend.Create, "IPv4Intf", model.Object{"IntfRef": "vlan10", "IpAddr": "10.42.3.1/24"}),
		s.edit(backend.Create, "AclRule", model.Object{"RuleName": "deny-8080", "Proto": "TCP", "L4DstPort": int64(8080), "Action": "Deny"}),
		s.edit(backend.Create, "AclRule", model.Object{"RuleName": "deny-9090", "Proto": "TCP", "L4DstPort": int64(9090), "Action": "Deny"}),
		s.edit(backend.Create, "Acl", model.Object{"AclName": "lag-in", "Direction": "IN", "IntfList": []string{"PortChannel1"}, "RuleNameList": []string{"deny-8080"}}),
		s.edit(backend.Create, "Acl", model.Object{"AclName": "svi-out", "Direction": "OUT", "IntfList": []string{"vlan10"}, "RuleNameList": []string{"deny-9090"}}))
	s.mustCommit(edits...)

	// Host 1: both far ends in one namespace, a static bond.
	h1, h2 := l.hosts[0], l.hosts[1]
	run(t, "ip", "-n", h2, "link", "set", "eth0", "down")
	run(t, "ip", "-n", h2, "link", "set", "eth0", "name", "eth1")
	run(t, "ip", "-n", h2, "link", "set", "eth1", "netns", h1)
	l.host(1, "ip", "link", "add", "bond0", "type", "bond", "mode", "balance-xor", "miimon", "100")
	for _, e := range []string{"eth0", "eth1"} {
		l.host(1, "ip", "link", "set", e, "down")
		l.host(1, "ip", "link", "set", e, "master", "bond0")
	}
	l.host(1, "ip", "link", "set", "bond0", "up")
	l.host(1, "ip", "addr", "add", "10.42.1.2/24", "dev", "bond0")
	l.host(1, "ip", "route", "add", "default", "via", "10.42.1.1")
	l.host(3, "ip", "addr", "add", "10.42.3.2/24", "dev", "eth0")
	l.host(3, "ip", "route", "add", "default", "via", "10.42.3.1")
	if !eventually(20*time.Second, func() bool { return tcpFrom(l, 1, "10.42.3.2", 8081) == "refused" }) {
		t.Fatalf("host 1 does not reach host 3 through the LAG and vlan10: %s", tcpFrom(l, 1, "10.42.3.2", 8081))
	}
	for port, want := range map[int]string{8080: "dropped", 9090: "dropped", 8082: "refused"} {
		if got := tcpFrom(l, 1, "10.42.3.2", port); got != want {
			t.Errorf("host 1 to host 3's TCP %d: %s, want %s", port, got, want)
		}
	}
	c := ruleCounts(t, s)
	if c["deny-8080"].Int("MatchedPackets") < 1 || c["deny-9090"].Int("MatchedPackets") < 1 {
		t.Errorf("counters: %v", c)
	}
	s.mustCommit(
		s.edit(backend.Delete, "Acl", model.Object{"AclName": "lag-in", "Direction": "IN"}),
		s.edit(backend.Delete, "Acl", model.Object{"AclName": "svi-out", "Direction": "OUT"}),
		s.edit(backend.Delete, "IPv4Intf", model.Object{"IntfRef": "PortChannel1"}),
		s.edit(backend.Delete, "IPv4Intf", model.Object{"IntfRef": "vlan10"}),
		s.edit(backend.Delete, "LaPortChannel", model.Object{"IntfRef": "PortChannel1"}),
		s.edit(backend.Delete, "Vlan", model.Object{"VlanId": int64(10)}))
	if out := run(t, "ip", "netns", "exec", l.sw, "nft", "list", "table", "netdev", "swmgr_acl"); strings.Contains(out, "chain") {
		t.Fatalf("the deleted ACLs left chains:\n%s", out)
	}
}
