package chrony

import (
	"strings"
	"testing"
)

func TestParseSources(t *testing.T) {
	out := "^,*,10.0.0.1,8,4,377,12,-0.000001500,-0.000001600,0.000012\n" +
		"^,?,10.0.0.9,0,6,0,-,+0.000000000,+0.000000000,0.000000\n" +
		"#,-,GPS,0,4,377,1,0.1,0.1,0.1\n" + // a reference clock: not an NTP server
		"^,x,10.0.0.3,2,6,17,40,0.250000000,0.25,0.01\n"
	got, err := parseSources(out)
	if err != nil {
		t.Fatal(err)
	}
	want := []SourceState{
		{Address: "10.0.0.1", State: "selected", Selected: true, Stratum: 8, Poll: 4, Reach: 0o377, Offset: -1500},
		{Address: "10.0.0.9", State: "unreachable", Stratum: 0, Poll: 6, Reach: 0},
		{Address: "10.0.0.3", State: "falseticker", Stratum: 2, Poll: 6, Reach: 0o17, Offset: 250000000},
	}
	if len(got) != len(want) {
		t.Fatalf("got %+v", got)
	}
	for i := range want {
		if got[i] != want[i] {
			t.Errorf("source %d: got %+v, want %+v", i, got[i], want[i])
		}
	}
	applyStats(got, "10.0.0.1,6,4,3,-0.002,1.942,-0.000000000,0.000000485\n")
	// As chronyd 4.3 answers (its root delay and dispersion made up:
	// a server of local stratum 8 says 0).
	applyNTPData(got, "10.0.0.1,0A000001,123,10.0.0.2,0A000002,Normal,4,Server,8,4,16,-26,0.000000015,0.001250,0.000750,7F7F0101,,1795447916.429285778,0.000000221,0.000008463,0.000000036,0.000236501,0.00,111,111,1111,No,No,Kernel,Kernel,6,6,6,6\n")
	if s := got[0]; s.Jitter != 485 || s.Delay != 8463 || s.RootDelay != 1250000 || s.RootDispersion != 750000 || s.PeerDispersion != 36 {
		t.Errorf("jitter %d ns, delay %d ns, root delay %d ns, root dispersion %d ns, peer dispersion %d ns; want 485, 8463, 1250000, 750000, 36",
			s.Jitter, s.Delay, s.RootDelay, s.RootDispersion, s.PeerDispersion)
	}
	if _, err := parseSources("^,*,\"broken\n"); err == nil {
		t.Error("a broken CSV was accepted")
	}
}

func TestSourceLineAndValidate(t *testing.T) {
	for _, tc := range []struct {
		src        Source
		line, file string
		err        string
	}{
		{Source{Address: "10.0.0.1", MinPoll: 6, MaxPoll: 10}, "server 10.0.0.1 iburst minpoll 6 maxpoll 10", "swmgr-10.0.0.1.sources", ""},
		{Source{Address: "ntp.example.org", MinPoll: 4, MaxPoll: 4, Prefer: true}, "server ntp.example.org iburst minpoll 4 maxpoll 4 prefer", "swmgr-ntp.example.org.sources", ""},
		{Source{Address: "2001:db8::1", MinPoll: 6, MaxPoll: 10}, "server 2001:db8::1 iburst minpoll 6 maxpoll 10", "swmgr-2001_db8__1.sources", ""},
		{Source{Address: "10.0.0.1 iburst\nserver evil", MinPoll: 6, MaxPoll: 10}, "", "", "neither an IP address nor a host name"},
		{Source{Address: "10.0.0.1", MinPoll: 10, MaxPoll: 6}, "", "", "MinPoll 10 / MaxPoll 6"},
	} {
		err := tc.src.Validate()
		if tc.err != "" {
			if err == nil || !strings.Contains(err.Error(), tc.err) {
				t.Errorf("%+v: got %v, want %q", tc.src, err, tc.err)
			}
			continue
		}
		if err != nil || tc.src.line() != tc.line || tc.src.fileName() != tc.file {
			t.Errorf("%+v: %v %q %q", tc.src, err, tc.src.line(), tc.src.fileName())
		}
	}
}

// FuzzSourceFile: whatever passes Validate is one line of chrony syntax
// naming exactly the server, and its file stays inside sources.d.
func FuzzSourceFile(f *testing.F) {
	f.Add("10.0.0.1")
	f.Add("a.b.c")
	f.Add("../../etc/passwd")
	f.Fuzz(func(t *testing.T, addr string) {
		s := Source{Address: addr, MinPoll: 6, MaxPoll: 10}
		if s.Validate() != nil {
			return
		}
		if strings.ContainsAny(s.line(), "\n\r#") || strings.Fields(s.line())[1] != addr {
			t.Fatalf("line %q", s.line())
		}
		if strings.Contains(s.fileName(), "/") || strings.HasPrefix(s.fileName(), ".") {
			t.Fatalf("file %q", s.fileName())
		}
	})
}

func FuzzParseSources(f *testing.F) {
	f.Add("^,*,10.0.0.1,8,4,377,12,-0.0000015,-0.0000016,0.000012\n")
	f.Fuzz(func(t *testing.T, out string) {
		states, err := parseSources(out)
		if err != nil {
			return
		}
		applyStats(states, out)
		applyNTPData(states, out)
	})
}
