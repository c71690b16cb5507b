package model

import (
	"github.com/swmgr/swmgr/internal/apierr"
)

// Neighbour discovery's timers (NDPGlobal). FlexSwitch's defaults (10
// minutes reachable, 1 ms between solicitations, a router advertisement
// every 5 seconds) are what every SDK and every stored configuration
// sends, so they stay the wire defaults; given to a kernel they would
// replace RFC 4861's timing on every port at first start, and 1 ms between
// solicitations would flood a link. So a timer at its factory value stands
// for the platform's own (the kernel's RFC 4861 timing, the routing
// daemon's advertisement interval) and any other value is applied.

// FlexSwitch's factory values of NDPGlobal: each stands for the platform's
// own timer.
const (
	NDPFactoryReachableTime      = 10 // minutes
	NDPFactoryRetransmitInterval = 1  // ms
	NDPFactoryRAInterval         = 5  // s
)

// RFC 4861 section 10's REACHABLE_TIME and RETRANS_TIMER, which are the
// Linux kernel's defaults (net.ipv6.neigh.*.base_reachable_time_ms,
// retrans_time_ms), and the router advertisement interval the routing
// daemon uses on a BGP-unnumbered interface (FRR's bgpd asks zebra for
// one every 10 s).
const (
	KernelReachableTimeMs = 30000
	KernelRetransTimeMs   = 1000
	DaemonRAInterval      = 10 // s
)

// MinRetransmitIntervalMs is the shortest RetransmitInterval applied
// (other than the factory 1, which means the kernel's own): a neighbour
// that does not answer is solicited MAX_MULTICAST_SOLICIT (3) times this
// far apart, so below 100 ms an unreachable neighbour costs a burst of
// solicitations every few hundred milliseconds per address, on every
// link.
const MinRetransmitIntervalMs = 100

// NDPTimers are NDPGlobal's timers in the platform's terms; 0 where the
// factory value leaves the platform's own.
type NDPTimers struct {
	ReachableMs int64 // net.ipv6.neigh.*.base_reachable_time_ms
	RetransMs   int64 // net.ipv6.neigh.*.retrans_time_ms
	RAInterval  int64 // seconds: the routing daemon's ipv6 nd ra-interval
}

// NDPTimersOf reads an NDPGlobal.
func NDPTimersOf(o Object) NDPTimers {
	var t NDPTimers
	if v := o.Int("ReachableTime"); v != NDPFactoryReachableTime && v > 0 {
		t.ReachableMs = v * 60000
	}
	if v := o.Int("RetransmitInterval"); v != NDPFactoryRetransmitInterval && v > 0 {
		t.RetransMs = v
	}
	if v := o.Int("RouterAdvertisementInterval"); v != NDPFactoryRAInterval && v > 0 {
		t.RAInterval = v
	}
	return t
}

// NDPInEffect is the state form's timers: the kernel's (read back where
// there is one, 0 for the platform's defaults) and the advertisement
// interval the routing daemon uses.
func NDPInEffect(o Object, kernelReachableMs, kernelRetransMs int64) Object {
	t := NDPTimersOf(o)
	orDefault := func(read, configured, def int64) int64 {
		switch {
		case read != 0:
			return read
		case configured != 0:
			return configured
		}
		return def
	}
	return Object{
		"ReachableTimeMsInEffect":             orDefault(kernelReachableMs, t.ReachableMs, KernelReachableTimeMs),
		"RetransmitIntervalMsInEffect":        orDefault(kernelRetransMs, t.RetransMs, KernelRetransTimeMs),
		"RouterAdvertisementIntervalInEffect": orDefault(0, t.RAInterval, DaemonRAInterval),
	}
}

func ndpGlobalKind() *Kind {
	return &Kind{
		Name: "NDPGlobal", Class: Config, Singleton: true,
		Doc: "Neighbour discovery's timers (FlexSwitch's NDPGlobal). A timer at FlexSwitch's default (10 minutes, 1 ms, 5 s) leaves the platform's own: the kernel's RFC 4861 timing (a neighbour reachable 15 to 45 s after a confirmation, solicitations 1 s apart), FRR's advertisement interval (10 s); any other value is applied: ReachableTime and RetransmitInterval to every interface's neighbour table in the switch's and every VRF's namespace, RouterAdvertisementInterval to FRR's router advertisements on the BGP-unnumbered interfaces. Setting a timer back to its default gives the platform's own back. See docs/routing.md.",
		CLI: &CLICommand{Words: []string{"ipv6", "nd"}, Prompt: []string{"nd"}, Show: []string{"ipv6", "nd"}},
		Fields: []*Field{
			{Name: "Vrf", Type: String, Key: true, Default: "default", Enum: []string{"default"}},
			{Name: "ReachableTime", Type: Int, Default: int64(NDPFactoryReachableTime), Range: rng(1, 60), CLI: "reachable_time", Doc: "minutes a neighbour stays reachable after a confirmation (the kernel's base, randomised by half either way); 10: the kernel's own (30 s)"},
			{Name: "RetransmitInterval", Type: Int, Default: int64(NDPFactoryRetransmitInterval), Range: rng(1, 3600000), CLI: "retransmit_interval", Doc: "milliseconds between neighbour solicitations: 100..3600000, or 1 for the kernel's own (1000)"},
			{Name: "RouterAdvertisementInterval", Type: Int, Default: int64(NDPFactoryRAInterval), Range: rng(1, 1800), CLI: "ra_interval", Doc: "seconds between the router advertisements FRR sends on BGP-unnumbered interfaces; 5: FRR's own (10)"},
		},
		Check: func(o Object) error {
			if v := o.Int("RetransmitInterval"); v != NDPFactoryRetransmitInterval && v < MinRetransmitIntervalMs {
				return apierr.BadRequest(apierr.CodeInvalidValue, "NDPGlobal", "RetransmitInterval",
					"RetransmitInterval: %d ms would flood every link with solicitations; give %d..3600000 ms (RFC 4861's RETRANS_TIMER is 1000), or %d for the kernel's own", v, MinRetransmitIntervalMs, NDPFactoryRetransmitInterval)
			}
			return nil
		},
		StateDoc: "The timers in effect: the kernel's, read back from the switch namespace's neighbour table defaults, and the advertisement interval FRR is given.",
		StateOnly: []*Field{
			{Name: "ReachableTimeMsInEffect", Type: Int, Doc: "ms: the kernel's base reachable time (net.ipv6.neigh.default.base_reachable_time_ms)"},
			{Name: "RetransmitIntervalMsInEffect", Type: Int, Doc: "ms: the kernel's time between solicitations (net.ipv6.neigh.default.retrans_time_ms)"},
			{Name: "RouterAdvertisementIntervalInEffect", Type: Int, Doc: "s: between router advertisements on BGP-unnumbered interfaces; 0 where no routing daemon runs (a Linux switch without --bgp)"},
		},
	}
}
