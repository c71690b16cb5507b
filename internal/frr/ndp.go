package frr

import (
	"context"
	"fmt"
	"maps"
	"slices"
	"strconv"
	"strings"
)

// Router advertisements. bgpd asks zebra to send router advertisements on
// the interface of every neighbor by interface (BGP unnumbered: the peer
// learns the switch's link-local address from them), every 10 s unless
// the interface has an `ipv6 nd ra-interval` of its own, which zebra then
// keeps. swmgr owns that one line of zebra's interface blocks: Config's
// RAIntervals, nothing else of an interface.

// RAInterval is the interval between the router advertisements zebra
// sends on an interface.
type RAInterval struct {
	Interface string // the netdev
	Seconds   uint32 // 1..1800 (zebra's range)
}

const raLinePrefix = "ipv6 nd ra-interval "

// renderRAIntervals is the `ipv6 nd ra-interval` line of each interface,
// as zebra prints it.
func renderRAIntervals(list []RAInterval) (map[string]string, error) {
	out := map[string]string{}
	for _, r := range list {
		if !ifNameRE.MatchString(r.Interface) {
			return nil, fmt.Errorf("router advertisements: %q is not an interface name", r.Interface)
		}
		if r.Seconds < 1 || r.Seconds > 1800 {
			return nil, fmt.Errorf("router advertisements on %s: %d s is not in 1..1800", r.Interface, r.Seconds)
		}
		line := raLinePrefix + strconv.FormatUint(uint64(r.Seconds), 10)
		if have, ok := out[r.Interface]; ok && have != line {
			return nil, fmt.Errorf("router advertisements on %s: two intervals", r.Interface)
		}
		out[r.Interface] = line
	}
	return out, nil
}

// parseRAIntervals reads the `ipv6 nd ra-interval` lines of zebra's
// interface blocks, by interface.
func parseRAIntervals(running string) map[string]string {
	out := map[string]string{}
	intf := ""
	for _, raw := range strings.Split(running, "\n") {
		line := strings.TrimRight(raw, " \r")
		switch {
		case strings.HasPrefix(line, "interface "):
			intf = strings.Fields(line)[1]
		case !strings.HasPrefix(line, " "):
			intf = ""
		case intf != "" && strings.HasPrefix(strings.TrimSpace(line), raLinePrefix):
			out[intf] = strings.TrimSpace(line)
		}
	}
	return out
}

// diffRAIntervals is the zebra commands that turn the running lines into
// the wanted ones.
func diffRAIntervals(running, want map[string]string) []string {
	var cmds []string
	names := slices.Sorted(maps.Keys(running))
	for name := range want {
		if _, ok := running[name]; !ok {
			names = append(names, name)
		}
	}
	slices.Sort(names)
	for _, name := range names {
		have, wanted := running[name], want[name]
		switch {
		case have == wanted:
		case wanted == "":
			cmds = append(cmds, "interface "+name, " no ipv6 nd ra-interval", "exit")
		default:
			cmds = append(cmds, "interface "+name, " "+wanted, "exit")
		}
	}
	return cmds
}

// applyRAIntervals makes zebra run want and returns the lines it ran
// before (what a failed apply puts back).
func (r *Router) applyRAIntervals(ctx context.Context, want map[string]string) (map[string]string, error) {
	return applyOnZebra(ctx, r, want, parseRAIntervals, diffRAIntervals)
}
