package sim

import (
	"context"
	"net/http"
	"slices"
	"strconv"
	"strings"

	"github.com/swmgr/swmgr/internal/apierr"
	"github.com/swmgr/swmgr/internal/backend"
	"github.com/swmgr/swmgr/internal/bind"
	"github.com/swmgr/swmgr/internal/model"
)

// The simulated switch's link aggregation groups (LaPortChannel): a member
// is in the bundle (collecting and distributing, LACP in sync with a
// simulated partner) while its port is up; the LAG is up while AdminState
// is UP and at least MinLinks members are.

// lagIfIndex is the interface index of PortChannel<N>.
func lagIfIndex(name string) int64 {
	n, _ := strconv.ParseInt(strings.TrimPrefix(name, model.LAGPrefix), 10, 64)
	return int64(0x20000000) + n
}

// partnerMAC is the system id of the simulated LACP partner.
const partnerMAC = "02:00:5e:ff:00:01"

// checkLAG: the members of a LAG run at one speed, as the ASIC's trunks
// need (the configured Port Speed, which the simulated ports run at).
func checkLAG(cfg model.View, c backend.Change) error {
	var first string
	var speed int64
	for _, p := range c.After.List("IntfRefList") {
		port := cfg.Get("Port", p)
		if port == nil {
			continue
		}
		if first == "" {
			first, speed = p, port.Int("Speed")
			continue
		}
		if port.Int("Speed") != speed {
			return refused(http.StatusConflict, "LaPortChannel", "IntfRefList", "%s: member %s runs at %d Mb/s and %s at %d Mb/s; a LAG's members run at one speed", c.After.Str("IntfRef"), first, speed, p, port.Int("Speed"))
		}
	}
	return nil
}

// lagUp says whether a LAG is up and which members are in the bundle; the
// caller holds s.mu.
func (s *Sim) lagUp(o model.Object) (up bool, inBundle []string) {
	for _, p := range o.List("IntfRefList") {
		if ps := s.ports[p]; ps != nil && ps.operUp && o.Str("AdminState") == "UP" {
			inBundle = append(inBundle, p)
		}
	}
	return o.Str("AdminState") == "UP" && int64(len(inBundle)) >= o.Int("MinLinks"), inBundle
}

// lagSystemID is the LACP system id every member of LAG o announces: its
// SystemIdMac, else the LAG's own MAC, which is its first member's (as a
// bond takes its first member's); the caller holds s.mu.
func (s *Sim) lagSystemID(o model.Object) string {
	if m := model.SystemIdMAC(o); m != "" {
		return m
	}
	for _, p := range o.List("IntfRefList") {
		if ps := s.ports[p]; ps != nil {
			return ps.mac
		}
	}
	return ""
}

// lagState is LaPortChannel's state form.
func (s *Sim) lagState(ctx context.Context, o model.Object) (model.Object, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	up, inBundle := s.lagUp(o)
	return model.Object{"IfIndex": lagIfIndex(o.Str("IntfRef")), "OperState": upDown(up), "IntfRefListUpInBundle": nonNil(inBundle)}, nil
}

// lagMembers lists LaPortChannelIntfRefListState: every member of every
// LAG, in the order of the LAGs' names and of their lists.
func (s *Sim) lagMembers(ctx context.Context) ([]model.Object, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	names := make([]string, 0, len(s.applied["LaPortChannel"]))
	for name := range s.applied["LaPortChannel"] {
		names = append(names, name)
	}
	slices.Sort(names)
	var out []model.Object
	for _, name := range names {
		o := s.applied["LaPortChannel"][name]
		_, inBundle := s.lagUp(o)
		static := o.Int("LagType") == model.LagTypeStatic
		systemID := s.lagSystemID(o)
		for i, p := range o.List("IntfRefList") {
			in := slices.Contains(inBundle, p)
			m := model.Object{"IntfRef": p, "LagIntfRef": name, "OperState": "DOWN", "Activity": o.Int("LacpMode"),
				"Timeout": int64(0), "Synchronization": int64(1), "Aggregatable": true, "Collecting": in, "Distributing": in,
				"Defaulted": !in || static, "SystemId": systemID, "OperKey": lagIfIndex(name) & 0xffff, "PartnerId": "", "PartnerKey": int64(0),
				"Selected": in, "PartnerSystemPriority": int64(0), "PartnerPortNum": int64(0), "PartnerPortPriority": int64(0),
				"PartnerActivity": int64(1), "PartnerTimeout": int64(0), "PartnerSynchronization": int64(1), "PartnerAggregatable": false,
				"PartnerCollecting": false, "PartnerDistributing": false, "PartnerDefaulted": true}
			if o.Int("Interval") == model.IntervalFast {
				m["Timeout"] = int64(1)
			}
			if ps := s.ports[p]; ps != nil {
				m["IfIndex"] = ps.ifIndex
			}
			if in {
				m["OperState"], m["Synchronization"] = "UP IN BUNDLE", int64(0)
				if !static {
					// The simulated partner: an active LACP peer in sync,
					// its ports numbered as the member list.
					m["PartnerId"], m["PartnerKey"], m["PartnerSystemPriority"], m["PartnerPortNum"], m["PartnerPortPriority"] = partnerMAC, m["OperKey"], int64(32768), int64(i+1), int64(255)
					m["PartnerActivity"], m["PartnerSynchronization"], m["PartnerAggregatable"], m["PartnerCollecting"], m["PartnerDistributing"], m["PartnerDefaulted"] = int64(0), int64(0), true, true, true, false
				}
			}
			out = append(out, m)
		}
	}
	return out, nil
}

func nonNil(l []string) []string {
	if l == nil {
		return []string{}
	}
	return l
}

// clearMacTable: the simulated switch learns no address, so there is
// nothing to flush; a port or LAG it does not have is still a 404.
func (s *Sim) clearMacTable(ctx context.Context, c bind.Call) (bind.Result, error) {
	if intf := c.Fields.Str("IntfRef"); intf != "" {
		s.mu.Lock()
		_, port := s.ports[intf]
		_, lag := s.applied["LaPortChannel"][intf]
		s.mu.Unlock()
		if !port && !lag {
			return bind.Result{}, apierr.New(http.StatusNotFound, apierr.CodeNotFound, c.Kind.Name, "IntfRef", "IntfRef: %s is no port or LAG of this switch", intf)
		}
	}
	return bind.Result{DryRun: c.DryRun, Value: map[string]any{"Result": "Success", "DryRun": c.DryRun, "Cleared": 0, "Entries": []model.Object{}}}, nil
}
