package model

import (
	"errors"
	"net/url"
	"strings"
	"testing"

	"github.com/swmgr/swmgr/internal/apierr"
)

// TestDeclarationsConsistent checks the declarations against themselves:
// defaults satisfy their own enums, ranges and formats, and references point
// at single-key config kinds.
func TestDeclarationsConsistent(t *testing.T) {
	reg := Builtin()
	for _, k := range reg.Kinds() {
		if k.Class == Config {
			d := k.Defaults()
			for _, f := range k.Fields {
				if f.Default == nil || f.Key {
					continue
				}
				if _, err := f.validate(k.Name, d[f.Name]); err != nil {
					t.Errorf("%s.%s: default %v is invalid: %v", k.Name, f.Name, f.Default, err)
				}
			}
		}
		for _, f := range k.Fields {
			if f.Ref == "" {
				continue
			}
			target := reg.Lookup(Config, f.Ref)
			if target == nil || len(target.Keys()) != 1 {
				t.Errorf("%s.%s references %s, which must be a config kind with one key", k.Name, f.Name, f.Ref)
			}
		}
	}
	for _, want := range []string{"Port", "IPv4Intf", "Vrf", "BGPGlobal", "BGPVrf", "BGPv4Neighbor", "Span", "User", "ConfigArchiveServer", "NtpServer", "SystemParam"} {
		if k := reg.Lookup(Config, want); k == nil {
			t.Errorf("config kind %s is not declared", want)
		}
	}
	for _, want := range []string{"UserPassword", "SaveConfig", "ResetConfig", "ResetConfigToFile", "ClearConfigLog"} {
		if reg.Lookup(Action, want) == nil {
			t.Errorf("action %s is not declared", want)
		}
	}
}

func TestResolve(t *testing.T) {
	reg := Builtin()
	tests := []struct {
		class  Class
		name   string
		kind   string
		plural bool
	}{
		{Config, "NtpServer", "NtpServer", false},
		{Config, "ntpserver", "NtpServer", false},
		{Config, "NTPSERVERS", "NtpServer", true},
		{Config, "Ports", "Port", true},
		{Config, "SystemParam", "SystemParam", false},
		{State, "ConfigLogs", "ConfigLogState", true},
		{State, "configlog", "ConfigLogState", false},
		{Action, "clearconfiglog", "ClearConfigLog", false},
		{Config, "Portss", "", false},
		{Config, "s", "", false},
		{Config, "PortState", "", false},
	}
	for _, tt := range tests {
		k, plural := reg.Resolve(tt.class, tt.name)
		got := ""
		if k != nil {
			got = k.Name
		}
		if got != tt.kind || plural != tt.plural {
			t.Errorf("Resolve(%v, %q) = %q, %v; want %q, %v", tt.class, tt.name, got, plural, tt.kind, tt.plural)
		}
	}
}

func TestFormats(t *testing.T) {
	tests := []struct {
		f    *Format
		s    string
		good bool
	}{
		{FormatIPv4, "192.0.2.1", true},
		{FormatIPv4, "192.0.2.256", false},
		{FormatIPv4, "::1", false},
		{FormatIPv4, "01.2.3.4", false},
		{FormatIPv4CIDR, "10.1.1.1/30", true},
		{FormatIPv4CIDR, "10.1.1.0/30", false}, // network address
		{FormatIPv4CIDR, "10.1.1.3/30", false}, // broadcast
		{FormatIPv4CIDR, "10.1.1.0/31", true},
		{FormatIPv4CIDR, "10.1.1.1/32", true},
		{FormatIPv4CIDR, "10.1.1.1", false},
		{FormatIPv4CIDR, "10.1.1.1/33", false},
		{FormatIPv4CIDR, "224.0.0.1/24", false},
		{FormatIPOrFQDN, "ntp.example.com", true},
		{FormatIPOrFQDN, "ntp.example.com.", true},
		{FormatIPOrFQDN, "2001:db8::1", true},
		{FormatIPOrFQDN, "0.0.0.0", false},
		{FormatIPOrFQDN, "ntp", false},
		{FormatIPOrFQDN, "10.0.0.256", false},
		{FormatIPOrFQDN, "-bad.example.com", false},
		{FormatIPOrFQDN, "a..b", false},
		{FormatASN, "65001", true},
		{FormatASN, "4294967295", true},
		{FormatASN, "4294967296", false},
		{FormatASN, "0", false},
		{FormatASN, "1.10", true},
		{FormatASN, "0.0", false},
		{FormatASN, "65536.1", false},
		{FormatASN, "065001", false},
		{FormatASN, "-1", false},
		{FormatPortName, "fpPort1", true},
		{FormatPortName, "fpPort12s4", true},
		{FormatPortName, "fpPort0", false},
		{FormatPortName, "fpport1", false},
		{FormatPortName, "fpPort1s0", false},
		{FormatIfName, "ma1", true},
		{FormatIfName, "eth0.100", true},
		{FormatIfName, "a/b", false},
		{FormatIfName, "sixteen-chars-xx", false},
		{FormatMAC, "00:11:22:aa:BB:cc", true},
		{FormatMAC, "00-11-22-aa-bb-cc", false},
		{FormatUserName, "alice", true},
		{FormatUserName, "_svc-1", true},
		{FormatUserName, "Alice", false},
		{FormatUserName, "1alice", false},
		{FormatUserName, strings.Repeat("a", 33), false},
		{FormatHostname, "switch-1", true},
		{FormatHostname, "sw1.lab.example", true},
		{FormatHostname, "sw_1", false},
		{FormatFileURI, "///var/lib/swmgr/startup-config", true},
		{FormatFileURI, "file:///tmp/x", true},
		{FormatFileURI, "sftp://backup@archive.example.com:2222/srv/cfg", true},
		{FormatFileURI, "sftp://[2001:db8::1]/srv/cfg", true},
		{FormatFileURI, "sftp://host:99999/x", false},
		{FormatFileURI, "http://host/x", false},
		{FormatFileURI, "///tmp/../etc/passwd", false},
		{FormatAbsPath, "/opt/swmgr/startup-config", true},
		{FormatAbsPath, "relative/path", false},
		{FormatObjName, "red", true},
		{FormatObjName, "-red", false},
	}
	for _, tt := range tests {
		msg := tt.f.Check(tt.s)
		if (msg == "") != tt.good {
			t.Errorf("%s.Check(%q) = %q; want good=%v", tt.f.Name, tt.s, msg, tt.good)
		}
	}
}

func codeOf(err error) string {
	var e *apierr.Error
	if errors.As(err, &e) {
		return e.Code
	}
	return ""
}

func TestParseAndValidate(t *testing.T) {
	reg := Builtin()
	tests := []struct {
		kind, body, code string
	}{
		{"NtpServer", `{"IpAddr":"10.0.0.1","MinPoll":4,"MaxPoll":17}`, ""},
		{"NtpServer", `{"IpAddr":"10.0.0.1","MinPoll":"4"}`, apierr.CodeWrongType},
		{"NtpServer", `{"IpAddr":"10.0.0.1","MinPoll":4.5}`, apierr.CodeWrongType},
		{"NtpServer", `{"IpAddr":"10.0.0.1","MinPoll":1e1}`, ""},
		{"NtpServer", `{"IpAddr":"10.0.0.1","MinPoll":null}`, apierr.CodeWrongType},
		{"NtpServer", `{"IpAddr":"10.0.0.1","MinPoll":3}`, apierr.CodeInvalidValue},
		{"NtpServer", `{"IpAddr":"10.0.0.1","MinPoll":12,"MaxPoll":10}`, apierr.CodeInvalidValue},
		{"NtpServer", `{"IpAddr":"10.0.0.1","minpoll":6}`, apierr.CodeUnknownField},
		{"NtpServer", `{"IpAddr":"10.0.0.1"`, apierr.CodeMalformedJSON},
		{"NtpServer", `[1]`, apierr.CodeMalformedJSON},
		{"NtpServer", `{"IpAddr":"10.0.0.1"} x`, apierr.CodeMalformedJSON},
		{"NtpServer", `{"IpAddr":"10.0.0.1","IpAddr":"10.0.0.2"}`, apierr.CodeMalformedJSON},
		{"User", `{"NAME":"alice","Password":"longenough"}`, ""},
		{"User", `{"NAME":"alice","Name":"alice","Password":"longenough"}`, apierr.CodeMalformedJSON},
		{"User", `{"Name":"alice","Password":"short"}`, apierr.CodeInvalidValue},
		{"User", `{"Name":"alice","Password":"longenough","Access":"bash"}`, ""}, // enum case is normalised
		{"User", `{"Name":"alice","Password":"longenough","Access":"Sudo"}`, apierr.CodeInvalidValue},
		{"Port", `{"IntfRef":"fpPort1","speed":10000}`, ""},
		{"Port", `{"IntfRef":"fpPort1s1","BreakOutMode":"1x40"}`, apierr.CodeInvalidValue},
		{"ConfigArchiveServer", `{"IpAddr":"a.example.com","Nonce":"n"}`, apierr.CodeInvalidValue},
		{"ConfigArchiveServer", `{"IpAddr":"a.example.com","Nonce":"n","Passphrase":"p","TimeStamp":"append"}`, ""},
		{"Span", `{"SpanSessionName":"s","DstIntfRef":"fpPort1","SrcIntfRefList":["fpPort1"]}`, apierr.CodeInvalidValue},
		{"Span", `{"SpanSessionName":"s","DstIntfRef":"fpPort1","SrcIntfRefList":["fpPort2","fpPort2"]}`, apierr.CodeInvalidValue},
		{"Span", `{"SpanSessionName":"s","DstIntfRef":"fpPort1","SrcIntfRefList":"fpPort2"}`, apierr.CodeWrongType},
		{"BGPv4Neighbor", `{"NeighborAddress":"10.0.0.2","PeerAS":"65002","HoldTime":2}`, apierr.CodeInvalidValue},
		{"BGPv4Neighbor", `{"NeighborAddress":"10.0.0.2","PeerAS":"65002","HoldTime":9,"KeepaliveTime":3}`, ""},
		{"SystemParam", `{"Timezone":"Mars/Olympus"}`, apierr.CodeInvalidValue},
		{"SystemParam", `{"Timezone":"America/New_York"}`, ""},
	}
	for _, tt := range tests {
		k := reg.Lookup(Config, tt.kind)
		body, err := DecodeBody([]byte(tt.body))
		var given Object
		if err == nil {
			given, err = k.Parse(body)
		}
		if err == nil {
			obj := k.Defaults()
			for n, v := range given {
				obj[n] = v
			}
			err = k.Validate(obj)
		}
		if got := codeOf(err); got != tt.code {
			t.Errorf("%s %s: code %q (%v); want %q", tt.kind, tt.body, got, err, tt.code)
		}
	}
}

// A missing field of an action says the action cannot run, not that
// something cannot be created ("Password is required to create a
// UserPassword").
func TestRequiredFieldMessages(t *testing.T) {
	reg := Builtin()
	for _, tt := range []struct {
		class      Class
		kind, want string
	}{
		{Config, "NtpServer", "IpAddr is required to create a NtpServer"},
		{Action, "UserPassword", "Name is required to run UserPassword"},
		{Action, "Rollback", "Revision is required to run Rollback"},
	} {
		err := reg.Lookup(tt.class, tt.kind).RequireFields(Object{})
		if err == nil || !strings.Contains(err.Error(), tt.want) {
			t.Errorf("%s: %v; want %q", tt.kind, err, tt.want)
		}
	}
}

func TestUnknownFieldSuggests(t *testing.T) {
	k := Builtin().Lookup(Config, "NtpServer")
	for _, tt := range []struct {
		name, want, never string
	}{
		{"MinPol", `did you mean "MinPoll"`, ""},
		// A state field is not misspelt: it is not input at all. "did
		// you mean "Stratum"?" for Stratum helped nobody.
		{"Stratum", "Stratum is a state field of NtpServer", "did you mean"},
		{"stratum", "Stratum is a state field of NtpServer", "did you mean"},
	} {
		_, err := k.Parse(Body{tt.name: []byte("6")})
		if err == nil || !strings.Contains(err.Error(), tt.want) || tt.never != "" && strings.Contains(err.Error(), tt.never) {
			t.Errorf("%s: error %v; want it to say %q", tt.name, err, tt.want)
		}
		q, _ := url.ParseQuery(tt.name + "=6")
		if _, qerr := k.ParseQuery(q); qerr == nil || qerr.Error() != err.Error() {
			t.Errorf("%s in a query: %v; want the body's error", tt.name, qerr)
		}
	}
}

func TestParseQuery(t *testing.T) {
	k := Builtin().Lookup(Config, "NtpServer")
	q, _ := url.ParseQuery("IpAddr=10.0.0.1&MinPoll=6&CurrentMarker=3")
	o, err := k.ParseQuery(q)
	if err != nil || o.Str("IpAddr") != "10.0.0.1" || o.Int("MinPoll") != 6 {
		t.Fatalf("ParseQuery = %v, %v", o, err)
	}
	if _, err := k.ParseQuery(url.Values{"MinPoll": {"six"}}); codeOf(err) != apierr.CodeWrongType {
		t.Fatalf("ParseQuery(MinPoll=six) = %v; want wrong_type", err)
	}
}

func TestAppendJSONIsCanonicalAndHidesSecrets(t *testing.T) {
	k := Builtin().Lookup(Config, "ConfigArchiveServer")
	o := k.Defaults()
	o["IpAddr"], o["Password"], o["Passphrase"], o["Nonce"] = "a.example.com", "hunter2", "pp", "n\"\x01"
	a := string(k.AppendJSON(nil, o, false))
	b := string(k.AppendJSON(nil, o.Clone(), false))
	if a != b {
		t.Fatalf("encoding is not deterministic:\n%s\n%s", a, b)
	}
	if strings.Contains(a, "hunter2") || strings.Contains(a, `"pp"`) {
		t.Fatalf("secret in public JSON: %s", a)
	}
	if !strings.HasPrefix(a, `{"IpAddr":"a.example.com","Port":22,"Username":"","Password":""`) || !strings.Contains(a, `"Nonce":"n\"\u0001"`) {
		t.Fatalf("unexpected encoding: %s", a)
	}
	if r := string(k.AppendRedactedJSON(nil, o)); !strings.Contains(r, `"Password":"******"`) || strings.Contains(r, "hunter2") {
		t.Fatalf("redacted encoding: %s", r)
	}
	// Round trip: what AppendJSON writes, DecodeStored reads back (a value
	// stored before the text classes were declared still reads); Parse, a
	// client's input, refuses its control character.
	back, err := k.DecodeStored([]byte(a))
	if err != nil || back.Str("Nonce") != "n\"\x01" || back.Int("Interval") != 1440 {
		t.Fatalf("round trip = %v, %v", back, err)
	}
	body, err := DecodeBody([]byte(a))
	if err != nil {
		t.Fatal(err)
	}
	if _, err := k.Parse(body); err == nil || !strings.Contains(err.Error(), "U+0001, a control character") {
		t.Fatalf("Parse of a control character: %v", err)
	}
}

func TestBreakoutChildren(t *testing.T) {
	k := Builtin().Lookup(Config, "Port")
	p := k.Defaults()
	p["IntfRef"], p["BreakOutMode"] = "fpPort3", "4x25"
	kids := k.Children(p)
	if len(kids) != 4 || kids[3].Str("IntfRef") != "fpPort3s4" || kids[0].Int("Speed") != 25000 {
		t.Fatalf("children of 4x25 = %v", kids)
	}
	p["BreakOutMode"] = "1x100"
	if kids := k.Children(p); len(kids) != 0 {
		t.Fatalf("children of 1x100 = %v", kids)
	}
}

func TestParseASN(t *testing.T) {
	for s, want := range map[string]uint32{"1": 1, "65001": 65001, "1.0": 65536, "1.10": 65546, "65535.65535": 4294967295} {
		if got, ok := ParseASN(s); !ok || got != want {
			t.Errorf("ParseASN(%q) = %d, %v; want %d", s, got, ok, want)
		}
	}
}

// TestShowColumnsNameFields: every column of every declared show names a field.
func TestShowColumnsNameFields(t *testing.T) {
	r := Builtin()
	for _, k := range r.Kinds() {
		if k.CLI == nil {
			continue
		}
		if _, err := r.ShowColumns(k, k.CLI.Brief); err != nil {
			t.Error(err)
		}
		for _, sh := range k.CLI.Shows {
			if _, err := r.ShowColumns(k, sh.Columns); err != nil {
				t.Error(err)
			}
			if sh.Only != "" && k.StateField(sh.Only) == nil {
				t.Errorf("%s: show %v: Only %s is not a field", k.Name, sh.Words, sh.Only)
			}
		}
	}
}
