package test

import (
	"fmt"
	"io"
	"net/http"
	"regexp"
	"slices"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/swmgr/swmgr/internal/frr/frrtest"
)

// policyDocument is an ApplyConfig body (one commit) of a PolicyPrefixSet
// of 1,000 entries, the policy that denies them and the neighbor's
// AdjRIBInFilter naming it; the set's prefixes differ from cycle to cycle,
// and with deny it holds the peer's prefix, whose route then leaves the
// switch.
func policyDocument(cycle int, deny bool) string {
	var entries []map[string]any
	for i := range 1000 {
		entries = append(entries, map[string]any{"Prefix": fmt.Sprintf("10.%d.%d.0/24", 100+cycle, i%250), "MaskLengthRange": fmt.Sprintf("%d-%d", 24, 24+i/250)})
	}
	if deny {
		entries[999] = map[string]any{"Prefix": "198.18.9.0/24", "MaskLengthRange": "exact"}
	}
	const name = "BIG"
	return jsonOf(map[string]any{"ConfigData": map[string]any{
		"PolicyPrefixSet": []any{map[string]any{"Name": name, "PrefixList": entries}},
		"PolicyCondition": []any{map[string]any{"Name": "IN-" + name, "ConditionType": "MatchDstIpPrefix", "PrefixSet": name}},
		"PolicyStmt": []any{map[string]any{"Name": "DENY-" + name, "Conditions": []string{"IN-" + name}, "Action": "deny"},
			map[string]any{"Name": "REST", "Conditions": []string{}, "Action": "permit"}},
		"PolicyDefinition": []any{map[string]any{"Name": "P" + name, "Priority": 1, "MatchType": "any",
			"StatementList": []any{map[string]any{"Priority": 1, "Statement": "DENY-" + name}, map[string]any{"Priority": 2, "Statement": "REST"}}}},
		"BGPv4Neighbor": []any{map[string]any{"NeighborAddress": "10.242.0.2", "PeerAS": "65002", "HoldTime": 9, "KeepaliveTime": 3, "ConnectRetryTime": 1,
			"AdjRIBInFilter": "P" + name}},
	}})
}

// TestKill9MidPolicyCommitConverges: swmgr on the Linux backend, its FRR
// peering with a peer FRR. Each cycle replaces (ApplyConfig, one commit) a
// prefix set of 1,000 entries with other prefixes, with the policy and the
// neighbor's filter naming it, and swmgr is killed with -9 part of the way
// through the commit (a fraction of the time the first, complete commit
// took). After each restart FRR, the kernel and the store agree: FRR runs
// exactly the stored set's prefixes and the stored neighbor's filter, and
// the peer's route is in the kernel table exactly when the stored set
// denies it not.
func TestKill9MidPolicyCommitConverges(t *testing.T) {
	lab := frrtest.New(t, frrtest.Options{Prefix: "rtp", SwitchPort: "rtp1", PeerPort: "eth0", Subnet: "10.242.0", Announce: "198.18.9.1/24"})
	sw := lab.SwitchNS
	flags, frrDir := frrServerFlags(t, lab)
	data := t.TempDir()

	// A restart replays the 1,000 entries into FRR before swmgr serves.
	const startWithin = 5 * time.Minute
	s := startServer(t, data, flags...)
	s.expect(t, 200, "PATCH", "/config/Port", `{"IntfRef":"fpPort1","AdminState":"UP"}`)
	s.expect(t, 201, "POST", "/config/IPv4Intf", `{"IntfRef":"fpPort1","IpAddr":"10.242.0.1/30"}`)
	s.expect(t, 200, "PATCH", "/config/BGPGlobal", `{"Vrf":"default","ASNum":"65001","RouterId":"10.242.0.1"}`)
	s.expect(t, 201, "POST", "/config/BGPv4Neighbor", `{"NeighborAddress":"10.242.0.2","PeerAS":"65002","HoldTime":9,"KeepaliveTime":3,"ConnectRetryTime":1}`)

	// The first commit runs to its end: how long one takes.
	start := time.Now()
	if err := applyLong(s, policyDocument(0, true)); err != nil {
		t.Fatal(err)
	}
	took := time.Since(start)
	t.Logf("one commit of 1,000 entries: %v", took)
	agree(t, s, sw, frrDir)

	const cycles = 3
	interrupted := 0
	for cycle := 1; cycle <= cycles; cycle++ {
		done := make(chan error, 1)
		go func() {
			done <- applyLong(s, policyDocument(cycle, cycle%2 == 0))
		}()
		// Part of the way through: a quarter, half, ... of the first's time.
		time.Sleep(took * time.Duration(cycle) / (cycles + 1))
		s.kill9()
		if err := <-done; err != nil {
			interrupted++
		}
		s = startServerWithin(t, startWithin, data, flags...)
		agree(t, s, sw, frrDir)
	}
	t.Logf("%d of %d commits were cut off by the kill", interrupted, cycles)
}

// applyLong runs ApplyConfig with body, waiting as long as FRR takes to
// enter 1,000 prefix-list entries (tens of seconds on a loaded machine;
// the harness's client gives up after 30).
func applyLong(s *server, body string) error {
	c := &http.Client{Timeout: 5 * time.Minute}
	resp, err := c.Post(s.base+"/action/ApplyConfig", "application/json", strings.NewReader(body))
	if err != nil {
		return err
	}
	defer resp.Body.Close()
	raw, _ := io.ReadAll(resp.Body)
	if resp.StatusCode != 200 {
		return fmt.Errorf("ApplyConfig: %d %s", resp.StatusCode, raw)
	}
	return nil
}

var prefixListRE = regexp.MustCompile(`(?m)^ip prefix-list BIG seq [0-9]+ permit (\S+)`)

// agree checks that FRR runs the stored policies and filter, and that the
// kernel has the peer's route exactly when the stored filter permits it.
func agree(t *testing.T, s *server, sw, frrDir string) {
	t.Helper()
	var stored []string // the stored set's prefixes, sorted
	denied := false
	for _, o := range listObjects(t, s, "/config/PolicyPrefixSets") {
		entries, _ := o["PrefixList"].([]any)
		for _, e := range entries {
			p := e.(map[string]any)["Prefix"].(string)
			stored = append(stored, p)
			denied = denied || p == "198.18.9.0/24"
		}
	}
	sort.Strings(stored)
	ns := listObjects(t, s, "/config/BGPv4Neighbors")
	if len(ns) != 1 {
		t.Fatalf("stored neighbors: %v", ns)
	}
	filter, _ := ns[0]["AdjRIBInFilter"].(string)
	denied = denied && filter != ""
	vtysh := func(cmd string) string {
		return frrtest.Run(t, "ip", "netns", "exec", sw, "vtysh", "--vty_socket", frrDir, "-c", cmd)
	}
	// FRR gets the store's configuration at start: wait for it, then
	// compare.
	var running string
	deadline := time.Now().Add(60 * time.Second)
	for {
		running = vtysh("show running-config")
		var ran []string
		for _, m := range prefixListRE.FindAllStringSubmatch(running, -1) {
			ran = append(ran, m[1])
		}
		sort.Strings(ran)
		wantFilter := filter == "" && !strings.Contains(running, "route-map P") ||
			filter != "" && strings.Contains(running, "neighbor 10.242.0.2 route-map "+filter+" in")
		if slices.Equal(ran, stored) && wantFilter {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("FRR runs %d prefix-list entries (filter as stored: %v); the store holds %d and filter %q", len(prefixListRE.FindAllString(running, -1)), strings.Contains(running, "route-map "+filter+" in"), len(stored), filter)
		}
		time.Sleep(300 * time.Millisecond)
	}
	deadline = time.Now().Add(60 * time.Second)
	for {
		kernel := strings.Contains(frrtest.Run(t, "ip", "-n", sw, "route", "show", "198.18.9.0/24"), "proto bgp")
		if kernel == !denied && strings.Contains(string(s.do(t, "GET", "/state/BGPv4Neighbors", "").raw), `"SessionState":6`) {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("the kernel has the peer's route: %v; the stored filter %q denies it: %v", kernel, filter, denied)
		}
		time.Sleep(300 * time.Millisecond)
	}
}

// listObjects is every object of a list read (one page: the tests here
// hold few).
func listObjects(t *testing.T, s *server, path string) []map[string]any {
	t.Helper()
	r := s.expect(t, 200, "GET", path+"?Count=1000", "")
	var out []map[string]any
	objs, _ := r.body["Objects"].([]any)
	for _, o := range objs {
		m, _ := o.(map[string]any)
		obj, _ := m["Object"].(map[string]any)
		out = append(out, obj)
	}
	return out
}
