package sim

import (
	"strconv"
	"strings"

	"github.com/swmgr/swmgr/internal/model"
)

// simIntf is what the simulated switch makes of an interface of the
// switch: whether it is up, its FlexSwitch interface index and layer-2
// type, and the port behind it.
type simIntf struct {
	up      bool   // carries traffic (an address on it is up when also its AdminState is UP)
	ifIndex int64  // 0: none known
	l2Type  string // FlexSwitch's L2IntfType of an address on it
	l2ID    int64  // FlexSwitch's L2IntfId
	port    *portState
}

// interfaceKinds is how each of the model's interface kinds becomes a
// simIntf (backend.Interfaces); a new interface kind adds its entry here.
// The functions run under s.mu.
func (s *Sim) interfaceKinds() map[string]func(name, key string) (simIntf, error) {
	return map[string]func(name, key string) (simIntf, error){
		"Port": func(name, _ string) (simIntf, error) {
			n, _, _ := model.ParsePortName(name)
			in := simIntf{l2Type: "Port", l2ID: int64(n)}
			if p := s.ports[name]; p != nil {
				in.up, in.ifIndex, in.port = p.operUp, p.ifIndex, p
			}
			return in, nil
		},
		// A VLAN's interface is up while the VLAN is (vlanUp).
		"Vlan": func(_, key string) (simIntf, error) {
			vid, err := strconv.ParseInt(key, 10, 64)
			in := simIntf{ifIndex: vlanIfIndex(vid), l2Type: "Vlan", l2ID: vid}
			if v := s.applied["Vlan"][key]; v != nil {
				in.up, _ = s.vlanUp(v)
			}
			return in, err
		},
		// A LAG is up while enough of its members are (lag.go).
		"LaPortChannel": func(name, key string) (simIntf, error) {
			n, _ := strconv.ParseInt(strings.TrimPrefix(name, model.LAGPrefix), 10, 64)
			in := simIntf{ifIndex: lagIfIndex(name), l2Type: "Lag", l2ID: n}
			if o := s.applied["LaPortChannel"][key]; o != nil {
				in.up, _ = s.lagUp(o)
			}
			return in, nil
		},
		// A loopback is always up.
		"LogicalIntf": func(name, _ string) (simIntf, error) {
			in := simIntf{up: true, l2Type: "Loopback"}
			if id, ok := s.logical[name]; ok {
				in.ifIndex = logicalIfIndex(id)
			}
			return in, nil
		},
	}
}

// intf is the interface named name as the simulated switch carries it; one
// it cannot resolve is down. The caller holds s.mu.
func (s *Sim) intf(name string) simIntf {
	in, err := s.intfs.Resolve(name)
	if err != nil {
		return simIntf{l2Type: "Port"}
	}
	return in
}
