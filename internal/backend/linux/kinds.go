package linux

import (
	"github.com/swmgr/swmgr/internal/model"
)

// driver is one kind's behaviour on the Linux backend: the shape of the
// engine's per-kind drivers (issue 16), so that porting is moving each of
// these into a registration. check is pure (no kernel change); ensure is
// create and update (before is nil on create) and must be idempotent:
// reconciliation calls it with the stored object; remove is delete.
type driver struct {
	check  func(b *Backend, c changeView) error
	ensure func(b *Backend, tx *Tx, after, before model.Object) error
	remove func(b *Backend, tx *Tx, before model.Object) error
}

// changeView is what a check sees of a change.
type changeView interface {
	before() model.Object
	after() model.Object
}

// drivers are the dataplane kinds of today's model. Vlan, LogicalIntf and
// IPv4Route have kernel layers (vlan.go, loopback.go, route.go) keyed by
// plain Go types; their drivers come with the kinds.
var drivers = map[string]*driver{
	"Port": {
		check: func(b *Backend, c changeView) error {
			after, err := b.portConfig(c.after())
			if err != nil {
				return err
			}
			if c.before() == nil {
				return nil
			}
			before, err := b.portConfig(c.before())
			if err != nil {
				return err
			}
			caps, err := b.k.Caps(after.Netdev)
			if err != nil && b.k.feat.EthtoolNetlink {
				return err
			}
			return CheckPort(&before, after, caps)
		},
		ensure: func(b *Backend, tx *Tx, after, before model.Object) error {
			c, err := b.portConfig(after)
			if err != nil && before == nil {
				// A stored port whose netdev is gone (the port map
				// changed): it stays in the store, absent from the
				// kernel; its state says PresentInHW NO.
				b.log.Warn("port has no netdev; left alone", "port", after.Str("IntfRef"))
				return nil
			}
			if err != nil {
				return err
			}
			return tx.EnsurePort(c)
		},
		remove: func(b *Backend, tx *Tx, before model.Object) error {
			return nil // ports are hardware: a removed sub-port's netdev stays as it is
		},
	},
	"Vrf": {
		check: func(b *Backend, c changeView) error {
			return b.k.CheckVRF(VRFConfig{Name: c.after().Str("Vrf")})
		},
		ensure: func(b *Backend, tx *Tx, after, _ model.Object) error {
			return tx.EnsureVRF(VRFConfig{Name: after.Str("Vrf")})
		},
		remove: func(b *Backend, tx *Tx, before model.Object) error {
			return tx.RemoveVRF(VRFConfig{Name: before.Str("Vrf")})
		},
	},
	"IPv4Intf": {
		check: func(b *Backend, c changeView) error {
			a, err := b.addrConfig(c.after())
			if err != nil {
				return err
			}
			return b.k.CheckAddr(a)
		},
		ensure: func(b *Backend, tx *Tx, after, before model.Object) error {
			a, err := b.addrConfig(after)
			if err != nil {
				return err
			}
			var old *AddrConfig
			if before != nil {
				o, err := b.addrConfig(before)
				if err != nil {
					return err
				}
				old = &o
			}
			return tx.EnsureAddr(a, old)
		},
		remove: func(b *Backend, tx *Tx, before model.Object) error {
			a, err := b.addrConfig(before)
			if err != nil {
				return err
			}
			return tx.RemoveAddr(a)
		},
	},
	"Span": {
		check: func(b *Backend, c changeView) error {
			s, err := b.spanConfig(c.after())
			if err != nil {
				return err
			}
			var others []SpanConfig
			for _, o := range b.appliedOf("Span") {
				if oc, err := b.spanConfig(o); err == nil {
					others = append(others, oc)
				}
			}
			return b.k.CheckSpan(s, others)
		},
		ensure: func(b *Backend, tx *Tx, after, before model.Object) error {
			s, err := b.spanConfig(after)
			if err != nil {
				return err
			}
			var old *SpanConfig
			if before != nil {
				if o, err := b.spanConfig(before); err == nil {
					old = &o
				}
			}
			return tx.EnsureSpan(s, old)
		},
		remove: func(b *Backend, tx *Tx, before model.Object) error {
			s, err := b.spanConfig(before)
			if err != nil {
				return err
			}
			return tx.RemoveSpan(s)
		},
	},
}

func (b *Backend) appliedOf(kind string) []model.Object {
	b.mu.Lock()
	defer b.mu.Unlock()
	out := make([]model.Object, 0, len(b.applied[kind]))
	for _, o := range b.applied[kind] {
		out = append(out, o)
	}
	return out
}
