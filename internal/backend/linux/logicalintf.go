package linux

import (
	"net"

	"github.com/swmgr/swmgr/internal/model"
)

// logicalIntfDriver is the LogicalIntf kind (a loopback) on the Linux
// backend: a dummy device, or nothing of its own where the kernel has no
// dummies (its addresses then go on lo, see LoopbackNetdev). Its VRF is its
// IPv4Intf's.
var logicalIntfDriver = &driver{
	check: func(b *Backend, c changeView) error {
		return b.k.CheckLoopback(LoopbackConfig{Name: c.after().Str("Name")})
	},
	ensure: func(b *Backend, tx *Tx, after, _ model.Object) error {
		return tx.EnsureLoopback(b.loopbackConfig(after))
	},
	remove: func(b *Backend, tx *Tx, before model.Object) error {
		return tx.RemoveLoopback(b.loopbackConfig(before))
	},
	state: func(b *Backend, o model.Object) (model.Object, error) {
		b.mu.Lock()
		c := b.loopbackConfig(o)
		b.mu.Unlock()
		var h = b.k.h
		if !b.k.feat.Dummy {
			var err error
			if h, err = b.k.handleOf(c.VRF); err != nil {
				return nil, err
			}
		} else if fh, _, err := b.k.findLink(c.Name); err == nil {
			h = fh
		}
		l, err := h.LinkByName(b.k.LoopbackNetdev(c))
		if err != nil {
			return model.Object{"OperState": "DOWN"}, nil
		}
		return model.Object{"OperState": upDownState(l.Attrs().Flags&net.FlagUp != 0), "IfIndex": int64(l.Attrs().Index)}, nil
	},
}

// loopbackConfig is a LogicalIntf in the kernel layer's terms, in the VRF
// of the IPv4Intf on it (so that ensuring the loopback again does not move
// it out of its VRF). Callers hold b.mu or run before the first Apply.
func (b *Backend) loopbackConfig(o model.Object) LoopbackConfig {
	c := LoopbackConfig{Name: o.Str("Name"), VRF: "default"}
	for _, intf := range b.applied["IPv4Intf"] {
		if intf.Str("IntfRef") == c.Name {
			c.VRF = intf.Str("Vrf")
		}
	}
	return c
}
