package main

import (
	"fmt"

	"github.com/spf13/pflag"

	"github.com/swmgr/swmgr/internal/service"
)

// daemonFlags choose, on the Linux backend, who runs BGP, NTP, LLDP, DHCP
// relay and the host settings. Their zero value (tests that build serveOptions by
// hand) is "sim" for all: nothing is started and the host is not renamed
// unless asked for; the command line's defaults are the real parts, but
// for LLDP, which starts only when asked for (--lldp lldpd): an LLDP
// agent announces the switch to its neighbors, and for DHCP relay
// (--dhcp-relay dhcrelay), which needs Debian's isc-dhcp-relay.
type daemonFlags struct {
	bgp, ntp, system  string
	lldp, lldpDir     string
	relay, relayDir   string
	frrDir, chronyDir string
	etcDir            string
	ntpNoClock        bool
}

func addDaemonFlags(f *pflag.FlagSet, d *daemonFlags) {
	f.StringVar(&d.bgp, "bgp", "frr", "linux backend: who runs BGP: frr (FRR's bgpd and zebra, started by swmgr) or sim")
	f.StringVar(&d.ntp, "ntp", "chrony", "linux backend: who runs NTP: chrony (a chronyd started by swmgr) or sim")
	f.StringVar(&d.system, "system", "host", "linux backend: SystemParam Hostname and Timezone: host (set on this machine) or sim")
	f.StringVar(&d.lldp, "lldp", "sim", "linux backend: who runs LLDP: lldpd (an lldpd started by swmgr, on the front-panel ports) or sim")
	f.StringVar(&d.lldpDir, "lldp-dir", "/run/swmgr/lldpd", "linux backend: directory of swmgr's lldpd (control socket, log)")
	f.StringVar(&d.relay, "dhcp-relay", "sim", "linux backend: who relays DHCP: dhcrelay (Debian's isc-dhcp-relay, started by swmgr, one per VRF) or sim")
	f.StringVar(&d.relayDir, "dhcp-relay-dir", "/run/swmgr/dhcrelay", "linux backend: directory of swmgr's dhcrelays (logs, pid files)")
	f.StringVar(&d.frrDir, "frr-dir", "/run/swmgr/frr", "linux backend: directory of swmgr's FRR (configuration, vty sockets, logs)")
	f.StringVar(&d.chronyDir, "chrony-dir", "/run/swmgr/chrony", "linux backend: directory of swmgr's chronyd (configuration, sources.d, socket)")
	f.StringVar(&d.etcDir, "etc-dir", "/etc", "linux backend: where hostname, localtime, timezone and resolv.conf are written")
	f.BoolVar(&d.ntpNoClock, "ntp-no-clock", false, "linux backend: chronyd measures but never sets the clock (containers, tests)")
}

// check refuses unknown choices. On the simulated switch the choices
// do not apply: everything there is simulated.
func (d *daemonFlags) check() error {
	for _, c := range []struct{ flag, val, real string }{{"--bgp", d.bgp, "frr"}, {"--ntp", d.ntp, "chrony"}, {"--system", d.system, "host"}, {"--lldp", d.lldp, "lldpd"}, {"--dhcp-relay", d.relay, "dhcrelay"}} {
		if c.val != "" && c.val != "sim" && c.val != c.real {
			return fmt.Errorf("%s %q: use %s or sim", c.flag, c.val, c.real)
		}
	}
	return nil
}

// apply sets the Linux dataplane's options for the real parts chosen.
func (d *daemonFlags) apply(lo *service.LinuxOptions) {
	if d.bgp == "frr" {
		lo.FRRDir = d.frrDir
	}
	if d.ntp == "chrony" {
		lo.ChronyDir, lo.ChronyNoClock = d.chronyDir, d.ntpNoClock
	}
	if d.lldp == "lldpd" {
		lo.LLDPDir = d.lldpDir
	}
	if d.relay == "dhcrelay" {
		lo.DHCPRelayDir = d.relayDir
	}
	if d.system == "host" {
		lo.EtcDir = d.etcDir
	}
}
