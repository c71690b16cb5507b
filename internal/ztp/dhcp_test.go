package ztp

import (
	"net"
	"strings"
	"testing"

	"github.com/insomniacslk/dhcp/dhcpv4"
)

// TestReadOfferChecksEveryField: the URLs DHCP gives are taken as they
// are or refused with the reason, never cleaned into another URL; a bare
// file name in option 67 (or the BOOTP file field) is a file on the TFTP
// server option 66 (or next-server) names.
func TestReadOfferChecksEveryField(t *testing.T) {
	opt := func(code int, v string) dhcpv4.Modifier {
		return dhcpv4.WithOption(dhcpv4.OptGeneric(dhcpv4.GenericOptionCode(code), []byte(v)))
	}
	for _, tc := range []struct {
		name   string
		mods   []dhcpv4.Modifier
		config string // the configuration URL read
		err    string // else the reason of the refusal
	}{
		{"http URL", []dhcpv4.Modifier{opt(67, "http://10.0.0.1/switch.json")}, "http://10.0.0.1/switch.json", ""},
		{"ended by a NUL", []dhcpv4.Modifier{opt(67, "http://10.0.0.1/switch.json\x00")}, "http://10.0.0.1/switch.json", ""},
		{"sftp URL", []dhcpv4.Modifier{opt(67, "sftp://ztp@10.0.0.1/srv/switch.json")}, "sftp://ztp@10.0.0.1/srv/switch.json", ""},
		{"bare file with option 66", []dhcpv4.Modifier{opt(67, "switch.json"), opt(66, "tftp.example.net")}, "tftp://tftp.example.net/switch.json", ""},
		{"bare file with next-server", []dhcpv4.Modifier{opt(67, "cfg/switch.json"), dhcpv4.WithServerIP(net.IPv4(10, 0, 0, 9))}, "tftp://10.0.0.9/cfg/switch.json", ""},
		{"BOOTP file field", []dhcpv4.Modifier{func(d *dhcpv4.DHCPv4) { d.BootFileName = "switch.json" }, dhcpv4.WithServerIP(net.IPv4(10, 0, 0, 9))}, "tftp://10.0.0.9/switch.json", ""},
		{"no option", nil, "", ""},
		{"bare file, no server", []dhcpv4.Modifier{opt(67, "switch.json")}, "", "no TFTP server"},
		{"newline", []dhcpv4.Modifier{opt(67, "http://10.0.0.1/a\nhttp://evil/b")}, "", "byte 17 is 0x0a"},
		{"escape", []dhcpv4.Modifier{opt(67, "http://10.0.0.1/\x1b[2Ja")}, "", "byte 16 is 0x1b"},
		{"space", []dhcpv4.Modifier{opt(67, "http://10.0.0.1/a b")}, "", "byte 17 is 0x20"},
		{"high byte", []dhcpv4.Modifier{opt(67, "http://10.0.0.1/\xff")}, "", "byte 16 is 0xff"},
		{"NUL inside", []dhcpv4.Modifier{opt(67, "http://10.0.0.1/a\x00b")}, "", "byte 17 is 0x00"},
		{"another scheme", []dhcpv4.Modifier{opt(67, "file:///etc/shadow")}, "", `scheme "file" is not fetched`},
		{"option as host", []dhcpv4.Modifier{opt(67, "sftp://-oProxyCommand=x/y")}, "", "starting with '-'"},
		{"option as path", []dhcpv4.Modifier{opt(67, "tftp://10.0.0.1/-x")}, "", "starting with '-'"},
		{"dot-dot", []dhcpv4.Modifier{opt(67, "tftp://10.0.0.1/../etc/passwd")}, "", `".." refused`},
		{"password in the URL", []dhcpv4.Modifier{opt(67, "sftp://u:secret@10.0.0.1/x")}, "", "a password in the URL"},
		{"hostile option 66", []dhcpv4.Modifier{opt(67, "switch.json"), opt(66, "-oProxyCommand=x")}, "", "is not a host name"},
		{"hostile script option", []dhcpv4.Modifier{opt(67, "http://10.0.0.1/s.json"), opt(239, "http://10.0.0.1/s.sh;\nreboot")}, "", "option 239: byte 21 is 0x0a"},
		{"bad sha256", []dhcpv4.Modifier{opt(67, "http://10.0.0.1/s.json"), opt(224, "abc")}, "", "not a SHA-256"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			ack, err := dhcpv4.New(append([]dhcpv4.Modifier{dhcpv4.WithMessageType(dhcpv4.MessageTypeAck),
				dhcpv4.WithServerIP(nil), dhcpv4.WithOption(dhcpv4.OptServerIdentifier(net.IPv4(10, 0, 0, 1)))}, tc.mods...)...)
			if err != nil {
				t.Fatal(err)
			}
			o, err := readOffer(ack)
			if tc.err != "" {
				if err == nil || !strings.Contains(err.Error(), tc.err) {
					t.Fatalf("readOffer: %v (URL %q), want an error saying %q", err, o.ConfigURL, tc.err)
				}
				if o == nil || o.Server != "10.0.0.1" {
					t.Errorf("the refused offer does not say its server: %+v", o)
				}
				return
			}
			if err != nil {
				t.Fatalf("readOffer: %v", err)
			}
			if o.ConfigURL != tc.config {
				t.Errorf("ConfigURL %q, want %q", o.ConfigURL, tc.config)
			}
		})
	}
}
