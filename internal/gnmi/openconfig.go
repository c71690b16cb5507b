package gnmi

import (
	"context"
	"encoding/json"
	"fmt"
	"net"
	"net/netip"
	"sort"
	"strconv"
	"strings"
	"time"

	gpb "github.com/openconfig/gnmi/proto/gnmi"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"

	"github.com/swmgr/swmgr/internal/model"
)

// The OpenConfig origin is mapped by hand: the model declares the leaves
// that mean the same as one of swmgr's fields (model.OpenConfigLeaves);
// this file matches paths against them and converts the values each way
// (ocConvs; memberConvs for the leaves many objects make, such as a port's
// VLANs); openconfig_set.go turns writes of them into the objects' edits.
// Generating Go types with ygot from openconfig/public would
// add ~170k lines and ~25 MB of binary for the few dozen leaves swmgr has,
// and would still need the table to say which field each leaf is. A path
// that matches no row answers Unimplemented naming it. docs/gnmi.md lists
// the rows (TestDocsListEveryOpenConfigLeaf).

// OpenConfigRelease is the openconfig/public release the paths follow.
const OpenConfigRelease = "v5.9.0"

// ocModels are the OpenConfig models Capabilities lists. Their Version is
// the openconfig/public release whose paths the table follows (not each
// module's own openconfig-version): swmgr maps a few leaves of each, not a
// revision of the whole module.
func ocModels() []*gpb.ModelData {
	var out []*gpb.ModelData
	for _, m := range []string{"openconfig-interfaces", "openconfig-if-ethernet", "openconfig-if-ip", "openconfig-vlan", "openconfig-if-aggregate", "openconfig-lacp", "openconfig-network-instance", "openconfig-local-routing", "openconfig-system", "openconfig-lldp", "openconfig-platform", "openconfig-procmon", "openconfig-aft", "openconfig-bgp", "openconfig-routing-policy", "openconfig-evpn", "openconfig-bfd"} {
		out = append(out, &gpb.ModelData{Name: m, Organization: "OpenConfig working group", Version: OpenConfigRelease})
	}
	return out
}

// ocRow is one mapped leaf, as the model declares it.
type ocRow = model.OpenConfigLeaf

// ocConv converts a value between swmgr's JSON and OpenConfig's.
type ocConv struct {
	to func(raw json.RawMessage, ietf bool) (json.RawMessage, bool)
	// from is the field's value of a leaf's (nil and no error: the leaf
	// is checked and writes nothing); nil: not writable this way.
	from func(raw json.RawMessage) (json.RawMessage, error)
	// part, for a leaf that is part of its field's value, puts the
	// leaf's value into the field's current one (nil or absent at a
	// create).
	part func(cur, v json.RawMessage) (json.RawMessage, error)
	// shared, for a key, names an entry many objects make (a next-hop
	// group): its leaves are given once.
	shared bool
}

func jstr(s string) json.RawMessage { b, _ := json.Marshal(s); return b }

func boolMap(t, f string) ocConv {
	return ocConv{
		to: func(raw json.RawMessage, _ bool) (json.RawMessage, bool) {
			return json.RawMessage(strconv.FormatBool(rawText(raw) == t)), true
		},
		from: func(raw json.RawMessage) (json.RawMessage, error) {
			var b bool
			if err := json.Unmarshal(raw, &b); err != nil {
				return nil, fmt.Errorf("a boolean is expected, not %s", raw)
			}
			if b {
				return jstr(t), nil
			}
			return jstr(f), nil
		},
	}
}

func enumMap(pairs ...string) ocConv {
	to, from := map[string]string{}, map[string]string{}
	for i := 0; i+1 < len(pairs); i += 2 {
		to[pairs[i]], from[pairs[i+1]] = pairs[i+1], pairs[i]
	}
	return ocConv{
		to: func(raw json.RawMessage, _ bool) (json.RawMessage, bool) {
			v, ok := to[rawText(raw)]
			return jstr(v), ok
		},
		from: func(raw json.RawMessage) (json.RawMessage, error) {
			s := rawText(raw)
			if _, id, ok := strings.Cut(s, ":"); ok { // a JSON_IETF identity's module prefix
				s = id
			}
			v, ok := from[s]
			if !ok {
				return nil, fmt.Errorf("%s is not one of the values swmgr maps", raw)
			}
			if n, err := strconv.ParseInt(v, 10, 64); err == nil {
				return json.RawMessage(strconv.FormatInt(n, 10)), nil
			}
			return jstr(v), nil
		},
	}
}

var ocConvs = map[string]ocConv{
	"": {
		to:   func(raw json.RawMessage, _ bool) (json.RawMessage, bool) { return raw, true },
		from: func(raw json.RawMessage) (json.RawMessage, error) { return raw, nil },
	},
	"enabled": boolMap("UP", "DOWN"),
	"onoff":   boolMap("ON", "OFF"),
	"active":  enumMap("UP", "ACTIVE", "DOWN", "SUSPENDED"),
	// LaPortChannel's and its members' numbered values (FlexSwitch's).
	"lagtype":      enumMap("0", "LACP", "1", "STATIC"),
	"lacpinterval": enumMap("0", "FAST", "1", "SLOW"),
	"lacpmode":     enumMap("0", "ACTIVE", "1", "PASSIVE"),
	"lacptimeout":  enumMap("0", "LONG", "1", "SHORT"),
	"lacpsync":     enumMap("0", "IN_SYNC", "1", "OUT_SYNC"),
	"fdbtype":      enumMap("learned", "DYNAMIC", "static", "STATIC"),
	"duplex":       enumMap("Full_Duplex", "FULL", "Half_Duplex", "HALF"),
	"speed": enumMap("10", "SPEED_10MB", "100", "SPEED_100MB", "1000", "SPEED_1GB", "10000", "SPEED_10GB",
		"25000", "SPEED_25GB", "40000", "SPEED_40GB", "50000", "SPEED_50GB", "100000", "SPEED_100GB"),
	"counter": {to: func(raw json.RawMessage, ietf bool) (json.RawMessage, bool) {
		if ietf { // RFC 7951: 64-bit integers are strings
			return jstr(string(raw)), true
		}
		return raw, true
	}},
	"asn": {
		to: func(raw json.RawMessage, _ bool) (json.RawMessage, bool) {
			n, err := strconv.ParseUint(rawText(raw), 10, 32)
			return json.RawMessage(strconv.FormatUint(n, 10)), err == nil
		},
		from: func(raw json.RawMessage) (json.RawMessage, error) { return jstr(rawText(raw)), nil },
	},
	// masklen: a prefix's MaskLengthRange, exact or lo-hi, as
	// openconfig-routing-policy writes it (exact, lo..hi).
	"masklen": {to: func(raw json.RawMessage, _ bool) (json.RawMessage, bool) {
		return jstr(strings.Replace(rawText(raw), "-", "..", 1)), true
	}},
	"upper": {to: func(raw json.RawMessage, _ bool) (json.RawMessage, bool) {
		return jstr(strings.ToUpper(rawText(raw))), true
	}},
	"role": {
		to: func(raw json.RawMessage, _ bool) (json.RawMessage, bool) {
			if g := rawText(raw); g == "admin" {
				return jstr("SYSTEM_ROLE_ADMIN"), true
			}
			return raw, true
		},
		from: func(raw json.RawMessage) (json.RawMessage, error) {
			s := rawText(raw)
			if _, id, ok := strings.Cut(s, ":"); ok {
				s = id
			}
			if s == "SYSTEM_ROLE_ADMIN" {
				s = "admin"
			}
			return jstr(s), nil
		},
	},
	"addr": {
		to: func(raw json.RawMessage, _ bool) (json.RawMessage, bool) {
			a, _, ok := strings.Cut(rawText(raw), "/")
			return jstr(a), ok
		},
		part: func(cur, v json.RawMessage) (json.RawMessage, error) {
			a, err := netip.ParseAddr(rawText(v))
			if err != nil || !a.Is4() {
				return nil, fmt.Errorf("%s is not an IPv4 address", v)
			}
			_, l, _ := strings.Cut(rawText(cur), "/")
			if l == "" {
				return jstr(a.String()), nil
			}
			return jstr(a.String() + "/" + l), nil
		},
	},
	"prefixlen": {
		to: func(raw json.RawMessage, _ bool) (json.RawMessage, bool) {
			_, l, ok := strings.Cut(rawText(raw), "/")
			return json.RawMessage(l), ok
		},
		part: func(cur, v json.RawMessage) (json.RawMessage, error) {
			n, err := strconv.ParseUint(rawText(v), 10, 8)
			if err != nil || n > 32 {
				return nil, fmt.Errorf("%s is not a prefix length (0-32)", v)
			}
			a, _, _ := strings.Cut(rawText(cur), "/")
			return jstr(a + "/" + strconv.FormatUint(n, 10)), nil
		},
	},
	// A route's prefix: [DestinationNw, NetworkMask] <-> a.b.c.d/len.
	"prefix": {
		to: func(raw json.RawMessage, _ bool) (json.RawMessage, bool) {
			var nm []string
			if json.Unmarshal(raw, &nm) != nil || len(nm) != 2 {
				return nil, false
			}
			p, ok := model.RoutePrefix(model.Object{"DestinationNw": nm[0], "NetworkMask": nm[1]})
			return jstr(p.String()), ok
		},
		from: func(raw json.RawMessage) (json.RawMessage, error) {
			p, err := netip.ParsePrefix(rawText(raw))
			if err != nil || !p.Addr().Is4() {
				return nil, fmt.Errorf("%s is not an IPv4 prefix like 10.2.0.0/16", raw)
			}
			m := net.CIDRMask(p.Bits(), 32)
			b, _ := json.Marshal([]string{p.Addr().String(), net.IP(m).String()})
			return b, nil
		},
	},
	// A network instance's interface: swmgr's is subinterface 0.
	"index0": {
		to: func(json.RawMessage, bool) (json.RawMessage, bool) { return json.RawMessage("0"), true },
		from: func(raw json.RawMessage) (json.RawMessage, error) {
			if rawText(raw) != "0" {
				return nil, fmt.Errorf("%s: swmgr's interfaces carry their address on subinterface 0", raw)
			}
			return nil, nil
		},
	},
	// decimal64 (a temperature), kept as its text: a number in JSON, a
	// string in JSON_IETF (RFC 7951).
	"decimal": {to: func(raw json.RawMessage, ietf bool) (json.RawMessage, bool) {
		v := rawText(raw)
		if _, err := strconv.ParseFloat(v, 64); err != nil {
			return nil, false
		}
		if ietf {
			return jstr(v), true
		}
		return json.RawMessage(v), true
	}},
	// A CPU's index: ALL, or its number.
	"cpuindex": {to: func(raw json.RawMessage, _ bool) (json.RawMessage, bool) {
		if v := rawText(raw); v != "ALL" {
			_, err := strconv.ParseUint(v, 10, 32)
			return json.RawMessage(v), err == nil
		}
		return raw, true
	}},
	// A route's origin protocol (openconfig-policy-types' identities).
	"originprotocol": enumMap("CONNECTED", "DIRECTLY_CONNECTED", "STATIC", "STATIC", "BGP", "BGP"),
	// An ACL's set name: [AclName, Direction] -> AclName:Direction.
	"aclset": {to: func(raw json.RawMessage, _ bool) (json.RawMessage, bool) {
		var nd []string
		if json.Unmarshal(raw, &nd) != nil || len(nd) != 2 {
			return nil, false
		}
		return jstr(nd[0] + ":" + nd[1]), true
	}},
	// An ACL's type (openconfig-acl's identities).
	"acltype": enumMap(model.AclIPv4, "ACL_IPV4", model.AclIPv6, "ACL_IPV6", model.AclMAC, "ACL_L2"),
	// openconfig-bgp, openconfig-bfd and openconfig-aft (openconfig_l3.go).
	"bgppeer4":    bgpPeerConv(false),
	"bgppeer6":    bgpPeerConv(true),
	"bgpstate":    enumMap("0", "IDLE", "1", "IDLE", "2", "CONNECT", "3", "ACTIVE", "4", "OPENSENT", "5", "OPENCONFIRM", "6", "ESTABLISHED"),
	"peertype":    enumMap("0", "INTERNAL", "1", "EXTERNAL"),
	"not":         notConv,
	"policylist":  policyListConv,
	"afi4":        fixedConv("IPV4_UNICAST"),
	"afi6":        fixedConv("IPV6_UNICAST"),
	"unnumbered6": unnumbered6Conv,
	"nhgroup":     nextHopGroupConv,
	"nhindex":     nextHopIndexConv,
	"ornone":      orNoneConv,
	"bfdstate":    enumMap("up", "UP", "down", "DOWN", "init", "INIT", "admin_down", "ADMIN_DOWN"),
	"mstous":      msToUsConv,
	"msgrxupd":    messageCount("Received", "Update"),
	"msgrxnotif":  messageCount("Received", "Notification"),
	"msgtxupd":    messageCount("Sent", "Update"),
	"msgtxnotif":  messageCount("Sent", "Notification"),
	// An optional number: 0 is no leaf.
	"nonzero": {to: func(raw json.RawMessage, _ bool) (json.RawMessage, bool) { return raw, rawText(raw) != "0" }},
	// NtpServer's microseconds as OpenConfig's milliseconds (ntp.go).
	"usecms":      usecToMillis(false, false),
	"usecms64":    usecToMillis(false, true),
	"absusecms64": usecToMillis(true, true),
	// An optional value: "" is no leaf.
	"nonempty": {
		to:   func(raw json.RawMessage, _ bool) (json.RawMessage, bool) { return raw, rawText(raw) != "" },
		from: func(raw json.RawMessage) (json.RawMessage, error) { return raw, nil },
	},

	// The unnumbered and EVPN rows (model/unnumbered.go, evpn_openconfig.go).
	// A container that is there while its object is: true (a write of
	// false is a delete of the object).
	"exists": constLeaf(json.RawMessage("true"), "true: an interface borrows while its IPv4Unnumbered exists; delete the unnumbered container to end it"),
	// A local VNI's type: an L2 VNI (VxlanInstance) or an L3 one (EvpnL3Vni).
	"vnil2": constLeaf(jstr("L2"), `"L2": a local-endpoint-vni written here is an L2 VNI (VxlanInstance); an L3 VNI is written as its VRF's evpn-instance`),
	"vnil3": constLeaf(jstr("L3"), `"L3"`),
}

// constLeaf is a leaf whose value follows from the object's existence:
// reads say v, a write of v sets nothing, of anything else is refused
// with want.
func constLeaf(v json.RawMessage, want string) ocConv {
	return ocConv{
		to: func(json.RawMessage, bool) (json.RawMessage, bool) { return v, true },
		from: func(raw json.RawMessage) (json.RawMessage, error) {
			s := rawText(raw)
			if _, id, ok := strings.Cut(s, ":"); ok {
				s = id
			}
			if s != rawText(v) {
				return nil, fmt.Errorf("%s: swmgr takes %s", raw, want)
			}
			return nil, nil
		},
	}
}

// memberConv makes a Member leaf of the Field values of the objects that
// hold the entry, one set per Member list, and back.
type memberConv struct {
	to func(sets [][]string) (json.RawMessage, bool)
	// from gives the sets a write asks for, given the current ones (a nil
	// set: unchanged), and the leaf it must then read (nil: none); raw
	// nil is the leaf's delete.
	from func(raw json.RawMessage, cur [][]string) ([][]string, json.RawMessage, error)
	// hint says how the leaves fit together, for a write they refuse.
	hint string
}

// vlanHint is how a port's switched-vlan leaves follow its VLANs.
const vlanHint = "swmgr keeps VLAN membership on the Vlans (IntfList tagged, UntagIntfList untagged): a port is a TRUNK while it is a tagged member of a VLAN (its untagged VLAN is then its native-vlan), else an ACCESS port of its untagged VLAN"

// vlanID reads a VLAN id (a number, or its text).
func vlanID(raw json.RawMessage) (string, error) {
	n, err := strconv.ParseUint(rawText(raw), 10, 16)
	if err != nil || n < 1 || n > 4094 {
		return "", fmt.Errorf("%s is not a VLAN id (1-4094)", raw)
	}
	return strconv.FormatUint(n, 10), nil
}

// vlanList is a leaf-list of VLAN ids, in order.
func vlanList(ids []string) json.RawMessage {
	ns := make([]int, 0, len(ids))
	for _, id := range ids {
		n, _ := strconv.Atoi(id)
		ns = append(ns, n)
	}
	sort.Ints(ns)
	b, _ := json.Marshal(ns)
	return b
}

// identity is an identity's name without its module prefix.
func identity(raw json.RawMessage) string {
	s := rawText(raw)
	if _, id, ok := strings.Cut(s, ":"); ok {
		return id
	}
	return s
}

// aggregateHint is how a port's aggregate-id follows the LAGs.
const aggregateHint = "swmgr keeps LAG membership on the LAG (LaPortChannel IntfRefList): a port's aggregate-id is the LAG whose IntfRefList holds it"

var memberConvs = map[string]memberConv{
	// A port's aggregate-id: the one LAG that holds it (a port is in one
	// LAG at most, the model's constraint). A write moves the port into
	// that LAG's IntfRefList and out of any other's; a delete takes it out.
	"aggregateid": {
		to: func(sets [][]string) (json.RawMessage, bool) {
			if len(sets[0]) == 0 {
				return nil, false
			}
			return jstr(sets[0][0]), true
		},
		from: func(raw json.RawMessage, cur [][]string) ([][]string, json.RawMessage, error) {
			if raw == nil {
				return [][]string{{}}, nil, nil
			}
			var name string
			if err := json.Unmarshal(raw, &name); err != nil || name == "" {
				return nil, nil, fmt.Errorf("%s is not a LAG's name like PortChannel1", raw)
			}
			return [][]string{{name}}, jstr(name), nil
		},
		hint: aggregateHint,
	},
	"vlanmode": {
		to: func(sets [][]string) (json.RawMessage, bool) {
			switch {
			case len(sets[0]) > 0:
				return jstr("TRUNK"), true
			case len(sets[1]) > 0:
				return jstr("ACCESS"), true
			}
			return nil, false
		},
		from: func(raw json.RawMessage, cur [][]string) ([][]string, json.RawMessage, error) {
			if raw == nil {
				return [][]string{{}, {}}, nil, nil
			}
			switch identity(raw) {
			case "ACCESS":
				return [][]string{{}, nil}, jstr("ACCESS"), nil
			case "TRUNK":
				return [][]string{nil, nil}, jstr("TRUNK"), nil
			}
			return nil, nil, fmt.Errorf("%s is not an interface mode: ACCESS or TRUNK", raw)
		},
		hint: vlanHint,
	},
	"accessvlan": {
		to: func(sets [][]string) (json.RawMessage, bool) {
			if len(sets[0]) == 0 && len(sets[1]) == 1 {
				return json.RawMessage(sets[1][0]), true
			}
			return nil, false
		},
		from: func(raw json.RawMessage, cur [][]string) ([][]string, json.RawMessage, error) {
			if raw == nil {
				if len(cur[0]) == 0 {
					return [][]string{nil, {}}, nil, nil
				}
				return [][]string{nil, nil}, nil, nil
			}
			id, err := vlanID(raw)
			return [][]string{nil, {id}}, json.RawMessage(id), err
		},
		hint: vlanHint,
	},
	"nativevlan": {
		to: func(sets [][]string) (json.RawMessage, bool) {
			if len(sets[0]) > 0 && len(sets[1]) == 1 {
				return json.RawMessage(sets[1][0]), true
			}
			return nil, false
		},
		from: func(raw json.RawMessage, cur [][]string) ([][]string, json.RawMessage, error) {
			if raw == nil {
				if len(cur[0]) > 0 {
					return [][]string{nil, {}}, nil, nil
				}
				return [][]string{nil, nil}, nil, nil
			}
			id, err := vlanID(raw)
			return [][]string{nil, {id}}, json.RawMessage(id), err
		},
		hint: vlanHint,
	},
	"trunkvlans": {
		to: func(sets [][]string) (json.RawMessage, bool) {
			if len(sets[0]) == 0 {
				return nil, false
			}
			return vlanList(sets[0]), true
		},
		from: func(raw json.RawMessage, cur [][]string) ([][]string, json.RawMessage, error) {
			if raw == nil {
				return [][]string{{}, nil}, nil, nil
			}
			var elems []json.RawMessage
			if json.Unmarshal(raw, &elems) != nil {
				elems = []json.RawMessage{raw}
			}
			seen := map[string]bool{}
			ids := []string{}
			add := func(id string) {
				if !seen[id] {
					seen[id] = true
					ids = append(ids, id)
				}
			}
			for _, e := range elems {
				if lo, hi, ok := strings.Cut(rawText(e), ".."); ok { // a range, 10..20
					a, err1 := vlanID(json.RawMessage(lo))
					b, err2 := vlanID(json.RawMessage(hi))
					na, _ := strconv.Atoi(a)
					nb, _ := strconv.Atoi(b)
					if err1 != nil || err2 != nil || na > nb {
						return nil, nil, fmt.Errorf("%s is not a VLAN range like 10..20", e)
					}
					for n := na; n <= nb; n++ {
						add(strconv.Itoa(n))
					}
					continue
				}
				id, err := vlanID(e)
				if err != nil {
					return nil, nil, err
				}
				add(id)
			}
			if len(ids) == 0 {
				return [][]string{{}, nil}, nil, nil
			}
			return [][]string{ids, nil}, vlanList(ids), nil
		},
		hint: vlanHint,
	},
}

// ocKey is one key of a template element: bound to fields of the object
// (several: joined by conv), to a record's sub-field, to the member, or
// fixed.
type ocKey struct {
	name   string
	fields []string
	conv   string
	record string // the record list whose entries the key ranges over; fields[0] is the sub-field
	member bool
	fixed  string
}

func (k *ocKey) bound() bool { return len(k.fields) > 0 || k.member }

type ocElem struct {
	name string
	keys []*ocKey
}

type ocEntry struct {
	row    ocRow
	elems  []ocElem
	kind   *model.Kind
	conv   ocConv     // rows of one object's fields
	mconv  memberConv // Member rows
	fields []string   // the row's fields (several: joined by conv)
	record string     // the record list the leaf is under, "" for none
	own    int        // the index of the entry's own element (its last keyed one)
}

func (e *ocEntry) member() bool { return len(e.row.Member) > 0 }

// memberAt is the index of the element whose key is the member.
func (e *ocEntry) memberAt() int {
	for i, te := range e.elems {
		for _, k := range te.keys {
			if k.member {
				return i
			}
		}
	}
	return 0
}

type ocTree struct {
	entries []*ocEntry
	tops    map[string]bool // first elements of the mapped models
}

// newOCTree checks the table against the model.
func newOCTree(reg *model.Registry) (*ocTree, error) {
	host, err := model.HostRegistry()
	if err != nil {
		return nil, err
	}
	t := &ocTree{tops: map[string]bool{}}
	for _, r := range model.OpenConfigLeaves() {
		// A config kind (its state form for State rows), a state-only
		// kind, or one of the host's.
		k := reg.Lookup(model.Config, r.Kind)
		if k == nil {
			if k = reg.Named(r.Kind); k == nil {
				k = host.Named(r.Kind)
			}
			if k == nil || k.Class != model.State || !r.State {
				return nil, fmt.Errorf("gnmi: OpenConfig row %s names no config kind %s, nor a state kind for a State row", r.Path, r.Kind)
			}
		}
		elems, err := parseTemplate(r.Path)
		if err != nil {
			return nil, err
		}
		e := &ocEntry{row: r, elems: elems, kind: k, fields: strings.Split(r.Field, ","), own: -1}
		hasField := func(name string) bool {
			if list, sub, ok := strings.Cut(name, "."); ok {
				f := k.Field(list)
				return f != nil && f.Type == model.RecordList && subField(f, sub) != nil
			}
			return k.Field(name) != nil || stateField(k, name) != nil
		}
		for _, f := range e.fields {
			if !hasField(f) {
				return nil, fmt.Errorf("gnmi: OpenConfig row %s names no field %s.%s", r.Path, r.Kind, f)
			}
		}
		if e.member() {
			c, ok := memberConvs[r.Conv]
			if !ok {
				return nil, fmt.Errorf("gnmi: OpenConfig row %s names no member conversion %q", r.Path, r.Conv)
			}
			e.mconv = c
			for _, l := range r.Member {
				if f := k.Field(l); f == nil || f.Type != model.StringList {
					return nil, fmt.Errorf("gnmi: OpenConfig row %s: %s.%s is not a list", r.Path, r.Kind, l)
				}
			}
		} else {
			c, ok := ocConvs[r.Conv]
			if !ok {
				return nil, fmt.Errorf("gnmi: OpenConfig row %s names no conversion %q", r.Path, r.Conv)
			}
			e.conv = c
		}
		for i, el := range elems {
			for _, key := range el.keys {
				if !key.bound() {
					continue
				}
				e.own = i
				switch {
				case key.member:
					if !e.member() {
						return nil, fmt.Errorf("gnmi: OpenConfig row %s binds a member but has no Member lists", r.Path)
					}
				case key.record != "":
					e.record = key.record
					for _, sub := range key.fields {
						if !hasField(key.record + "." + sub) {
							return nil, fmt.Errorf("gnmi: OpenConfig row %s binds a key to no record field %s.%s.%s", r.Path, r.Kind, key.record, sub)
						}
					}
				default:
					for _, f := range key.fields {
						if k.Field(f) == nil {
							return nil, fmt.Errorf("gnmi: OpenConfig row %s binds a key to no field %s.%s", r.Path, r.Kind, f)
						}
					}
					if _, ok := ocConvs[key.conv]; !ok {
						return nil, fmt.Errorf("gnmi: OpenConfig row %s names no key conversion %q", r.Path, key.conv)
					}
				}
			}
		}
		if list, _, ok := strings.Cut(r.Field, "."); ok && list != e.record {
			return nil, fmt.Errorf("gnmi: OpenConfig row %s reads the records of %s outside their entries", r.Path, list)
		}
		t.tops[elems[0].name] = true
		t.entries = append(t.entries, e)
	}
	return t, nil
}

func subField(f *model.Field, name string) *model.Field {
	for _, s := range f.Sub {
		if s.Name == name {
			return s
		}
	}
	return nil
}

func parseTemplate(p string) ([]ocElem, error) {
	var out []ocElem
	for _, part := range strings.Split(strings.TrimPrefix(p, "/"), "/") {
		name, rest, _ := strings.Cut(part, "[")
		e := ocElem{name: name}
		for rest != "" {
			kv, after, ok := strings.Cut(rest, "]")
			if !ok {
				return nil, fmt.Errorf("gnmi: OpenConfig path %s: unclosed key", p)
			}
			rest = strings.TrimPrefix(after, "[")
			k, v, _ := strings.Cut(kv, "=")
			key := &ocKey{name: k}
			if f, ok := strings.CutPrefix(v, "@"); ok {
				f, key.conv, _ = strings.Cut(f, ":")
				switch list, sub, isRec := strings.Cut(f, "."); {
				case f == "":
					key.member = true
				case isRec:
					key.record, key.fields = list, strings.Split(sub, ",")
				default:
					key.fields = strings.Split(f, ",")
				}
			} else {
				key.fixed = v
			}
			e.keys = append(e.keys, key)
		}
		out = append(out, e)
	}
	return out, nil
}

// ocInst is what one leaf is read from: an object's fields, one of its
// records (rows under a record list), or a member with the values of the
// objects holding it (Member rows).
type ocInst struct {
	fields map[string]json.RawMessage
	record map[string]json.RawMessage
	member string
	sets   [][]string
}

// value is a field's JSON: the object's, or its record's ("List.Sub").
func (in *ocInst) value(name string) json.RawMessage {
	if _, sub, ok := strings.Cut(name, "."); ok {
		return in.record[sub]
	}
	return in.fields[name]
}

// values is the JSON of the fields named: one's, or an array of several.
func (in *ocInst) values(names []string) json.RawMessage {
	if len(names) == 1 {
		return in.value(names[0])
	}
	vs := make([]json.RawMessage, len(names))
	for i, n := range names {
		if vs[i] = in.value(n); vs[i] == nil {
			vs[i] = json.RawMessage("null")
		}
	}
	b, _ := json.Marshal(vs)
	return b
}

// keyText is the value a key takes from an instance.
func (in *ocInst) keyText(k *ocKey) (string, bool) {
	switch {
	case k.member:
		return in.member, true
	case !k.bound():
		return k.fixed, true
	case k.record != "" && in.record == nil:
		return "", false
	}
	raw := in.values(k.fields)
	if k.record != "" {
		names := make([]string, len(k.fields))
		for i, sub := range k.fields {
			names[i] = k.record + "." + sub
		}
		raw = in.values(names)
	}
	if k.conv != "" {
		v, ok := ocConvs[k.conv].to(raw, false)
		if !ok {
			return "", false
		}
		raw = v
	}
	return rawText(raw), raw != nil
}

// ocFilter is what a request path asks of a key: this value.
type ocFilter struct {
	key   *ocKey
	elem  int
	value string
}

// normalKey is a key value as given, in the form the table compares: the
// default network instance may be named DEFAULT (OpenConfig's
// DEFAULT_INSTANCE convention).
func normalKey(elem, name, v string) string {
	if elem == "network-instance" && name == "name" && (v == "DEFAULT" || v == "DEFAULT_INSTANCE") {
		return "default"
	}
	return v
}

// match reports whether the request path p (elements) reaches entry e, as
// a prefix of its leaf or the leaf itself, and the filters its keys give.
func (e *ocEntry) match(p []*gpb.PathElem) ([]ocFilter, bool) {
	if len(p) > len(e.elems) {
		return nil, false
	}
	var filters []ocFilter
	for i, pe := range p {
		te := e.elems[i]
		if pe.GetName() != te.name && pe.GetName() != "*" {
			return nil, false
		}
		for name, v := range pe.GetKey() {
			if v == "*" {
				continue
			}
			v = normalKey(te.name, name, v)
			found := false
			for _, k := range te.keys {
				if k.name != name {
					continue
				}
				found = true
				if !k.bound() {
					if k.fixed != v {
						return nil, false
					}
				} else {
					filters = append(filters, ocFilter{k, i, v})
				}
			}
			if !found {
				return nil, false
			}
		}
	}
	return filters, true
}

// pathOf is the entry's concrete path for one instance.
func (e *ocEntry) pathOf(origin string, in *ocInst) *gpb.Path {
	p := &gpb.Path{Origin: origin, Elem: make([]*gpb.PathElem, len(e.elems))}
	for i, te := range e.elems {
		pe := &gpb.PathElem{Name: te.name}
		if len(te.keys) > 0 {
			pe.Key = make(map[string]string, len(te.keys))
			for _, k := range te.keys {
				pe.Key[k.name], _ = in.keyText(k)
			}
		}
		p.Elem[i] = pe
	}
	return p
}

// unmapped is the answer to a path no row reaches.
func unmapped(p *gpb.Path) error {
	return status.Errorf(codes.Unimplemented, "%s does not map onto swmgr's model: no OpenConfig leaf under it is served (docs/gnmi.md lists those that are; every setting is reachable in origin %q)", pathString(p), OriginNative)
}

// ocMatch is an entry a request path reaches, with its filters.
type ocMatch struct {
	e       *ocEntry
	filters []ocFilter
}

func (t *ocTree) matches(p *gpb.Path) ([]ocMatch, error) {
	elems := p.GetElem()
	if len(elems) > 0 && elems[0].GetName() != "*" && !t.tops[elems[0].GetName()] {
		return nil, unmapped(p)
	}
	var out []ocMatch
	for _, e := range t.entries {
		if f, ok := e.match(elems); ok {
			out = append(out, ocMatch{e, f})
		}
	}
	if len(out) == 0 {
		return nil, unmapped(p)
	}
	return out, nil
}

// ocReader reads the objects of the kinds the matches need, once each,
// decoded into their fields.
type ocReader struct {
	s      *Server
	cache  map[string][]map[string]json.RawMessage // kind NUL state
	maxAge time.Duration                           // Server.readAged's
}

func (r *ocReader) objects(ctx context.Context, k *model.Kind, state bool) ([]map[string]json.RawMessage, error) {
	key := fmt.Sprint(k.Name, "\x00", state)
	if objs, ok := r.cache[key]; ok {
		return objs, nil
	}
	items, err := r.s.readAged(ctx, sel{state: state, kind: k}, r.maxAge)
	if status.Code(grpcError(err)) == codes.Unimplemented {
		items, err = nil, nil // a state this swmgr has no source of: no leaves
	}
	if err != nil {
		return nil, err
	}
	objs, err := decodeItems(k, items)
	if err != nil {
		return nil, err
	}
	r.cache[key] = objs
	return objs, nil
}

func decodeItems(k *model.Kind, items []item) ([]map[string]json.RawMessage, error) {
	objs := make([]map[string]json.RawMessage, 0, len(items))
	for _, it := range items {
		raw := it.json
		if raw == nil {
			raw = k.AppendJSON(nil, it.obj, false)
		}
		var fields map[string]json.RawMessage
		if err := json.Unmarshal(raw, &fields); err != nil {
			return nil, err
		}
		objs = append(objs, fields)
	}
	return objs, nil
}

// instances are what an entry's leaves are read from, for objects of its
// kind; only is, for Member rows, the members wanted (nil: every one).
func (e *ocEntry) instances(objs []map[string]json.RawMessage, only map[string]bool) []ocInst {
	var out []ocInst
	switch {
	case e.member():
		sets := map[string][][]string{}
		for _, o := range objs {
			v := rawText(o[e.row.Field])
			for i, list := range e.row.Member {
				var members []string
				_ = json.Unmarshal(o[list], &members)
				for _, m := range members {
					if only != nil && !only[m] {
						continue
					}
					if sets[m] == nil {
						sets[m] = make([][]string, len(e.row.Member))
					}
					sets[m][i] = append(sets[m][i], v)
				}
			}
		}
		names := make([]string, 0, len(sets))
		for m := range sets {
			names = append(names, m)
		}
		sort.Strings(names)
		for _, m := range names {
			out = append(out, ocInst{member: m, sets: sets[m]})
		}
	case e.record != "":
		for _, o := range objs {
			var recs []map[string]json.RawMessage
			_ = json.Unmarshal(o[e.record], &recs)
			for _, r := range recs {
				out = append(out, ocInst{fields: o, record: r})
			}
		}
	default:
		for _, o := range objs {
			out = append(out, ocInst{fields: o})
		}
	}
	return out
}

// leavesOf gives a match's leaf for each instance that passes its filters.
func (m ocMatch) leavesOf(origin string, objs []map[string]json.RawMessage, ietf bool, out []leaf) []leaf {
	for _, in := range m.e.instances(objs, nil) {
		if l, ok := m.leafOf(origin, &in, ietf); ok {
			out = append(out, l)
		}
	}
	return out
}

func (m ocMatch) leafOf(origin string, in *ocInst, ietf bool) (leaf, bool) {
	for _, f := range m.filters {
		if v, ok := in.keyText(f.key); !ok || v != f.value {
			return leaf{}, false
		}
	}
	// A key its conversion refuses is no entry (an LLDP neighbor's id
	// on a port without one).
	for _, te := range m.e.elems {
		for _, k := range te.keys {
			if k.conv != "" {
				if _, ok := in.keyText(k); !ok {
					return leaf{}, false
				}
			}
		}
	}
	var v json.RawMessage
	var ok bool
	if m.e.member() {
		v, ok = m.e.mconv.to(in.sets)
	} else {
		raw := in.values(m.e.fields)
		if raw == nil || m.e.conv.to == nil {
			return leaf{}, false
		}
		v, ok = m.e.conv.to(raw, ietf)
	}
	if !ok {
		return leaf{}, false
	}
	return leaf{m.e.pathOf(origin, in), v}, true
}

func (t *ocTree) read(ctx context.Context, s *Server, p *gpb.Path, dt dataType, enc gpb.Encoding, maxAge time.Duration) ([]leaf, error) {
	ms, err := t.matches(p)
	if err != nil {
		return nil, err
	}
	return readMatches(ctx, s, ms, p.GetOrigin(), dt, enc, maxAge)
}

func readMatches(ctx context.Context, s *Server, ms []ocMatch, origin string, dt dataType, enc gpb.Encoding, maxAge time.Duration) ([]leaf, error) {
	r := &ocReader{s: s, cache: map[string][]map[string]json.RawMessage{}, maxAge: maxAge}
	var out []leaf
	seen := map[string]bool{} // the leaves of shared entries given
	for _, m := range ms {
		if m.e.row.State && !dt.state || !m.e.row.State && !dt.config {
			continue
		}
		objs, err := r.objects(ctx, m.e.kind, m.e.row.State)
		if err != nil {
			return nil, err
		}
		from := len(out)
		out = m.leavesOf(origin, objs, enc == gpb.Encoding_JSON_IETF, out)
		if m.e.shared() {
			out = onceEach(out, from, seen)
		}
	}
	return out, nil
}

// ocTarget is a subscription to OpenConfig paths. A Member row's leaves
// of a commit are made of the objects of its kind as they were before and
// after it (change.members).
type ocTarget struct {
	s      *Server
	origin string
	ms     []ocMatch
	enc    gpb.Encoding
}

func (t *ocTree) target(s *Server, p *gpb.Path, enc gpb.Encoding) (target, error) {
	ms, err := t.matches(p)
	if err != nil {
		return nil, err
	}
	return &ocTarget{s: s, origin: p.GetOrigin(), ms: ms, enc: enc}, nil
}

func (t *ocTarget) read(ctx context.Context, dt dataType, maxAge time.Duration) ([]leaf, error) {
	return readMatches(ctx, t.s, t.ms, t.origin, dt, t.enc, maxAge)
}

func (t *ocTarget) parts() dataType {
	var dt dataType
	for _, m := range t.ms {
		dt.state = dt.state || m.e.row.State
		dt.config = dt.config || !m.e.row.State
	}
	return dt
}

func (t *ocTarget) fromDiff(c *change) ([]leaf, []*gpb.Path) {
	var upd []leaf
	var del []*gpb.Path
	after, before := c.maps()
	if c.Op == "delete" {
		after = nil
	}
	if c.Op == "create" {
		before = nil
	}
	ietf := t.enc == gpb.Encoding_JSON_IETF
	for _, m := range t.ms {
		if m.e.kind.Name != c.Kind || m.e.row.State {
			continue
		}
		var was, is []ocInst
		if m.e.member() {
			// What the commit did to the objects holding the members
			// it moved, once for all its changes (on its first of the
			// kind); none for a commit made before the group started.
			mc := c.members
			if mc == nil {
				continue
			}
			was = m.e.instances(mc.was, mc.only)
			is = m.e.instances(mc.is, mc.only)
		} else {
			if before != nil {
				was = m.e.instances([]map[string]json.RawMessage{before}, nil)
			}
			if after != nil {
				is = m.e.instances([]map[string]json.RawMessage{after}, nil)
			}
		}
		var wasLeaves []leaf
		old := map[string]string{}
		for _, in := range was {
			if l, ok := m.leafOf(t.origin, &in, ietf); ok {
				old[pathString(l.path)] = string(l.json)
				wasLeaves = append(wasLeaves, l)
			}
		}
		seen := map[string]bool{}
		for _, in := range is {
			l, ok := m.leafOf(t.origin, &in, ietf)
			if !ok {
				continue
			}
			k := pathString(l.path)
			seen[k] = true
			if v, ok := old[k]; !ok || v != string(l.json) {
				upd = append(upd, l)
			}
		}
		for _, l := range wasLeaves {
			if !seen[pathString(l.path)] {
				del = append(del, l.path)
			}
		}
	}
	return upd, del
}

// isList reports whether a JSON value is a list's entries (an array of
// objects), not a leaf-list's values.
func isList(v json.RawMessage) bool {
	var elems []json.RawMessage
	if len(v) == 0 || v[0] != '[' || json.Unmarshal(v, &elems) != nil {
		return false
	}
	for _, e := range elems {
		if len(e) > 0 && e[0] == '{' {
			return true
		}
	}
	return false
}
