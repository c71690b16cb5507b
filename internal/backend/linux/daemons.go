package linux

import (
	"context"
	"fmt"
	"log/slog"
	"os"
	"path/filepath"
	"time"

	"github.com/swmgr/swmgr/internal/chrony"
	"github.com/swmgr/swmgr/internal/daemon"
	"github.com/swmgr/swmgr/internal/dhcrelay"
	"github.com/swmgr/swmgr/internal/frr"
	"github.com/swmgr/swmgr/internal/lldpd"
)

// startDaemons starts the daemons the options ask for, in the switch's
// namespace, and registers the drivers of their kinds. The daemons start
// with no configuration of swmgr's: the engine's replay at start hands
// over every stored object, which is applied like any commit.
func (b *Backend) startDaemons() error {
	b.daemonDrivers = map[string]*driver{}
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	if o := b.opts.FRR; o != nil {
		opts := *o
		b.placeDaemon(&opts.Netns, &opts.Log)
		// What a previous run left is not the store's: start empty.
		if err := os.Remove(filepath.Join(opts.Dir, "bgpd.conf")); err != nil && !os.IsNotExist(err) {
			return fmt.Errorf("frr: %w", err)
		}
		r, err := frr.New(opts)
		if err != nil {
			return err
		}
		if err := r.Start(ctx); err != nil {
			return fmt.Errorf("starting FRR for BGP: %w", err)
		}
		b.bgp = newBGPRunner(r, b.opts.StateCache)
		for _, k := range []string{"BGPGlobal", "BGPVrf", "BGPv4PeerGroup", "BGPv4Neighbor", "BGPv6PeerGroup", "BGPv6Neighbor", "BGPv4Aggregate", "BGPv6Aggregate"} {
			b.daemonDrivers[k] = bgpDriver(k)
		}
		for _, k := range []string{"BGPL2vpnEvpn", "BGPL2vpnEvpnNeighbor"} {
			b.daemonDrivers[k] = evpnDriver(k) // vxlan.go
		}
		for _, k := range policyKinds {
			b.daemonDrivers[k] = policyDriver(k)
		}
		b.daemonDrivers["BGPv4Neighbor"] = withBfdNeighborState(b.daemonDrivers["BGPv4Neighbor"])
		for _, k := range bfdKinds {
			b.daemonDrivers[k] = bfdDriver(k)
		}
		b.startBFD(r)
	}
	if o := b.opts.Chrony; o != nil {
		opts := *o
		b.placeDaemon(&opts.Netns, &opts.Log)
		d, err := chrony.New(opts)
		if err == nil {
			err = d.Start(ctx)
		}
		if err != nil {
			b.stopDaemons()
			return fmt.Errorf("starting chronyd for NTP: %w", err)
		}
		// The sources a previous run left are not the store's either.
		if err := d.Apply(ctx, nil); err != nil {
			d.Stop()
			b.stopDaemons()
			return err
		}
		b.ntp = &ntpRunner{daemon: d, applied: nil, sources: newReadCache[[]chrony.SourceState](b.opts.StateCache)}
		b.daemonDrivers["NtpServer"] = ntpDriver
	}
	if o := b.opts.LLDP; o != nil {
		opts := *o
		b.placeDaemon(&opts.Netns, &opts.Log)
		d, err := lldpd.New(opts)
		if err == nil {
			err = d.Start(ctx)
		}
		if err != nil {
			b.stopDaemons()
			return fmt.Errorf("starting lldpd for LLDP: %w", err)
		}
		b.lldp = &lldpRunner{daemon: d, heard: newReadCache[lldpHeard](b.opts.StateCache)}
		// Until the replay hands over LLDPGlobal: paused, on no port but
		// the front-panel ones.
		if err := d.Apply(ctx, b.lldpDaemonConfig(lldpConfig{})); err != nil {
			b.stopDaemons()
			return err
		}
		b.daemonDrivers["LLDPGlobal"] = lldpGlobalDriver
		b.daemonDrivers["LLDPIntf"] = lldpIntfDriver
	}
	if o := b.opts.DHCPRelay; o != nil {
		opts := *o
		b.placeDaemon(&opts.Netns, &opts.Log)
		d, err := dhcrelay.New(opts)
		if err == nil {
			err = d.Start(ctx)
		}
		if err != nil {
			b.stopDaemons()
			return fmt.Errorf("starting dhcrelay for DHCP relay: %w", err)
		}
		// Until the replay hands over the relay's objects: none runs, and
		// the counters a previous run left are removed.
		if err := d.Apply(ctx, dhcrelay.Config{HopCount: 32}); err != nil {
			b.stopDaemons()
			return err
		}
		b.relay = &relayRunner{daemon: d, counts: newReadCache[dhcrelay.Counters](b.opts.StateCache)}
		b.daemonDrivers["DhcpRelayGlobal"] = dhcpRelayGlobalDriver
		b.daemonDrivers["DhcpRelayIntf"] = dhcpRelayIntfDriver
	}
	if o := b.opts.System; o != nil {
		o.defaults()
		b.daemonDrivers["SystemParam"] = systemDriver
		b.startDNS(o.EtcDir)
	}
	return nil
}

// placeDaemon defaults a daemon's namespace to the switch's and its log
// to the backend's.
func (b *Backend) placeDaemon(netns *string, log **slog.Logger) {
	if *netns == "" {
		*netns = b.opts.Kernel.Netns
	}
	if *log == nil {
		*log = b.log
	}
}

func (b *Backend) stopDaemons() {
	if b.bfd != nil {
		b.bfd.stop()
	}
	if b.bgp != nil {
		b.bgp.router.Stop()
	}
	if b.ntp != nil {
		b.ntp.daemon.Stop()
	}
	if b.lldp != nil {
		b.lldp.daemon.Stop()
	}
	if b.relay != nil {
		b.relay.daemon.Stop()
	}
}

// Daemons reports the daemons the backend runs (SystemStatus.FlexDaemons):
// each one's state, pid and restarts.
func (b *Backend) Daemons() []daemon.Status {
	var out []daemon.Status
	if b.bgp != nil {
		out = append(out, b.bgp.router.Status()...)
	}
	if b.ntp != nil {
		out = append(out, b.ntp.daemon.Status()...)
	}
	if b.lldp != nil {
		out = append(out, b.lldp.daemon.Status()...)
	}
	if b.relay != nil {
		out = append(out, b.relay.daemon.Status()...)
	}
	return out
}

// FRR is the FRR instance running BGP (nil when BGP is not FRR's).
func (b *Backend) FRR() *frr.Router {
	if b.bgp == nil {
		return nil
	}
	return b.bgp.router
}

// Chrony is the chronyd running NTP (nil when NTP is not chrony's).
func (b *Backend) Chrony() *chrony.Daemon {
	if b.ntp == nil {
		return nil
	}
	return b.ntp.daemon
}
