package frr

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
)

// A session's prefix counts. FRR's neighbor JSON has the accepted and
// sent counts of each family; what the neighbor sent before inbound policy
// and how many of its paths are BGP's best are counted by FRR's
// `prefix-counts` walk of the family's table (its Adj-in counter is the
// pre-policy count where soft reconfiguration keeps the Adj-RIB-In). The
// walk is one query per Established session and family, made with the
// neighbor list (one read serves the 200 ms window of the state reads).

type frrPrefixWalk struct {
	Counters map[string]uint32 `json:"ribTableWalkCounters"`
}

// addWalkCounts fills each Established session's received (before policy)
// and installed counts from FRR's prefix-counts walk, over one vty
// connection.
func (r *Router) addWalkCounts(ctx context.Context, ns []NeighborState) error {
	var c *vtyConn
	for i := range ns {
		n := &ns[i]
		if n.SessionState != SessionEstablished {
			continue
		}
		for _, f := range []struct {
			afi    string
			counts *PrefixCounts
		}{{"ipv4", &n.IPv4Unicast}, {"ipv6", &n.IPv6Unicast}} {
			if !f.counts.active {
				continue
			}
			if c == nil {
				var err error
				if c, err = r.dialVty(ctx, "bgpd"); err != nil {
					return err
				}
				defer c.Close()
			}
			name := n.NeighborAddress
			if name == "" {
				name = n.IntfRef
			}
			if !wordRE.MatchString(name) || !wordRE.MatchString(n.VRF) {
				continue
			}
			cmd := fmt.Sprintf("show bgp vrf %s %s unicast neighbors %s prefix-counts json", n.VRF, f.afi, name)
			out, err := c.run(cmd)
			var rejected *RejectedError
			if errors.As(err, &rejected) {
				continue // gone since the list was read: its counts stay FRR's list's
			}
			if err != nil {
				return fmt.Errorf("frr: %s: %w", cmd, err)
			}
			if strings.TrimSpace(out) == "" {
				continue
			}
			var w frrPrefixWalk
			if err := json.Unmarshal([]byte(out), &w); err != nil {
				return fmt.Errorf("frr: %s: parsing FRR's JSON: %w", cmd, err)
			}
			f.counts.setWalk(w.Counters)
		}
	}
	return nil
}

// setWalk takes the counts of a prefix-counts walk: Adj-in is what the
// neighbor sent (before policy) only where FRR keeps the Adj-RIB-In.
func (c *PrefixCounts) setWalk(w map[string]uint32) {
	if best, ok := w["PfxCt Best Selected"]; ok {
		c.Installed = best
	}
	if adj, ok := w["Adj-in"]; ok && c.beforePolicy {
		c.Received = adj
	}
}
