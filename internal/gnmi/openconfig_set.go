package gnmi

// OpenConfig writes: a SetRequest's OpenConfig leaves as writes of the
// objects they map onto (openconfig.go), resolved in the writer.

import (
	"encoding/json"
	"fmt"
	"maps"
	"slices"
	"sort"
	"strings"

	gpb "github.com/openconfig/gnmi/proto/gnmi"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"

	"github.com/swmgr/swmgr/internal/apierr"
	"github.com/swmgr/swmgr/internal/engine"
	"github.com/swmgr/swmgr/internal/model"
)

// ocWrite is an OpenConfig write of one object, or of one member's place
// in the objects' lists (Member rows), resolved in the writer on the
// configuration as the SetRequest's writes before it leave it.
type ocWrite struct {
	keys map[string]string // the object's key fields, canonical
	// ident holds while the object is the one the path names (its
	// address is the path's).
	ident []ocSet
	sets  []ocSet  // what the leaves (and the containers above) write
	rec   *ocSet   // the record the leaves are of: its key sub-field's value
	reset []ocSet  // a leaf's delete: the field (or record sub-field) back to its default
	leave []ocSet  // an entry's delete that ends a membership: the field reset while it holds the value
	drop  bool     // an entry's delete that deletes the object
	dropR bool     // an entry's delete that removes the record
	me    *ocEntry // Member rows: an entry of the mapping
	mem   string   // the member
	msets []memberSet
	clear bool // a replace of the member's container: its lists start empty
}

// ocSet is one value a write gives a field, a part of it or a record's
// sub-field.
type ocSet struct {
	field string // the object's field, or the record list
	sub   string // the record's sub-field
	conv  string // a part conversion of the field's value ("": the whole value)
	value json.RawMessage
}

func (s ocSet) name() string {
	n := s.field
	if s.sub != "" {
		n += "." + s.sub
	}
	if s.conv != "" {
		n += " (" + s.conv + ")"
	}
	return n
}

type memberSet struct {
	e   *ocEntry
	raw json.RawMessage // nil: a delete
	p   *gpb.Path
}

// writes maps an OpenConfig delete, replace or update onto the objects'
// fields: each leaf given (a container's value is split into its leaves)
// must be a row; the leaves of one object make one write.
func (t *ocTree) writes(op writeOp, p *gpb.Path, val *gpb.TypedValue) ([]write, error) {
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
		if op == opReplace && len(in) == 0 {
			// An empty container: for a member's, its place in no list.
			if w, err := t.entryDelete(p); err == nil && w.oc.me != nil {
				return []write{w}, nil
			}
		}
	}
	var out []write
	byObject := map[string]int{}
	join := func(id string, w write) *write {
		if i, ok := byObject[id]; ok {
			return &out[i]
		}
		byObject[id] = len(out)
		out = append(out, w)
		return &out[len(out)-1]
	}
	for _, l := range in {
		e, filters, err := t.leafEntry(l.path)
		if err != nil {
			return nil, err
		}
		if e == nil { // a delete of a list entry or a container
			if op != opDelete {
				return nil, unmapped(l.path)
			}
			w, err := t.entryDelete(l.path)
			if err != nil {
				return nil, err
			}
			out = append(out, w)
			continue
		}
		if e.row.State {
			return nil, status.Errorf(codes.InvalidArgument, "%s is state: it cannot be written", pathString(l.path))
		}
		if e.member() {
			m := memberOfPath(filters)
			if m == "" {
				return nil, status.Errorf(codes.InvalidArgument, "%s: a write names one %s: give its key", pathString(l.path), e.elems[e.memberAt()].name)
			}
			w := join(fmt.Sprint(op, "\x00member\x00", e.kind.Name, "\x00", m), write{op: op, path: l.path, kind: e.kind, sel: sel{kind: e.kind}, oc: &ocWrite{me: e, mem: m}})
			ms := memberSet{e: e, p: l.path}
			if op != opDelete {
				ms.raw = l.raw
			}
			w.oc.msets = append(w.oc.msets, ms)
			if op == opReplace && len(p.GetElem()) < len(e.elems) {
				w.oc.clear = true // a replace of the container: what it does not give goes
			}
			continue
		}
		ow, err := objectWrite(e, l.path, filters)
		if err != nil {
			return nil, err
		}
		id := fmt.Sprint(op, "\x00", e.kind.Name, "\x00", ow.keys, "\x00", ow.rec)
		if op == opDelete {
			id = fmt.Sprint(id, len(out)) // each delete alone
		}
		w := join(id, write{op: op, path: l.path, kind: e.kind, sel: sel{kind: e.kind, keys: ow.keys}, oc: ow})
		if w.oc != ow {
			w.oc.sets = append(w.oc.sets, ow.sets...)
			w.oc.ident = append(w.oc.ident, ow.ident...)
		}
		if err := leafWrite(op, e, l.path, l.raw, w.oc); err != nil {
			return nil, err
		}
	}
	for i := range out {
		if out[i].op == opReplace && out[i].oc.me == nil {
			out[i].op = opUpdate // a replace of leaves sets them; the object's other fields are not OpenConfig's to reset
		}
	}
	return out, nil
}

func memberOfPath(filters []ocFilter) string {
	for _, f := range filters {
		if f.key.member {
			return f.value
		}
	}
	return ""
}

// leafWrite adds what one leaf's delete or value writes.
func leafWrite(op writeOp, e *ocEntry, p *gpb.Path, raw json.RawMessage, ow *ocWrite) error {
	field := e.fields[0]
	list, sub, inRecord := strings.Cut(field, ".")
	if op == opDelete {
		switch {
		case e.conv.part != nil:
			return status.Errorf(codes.InvalidArgument, "%s is part of %s.%s, which the list entry needs: delete the entry", pathString(p), e.kind.Name, field)
		case inRecord && ow.rec != nil && sub == ow.rec.sub:
			ow.dropR = true // the record's key: the record goes
		case len(e.fields) > 1 || isKey(e.kind, field):
			return status.Errorf(codes.InvalidArgument, "%s is the key of its list entry: delete the entry", pathString(p))
		case inRecord:
			ow.reset = append(ow.reset, ocSet{field: list, sub: sub})
		default:
			ow.reset = append(ow.reset, ocSet{field: field})
		}
		return nil
	}
	if e.conv.part != nil {
		ow.sets = append(ow.sets, ocSet{field: field, conv: e.row.Conv, value: raw})
		return nil
	}
	if e.conv.from == nil {
		return status.Errorf(codes.Unimplemented, "%s is read-only over OpenConfig (its value is part of %s.%s; write that in origin %q)", pathString(p), e.kind.Name, e.row.Field, OriginNative)
	}
	v, err := e.conv.from(raw)
	if err != nil {
		return status.Errorf(codes.InvalidArgument, "%s: %v", pathString(p), err)
	}
	switch {
	case v == nil: // checked; writes nothing
	case len(e.fields) > 1:
		var vs []json.RawMessage
		if json.Unmarshal(v, &vs) != nil || len(vs) != len(e.fields) {
			return status.Errorf(codes.InvalidArgument, "%s: %s does not give %s", pathString(p), raw, e.row.Field)
		}
		for i, f := range e.fields {
			ow.sets = append(ow.sets, ocSet{field: f, value: vs[i]})
		}
	case inRecord:
		ow.sets = append(ow.sets, ocSet{field: list, sub: sub, value: v})
	default:
		ow.sets = append(ow.sets, ocSet{field: field, value: v})
	}
	return nil
}

func isKey(k *model.Kind, name string) bool {
	f := k.Field(name)
	return f != nil && f.Key
}

// fieldValue is a key's text as the JSON of the field it is bound to.
func fieldValue(f *model.Field, text string) json.RawMessage {
	if f != nil && (f.Type == model.Int || f.Type == model.Bool) {
		if json.Valid([]byte(text)) {
			return json.RawMessage(text)
		}
	}
	return jstr(text)
}

// objectWrite is what a concrete path's keys say of the object it writes:
// its key fields, and the other fields its keys bind (see
// model.OpenConfigLeaf).
func objectWrite(e *ocEntry, p *gpb.Path, filters []ocFilter) (*ocWrite, error) {
	ow := &ocWrite{}
	keys := map[string]string{}
	for _, f := range filters {
		k := f.key
		switch {
		case k.member:
		case k.record != "":
			ow.rec = &ocSet{field: k.record, sub: k.fields[0], value: fieldValue(subField(e.kind.Field(k.record), k.fields[0]), f.value)}
		case isKey(e.kind, k.fields[0]):
			if k.conv == "" {
				keys[k.fields[0]] = f.value
				continue
			}
			c := ocConvs[k.conv]
			if c.from == nil {
				return nil, status.Errorf(codes.Unimplemented, "%s cannot be written over OpenConfig; write %s in origin %q", pathString(p), e.kind.Name, OriginNative)
			}
			v, err := c.from(jstr(f.value))
			if err != nil {
				return nil, status.Errorf(codes.InvalidArgument, "%s: %v", pathString(p), err)
			}
			vs := []json.RawMessage{v}
			if len(k.fields) > 1 && (json.Unmarshal(v, &vs) != nil || len(vs) != len(k.fields)) {
				return nil, status.Errorf(codes.InvalidArgument, "%s: %q does not give %s", pathString(p), f.value, strings.Join(k.fields, ", "))
			}
			for i, name := range k.fields {
				keys[name] = rawText(vs[i])
			}
		default: // another field: the entry's own (the object holds it), or a container's (a membership)
			s := ocSet{field: k.fields[0], conv: k.conv, value: fieldValue(e.kind.Field(k.fields[0]), f.value)}
			if k.conv != "" {
				if ocConvs[k.conv].part == nil {
					return nil, status.Errorf(codes.Unimplemented, "%s cannot be written over OpenConfig; write %s in origin %q", pathString(p), e.kind.Name, OriginNative)
				}
				s.value = jstr(f.value)
			}
			if f.elem == e.own {
				ow.ident = append(ow.ident, s)
			} else {
				ow.sets = append(ow.sets, s)
			}
		}
	}
	for _, te := range e.elems[:len(p.GetElem())] {
		for _, k := range te.keys {
			if !k.bound() || k.member || k.record != "" || !isKey(e.kind, k.fields[0]) {
				continue
			}
			if _, ok := keys[k.fields[0]]; !ok {
				return nil, status.Errorf(codes.InvalidArgument, "%s: a write names one object: give key %s", pathString(p), k.name)
			}
		}
	}
	parsed, err := parseKeys(e.kind, keys)
	if err != nil {
		return nil, status.Errorf(codes.InvalidArgument, "%s: %v", pathString(p), err)
	}
	ow.keys = parsed
	return ow, nil
}

// leafEntry is the row a concrete leaf path is, with its filters; nil and
// no error for a path above the leaves (a list entry, a container) that a
// delete may name.
func (t *ocTree) leafEntry(p *gpb.Path) (*ocEntry, []ocFilter, error) {
	var above bool
	var refused *ocEntry // a leaf whose key its conversion refuses: another kind's entry may take it
	var refusedFilters []ocFilter
	for _, e := range t.entries {
		filters, ok := e.match(p.GetElem())
		if !ok {
			continue
		}
		if len(e.elems) == len(p.GetElem()) {
			if !keysConvert(filters) {
				if refused == nil {
					refused, refusedFilters = e, filters
				}
				continue
			}
			return e, filters, nil
		}
		above = true
	}
	if refused != nil {
		return refused, refusedFilters, nil // its write tells the key's error
	}
	if above {
		return nil, nil, nil
	}
	return nil, nil, unmapped(p)
}

// entryDelete is the delete of a list entry (the object, the record, the
// membership it is), of a member's container (its place in the lists), or
// of a container that is its object (its config/enabled row's conversion
// is "exists").
func (t *ocTree) entryDelete(p *gpb.Path) (write, error) {
	elems := p.GetElem()
	if len(elems) == 0 {
		return write{}, unmapped(p)
	}
	last := len(elems) - 1
	var refused *ocEntry // an entry whose key conversion refuses the path's key: another kind's may take it
	var refusedFilters []ocFilter
	for _, e := range t.entries {
		if len(e.elems) <= len(elems) {
			continue
		}
		filters, ok := e.match(elems)
		if !ok {
			continue
		}
		if e.member() {
			m := memberOfPath(filters)
			if last <= e.memberAt() || m == "" {
				continue
			}
			return write{op: opDelete, path: p, kind: e.kind, sel: sel{kind: e.kind}, oc: &ocWrite{me: e, mem: m, clear: true}}, nil
		}
		if e.row.Conv == "exists" && !e.row.State && len(elems[last].GetKey()) == 0 && len(e.elems) == len(elems)+2 {
			// The container that is its object (an interface's unnumbered:
			// its config/enabled says the object is there): the object goes.
			ow, err := objectWrite(e, p, filters)
			if err != nil {
				return write{}, err
			}
			ow.drop = true
			return write{op: opDelete, path: p, kind: e.kind, sel: sel{kind: e.kind, keys: ow.keys}, oc: ow}, nil
		}
		var own []*ocKey
		for _, k := range e.elems[last].keys {
			if k.bound() {
				own = append(own, k)
			}
		}
		if len(own) == 0 || len(elems[last].GetKey()) == 0 {
			continue
		}
		if !keysConvert(filters) {
			if refused == nil {
				refused, refusedFilters = e, filters
			}
			continue
		}
		ow, err := objectWrite(e, p, filters)
		if err != nil {
			return write{}, err
		}
		switch k := own[0]; {
		case k.record != "":
			ow.dropR = true
		case isKey(e.kind, k.fields[0]) && len(ow.sets) > 0:
			ow.leave, ow.sets = ow.sets, nil // the object leaves the container
		default:
			ow.drop = true
		}
		return write{op: opDelete, path: p, kind: e.kind, sel: sel{kind: e.kind, keys: ow.keys}, oc: ow}, nil
	}
	if refused != nil { // no kind takes the key: its conversion says why
		_, err := objectWrite(refused, p, refusedFilters)
		return write{}, err
	}
	return write{}, unmapped(p)
}

// apply makes the write's edits on the configuration st holds.
func (ow *ocWrite) apply(st *reqState, k *model.Kind, op writeOp, where *gpb.Path) error {
	if ow.me != nil {
		return ow.applyMember(st, k, where)
	}
	keys, err := keyObject(k, ow.keys)
	if err != nil {
		return err
	}
	key, err := engine.KeyOf(k, keys)
	if err != nil {
		return err
	}
	cur := st.get(k, key)
	body := map[string]json.RawMessage{}
	if cur != nil {
		if err := json.Unmarshal(k.AppendJSON(nil, cur, false), &body); err != nil {
			return err
		}
	}
	holds := func(s ocSet) bool {
		v := body[s.field]
		if s.conv != "" {
			var ok bool
			if v, ok = ocConvs[s.conv].to(v, false); !ok {
				return false
			}
		}
		return rawText(v) == rawText(s.value)
	}
	for _, s := range ow.ident {
		if cur != nil && !holds(s) {
			if op == opDelete {
				return nil // not there: nothing to delete
			}
			return apierr.BadRequest(apierr.CodeInvalidValue, k.Name, s.field, "%s: %s %s has %s %s, not %s; it holds one: delete that entry first (in the same SetRequest if you like)",
				pathString(where), k.Name, k.DescribeKey(key), s.field, rawText(body[s.field]), rawText(s.value))
		}
	}
	var recs []map[string]json.RawMessage
	rec := -1
	if ow.rec != nil {
		_ = json.Unmarshal(body[ow.rec.field], &recs)
		for i, r := range recs {
			if rawText(r[ow.rec.sub]) == rawText(ow.rec.value) {
				rec = i
			}
		}
	}
	changed := map[string]bool{}
	if op == opDelete {
		if cur == nil {
			return nil // deleting what is not there is no error
		}
		switch {
		case ow.drop:
			st.delete(k, key, keys)
			return nil
		case ow.dropR:
			if rec < 0 {
				return nil
			}
			recs = append(recs[:rec], recs[rec+1:]...)
			changed[ow.rec.field] = true
		}
		for _, s := range ow.leave {
			if holds(s) {
				body[s.field] = defaultJSON(k, s.field)
				changed[s.field] = true
			}
		}
		for _, s := range ow.reset {
			switch {
			case s.sub == "":
				body[s.field] = defaultJSON(k, s.field)
				changed[s.field] = true
			case rec >= 0:
				delete(recs[rec], s.sub)
				changed[s.field] = true
			}
		}
	} else {
		set := func(s ocSet) error {
			id := k.Name + "\x00" + key + "\x00" + s.name()
			if s.sub != "" {
				id += "\x00" + rawText(ow.rec.value)
			}
			if prev, ok := st.given[id]; ok && prev != rawText(s.value) {
				return apierr.BadRequest(apierr.CodeInvalidValue, k.Name, s.field, "%s: %s is given twice, as %s and as %s", pathString(where), s.name(), prev, rawText(s.value))
			}
			st.given[id] = rawText(s.value)
			switch {
			case s.sub != "":
				recs[rec][s.sub] = s.value
			case s.conv != "":
				v, err := ocConvs[s.conv].part(body[s.field], s.value)
				if err != nil {
					return apierr.BadRequest(apierr.CodeInvalidValue, k.Name, s.field, "%s: %v", pathString(where), err)
				}
				body[s.field] = v
			default:
				body[s.field] = s.value
			}
			changed[s.field] = true
			return nil
		}
		if ow.rec != nil {
			if rec < 0 {
				recs = append(recs, map[string]json.RawMessage{ow.rec.sub: ow.rec.value})
				rec = len(recs) - 1
			}
			if err := set(*ow.rec); err != nil {
				return err
			}
		}
		for _, s := range append(append([]ocSet(nil), ow.ident...), ow.sets...) {
			if err := set(s); err != nil {
				return err
			}
		}
	}
	if ow.rec != nil && changed[ow.rec.field] {
		b, err := json.Marshal(recs)
		if err != nil {
			return err
		}
		body[ow.rec.field] = b
	}
	given := make(map[string]json.RawMessage, len(changed))
	for f := range changed {
		given[f] = body[f]
	}
	fields, err := parseBody(k, given, keys, pathString(where))
	if err != nil {
		return err
	}
	if cur == nil {
		if !k.Creatable() {
			return apierr.NotFound(apierr.CodeNotFound, k.Name, "%s: no %s with %s", pathString(where), k.Name, k.DescribeKey(key))
		}
		for n, v := range keys {
			fields[n] = v
		}
		st.create(k, key, fields)
		return nil
	}
	for _, f := range k.Keys() {
		delete(fields, f.Name)
	}
	if len(fields) > 0 {
		st.update(k, key, keys, fields)
	}
	return nil
}

// defaultJSON is a field's default as JSON (its type's zero value when it
// declares none, as Kind.Defaults gives it); null for a name that is no
// field of k.
func defaultJSON(k *model.Kind, name string) json.RawMessage {
	d, ok := k.Defaults()[name]
	if !ok {
		return json.RawMessage("null")
	}
	b, err := json.Marshal(d)
	if err != nil {
		return json.RawMessage("null")
	}
	return b
}

// applyMember moves the member into and out of the objects' lists, as its
// leaves ask; they must then read as written.
func (ow *ocWrite) applyMember(st *reqState, k *model.Kind, where *gpb.Path) error {
	e := ow.me
	lists := e.row.Member
	type obj struct {
		key string
		o   model.Object
	}
	byValue := map[string]obj{}
	cur := make([][]string, len(lists))
	err := st.each(k, func(key string, o model.Object) bool {
		v := textOf(o[e.row.Field])
		byValue[v] = obj{key, o}
		for i, l := range lists {
			if slices.Contains(o.List(l), ow.mem) {
				cur[i] = append(cur[i], v)
			}
		}
		return true
	})
	if err != nil {
		return err
	}
	want := make([][]string, len(lists))
	for i := range want {
		if !ow.clear {
			want[i] = cur[i]
		}
	}
	expect := make([]json.RawMessage, len(ow.msets))
	for j, ms := range ow.msets {
		sets, exp, err := ms.e.mconv.from(ms.raw, want)
		if err != nil {
			return apierr.BadRequest(apierr.CodeInvalidValue, k.Name, "", "%s: %v", pathString(ms.p), err)
		}
		for i, s := range sets {
			if s != nil {
				want[i] = s
			}
		}
		expect[j] = exp
	}
	for j, ms := range ow.msets {
		got, ok := ms.e.mconv.to(want)
		if !ok {
			got = nil
		}
		if string(got) != string(expect[j]) {
			show := func(b json.RawMessage) string {
				if b == nil {
					return "nothing"
				}
				return string(b)
			}
			return apierr.BadRequest(apierr.CodeInvalidValue, k.Name, "", "%s: with the leaves written with it, it would read %s, not %s: %s", pathString(ms.p), show(got), show(expect[j]), ms.e.mconv.hint)
		}
	}
	for i := range want {
		for _, v := range want[i] {
			if _, ok := byValue[v]; !ok {
				return apierr.BadRequest(apierr.CodeInvalidValue, k.Name, e.row.Field, "%s: there is no %s with %s %s (create it first, in the same SetRequest if you like)", pathString(where), k.Name, e.row.Field, v)
			}
		}
	}
	values := make([]string, 0, len(byValue))
	for v := range byValue {
		values = append(values, v)
	}
	sort.Strings(values)
	for _, v := range values {
		ob := byValue[v]
		body := map[string]json.RawMessage{}
		for i, l := range lists {
			has, should := slices.Contains(ob.o.List(l), ow.mem), slices.Contains(want[i], v)
			if has == should {
				continue
			}
			next := slices.DeleteFunc(append([]string{}, ob.o.List(l)...), func(m string) bool { return m == ow.mem })
			if should {
				next = append(next, ow.mem)
			}
			b, err := json.Marshal(next)
			if err != nil {
				return err
			}
			body[l] = b
		}
		if len(body) == 0 {
			continue
		}
		keys := engine.KeyFields(k, ob.o)
		fields, err := parseBody(k, body, keys, pathString(where))
		if err != nil {
			return err
		}
		st.update(k, ob.key, keys, fields)
	}
	return nil
}

// flatten splits a JSON value at path p into its leaves: objects are
// containers; a list (an array of objects) is not taken, its entries are
// written by their keyed paths; a leaf-list (an array of values) is a
// leaf's value. The value is read as the REST API reads a body
// (model.DecodeValue, and DecodeBody for each container): malformed JSON,
// or a member given twice in a container (with or without its module), is
// refused.
func flatten(p *gpb.Path, raw json.RawMessage, fn func(*gpb.Path, json.RawMessage)) error {
	raw, err := model.DecodeValue(raw)
	if err != nil {
		return atPath(pathString(p), err)
	}
	if raw[0] != '{' { // DecodeValue's value starts at its first byte
		fn(p, raw)
		return nil
	}
	obj, err := model.DecodeBody(raw)
	if err != nil {
		return atPath(pathString(p), err)
	}
	local := make(model.Body, len(obj))
	spelled := make(map[string]string, len(obj)) // local name -> as given
	for _, n := range slices.Sorted(maps.Keys(obj)) {
		name := n
		if _, l, ok := strings.Cut(n, ":"); ok { // RFC 7951 module-qualified member
			name = l
		}
		if prev, dup := spelled[name]; dup {
			return apierr.BadRequest(apierr.CodeMalformedJSON, "", name, "%s: member %q is given twice, as %q and %q", pathString(p), name, prev, n)
		}
		spelled[name], local[name] = n, obj[n]
	}
	for _, n := range slices.Sorted(maps.Keys(local)) {
		v := local[n]
		if isList(v) {
			return status.Errorf(codes.Unimplemented, "%s/%s: a list in a value is not taken; write each entry at its keyed path", pathString(p), n)
		}
		child := &gpb.Path{Origin: p.GetOrigin(), Elem: append(append([]*gpb.PathElem(nil), p.GetElem()...), &gpb.PathElem{Name: n})}
		if err := flatten(child, v, fn); err != nil {
			return err
		}
	}
	return nil
}
