package sim

import (
	"context"
	"hash/fnv"
	"maps"
	"slices"
	"time"

	"github.com/swmgr/swmgr/internal/apierr"
	"github.com/swmgr/swmgr/internal/backend"
	"github.com/swmgr/swmgr/internal/bind"
	"github.com/swmgr/swmgr/internal/model"
)

// BFD on the simulated switch is kept and not run, as BGP is: every
// session (each BfdSession, and each BGPv4Neighbor with BfdEnable while
// BfdGlobal is enabled) is down, no peer answering, with the intervals
// its parameters ask for.

// bfdDrivers are the simulated daemons' BFD kinds.
func (s *Sim) bfdDrivers() map[string]*backend.Driver {
	return map[string]*backend.Driver{
		"BfdGlobal":       {Apply: s.record, State: s.bfdGlobalState},
		"BfdSessionParam": {Apply: s.record},
		"BfdSession":      {Apply: s.record},
		"BfdSessionState": {List: s.bfdSessions},
	}
}

// Actions are the simulated daemons' actions, by name.
func (s *Sim) bfdActions() map[string]*bind.Action {
	return map[string]*bind.Action{"ResetBfdSession": {Run: s.resetBFDSession}}
}

// bfdSessions lists the simulated sessions.
func (s *Sim) bfdSessions(context.Context) ([]model.Object, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if g := s.applied["BfdGlobal"]["default"]; g != nil && !g.Bool("Enable") {
		return []model.Object{}, nil
	}
	out := []model.Object{}
	session := func(kind, key, addr, ifName, owner, param string) {
		st := model.Object{"IpAddr": addr, "IfName": ifName, "Vrf": "default", "LocalIpAddr": "", "Owner": owner, "ParamName": param,
			"SessionState": "down", "RemoteSessionState": "", "LocalDiagType": "", "LocalDiscriminator": discriminator(kind, key), "RemoteDiscriminator": int64(0),
			"RemoteMinRxInterval": int64(0), "RemoteMinTxInterval": int64(0), "RemoteDetectionMultiplier": int64(0), "ToUpCount": int64(0), "ToDownCount": int64(0)}
		for f, v := range s.bfdInEffect(param) {
			st[f] = v
		}
		since := s.started
		if t := s.times[kind+"\x00"+key]; t != nil {
			since = t.created
		}
		st["LastChange"] = since.UTC().Truncate(time.Second).Format(time.RFC3339)
		out = append(out, st)
	}
	for _, key := range slices.Sorted(maps.Keys(s.applied["BfdSession"])) {
		o := s.applied["BfdSession"][key]
		ifName := o.Str("Interface")
		if ifName == "None" {
			ifName = ""
		}
		session("BfdSession", key, o.Str("IpAddr"), ifName, "user", o.Str("ParamName"))
	}
	for _, key := range slices.Sorted(maps.Keys(s.applied["BGPv4Neighbor"])) {
		o := s.applied["BGPv4Neighbor"][key]
		// A neighbour runs BFD with its own settings, else its group's.
		g := s.applied["BGPv4PeerGroup"][o.Str("PeerGroup")]
		switch {
		case o.Bool("BfdEnable"):
			session("BGPv4Neighbor", key, o.Str("NeighborAddress"), o.Str("IntfRef"), "bgp", o.Str("BfdSessionParam"))
		case g.Bool("BfdEnable"):
			session("BGPv4Neighbor", key, o.Str("NeighborAddress"), o.Str("IntfRef"), "bgp", g.Str("BfdSessionParam"))
		}
	}
	return out, nil
}

// bfdInEffect are the intervals a session with the parameters named
// param runs with: the BfdSessionParam's, or the BFD daemon's defaults
// for "default" without one. Called with s.mu held.
func (s *Sim) bfdInEffect(param string) model.Object {
	if p := s.applied["BfdSessionParam"][param]; p != nil {
		return model.Object{"DesiredMinTxInterval": p.Int("DesiredMinTxInterval"), "RequiredMinRxInterval": p.Int("RequiredMinRxInterval"), "DetectionMultiplier": p.Int("LocalMultiplier")}
	}
	return model.Object{"DesiredMinTxInterval": int64(model.BfdDefaultInterval), "RequiredMinRxInterval": int64(model.BfdDefaultInterval), "DetectionMultiplier": int64(model.BfdDefaultMultiplier)}
}

// discriminator is a session's local discriminator: stable for its
// object, never 0 (RFC 5880: nonzero).
func discriminator(kind, key string) int64 {
	h := fnv.New32a()
	h.Write([]byte(kind + "\x00" + key))
	return int64(h.Sum32()|1) & 0x7fffffff
}

func (s *Sim) bfdGlobalState(ctx context.Context, o model.Object) (model.Object, error) {
	sessions, _ := s.bfdSessions(ctx)
	n := int64(len(sessions))
	return model.Object{"NumTotalSessions": n, "NumUpSessions": int64(0), "NumDownSessions": n, "NumAdminDownSessions": int64(0)}, nil
}

// resetBFDSession finds the session; a simulated session has nothing to
// restart.
func (s *Sim) resetBFDSession(ctx context.Context, c bind.Call) (bind.Result, error) {
	sessions, _ := s.bfdSessions(ctx)
	addr, ifName := c.Fields.Str("IpAddr"), c.Fields.Str("IfName")
	for _, st := range sessions {
		if st.Str("IpAddr") == addr && (ifName == "" || st.Str("IfName") == ifName) {
			return bind.Result{DryRun: c.DryRun}, nil
		}
	}
	return bind.Result{}, apierr.NotFound(apierr.CodeNotFound, "ResetBfdSession", "no BFD session with %s", addr)
}
