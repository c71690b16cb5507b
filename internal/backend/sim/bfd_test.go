package sim

import (
	"net/http"
	"testing"

	"github.com/swmgr/swmgr/internal/apierr"
	"github.com/swmgr/swmgr/internal/backend"
	"github.com/swmgr/swmgr/internal/bind"
	"github.com/swmgr/swmgr/internal/model"
)

// TestSimulatedBFD: every session the configuration asks for (a
// BfdSession, a BGP neighbour with BfdEnable) is listed down, no peer
// answering, with its parameters' intervals or bfdd's defaults for
// "default"; BfdGlobal Enable false lists none; ResetBfdSession finds a
// session or answers 404.
func TestSimulatedBFD(t *testing.T) {
	reg := model.Builtin()
	s := New(Options{Ports: 2})
	kind := func(name string) *model.Kind { return reg.Lookup(model.Config, name) }
	obj := func(k string, fields model.Object) model.Object {
		o := kind(k).Defaults()
		for n, v := range fields {
			o[n] = v
		}
		return o
	}
	create := func(k string, o model.Object) backend.Change {
		return backend.Change{Kind: kind(k), Op: backend.Create, Key: kind(k).Key(o), After: o}
	}
	fast := obj("BfdSessionParam", model.Object{"Name": "fast", "RequiredMinRxInterval": int64(100), "DesiredMinTxInterval": int64(150)})
	session := obj("BfdSession", model.Object{"IpAddr": "10.1.1.9", "ParamName": "fast"})
	nb := obj("BGPv4Neighbor", model.Object{"NeighborAddress": "10.1.1.2", "PeerAS": "65002", "BfdEnable": true})
	// A member of a group with BFD runs it with the group's parameters.
	group := obj("BGPv4PeerGroup", model.Object{"Name": "SPINES", "PeerAS": "external", "BfdEnable": true, "BfdSessionParam": "fast"})
	member := obj("BGPv4Neighbor", model.Object{"NeighborAddress": "10.1.1.6", "PeerGroup": "SPINES"})
	global := obj("BfdGlobal", nil)
	if err := s.Apply(ctx, []backend.Change{create("BfdGlobal", global), create("BfdSessionParam", fast), create("BfdSession", session), create("BGPv4Neighbor", nb),
		create("BGPv4PeerGroup", group), create("BGPv4Neighbor", member)}); err != nil {
		t.Fatal(err)
	}
	list, err := s.bfdSessions(ctx)
	if err != nil || len(list) != 3 {
		t.Fatalf("sessions %v %v, want three", list, err)
	}
	for _, want := range []struct {
		peer, owner string
		tx, rx      int64
	}{{"10.1.1.9", "user", 150, 100}, {"10.1.1.2", "bgp", model.BfdDefaultInterval, model.BfdDefaultInterval}, {"10.1.1.6", "bgp", 150, 100}} {
		found := false
		for _, st := range list {
			if st.Str("IpAddr") == want.peer {
				found = true
				if st.Str("SessionState") != "down" || st.Str("Owner") != want.owner || st.Int("DesiredMinTxInterval") != want.tx || st.Int("RequiredMinRxInterval") != want.rx || st.Int("LocalDiscriminator") == 0 {
					t.Errorf("session %s: %v", want.peer, st)
				}
			}
		}
		if !found {
			t.Errorf("no session with %s in %v", want.peer, list)
		}
	}
	g, _ := s.bfdGlobalState(ctx, global)
	if g.Int("NumTotalSessions") != 3 || g.Int("NumDownSessions") != 3 || g.Int("NumUpSessions") != 0 {
		t.Errorf("BfdGlobal state %v", g)
	}
	reset := reg.Lookup(model.Action, "ResetBfdSession")
	if _, err := s.DaemonActions()["ResetBfdSession"].Run(ctx, bind.Call{Kind: reset, Fields: model.Object{"IpAddr": "10.1.1.9"}}); err != nil {
		t.Errorf("reset of a session: %v", err)
	}
	if _, err := s.DaemonActions()["ResetBfdSession"].Run(ctx, bind.Call{Kind: reset, Fields: model.Object{"IpAddr": "10.1.1.7"}}); apierr.From(err).Status != http.StatusNotFound {
		t.Errorf("reset of no session: %v, want a 404", err)
	}
	off := global.Clone()
	off["Enable"] = false
	if err := s.Apply(ctx, []backend.Change{{Kind: kind("BfdGlobal"), Op: backend.Update, Key: kind("BfdGlobal").Key(off), Before: global, After: off}}); err != nil {
		t.Fatal(err)
	}
	if list, _ := s.bfdSessions(ctx); len(list) != 0 {
		t.Errorf("BFD disabled, sessions %v", list)
	}
}
