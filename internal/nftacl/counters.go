package nftacl

import (
	"encoding/json"
	"fmt"
)

// Count is what one rule of a chain matched.
type Count struct {
	Packets, Bytes int64
}

// Counters reads `nft -j list table netdev swmgr_acl`: each counted rule's
// counts, by chain and rule name (the rule's comment). A rule's log
// statement (its own nft rule, without a counter) is not counted.
func Counters(listing []byte) (map[string]map[string]Count, error) {
	var doc struct {
		Nftables []struct {
			Rule *struct {
				Chain   string            `json:"chain"`
				Comment string            `json:"comment"`
				Expr    []json.RawMessage `json:"expr"`
			} `json:"rule"`
		} `json:"nftables"`
	}
	if err := json.Unmarshal(listing, &doc); err != nil {
		return nil, fmt.Errorf("read nft's listing: %w", err)
	}
	out := map[string]map[string]Count{}
	for _, item := range doc.Nftables {
		if item.Rule == nil {
			continue
		}
		for _, e := range item.Rule.Expr {
			var stmt struct {
				Counter *struct {
					Packets int64 `json:"packets"`
					Bytes   int64 `json:"bytes"`
				} `json:"counter"`
			}
			if json.Unmarshal(e, &stmt) != nil || stmt.Counter == nil {
				continue
			}
			if out[item.Rule.Chain] == nil {
				out[item.Rule.Chain] = map[string]Count{}
			}
			out[item.Rule.Chain][item.Rule.Comment] = Count{Packets: stmt.Counter.Packets, Bytes: stmt.Counter.Bytes}
		}
	}
	return out, nil
}
