package model

import (
	"strconv"
	"strings"
	"testing"
)

// tunnel is a new interface kind, declared as package model would hold
// it: a tunnel named Tunnel<N>. Nothing else in the package names it.
func tunnel() *Kind {
	return &Kind{
		Name: "TunnelTest", Class: Config,
		Doc: "A tunnel.",
		Interface: &Interface{Prefix: "Tunnel", Noun: "a tunnel", Like: "a tunnel like Tunnel1", Form: "Tunnel<N>",
			Key: func(name string) (string, bool, string) {
				n, err := strconv.Atoi(strings.TrimPrefix(name, "Tunnel"))
				switch {
				case !strings.HasPrefix(name, "Tunnel") || err != nil || strconv.Itoa(n) != strings.TrimPrefix(name, "Tunnel"):
					return "", false, ""
				case n < 1 || n > 128:
					return "", false, "a tunnel is Tunnel<N> with N 1..128"
				}
				return strconv.Itoa(n), true, ""
			}},
		Fields: []*Field{{Name: "Id", Type: Int, Key: true, Range: rng(1, 128)}},
	}
}

// validateOne parses and validates body as an object of kind.
func validateOne(t *testing.T, reg *Registry, kind, body string) error {
	t.Helper()
	k := reg.Lookup(Config, kind)
	b, err := DecodeBody([]byte(body))
	if err != nil {
		t.Fatal(err)
	}
	given, err := k.Parse(b)
	if err != nil {
		return err
	}
	o := k.Defaults()
	for n, v := range given {
		o[n] = v
	}
	return k.Validate(o)
}

// TestNewInterfaceKindIsOneDeclaration declares an interface kind in a test
// registry: every IntfRef field accepts its names and refers to its
// objects, the format's docs and messages list it, and a LogicalIntf may no
// longer take its names, with no other edit.
func TestNewInterfaceKindIsOneDeclaration(t *testing.T) {
	reg, err := NewRegistry(append(Builtin().Kinds(), tunnel())...)
	if err != nil {
		t.Fatal(err)
	}
	for _, tt := range []struct{ kind, body, err string }{
		{"IPv4Intf", `{"IntfRef":"Tunnel7","IpAddr":"10.1.1.1/24"}`, ""},
		{"IPv4Route", `{"DestinationNw":"10.9.0.0","NetworkMask":"255.255.0.0","NextHop":[{"NextHopIp":"10.1.1.2","NextHopIntRef":"Tunnel7"}]}`, ""},
		{"IPv4Intf", `{"IntfRef":"Tunnel0","IpAddr":"10.1.1.1/24"}`, `"Tunnel0" is not an interface: a tunnel is Tunnel<N> with N 1..128`},
		{"IPv4Intf", `{"IntfRef":"tunnel7","IpAddr":"10.1.1.1/24"}`, `"tunnel7" is not an interface: a port like fpPort1 or fpPort1s2, a port channel like PortChannel1, a VLAN interface like vlan10, a tunnel like Tunnel1, or a LogicalIntf like Loopback1`},
		{"LogicalIntf", `{"Name":"Tunnel9"}`, `"Tunnel9" is the name of a port, a port channel, a VLAN interface, a tunnel or the kernel's loopback`},
		{"LogicalIntf", `{"Name":"Loopback1"}`, ""},
		// A tunnel switches no frames: a VLAN does not take it as a member.
		{"Vlan", `{"VlanId":10,"IntfList":["Tunnel7"]}`, `"Tunnel7" is not`},
	} {
		err := validateOne(t, reg, tt.kind, tt.body)
		if (err == nil) != (tt.err == "") || err != nil && !strings.Contains(err.Error(), tt.err) {
			t.Errorf("%s %s: %v; want %q", tt.kind, tt.body, err, tt.err)
		}
	}
	f := reg.Lookup(Config, "IPv4Intf").Field("IntfRef")
	for name, want := range map[string][2]string{"Tunnel7": {"TunnelTest", "7"}, "PortChannel7": {"LaPortChannel", "PortChannel7"}, "fpPort2": {"Port", "fpPort2"}, "vlan10": {"Vlan", "10"}, "Loopback1": {"LogicalIntf", "Loopback1"}} {
		if kind, key := f.RefTarget(name); kind != want[0] || key != want[1] {
			t.Errorf("IntfRef %s names %s %q; want %s %q", name, kind, key, want[0], want[1])
		}
	}
	if k, key, ok := reg.InterfaceOf("Tunnel7"); !ok || k.Name != "TunnelTest" || key != "7" {
		t.Errorf("InterfaceOf(Tunnel7) = %v %q %v", k, key, ok)
	}
	const form = "fpPort<N>, fpPort<N>s<M>, PortChannel<N>, vlan<VlanId>, Tunnel<N> or a LogicalIntf name"
	if f.Format.Doc != form || !strings.Contains(reg.Markdown(), form) {
		t.Errorf("the format's Doc is %q; want %q in docs/objects.md", f.Format.Doc, form)
	}
	// The builtin registry is unchanged: its IntfRef does not take the name.
	if err := validateOne(t, Builtin(), "IPv4Intf", `{"IntfRef":"Tunnel7","IpAddr":"10.1.1.1/24"}`); err != nil {
		t.Errorf("without the declaration Tunnel7 is a LogicalIntf's name and accepted: %v", err)
	}
}

// The builtin interfaces' names and messages, as the REST answers give them.
func TestIntfRefNames(t *testing.T) {
	reg := Builtin()
	const anyIntf = "an interface: a port like fpPort1 or fpPort1s2, a port channel like PortChannel1, a VLAN interface like vlan10, or a LogicalIntf like Loopback1"
	for _, tt := range []struct{ name, err string }{
		{"fpPort1", ""}, {"fpPort12s4", ""}, {"vlan10", ""}, {"vlan4094", ""}, {"Loopback1", ""}, {"lo0", ""},
		{"vlan4095", "an interface: a VLAN interface is vlan<VlanId> with VlanId 1..4094"},
		{"vlan0", anyIntf}, {"VLAN10", anyIntf}, {"fpport1", anyIntf}, {"fpPort0", anyIntf}, {"lo", anyIntf}, {"LO", anyIntf}, {"1abc", anyIntf},
	} {
		err := validateOne(t, reg, "IPv4Intf", `{"IntfRef":"`+tt.name+`","IpAddr":"10.1.1.1/24"}`)
		if (err == nil) != (tt.err == "") || err != nil && !strings.HasSuffix(err.Error(), tt.err) {
			t.Errorf("IntfRef %q: %v; want %q", tt.name, err, tt.err)
		}
	}
	for name, want := range map[string]string{"fpPort1": "a port, a port channel, a VLAN interface or the kernel's loopback", "vlanx": "a port, a port channel, a VLAN interface", "PortChannel3": "a port, a port channel", "lo": "kernel's loopback", "Lo": "kernel's loopback", "Loopback1": ""} {
		err := validateOne(t, reg, "LogicalIntf", `{"Name":"`+name+`"}`)
		if (err == nil) != (want == "") || err != nil && !strings.Contains(err.Error(), want) {
			t.Errorf("LogicalIntf %q: %v; want %q", name, err, want)
		}
	}
}

// A format is declared with everything said about it, or not at all.
func TestIncompleteFormatCannotBeDeclared(t *testing.T) {
	kind := func(f *Format) *Kind {
		return &Kind{Name: "FormatTest", Class: Config, Fields: []*Field{{Name: "Name", Type: String, Key: true, Format: f}}}
	}
	whole := *FormatObjName
	if _, err := NewRegistry(kind(&whole)); err != nil {
		t.Fatalf("a complete format: %v", err)
	}
	noDoc, noSample, badSample := whole, whole, whole
	noDoc.Doc, noSample.Sample, badSample.Sample = "", "", "-x"
	for name, f := range map[string]*Format{"lacks Doc": &noDoc, "lacks Sample": &noSample, "refuses its own Sample": &badSample} {
		if _, err := NewRegistry(kind(f)); err == nil || !strings.Contains(err.Error(), name) {
			t.Errorf("%s: %v", name, err)
		}
	}
	// The interface format of a registry without interface kinds has no Doc.
	if _, err := NewRegistry(kind(FormatIntfRef)); err == nil || !strings.Contains(err.Error(), "lacks Doc, Check") {
		t.Errorf("an interface reference without interface kinds: %v", err)
	}
}
