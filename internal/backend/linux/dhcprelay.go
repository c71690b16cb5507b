package linux

import (
	"context"
	"fmt"
	"maps"
	"net/netip"
	"slices"
	"sync"
	"time"

	"github.com/vishvananda/netlink"

	"github.com/swmgr/swmgr/internal/dhcrelay"
	"github.com/swmgr/swmgr/internal/model"
)

// DhcpRelayGlobal and DhcpRelayIntf on the Linux backend: Debian's
// dhcrelay, one per VRF that relays (internal/dhcrelay). One commit's
// changes of the two kinds are sent once, as the whole configuration; the
// undo sends the previous one. A VRF's dhcrelay sends every request to
// all its servers, so the relay interfaces of one VRF must name the same
// servers. The interfaces the servers' answers may arrive on (dhcrelay's
// upstream interfaces) are the VRF's other routed interfaces, read again
// at every commit that changes the dataplane (backend.go's apply stages
// the relay then); a dhcrelay is started again only when they changed.

type relayRunner struct {
	daemon *dhcrelay.Daemon
	mu     sync.Mutex
	// applied is what the relays run now.
	applied relayConfig
	counts  readCache[dhcrelay.Counters]
}

// relayConfig is the relay's configuration in the model's terms.
type relayConfig struct {
	global model.Object
	intfs  map[string]model.Object // by IntfRef
}

func (c relayConfig) clone() relayConfig {
	return relayConfig{global: c.global, intfs: maps.Clone(c.intfs)}
}

// relayDaemonConfig is c in dhcrelay's terms: the relay interfaces'
// netdevs by VRF, and each VRF's upstream interfaces read from the kernel.
func (b *Backend) relayDaemonConfig(c relayConfig) (dhcrelay.Config, error) {
	out := dhcrelay.Config{HopCount: 32, VRFs: map[string]dhcrelay.VRF{}}
	if c.global != nil {
		out.HopCount = int(c.global.Int("HopCountLimit"))
	}
	if c.global == nil || !c.global.Bool("Enable") {
		return out, nil
	}
	serversOf := map[string]string{} // VRF -> the IntfRef whose servers it runs
	for _, ref := range slices.Sorted(maps.Keys(c.intfs)) {
		o := c.intfs[ref]
		if !o.Bool("Enable") {
			continue
		}
		dev, _, err := b.netdevOf(ref)
		if err != nil {
			return out, &Refusal{Field: "IntfRef", Msg: fmt.Sprintf("DHCP relay on %s: %v", ref, err)}
		}
		var servers []netip.Addr
		for _, s := range o.List("ServerIp") {
			a, err := netip.ParseAddr(s)
			if err != nil {
				return out, &Refusal{Field: "ServerIp", Msg: fmt.Sprintf("DHCP relay on %s: server %q: %v", ref, s, err)}
			}
			servers = append(servers, a)
		}
		vrf := o.Str("Vrf")
		v := out.VRFs[vrf]
		if first, ok := serversOf[vrf]; ok && !slices.Equal(v.Servers, servers) {
			return out, &Refusal{Field: "ServerIp", Msg: fmt.Sprintf("DHCP relay on %s: dhcrelay sends every request of a VRF to all its servers, and %s in VRF %s names %v: give the relay interfaces of one VRF the same servers", ref, first, vrf, c.intfs[first].List("ServerIp"))}
		}
		serversOf[vrf] = ref
		v.Servers = servers
		v.Downstream = append(v.Downstream, dev)
		out.VRFs[vrf] = v
	}
	for vrf, v := range out.VRFs {
		if err := b.placeRelay(vrf, &v); err != nil {
			return out, err
		}
		out.VRFs[vrf] = v
	}
	return out, nil
}

// placeRelay says where v's dhcrelay runs (the switch's namespace, bound
// to a VRF device, or a VRF's namespace) and lists its upstream
// interfaces: the VRF's interfaces that route (not a bridge's, a bond's
// or a VRF device's member in the switch's namespace, not lo), except the
// clients' own, and which of them have an IPv4 address.
func (b *Backend) placeRelay(vrf string, v *dhcrelay.VRF) error {
	h, err := b.k.handleOf(vrf)
	if err != nil {
		return &Refusal{Field: "Vrf", Msg: fmt.Sprintf("DHCP relay in VRF %s: %v", vrf, err)}
	}
	links, err := h.LinkList()
	if err != nil {
		return fmt.Errorf("DHCP relay in VRF %s: list links: %w", vrf, err)
	}
	master := 0
	switch {
	case isDefaultVRF(vrf):
	case b.k.feat.VRFDevice:
		l, err := h.LinkByName(vrf)
		if err != nil {
			return &Refusal{Field: "Vrf", Msg: fmt.Sprintf("DHCP relay in VRF %s: %v", vrf, err)}
		}
		master, v.Exec = l.Attrs().Index, true
	default:
		v.Netns = b.k.vrfNSPrefix + vrf
	}
	for _, l := range links {
		a := l.Attrs()
		if a.MasterIndex != master || a.Name == "lo" || slices.Contains(v.Downstream, a.Name) {
			continue
		}
		if _, isVRF := l.(*netlink.Vrf); isVRF {
			continue
		}
		v.Upstream = append(v.Upstream, a.Name)
		addrs, err := h.AddrList(l, netlink.FAMILY_V4)
		if err != nil {
			return fmt.Errorf("DHCP relay in VRF %s: addresses of %s: %w", vrf, a.Name, err)
		}
		if len(addrs) > 0 {
			v.Addressed = append(v.Addressed, a.Name)
		}
	}
	return nil
}

func (b *Backend) relayStage(tx *Tx) *relayConfig {
	return tx.staged("dhcrelay", "DhcpRelayIntf", func() any {
		b.relay.mu.Lock()
		defer b.relay.mu.Unlock()
		c := b.relay.applied.clone()
		if c.intfs == nil {
			c.intfs = map[string]model.Object{}
		}
		return &c
	}, b.flushRelay).(*relayConfig)
}

func (b *Backend) flushRelay(tx *Tx, value any) error {
	staged := *value.(*relayConfig)
	b.relay.mu.Lock()
	previous := b.relay.applied
	b.relay.mu.Unlock()
	want, err := b.relayDaemonConfig(staged)
	if err != nil {
		return err
	}
	if err := want.Validate(); err != nil {
		return &Refusal{Msg: "DHCP relay: " + err.Error()}
	}
	set := func(c relayConfig, dc dhcrelay.Config) error {
		ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
		defer cancel()
		if err := b.relay.daemon.Apply(ctx, dc); err != nil {
			return unavailable("DhcpRelayIntf", "dhcrelay", err)
		}
		b.relay.mu.Lock()
		b.relay.applied = c
		b.relay.mu.Unlock()
		b.relay.counts.forget()
		return nil
	}
	return tx.change("apply the DHCP relay to dhcrelay", func() error { return set(staged, want) }, func() error {
		old, err := b.relayDaemonConfig(previous)
		if err != nil {
			return err
		}
		return set(previous, old)
	})
}

// What dhcrelay takes was checked by the model (addresses, the hop
// limit's range, the interface's address and VRF); the whole
// configuration is checked again at the flush.
var dhcpRelayGlobalDriver = &driver{
	check: noCheck,
	ensure: func(b *Backend, tx *Tx, after, before model.Object) error {
		b.relayStage(tx).global = after.Clone()
		return nil
	},
	// DhcpRelayGlobal is a singleton: it is never deleted.
	remove: func(b *Backend, tx *Tx, before model.Object) error { return nil },
}

var dhcpRelayIntfDriver = &driver{
	check: noCheck,
	ensure: func(b *Backend, tx *Tx, after, before model.Object) error {
		s := b.relayStage(tx)
		if before != nil {
			delete(s.intfs, before.Str("IntfRef"))
		}
		s.intfs[after.Str("IntfRef")] = after.Clone()
		return nil
	},
	remove: func(b *Backend, tx *Tx, before model.Object) error {
		delete(b.relayStage(tx).intfs, before.Str("IntfRef"))
		return nil
	},
	state: func(b *Backend, o model.Object) (model.Object, error) {
		c, err := b.relay.counters()
		if err != nil {
			return nil, err
		}
		dev, _, err := b.netdevOf(o.Str("IntfRef"))
		if err != nil {
			return model.Object{}, nil
		}
		var req, resp int64
		for _, s := range o.List("ServerIp") {
			if a, err := netip.ParseAddr(s); err == nil {
				req, resp = req+c.ServerReq[a], resp+c.ServerResps[a]
			}
		}
		return model.Object{"TotalDhcpClientRx": c.ClientRx[dev], "TotalDhcpClientTx": c.ClientTx[dev],
			"TotalDhcpServerTx": req, "TotalDhcpServerRx": resp}, nil
	},
}

// counters are the relays' counts, read at most once per StateCache.
func (r *relayRunner) counters() (dhcrelay.Counters, error) {
	return r.counts.get(func() (dhcrelay.Counters, error) {
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		defer cancel()
		c, err := r.daemon.Counters(ctx)
		if err != nil {
			return dhcrelay.Counters{}, unavailable("DhcpRelayIntf", "nft", err)
		}
		return c, nil
	})
}

// relayServers lists DhcpRelayIntfServerState: every server of every
// DhcpRelayIntf the relays run, with the counts of its address.
func (b *Backend) relayServers(context.Context) ([]model.Object, error) {
	b.relay.mu.Lock()
	intfs := maps.Clone(b.relay.applied.intfs)
	b.relay.mu.Unlock()
	c, err := b.relay.counters()
	if err != nil {
		return nil, err
	}
	var out []model.Object
	for _, ref := range slices.Sorted(maps.Keys(intfs)) {
		for _, s := range intfs[ref].List("ServerIp") {
			a, _ := netip.ParseAddr(s)
			out = append(out, model.Object{"IntfRef": ref, "ServerIp": s, "Request": c.ServerReq[a], "Responses": c.ServerResps[a]})
		}
	}
	return out, nil
}

// relayHosts lists DhcpRelayHostDhcpState: the clients the relays heard,
// by interface.
func (b *Backend) relayHosts(context.Context) ([]model.Object, error) {
	b.relay.mu.Lock()
	refs := slices.Collect(maps.Keys(b.relay.applied.intfs))
	b.relay.mu.Unlock()
	c, err := b.relay.counters()
	if err != nil {
		return nil, err
	}
	refOf := map[string]string{} // netdev -> IntfRef
	for _, ref := range refs {
		if dev, _, err := b.netdevOf(ref); err == nil {
			refOf[dev] = ref
		}
	}
	out := []model.Object{}
	for _, h := range c.Hosts {
		if ref, ok := refOf[h.Netdev]; ok {
			out = append(out, model.Object{"MacAddr": h.MAC, "IntfRef": ref, "ClientRequests": h.Requests, "ClientResponses": h.Replies})
		}
	}
	return out, nil
}

// DHCPRelay is the relays' daemon (nil when DHCP relay is not dhcrelay's).
func (b *Backend) DHCPRelay() *dhcrelay.Daemon {
	if b.relay == nil {
		return nil
	}
	return b.relay.daemon
}
