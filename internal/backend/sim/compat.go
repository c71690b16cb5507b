package sim

import (
	"time"

	"github.com/swmgr/swmgr/internal/backend"
	"github.com/swmgr/swmgr/internal/model"
)

// FlexSwitch's state fields, filled from what the simulated switch
// simulates: traffic of 500-byte unicast frames while a port is up, a BGP
// session that stays Idle because there is no peer. What it does not
// simulate (errors, multicast, BGP messages) stays zero, as docs/objects.md
// says.

// simFrameSize is the size of every frame the simulated ports carry.
const simFrameSize = 500

// defaultVlan carries a port's untagged frames until VLANs exist.
const defaultVlan = 1

// noteChange records what the FlexSwitch state fields need of a change:
// when each BGP neighbor entered its current session state.
func (s *Sim) noteChange(c backend.Change) {
	if c.Kind.Name != "BGPv4Neighbor" {
		return
	}
	switch c.Op {
	case backend.Delete:
		delete(s.since, c.Key)
	case backend.Create:
		s.since[c.Key] = time.Now()
	}
}

// fillCompatState adds FlexSwitch's fields to st, the state of o; the
// caller holds s.mu.
func (s *Sim) fillCompatState(kind *model.Kind, o, st model.Object) {
	switch kind.Name {
	case "Port":
		pkts := st.Int("IfInUcastPkts") + st.Int("IfOutUcastPkts")
		st["IfEtherPkts"] = pkts
		st["IfEtherPkts256To511Octets"] = pkts // every simulated frame is simFrameSize bytes
		st["Pvid"] = int64(defaultVlan)
		st["ConfigMode"] = "L2"
		for _, in := range s.applied["IPv4Intf"] {
			if in.Str("IntfRef") == o.Str("IntfRef") {
				st["ConfigMode"] = "L3"
			}
		}
	case "IPv4Intf":
		if _, _, isPort := model.ParsePortName(o.Str("IntfRef")); !isPort {
			// On a loopback: up with its AdminState, like the loopback.
			st["OperState"] = upDown(o.Str("AdminState") == "UP")
			st["L2IntfType"], st["L2IntfId"] = "Loopback", int64(0)
			st["NumUpEvents"] = int64(0)
			if st.Str("OperState") == "UP" {
				st["NumUpEvents"] = int64(1)
			}
			return
		}
		if p := s.ports[o.Str("IntfRef")]; p != nil {
			if st.Str("OperState") == "UP" {
				st["LastUpEventTime"] = p.lastUp
			}
			st["LastDownEventTime"] = p.lastDown
		}
	case "LogicalIntf":
		st["OperState"] = "UP" // a loopback does not go down
	case "BGPv4Neighbor":
		if t, ok := s.since[kind.Key(o)]; ok {
			st["SessionStateDuration"] = time.Since(t).Round(time.Second).String()
		}
		if o.Bool("BfdEnable") {
			st["BfdNeighborState"] = "down" // no peer answers
		}
	}
}
