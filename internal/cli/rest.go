package cli

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"reflect"
	"sort"
	"strconv"
	"strings"

	"github.com/swmgr/swmgr/client"
	"github.com/swmgr/swmgr/internal/model"
)

// The CLI reaches swmgr only through the public Go client (the REST API):
// the running configuration through s.api.Objects, the pending one through a
// candidate's Objects. This file turns the client's JSON values into model
// types (int64, []string) so that the rest compares and prints them alike.

func (s *Session) rctx() (context.Context, context.CancelFunc) {
	return context.WithTimeout(s.ctx, s.timeout)
}

// view is where reads of "the configuration as this session sees it" go:
// the candidate when there is one, else the running configuration.
func (s *Session) view() client.Objects {
	if s.cand != nil {
		return s.cand.Objects
	}
	return s.api.Objects
}

// listAll reads every object of a config kind from objs.
func (s *Session) listAll(objs client.Objects, k *model.Kind) ([]model.Object, error) {
	ctx, cancel := s.rctx()
	defer cancel()
	var out []model.Object
	for it, err := range objs.List(ctx, k.Name) {
		if err != nil {
			return nil, fmt.Errorf("read %s: %w", k.Name, err)
		}
		out = append(out, typed(k, it.Object))
	}
	return out, nil
}

// listState reads the state form of every object of k.
func (s *Session) listState(k *model.Kind) ([]model.Object, error) {
	ctx, cancel := s.rctx()
	defer cancel()
	var out []model.Object
	for it, err := range s.api.ListState(ctx, strings.TrimSuffix(k.StateName(), "State")) {
		if err != nil {
			return nil, fmt.Errorf("read %s: %w", k.StateName(), err)
		}
		out = append(out, typed(k, it.Object))
	}
	return out, nil
}

// getOne reads one object by key from objs; found is false on 404.
func (s *Session) getOne(objs client.Objects, k *model.Kind, key model.Object) (model.Object, bool, error) {
	ctx, cancel := s.rctx()
	defer cancel()
	it, err := objs.Get(ctx, k.Name, client.Object(key))
	if client.IsNotFound(err) {
		return nil, false, nil
	}
	if err != nil {
		return nil, false, err
	}
	return typed(k, it.Object), true, nil
}

// typed converts decoded JSON values to model types.
func typed(k *model.Kind, raw map[string]any) model.Object {
	o := make(model.Object, len(raw))
	for name, v := range raw {
		o[name] = typedValue(fieldAny(k, name), v)
	}
	return o
}

func typedValue(f *model.Field, v any) any {
	if f != nil && (f.Type == model.RecordList || f.Type == model.Record) {
		rec := func(raw any) model.Object {
			m, _ := raw.(map[string]any)
			o := make(model.Object, len(m))
			for name, sv := range m {
				var sf *model.Field
				for _, c := range f.Sub {
					if c.Name == name {
						sf = c
					}
				}
				o[name] = typedValue(sf, sv)
			}
			return o
		}
		if f.Type == model.Record {
			return rec(v)
		}
		l, _ := v.([]any)
		out := make([]model.Object, 0, len(l))
		for _, e := range l {
			out = append(out, rec(e))
		}
		return out
	}
	switch x := v.(type) {
	case json.Number:
		if n, err := x.Int64(); err == nil {
			return n
		}
		return x.String()
	case float64:
		return int64(x)
	case []any:
		l := make([]string, 0, len(x))
		for _, e := range x {
			l = append(l, fmt.Sprint(e))
		}
		return l
	case nil:
		if f != nil && f.Type == model.StringList {
			return []string{}
		}
	}
	return v
}

// fieldAny finds a field of the config or the state form.
func fieldAny(k *model.Kind, name string) *model.Field {
	if f := k.Field(name); f != nil {
		return f
	}
	for _, f := range k.StateOnly {
		if f.Name == name {
			return f
		}
	}
	return nil
}

// keyOf is the key fields of o (defaults filled in).
func keyOf(k *model.Kind, o model.Object) model.Object {
	key := model.Object{}
	for _, f := range k.Keys() {
		if v, ok := o[f.Name]; ok {
			key[f.Name] = v
		} else if f.Default != nil {
			key[f.Name] = f.Default
		}
	}
	return key
}

// keyString identifies an object of k for maps and messages.
func keyString(k *model.Kind, o model.Object) string {
	var parts []string
	for _, f := range k.Keys() {
		parts = append(parts, f.Name+"="+display(o[f.Name]))
	}
	return strings.Join(parts, ",")
}

func sameValue(a, b any) bool {
	ra, aok := a.([]model.Object)
	rb, bok := b.([]model.Object)
	if aok || bok {
		return len(ra) == len(rb) && reflect.DeepEqual(ra, rb) || len(ra) == 0 && len(rb) == 0
	}
	if _, ok := a.(model.Object); ok {
		return reflect.DeepEqual(a, b)
	}
	la, aok := a.([]string)
	lb, bok := b.([]string)
	if aok || bok {
		if len(la) != len(lb) {
			return false
		}
		for i := range la {
			if la[i] != lb[i] {
				return false
			}
		}
		return true
	}
	return a == b
}

// display renders a value for tables and commands.
func display(v any) string {
	switch x := v.(type) {
	case nil:
		return ""
	case string:
		return x
	case int64:
		return strconv.FormatInt(x, 10)
	case bool:
		if x {
			return "True"
		}
		return "False"
	case []string:
		return strings.Join(x, ",")
	case []model.Object:
		parts := make([]string, len(x))
		for i, r := range x {
			parts[i] = display(r)
		}
		return strings.Join(parts, ",")
	case model.Object:
		parts := make([]string, 0, len(x))
		for _, n := range sortedKeys(x) {
			parts = append(parts, n+"="+display(x[n]))
		}
		return "{" + strings.Join(parts, " ") + "}"
	}
	return fmt.Sprint(v)
}

// errText is an API error as FlexSwitch's CLI printed a failed call:
// "<status> <Result>".
func errText(err error) string {
	var e *client.Error
	if errors.As(err, &e) {
		return fmt.Sprintf("%d %s", e.Status, e.Message)
	}
	return err.Error()
}

func errStatus(err error) int {
	var e *client.Error
	if errors.As(err, &e) {
		return e.Status
	}
	return 0
}

func errField(err error) string {
	var e *client.Error
	if errors.As(err, &e) {
		return e.Field
	}
	return ""
}

func errMessage(err error) string {
	var e *client.Error
	if errors.As(err, &e) {
		return e.Message
	}
	return err.Error()
}

func errObject(err error) string {
	var e *client.Error
	if errors.As(err, &e) {
		return e.Object
	}
	return ""
}

func sortedKeys[V any](m map[string]V) []string {
	out := make([]string, 0, len(m))
	for k := range m {
		out = append(out, k)
	}
	sort.Strings(out)
	return out
}
