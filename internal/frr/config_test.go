package frr

import (
	"context"
	"encoding/json"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"
)

func TestRenderRefusesWhatFRRCannotExpress(t *testing.T) {
	global := Instance{ASNum: "65001"}
	cases := []struct {
		name string
		cfg  Config
		want string
	}{
		{"bad AS", Config{Instances: []Instance{{ASNum: "70000.1"}}}, "out of range"},
		{"zero AS", Config{Instances: []Instance{{ASNum: "0"}}}, "ASNum"},
		{"router id", Config{Instances: []Instance{{ASNum: "1", RouterID: "::1"}}}, "RouterId"},
		{"vrf without default", Config{Instances: []Instance{{VRF: "red", ASNum: "1"}}}, "default instance"},
		{"neighbor without instance", Config{Neighbors: []Neighbor{{NeighborAddress: "10.0.0.1", PeerAS: "2"}}}, "no BGP instance"},
		{"no peer AS", Config{Instances: []Instance{global}, Neighbors: []Neighbor{{NeighborAddress: "10.0.0.1"}}}, "PeerAS is required"},
		{"no address", Config{Instances: []Instance{global}, Neighbors: []Neighbor{{PeerAS: "2"}}}, "NeighborAddress or IntfRef"},
		{"ipv6 in v4 neighbor", Config{Instances: []Instance{global}, Neighbors: []Neighbor{{NeighborAddress: "2001:db8::1", PeerAS: "2"}}}, "not an IPv4"},
		{"twice", Config{Instances: []Instance{global}, Neighbors: []Neighbor{{NeighborAddress: "10.0.0.1", PeerAS: "2"}, {NeighborAddress: "10.0.0.1", PeerAS: "3"}}}, "twice"},
		{"bfd profile", Config{Instances: []Instance{global}, Neighbors: []Neighbor{{NeighborAddress: "10.0.0.1", PeerAS: "2", BfdEnable: true, BfdSessionParam: "fast profile x"}}}, "BfdSessionParam"},
		{"bfd interval", Config{BFD: BFD{Profiles: []BFDProfile{{Name: "fast", ReceiveInterval: 5}}}}, "out of range"},
		{"bfd multiplier", Config{BFD: BFD{Profiles: []BFDProfile{{Name: "fast", DetectMultiplier: 1}}}}, "out of range"},
		{"bfd peer", Config{BFD: BFD{Peers: []BFDPeer{{Address: "10.0.0.1\nbfd"}}}}, "not an IP address"},
		{"bfd peer interface", Config{BFD: BFD{Peers: []BFDPeer{{Address: "10.0.0.1", Interface: "eth0 profile x"}}}}, "not an interface name"},
		{"bfd peer twice", Config{BFD: BFD{Peers: []BFDPeer{{Address: "10.0.0.1"}, {Address: "10.0.0.1"}}}}, "twice"},
		{"cluster ids differ", Config{Instances: []Instance{global}, Neighbors: []Neighbor{
			{NeighborAddress: "10.0.0.1", PeerAS: "65001", RouteReflectorClusterId: 1},
			{NeighborAddress: "10.0.0.2", PeerAS: "65001", RouteReflectorClusterId: 2}}}, "one cluster id"},
		{"password with space", Config{Instances: []Instance{global}, Neighbors: []Neighbor{{NeighborAddress: "10.0.0.1", PeerAS: "2", AuthPassword: "a b"}}}, "AuthPassword"},
		{"hold below keepalive", Config{Instances: []Instance{global}, Neighbors: []Neighbor{{NeighborAddress: "10.0.0.1", PeerAS: "2", HoldTime: 3, KeepaliveTime: 5}}}, "HoldTime"},
		{"ttl without multihop", Config{Instances: []Instance{global}, Neighbors: []Neighbor{{NeighborAddress: "10.0.0.1", PeerAS: "2", MultiHopTTL: 4}}}, "MultiHopEnable"},
		{"bad source", Config{Instances: []Instance{{ASNum: "1", Redistribution: []Redistribution{{Sources: "RIP"}}}}}, "RIP"},
		{"injection in description", Config{Instances: []Instance{global}, Neighbors: []Neighbor{{NeighborAddress: "10.0.0.1", PeerAS: "2", Description: "x\nrouter bgp 9"}}}, "one line"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			err := c.cfg.Validate()
			if err == nil || !strings.Contains(err.Error(), c.want) {
				t.Fatalf("got %v, want an error with %q", err, c.want)
			}
		})
	}
}

func TestRenderEveryField(t *testing.T) {
	cfg := Config{
		Instances: []Instance{{ASNum: "1.10", RouterID: "10.0.0.1", UseMultiplePaths: true, EBGPMaxPaths: 4, IBGPMaxPaths: 2,
			EBGPAllowMultipleAS: true, Redistribution: []Redistribution{{Sources: "CONNECTED,static", Policy: "rm1"}}}},
		Neighbors: []Neighbor{{
			NeighborAddress: "10.0.0.2", PeerAS: "65536", LocalAS: "65100", Description: "spine  one", Disabled: true,
			PeerGroup: "spines", UpdateSource: "lo", NextHopSelf: true, AuthPassword: "pw", RouteReflectorClusterId: 5,
			RouteReflectorClient: true, MultiHopEnable: true, MultiHopTTL: 3, ConnectRetryTime: 5, HoldTime: 30,
			AddPathsRx: true, AddPathsMaxTx: 2, BfdEnable: true, BfdSessionParam: "fast", MaxPrefixes: 100,
			MaxPrefixesThresholdPct: 80, MaxPrefixesDisconnect: true, MaxPrefixesRestartTimer: 90,
			AdjRIBInFilter: "in1", AdjRIBOutFilter: "out1"}},
	}
	bs, err := cfg.render()
	if err != nil {
		t.Fatal(err)
	}
	got := strings.Join(whole(bs[0]), "\n")
	want := `router bgp 65546
bgp router-id 10.0.0.1
no bgp ebgp-requires-policy
bgp bestpath as-path multipath-relax
bgp cluster-id 0.0.0.5
neighbor spines peer-group
neighbor 10.0.0.2 remote-as 65536
neighbor 10.0.0.2 peer-group spines
neighbor 10.0.0.2 local-as 65100
neighbor 10.0.0.2 description spine one
neighbor 10.0.0.2 shutdown
neighbor 10.0.0.2 password pw
neighbor 10.0.0.2 bfd
neighbor 10.0.0.2 bfd profile fast
neighbor 10.0.0.2 ebgp-multihop 3
neighbor 10.0.0.2 update-source lo
neighbor 10.0.0.2 timers 10 30
neighbor 10.0.0.2 timers connect 5
 address-family ipv4 unicast
redistribute connected route-map rm1
redistribute static route-map rm1
maximum-paths 4
maximum-paths ibgp 2
neighbor 10.0.0.2 route-reflector-client
neighbor 10.0.0.2 next-hop-self
neighbor 10.0.0.2 addpath-tx-all-paths
neighbor 10.0.0.2 soft-reconfiguration inbound
neighbor 10.0.0.2 maximum-prefix 100 80 restart 2
neighbor 10.0.0.2 route-map in1 in
neighbor 10.0.0.2 route-map out1 out
 exit-address-family
 address-family ipv6 unicast
redistribute connected route-map rm1
redistribute static route-map rm1
 exit-address-family
exit`
	if got != want {
		t.Errorf("got:\n%s\nwant:\n%s", got, want)
	}
}

const runningSample = `Building configuration...

Current configuration:
!
frr version 8.4.4
hostname sw
!
router bgp 65001
 bgp router-id 10.0.0.1
 no bgp ebgp-requires-policy
 neighbor 10.0.0.2 remote-as 65002
 neighbor 10.0.0.2 description old
 neighbor 10.0.0.3 remote-as 65003
 neighbor 10.0.0.4 remote-as 65004
 !
 address-family ipv4 unicast
  neighbor 10.0.0.3 next-hop-self
  maximum-paths 1
  maximum-paths ibgp 1
 exit-address-family
 !
 address-family ipv4 multicast
  distance bgp 20 200 200
 exit-address-family
exit
!
router bgp 65001 vrf red
 no bgp ebgp-requires-policy
exit
!
line vty
!
end
`

func TestParseRunning(t *testing.T) {
	bs := parseRunning(runningSample)
	if len(bs) != 2 || bs[0].asn != 65001 || bs[0].vrf != DefaultVRF || bs[1].vrf != "red" {
		t.Fatalf("blocks %+v", bs)
	}
	if !slices.Contains(bs[0].af, "neighbor 10.0.0.3 next-hop-self") || slices.Contains(bs[0].af, "distance bgp 20 200 200") {
		t.Errorf("af lines %q: want ipv4 unicast only", bs[0].af)
	}
}

func TestDiffTouchesOnlyWhatChanged(t *testing.T) {
	running := parseRunning(runningSample)
	base := func() Config {
		return Config{
			Instances: []Instance{{ASNum: "65001", RouterID: "10.0.0.1"}, {VRF: "red", ASNum: "65001"}},
			Neighbors: []Neighbor{
				{NeighborAddress: "10.0.0.2", PeerAS: "65002", Description: "old", AddPathsRx: true},
				{NeighborAddress: "10.0.0.3", PeerAS: "65003", NextHopSelf: true, AddPathsRx: true},
				{NeighborAddress: "10.0.0.4", PeerAS: "65004", AddPathsRx: true},
			},
		}
	}
	plan := func(c Config) []string {
		bs, err := c.render()
		if err != nil {
			t.Fatal(err)
		}
		return diff(running, bs)
	}
	// The VRF block lacks maximum-paths in the sample, so it is the only change.
	if got := plan(base()); !slices.Equal(got, []string{"router bgp 65001 vrf red", " address-family ipv4 unicast", "maximum-paths 1", "maximum-paths ibgp 1", " exit-address-family", "exit"}) {
		t.Errorf("unchanged: %q", got)
	}
	running = parseRunning(strings.Replace(runningSample, "router bgp 65001 vrf red\n no bgp ebgp-requires-policy\n",
		"router bgp 65001 vrf red\n no bgp ebgp-requires-policy\n !\n address-family ipv4 unicast\n  maximum-paths 1\n  maximum-paths ibgp 1\n exit-address-family\n", 1))
	cases := []struct {
		name   string
		change func(*Config)
		want   []string
	}{
		{"nothing", func(*Config) {}, nil},
		{"one attribute", func(c *Config) { c.Neighbors[0].Description = "new" },
			[]string{"router bgp 65001", "no neighbor 10.0.0.2 description old", "neighbor 10.0.0.2 description new", "exit"}},
		{"af attribute removed", func(c *Config) { c.Neighbors[1].NextHopSelf = false },
			[]string{"router bgp 65001", " address-family ipv4 unicast", "no neighbor 10.0.0.3 next-hop-self", " exit-address-family", "exit"}},
		{"neighbor deleted", func(c *Config) { c.Neighbors = c.Neighbors[:2] },
			[]string{"router bgp 65001", "no neighbor 10.0.0.4", "exit"}},
		{"remote AS changed recreates only that neighbor", func(c *Config) { c.Neighbors[1].PeerAS = "65333" },
			[]string{"router bgp 65001", "no neighbor 10.0.0.3", "neighbor 10.0.0.3 remote-as 65333",
				" address-family ipv4 unicast", "neighbor 10.0.0.3 next-hop-self", " exit-address-family", "exit"}},
		{"VRF removed", func(c *Config) { c.Instances = c.Instances[:1] }, []string{"no router bgp 65001 vrf red"}},
		{"AS changed rebuilds VRFs too", func(c *Config) { c.Instances[0].ASNum, c.Instances[1].ASNum = "65009", "65009" }, nil},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			cfg := base()
			c.change(&cfg)
			got := plan(cfg)
			if c.name == "AS changed rebuilds VRFs too" {
				if len(got) < 3 || got[0] != "no router bgp 65001 vrf red" || got[1] != "no router bgp 65001" || got[2] != "router bgp 65009" ||
					!slices.Contains(got, "router bgp 65009 vrf red") {
					t.Errorf("got %q", got)
				}
				return
			}
			if !slices.Equal(got, c.want) {
				t.Errorf("got  %q\nwant %q", got, c.want)
			}
		})
	}
}

func TestRedactHidesPasswords(t *testing.T) {
	got := redact("line 3: % Unknown command: neighbor 10.0.0.1 password hunter2")
	if strings.Contains(got, "hunter2") {
		t.Error(got)
	}
}

func TestSessionStateNumbering(t *testing.T) {
	for frr, want := range map[string]uint32{"Idle": 1, "Idle (Admin)": 1, "Connect": 2, "Active": 3, "OpenSent": 4, "OpenConfirm": 5, "Established": 6, "weird": 0} {
		if got := SessionStateOf(frr); got != want {
			t.Errorf("%s: %d, want %d", frr, got, want)
		}
	}
}

func TestParseState(t *testing.T) {
	var raw map[string]map[string]json.RawMessage
	json.Unmarshal([]byte(`{"default":{"vrfId":0,"vrfName":"default","10.0.0.2":{"remoteAs":65002,"localAs":65001,"nbrExternalLink":true,
		"bgpState":"Established","bgpTimerUpMsec":5000,"connectionsEstablished":1,"bgpTimerHoldTimeMsecs":9000,"bgpTimerKeepAliveIntervalMsecs":3000,
		"bgpTimerConfiguredHoldTimeMsecs":30000,"bgpTimerConfiguredKeepAliveIntervalMsecs":10000,"connectRetryTimer":7,"messageStats":{"updatesRecv":3,"updatesSent":2},
		"addressFamilyInfo":{"ipv4Unicast":{"acceptedPrefixCounter":7}}}}}`), &raw)
	ns, err := parseNeighbors(raw)
	if err != nil || len(ns) != 1 {
		t.Fatal(ns, err)
	}
	n := ns[0]
	if n.SessionState != 6 || n.PeerType != 1 || n.TotalPrefixes != 7 || n.UpdatesReceived != 3 || n.SessionStateDuration != "5s" || n.HoldTime != 9 || n.KeepaliveTime != 3 || n.ConnectRetryTime != 7 || n.LocalAS != "65001" {
		t.Errorf("%+v", n)
	}
	var routes map[string][]frrRoute
	json.Unmarshal([]byte(`{"192.0.2.0/24":[{"prefix":"192.0.2.0/24","protocol":"bgp","vrfName":"default","selected":true,"installed":true,
		"distance":20,"nexthops":[{"ip":"10.0.0.2","interfaceName":"swp1","active":true},{"ip":"10.0.0.9","active":false}]}]}`), &routes)
	rs := parseRoutes(routes)
	if len(rs) != 1 || rs[0].Protocol != "bgp" || len(rs[0].NextHops) != 1 || rs[0].NextHops[0].IntfRef != "swp1" {
		t.Errorf("%+v", rs)
	}
}

// TestBatcherCoalesces: requests arriving while a round runs share the next
// round, and every caller sees the newest configuration applied.
func TestBatcherCoalesces(t *testing.T) {
	var mu sync.Mutex
	var applied []string
	release := make(chan struct{})
	b := NewBatcher(func(ctx context.Context, cfg Config) error {
		<-release
		mu.Lock()
		applied = append(applied, cfg.Instances[0].ASNum)
		mu.Unlock()
		return nil
	})
	var wg sync.WaitGroup
	start := func(as string) {
		wg.Add(1)
		go func() {
			defer wg.Done()
			if err := b.Apply(context.Background(), Config{Instances: []Instance{{ASNum: as}}}); err != nil {
				t.Error(err)
			}
		}()
	}
	start("1") // round 1, held
	for b.Rounds() != 1 {
		time.Sleep(time.Millisecond)
	}
	for i := 2; i <= 10; i++ {
		start(strings.Repeat("1", i)) // all join round 2
	}
	for b.queued() != 9 {
		time.Sleep(time.Millisecond)
	}
	close(release)
	wg.Wait()
	if b.Rounds() != 2 || len(applied) != 2 || len(applied[1]) < 2 {
		t.Errorf("rounds %d, applied %q: want 2 rounds, the second with a configuration of the nine late requests", b.Rounds(), applied)
	}
}

func FuzzParseRunning(f *testing.F) {
	f.Add(runningSample)
	f.Fuzz(func(t *testing.T, s string) {
		for _, b := range parseRunning(s) {
			diff([]block{b}, nil)
		}
	})
}

// TestRenderUnnumberedAndPeerGroups: a peer group is defined (with its
// settings) in the instance its neighbors use it in; an unnumbered
// neighbor is "interface" with its group or remote-as, and activated in
// IPv6 unicast; a group named as a neighbor is refused.
func TestRenderUnnumberedAndPeerGroups(t *testing.T) {
	cfg := Config{
		Instances:  []Instance{{ASNum: "65001"}},
		PeerGroups: []Neighbor{{Name: "SPINES", PeerAS: "external", HoldTime: 9, KeepaliveTime: 3, NextHopSelf: true, AddPathsRx: true}},
		Neighbors: []Neighbor{
			{IntfRef: "swp1", PeerGroup: "SPINES", AddPathsRx: true},
			{IntfRef: "swp2", PeerAS: "internal", AddPathsRx: true},
			{NeighborAddress: "10.0.0.2", PeerGroup: "SPINES", AddPathsRx: true},
		},
	}
	bs, err := cfg.render()
	if err != nil {
		t.Fatal(err)
	}
	got := strings.Join(whole(bs[0]), "\n")
	want := `router bgp 65001
no bgp ebgp-requires-policy
neighbor SPINES peer-group
neighbor SPINES remote-as external
neighbor SPINES timers 3 9
neighbor swp1 interface peer-group SPINES
neighbor swp2 interface remote-as internal
neighbor 10.0.0.2 peer-group SPINES
 address-family ipv4 unicast
maximum-paths 1
maximum-paths ibgp 1
neighbor SPINES next-hop-self
 exit-address-family
 address-family ipv6 unicast
neighbor swp1 activate
neighbor swp2 activate
 exit-address-family
exit`
	if got != want {
		t.Errorf("got:\n%s\nwant:\n%s", got, want)
	}
	cfg.Neighbors = append(cfg.Neighbors, Neighbor{IntfRef: "SPINES", PeerAS: "65002"})
	if err := cfg.Validate(); err == nil || !strings.Contains(err.Error(), "SPINES") {
		t.Errorf("a group named as a neighbor: %v", err)
	}
}
