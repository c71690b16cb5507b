package linux

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"net/http"
	"sort"
	"sync"
	"time"

	"github.com/swmgr/swmgr/internal/apierr"
	"github.com/swmgr/swmgr/internal/frr"
	"github.com/swmgr/swmgr/internal/model"
)

// BGP on the Linux backend: BGPGlobal, BGPVrf and BGPv4Neighbor are run by
// FRR (bgpd, with zebra installing the learned routes in the switch
// namespace's kernel tables). The three kinds make one FRR configuration,
// so their drivers edit a stage of the Tx and the stage is sent to FRR once
// per apply (frr.Router diffs it against FRR's running configuration:
// only what changed is sent, and no other session is reset). The undo of
// that step applies the previous configuration again, so a batch that fails
// later (a kernel change, another kind) leaves FRR as it was.
//
// A neighbor whose VRF has no BGP instance yet (BGPGlobal ASNum "") is
// kept in the store but not given to FRR until the instance exists; its
// state says SessionState 0 (none).

// bgpRunner is the BGP part of the backend: the FRR instance and the
// objects it was last given successfully.
type bgpRunner struct {
	router *frr.Router
	mu     sync.Mutex
	// applied holds the committed objects by kind and key.
	applied map[string]map[string]model.Object

	cacheMu    sync.Mutex
	cacheAt    time.Time
	neighbors  []frr.NeighborState
	globals    []frr.GlobalState
	cacheValid time.Duration
}

const kindBGP = "BGPv4Neighbor"

// unavailable is the 503 of a daemon that does not answer (it is being
// restarted): the client may retry, nothing was changed.
func unavailable(kind, daemon string, err error) error {
	return apierr.New(http.StatusServiceUnavailable, apierr.CodeBackend, kind, "", "%s is not answering (being restarted?); nothing was changed: %v", daemon, err)
}

func newBGPRunner(r *frr.Router, cache time.Duration) *bgpRunner {
	return &bgpRunner{router: r, applied: map[string]map[string]model.Object{}, cacheValid: cache}
}

// bgpKey is an object's identity within its kind.
func bgpKey(kind string, o model.Object) string {
	switch kind {
	case "BGPGlobal":
		return frr.DefaultVRF
	case "BGPVrf", "BGPv4PeerGroup", "BGPv6PeerGroup":
		return o.Str("Name")
	case "BGPv4Aggregate", "BGPv6Aggregate":
		return o.Str("IpPrefix")
	}
	return bgpVRF(o.Str("Vrf")) + "|" + o.Str("IntfRef") + "|" + o.Str("NeighborAddress")
}

func bgpVRF(v string) string {
	if v == "" {
		return frr.DefaultVRF
	}
	return v
}

func cloneObjects(in map[string]map[string]model.Object) map[string]map[string]model.Object {
	out := make(map[string]map[string]model.Object, len(in))
	for k, m := range in {
		out[k] = maps.Clone(m)
	}
	return out
}

// bgpStage is the BGP objects as the Tx will leave them.
func (b *Backend) bgpStage(tx *Tx, kind string) map[string]map[string]model.Object {
	return tx.staged("frr", kind, func() any {
		b.bgp.mu.Lock()
		defer b.bgp.mu.Unlock()
		return cloneObjects(b.bgp.applied)
	}, b.flushBGP).(map[string]map[string]model.Object)
}

// flushBGP makes FRR run the staged objects; its undo puts the previous
// configuration back.
func (b *Backend) flushBGP(tx *Tx, value any) error {
	staged := value.(map[string]map[string]model.Object)
	b.bgp.mu.Lock()
	previous := b.bgp.applied
	b.bgp.mu.Unlock()
	want, prev := bgpConfig(staged), bgpConfig(previous)
	if err := want.Validate(); err != nil {
		return &Refusal{Msg: err.Error()} // what FRR cannot express
	}
	return tx.change("apply the BGP configuration to FRR", func() error {
		ctx, cancel := context.WithTimeout(context.Background(), frrApplyTimeout)
		defer cancel()
		if err := b.bgp.router.Apply(ctx, want); err != nil {
			var rejected *frr.RejectedError
			if errors.As(err, &rejected) {
				return &Refusal{Msg: err.Error()} // FRR's own message
			}
			return unavailable(kindBGP, "FRR", err)
		}
		b.bgp.setApplied(staged)
		return nil
	}, func() error {
		ctx, cancel := context.WithTimeout(context.Background(), frrApplyTimeout)
		defer cancel()
		b.bgp.setApplied(previous)
		return b.bgp.router.Apply(ctx, prev)
	})
}

func (r *bgpRunner) setApplied(objs map[string]map[string]model.Object) {
	r.mu.Lock()
	r.applied = objs
	r.mu.Unlock()
	r.cacheMu.Lock()
	r.cacheAt = time.Time{}
	r.cacheMu.Unlock()
}

// bgpRouters turns the BGP objects into FRR's configuration, in a stable
// order (bgpConfig adds BFD's).
func bgpRouters(objs map[string]map[string]model.Object) frr.Config {
	cfg := frr.Config{Policies: policiesOf(objs)}
	global := objs["BGPGlobal"][frr.DefaultVRF]
	if global == nil || global.Str("ASNum") == "" {
		return cfg
	}
	as := global.Str("ASNum")
	cfg.Instances = append(cfg.Instances, frr.Instance{
		VRF: frr.DefaultVRF, ASNum: as, RouterID: global.Str("RouterId"), Disabled: global.Bool("Disabled"),
		UseMultiplePaths: global.Bool("UseMultiplePaths"), EBGPMaxPaths: uint32(global.Int("EBGPMaxPaths")),
		EBGPAllowMultipleAS: global.Bool("EBGPAllowMultipleAS"), IBGPMaxPaths: uint32(global.Int("IBGPMaxPaths")),
		Redistribution: redistributionOf(global),
	})
	instances := map[string]bool{frr.DefaultVRF: true}
	for _, name := range sortedKeys(objs["BGPVrf"]) {
		v := objs["BGPVrf"][name]
		if name == "" || name == frr.DefaultVRF {
			continue
		}
		instances[name] = true
		// FlexSwitch's BGPVrf has no AS of its own: the VRF's instance
		// runs the switch's AS.
		cfg.Instances = append(cfg.Instances, frr.Instance{VRF: name, ASNum: as,
			UseMultiplePaths: v.Bool("UseMultiplePaths"), EBGPMaxPaths: uint32(v.Int("EBGPMaxPaths")),
			IBGPMaxPaths: uint32(v.Int("IBGPMaxPaths")), Redistribution: redistributionOf(v)})
	}
	for _, key := range sortedKeys(objs["BGPv4Neighbor"]) {
		n := neighborOf(objs["BGPv4Neighbor"][key])
		if instances[bgpVRF(n.VRF)] {
			cfg.Neighbors = append(cfg.Neighbors, n)
		}
	}
	for _, key := range sortedKeys(objs["BGPv4PeerGroup"]) {
		g := neighborOf(objs["BGPv4PeerGroup"][key])
		g.Name = key
		cfg.PeerGroups = append(cfg.PeerGroups, g)
	}
	addBGPv6(&cfg, objs, instances)
	cfg.EVPN = evpnOf(objs) // vxlan.go
	// The unnumbered neighbors' router advertisements (ndp.go).
	cfg.RAIntervals = raIntervals(cfg.Neighbors, objs["NDPGlobal"])
	return cfg
}

func sortedKeys(m map[string]model.Object) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	return keys
}

// redistributionOf reads FlexSwitch's Redistribution list where the model
// declares it (a list of {Sources, Policy}).
func redistributionOf(o model.Object) []frr.Redistribution {
	var out []frr.Redistribution
	list, _ := o["Redistribution"].([]any)
	for _, e := range list {
		if m, ok := e.(map[string]any); ok {
			src, _ := m["Sources"].(string)
			pol, _ := m["Policy"].(string)
			out = append(out, frr.Redistribution{Sources: src, Policy: pol})
		}
	}
	for _, m := range asObjects(o["Redistribution"]) {
		out = append(out, frr.Redistribution{Sources: m.Str("Sources"), Policy: m.Str("Policy")})
	}
	return out
}

func asObjects(v any) []model.Object {
	list, _ := v.([]model.Object)
	return list
}

// neighborOf maps a BGPv4Neighbor to FRR's neighbor. Fields the model does
// not declare (yet) read as their zero value, FlexSwitch's default.
func neighborOf(o model.Object) frr.Neighbor {
	return frr.Neighbor{
		VRF: bgpVRF(o.Str("Vrf")), NeighborAddress: o.Str("NeighborAddress"), IntfRef: o.Str("IntfRef"),
		Description: o.Str("Description"), Disabled: o.Bool("Disabled"), PeerGroup: o.Str("PeerGroup"),
		PeerAS: o.Str("PeerAS"), LocalAS: o.Str("LocalAS"), UpdateSource: o.Str("UpdateSource"),
		NextHopSelf: o.Bool("NextHopSelf"), AuthPassword: o.Str("AuthPassword"),
		RouteReflectorClusterId: uint32(o.Int("RouteReflectorClusterId")), RouteReflectorClient: o.Bool("RouteReflectorClient"),
		MultiHopEnable: o.Bool("MultiHopEnable"), MultiHopTTL: uint8(o.Int("MultiHopTTL")),
		ConnectRetryTime: uint32(o.Int("ConnectRetryTime")), HoldTime: uint32(o.Int("HoldTime")), KeepaliveTime: uint32(o.Int("KeepaliveTime")),
		AddPathsRx: o.Bool("AddPathsRx"), AddPathsMaxTx: uint8(o.Int("AddPathsMaxTx")),
		BfdEnable: o.Bool("BfdEnable"), BfdSessionParam: o.Str("BfdSessionParam"),
		MaxPrefixes: uint32(o.Int("MaxPrefixes")), MaxPrefixesThresholdPct: uint8(o.Int("MaxPrefixesThresholdPct")),
		MaxPrefixesDisconnect: o.Bool("MaxPrefixesDisconnect"), MaxPrefixesRestartTimer: uint8(o.Int("MaxPrefixesRestartTimer")),
		AdjRIBInFilter: o.Str("AdjRIBInFilter"), AdjRIBOutFilter: o.Str("AdjRIBOutFilter"),
	}
}

// checkBGP is the pure check of one object: what FRR cannot express,
// rendered alone (with a stand-in instance for a neighbor).
func checkBGP(kind string) func(b *Backend, c changeView) error {
	return func(b *Backend, c changeView) error {
		o := c.after()
		var cfg frr.Config
		switch kind {
		case "BGPGlobal":
			if o.Str("ASNum") == "" {
				return nil
			}
			cfg = bgpConfig(map[string]map[string]model.Object{"BGPGlobal": {frr.DefaultVRF: o}})
		case "BGPVrf":
			stand := model.Object{"ASNum": "65000"}
			cfg = bgpConfig(map[string]map[string]model.Object{"BGPGlobal": {frr.DefaultVRF: stand}, "BGPVrf": {o.Str("Name"): o}})
		case "BGPv4PeerGroup", "BGPv6PeerGroup":
			// A group is rendered where a neighbor uses it: a stand-in one.
			g := neighborOf(o)
			g.Name, g.IPv6 = o.Str("Name"), kind == "BGPv6PeerGroup"
			cfg.Instances = []frr.Instance{{VRF: frr.DefaultVRF, ASNum: "65000"}}
			cfg.PeerGroups = []frr.Neighbor{g}
			cfg.Neighbors = []frr.Neighbor{{IntfRef: "stand-in0", PeerGroup: g.Name, IPv6: g.IPv6}}
		case "BGPv4Aggregate", "BGPv6Aggregate":
			cfg.Instances = []frr.Instance{{VRF: frr.DefaultVRF, ASNum: "65000"}}
			cfg.Aggregates = []frr.Aggregate{aggregateOf(o)}
		default:
			n := neighborOf(o)
			n.IPv6 = kind == "BGPv6Neighbor"
			cfg.Instances = []frr.Instance{{VRF: frr.DefaultVRF, ASNum: "65000"}}
			if n.VRF != frr.DefaultVRF {
				cfg.Instances = append(cfg.Instances, frr.Instance{VRF: n.VRF, ASNum: "65000"})
			}
			cfg.Neighbors = []frr.Neighbor{n}
		}
		if err := cfg.Validate(); err != nil {
			return &Refusal{Msg: err.Error()}
		}
		return nil
	}
}

func bgpDriver(kind string) *driver {
	d := &driver{
		check: checkBGP(kind),
		ensure: func(b *Backend, tx *Tx, after, before model.Object) error {
			st := b.bgpStage(tx, kind)
			if st[kind] == nil {
				st[kind] = map[string]model.Object{}
			}
			o := after.Clone()
			if (kind == "BGPv4Neighbor" || kind == "BGPv6Neighbor") && o.Str("IntfRef") != "" {
				// FRR names an unnumbered neighbor after its netdev.
				dev, err := b.bgpNetdev(o.Str("IntfRef"))
				if err != nil {
					return err
				}
				o["IntfRef"] = dev
			}
			st[kind][bgpKey(kind, after)] = o
			return nil
		},
		remove: func(b *Backend, tx *Tx, before model.Object) error {
			delete(b.bgpStage(tx, kind)[kind], bgpKey(kind, before))
			return nil
		},
	}
	switch kind {
	case "BGPGlobal":
		d.state = func(b *Backend, o model.Object) (model.Object, error) { return b.bgp.globalState(o) }
	case "BGPv4Neighbor", "BGPv6Neighbor":
		d.state = func(b *Backend, o model.Object) (model.Object, error) {
			dev := ""
			if ref := o.Str("IntfRef"); ref != "" {
				dev, _ = b.bgpNetdev(ref)
			}
			return b.bgp.neighborState(o, dev, kind == "BGPv6Neighbor")
		}
	}
	return d
}

// refresh reads FRR's state once for all the reads of a short window (a
// list of every neighbor's state costs one FRR query, not one each).
func (r *bgpRunner) refresh() ([]frr.GlobalState, []frr.NeighborState, error) {
	r.cacheMu.Lock()
	defer r.cacheMu.Unlock()
	if !r.cacheAt.IsZero() && time.Since(r.cacheAt) < r.cacheValid {
		return r.globals, r.neighbors, nil
	}
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	gs, err := r.router.Globals(ctx)
	if err != nil {
		return nil, nil, unavailable(kindBGP, "FRR", err)
	}
	ns, err := r.router.Neighbors(ctx)
	if err != nil {
		return nil, nil, unavailable(kindBGP, "FRR", err)
	}
	r.globals, r.neighbors, r.cacheAt = gs, ns, time.Now()
	return gs, ns, nil
}

func (r *bgpRunner) globalState(o model.Object) (model.Object, error) {
	gs, _, err := r.refresh()
	if err != nil {
		return nil, err
	}
	st := model.BGPGlobalInEffect(o)
	st["AS"], st["TotalPaths"], st["Totalv4Prefixes"] = "", int64(0), int64(0)
	for _, g := range gs {
		if g.VRF == frr.DefaultVRF {
			st["AS"], st["TotalPaths"], st["Totalv4Prefixes"] = g.AS, int64(g.TotalPaths), int64(g.Totalv4Prefixes)
			if g.RouterID != "" {
				st["RouterId"] = g.RouterID // the one FRR chose when RouterId is 0.0.0.0
			}
		}
	}
	return st, nil
}

// bgpNetdev is the netdev of the interface of an unnumbered neighbor: a
// port's, a VLAN's SVI; a loopback carries no session.
func (b *Backend) bgpNetdev(ref string) (string, error) {
	dev, lb, err := b.netdevOf(ref)
	if err != nil {
		return "", err
	}
	if lb {
		return "", &Refusal{Field: "IntfRef", Msg: fmt.Sprintf("IntfRef %s is a loopback: an unnumbered session runs on a port or a VLAN interface", ref)}
	}
	return dev, nil
}

// neighborState is a neighbor's state; dev is the netdev of an unnumbered
// neighbor's interface (FRR's name for it), else ""; v6 says a
// BGPv6Neighbor (its prefix counts are IPv6 unicast's).
func (r *bgpRunner) neighborState(o model.Object, dev string, v6 bool) (model.Object, error) {
	_, ns, err := r.refresh()
	if err != nil {
		return nil, err
	}
	vrf, addr := bgpVRF(o.Str("Vrf")), o.Str("NeighborAddress")
	counters := func(update, notification uint64) model.Object {
		return model.Object{"Update": int64(update), "Notification": int64(notification)}
	}
	queues := func(in, out uint32) model.Object { return model.Object{"Input": int64(in), "Output": int64(out)} }
	// What the configuration puts in effect (the global AS, the default
	// timers), then what FRR says it uses.
	r.mu.Lock()
	st := model.BGPNeighborInEffect(o, r.applied["BGPGlobal"][frr.DefaultVRF].Str("ASNum"))
	r.mu.Unlock()
	for n, v := range (model.Object{"SessionState": int64(frr.SessionNone), "SessionStateDuration": "0s", "TotalPrefixes": int64(0),
		"Messages": model.Object{"Sent": counters(0, 0), "Received": counters(0, 0)}, "Queues": queues(0, 0),
		"ConnectionsEstablished": int64(0)}) {
		st[n] = v
	}
	setPrefixCounts(st, frr.PrefixCounts{})
	if !v6 {
		setFamilyCounts(st, "IPv6", frr.PrefixCounts{})
	}
	for _, n := range ns {
		if n.VRF != vrf || n.NeighborAddress != addr || (addr == "" && n.IntfRef != dev) {
			continue
		}
		st["PeerType"] = int64(n.PeerType)
		st["SessionState"] = int64(n.SessionState)
		st["SessionStateDuration"] = (time.Duration(n.UptimeMsec) * time.Millisecond).Truncate(time.Second).String()
		st["TotalPrefixes"] = int64(n.TotalPrefixes)
		st["Messages"] = model.Object{"Sent": counters(n.UpdatesSent, uint64(n.NotificationsSent)), "Received": counters(n.UpdatesReceived, uint64(n.NotificationsRecv))}
		st["Queues"] = queues(n.InputQueue, n.OutputQueue)
		st["ConnectionsEstablished"] = int64(n.ConnectionsUp)
		setPrefixCounts(st, familyCounts(n, v6))
		if !v6 {
			setFamilyCounts(st, "IPv6", n.IPv6Unicast)
		}
		// The timers in force (negotiated while Established), where the
		// config form has what was asked for: a hold time of 0 or 90
		// shows as the peer's lower one.
		if n.HoldTime != 0 || n.KeepaliveTime != 0 {
			st["HoldTime"] = int64(n.HoldTime)
			st["KeepaliveTime"] = int64(n.KeepaliveTime)
		}
		if n.ConnectRetryTime != 0 {
			st["ConnectRetryTime"] = int64(n.ConnectRetryTime)
		}
		if n.LocalAS != "" && n.LocalAS != "0" {
			st["LocalAS"] = n.LocalAS
		}
	}
	return st, nil
}
