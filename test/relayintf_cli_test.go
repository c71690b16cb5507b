package test

import (
	"strings"
	"testing"
	"unicode/utf8"
)

// TestCLIRelayInterface: in a port's context each `ip helper-address
// <server>` (EOS's and IOS's words) adds a server of the port's relay,
// show run prints one line per server and replays, `show ip dhcp relay`
// lists the relay interfaces within 120 columns, a server the model
// refuses is an ERROR that changes nothing, and `no ip helper-address
// <server>` removes one server, the last one the relay interface.
func TestCLIRelayInterface(t *testing.T) {
	s := startServer(t, "")
	s.expect(t, 201, "POST", "/config/IPv4Intf", `{"IntfRef":"fpPort1","IpAddr":"10.1.1.1/24"}`)
	out, code := runCLI(t, s, "enable\nconfig\ninterface fpPort 1\nip helper-address 192.0.2.67\nexit\nip helper-address 192.0.2.68\nexit\nexit\napply\nexit\nshow run\nshow ip dhcp relay\n")
	if code != 0 {
		t.Fatalf("exit %d\n%s", code, out)
	}
	mustContain(t, out, "(config-if-fpPort-1-ip-helper-192.0.2.67)#",
		"interface fpPort 1\n  ip address 10.1.1.1/24\n  ip helper-address 192.0.2.67\n  ip helper-address 192.0.2.68\n",
		" Interface    Relays    Servers                  VRF        From Clients    To Clients    To Servers    From Servers\n",
		" fpPort1      True      192.0.2.67,192.0.2.68    default    0               0             0             0\n")
	checkFields(t, "DhcpRelayIntf", s.expect(t, 200, "GET", "/config/DhcpRelayIntf?IntfRef=fpPort1", "").object(), map[string]any{"ServerIp": []any{"192.0.2.67", "192.0.2.68"}})
	_, shown, _ := strings.Cut(out, "switch#show ip dhcp relay\n")
	for _, l := range strings.Split(shown, "\n") {
		if n := utf8.RuneCountInString(l); n > 120 {
			t.Errorf("a line of %d columns: %q", n, l)
		}
	}

	// A refused server is an ERROR, and nothing changes.
	out, _ = runCLI(t, s, "enable\nconfig\ninterface fpPort 1\nip helper-address 224.0.0.9\nexit\nexit\napply\n")
	mustContain(t, out, "ERROR: 400")
	checkFields(t, "DhcpRelayIntf", s.expect(t, 200, "GET", "/config/DhcpRelayIntf?IntfRef=fpPort1", "").object(), map[string]any{"ServerIp": []any{"192.0.2.67", "192.0.2.68"}})

	// show run replays onto a switch without the relay.
	out, _ = runCLI(t, s, "enable\nshow run\n")
	run := out[strings.Index(out, "!\ninterface fpPort 1"):]
	run = run[:strings.Index(run, "!\nuser")]
	s2 := startServer(t, "")
	out, code = runCLI(t, s2, "enable\nconfig\n"+run+"apply\n")
	if code != 0 {
		t.Fatalf("the replay: exit %d\n%s", code, out)
	}
	checkFields(t, "DhcpRelayIntf", s2.expect(t, 200, "GET", "/config/DhcpRelayIntf?IntfRef=fpPort1", "").object(), map[string]any{"ServerIp": []any{"192.0.2.67", "192.0.2.68"}})

	out, code = runCLI(t, s, "enable\nconfig\ninterface fpPort 1\nno ip helper-address 192.0.2.67\nexit\napply\nshow run\n")
	if code != 0 {
		t.Fatalf("exit %d\n%s", code, out)
	}
	checkFields(t, "DhcpRelayIntf", s.expect(t, 200, "GET", "/config/DhcpRelayIntf?IntfRef=fpPort1", "").object(), map[string]any{"ServerIp": []any{"192.0.2.68"}})
	out, code = runCLI(t, s, "enable\nconfig\ninterface fpPort 1\nno ip helper-address 192.0.2.68\nexit\napply\n")
	if code != 0 {
		t.Fatalf("exit %d\n%s", code, out)
	}
	s.expect(t, 404, "GET", "/config/DhcpRelayIntf?IntfRef=fpPort1", "")
}
