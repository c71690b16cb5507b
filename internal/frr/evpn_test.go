package frr

import (
	"encoding/json"
	"slices"
	"strings"
	"testing"
)

// evpnRunning is FRR 8.4.4's running configuration of an instance with
// the EVPN family, as `show running-config` printed it.
const evpnRunning = `router bgp 65001
 bgp router-id 10.255.0.1
 no bgp ebgp-requires-policy
 neighbor 10.0.0.2 remote-as 65002
 !
 address-family ipv4 unicast
  maximum-paths 1
  maximum-paths ibgp 1
 exit-address-family
 !
 address-family l2vpn evpn
  neighbor 10.0.0.2 activate
  advertise-all-vni
  vni 100
   rd 10.255.0.1:100
   route-target import 65000:100
   route-target import 65000:7
   route-target export 65000:100
  exit-vni
  advertise-default-gw
 exit-address-family
exit
router bgp 65001 vrf red
 no bgp ebgp-requires-policy
 !
 address-family ipv4 unicast
  maximum-paths 1
  maximum-paths ibgp 1
 exit-address-family
 !
 address-family l2vpn evpn
  advertise ipv4 unicast
  rd 10.255.0.1:4001
  route-target import 65000:4001
 exit-address-family
exit
`

func evpnConfig() Config {
	return Config{
		Instances: []Instance{{ASNum: "65001", RouterID: "10.255.0.1"}, {VRF: "red", ASNum: "65001"}},
		Neighbors: []Neighbor{{NeighborAddress: "10.0.0.2", PeerAS: "65002", AddPathsRx: true}},
		EVPN: EVPN{AdvertiseAllVNI: true, AdvertiseDefaultGw: true,
			Neighbors: []EVPNNeighbor{{Name: "10.0.0.2"}},
			VNIs:      []VNI{{VNI: 100, RD: "10.255.0.1:100", Import: []string{"65000:7", "65000:100"}, Export: []string{"65000:100"}}, {VNI: 200}},
			L3VNIs:    []L3VNI{{VRF: "red", VNI: 4001, AdvertiseIPv4Unicast: true, RD: "10.255.0.1:4001", Import: []string{"65000:4001"}}},
		},
	}
}

// TestEVPNRenderMatchesFRRsOwnForm: the configuration rendered is what FRR
// prints back (a VNI's lines in any order, a VNI with automatic targets
// printed not at all), so applying it again sends nothing.
func TestEVPNRenderMatchesFRRsOwnForm(t *testing.T) {
	want, err := evpnConfig().render()
	if err != nil {
		t.Fatal(err)
	}
	if got := diff(parseRunning(evpnRunning), want); len(got) != 0 {
		t.Errorf("the running configuration is the wanted one, yet the plan is %q", got)
	}
	if !slices.Contains(want[0].evpn, "advertise-all-vni") || !slices.Contains(want[1].evpn, "advertise ipv4 unicast") {
		t.Errorf("EVPN lines: default %q, red %q", want[0].evpn, want[1].evpn)
	}
}

func TestEVPNDiff(t *testing.T) {
	running := parseRunning(evpnRunning)
	cases := []struct {
		name   string
		change func(*Config)
		want   []string
	}{
		{"nothing", func(*Config) {}, nil},
		{"advertise-all-vni off", func(c *Config) { c.EVPN.AdvertiseAllVNI = false },
			[]string{"router bgp 65001", " address-family l2vpn evpn", "no advertise-all-vni", " exit-address-family", "exit"}},
		{"a route target added replaces the VNI block", func(c *Config) { c.EVPN.VNIs[0].Export = append(c.EVPN.VNIs[0].Export, "65000:8") },
			[]string{"router bgp 65001", " address-family l2vpn evpn", "no vni 100", " exit-address-family",
				" address-family l2vpn evpn", "vni 100", "rd 10.255.0.1:100", "route-target export 65000:100", "route-target export 65000:8",
				"route-target import 65000:100", "route-target import 65000:7", "exit-vni", " exit-address-family", "exit"}},
		{"a VNI back to automatic targets", func(c *Config) { c.EVPN.VNIs[0] = VNI{VNI: 100} },
			[]string{"router bgp 65001", " address-family l2vpn evpn", "no vni 100", " exit-address-family", "exit"}},
		{"neighbor deactivated", func(c *Config) { c.EVPN.Neighbors = nil },
			[]string{"router bgp 65001", " address-family l2vpn evpn", "no neighbor 10.0.0.2 activate", " exit-address-family", "exit"}},
		{"a neighbour FRR does not run is not activated", func(c *Config) { c.EVPN.Neighbors = append(c.EVPN.Neighbors, EVPNNeighbor{Name: "UNUSED"}) }, nil},
		{"the automatic target given is no line", func(c *Config) {
			c.EVPN.VNIs[0].Import = append(c.EVPN.VNIs[0].Import, "65001:100")
			c.EVPN.VNIs[0].Export = append(c.EVPN.VNIs[0].Export, "65001:100")
		}, nil},
		{"route reflector client", func(c *Config) { c.EVPN.Neighbors[0].RouteReflectorClient = true },
			[]string{"router bgp 65001", " address-family l2vpn evpn", "neighbor 10.0.0.2 route-reflector-client", " exit-address-family", "exit"}},
		{"no type-5 routes in red", func(c *Config) { c.EVPN.L3VNIs[0].AdvertiseIPv4Unicast = false },
			[]string{"router bgp 65001 vrf red", " address-family l2vpn evpn", "no advertise ipv4 unicast", " exit-address-family", "exit"}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			cfg := evpnConfig()
			c.change(&cfg)
			want, err := cfg.render()
			if err != nil {
				t.Fatal(err)
			}
			if got := diff(running, want); !slices.Equal(got, c.want) {
				t.Errorf("got  %q\nwant %q", got, c.want)
			}
		})
	}
	// A new instance is entered whole, its EVPN family last, VNI blocks expanded.
	want, _ := evpnConfig().render()
	cmds := whole(want[0])
	if i, j := slices.Index(cmds, " address-family l2vpn evpn"), slices.Index(cmds, "exit-vni"); i < 0 || j < i || cmds[len(cmds)-1] != "exit" {
		t.Errorf("whole: %q", cmds)
	}
}

func TestEVPNRefusesWhatFRRCannotTake(t *testing.T) {
	for _, c := range []struct {
		name, want string
		change     func(*Config)
	}{
		{"bad route target", "route target", func(c *Config) { c.EVPN.VNIs[0].Import = []string{"65000"} }},
		{"bad RD", "route distinguisher", func(c *Config) { c.EVPN.L3VNIs[0].RD = "x:1" }},
		{"L3 VNI in the default VRF", "not a tenant VRF", func(c *Config) { c.EVPN.L3VNIs[0].VRF = DefaultVRF }},
		{"neighbor name", "not a neighbor", func(c *Config) { c.EVPN.Neighbors[0].Name = "a b" }},
	} {
		cfg := evpnConfig()
		c.change(&cfg)
		if err := cfg.Validate(); err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%s: %v, want an error saying %q", c.name, err, c.want)
		}
	}
}

func TestVRFVNIsOfZebra(t *testing.T) {
	running := parseVRFVNIs("frr version 8.4.4\n!\nvrf red\n vni 4001\nexit-vrf\n!\nvrf blue\nexit-vrf\n!\nend\n")
	if len(running) != 1 || running["red"] != 4001 {
		t.Fatalf("parsed %v", running)
	}
	for _, c := range []struct {
		name string
		want map[string]uint32
		cmds []string
	}{
		{"same", map[string]uint32{"red": 4001}, nil},
		{"moved to blue", map[string]uint32{"blue": 4001}, []string{"vrf red", "no vni 4001", "exit-vrf", "vrf blue", "vni 4001", "exit-vrf"}},
		{"renumbered", map[string]uint32{"red": 4002}, []string{"vrf red", "no vni 4001", "exit-vrf", "vrf red", "vni 4002", "exit-vrf"}},
		{"gone", nil, []string{"vrf red", "no vni 4001", "exit-vrf"}},
	} {
		if got := diffVRFVNIs(running, c.want); !slices.Equal(got, c.cmds) {
			t.Errorf("%s: %q, want %q", c.name, got, c.cmds)
		}
	}
}

// The state of FRR 8.4.4 as it answered (the type-5 path as it gave it in
// the VM's two-switch test): an L2 VNI with a remote VTEP,
// a local and a remote MAC, and the EVPN table's type-2, -3 and -5 routes.
const (
	vniDetailJSON = `[{"vni":100,"type":"L2","vrf":"default","vxlanInterface":"vxlan100","ifindex":4,"sviInterface":"br100","vtepIp":"10.255.0.1","numMacs":2,"numArpNd":0,"numRemoteVteps":["10.255.0.2"]},
 {"vni":4001,"type":"L3","vrf":"red","localVtepIp":"10.255.0.1","vxlanIntf":"vxlan4001","sviIntf":"vlan4001","state":"Up"}]`
	evpnTableJSON = `{"bgpTableVersion":2,"bgpLocalRouterId":"10.255.0.1","localAS":65001,
 "10.255.0.2:2":{"rd":"10.255.0.2:2",
  "[2]:[0]:[48]:[2a:e9:f9:fe:0d:08]":{"prefix":"[2]:[0]:[48]:[2a:e9:f9:fe:0d:08]","paths":[{"valid":true,"bestpath":true,"routeType":2,"mac":"2a:e9:f9:fe:0d:08","peerId":"10.0.0.2","nexthops":[{"ip":"10.255.0.2"}]}]},
  "[3]:[0]:[32]:[10.255.0.2]":{"prefix":"[3]:[0]:[32]:[10.255.0.2]","paths":[{"valid":true,"bestpath":true,"routeType":3,"ip":"10.255.0.2","peerId":"10.0.0.2","nexthops":[{"ip":"10.255.0.2"}]}]}},
 "10.255.0.2:3":{"rd":"10.255.0.2:3",
  "[5]:[0]:[24]:[10.9.0.0]":{"prefix":"[5]:[0]:[24]:[10.9.0.0]","paths":[{"valid":true,"bestpath":true,"routeType":5,"ip":"10.9.0.0","peerId":"10.0.0.2","nexthops":[{"ip":"10.255.0.2"}]}]}},
 "numPrefix":3,"totalPrefix":3}`
)

func TestEVPNStateParsing(t *testing.T) {
	vnis, err := parseVNIs([]byte(vniDetailJSON))
	if err != nil {
		t.Fatal(err)
	}
	if len(vnis) != 2 || vnis[0].VNI != 100 || vnis[0].VxlanIntf != "vxlan100" || vnis[0].LocalVTEP != "10.255.0.1" ||
		!slices.Equal(vnis[0].RemoteVTEPs, []string{"10.255.0.2"}) || vnis[1].Type != "L3" || vnis[1].VxlanIntf != "vxlan4001" ||
		vnis[1].VRF != "red" || len(vnis[1].RemoteVTEPs) != 0 {
		t.Errorf("VNIs %+v", vnis)
	}
	var raw map[string]json.RawMessage
	if err := json.Unmarshal([]byte(evpnTableJSON), &raw); err != nil {
		t.Fatal(err)
	}
	routes, err := parseEVPNRoutes(raw)
	if err != nil {
		t.Fatal(err)
	}
	if len(routes) != 3 {
		t.Fatalf("routes %+v", routes)
	}
	if r := routes[0]; r.RouteType != 2 || r.MAC != "2a:e9:f9:fe:0d:08" || r.NextHop != "10.255.0.2" || !r.Best || r.Local {
		t.Errorf("type 2: %+v", r)
	}
	if r := routes[2]; r.RouteType != 5 || r.IP != "10.9.0.0/24" || r.RD != "10.255.0.2:3" {
		t.Errorf("type 5: %+v", r)
	}
}
