package frr

import (
	"slices"
	"strings"
	"testing"
)

// bfddRunning is bfdd 8.4's running configuration of the profiles and
// peers of TestBFDRenderIsBfddsNormalForm, as it printed them.
const bfddRunning = `Building configuration...

Current configuration:
!
frr version 8.4.4
hostname vm
!
bfd
 profile fast
  detect-multiplier 4
  transmit-interval 150
  receive-interval 100
  echo receive-interval 70
 exit
 !
 profile slow
  echo receive-interval disabled
 exit
 !
 peer 10.9.9.9
  profile fast
 exit
 !
 peer 10.9.9.8 interface lo
 exit
 !
exit
!
end
`

func TestBFDRenderIsBfddsNormalForm(t *testing.T) {
	cfg := BFD{
		Profiles: []BFDProfile{{Name: "fast", ReceiveInterval: 100, TransmitInterval: 150, DetectMultiplier: 4, EchoReceiveInterval: 70},
			{Name: "slow", ReceiveInterval: 300, TransmitInterval: 300, DetectMultiplier: 3}},
		Peers: []BFDPeer{{Address: "10.9.9.9", Profile: "fast"}, {Address: "10.9.9.8", Interface: "lo"}},
	}
	want, err := cfg.render()
	if err != nil {
		t.Fatal(err)
	}
	got := parseBFD(bfddRunning)
	if !slices.EqualFunc(got, want, func(a, b bfdNode) bool { return a.header == b.header && slices.Equal(a.lines, b.lines) }) {
		t.Fatalf("parsed %q\nrendered %q", got, want)
	}
	if cmds := diffBFD(got, want); cmds != nil {
		t.Errorf("nothing changed, yet the diff sends %q", cmds)
	}
}

func TestBFDDiff(t *testing.T) {
	fast := BFDProfile{Name: "fast", ReceiveInterval: 100, TransmitInterval: 100, DetectMultiplier: 3, EchoReceiveInterval: 50}
	peer := BFDPeer{Address: "10.0.0.2", Interface: "eth1", Profile: "fast"}
	cases := []struct {
		name     string
		from, to BFD
		want     []string
	}{
		{"add a profile and its peer", BFD{}, BFD{Profiles: []BFDProfile{fast}, Peers: []BFDPeer{peer}},
			[]string{"bfd", " profile fast", "  detect-multiplier 3", "  transmit-interval 100", "  receive-interval 100", "  echo receive-interval 50", " exit",
				" peer 10.0.0.2 interface eth1", "  profile fast", " exit", "exit"}},
		// bfdd has no `no receive-interval`: a setting back at its
		// default is set to the default.
		{"a profile back to the defaults", BFD{Profiles: []BFDProfile{fast}}, BFD{Profiles: []BFDProfile{{Name: "fast", EchoReceiveInterval: 50}}},
			[]string{"bfd", " profile fast", "  detect-multiplier 3", "  transmit-interval 300", "  receive-interval 300", "  echo receive-interval 50", " exit", "exit"}},
		{"remove the peer, then its profile", BFD{Profiles: []BFDProfile{fast}, Peers: []BFDPeer{peer}}, BFD{},
			[]string{"bfd", " no peer 10.0.0.2 interface eth1", " no profile fast", "exit"}},
		{"a peer's profile goes", BFD{Profiles: []BFDProfile{fast}, Peers: []BFDPeer{peer}}, BFD{Profiles: []BFDProfile{fast}, Peers: []BFDPeer{{Address: "10.0.0.2", Interface: "eth1"}}},
			[]string{"bfd", " peer 10.0.0.2 interface eth1", "  no profile fast", " exit", "exit"}},
		{"a peer moves to another interface", BFD{Peers: []BFDPeer{peer}}, BFD{Peers: []BFDPeer{{Address: "10.0.0.2", Interface: "eth2", Profile: "fast"}}},
			[]string{"bfd", " no peer 10.0.0.2 interface eth1", " peer 10.0.0.2 interface eth2", "  profile fast", " exit", "exit"}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			from, err := c.from.render()
			if err != nil {
				t.Fatal(err)
			}
			to, err := c.to.render()
			if err != nil {
				t.Fatal(err)
			}
			if got := diffBFD(from, to); !slices.Equal(got, c.want) {
				t.Errorf("got\n%s\nwant\n%s", strings.Join(got, "\n"), strings.Join(c.want, "\n"))
			}
		})
	}
}

func TestParseBFDPeers(t *testing.T) {
	peers := `[{"multihop":false,"peer":"10.0.0.2","local":"10.0.0.1","vrf":"default","interface":"eth1","id":11,"remote-id":22,
"status":"up","uptime":7,"diagnostic":"ok","remote-diagnostic":"ok","receive-interval":100,"transmit-interval":150,"detect-multiplier":3,
"remote-receive-interval":200,"remote-transmit-interval":250,"remote-detect-multiplier":5},
{"multihop":false,"peer":"10.0.0.3","vrf":"default","id":33,"remote-id":0,"status":"down","downtime":4,"diagnostic":"control detection time expired"}]`
	counters := `[{"peer":"10.0.0.3","vrf":"default","session-up":1,"session-down":2},{"peer":"10.0.0.2","vrf":"default","interface":"eth1","session-up":3,"session-down":4}]`
	got, err := parseBFDPeers([]byte(peers), []byte(counters))
	if err != nil {
		t.Fatal(err)
	}
	if len(got) != 2 || got[0].RemoteID != 22 || got[0].TransmitInterval != 150 || got[0].RemoteDetectMultiplier != 5 || got[0].SessionUp != 3 || got[0].SessionDown != 4 ||
		got[1].Status != "down" || got[1].Downtime != 4 || got[1].SessionUp != 1 || got[1].SessionDown != 2 || got[1].Diagnostic != "control detection time expired" {
		t.Errorf("got %+v", got)
	}
}
