package archive

import (
	"errors"
	"testing"
	"time"
)

func TestParseURI(t *testing.T) {
	tests := []struct {
		in   string
		want Location
		ok   bool
	}{
		{"///var/lib/swmgr/startup-config", Location{Path: "/var/lib/swmgr/startup-config"}, true},
		{"file:///tmp/x", Location{Path: "/tmp/x"}, true},
		{"FILE:///tmp/x", Location{Path: "/tmp/x"}, true},
		{"sftp://backup@archive.example.com:2222/srv/cfg", Location{Remote: true, User: "backup", Host: "archive.example.com", Port: 2222, Path: "/srv/cfg"}, true},
		{"sftp://10.0.0.1/srv/cfg", Location{Remote: true, Host: "10.0.0.1", Path: "/srv/cfg"}, true},
		{"sftp://[2001:db8::1]:22/srv/cfg", Location{Remote: true, Host: "2001:db8::1", Port: 22, Path: "/srv/cfg"}, true},
		{"sftp://[2001:db8::1]/srv/cfg", Location{Remote: true, Host: "2001:db8::1", Path: "/srv/cfg"}, true},
		// refused
		{"", Location{}, false},
		{"startup-config", Location{}, false},        // relative
		{"./startup-config", Location{}, false},      // relative
		{"/etc/x", Location{}, false},                // no scheme
		{"//host/x", Location{}, false},              // network path
		{"file://host/x", Location{}, false},         // a host in file:
		{"file:relative", Location{}, false},         // relative
		{"///tmp/../etc/shadow", Location{}, false},  // ..
		{"///tmp/./x", Location{}, false},            // .
		{"///tmp/dir/", Location{}, false},           // a directory
		{"///tmp//x", Location{}, false},             // empty segment
		{"http://host/x", Location{}, false},         // scheme
		{"ftp://host/x", Location{}, false},          // scheme
		{"tftp://host/x", Location{}, false},         // scheme
		{"scp://host/x", Location{}, false},          // scheme
		{"sftp://host", Location{}, false},           // no path
		{"sftp://host/", Location{}, false},          // no file
		{"sftp://u:pw@host/x", Location{}, false},    // password in the URI
		{"sftp://host:0/x", Location{}, false},       // port
		{"sftp://host:99999/x", Location{}, false},   // port
		{"sftp://host:abc/x", Location{}, false},     // port
		{"sftp://ho_st/x", Location{}, false},        // host
		{"sftp://-host/x", Location{}, false},        // host
		{"sftp://host/a/../b", Location{}, false},    // ..
		{"sftp://host/x?y", Location{}, false},       // query
		{"///tmp/x\x00y", Location{}, false},         // NUL
		{"///tmp/x\ny", Location{}, false},           // newline
		{"sftp://@host/x", Location{}, false},        // empty user
		{"sftp://[2001:db8::1/x", Location{}, false}, // bracket
		{"sftp://a@b@host/x", Location{}, false},     // user with @
	}
	for _, tc := range tests {
		got, err := ParseURI(tc.in)
		if tc.ok != (err == nil) {
			t.Errorf("ParseURI(%q) error %v, want ok=%v", tc.in, err, tc.ok)
			continue
		}
		if err != nil {
			if !errors.Is(err, ErrBadURI) {
				t.Errorf("ParseURI(%q) error %v does not wrap ErrBadURI", tc.in, err)
			}
			continue
		}
		if got != tc.want {
			t.Errorf("ParseURI(%q) = %+v, want %+v", tc.in, got, tc.want)
		}
		if again, err := ParseURI(got.String()); err != nil || again != got {
			t.Errorf("ParseURI(%q).String() = %q does not parse back: %+v %v", tc.in, got.String(), again, err)
		}
	}
}

func FuzzParseURI(f *testing.F) {
	for _, s := range []string{"///a/b", "file:///a", "sftp://u@h:22/p", "sftp://[::1]/p", "http://x/y", "///a/../b"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		loc, err := ParseURI(s)
		if err != nil {
			return
		}
		if loc.Path == "" || loc.Path[0] != '/' {
			t.Fatalf("%q: path %q is not absolute", s, loc.Path)
		}
		for _, seg := range []string{"/../", "/./"} {
			if contains(loc.Path+"/", seg) {
				t.Fatalf("%q: path %q holds %s", s, loc.Path, seg)
			}
		}
		again, err := ParseURI(loc.String())
		if err != nil || again != loc {
			t.Fatalf("%q: %q does not parse back: %+v %v", s, loc.String(), again, err)
		}
	})
}

func contains(s, sub string) bool {
	for i := 0; i+len(sub) <= len(s); i++ {
		if s[i:i+len(sub)] == sub {
			return true
		}
	}
	return false
}

func TestStamp(t *testing.T) {
	at := time.Date(2026, 11, 23, 14, 5, 9, 0, time.FixedZone("X", 3600))
	for _, tc := range []struct{ mode, want string }{
		{TimestampDisabled, "/srv/cfg/startup-config"},
		{TimestampAppend, "/srv/cfg/startup-config-20261123T130509Z"},
		{TimestampPrepend, "/srv/cfg/20261123T130509Z-startup-config"},
	} {
		if got := Stamp("/srv/cfg/startup-config", tc.mode, at); got != tc.want {
			t.Errorf("Stamp(%s) = %q, want %q", tc.mode, got, tc.want)
		}
	}
}
