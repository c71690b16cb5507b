package model

import (
	"net/url"
	"slices"
	"strings"
	"testing"
)

// TestPortListSpellings: every port-list field reads comma-joined and
// ranged elements (a body, a query string, a patch's elements) as the one
// name per element it stores; what does not expand cleanly is refused
// naming the part that is wrong.
func TestPortListSpellings(t *testing.T) {
	reg := Builtin()
	var lists []*Field
	var owners []*Kind
	for _, k := range reg.Kinds() {
		for _, f := range k.Fields {
			if f.PortList() {
				lists, owners = append(lists, f), append(owners, k)
			}
		}
	}
	if len(lists) < 3 { // Vlan.IntfList, Vlan.UntagIntfList, Span.SrcIntfRefList
		t.Fatalf("port-list fields: %d", len(lists))
	}
	good := []struct {
		in   string
		want []string
	}{
		{`["fpPort1,fpPort2s1"]`, []string{"fpPort1", "fpPort2s1"}},
		{`["fpPort1-4"]`, []string{"fpPort1", "fpPort2", "fpPort3", "fpPort4"}},
		{`["fpPort1-fpPort3"]`, []string{"fpPort1", "fpPort2", "fpPort3"}},
		{`["fpPort2s1-3", "fpPort7"]`, []string{"fpPort2s1", "fpPort2s2", "fpPort2s3", "fpPort7"}},
		{`["fpPort9", "fpPort1, fpPort3-4"]`, []string{"fpPort9", "fpPort1", "fpPort3", "fpPort4"}},
		{`["fpPort5-5"]`, []string{"fpPort5"}},
	}
	bad := []struct{ in, says string }{
		{`["fpPort1,eth0"]`, `"eth0", which is not a port name`},
		{`["fpPort1,"]`, "an empty name between commas"},
		{`["fpPort4-1"]`, "runs backwards; write fpPort1-4"},
		{`["fpPort2s4-1"]`, "runs backwards; write fpPort2s1-4"},
		{`["fpPort1-x"]`, `whose end "x" is not a number`},
		{`["fpPort1--3"]`, `whose end "-3" is not a number`},
		{`["fpPort1-2s1"]`, `whose end "2s1" is not a number`},
		{`["fpPort2s1-12"]`, `whose end "12" is not a number`},
		{`["fpPort1-9999"]`, "more than a switch has"},
		{`["eth0-3"]`, `whose start "eth0" is not a port name`},
		{`["fpPort1-3,fpPort2"]`, `"fpPort2" is listed twice`},
	}
	for i, f := range lists {
		k := owners[i]
		for _, tc := range good {
			o, err := k.Parse(Body{f.Name: []byte(tc.in)})
			if err != nil {
				t.Fatalf("%s.%s %s: %v", k.Name, f.Name, tc.in, err)
			}
			v, err := f.validate(k.Name, o[f.Name])
			if err != nil || !slices.Equal(v.([]string), tc.want) {
				t.Errorf("%s.%s %s = %v, %v; want %v", k.Name, f.Name, tc.in, v, err, tc.want)
			}
			el, err := f.DecodeElements(k.Name, []byte(tc.in))
			if err != nil || !slices.Equal(el.([]string), tc.want) {
				t.Errorf("%s.%s patch elements %s = %v, %v; want %v", k.Name, f.Name, tc.in, el, err, tc.want)
			}
		}
		q, err := k.ParseQuery(url.Values{f.Name: {"fpPort1,fpPort3-4"}})
		if want := []string{"fpPort1", "fpPort3", "fpPort4"}; err != nil || !slices.Equal(q.List(f.Name), want) {
			t.Errorf("%s.%s in a query string: %v, %v; want %v", k.Name, f.Name, q[f.Name], err, want)
		}
		for _, tc := range bad {
			o, err := k.Parse(Body{f.Name: []byte(tc.in)})
			if err == nil {
				_, err = f.validate(k.Name, o[f.Name])
			}
			if err == nil || !strings.Contains(err.Error(), tc.says) {
				t.Errorf("%s.%s %s: %v; want an error saying %q", k.Name, f.Name, tc.in, err, tc.says)
			}
		}
	}
	// A single port name keeps its form; other list fields are not split.
	if f := reg.Lookup(Config, "Vlan").Field("IntfList"); !slices.Equal(f.canonicalValue([]string{"fpPort1"}).([]string), []string{"fpPort1"}) {
		t.Error("a plain port name changed")
	}
}

// TestSubFieldCaseTellsTheReason: a sub-field spelt in another case gets
// the right spelling.
func TestSubFieldCaseTellsTheReason(t *testing.T) {
	k := Builtin().Lookup(Config, "BGPGlobal")
	for body, says := range map[string]string{
		`[{"Sources":"STATIC","policy":"p1"}]`: `did you mean "Policy"?`,
		`[{"Sources":"STATIC","POLICY":"p1"}]`: `did you mean "Policy"?`,
		`[{"Sources":"STATIC","policy":""}]`:   `did you mean "Policy"?`,
		`[{"sources":"STATIC"}]`:               `did you mean "Sources"?`,
		`[{"Sources":"STATIC","Polcy":"p"}]`:   `its fields are Sources, Policy`,
	} {
		_, err := k.Parse(Body{"Redistribution": []byte(body)})
		if err == nil || !strings.Contains(err.Error(), says) {
			t.Errorf("%s: %v; want an error saying %q", body, err, says)
		}
	}
}

// BenchmarkPortList compares reading a port list of plain names (the
// common body, which expansion must not slow) with its comma-joined and
// ranged spellings.
func BenchmarkPortList(b *testing.B) {
	k := Builtin().Lookup(Config, "Vlan")
	for name, list := range map[string]string{
		"plain":  `["fpPort1","fpPort2","fpPort3","fpPort4","fpPort5","fpPort6","fpPort7","fpPort8"]`,
		"joined": `["fpPort1,fpPort2,fpPort3,fpPort4,fpPort5,fpPort6,fpPort7,fpPort8"]`,
		"ranged": `["fpPort1-8"]`,
	} {
		b.Run(name, func(b *testing.B) {
			body := Body{"VlanId": []byte("100"), "IntfList": []byte(list)}
			b.ReportAllocs()
			for b.Loop() {
				o, err := k.Parse(body)
				if err != nil {
					b.Fatal(err)
				}
				if len(o.List("IntfList")) != 8 {
					b.Fatal(o)
				}
			}
		})
	}
}
