package linux

import (
	"bufio"
	"bytes"
	"fmt"
	"os"
	"strconv"
	"strings"

	"github.com/vishvananda/netns"
)

// LACPPartner is what one slave of an 802.3ad bond last heard from its
// partner (the "details partner lacp pdu" of /proc/net/bonding/<bond>:
// netlink gives a slave's partner only as its port state bits), with the
// slave's own operational key (netlink gives the bond's only once it has
// an active aggregator).
type LACPPartner struct {
	ActorKey       int
	SystemPriority int
	SystemMAC      string
	Key            int
	PortPriority   int
	PortNumber     int
	State          uint8
}

// parseBondProc reads the per-slave partner details of a bond's
// /proc/net/bonding file, by slave name. A bond not in 802.3ad mode has
// none.
func parseBondProc(b []byte) map[string]LACPPartner {
	out := map[string]LACPPartner{}
	var slave string
	var p LACPPartner
	inPartner, inActor := false, false
	flush := func() {
		if slave != "" && p.SystemMAC != "" {
			out[slave] = p
		}
	}
	sc := bufio.NewScanner(bytes.NewReader(b))
	for sc.Scan() {
		line := sc.Text()
		key, val, ok := strings.Cut(strings.TrimSpace(line), ":")
		val = strings.TrimSpace(val)
		switch {
		case strings.HasPrefix(line, "Slave Interface:"):
			flush()
			slave, p, inPartner, inActor = val, LACPPartner{}, false, false
		case strings.HasPrefix(line, "details partner lacp pdu"):
			inPartner, inActor = true, false
		case strings.HasPrefix(line, "details actor lacp pdu"):
			inPartner, inActor = false, true
		case !strings.HasPrefix(line, " ") || !ok:
			inPartner, inActor = inPartner && strings.HasPrefix(line, " "), inActor && strings.HasPrefix(line, " ")
		case inActor:
			if key == "port key" {
				p.ActorKey, _ = strconv.Atoi(val)
			}
		case !inPartner:
		default:
			n, _ := strconv.Atoi(val)
			switch key {
			case "system priority":
				p.SystemPriority = n
			case "system mac address":
				p.SystemMAC = val
			case "oper key":
				p.Key = n
			case "port priority":
				p.PortPriority = n
			case "port number":
				p.PortNumber = n
			case "port state":
				p.State = uint8(n)
			}
		}
	}
	flush()
	return out
}

// LACPPartners reads the partner details of every slave of bond name from
// the bonding driver's /proc file of the switch's namespace (/proc/net is
// the reading thread's namespace's).
func (k *Kernel) LACPPartners(name string) (map[string]LACPPartner, error) {
	var b []byte
	err := withNetns(func() error {
		if err := netns.Set(k.ns); err != nil {
			return fmt.Errorf("enter the switch's namespace: %w", err)
		}
		var err error
		b, err = os.ReadFile("/proc/thread-self/net/bonding/" + name)
		return err
	})
	if err != nil {
		if os.IsNotExist(err) {
			return nil, nil
		}
		return nil, fmt.Errorf("bond %s partners: %w", name, err)
	}
	return parseBondProc(b), nil
}
