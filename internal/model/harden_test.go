package model

import (
	"testing"
)

// TestDecodeBodyText: text that encoding/json would store as U+FFFD is
// refused; whole characters, however escaped, are kept.
func TestDecodeBodyText(t *testing.T) {
	for _, tc := range []struct {
		body string
		ok   bool
	}{
		{`{"Description":"caf\u00e9 \ud83d\ude00 ✓"}`, true},
		{`{"Description":"a \\ud800 literal"}`, true}, // an escaped backslash, then text
		{`{"Description":"\ufffd is a real character"}`, true},
		{"{\"Description\":\"\xff\xfe\"}", false},
		{"{\"Descr\xc0\x80\":\"x\"}", false},
		{`{"Description":"\ud800"}`, false},
		{`{"Description":"\udc00"}`, false},
		{`{"Description":"\ud800\u0041"}`, false},
		{`{"Description":"\ud800\ud800"}`, false},
		{`{"Description":"\\\ud800"}`, false},
	} {
		_, err := DecodeBody([]byte(tc.body))
		if tc.ok && err != nil {
			t.Errorf("DecodeBody(%q): %v", tc.body, err)
		}
		if !tc.ok {
			if err == nil {
				t.Errorf("DecodeBody(%q) accepted", tc.body)
			} else {
				checkRefusal(t, "DecodeBody", err)
			}
		}
	}
}

// TestHardenedFormats: values once accepted are refused, and their usable
// neighbours still pass.
func TestHardenedFormats(t *testing.T) {
	reg := Builtin()
	for _, tc := range []struct {
		kind, field, value string
		ok                 bool
	}{
		{"SystemParam", "Hostname", "", false},
		{"SystemParam", "Hostname", "sw1", true},
		{"NtpServer", "SourceIntf", "", false},
		{"NtpServer", "SourceIntf", "ma1", true},
		{"SystemParam", "MgmtIp", "", true}, // no default: "" leaves it unset
		{"SystemParam", "Description", "", true},
		{"BGPv4Neighbor", "NeighborAddress", "0.0.0.0", false},
		{"BGPv4Neighbor", "NeighborAddress", "255.255.255.255", false},
		{"BGPv4Neighbor", "NeighborAddress", "224.0.0.5", false},
		{"BGPv4Neighbor", "NeighborAddress", "239.255.255.250", false},
		{"BGPv4Neighbor", "NeighborAddress", "10.0.0.2", true},
		{"NtpServer", "IpAddr", "0.0.0.0", false},
		{"NtpServer", "IpAddr", "255.255.255.255", false},
		{"NtpServer", "IpAddr", "224.0.1.1", false},
		{"NtpServer", "IpAddr", "ff02::101", false},
		{"NtpServer", "IpAddr", "::", false},
		{"NtpServer", "IpAddr", "::ffff:224.0.1.1", false},
		{"NtpServer", "IpAddr", "192.0.2.1", true},
		{"NtpServer", "IpAddr", "2001:db8::1", true},
		{"ConfigArchiveServer", "IpAddr", "255.255.255.255", false},
		{"SystemParam", "MgmtIp", "224.0.0.1", false},
		{"IPv4Intf", "IpAddr", "127.0.0.1/8", false},
		{"IPv4Intf", "IpAddr", "127.1.2.3/24", false},
		{"IPv4Intf", "IpAddr", "10.0.0.1/24", true},
		{"BGPGlobal", "RouterId", "0.0.0.0", true}, // "not set", as FlexSwitch
	} {
		k := reg.Lookup(Config, tc.kind)
		_, err := k.Field(tc.field).validate(tc.kind, tc.value)
		if tc.ok && err != nil {
			t.Errorf("%s %s=%q: %v", tc.kind, tc.field, tc.value, err)
		}
		if !tc.ok && err == nil {
			t.Errorf("%s %s=%q accepted", tc.kind, tc.field, tc.value)
		}
	}
}

// TestPasswordCategoryC: every Unicode category C character is refused in a
// password, not only the C0 controls.
func TestPasswordCategoryC(t *testing.T) {
	for _, r := range []rune{'\n', '\t', 0x7f, 0x85, 0x9b, 0x200b, 0x202e, 0xfeff, 0xe000, 0x0378} {
		if err := checkPassword("User", "password"+string(r)+"x"); err == nil {
			t.Errorf("a password with U+%04X passed", r)
		}
	}
	for _, p := range []string{"correct horse", "pässwört€ok", "пароль-длинный", "密码密码密码密码"} {
		if err := checkPassword("User", p); err != nil {
			t.Errorf("%q: %v", p, err)
		}
	}
}
