package linux

import (
	"context"
	"maps"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/swmgr/swmgr/internal/lldpd"
	"github.com/swmgr/swmgr/internal/model"
)

// LLDPGlobal and LLDPIntf on the Linux backend: swmgr's lldpd in the
// switch's namespace runs LLDP on the front-panel ports' netdevs (its
// interface pattern is exactly those, so a management port or a bond is
// never announced on). One commit's changes of the two kinds and of the
// host name are sent to lldpd once, as the whole configuration
// (lldpd.Config); the undo sends the previous one. The system name is
// SystemParam's Hostname where the Linux backend applies it (--system
// host), else lldpd announces the kernel's host name.

type lldpRunner struct {
	daemon *lldpd.Daemon
	mu     sync.Mutex
	// applied is what lldpd runs now.
	applied lldpConfig
	heard   readCache[lldpHeard]
}

// lldpHeard is one reading of lldpd: what it heard and its frame
// counters, by local netdev.
type lldpHeard struct {
	neighbors map[string]lldpd.Neighbor
	counts    map[string]lldpd.Counters
}

// lldpConfig is LLDP's configuration in the model's terms.
type lldpConfig struct {
	global   model.Object
	intfs    map[string]model.Object // by IntfRef
	hostname string
}

func (c lldpConfig) clone() lldpConfig {
	return lldpConfig{global: c.global, intfs: maps.Clone(c.intfs), hostname: c.hostname}
}

var lldpModes = map[string]lldpd.Mode{"TxRx": lldpd.RxAndTx, "RxOnly": lldpd.RxOnly, "TxOnly": lldpd.TxOnly, "": lldpd.Disabled}

// daemonConfig is c in lldpd's terms, for the ports of the port map.
func (b *Backend) lldpDaemonConfig(c lldpConfig) lldpd.Config {
	out := lldpd.Config{Enable: c.global.Bool("Enable"), SystemName: c.hostname, Ports: map[string]lldpd.Mode{}}
	if c.global != nil {
		out.TxInterval = int(c.global.Int("TranmitInterval"))
	}
	for port, dev := range b.ports.netdevs() {
		out.Ports[dev] = lldpModes[model.LLDPMode(c.global, c.intfs[port])]
	}
	return out
}

func (b *Backend) lldpStage(tx *Tx) *lldpConfig {
	return tx.staged("lldpd", "LLDPGlobal", func() any {
		b.lldp.mu.Lock()
		defer b.lldp.mu.Unlock()
		c := b.lldp.applied.clone()
		if c.intfs == nil {
			c.intfs = map[string]model.Object{}
		}
		return &c
	}, b.flushLLDP).(*lldpConfig)
}

func (b *Backend) flushLLDP(tx *Tx, value any) error {
	staged := *value.(*lldpConfig)
	b.lldp.mu.Lock()
	previous := b.lldp.applied
	b.lldp.mu.Unlock()
	if err := b.lldpDaemonConfig(staged).Validate(); err != nil {
		return &Refusal{Msg: "LLDP: " + err.Error()}
	}
	set := func(c lldpConfig) error {
		// An lldpcli run a command, a few for each port: at a first start
		// on a loaded machine (four switches on the VM's one emulated CPU)
		// 30 s has not been enough.
		ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
		defer cancel()
		if err := b.lldp.daemon.Apply(ctx, b.lldpDaemonConfig(c)); err != nil {
			return unavailable("LLDPGlobal", "lldpd", err)
		}
		b.lldp.mu.Lock()
		b.lldp.applied = c
		b.lldp.mu.Unlock()
		b.lldp.heard.forget()
		return nil
	}
	return tx.change("apply LLDP to lldpd", func() error { return set(staged) }, func() error { return set(previous) })
}

// stageLLDPHostname makes name the system name lldpd announces, with the
// commit's other changes (SystemParam's driver calls it).
func (b *Backend) stageLLDPHostname(tx *Tx, name string) {
	if b.lldp != nil {
		b.lldpStage(tx).hostname = name
	}
}

// What lldpd takes was checked by the model (the modes, the interval's
// range); the whole configuration is checked again at the flush.
var lldpGlobalDriver = &driver{
	check: noCheck,
	ensure: func(b *Backend, tx *Tx, after, before model.Object) error {
		b.lldpStage(tx).global = after.Clone()
		return nil
	},
	// LLDPGlobal is a singleton: it is never deleted.
	remove: func(b *Backend, tx *Tx, before model.Object) error { return nil },
	state: func(b *Backend, o model.Object) (model.Object, error) {
		heard, err := b.lldp.read()
		if err != nil {
			return nil, err
		}
		var tx, rx int64
		for _, c := range heard.counts {
			tx, rx = tx+c.Tx, rx+c.Rx
		}
		return model.Object{"Neighbors": int64(len(heard.neighbors)), "TotalTxFrames": tx, "TotalRxFrames": rx}, nil
	},
}

var lldpIntfDriver = &driver{
	check: noCheck,
	ensure: func(b *Backend, tx *Tx, after, before model.Object) error {
		b.lldpStage(tx).intfs[after.Str("IntfRef")] = after.Clone()
		return nil
	},
	remove: func(b *Backend, tx *Tx, before model.Object) error {
		delete(b.lldpStage(tx).intfs, before.Str("IntfRef"))
		return nil
	},
}

// read is what lldpd heard and its frame counters, by local netdev, read
// at most once per StateCache.
func (r *lldpRunner) read() (lldpHeard, error) {
	return r.heard.get(func() (lldpHeard, error) {
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		defer cancel()
		ns, err := r.daemon.Neighbors(ctx)
		if err != nil {
			return lldpHeard{}, unavailable("LLDPIntf", "lldpd", err)
		}
		cs, err := r.daemon.Statistics(ctx)
		if err != nil {
			return lldpHeard{}, unavailable("LLDPIntf", "lldpd", err)
		}
		h := lldpHeard{neighbors: map[string]lldpd.Neighbor{}, counts: map[string]lldpd.Counters{}}
		for _, c := range cs {
			h.counts[c.Port] = c
		}
		for _, n := range ns {
			// One neighbor per port is what LLDPIntfState reports: the
			// first lldpd lists.
			if _, ok := h.neighbors[n.Port]; !ok {
				h.neighbors[n.Port] = n
			}
		}
		return h, nil
	})
}

// LLDPNeighbors adds what lldpd heard to LLDPIntfState's objects (one per
// port, as the configuration derives them); without lldpd it returns them
// as they are.
func (b *Backend) LLDPNeighbors(ctx context.Context, objs []model.Object) ([]model.Object, error) {
	if b.lldp == nil {
		return objs, nil
	}
	heard, err := b.lldp.read()
	if err != nil {
		return nil, err
	}
	ns, counts := heard.neighbors, heard.counts
	out := make([]model.Object, len(objs))
	for i, o := range objs {
		o = o.Clone()
		dev := b.ports.Netdev(o.Str("IntfRef"))
		if c, ok := counts[dev]; ok {
			o["SendFrames"], o["ReceivedFrames"] = c.Tx, c.Rx
		}
		n, ok := ns[dev]
		if ok && o.Bool("Enable") {
			mac := ""
			if n.ChassisIDType == "mac" {
				mac = n.ChassisID
			}
			o["PeerMac"], o["PeerChassisId"], o["PeerPort"], o["PortDescription"] = mac, n.ChassisID, n.PortID, n.PortDescription
			o["PeerHostName"], o["SystemDescription"] = n.SystemName, n.SystemDescr
			o["PeerMgmtAddr"] = strings.Join(n.MgmtAddresses, ",")
			o["SystemCapabilities"], o["EnabledCapabilities"] = strings.Join(n.Capabilities, ","), strings.Join(n.Enabled, ",")
			o["HoldTime"], o["VlanId"] = strconv.Itoa(n.TTL), int64(n.VlanID)
		}
		out[i] = o
	}
	return out, nil
}

// LLDPD is the lldpd running LLDP (nil when LLDP is not lldpd's).
func (b *Backend) LLDPD() *lldpd.Daemon {
	if b.lldp == nil {
		return nil
	}
	return b.lldp.daemon
}
