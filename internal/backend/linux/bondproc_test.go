package linux

import (
	"reflect"
	"testing"
)

// bondProc802_3ad is /proc/net/bonding/bond0 of Linux 6.1 with two slaves:
// eth1 has heard its partner, eth2 has not (defaulted: no partner MAC).
const bondProc802_3ad = `Ethernet Channel Bonding Driver: v6.1.0-57-amd64

Bonding Mode: IEEE 802.3ad Dynamic link aggregation
Transmit Hash Policy: layer2 (0)
MII Status: up

802.3ad info
LACP active: on
LACP rate: fast
Min links: 0
Aggregator selection policy (ad_select): stable
System priority: 65535
System MAC address: 0a:11:22:33:44:55
Active Aggregator Info:
	Aggregator ID: 1
	Number of ports: 1
	Actor Key: 15
	Partner Key: 9
	Partner Mac Address: 02:00:00:00:00:09

Slave Interface: eth1
MII Status: up
Speed: 10000 Mbps
Aggregator ID: 1
details actor lacp pdu:
    system priority: 65535
    system mac address: 0a:11:22:33:44:55
    port key: 15
    port priority: 255
    port number: 1
    port state: 63
details partner lacp pdu:
    system priority: 100
    system mac address: 02:00:00:00:00:09
    oper key: 9
    port priority: 255
    port number: 2
    port state: 61

Slave Interface: eth2
MII Status: down
Aggregator ID: 2
details actor lacp pdu:
    system priority: 65535
    system mac address: 0a:11:22:33:44:55
    port key: 0
    port priority: 255
    port number: 2
    port state: 69
details partner lacp pdu:
    system priority: 65535
    system mac address: 00:00:00:00:00:00
    oper key: 1
    port priority: 255
    port number: 1
    port state: 1
`

func TestParseBondProc(t *testing.T) {
	for _, c := range []struct {
		name string
		in   string
		want map[string]LACPPartner
	}{
		{"802.3ad, one partner heard, one defaulted", bondProc802_3ad, map[string]LACPPartner{
			"eth1": {ActorKey: 15, SystemPriority: 100, SystemMAC: "02:00:00:00:00:09", Key: 9, PortPriority: 255, PortNumber: 2, State: 61},
			"eth2": {ActorKey: 0, SystemPriority: 65535, SystemMAC: "00:00:00:00:00:00", Key: 1, PortPriority: 255, PortNumber: 1, State: 1},
		}},
		{"balance-xor: no LACP details", "Bonding Mode: load balancing (xor)\n\nSlave Interface: eth1\nMII Status: up\n", map[string]LACPPartner{}},
		{"empty", "", map[string]LACPPartner{}},
	} {
		t.Run(c.name, func(t *testing.T) {
			if got := parseBondProc([]byte(c.in)); !reflect.DeepEqual(got, c.want) {
				t.Errorf("got %+v, want %+v", got, c.want)
			}
		})
	}
}
