package engine

import (
	"github.com/swmgr/swmgr/internal/model"
)

// check is the check phase: it runs on the configuration that the changes
// produce (the view), the same way for direct writes, candidate staging, dry
// runs, candidate commits, rollbacks and restores, so that each reports the
// same error for the same configuration whatever order the edits came in:
//
//  1. references: nothing names a missing object, nothing deleted is still
//     named; fields declared unique (UniqueWithin) are;
//  2. the model's constraints across objects (the last admin, one untagged
//     VLAN per port), for those whose kinds the changes touch;
//  3. the backend drivers' capability checks (speeds, lanes, mirror
//     sessions), pure functions of the resulting configuration.
//
// After it, applying the changes to the backend is only I/O.
func (v *view) check(changes []*change) error {
	if len(changes) == 0 {
		return nil
	}
	if err := v.checkReferences(changes); err != nil {
		return err
	}
	if err := v.checkUnique(changes); err != nil {
		return err
	}
	var touched map[string]bool
	for _, c := range v.e.reg.Constraints() {
		if touched == nil {
			touched = map[string]bool{}
			for _, ch := range changes {
				touched[ch.Kind.Name] = true
			}
		}
		hit := false
		for _, k := range c.Kinds {
			hit = hit || touched[k]
		}
		if !hit {
			continue
		}
		if err := c.Check(v, modelChanges(changes)); err != nil {
			return err
		}
	}
	for _, c := range changes {
		if c.Op == model.Delete {
			continue
		}
		if d := v.e.drivers[c.Kind.Name]; d != nil && d.Check != nil {
			if err := d.Check(v, c.Change); err != nil {
				return v.e.backendError(err)
			}
		}
	}
	return nil
}

func modelChanges(cs []*change) []model.Change {
	out := make([]model.Change, len(cs))
	for i, c := range cs {
		out[i] = c.Change
	}
	return out
}
