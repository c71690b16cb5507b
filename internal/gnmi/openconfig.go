package gnmi

import (
	"context"
	"encoding/json"
	"fmt"
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
// (ocConvs). Generating Go types with ygot from openconfig/public would
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
	for _, m := range []string{"openconfig-interfaces", "openconfig-if-ethernet", "openconfig-if-ip", "openconfig-network-instance", "openconfig-system", "openconfig-lldp"} {
		out = append(out, &gpb.ModelData{Name: m, Organization: "OpenConfig working group", Version: OpenConfigRelease})
	}
	return out
}

// ocRow is one mapped leaf, as the model declares it.
type ocRow = model.OpenConfigLeaf

// ocConv converts a value between swmgr's JSON and OpenConfig's.
type ocConv struct {
	to   func(raw json.RawMessage, ietf bool) (json.RawMessage, bool)
	from func(raw json.RawMessage) (json.RawMessage, error) // nil: not writable this way
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
	"duplex":  enumMap("Full_Duplex", "FULL", "Half_Duplex", "HALF"),
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
	"addr": {to: func(raw json.RawMessage, _ bool) (json.RawMessage, bool) {
		a, _, ok := strings.Cut(rawText(raw), "/")
		return jstr(a), ok
	}},
	"prefixlen": {to: func(raw json.RawMessage, _ bool) (json.RawMessage, bool) {
		_, l, ok := strings.Cut(rawText(raw), "/")
		return json.RawMessage(l), ok
	}},
}

// ocKey is one key of a template element: bound to a field (with a part
// of it), or fixed.
type ocKey struct {
	name  string
	field string // "" for a fixed value
	part  string // "addr": the address of an address/prefix
	fixed string
}

type ocElem struct {
	name string
	keys []ocKey
}

type ocEntry struct {
	row   ocRow
	elems []ocElem
	kind  *model.Kind
	conv  ocConv
}

type ocTree struct {
	entries []*ocEntry
	tops    map[string]bool // first elements of the mapped models
}

// newOCTree checks the table against the model.
func newOCTree(reg *model.Registry) (*ocTree, error) {
	t := &ocTree{tops: map[string]bool{"components": true}}
	for _, r := range model.OpenConfigLeaves() {
		k := reg.Lookup(model.Config, r.Kind)
		if k == nil {
			return nil, fmt.Errorf("gnmi: OpenConfig row %s names no kind %s", r.Path, r.Kind)
		}
		if k.Field(r.Field) == nil && stateField(k, r.Field) == nil {
			return nil, fmt.Errorf("gnmi: OpenConfig row %s names no field %s.%s", r.Path, r.Kind, r.Field)
		}
		c, ok := ocConvs[r.Conv]
		if !ok {
			return nil, fmt.Errorf("gnmi: OpenConfig row %s names no conversion %q", r.Path, r.Conv)
		}
		elems, err := parseTemplate(r.Path)
		if err != nil {
			return nil, err
		}
		for _, e := range elems {
			for _, key := range e.keys {
				if key.field != "" && k.Field(key.field) == nil {
					return nil, fmt.Errorf("gnmi: OpenConfig row %s binds a key to no field %s.%s", r.Path, r.Kind, key.field)
				}
			}
		}
		t.tops[elems[0].name] = true
		t.entries = append(t.entries, &ocEntry{row: r, elems: elems, kind: k, conv: c})
	}
	return t, nil
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
			key := ocKey{name: k}
			if f, ok := strings.CutPrefix(v, "@"); ok {
				key.field, key.part, _ = strings.Cut(f, ":")
			} else {
				key.fixed = v
			}
			e.keys = append(e.keys, key)
		}
		out = append(out, e)
	}
	return out, nil
}

// ocFilter is what a request path asks of the matching objects: a field's
// key text (or a part of it) equal to a value.
type ocFilter struct {
	field, part, value string
}

// keyValue is the text a key takes from an object's field.
func keyValue(raw json.RawMessage, part string) string {
	s := rawText(raw)
	if part == "addr" {
		s, _, _ = strings.Cut(s, "/")
	}
	return s
}

// normalKey is a key value as given, in the form the table compares: the
// default network instance may be named DEFAULT (OpenConfig's
// DEFAULT_INSTANCE convention).
func normalKey(name, v string) string {
	if name == "name" && (v == "DEFAULT" || v == "DEFAULT_INSTANCE") {
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
			v = normalKey(name, v)
			found := false
			for _, k := range te.keys {
				if k.name != name {
					continue
				}
				found = true
				if k.field == "" {
					if k.fixed != v {
						return nil, false
					}
				} else {
					filters = append(filters, ocFilter{k.field, k.part, v})
				}
			}
			if !found {
				return nil, false
			}
		}
	}
	return filters, true
}

// pathOf is the entry's concrete path for one object.
func (e *ocEntry) pathOf(origin string, fields map[string]json.RawMessage) *gpb.Path {
	p := &gpb.Path{Origin: origin, Elem: make([]*gpb.PathElem, len(e.elems))}
	for i, te := range e.elems {
		pe := &gpb.PathElem{Name: te.name}
		if len(te.keys) > 0 {
			pe.Key = make(map[string]string, len(te.keys))
			for _, k := range te.keys {
				if k.field == "" {
					pe.Key[k.name] = k.fixed
				} else {
					pe.Key[k.name] = keyValue(fields[k.field], k.part)
				}
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

// objects reads the objects of the kinds the matches need, once each.
type ocReader struct {
	s      *Server
	cache  map[string][]item // kind NUL state
	maxAge time.Duration     // Server.readAged's
}

func (r *ocReader) objects(ctx context.Context, k *model.Kind, state bool) ([]item, error) {
	key := fmt.Sprint(k.Name, "\x00", state)
	if it, ok := r.cache[key]; ok {
		return it, nil
	}
	it, err := r.s.readAged(ctx, sel{state: state, kind: k}, r.maxAge)
	if err != nil {
		return nil, err
	}
	r.cache[key] = it
	return it, nil
}

// leavesOf gives an entry's leaf for each object that passes the filters.
func (m ocMatch) leavesOf(origin string, objs []item, ietf bool, out []leaf) ([]leaf, error) {
	for _, it := range objs {
		var fields map[string]json.RawMessage
		raw := it.json
		if raw == nil {
			raw = m.e.kind.AppendJSON(nil, it.obj, false)
		}
		if err := json.Unmarshal(raw, &fields); err != nil {
			return out, err
		}
		if l, ok := m.leafOf(origin, fields, ietf); ok {
			out = append(out, l)
		}
	}
	return out, nil
}

func (m ocMatch) leafOf(origin string, fields map[string]json.RawMessage, ietf bool) (leaf, bool) {
	for _, f := range m.filters {
		if keyValue(fields[f.field], f.part) != f.value {
			return leaf{}, false
		}
	}
	raw, ok := fields[m.e.row.Field]
	if !ok || m.e.conv.to == nil {
		return leaf{}, false
	}
	v, ok := m.e.conv.to(raw, ietf)
	if !ok {
		return leaf{}, false
	}
	return leaf{m.e.pathOf(origin, fields), v}, true
}

func (t *ocTree) read(ctx context.Context, s *Server, p *gpb.Path, dt dataType, enc gpb.Encoding, maxAge time.Duration) ([]leaf, error) {
	ms, err := t.matches(p)
	if err != nil {
		return nil, err
	}
	r := &ocReader{s: s, cache: map[string][]item{}, maxAge: maxAge}
	var out []leaf
	for _, m := range ms {
		if m.e.row.State && !dt.state || !m.e.row.State && !dt.config {
			continue
		}
		objs, err := r.objects(ctx, m.e.kind, m.e.row.State)
		if err != nil {
			return nil, err
		}
		if out, err = m.leavesOf(p.GetOrigin(), objs, enc == gpb.Encoding_JSON_IETF, out); err != nil {
			return nil, err
		}
	}
	return out, nil
}

// ocTarget is a subscription to OpenConfig paths.
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
	var out []leaf
	for _, m := range t.ms {
		if m.e.row.State && !dt.state || !m.e.row.State && !dt.config {
			continue
		}
		r := &ocReader{s: t.s, cache: map[string][]item{}, maxAge: maxAge}
		objs, err := r.objects(ctx, m.e.kind, m.e.row.State)
		if err != nil {
			return nil, err
		}
		if out, err = m.leavesOf(t.origin, objs, t.enc == gpb.Encoding_JSON_IETF, out); err != nil {
			return nil, err
		}
	}
	return out, nil
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
	for _, m := range t.ms {
		if m.e.kind.Name != c.Kind || m.e.row.State {
			continue
		}
		if c.Op == "delete" {
			if l, ok := m.leafOf(t.origin, before, t.enc == gpb.Encoding_JSON_IETF); ok {
				del = append(del, l.path)
			}
			continue
		}
		l, ok := m.leafOf(t.origin, after, t.enc == gpb.Encoding_JSON_IETF)
		if !ok {
			continue
		}
		if b, ok := m.leafOf(t.origin, before, t.enc == gpb.Encoding_JSON_IETF); ok && string(b.json) == string(l.json) {
			continue
		}
		upd = append(upd, l)
	}
	return upd, del
}

// writes maps an OpenConfig delete, replace or update onto the objects'
// fields: each leaf given (a container's value is split into its leaves)
// must be a row; the leaves of one object make one write.
func (t *ocTree) writes(s *Server, op writeOp, p *gpb.Path, val *gpb.TypedValue) ([]write, error) {
	type leafIn struct {
		path *gpb.Path
		raw  json.RawMessage
	}
	var in []leafIn
	if op == opDelete {
		in = append(in, leafIn{path: p})
	} else {
		raw, err := jsonOf(val)
		if err != nil {
			return nil, err
		}
		if err := flatten(p, raw, func(lp *gpb.Path, v json.RawMessage) { in = append(in, leafIn{lp, v}) }); err != nil {
			return nil, err
		}
	}
	var out []write
	byObject := map[string]int{}
	for _, l := range in {
		e, keys, err := t.leafEntry(l.path)
		if err != nil {
			return nil, err
		}
		if e == nil { // a delete of a whole list entry: the object
			ek, keys, err := t.objectOf(l.path)
			if err != nil {
				return nil, err
			}
			sl := sel{kind: ek, keys: keys}
			out = append(out, write{op: opDelete, path: l.path, kind: ek, sel: sl})
			continue
		}
		if e.row.State {
			return nil, status.Errorf(codes.InvalidArgument, "%s is state: it cannot be written", pathString(l.path))
		}
		if e.conv.from == nil {
			return nil, status.Errorf(codes.Unimplemented, "%s is read-only over OpenConfig (its value is part of %s.%s; write that in origin %q)", pathString(l.path), e.kind.Name, e.row.Field, OriginNative)
		}
		id := fmt.Sprint(op, e.kind.Name, keys)
		i, ok := byObject[id]
		if !ok {
			i = len(out)
			byObject[id] = i
			out = append(out, write{op: op, path: l.path, kind: e.kind, sel: sel{kind: e.kind, keys: keys}, body: map[string]json.RawMessage{}})
		}
		if op == opDelete {
			out[i].reset = e.row.Field
			continue
		}
		v, err := e.conv.from(l.raw)
		if err != nil {
			return nil, status.Errorf(codes.InvalidArgument, "%s: %v", pathString(l.path), err)
		}
		out[i].body[e.row.Field] = v
	}
	for i := range out {
		if out[i].op == opReplace {
			out[i].op = opUpdate // a replace of leaves sets them; the object's other fields are not OpenConfig's to reset
		}
	}
	return out, nil
}

// leafEntry is the row a concrete leaf path is, with the key fields of its
// object; nil and no error for a path that ends at a list entry (the
// object itself).
func (t *ocTree) leafEntry(p *gpb.Path) (*ocEntry, map[string]string, error) {
	for _, e := range t.entries {
		if len(e.elems) != len(p.GetElem()) {
			continue
		}
		filters, ok := e.match(p.GetElem())
		if !ok {
			continue
		}
		keys, err := keyFields(e, p, filters)
		if err != nil {
			return nil, nil, err
		}
		return e, keys, nil
	}
	if _, _, err := t.objectOf(p); err == nil {
		return nil, nil, nil
	}
	return nil, nil, unmapped(p)
}

// objectOf is the object a path ending at a list entry names.
func (t *ocTree) objectOf(p *gpb.Path) (*model.Kind, map[string]string, error) {
	elems := p.GetElem()
	if len(elems) == 0 || len(elems[len(elems)-1].GetKey()) == 0 {
		return nil, nil, unmapped(p)
	}
	for _, e := range t.entries {
		if len(e.elems) <= len(elems) {
			continue
		}
		filters, ok := e.match(elems)
		if !ok {
			continue
		}
		// The last element must bind the kind's own keys.
		bound := false
		for _, k := range e.elems[len(elems)-1].keys {
			if f := e.kind.Field(k.field); f != nil && f.Key {
				bound = true
			}
		}
		if !bound {
			continue
		}
		keys, err := keyFields(e, p, filters)
		if err != nil {
			return nil, nil, err
		}
		return e.kind, keys, nil
	}
	return nil, nil, unmapped(p)
}

// keyFields are the kind's key fields a concrete path gives.
func keyFields(e *ocEntry, p *gpb.Path, filters []ocFilter) (map[string]string, error) {
	keys := map[string]string{}
	for _, f := range filters {
		kf := e.kind.Field(f.field)
		if kf == nil || !kf.Key {
			continue
		}
		if f.part != "" {
			return nil, status.Errorf(codes.Unimplemented, "%s cannot be written over OpenConfig; write %s in origin %q", pathString(p), e.kind.Name, OriginNative)
		}
		keys[kf.Name] = f.value
	}
	for _, te := range e.elems[:len(p.GetElem())] {
		for _, k := range te.keys {
			if kf := e.kind.Field(k.field); kf != nil && kf.Key {
				if _, ok := keys[kf.Name]; !ok {
					return nil, status.Errorf(codes.InvalidArgument, "%s: a write names one object: give key %s", pathString(p), k.name)
				}
			}
		}
	}
	parsed, err := parseKeys(e.kind, keys)
	if err != nil {
		return nil, status.Errorf(codes.InvalidArgument, "%s: %v", pathString(p), err)
	}
	return parsed, nil
}

// flatten splits a JSON value at path p into its leaves: objects are
// containers; a list (an array of objects) is not taken, its entries are
// written by their keyed paths.
func flatten(p *gpb.Path, raw json.RawMessage, fn func(*gpb.Path, json.RawMessage)) error {
	var obj map[string]json.RawMessage
	if len(raw) == 0 || raw[0] != '{' || json.Unmarshal(raw, &obj) != nil {
		fn(p, raw)
		return nil
	}
	names := make([]string, 0, len(obj))
	for n := range obj {
		names = append(names, n)
	}
	sort.Strings(names)
	for _, n := range names {
		v := obj[n]
		if _, local, ok := strings.Cut(n, ":"); ok { // RFC 7951 module-qualified member
			n = local
		}
		if len(v) > 0 && v[0] == '[' {
			return status.Errorf(codes.Unimplemented, "%s/%s: a list in a value is not taken; write each entry at its keyed path", pathString(p), n)
		}
		child := &gpb.Path{Origin: p.GetOrigin(), Elem: append(append([]*gpb.PathElem(nil), p.GetElem()...), &gpb.PathElem{Name: n})}
		if err := flatten(child, v, fn); err != nil {
			return err
		}
	}
	return nil
}
