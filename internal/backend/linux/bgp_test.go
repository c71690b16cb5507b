package linux

import (
	"reflect"
	"strings"
	"testing"

	"github.com/swmgr/swmgr/internal/frr"
	"github.com/swmgr/swmgr/internal/model"
)

func TestBGPConfigFromObjects(t *testing.T) {
	objs := map[string]map[string]model.Object{
		"BGPGlobal": {"default": {"Vrf": "default", "ASNum": "65001", "RouterId": "10.0.0.1", "UseMultiplePaths": true, "EBGPMaxPaths": int64(4), "IBGPMaxPaths": int64(2)}},
		"BGPVrf":    {"red": {"Name": "red", "EBGPMaxPaths": int64(1)}},
		"BGPv4Neighbor": {
			"default||10.0.0.2": {"Vrf": "default", "NeighborAddress": "10.0.0.2", "PeerAS": "65002", "HoldTime": int64(9), "KeepaliveTime": int64(3),
				"AuthPassword": "pw", "UpdateSource": "10.0.0.1", "MultiHopEnable": true, "MultiHopTTL": int64(4), "MaxPrefixes": int64(100),
				"MaxPrefixesDisconnect": true, "RouteReflectorClient": true, "BfdEnable": true},
			"red||10.1.0.2":  {"Vrf": "red", "NeighborAddress": "10.1.0.2", "PeerAS": "65003"},
			"blue||10.2.0.2": {"Vrf": "blue", "NeighborAddress": "10.2.0.2", "PeerAS": "65004"}, // no instance: not given to FRR
		},
	}
	cfg := bgpConfig(objs)
	want := frr.Config{
		Instances: []frr.Instance{
			{VRF: "default", ASNum: "65001", RouterID: "10.0.0.1", UseMultiplePaths: true, EBGPMaxPaths: 4, IBGPMaxPaths: 2},
			{VRF: "red", ASNum: "65001", EBGPMaxPaths: 1},
		},
		Neighbors: []frr.Neighbor{
			{VRF: "default", NeighborAddress: "10.0.0.2", PeerAS: "65002", HoldTime: 9, KeepaliveTime: 3, AuthPassword: "pw", UpdateSource: "10.0.0.1",
				MultiHopEnable: true, MultiHopTTL: 4, MaxPrefixes: 100, MaxPrefixesDisconnect: true, RouteReflectorClient: true, BfdEnable: true},
			{VRF: "red", NeighborAddress: "10.1.0.2", PeerAS: "65003"},
		},
	}
	if !reflect.DeepEqual(cfg, want) {
		t.Errorf("got  %+v\nwant %+v", cfg, want)
	}
	if err := cfg.Validate(); err != nil {
		t.Error(err)
	}
	// Without ASNum there is no BGP at all.
	objs["BGPGlobal"]["default"]["ASNum"] = ""
	if c := bgpConfig(objs); len(c.Instances) != 0 || len(c.Neighbors) != 0 {
		t.Errorf("no ASNum: %+v", c)
	}
}

func TestCheckBGP(t *testing.T) {
	for _, tc := range []struct {
		kind string
		obj  model.Object
		want string // "" accepted
	}{
		{"BGPv4Neighbor", model.Object{"NeighborAddress": "10.0.0.2", "PeerAS": "65002"}, ""},
		{"BGPv4Neighbor", model.Object{"Vrf": "red", "NeighborAddress": "10.0.0.2", "PeerAS": "65002"}, ""},
		{"BGPv4Neighbor", model.Object{"NeighborAddress": "10.0.0.2", "PeerAS": "65002", "AuthPassword": "has space"}, "AuthPassword must be"},
		{"BGPv4Neighbor", model.Object{"NeighborAddress": "10.0.0.2", "PeerAS": "65002", "MultiHopTTL": int64(3)}, "MultiHopTTL needs MultiHopEnable"},
		{"BGPv4Neighbor", model.Object{"NeighborAddress": "10.0.0.2", "PeerAS": "65002", "BfdEnable": true, "BfdSessionParam": "fast"}, ""},
		{"BGPGlobal", model.Object{"ASNum": "65001", "RouterId": "10.0.0.1"}, ""},
		{"BGPGlobal", model.Object{"ASNum": ""}, ""},
		{"BGPVrf", model.Object{"Name": "red"}, ""},
		{"BGPVrf", model.Object{"Name": "bad name"}, "VRF name"},
	} {
		err := checkBGP(tc.kind)(nil, changeOf{After: tc.obj})
		if tc.want == "" && err != nil || tc.want != "" && (err == nil || !strings.Contains(err.Error(), tc.want)) {
			t.Errorf("%s %v: got %v, want %q", tc.kind, tc.obj, err, tc.want)
		}
	}
}
