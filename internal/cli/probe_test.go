package cli

import (
	"strings"
	"testing"
	"time"
)

// The words of ping and traceroute: prefixes, values in range, each word
// of its own command only.
func TestParseProbe(t *testing.T) {
	for _, c := range []struct {
		line string
		want ProbeRequest
		err  string // "" none, else in the error
	}{
		{"10.0.0.1", ProbeRequest{Destination: "10.0.0.1"}, ""},
		{"sw2 count 3 size 100 int 0.2 source 10.0.0.9 vrf blue", ProbeRequest{Destination: "sw2", Count: 3, Size: 100, Interval: 200 * time.Millisecond, Source: "10.0.0.9", VRF: "blue"}, ""},
		{"", ProbeRequest{}, "a destination is required"},
		{"10.0.0.1 count", ProbeRequest{}, "count needs a value"},
		{"10.0.0.1 count 0", ProbeRequest{}, "a number from 1 to 1000"},
		{"10.0.0.1 size 70000", ProbeRequest{}, "a number from 0 to 65507"},
		{"10.0.0.1 interval 0", ProbeRequest{}, "more than 0"},
		{"10.0.0.1 max-ttl 3", ProbeRequest{}, `"max-ttl"`},
		{"-f", ProbeRequest{}, "an address or a host name"},
	} {
		toks, err := tokenize(c.line)
		if err != nil {
			t.Fatal(err)
		}
		got, err := parseProbe(false, toks)
		if c.err != "" {
			if err == nil || !strings.Contains(err.Error(), c.err) {
				t.Errorf("ping %s: %v, want an error with %s", c.line, err, c.err)
			}
			continue
		}
		if err != nil || got != c.want {
			t.Errorf("ping %s: %+v %v, want %+v", c.line, got, err, c.want)
		}
	}
	toks, _ := tokenize("10.0.0.1 max 5 vrf red")
	if got, err := parseProbe(true, toks); err != nil || got != (ProbeRequest{Traceroute: true, Destination: "10.0.0.1", MaxTTL: 5, VRF: "red"}) {
		t.Errorf("traceroute: %+v %v", got, err)
	}
	toks, _ = tokenize("10.0.0.1 count 3")
	if _, err := parseProbe(true, toks); err == nil {
		t.Error("traceroute took ping's count")
	}
}
