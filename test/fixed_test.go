// The config kinds that exist without being created: the singletons
// SystemParam and BGPGlobal (GET and PATCH with no key, by key and by id;
// POST and DELETE are 405 with Allow) and the front-panel ports (exactly
// fpPort1..N of --ports; PATCH by key and by id; POST and DELETE 405;
// breakout into sub-ports and back, refused while a sub-port is in use).

package test

import (
	"fmt"
	"sort"
	"strings"
	"testing"
)

// patchOnly is what the paths of a kind that cannot be created or
// deleted allows.
var patchOnly = []string{"GET", "HEAD", "PATCH", "OPTIONS"}

func TestSingletons(t *testing.T) {
	s := startServer(t, "", "--ports", "4")
	cases := []struct {
		kind    string
		initial map[string]any // fields of the object at first start
		update  map[string]any // PATCH with no key
		update2 map[string]any // PATCH by id
		bad     map[string]any // an invalid PATCH (400)
		state   []string       // non-empty state-only fields
	}{
		{
			kind:    "SystemParam",
			initial: map[string]any{"Vrf": "default", "Hostname": "switch", "Timezone": "UTC", "Description": "swmgr switch"},
			update:  map[string]any{"Hostname": "leaf1", "Timezone": "Europe/Paris"},
			update2: map[string]any{"Description": "rack 4 leaf", "MgmtIp": "192.0.2.10"},
			bad:     map[string]any{"Timezone": "Mars/Olympus"},
			state:   []string{"Distro", "Kernel", "UpTime", "SwVersion", "SwitchMac"},
		},
		{
			kind:    "BGPGlobal",
			initial: map[string]any{"Vrf": "default", "ASNum": "", "RouterId": "0.0.0.0", "EBGPMaxPaths": 1},
			update:  map[string]any{"ASNum": "65001", "RouterId": "10.0.0.1"},
			update2: map[string]any{"UseMultiplePaths": true, "EBGPMaxPaths": 8},
			bad:     map[string]any{"EBGPMaxPaths": 65},
			state:   []string{"AS"},
		},
		{
			kind:    "LLDPGlobal",
			initial: map[string]any{"Vrf": "default", "Enable": false, "TranmitInterval": 30, "TxRxMode": "TxRx"},
			update:  map[string]any{"Enable": true},
			update2: map[string]any{"TranmitInterval": 60, "TxRxMode": "TxOnly"},
			bad:     map[string]any{"TranmitInterval": 1},
		},
	}
	for _, c := range cases {
		t.Run(c.kind, func(t *testing.T) {
			path := "/config/" + c.kind
			// GET with no key, with the key in the query and the body, by id.
			g := s.expect(t, 200, "GET", path, "")
			id := g.str("ObjectId")
			if !uuidRE.MatchString(id) || g.hdr.Get("ETag") == "" {
				t.Fatalf("GET %s: %s %v", path, g, g.hdr)
			}
			checkFields(t, "GET with no key", g.object(), c.initial)
			for _, r := range []reply{
				s.expect(t, 200, "GET", path+"?Vrf=default", ""),
				s.expect(t, 200, "GET", path, `{"Vrf":"default"}`),
				s.expect(t, 200, "GET", path+"/"+id, ""),
			} {
				if string(r.raw) != string(g.raw) {
					t.Errorf("reads disagree:\n%s\n%s", r.raw, g.raw)
				}
			}
			// Whatever key a read gives, it finds the one object, as
			// FlexSwitch's did (its CLI reads them with empty keys).
			for _, q := range []string{"?Vrf=blue", "?Vrf="} {
				if r := s.expect(t, 200, "GET", path+q, ""); string(r.raw) != string(g.raw) {
					t.Errorf("GET %s%s:\n%s\nwant\n%s", path, q, r.raw, g.raw)
				}
			}
			// Get all: exactly the one object.
			if all := s.listAll(t, path+"s", 10); len(all) != 1 || all[0]["ObjectId"] != id {
				t.Errorf("%ss: %v", c.kind, all)
			}

			// PATCH with no key, then by id; an invalid one changes nothing.
			u := s.expect(t, 200, "PATCH", path, jsonOf(c.update))
			checkSuccess(t, "PATCH with no key", u, id)
			checkFields(t, "after PATCH", s.expect(t, 200, "GET", path, "").object(), c.update)
			u2 := s.expect(t, 200, "PATCH", path+"/"+id, jsonOf(c.update2))
			checkSuccess(t, "PATCH by id", u2, id)
			before := s.expect(t, 200, "GET", path, "")
			checkFields(t, "after PATCH by id", before.object(), merge(c.update, c.update2))
			s.expect(t, 400, "PATCH", path, jsonOf(c.bad))
			if after := s.expect(t, 200, "GET", path, ""); string(after.raw) != string(before.raw) || after.hdr.Get("ETag") != before.hdr.Get("ETag") {
				t.Errorf("a failed PATCH changed the object:\n%s\n%s", before.raw, after.raw)
			}
			// PATCH with the key in the body also works.
			s.expect(t, 200, "PATCH", path, jsonOf(merge(map[string]any{"Vrf": "default"}, c.update)))

			// POST and DELETE: 405 with Allow, on every path form.
			checkAllow(t, "POST "+path, s.do(t, "POST", path, jsonOf(c.update)), patchOnly...)
			checkAllow(t, "DELETE "+path, s.do(t, "DELETE", path, ""), patchOnly...)
			checkAllow(t, "DELETE "+path+" with a key", s.do(t, "DELETE", path, `{"Vrf":"default"}`), patchOnly...)
			checkAllow(t, "DELETE by id", s.do(t, "DELETE", path+"/"+id, ""), patchOnly...)
			checkAllow(t, "POST by id", s.do(t, "POST", path+"/"+id, "{}"), patchOnly...)
			checkAllow(t, "PATCH on the get-all path", s.do(t, "PATCH", path+"s", "{}"), "GET", "HEAD", "OPTIONS")
			if g := s.expect(t, 200, "GET", path, ""); g.str("ObjectId") != id {
				t.Errorf("the singleton changed identity: %s", g.raw)
			}

			// The state form: config fields and state-only fields, same id.
			st := s.expect(t, 200, "GET", "/state/"+c.kind, "")
			if st.str("ObjectId") != id {
				t.Errorf("state ObjectId %q, config %q", st.str("ObjectId"), id)
			}
			checkFields(t, "state", st.object(), merge(c.update, c.update2))
			for _, f := range c.state {
				if v, _ := st.object()[f].(string); v == "" {
					t.Errorf("state field %s is empty: %s", f, st.raw)
				}
			}
		})
	}
}

func TestSystemParamState(t *testing.T) {
	s := startServer(t, "")
	o := s.expect(t, 200, "GET", "/state/SystemParam", "").object()
	for _, f := range []string{"Distro", "Kernel", "UpTime"} {
		if v, _ := o[f].(string); v == "" {
			t.Errorf("SystemParamState.%s is empty: %v", f, o)
		}
	}
	if !strings.HasPrefix(o["Kernel"].(string), "Linux ") {
		t.Errorf("Kernel %q", o["Kernel"])
	}
	// UpTime is a duration and grows.
	if !strings.HasSuffix(o["UpTime"].(string), "s") {
		t.Errorf("UpTime %q is not a duration", o["UpTime"])
	}
}

// portNames lists the IntfRef of every port, sorted.
func portNames(t *testing.T, s *server) []string {
	t.Helper()
	var names []string
	for _, p := range s.listAll(t, "/config/Ports", 7) {
		names = append(names, p["Object"].(map[string]any)["IntfRef"].(string))
	}
	sort.Strings(names)
	return names
}

func fpPorts(n int, extra ...string) []string {
	var out []string
	for i := 1; i <= n; i++ {
		out = append(out, fmt.Sprintf("fpPort%d", i))
	}
	out = append(out, extra...)
	sort.Strings(out)
	return out
}

func TestPortsComeFromThePortsFlag(t *testing.T) {
	for _, c := range []struct {
		flags []string
		n     int
	}{
		{[]string{"--ports", "4"}, 4},
		{[]string{"--ports", "32"}, 32},
		{nil, 32}, // the default
	} {
		t.Run(fmt.Sprint(c.flags), func(t *testing.T) {
			s := startServer(t, "", c.flags...)
			if got, want := portNames(t, s), fpPorts(c.n); strings.Join(got, " ") != strings.Join(want, " ") {
				t.Fatalf("ports %v, want %v", got, want)
			}
			s.expect(t, 404, "GET", fmt.Sprintf("/config/Port?IntfRef=fpPort%d", c.n+1), "")
			s.expect(t, 200, "GET", fmt.Sprintf("/config/Port?IntfRef=fpPort%d", c.n), "")
			// A port beyond the switch cannot be used either.
			s.expect(t, 400, "POST", "/config/IPv4Intf", fmt.Sprintf(`{"IntfRef":"fpPort%d","IpAddr":"10.0.0.1/24"}`, c.n+1))
		})
	}
}

func TestPortOperations(t *testing.T) {
	s := startServer(t, "", "--ports", "4")
	g := s.expect(t, 200, "GET", "/config/Port?IntfRef=fpPort2", "")
	id := g.str("ObjectId")
	checkFields(t, "fpPort2", g.object(), map[string]any{"IntfRef": "fpPort2", "AdminState": "DOWN", "Speed": 40000, "BreakOutMode": "1x40", "IfIndex": 2, "Mtu": 1500})
	if r := s.expect(t, 200, "GET", "/config/Port", `{"IntfRef":"fpPort2"}`); string(r.raw) != string(g.raw) {
		t.Errorf("by key in the body: %s", r.raw)
	}
	if r := s.expect(t, 200, "GET", "/config/Port/"+id, ""); string(r.raw) != string(g.raw) {
		t.Errorf("by id: %s", r.raw)
	}

	// PATCH by key (the SDK's way) and by id.
	u := s.expect(t, 200, "PATCH", "/config/Port", `{"IntfRef":"fpPort2","AdminState":"UP","Description":"uplink","Mtu":9000}`)
	checkSuccess(t, "PATCH by key", u, id)
	u2 := s.expect(t, 200, "PATCH", "/config/Port/"+id, `{"Speed":10000}`)
	checkSuccess(t, "PATCH by id", u2, id)
	checkFields(t, "after PATCH", s.expect(t, 200, "GET", "/config/Port/"+id, "").object(),
		map[string]any{"AdminState": "UP", "Description": "uplink", "Mtu": 9000, "Speed": 10000, "IfIndex": 2})
	s.expect(t, 400, "PATCH", "/config/Port", `{"IntfRef":"fpPort2","Speed":12345}`)
	s.expect(t, 400, "PATCH", "/config/Port", `{"IntfRef":"fpPort2","IfIndex":9}`)
	s.expect(t, 404, "PATCH", "/config/Port", `{"IntfRef":"fpPort9","AdminState":"UP"}`)

	// No create, no delete.
	checkAllow(t, "POST Port", s.do(t, "POST", "/config/Port", `{"IntfRef":"fpPort5"}`), patchOnly...)
	checkAllow(t, "DELETE Port by key", s.do(t, "DELETE", "/config/Port", `{"IntfRef":"fpPort1"}`), patchOnly...)
	checkAllow(t, "DELETE Port by query", s.do(t, "DELETE", "/config/Port?IntfRef=fpPort1", ""), patchOnly...)
	checkAllow(t, "DELETE Port by id", s.do(t, "DELETE", "/config/Port/"+id, ""), patchOnly...)
	if got := portNames(t, s); len(got) != 4 {
		t.Errorf("ports after the refused writes: %v", got)
	}
}

func TestPortBreakout(t *testing.T) {
	s := startServer(t, "", "--ports", "8")
	subs := []string{"fpPort5s1", "fpPort5s2", "fpPort5s3", "fpPort5s4"}
	s.expect(t, 200, "PATCH", "/config/Port", `{"IntfRef":"fpPort5","BreakOutMode":"4x10"}`)
	if got, want := portNames(t, s), fpPorts(8, subs...); strings.Join(got, " ") != strings.Join(want, " ") {
		t.Fatalf("ports after 4x10: %v, want %v", got, want)
	}
	subIDs := map[string]string{}
	for _, sub := range subs {
		r := s.expect(t, 200, "GET", "/config/Port?IntfRef="+sub, "")
		checkFields(t, sub, r.object(), map[string]any{"IntfRef": sub, "Speed": 10000, "BreakOutMode": "4x10"})
		subIDs[sub] = r.str("ObjectId")
		s.expect(t, 200, "GET", "/config/Port/"+subIDs[sub], "")
		if st := s.expect(t, 200, "GET", "/state/Port?IntfRef="+sub, ""); st.str("ObjectId") != subIDs[sub] {
			t.Errorf("state of %s: %s", sub, st.raw)
		}
	}
	// A sub-port is a port: PATCH works, delete does not.
	s.expect(t, 200, "PATCH", "/config/Port", `{"IntfRef":"fpPort5s2","AdminState":"UP"}`)
	checkAllow(t, "DELETE a sub-port", s.do(t, "DELETE", "/config/Port?IntfRef=fpPort5s2", ""), patchOnly...)
	// The broken-out port itself cannot carry an address.
	s.expect(t, 400, "POST", "/config/IPv4Intf", `{"IntfRef":"fpPort5","IpAddr":"10.5.0.1/24"}`)

	// While an IPv4Intf uses fpPort5s1, going back to 1x40 is a 409 that
	// names it, and changes nothing.
	s.expect(t, 201, "POST", "/config/IPv4Intf", `{"IntfRef":"fpPort5s1","IpAddr":"10.5.1.1/31"}`)
	before := s.expect(t, 200, "GET", "/config/Port?IntfRef=fpPort5", "")
	r := s.expect(t, 409, "PATCH", "/config/Port", `{"IntfRef":"fpPort5","BreakOutMode":"1x40"}`)
	if !strings.Contains(r.str("Result"), "IPv4Intf") || !strings.Contains(r.str("Result"), "fpPort5s1") {
		t.Errorf("the 409 does not name what uses the sub-port: %s", r.raw)
	}
	after := s.expect(t, 200, "GET", "/config/Port?IntfRef=fpPort5", "")
	if string(after.raw) != string(before.raw) || after.hdr.Get("ETag") != before.hdr.Get("ETag") {
		t.Errorf("the refused breakout changed fpPort5:\n%s\n%s", before.raw, after.raw)
	}
	if got := portNames(t, s); len(got) != 12 {
		t.Errorf("the refused breakout changed the ports: %v", got)
	}
	s.expect(t, 200, "GET", "/config/Port/"+subIDs["fpPort5s1"], "")

	// Without the user, 1x40 removes the sub-ports.
	s.expect(t, 200, "DELETE", "/config/IPv4Intf?IntfRef=fpPort5s1", "")
	s.expect(t, 200, "PATCH", "/config/Port", `{"IntfRef":"fpPort5","BreakOutMode":"1x40"}`)
	if got, want := portNames(t, s), fpPorts(8); strings.Join(got, " ") != strings.Join(want, " ") {
		t.Fatalf("ports after 1x40: %v, want %v", got, want)
	}
	for _, sub := range subs {
		s.expect(t, 404, "GET", "/config/Port?IntfRef="+sub, "")
		s.expect(t, 404, "GET", "/config/Port/"+subIDs[sub], "")
		s.expect(t, 404, "GET", "/state/Port?IntfRef="+sub, "")
	}
	checkFields(t, "fpPort5", s.expect(t, 200, "GET", "/config/Port?IntfRef=fpPort5", "").object(), map[string]any{"BreakOutMode": "1x40", "Speed": 40000})

	// Broken out again: the sub-ports come back (with defaults) and survive a restart.
	s.expect(t, 200, "PATCH", "/config/Port", `{"IntfRef":"fpPort5","BreakOutMode":"4x10"}`)
	checkFields(t, "fpPort5s2 again", s.expect(t, 200, "GET", "/config/Port?IntfRef=fpPort5s2", "").object(), map[string]any{"AdminState": "DOWN", "Speed": 10000})
	s.stop(t)
	s2 := startServer(t, s.dir, "--ports", "8")
	if got, want := portNames(t, s2), fpPorts(8, subs...); strings.Join(got, " ") != strings.Join(want, " ") {
		t.Fatalf("ports after a restart: %v, want %v", got, want)
	}
}
