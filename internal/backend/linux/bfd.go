package linux

import (
	"context"
	"fmt"
	"sync"
	"time"

	"github.com/swmgr/swmgr/internal/apierr"
	"github.com/swmgr/swmgr/internal/bind"
	"github.com/swmgr/swmgr/internal/frr"
	"github.com/swmgr/swmgr/internal/model"
)

// BFD on the Linux backend is FRR's bfdd, beside bgpd in the same FRR
// instance: BfdSessionParam objects are its profiles, BfdSession objects
// its static peers, and a BGPv4Neighbor with BfdEnable asks bfdd for its
// session (`neighbor X bfd profile P`), which brings BGP down as soon as
// BFD does. The BFD kinds are part of the one FRR configuration the BGP
// kinds make (bgp.go): their drivers edit the same stage of the Tx, sent
// to FRR once per apply. BfdGlobal Enable false leaves no session: no
// static peer, no neighbour's `bfd` line.
//
// bfdd tells swmgr when a session changes state (its control socket,
// frr.Router.WatchBFD): the new state is read at once and each change
// handed to Options.OnStateChange as a BfdSessionState object.

// bfdKinds are the config kinds bfdd runs.
var bfdKinds = []string{"BfdGlobal", "BfdSessionParam", "BfdSession"}

// bfdRunner is the state side of BFD: the sessions bfdd last reported,
// read at most once per cache window, and the states last handed on.
type bfdRunner struct {
	router *frr.Router
	valid  time.Duration
	stop   context.CancelFunc

	mu     sync.Mutex
	at     time.Time
	peers  []frr.BFDPeerState
	states map[string]string // session key -> state last handed on
}

func bfdKey(kind string, o model.Object) string {
	switch kind {
	case "BfdGlobal":
		return frr.DefaultVRF
	case "BfdSessionParam":
		return o.Str("Name")
	}
	return o.Str("IpAddr")
}

func bfdDriver(kind string) *driver {
	d := &driver{
		check: func(b *Backend, c changeView) error {
			o := c.after()
			if kind == "BfdSession" {
				dev, err := b.bfdNetdev(o.Str("Interface"))
				if err != nil {
					return err
				}
				o = o.Clone()
				o["Interface"] = dev
			}
			objs := map[string]map[string]model.Object{kind: {bfdKey(kind, o): o}}
			if err := bgpConfig(objs).Validate(); err != nil {
				return &Refusal{Msg: err.Error()}
			}
			return nil
		},
	}
	var resolve func(*Backend, model.Object) error
	if kind == "BfdSession" {
		resolve = func(b *Backend, o model.Object) error {
			dev, err := b.bfdNetdev(o.Str("Interface"))
			o["Interface"] = dev
			return err
		}
	}
	d.ensure, d.remove = frrStaged(kind, func(o model.Object) string { return bfdKey(kind, o) }, resolve)
	if kind == "BfdGlobal" {
		d.state = func(b *Backend, o model.Object) (model.Object, error) { return b.bfdGlobalState() }
	}
	return d
}

// bgpConfig turns the objects into FRR's configuration: BGP's and BFD's.
func bgpConfig(objs map[string]map[string]model.Object) frr.Config {
	return withBFD(bgpRouters(objs), objs)
}

// withBfdNeighborState adds a BGPv4Neighbor's BfdNeighborState to its
// driver's state: its BFD session's state while BfdEnable (FlexSwitch's
// names: up, down, init, admin_down; down until bfdd has the session),
// "" without BFD.
func withBfdNeighborState(d *driver) *driver {
	state := d.state
	d.state = func(b *Backend, o model.Object) (model.Object, error) {
		st, err := state(b, o)
		if err != nil || !b.bfdEnabled(o) {
			return st, err
		}
		st["BfdNeighborState"] = "down"
		peers, err := b.bfd.read(false)
		if err != nil {
			return nil, err
		}
		dev := ""
		if ref := o.Str("IntfRef"); ref != "" {
			dev, _ = b.bgpNetdev(ref)
		}
		for _, p := range peers {
			if p.VRF == bgpVRF(o.Str("Vrf")) && ((o.Str("NeighborAddress") != "" && p.Peer == o.Str("NeighborAddress")) || (dev != "" && p.Interface == dev)) {
				st["BfdNeighborState"] = bfdStateNames[p.Status]
			}
		}
		return st, nil
	}
	return d
}

// bfdEnabled says a BGPv4Neighbor runs BFD: its own BfdEnable or its
// peer group's.
func (b *Backend) bfdEnabled(o model.Object) bool {
	if o.Bool("BfdEnable") {
		return true
	}
	if g := o.Str("PeerGroup"); g != "" {
		b.bgp.mu.Lock()
		defer b.bgp.mu.Unlock()
		return b.bgp.applied["BGPv4PeerGroup"][g].Bool("BfdEnable")
	}
	return false
}

// bfdNetdev is the netdev of a BfdSession's Interface: "" for FlexSwitch's
// None (the one the route takes), a port's or a VLAN interface's; a
// loopback carries no single-hop session.
func (b *Backend) bfdNetdev(name string) (string, error) {
	if name == "" || name == "None" {
		return "", nil
	}
	dev, lb, err := b.netdevOf(name)
	switch {
	case err != nil:
		return "", refuse("Interface", "Interface: %v; give a port or a VLAN interface, or None", err)
	case lb:
		return "", refuse("Interface", "Interface: %s is a loopback; a BFD session runs on a port or a VLAN interface (or None)", name)
	}
	return dev, nil
}

// withBFD adds BFD to FRR's configuration: bfdd's profiles and static
// peers, and, with BFD disabled, no neighbour's BFD session.
func withBFD(cfg frr.Config, objs map[string]map[string]model.Object) frr.Config {
	if g := objs["BfdGlobal"][frr.DefaultVRF]; g != nil && !g.Bool("Enable") {
		for i := range cfg.Neighbors {
			cfg.Neighbors[i].BfdEnable = false
		}
		for i := range cfg.PeerGroups {
			cfg.PeerGroups[i].BfdEnable = false
		}
		return cfg
	}
	for _, name := range sortedKeys(objs["BfdSessionParam"]) {
		p := objs["BfdSessionParam"][name]
		cfg.BFD.Profiles = append(cfg.BFD.Profiles, frr.BFDProfile{Name: name,
			ReceiveInterval: uint32(p.Int("RequiredMinRxInterval")), TransmitInterval: uint32(p.Int("DesiredMinTxInterval")),
			DetectMultiplier: uint8(p.Int("LocalMultiplier")), EchoReceiveInterval: uint32(p.Int("RequiredMinEchoRxInterval"))})
	}
	for _, addr := range sortedKeys(objs["BfdSession"]) {
		s := objs["BfdSession"][addr]
		peer := frr.BFDPeer{Address: addr, Interface: s.Str("Interface")} // its netdev (bfdNetdev)
		if p := s.Str("ParamName"); p != model.DefaultBfdParam || objs["BfdSessionParam"][p] != nil {
			peer.Profile = p
		}
		cfg.BFD.Peers = append(cfg.BFD.Peers, peer)
	}
	// A BfdSessionParam named "default" is a profile like any other;
	// without one, "default" is bfdd's defaults (no profile).
	implied := func(ns []frr.Neighbor) {
		for i, n := range ns {
			if n.BfdSessionParam == model.DefaultBfdParam && objs["BfdSessionParam"][model.DefaultBfdParam] == nil {
				ns[i].BfdSessionParam = ""
			}
		}
	}
	implied(cfg.Neighbors)
	implied(cfg.PeerGroups)
	return cfg
}

// startBFD follows bfdd's session changes until the backend stops.
func (b *Backend) startBFD(r *frr.Router) {
	ctx, cancel := context.WithCancel(context.Background())
	b.bfd = &bfdRunner{router: r, valid: b.opts.StateCache, stop: cancel, states: map[string]string{}}
	go r.WatchBFD(ctx, b.bfdChanged)
}

// bfdChanged reads the sessions again and hands on each one whose state
// changed since it was last seen.
func (b *Backend) bfdChanged() {
	peers, err := b.bfd.read(true)
	if err != nil {
		b.log.Warn("linux backend: reading BFD sessions after a change", "err", err)
		return
	}
	var changed []model.Object
	b.bfd.mu.Lock()
	seen := map[string]bool{}
	for _, p := range peers {
		key := p.VRF + "|" + p.Interface + "|" + p.Peer
		seen[key] = true
		if b.bfd.states[key] != p.Status {
			b.bfd.states[key] = p.Status
			changed = append(changed, b.bfdSessionState(p))
		}
	}
	for key := range b.bfd.states {
		if !seen[key] {
			delete(b.bfd.states, key)
		}
	}
	b.bfd.mu.Unlock()
	for _, o := range changed {
		b.log.Info("BFD session state", "peer", o.Str("IpAddr"), "interface", o.Str("IfName"), "state", o.Str("SessionState"), "diagnostic", o.Str("LocalDiagType"))
		if b.opts.OnStateChange != nil {
			b.opts.OnStateChange("BfdSessionState", o)
		}
	}
}

// read returns bfdd's sessions, from the cache unless fresh or it is
// older than the cache window.
func (r *bfdRunner) read(fresh bool) ([]frr.BFDPeerState, error) {
	r.mu.Lock()
	if !fresh && !r.at.IsZero() && time.Since(r.at) < r.valid {
		defer r.mu.Unlock()
		return r.peers, nil
	}
	r.mu.Unlock()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	peers, err := r.router.BFDPeers(ctx)
	if err != nil {
		return nil, unavailable("BfdSessionState", "FRR's bfdd", err)
	}
	r.mu.Lock()
	r.peers, r.at = peers, time.Now()
	r.mu.Unlock()
	return peers, nil
}

// bfdStateNames maps bfdd's states onto FlexSwitch's.
var bfdStateNames = map[string]string{"up": "up", "down": "down", "init": "init", "shutdown": "admin_down"}

// bfdSessionState is one session as BfdSessionState shows it.
func (b *Backend) bfdSessionState(p frr.BFDPeerState) model.Object {
	since := p.Downtime
	if p.Status == "up" {
		since = p.Uptime
	}
	ifName := p.Interface
	if port := b.ports.Port(ifName); port != "" {
		ifName = port
	}
	owner, param := "bgp", ""
	for _, s := range b.appliedBFD("BfdSession") {
		if s.Str("IpAddr") == p.Peer {
			owner, param = "user", s.Str("ParamName")
		}
	}
	remote := ""
	if p.RemoteID != 0 {
		remote = p.RemoteDiagnostic
	}
	return model.Object{
		"IpAddr": p.Peer, "IfName": ifName, "Vrf": p.VRF, "LocalIpAddr": p.Local, "Owner": owner, "ParamName": param,
		"SessionState": bfdStateNames[p.Status], "RemoteSessionState": remote, "LocalDiagType": p.Diagnostic,
		"LocalDiscriminator": int64(p.ID), "RemoteDiscriminator": int64(p.RemoteID),
		"DesiredMinTxInterval": int64(p.TransmitInterval), "RequiredMinRxInterval": int64(p.ReceiveInterval), "DetectionMultiplier": int64(p.DetectMultiplier),
		"RemoteMinRxInterval": int64(p.RemoteReceiveInterval), "RemoteMinTxInterval": int64(p.RemoteTransmitInterval), "RemoteDetectionMultiplier": int64(p.RemoteDetectMultiplier),
		"ToUpCount": int64(p.SessionUp), "ToDownCount": int64(p.SessionDown),
		"LastChange": time.Now().Add(-time.Duration(since) * time.Second).UTC().Truncate(time.Second).Format(time.RFC3339),
	}
}

// appliedBFD is the applied objects of one BFD kind.
func (b *Backend) appliedBFD(kind string) []model.Object {
	b.bgp.mu.Lock()
	defer b.bgp.mu.Unlock()
	out := make([]model.Object, 0, len(b.bgp.applied[kind]))
	for _, o := range b.bgp.applied[kind] {
		out = append(out, o)
	}
	return out
}

// bfdSessions lists BfdSessionState.
func (b *Backend) bfdSessions(context.Context) ([]model.Object, error) {
	peers, err := b.bfd.read(false)
	if err != nil {
		return nil, err
	}
	out := make([]model.Object, len(peers))
	for i, p := range peers {
		out[i] = b.bfdSessionState(p)
	}
	return out, nil
}

func (b *Backend) bfdGlobalState() (model.Object, error) {
	peers, err := b.bfd.read(false)
	if err != nil {
		return nil, err
	}
	st := model.Object{"NumTotalSessions": int64(len(peers)), "NumUpSessions": int64(0), "NumDownSessions": int64(0), "NumAdminDownSessions": int64(0)}
	for _, p := range peers {
		field := map[string]string{"up": "NumUpSessions", "shutdown": "NumAdminDownSessions"}[p.Status]
		if field == "" {
			field = "NumDownSessions"
		}
		st[field] = st.Int(field) + 1
	}
	return st, nil
}

// Actions are the actions the backend's daemons answer (ResetBfdSession
// while FRR runs BFD), for its daemons' part of the binding table.
func (b *Backend) bfdActions() map[string]*bind.Action {
	if b.bfd == nil {
		return nil
	}
	return map[string]*bind.Action{"ResetBfdSession": {Run: b.resetBFDSession}}
}

func (b *Backend) resetBFDSession(ctx context.Context, c bind.Call) (bind.Result, error) {
	addr, ifName := c.Fields.Str("IpAddr"), c.Fields.Str("IfName")
	dev := ""
	if ifName != "" {
		d, _, err := b.netdevOf(ifName)
		if err != nil {
			return bind.Result{}, apierr.BadRequest(apierr.CodeInvalidValue, "ResetBfdSession", "IfName", "IfName: %v", err)
		}
		dev = d
	}
	if c.DryRun {
		return bind.Result{DryRun: true}, nil
	}
	ok, err := b.bfd.router.ResetBFDPeer(ctx, addr, dev)
	if err != nil {
		return bind.Result{}, unavailable("ResetBfdSession", "FRR's bfdd", err)
	}
	if !ok {
		return bind.Result{}, apierr.NotFound(apierr.CodeNotFound, "ResetBfdSession", "no BFD session with %s%s", addr, onInterface(ifName))
	}
	b.bfd.mu.Lock()
	b.bfd.at = time.Time{}
	b.bfd.mu.Unlock()
	return bind.Result{}, nil
}

func onInterface(name string) string {
	if name == "" {
		return ""
	}
	return fmt.Sprintf(" on %s", name)
}
