// ACLs on the Linux backend through the binary: a replacement under
// kill -9, 200 rules in one commit beside nft's own load of them, and the
// refusals of bad ACLs.

package test

import (
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"os"
	"os/exec"
	"slices"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/swmgr/swmgr/internal/testneed"
)

// nftACLRules are the rule names (comments of the counted rules) of an
// ACL's chain in the namespace, in order; nil when the chain is missing.
func nftACLRules(t *testing.T, ns, chain string) []string {
	t.Helper()
	out, err := exec.Command("ip", "netns", "exec", ns, "nft", "-j", "list", "chain", "netdev", "swmgr_acl", chain).Output()
	if err != nil {
		return nil
	}
	var doc struct {
		Nftables []struct {
			Rule *struct {
				Comment string            `json:"comment"`
				Expr    []json.RawMessage `json:"expr"`
			} `json:"rule"`
		} `json:"nftables"`
	}
	if err := json.Unmarshal(out, &doc); err != nil {
		t.Fatal(err)
	}
	names := []string{}
	for _, it := range doc.Nftables {
		if it.Rule == nil {
			continue
		}
		for _, e := range it.Rule.Expr {
			if strings.Contains(string(e), `"counter"`) {
				names = append(names, it.Rule.Comment)
			}
		}
	}
	return names
}

// storedACLRules is the RuleNameList of ACL name (IN) in the store.
func storedACLRules(t *testing.T, s *server, name string) []string {
	t.Helper()
	for _, e := range s.listAll(t, "/config/Acls", 100) {
		o := e["Object"].(map[string]any)
		if o["AclName"] == name && o["Direction"] == "IN" {
			var out []string
			for _, r := range o["RuleNameList"].([]any) {
				out = append(out, r.(string))
			}
			return out
		}
	}
	return nil
}

// aclRuleSet is n rules named prefix-1..prefix-n denying TCP to ports
// from base on, as candidate edits.
func aclRuleSet(prefix string, n, base int) (names []string, edits []map[string]any) {
	for i := 1; i <= n; i++ {
		name := fmt.Sprintf("%s-%d", prefix, i)
		names = append(names, name)
		edits = append(edits, map[string]any{"Method": "POST", "Path": "/config/AclRule",
			"Body": (map[string]any{"RuleName": name, "SourceIp": fmt.Sprintf("10.%d.%d.0", i/250, i%250), "SourceMask": "24", "Proto": "TCP", "L4DstPort": base + i, "Action": "Deny"})})
	}
	return names, edits
}

// commitEdits stages edits in a candidate and commits them: one commit.
func commitEdits(t *testing.T, s *server, edits []map[string]any) time.Duration {
	t.Helper()
	c := s.expect(t, 201, "POST", "/candidates", `{"Comment":"acl"}`)
	id := c.str("CandidateId")
	s.expect(t, 200, "POST", "/candidates/"+id+"/edits", jsonOf(map[string]any{"Edits": edits}))
	start := time.Now()
	s.expect(t, 200, "POST", "/candidates/"+id+"/commit", `{"Comment":"acl"}`)
	return time.Since(start)
}

func linuxServer(t *testing.T, dir, ns string) *server {
	return startServer(t, dir, "--backend", "linux", "--netns", ns, "--bgp", "sim", "--ntp", "sim", "--system", "sim")
}

// TestLinuxKill9MidACLReplacement replaces an ACL on fpPort1 back and
// forth between two lists of 60 rules as fast as it can, and kills swmgr
// without warning at a random moment: while it is dead the kernel holds
// one of the two lists whole (nft's transaction: never none, never a mix),
// and after the restart the kernel holds the list the store has.
func TestLinuxKill9MidACLReplacement(t *testing.T) {
	testneed.Program(t, "nftables", "nft")
	ns := kill9Lab(t)
	dir := t.TempDir()
	s := linuxServer(t, dir, ns)
	a, edits := aclRuleSet("a", 60, 1000)
	b, more := aclRuleSet("b", 60, 2000)
	edits = append(append(edits, more...), map[string]any{"Method": "POST", "Path": "/config/Acl",
		"Body": (map[string]any{"AclName": "edge", "Direction": "IN", "IntfList": []string{"fpPort1"}, "RuleNameList": a})})
	commitEdits(t, s, edits)
	lists := [][]string{a, b}
	whole := func(got []string) bool { return slices.Equal(got, a) || slices.Equal(got, b) }
	seed := uint64(time.Now().UnixNano())
	rng := rand.New(rand.NewPCG(seed, 0x42))
	t.Logf("seed %d", seed)
	for cycle := range 3 {
		var acks atomic.Int64
		var killed atomic.Bool
		done := make(chan struct{})
		go func() {
			defer close(done)
			for i := 1; ; i++ {
				r, err := s.call("PATCH", "/config/Acl", jsonOf(map[string]any{"AclName": "edge", "Direction": "IN", "RuleNameList": lists[i%2]}))
				if err != nil {
					if !killed.Load() {
						t.Errorf("cycle %d: PATCH before the kill: %v", cycle, err)
					}
					return
				}
				if r.code != 200 {
					t.Errorf("cycle %d: PATCH: %s", cycle, r)
					return
				}
				acks.Add(1)
			}
		}()
		time.Sleep(time.Duration(200+rng.IntN(800)) * time.Millisecond)
		killed.Store(true)
		s.kill9()
		<-done
		if acks.Load() == 0 {
			t.Fatalf("cycle %d: no replacement acknowledged before the kill", cycle)
		}
		if got := nftACLRules(t, ns, "acl_edge_IN"); !whole(got) {
			t.Fatalf("cycle %d: with swmgr dead the kernel holds neither list whole: %d rules %v", cycle, len(got), got)
		}
		s = linuxServer(t, dir, ns)
		stored := storedACLRules(t, s, "edge")
		if got := nftACLRules(t, ns, "acl_edge_IN"); !whole(got) || !slices.Equal(got, stored) {
			t.Fatalf("cycle %d: after the restart the kernel holds %d rules (%v...), the store %d (%v...)", cycle, len(got), got[:min(3, len(got))], len(stored), stored[:min(3, len(stored))])
		}
		t.Logf("cycle %d: %d replacements acknowledged before the kill; kernel and store agree on %s...", cycle, acks.Load(), stored[0])
	}
	s.stop(t)
}

// TestLinuxACL200RulesOneCommit: 200 ACL rules and their ACL in one
// commit (a candidate's), timed; then nft's own load of the same ruleset
// from a file into a fresh namespace, the floor of any way to program
// them. Figures are logged (no threshold: shared machines).
func TestLinuxACL200RulesOneCommit(t *testing.T) {
	testneed.Program(t, "nftables", "nft")
	ns := kill9Lab(t)
	s := linuxServer(t, t.TempDir(), ns)
	names, edits := aclRuleSet("r", 200, 1000)
	edits = append(edits, map[string]any{"Method": "POST", "Path": "/config/Acl",
		"Body": (map[string]any{"AclName": "bulk", "Direction": "IN", "IntfList": []string{"fpPort1", "fpPort2"}, "RuleNameList": names})})
	took := commitEdits(t, s, edits)
	if got := nftACLRules(t, ns, "acl_bulk_IN"); !slices.Equal(got, names) {
		t.Fatalf("the kernel holds %d rules, want the 200 committed", len(got))
	}
	states := s.listAll(t, "/state/AclRules", 1000)
	if len(states) != 200 {
		t.Fatalf("AclRuleState lists %d rules, want 200", len(states))
	}
	// nft's own load of the same table.
	table, err := exec.Command("ip", "netns", "exec", ns, "nft", "list", "table", "netdev", "swmgr_acl").Output()
	if err != nil {
		t.Fatal(err)
	}
	file := t.TempDir() + "/acl.nft"
	if err := os.WriteFile(file, table, 0o600); err != nil {
		t.Fatal(err)
	}
	fresh := kill9Lab(t)
	start := time.Now()
	if out, err := exec.Command("ip", "netns", "exec", fresh, "nft", "-f", file).CombinedOutput(); err != nil {
		t.Fatalf("nft -f: %v %s", err, out)
	}
	load := time.Since(start)
	t.Logf("200 ACL rules and their ACL in one commit: %v; nft -f of the same table: %v (ratio %.1f)", took.Round(time.Millisecond), load.Round(time.Millisecond), float64(took)/float64(load))
	s.stop(t)
}
