package gnmi

import (
	"encoding/json"
	"fmt"
	"hash/fnv"
	"net/netip"
	"slices"
	"strconv"
	"strings"
)

// The conversions of the openconfig-bgp, openconfig-bfd and
// openconfig-aft rows (model/openconfig_l3.go says what they map).

// bgpPeerConv is a neighbor's neighbor-address key: [NeighborAddress,
// IntfRef] <-> the address, the interface of a neighbor by interface
// (BGP unnumbered, FRR's and SONiC's key), or address%interface for a
// link-local address on its interface. A write by an address of the other
// family is refused, so the path's entry is the other kind's (leafEntry).
func bgpPeerConv(v6 bool) ocConv {
	return ocConv{
		to: func(raw json.RawMessage, _ bool) (json.RawMessage, bool) {
			var ai []string
			if json.Unmarshal(raw, &ai) != nil || len(ai) != 2 {
				return nil, false
			}
			switch addr, intf := ai[0], ai[1]; {
			case addr != "" && intf != "":
				return jstr(addr + "%" + intf), true
			case addr != "":
				return jstr(addr), true
			case intf != "":
				return jstr(intf), true
			}
			return nil, false
		},
		from: func(raw json.RawMessage) (json.RawMessage, error) {
			s := rawText(raw)
			addr, intf, _ := strings.Cut(s, "%")
			a, err := netip.ParseAddr(addr)
			var out []string
			switch {
			case err != nil && strings.Contains(s, "%"):
				return nil, fmt.Errorf("%s is not an address%%interface", raw)
			case err != nil:
				out = []string{"", s} // a neighbor by interface
			case a.Is4() == v6:
				return nil, fmt.Errorf("%s is not an %s address", raw, map[bool]string{false: "IPv4", true: "IPv6"}[v6])
			default:
				out = []string{addr, intf}
			}
			b, _ := json.Marshal(out)
			return b, nil
		},
	}
}

// keysConvert reports whether every converted key of a path's filters is
// one its conversion takes (an IPv6 neighbor-address is no BGPv4Neighbor's).
func keysConvert(filters []ocFilter) bool {
	for _, f := range filters {
		if c := ocConvs[f.key.conv]; f.key.conv != "" && c.from != nil {
			if _, err := c.from(jstr(f.value)); err != nil {
				return false
			}
		}
	}
	return true
}

// notConv is a boolean leaf that is the field's negation (enabled, Disabled).
var notConv = ocConv{
	to: func(raw json.RawMessage, _ bool) (json.RawMessage, bool) {
		b, err := strconv.ParseBool(rawText(raw))
		return json.RawMessage(strconv.FormatBool(!b)), err == nil
	},
	from: func(raw json.RawMessage) (json.RawMessage, error) {
		var b bool
		if err := json.Unmarshal(raw, &b); err != nil {
			return nil, fmt.Errorf("a boolean is expected, not %s", raw)
		}
		return json.RawMessage(strconv.FormatBool(!b)), nil
	},
}

// policyListConv is apply-policy's import-policy or export-policy, a
// leaf-list, <-> the one policy a filter field names ("": none).
var policyListConv = ocConv{
	to: func(raw json.RawMessage, _ bool) (json.RawMessage, bool) {
		if rawText(raw) == "" {
			return nil, false
		}
		b, _ := json.Marshal([]string{rawText(raw)})
		return b, true
	},
	from: func(raw json.RawMessage) (json.RawMessage, error) {
		var names []string
		if json.Unmarshal(raw, &names) != nil {
			names = []string{rawText(raw)}
		}
		switch len(names) {
		case 0:
			return jstr(""), nil
		case 1:
			return jstr(names[0]), nil
		}
		return nil, fmt.Errorf("%s: swmgr applies one policy per direction (a PolicyDefinition's statements chain several)", raw)
	},
}

func fixedConv(v string) ocConv {
	return ocConv{to: func(json.RawMessage, bool) (json.RawMessage, bool) { return jstr(v), true }}
}

// unnumbered6Conv keys the IPv6 unicast AFI-SAFI of a BGPv4Neighbor by
// interface (NeighborAddress ""): one by address has none.
var unnumbered6Conv = ocConv{to: func(raw json.RawMessage, _ bool) (json.RawMessage, bool) {
	return jstr("IPV6_UNICAST"), rawText(raw) == ""
}}

// hopKey is a next hop as its ids are made of it.
func hopKey(addr, intf string) string {
	if intf == "" {
		return addr
	}
	return addr + "%" + intf
}

// uint64Leaf is an id: a number, a string in JSON_IETF (RFC 7951).
func uint64Leaf(id uint64, ietf bool) json.RawMessage {
	if ietf {
		return jstr(strconv.FormatUint(id, 10))
	}
	return json.RawMessage(strconv.FormatUint(id, 10))
}

func fnv64(s string) uint64 {
	h := fnv.New64a()
	h.Write([]byte(s))
	return h.Sum64()
}

// nextHopGroupConv is a route's next-hop group id, made of its set of next
// hops; a route with none has no group.
var nextHopGroupConv = ocConv{shared: true, to: func(raw json.RawMessage, ietf bool) (json.RawMessage, bool) {
	var hops []struct{ NextHopIp, NextHopIntRef string }
	if json.Unmarshal(raw, &hops) != nil || len(hops) == 0 {
		return nil, false
	}
	keys := make([]string, len(hops))
	for i, h := range hops {
		keys[i] = hopKey(h.NextHopIp, h.NextHopIntRef)
	}
	slices.Sort(keys)
	return uint64Leaf(fnv64(strings.Join(keys, ",")), ietf), true
}}

// nextHopIndexConv is a next hop's index, made of [address, interface].
var nextHopIndexConv = ocConv{shared: true, to: func(raw json.RawMessage, ietf bool) (json.RawMessage, bool) {
	var ai []string
	if json.Unmarshal(raw, &ai) != nil || len(ai) != 2 || ai[0]+ai[1] == "" {
		return nil, false
	}
	return uint64Leaf(fnv64(hopKey(ai[0], ai[1])), ietf), true
}}

// orNoneConv is a BFD session's interface: FlexSwitch's None for a session
// on no interface of its own.
var orNoneConv = ocConv{to: func(raw json.RawMessage, _ bool) (json.RawMessage, bool) {
	if rawText(raw) == "" {
		return jstr("None"), true
	}
	return raw, true
}}

// msToUsConv is an interval of swmgr's milliseconds as OpenConfig's
// microseconds.
var msToUsConv = ocConv{to: func(raw json.RawMessage, _ bool) (json.RawMessage, bool) {
	n, err := strconv.ParseUint(rawText(raw), 10, 32)
	return json.RawMessage(strconv.FormatUint(n*1000, 10)), err == nil
}}

// shared reports whether the entry is one many objects make (a next-hop
// group of routes with the same next hops): its leaves are given once.
func (e *ocEntry) shared() bool {
	for _, te := range e.elems {
		for _, k := range te.keys {
			if k.conv != "" && ocConvs[k.conv].shared {
				return true
			}
		}
	}
	return false
}

// onceEach drops the leaves from out[from:] whose path seen holds, and
// adds the others' to it.
func onceEach(out []leaf, from int, seen map[string]bool) []leaf {
	kept := out[:from]
	for _, l := range out[from:] {
		k := pathString(l.path)
		if !seen[k] {
			seen[k] = true
			kept = append(kept, l)
		}
	}
	return kept
}

// messageCount is one count of a BGP neighbor's Messages record
// (FlexSwitch's {Sent, Received} x {Update, Notification}), a counter.
func messageCount(dir, kind string) ocConv {
	return ocConv{to: func(raw json.RawMessage, ietf bool) (json.RawMessage, bool) {
		var m map[string]map[string]uint64
		if json.Unmarshal(raw, &m) != nil || m[dir] == nil {
			return nil, false
		}
		n, ok := m[dir][kind]
		return uint64Leaf(n, ietf), ok
	}}
}
