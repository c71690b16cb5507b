package api

import (
	"bytes"
	"encoding/json"
	"strings"
	"testing"
)

// TestFlexSwitchAAALabBodies sends the bodies FlexSwitch's own lab scripts
// send for TACACS+, syslog and DNS: each is answered 201 or 200, and reads
// back with FlexSwitch's fields and defaults; the TACACS+ secret is never
// returned.
func TestFlexSwitchAAALabBodies(t *testing.T) {
	s := newTxnServer(t)
	for _, c := range []struct{ method, path, body string }{
		{"POST", "/config/Tacacs", `{"ServerIp":"10.0.0.254","Secret":"SNAPROUTE","SourceIntf":"ma1"}`},
		{"PATCH", "/config/TacacsGlobal", `{"Enable":"true"}`},
		{"POST", "/config/SyslogCollector", `{"ServerIpAddr":"10.0.0.254"}`},
		{"POST", "/config/DNSServer", `{"IPAddr":"10.0.0.254"}`},
		{"PATCH", "/config/DNSGlobal", `{"Domain":"dockerlab.local"}`},
	} {
		want := 201
		if c.method == "PATCH" {
			want = 200
		}
		if code, body, _ := s.do(c.method, c.path, c.body); code != want {
			t.Fatalf("%s %s %s: %d %v, want %d", c.method, c.path, c.body, code, body, want)
		}
	}
	for _, c := range []struct{ path, want string }{
		{"/config/Tacacs?ServerIp=10.0.0.254", `{"ServerIp":"10.0.0.254","SourceIntf":"ma1","AuthService":"ppp","Secret":"","Port":49,"PrivilegeLevel":15,"Debug":0}`},
		{"/config/TacacsGlobal", `{"ProfileName":"default","Enable":"true","Timeout":10}`},
		{"/config/SyslogCollector?ServerIpAddr=10.0.0.254", `{"ServerIpAddr":"10.0.0.254","Port":514,"Transport":"UDP","Severity":"info","Facility":16}`},
		{"/config/DNSServer?IPAddr=10.0.0.254", `{"IPAddr":"10.0.0.254"}`},
		{"/config/DNSGlobal", `{"Vrf":"default","Domain":"dockerlab.local"}`},
	} {
		code, body, _ := s.do("GET", c.path, "")
		if code != 200 {
			t.Fatalf("GET %s: %d %v", c.path, code, body)
		}
		var want map[string]any
		if err := json.Unmarshal([]byte(c.want), &want); err != nil {
			t.Fatal(err)
		}
		if got := jsonOf(body["Object"]); got != jsonOf(want) {
			t.Errorf("GET %s:\n got %s\nwant %s", c.path, got, c.want)
		}
	}
	// The simulated switch's resolver shows the server and the domain.
	code, body, _ := s.do("GET", "/state/DNSGlobal", "")
	obj, _ := body["Object"].(map[string]any)
	if rc, _ := obj["ResolvConf"].(string); code != 200 || !strings.Contains(rc, "search dockerlab.local\n") || !strings.Contains(rc, "nameserver 10.0.0.254\n") {
		t.Errorf("state/DNSGlobal: %d %v", code, body)
	}
	// The secret is in no read, no revision and no config log entry.
	for _, p := range []string{"/config/Tacacss", "/state/Tacacss", "/revisions?Count=100", "/state/ConfigLogs"} {
		code, body, _ := s.do("GET", p, "")
		if code != 200 || strings.Contains(jsonOf(body), "SNAPROUTE") {
			t.Errorf("GET %s: %d, or it shows the secret: %v", p, code, body)
		}
	}
}

// TestAAABadInputChangesNothing: a non-IP server address, an out-of-range
// port or timeout and an Enable that is not "true" or "false" are 400s that
// name the field, and the store is byte-identical after them.
func TestAAABadInputChangesNothing(t *testing.T) {
	s := newTxnServer(t)
	if code, body, _ := s.do("POST", "/config/Tacacs", `{"ServerIp":"10.0.0.1","Secret":"k"}`); code != 201 {
		t.Fatalf("fixture: %d %v", code, body)
	}
	for _, c := range []struct{ method, path, body, field string }{
		{"POST", "/config/Tacacs", `{"ServerIp":"tacacs.example.com","Secret":"k"}`, "ServerIp"},
		{"POST", "/config/Tacacs", `{"ServerIp":"10.0.0.2","Port":70000}`, "Port"},
		{"POST", "/config/Tacacs", `{"ServerIp":"10.0.0.2","PrivilegeLevel":16}`, "PrivilegeLevel"},
		{"PATCH", "/config/Tacacs", `{"ServerIp":"10.0.0.1","Port":0}`, "Port"},
		{"PATCH", "/config/TacacsGlobal", `{"Enable":"yes"}`, "Enable"},
		{"PATCH", "/config/TacacsGlobal", `{"Enable":true}`, "Enable"},
		{"PATCH", "/config/TacacsGlobal", `{"Timeout":0}`, "Timeout"},
		{"PATCH", "/config/TacacsGlobal", `{"Timeout":3600}`, "Timeout"},
		{"POST", "/config/RadiusServer", `{"ServerIp":"300.1.1.1","Secret":"k"}`, "ServerIp"},
		{"POST", "/config/RadiusServer", `{"ServerIp":"10.0.0.3","Secret":"k","Timeout":61}`, "Timeout"},
		{"POST", "/config/RadiusServer", `{"ServerIp":"10.0.0.3"}`, "Secret"},
		{"PATCH", "/config/AAAGlobal", `{"AuthOrder":["tacacs+","ldap"]}`, "AuthOrder"},
		{"POST", "/config/SyslogCollector", `{"ServerIpAddr":"224.0.0.1"}`, "ServerIpAddr"},
		{"POST", "/config/SyslogCollector", `{"ServerIpAddr":"10.0.0.4","Transport":"TLS"}`, "Transport"},
		{"POST", "/config/DNSServer", `{"IPAddr":"ns.example.com"}`, "IPAddr"},
		{"PATCH", "/config/DNSGlobal", `{"Domain":"bad domain"}`, "Domain"},
	} {
		before := s.dump()
		code, body, _ := s.do(c.method, c.path, c.body)
		errObj, _ := body["Error"].(map[string]any)
		if code != 400 || errObj["Field"] != c.field {
			t.Errorf("%s %s %s: %d %v, want 400 naming %s", c.method, c.path, c.body, code, body, c.field)
		}
		if !bytes.Equal(before, s.dump()) {
			t.Errorf("%s %s %s changed the store", c.method, c.path, c.body)
		}
	}
}
