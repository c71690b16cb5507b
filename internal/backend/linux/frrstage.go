package linux

import "github.com/swmgr/swmgr/internal/model"

// frrStaged is the ensure and remove of a kind that is part of FRR's one
// configuration (BGP's, EVPN's, BFD's): the object, as resolve makes it
// for FRR (nil: as stored), kept under key in the Tx's FRR stage, which is
// sent to FRR once per apply (bgp.go's flushBGP).
func frrStaged(kind string, key func(model.Object) string, resolve func(b *Backend, o model.Object) error) (
	ensure func(*Backend, *Tx, model.Object, model.Object) error, remove func(*Backend, *Tx, model.Object) error) {
	ensure = func(b *Backend, tx *Tx, after, _ model.Object) error {
		o := after.Clone()
		if resolve != nil {
			if err := resolve(b, o); err != nil {
				return err
			}
		}
		st := b.bgpStage(tx, kind)
		if st[kind] == nil {
			st[kind] = map[string]model.Object{}
		}
		st[kind][key(after)] = o
		return nil
	}
	remove = func(b *Backend, tx *Tx, before model.Object) error {
		delete(b.bgpStage(tx, kind)[kind], key(before))
		return nil
	}
	return ensure, remove
}
