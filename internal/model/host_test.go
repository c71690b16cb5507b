package model

import "testing"

func TestHostKindsDeclared(t *testing.T) {
	r, err := HostRegistry()
	if err != nil {
		t.Fatal(err)
	}
	for _, k := range HostKinds() {
		if Builtin().Named(k.Name) != nil {
			t.Errorf("%s is also a REST kind", k.Name)
		}
		if r.Named(k.Name) == nil {
			t.Errorf("%s is not in HostRegistry", k.Name)
		}
	}
}
