package linux

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"testing"
	"time"

	"github.com/swmgr/swmgr/internal/backend"
	"github.com/swmgr/swmgr/internal/engine"
	"github.com/swmgr/swmgr/internal/frr"
	"github.com/swmgr/swmgr/internal/model"
)

// fabricEdits are one commit of a leaf's routing: a PolicyPrefixSet of
// entries prefixes, the policy that permits them (and denies the rest),
// four peer groups filtering with it, and neighbors BGPv4Neighbors spread
// over the groups; with op Delete, their removal.
func fabricEdits(s *sw, op backend.Op, entries, neighbors int) []engine.Edit {
	var list []model.Object
	for i := range entries {
		list = append(list, model.Object{"Prefix": fmt.Sprintf("10.%d.%d.0/24", 64+i/256, i%256), "MaskLengthRange": "24-32"})
	}
	policy := []engine.Edit{
		s.edit(op, "PolicyPrefixSet", model.Object{"Name": "FABRIC", "PrefixList": list}),
		s.edit(op, "PolicyCondition", model.Object{"Name": "IN-FABRIC", "ConditionType": "MatchDstIpPrefix", "PrefixSet": "FABRIC"}),
		s.edit(op, "PolicyStmt", model.Object{"Name": "ACCEPT-FABRIC", "Conditions": []string{"IN-FABRIC"}, "Action": "permit"}),
		s.edit(op, "PolicyDefinition", model.Object{"Name": "FROM-FABRIC", "Priority": int64(1), "MatchType": "any",
			"StatementList": []model.Object{{"Priority": int64(10), "Statement": "ACCEPT-FABRIC"}}}),
	}
	var groups, peers []engine.Edit
	for g := range 4 {
		groups = append(groups, s.edit(op, "BGPv4PeerGroup", model.Object{"Name": fmt.Sprint("RACK", g), "PeerAS": "external", "AdjRIBInFilter": "FROM-FABRIC"}))
	}
	for i := range neighbors {
		o := model.Object{"Vrf": "default", "NeighborAddress": fmt.Sprintf("10.204.%d.%d", i/250, i%250+1)}
		if op == backend.Create {
			o["PeerGroup"] = fmt.Sprint("RACK", i%4)
		}
		peers = append(peers, s.edit(op, "BGPv4Neighbor", o))
	}
	if op == backend.Delete {
		return append(append(peers, groups...), policy...)
	}
	return append(append(policy, groups...), peers...)
}

// BenchmarkPolicyCommitToFRR: one commit of 1,000 prefix-list entries
// (with their policy) and 200 neighbors in four peer groups filtering with
// it, on the Linux backend against FRR (the commit returns once bgpd runs
// it). frr-load-s/op beside it is FRR's own time to load the same
// configuration: bgpd's running configuration after the commit, written
// to a file and read by `vtysh -f` into a fresh FRR (the least any
// manager of FRR pays).
func BenchmarkPolicyCommitToFRR(b *testing.B) {
	s := bgpBenchSwitch(b)
	ctx := context.Background()
	var load time.Duration
	for i := 0; i < b.N; i++ {
		s.mustCommit(fabricEdits(s, backend.Create, 1000, 200)...)
		b.StopTimer()
		running, err := s.be.FRR().RunningConfig(ctx)
		if err != nil {
			b.Fatal(err)
		}
		load += frrLoadTime(b, s.l.sw, running)
		s.mustCommit(fabricEdits(s, backend.Delete, 1000, 200)...)
		b.StartTimer()
	}
	b.ReportMetric(load.Seconds()/float64(b.N), "frr-load-s/op")
}

// frrLoadTime starts a fresh FRR in netns and times `vtysh -f` of the
// configuration text into its bgpd.
func frrLoadTime(b *testing.B, netns, config string) time.Duration {
	b.Helper()
	dir := filepath.Join(daemonDir(b, fmt.Sprintf("ld%05d", os.Getpid()%100000)), "frr")
	r, err := frr.New(frr.Options{Dir: dir, Netns: netns, Log: quiet()})
	if err != nil {
		b.Fatal(err)
	}
	if err := r.Start(context.Background()); err != nil {
		b.Fatal(err)
	}
	defer r.Stop()
	file := filepath.Join(b.TempDir(), "bgpd.conf")
	if err := os.WriteFile(file, []byte(config), 0o600); err != nil {
		b.Fatal(err)
	}
	start := time.Now()
	out, err := exec.Command("ip", "netns", "exec", netns, "vtysh", "--vty_socket", dir, "-d", "bgpd", "-f", file).CombinedOutput()
	took := time.Since(start)
	if err != nil {
		b.Fatalf("vtysh -f: %v\n%s", err, out)
	}
	if loaded, err := r.RunningConfig(context.Background()); err != nil || len(loaded) < len(config)/2 {
		b.Fatalf("the fresh FRR did not take the configuration (%v):\n%s", err, loaded)
	}
	return took
}
