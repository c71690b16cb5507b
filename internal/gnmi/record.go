package gnmi

import (
	"bytes"

	"github.com/swmgr/swmgr/internal/engine"
)

// parseRecord reads what subscriptions use of a change feed's revision
// record (engine.Revision as JSON): its time and its changes, each change's
// Before and After as they are in data (not copied; the feed's events are
// never modified). It scans the record once, without encoding/json's
// reflection, validation pass and copies, which cost 5x more (a commit
// changing one port: 8.5 us against 1.5), for every commit while anyone
// subscribes. ok is false for anything but a JSON object of that shape
// (or one that encoding/json would read differently: names in another
// case, Changes twice); the caller then decodes it with encoding/json.
func parseRecord(data []byte) (t string, changes []engine.Diff, ok bool) {
	s := &scanner{b: data}
	seen := false
	whole := s.object(func(key []byte) bool {
		switch string(key) {
		case "Time":
			t, ok = s.str()
			return ok
		case "Changes":
			if seen {
				return false
			}
			seen = true
			return s.array(func() bool {
				var d engine.Diff
				ok := s.object(func(key []byte) (ok bool) {
					switch string(key) {
					case "Kind":
						d.Kind, ok = s.str()
					case "Key":
						d.Key, ok = s.str()
					case "ObjectId":
						d.ObjectId, ok = s.str()
					case "Op":
						d.Op, ok = s.str()
					case "Before":
						d.Before, ok = s.value()
					case "After":
						d.After, ok = s.value()
					default:
						if foldsTo(key, "Kind", "Key", "ObjectId", "Op", "Before", "After") {
							return false
						}
						_, ok = s.value()
					}
					return ok
				})
				changes = append(changes, d)
				return ok
			})
		}
		if foldsTo(key, "Time", "Changes") {
			return false
		}
		_, ok := s.value()
		return ok
	})
	s.space()
	if !whole || s.i != len(s.b) {
		return "", nil, false
	}
	return t, changes, true
}

// foldsTo says whether key is one of names but for case, which
// encoding/json would read as that name: parseRecord leaves such a record
// to it.
func foldsTo(key []byte, names ...string) bool {
	for _, n := range names {
		if bytes.EqualFold(key, []byte(n)) {
			return true
		}
	}
	return false
}
