package cli

import (
	"context"
	"fmt"
	"io"
	"strconv"
	"strings"
	"time"
)

// ProbeRequest is a `ping` or `traceroute` as typed: the switch runs it
// (gNOI System.Ping and Traceroute: the same bounds, namespace and VRF
// handling as any gNOI client gets; docs/cli.md).
type ProbeRequest struct {
	Traceroute  bool
	Destination string
	Source      string
	VRF         string        // "": the default instance
	Count       int           // ping: echo requests (0: 5)
	Size        int           // ping: payload bytes (0: ping's default)
	Interval    time.Duration // ping: between requests (0: 1 s)
	MaxTTL      int           // traceroute: hops (0: 30)
}

// Prober runs a probe on the switch and writes its output as it comes.
type Prober func(ctx context.Context, r ProbeRequest, out io.Writer) error

// probeWords are the words after the destination: the field each sets.
var (
	pingWords  = []string{"count", "size", "interval", "source", "vrf"}
	traceWords = []string{"max-ttl", "source", "vrf"}
)

// probe is `ping DEST [count N] [size N] [interval SECONDS] [source ADDR]
// [vrf NAME]` and `traceroute DEST [max-ttl N] [source ADDR] [vrf NAME]`.
func (s *Session) probe(traceroute bool, rest []token) error {
	if s.opts.Probe == nil {
		s.printf("ERROR: ping and traceroute run on the switch over gNOI: give swmgr cli --gnmi HOST:PORT (with --url and --user)\n")
		return errFailed
	}
	r, err := parseProbe(traceroute, rest)
	if err != nil {
		s.printf("ERROR: %v\n", err)
		return errFailed
	}
	if err := s.opts.Probe(s.ctx, r, s.out); err != nil {
		s.printf("ERROR: %v\n", err)
		return errFailed
	}
	return nil
}

func parseProbe(traceroute bool, rest []token) (ProbeRequest, error) {
	r := ProbeRequest{Traceroute: traceroute}
	words, usage := pingWords, "ping <destination> [count N] [size N] [interval SECONDS] [source ADDRESS] [vrf NAME]"
	if traceroute {
		words, usage = traceWords, "traceroute <destination> [max-ttl N] [source ADDRESS] [vrf NAME]"
	}
	if len(rest) == 0 {
		return r, fmt.Errorf("a destination is required: %s", usage)
	}
	r.Destination = rest[0].text
	for i := 1; i < len(rest); i += 2 {
		m := matchWord(rest[i].text, words)
		if len(m) != 1 {
			return r, fmt.Errorf("%q: %s", rest[i].text, usage)
		}
		if i+1 >= len(rest) {
			return r, fmt.Errorf("%s needs a value: %s", m[0], usage)
		}
		v := rest[i+1].text
		num := func(lo, hi int) (int, error) {
			n, err := strconv.Atoi(v)
			if err != nil || n < lo || n > hi {
				return 0, fmt.Errorf("%s %q: a number from %d to %d", m[0], v, lo, hi)
			}
			return n, nil
		}
		var err error
		switch m[0] {
		case "count":
			r.Count, err = num(1, 1000)
		case "size":
			r.Size, err = num(0, 65507)
		case "max-ttl":
			r.MaxTTL, err = num(1, 255)
		case "interval":
			var f float64
			f, err = strconv.ParseFloat(v, 64)
			if err != nil || f <= 0 || f > 60 {
				err = fmt.Errorf("interval %q: seconds, more than 0 and at most 60", v)
			}
			r.Interval = time.Duration(f * float64(time.Second))
		case "source":
			r.Source = v
		case "vrf":
			r.VRF = v
		}
		if err != nil {
			return r, err
		}
	}
	if strings.HasPrefix(r.Destination, "-") {
		return r, fmt.Errorf("destination %q: an address or a host name", r.Destination)
	}
	return r, nil
}
