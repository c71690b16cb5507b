package gnmi

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"sort"
	"strconv"
	"strings"
	"sync"
	"time"

	gpb "github.com/openconfig/gnmi/proto/gnmi"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"

	"github.com/swmgr/swmgr/internal/model"
	"github.com/swmgr/swmgr/internal/store"
)

// The native origin's paths are derived from the model: the REST API's
// class, the kind as REST names it, its key fields as the element's keys,
// then one field:
//
//	/config/<Kind>[<Key>=<value>]...[/<Field>]
//	/state/<Kind>[<Key>=<value>]...[/<Field>]
//
// A missing key, a key "*" and an element "*" match everything.

// OriginNative is the origin of swmgr's own paths.
const OriginNative = "swmgr"

// OriginOpenConfig is the origin of the OpenConfig paths.
const OriginOpenConfig = "openconfig"

// sel is what one native path names: objects of one kind (some keys
// fixed), whole or one field or every field.
type sel struct {
	state bool
	kind  *model.Kind
	keys  map[string]string // key field -> canonical value; absent or "*": any
	field string            // "": the object; "*": each field; else one field
	// implied: the kind came from a wildcard; one it cannot read (a
	// source this swmgr lacks) is left out rather than failing the rest.
	implied bool
}

// wildcard reports whether s names more than one object (or field).
func (s sel) wildcard() bool {
	if s.field == "*" {
		return true
	}
	for _, f := range s.kind.Keys() {
		if v, ok := s.keys[f.Name]; !ok || v == "*" {
			return true
		}
	}
	return false
}

// nativeName is the kind's name in paths: REST's (state/SystemStatus).
func nativeName(k *model.Kind) string {
	if k.Class == model.State {
		return strings.TrimSuffix(k.Name, "State")
	}
	return k.Name
}

func pathString(p *gpb.Path) string {
	var b strings.Builder
	if p.GetOrigin() != "" {
		b.WriteString(p.GetOrigin())
		b.WriteString(":")
	}
	if len(p.GetElem()) == 0 {
		b.WriteString("/")
	}
	for _, e := range p.GetElem() {
		b.WriteString("/")
		b.WriteString(e.GetName())
		for _, k := range sortedKeys(e.GetKey()) {
			fmt.Fprintf(&b, "[%s=%s]", k, e.GetKey()[k])
		}
	}
	return b.String()
}

func sortedKeys(m map[string]string) []string {
	out := make([]string, 0, len(m))
	for k := range m {
		out = append(out, k)
	}
	sort.Strings(out)
	return out
}

// joinPath is prefix + path, with the origin of whichever gives one, and
// the elements' names without a module prefix (unqualified).
func joinPath(prefix, p *gpb.Path) (*gpb.Path, error) {
	if prefix == nil {
		if p == nil {
			return &gpb.Path{}, nil
		}
		//lint:ignore SA1019 a client that sends the deprecated field is told to send elem
		if len(p.GetElement()) > 0 && len(p.GetElem()) == 0 {
			return nil, status.Error(codes.InvalidArgument, "path uses the deprecated element field; send elem")
		}
		return unqualified(p), nil
	}
	origin := prefix.GetOrigin()
	if p.GetOrigin() != "" {
		if origin != "" && origin != p.GetOrigin() && !(openConfigOrigin(origin) && openConfigOrigin(p.GetOrigin())) {
			return nil, status.Errorf(codes.InvalidArgument, "the prefix's origin %q and the path's %q differ", origin, p.GetOrigin())
		}
		origin = p.GetOrigin()
	}
	elems := append(append([]*gpb.PathElem(nil), prefix.GetElem()...), p.GetElem()...)
	return unqualified(&gpb.Path{Origin: origin, Elem: elems, Target: prefix.GetTarget()}), nil
}

// openConfigOrigin reports whether an origin names the OpenConfig models:
// "openconfig", or one module's name (openconfig-interfaces), as
// Telegraf's sample configuration and pygnmi send it. Which leaves are
// served is the path's business, whichever module the origin names.
func openConfigOrigin(origin string) bool {
	return origin == OriginOpenConfig || strings.HasPrefix(origin, OriginOpenConfig+"-")
}

// unqualified is p with its elements' names stripped of a module prefix
// (openconfig-interfaces:interfaces, swmgr:config: RFC 7951's qualified
// names, which gnmic and pygnmi send in paths); p itself when none has
// one.
func unqualified(p *gpb.Path) *gpb.Path {
	var out *gpb.Path
	for i, e := range p.GetElem() {
		module, name, ok := strings.Cut(e.GetName(), ":")
		if !ok || !(openConfigOrigin(module) || module == OriginNative) {
			continue
		}
		if out == nil {
			out = &gpb.Path{Origin: p.GetOrigin(), Target: p.GetTarget(), Elem: append([]*gpb.PathElem(nil), p.GetElem()...)}
		}
		out.Elem[i] = &gpb.PathElem{Name: name, Key: e.GetKey()}
	}
	if out == nil {
		return p
	}
	return out
}

// isNative reports whether a path is in the native origin: origin swmgr,
// or no origin and a first element config or state (no OpenConfig model
// has those at the top). The OpenConfig origin is "openconfig" or a
// module's name (openConfigOrigin).
func isNative(p *gpb.Path) (bool, error) {
	switch o := p.GetOrigin(); {
	case o == OriginNative:
		return true, nil
	case openConfigOrigin(o):
		return false, nil
	case o == "":
		if len(p.GetElem()) == 0 {
			return true, nil
		}
		n := p.GetElem()[0].GetName()
		return n == "config" || n == "state", nil
	}
	return false, status.Errorf(codes.Unimplemented, "origin %q is not served; use %q (swmgr's own paths) or %q (or an OpenConfig module's name, like openconfig-interfaces)", p.GetOrigin(), OriginNative, OriginOpenConfig)
}

// parseNative expands a native path into the selections it names.
func (s *Server) parseNative(p *gpb.Path) ([]sel, error) {
	elems := p.GetElem()
	if len(elems) > 3 {
		return nil, status.Errorf(codes.NotFound, "%s: no such path; native paths are /config|state/<Kind>[<Key>=<value>]/<Field>", pathString(p))
	}
	classes := []bool{false, true}
	if len(elems) > 0 {
		switch n := elems[0].GetName(); n {
		case "config":
			classes = []bool{false}
		case "state":
			classes = []bool{true}
		case "*":
		default:
			return nil, status.Errorf(codes.NotFound, "%s: no such path; native paths start with /config or /state", pathString(p))
		}
		if len(elems[0].GetKey()) > 0 {
			return nil, status.Errorf(codes.InvalidArgument, "%s: %s takes no keys", pathString(p), elems[0].GetName())
		}
	}
	var out []sel
	for _, state := range classes {
		var kinds []*model.Kind
		if len(elems) < 2 || elems[1].GetName() == "*" {
			for _, k := range s.reg.Kinds() {
				if k.Class == model.Config || (state && k.Class == model.State && k.Source != model.SourceConfigLog) {
					kinds = append(kinds, k)
				}
			}
		} else {
			k := s.kindNamed(state, elems[1].GetName())
			if k == nil {
				if len(classes) > 1 {
					continue
				}
				class := "config"
				if state {
					class = "state"
				}
				return nil, status.Errorf(codes.NotFound, "%s: no kind %q under /%s; the kinds are %s", pathString(p), elems[1].GetName(), class, strings.Join(s.kindNames(state), ", "))
			}
			kinds = []*model.Kind{k}
		}
		for _, k := range kinds {
			sl := sel{state: state, kind: k, implied: len(kinds) > 1}
			if len(elems) >= 2 {
				keys, err := parseKeys(k, elems[1].GetKey())
				if err != nil {
					return nil, status.Errorf(codes.InvalidArgument, "%s: %v", pathString(p), err)
				}
				sl.keys = keys
			}
			if len(elems) == 3 {
				name := elems[2].GetName()
				if len(elems[2].GetKey()) > 0 {
					return nil, status.Errorf(codes.InvalidArgument, "%s: field %s takes no keys", pathString(p), name)
				}
				if name != "*" {
					f := k.Field(name)
					if f == nil && state {
						f = stateField(k, name)
					}
					if f == nil {
						if len(kinds) > 1 {
							continue
						}
						return nil, status.Errorf(codes.NotFound, "%s: %s has no field %q; its fields are %s", pathString(p), nativeName(k), name, strings.Join(fieldNames(k, state), ", "))
					}
					name = f.Name
				}
				sl.field = name
			}
			out = append(out, sl)
		}
	}
	if len(out) == 0 {
		return nil, status.Errorf(codes.NotFound, "%s: no such path", pathString(p))
	}
	return out, nil
}

func stateField(k *model.Kind, name string) *model.Field {
	for _, f := range k.StateOnly {
		if f.Name == name {
			return f
		}
	}
	return nil
}

func fieldNames(k *model.Kind, state bool) []string {
	var out []string
	for _, f := range k.Fields {
		out = append(out, f.Name)
	}
	if state {
		for _, f := range k.StateOnly {
			out = append(out, f.Name)
		}
	}
	return out
}

func (s *Server) kindNamed(state bool, name string) *model.Kind {
	if !state {
		return s.reg.Lookup(model.Config, name)
	}
	if k := s.reg.Lookup(model.State, name); k != nil {
		return k
	}
	if k := s.reg.Lookup(model.State, name+"State"); k != nil {
		return k
	}
	return s.reg.Lookup(model.Config, name)
}

func (s *Server) kindNames(state bool) []string {
	var out []string
	for _, k := range s.reg.Kinds() {
		if k.Class == model.Config || (state && k.Class == model.State) {
			out = append(out, nativeName(k))
		}
	}
	sort.Strings(out)
	return out
}

// parseKeys checks an element's keys against the kind's key fields and
// puts each value in its canonical form (as a query string's).
func parseKeys(k *model.Kind, given map[string]string) (map[string]string, error) {
	out := make(map[string]string, len(given))
	for name, v := range given {
		f := k.Field(name)
		if f == nil || !f.Key {
			return nil, fmt.Errorf("%s has no key %q; its keys are %s", nativeName(k), name, keyNames(k))
		}
		if _, dup := out[f.Name]; dup { // a name and an alias of one field
			return nil, fmt.Errorf("%s: key %s is given twice; give it once", nativeName(k), f.Name)
		}
		out[f.Name] = v
	}
	// In the declared order: of two bad values, the same one is reported.
	for _, f := range k.Keys() {
		if v, ok := out[f.Name]; ok && v != "*" {
			val, err := k.ParseText(f, v)
			if err != nil {
				return nil, err
			}
			out[f.Name] = textOf(val)
		}
	}
	return out, nil
}

// textOf is a key value as paths write it.
func textOf(v any) string {
	switch x := v.(type) {
	case string:
		return x
	case int64:
		return strconv.FormatInt(x, 10)
	}
	return fmt.Sprint(v)
}

func keyNames(k *model.Kind) string {
	var names []string
	for _, f := range k.Keys() {
		names = append(names, f.Name)
	}
	if len(names) == 0 {
		return "none"
	}
	return strings.Join(names, ", ")
}

// keyObject is the key fields of a selection that fixes every key (the
// values are canonical already: parseKeys made them).
func keyObject(k *model.Kind, keys map[string]string) (model.Object, error) {
	o := make(model.Object, len(keys))
	for n, v := range keys {
		f := k.Field(n)
		if f == nil {
			return nil, fmt.Errorf("%s has no key %q", nativeName(k), n)
		}
		switch f.Type {
		case model.Int:
			i, err := strconv.ParseInt(v, 10, 64)
			if err != nil {
				return nil, fmt.Errorf("%s: %q is not an integer", n, v)
			}
			o[n] = i
		case model.Bool:
			o[n] = v == "true"
		default:
			o[n] = v
		}
	}
	return o, nil
}

// item is one object read: its key values and its JSON.
type item struct {
	keys map[string]string
	json []byte       // nil until needed when obj is set
	obj  model.Object // the object, when read as one (not the state form's JSON)
}

// objectPath is the native path of one object (and field). The path and
// its elements are one allocation: a Get or a notification builds one per
// leaf.
func objectPath(state bool, k *model.Kind, keys map[string]string, field string) *gpb.Path {
	b := new(struct {
		path  gpb.Path
		elem  [3]gpb.PathElem
		elems [3]*gpb.PathElem
	})
	b.elem[0].Name = "config"
	if state {
		b.elem[0].Name = "state"
	}
	b.elem[1].Name = nativeName(k)
	if len(k.Keys()) > 0 {
		b.elem[1].Key = keys
	}
	n := 2
	if field != "" {
		b.elem[2].Name = field
		n = 3
	}
	for i := range n {
		b.elems[i] = &b.elem[i]
	}
	b.path.Elem = b.elems[:n:n]
	return &b.path
}

// keysOf is the key values of an object as paths write them.
func keysOf(k *model.Kind, o model.Object) map[string]string {
	m := make(map[string]string, len(k.Keys()))
	for _, f := range k.Keys() {
		m[f.Name] = textOf(o[f.Name])
	}
	return m
}

func (sl sel) matches(keys map[string]string) bool {
	for n, v := range sl.keys {
		if v != "*" && keys[n] != v {
			return false
		}
	}
	return true
}

// readAged returns the objects a selection names, in the store's order;
// the state of the selection's kind may be a read made for another
// subscription up to maxAge ago (0: read now): 100
// subscribers polling the same counters every second then cost the
// backend a few reads a second, not 100.
func (s *Server) readAged(ctx context.Context, sl sel, maxAge time.Duration) ([]item, error) {
	if maxAge > 0 && (sl.state || sl.kind.Class == model.State) {
		all, err := s.states.get(ctx, sl.kind, maxAge, func(ctx context.Context) ([]item, error) {
			return s.readNow(ctx, sel{state: sl.state, kind: sl.kind})
		})
		if err != nil {
			return nil, err
		}
		out := make([]item, 0, len(all))
		for _, it := range all {
			if sl.matches(it.keys) {
				out = append(out, it)
			}
		}
		return out, nil
	}
	return s.readNow(ctx, sl)
}

func (s *Server) readNow(ctx context.Context, sl sel) ([]item, error) {
	k := sl.kind
	eng := s.o.Engine
	switch {
	case k.Class == model.State:
		var objs []model.Object
		var err error
		switch {
		case s.host.serves(k):
			objs, err = s.host.read(ctx, k)
		case k.Source == model.SourceService:
			if s.o.State == nil {
				return nil, status.Errorf(codes.Unimplemented, "this swmgr does not provide %s over gNMI", nativeName(k))
			}
			objs, err = s.o.State(ctx, k)
		case k.Source == model.SourceConfigLog:
			return nil, status.Errorf(codes.Unimplemented, "/state/%s is not served over gNMI; read it over REST (/public/v1/state/ConfigLogs)", nativeName(k))
		default:
			objs, err = eng.StateObjects(ctx, k)
		}
		if err != nil {
			return nil, err
		}
		out := make([]item, 0, len(objs))
		for _, o := range objs {
			keys := keysOf(k, o)
			if sl.matches(keys) {
				out = append(out, item{keys: keys, json: k.AppendJSON(nil, o, false)})
			}
		}
		return out, nil
	case sl.state:
		return s.readState(ctx, sl)
	}
	if !sl.wildcardKeys() {
		// One object: its stored JSON as REST's GET sends it, not decoded,
		// read into a buffer kept for the next read; the item keeps a copy
		// of the object alone. Its keys are the selection's (never changed).
		key, _ := k.KeyFromText(sl.keys)
		bp := s.bufs.Get().(*[]byte)
		b, _, err := eng.GetByStoreKey(ctx, k, key, false, (*bp)[:0])
		if cap(b) <= maxKeptBuf {
			*bp = b[:0]
			defer s.bufs.Put(bp)
		}
		if err != nil {
			if codeOf(apiErr(err)) == codes.NotFound {
				return nil, nil
			}
			return nil, err
		}
		obj, ok := memberOf(b, "Object")
		if !ok {
			return nil, fmt.Errorf("gnmi: a stored %s is not a JSON object", k.Name)
		}
		return []item{{keys: sl.keys, json: bytes.Clone(obj)}}, nil
	}
	var out []item
	err := eng.Store().View(func(tx store.Txn) error {
		v := eng.NewView(tx)
		return v.Each(k.Name, func(_ string, o model.Object) bool {
			keys := keysOf(k, o)
			if sl.matches(keys) {
				out = append(out, item{keys: keys, obj: o})
			}
			return true
		})
	})
	return out, err
}

// maxKeptBuf is the largest read buffer kept for the next read: a rare
// large object's is left to the garbage collector.
const maxKeptBuf = 64 << 10

// readsMany reports whether reading sl reads every object of its kind:
// a wildcard, or a state kind (its source lists them all).
func (sl sel) readsMany() bool {
	return sl.kind.Class == model.State || sl.wildcardKeys()
}

func (sl sel) wildcardKeys() bool {
	for _, f := range sl.kind.Keys() {
		if v, ok := sl.keys[f.Name]; !ok || v == "*" {
			return true
		}
	}
	return false
}

// readState reads the state form of a config kind's objects: the
// configuration with the backend's operational fields.
func (s *Server) readState(ctx context.Context, sl sel) ([]item, error) {
	k := sl.kind
	eng := s.o.Engine
	var out []item
	add := func(obj json.RawMessage) error {
		var fields map[string]json.RawMessage
		if err := json.Unmarshal(obj, &fields); err != nil {
			return err
		}
		keys := make(map[string]string, len(k.Keys()))
		for _, f := range k.Keys() {
			keys[f.Name] = rawText(fields[f.Name])
		}
		if sl.matches(keys) {
			out = append(out, item{keys: keys, json: obj})
		}
		return nil
	}
	if !sl.wildcardKeys() {
		key, _ := k.KeyFromText(sl.keys)
		b, _, err := eng.GetByStoreKey(ctx, k, key, true, nil)
		if err != nil {
			if status := codeOf(apiErr(err)); status == codes.NotFound {
				return nil, nil
			}
			return nil, err
		}
		var one struct{ Object json.RawMessage }
		if err := json.Unmarshal(b, &one); err != nil {
			return nil, err
		}
		return out, add(one.Object)
	}
	var marker uint64
	for {
		b, err := eng.List(ctx, k, marker, 1024, true, nil)
		if err != nil {
			return nil, err
		}
		var page struct {
			MoreExist  bool
			NextMarker uint64
			Objects    []struct{ Object json.RawMessage }
		}
		if err := json.Unmarshal(b, &page); err != nil {
			return nil, err
		}
		for _, o := range page.Objects {
			if err := add(o.Object); err != nil {
				return nil, err
			}
		}
		if !page.MoreExist {
			return out, nil
		}
		marker = page.NextMarker
	}
}

// rawText is a JSON scalar as text: a string unquoted, anything else as is.
func rawText(raw json.RawMessage) string {
	var s string
	if json.Unmarshal(raw, &s) == nil {
		return s
	}
	return string(raw)
}

// fieldsOf splits an object's JSON into its fields, in declaration order.
func fieldsOf(k *model.Kind, state bool, obj []byte) ([]string, map[string]json.RawMessage, error) {
	var m map[string]json.RawMessage
	if err := json.Unmarshal(obj, &m); err != nil {
		return nil, nil, err
	}
	names := make([]string, 0, len(m))
	for _, f := range k.Fields {
		if _, ok := m[f.Name]; ok {
			names = append(names, f.Name)
		}
	}
	if state || k.Class == model.State {
		for _, f := range k.StateOnly {
			if _, ok := m[f.Name]; ok {
				names = append(names, f.Name)
			}
		}
	}
	return names, m, nil
}

// leaves are the (path, JSON) pairs a selection's objects give.
type leaf struct {
	path *gpb.Path
	json []byte
}

func (s *Server) nativeLeaves(ctx context.Context, sl sel, maxAge time.Duration) ([]leaf, error) {
	items, err := s.readAged(ctx, sl, maxAge)
	if err != nil {
		if sl.implied && status.Code(grpcError(err)) == codes.Unimplemented {
			return nil, nil
		}
		return nil, err
	}
	out := make([]leaf, 0, len(items))
	for _, it := range items {
		switch sl.field {
		case "":
			if it.json == nil {
				it.json = sl.kind.AppendJSON(nil, it.obj, false)
			}
			out = append(out, leaf{objectPath(sl.state, sl.kind, it.keys, ""), it.json})
		default:
			if it.obj != nil && sl.field != "*" {
				if v, ok := fieldJSON(sl.kind.Field(sl.field), it.obj); ok {
					out = append(out, leaf{objectPath(sl.state, sl.kind, it.keys, sl.field), v})
					continue
				}
			}
			if it.obj == nil && sl.field != "*" {
				if v, ok := memberOf(it.json, sl.field); ok {
					out = append(out, leaf{objectPath(sl.state, sl.kind, it.keys, sl.field), v})
				}
				continue
			}
			if it.json == nil {
				it.json = sl.kind.AppendJSON(nil, it.obj, false)
			}
			names, m, err := fieldsOf(sl.kind, sl.state, it.json)
			if err != nil {
				return nil, err
			}
			for _, n := range names {
				if sl.field == "*" || sl.field == n {
					out = append(out, leaf{objectPath(sl.state, sl.kind, it.keys, n), m[n]})
				}
			}
		}
	}
	return out, nil
}

// fieldJSON is one scalar field's value as JSON, as AppendJSON writes it
// (a secret as ""); ok is false for a field it leaves to AppendJSON
// (records, a value of an unexpected type).
func fieldJSON(f *model.Field, o model.Object) ([]byte, bool) {
	if f == nil || f.Type == model.Record || f.Type == model.RecordList {
		return nil, false
	}
	v, ok := o[f.Name]
	if f.Secret != model.Public {
		return []byte(`""`), true
	}
	if !ok {
		return nil, false
	}
	switch x := v.(type) {
	case string:
		return model.AppendJSONString(nil, x), true
	case int64:
		return strconv.AppendInt(nil, x, 10), true
	case bool:
		return strconv.AppendBool(nil, x), true
	case []string:
		b := []byte{'['}
		for i, e := range x {
			if i > 0 {
				b = append(b, ',')
			}
			b = model.AppendJSONString(b, e)
		}
		return append(b, ']'), true
	}
	return nil, false
}

// stateCache keeps the state form of each kind briefly, for subscriptions
// that poll it (readAged).
type stateCache struct {
	mu sync.Mutex
	m  map[string]*stateEntry // kind name
}

type stateEntry struct {
	mu    sync.Mutex // one read at a time per kind; the others wait for it
	at    time.Time  // of the last read; zero: none yet
	items []item     // what it read (none is kept too)
}

func (c *stateCache) get(ctx context.Context, k *model.Kind, maxAge time.Duration, read func(context.Context) ([]item, error)) ([]item, error) {
	c.mu.Lock()
	if c.m == nil {
		c.m = map[string]*stateEntry{}
	}
	e := c.m[k.Name]
	if e == nil {
		e = &stateEntry{}
		c.m[k.Name] = e
	}
	c.mu.Unlock()
	e.mu.Lock()
	defer e.mu.Unlock()
	if !e.at.IsZero() && time.Since(e.at) <= maxAge {
		return e.items, nil
	}
	items, err := read(ctx)
	if err != nil {
		return nil, err
	}
	e.items, e.at = items, time.Now()
	return items, nil
}
