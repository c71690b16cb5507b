package model

import (
	"maps"
	"reflect"
	"testing"
)

// TestReset: putting an object back to its defaults gives the default of
// every field a client sets, keeps the key, the read-only, create-only and
// discovered fields (with the given object's values, where it has them)
// and always leaves secrets out, so that an update keeps them. The REST
// API's PUT gives a key (or the wanted fields) and the engine's reset the
// running object: on the running object, both updates make one object.
func TestReset(t *testing.T) {
	k := &Kind{Name: "Thing", Class: Config, Fields: []*Field{
		{Name: "Name", Type: String, Key: true},
		{Name: "Mtu", Type: Int, Default: int64(1500)},
		{Name: "Note", Type: String},
		{Name: "Tags", Type: StringList, Default: []string{"a"}},
		{Name: "Index", Type: Int, ReadOnly: true},
		{Name: "Group", Type: String, Default: "users", CreateOnly: true},
		{Name: "Speed", Type: Int, Default: int64(40000), Discovered: true},
		{Name: "Secret", Type: String, Secret: Sealed},
		{Name: "Password", Type: String, Secret: Transient},
	}}
	if _, err := NewRegistry(k); err != nil {
		t.Fatal(err)
	}
	running := Object{"Name": "x", "Mtu": int64(9000), "Note": "n", "Tags": []string{"b"}, "Index": int64(7), "Group": "admin", "Speed": int64(10000), "Secret": "s3cret", "Password": "pw"}
	defaults := Object{"Mtu": int64(1500), "Note": "", "Tags": []string{"a"}}
	with := func(o Object, more Object) Object {
		out := maps.Clone(o)
		maps.Copy(out, more)
		return out
	}
	for _, c := range []struct {
		name  string
		given Object
		want  Object
	}{
		{"nothing", nil, defaults},
		{"a key (a PUT)", Object{"Name": "x"}, with(defaults, Object{"Name": "x"})},
		{"the running object (a reset)", running, with(defaults, Object{"Name": "x", "Index": int64(7), "Group": "admin", "Speed": int64(10000)})},
		{"some kept fields", Object{"Name": "x", "Speed": int64(100), "Secret": "s"}, with(defaults, Object{"Name": "x", "Speed": int64(100)})},
	} {
		if got := k.Reset(c.given); !reflect.DeepEqual(got, c.want) {
			t.Errorf("%s: Reset = %v, want %v", c.name, got, c.want)
		}
	}
	for _, c := range []struct {
		field string
		kept  bool
	}{{"Name", true}, {"Mtu", false}, {"Note", false}, {"Tags", false}, {"Index", true}, {"Group", true}, {"Speed", true}, {"Secret", true}, {"Password", true}} {
		if got := k.Field(c.field).KeptByReset(); got != c.kept {
			t.Errorf("%s: KeptByReset = %v, want %v", c.field, got, c.kept)
		}
	}
	// A default list is the reset's own: changing it changes no default.
	k.Reset(nil)["Tags"].([]string)[0] = "changed"
	if got := k.Reset(nil)["Tags"]; !reflect.DeepEqual(got, []string{"a"}) {
		t.Errorf("a reset's list is shared with the default: %v", got)
	}

	// The two shapes, on every kind of the model: an update by key and the
	// reset of the running object leave the running object alike.
	for _, k := range Builtin().Kinds() {
		if k.Class != Config {
			continue
		}
		now := k.Defaults()
		for _, f := range k.Fields {
			switch v := now[f.Name].(type) {
			case string:
				now[f.Name] = v + "-set"
			case int64:
				now[f.Name] = v + 1
			}
		}
		key := Object{}
		for _, f := range k.Keys() {
			key[f.Name] = now[f.Name]
		}
		byKey, fromRunning := with(now, k.Reset(key)), with(now, k.Reset(now))
		if !reflect.DeepEqual(byKey, fromRunning) {
			t.Errorf("%s: the update by key makes %v, the reset of the running object %v", k.Name, byKey, fromRunning)
		}
		for _, f := range k.Fields {
			if f.KeptByReset() && !reflect.DeepEqual(fromRunning[f.Name], now[f.Name]) {
				t.Errorf("%s: the reset changes %s, which it keeps", k.Name, f.Name)
			}
			if !f.KeptByReset() && !reflect.DeepEqual(fromRunning[f.Name], f.zero()) {
				t.Errorf("%s: the reset leaves %s at %v, not its default", k.Name, f.Name, fromRunning[f.Name])
			}
		}
	}
}
