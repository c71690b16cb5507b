package linux

import (
	"context"
	"fmt"
	"maps"
	"sync"
	"time"

	"github.com/swmgr/swmgr/internal/chrony"
	"github.com/swmgr/swmgr/internal/model"
)

// NtpServer on the Linux backend: each server is a source of swmgr's
// chronyd (a file in its sources directory, then `chronyc reload
// sources`: no restart, the other sources keep their samples). The
// servers of one apply are sent to chronyd once; the undo sends the
// previous set.
//
// SourceIntf binds the NTP client sockets to a device. chrony 4.3 has no
// per-source interface, only the global bindacqdevice, read at start: so
// every server naming a device must name the same one (two are refused,
// naming both), a change of device restarts chronyd, and servers naming
// none (FlexSwitch's default ma1 where the switch has no such netdev) use
// the bound device too. A front-panel port is its netdev; another name is
// a netdev of the switch namespace (eth0, a management port).

type ntpRunner struct {
	daemon  *chrony.Daemon
	mu      sync.Mutex
	applied map[string]model.Object // by IpAddr
	sources readCache[[]chrony.SourceState]
}

func sourceOf(o model.Object) chrony.Source {
	return chrony.Source{Address: o.Str("IpAddr"), MinPoll: int(o.Int("MinPoll")), MaxPoll: int(o.Int("MaxPoll")), Prefer: o.Bool("Prefer")}
}

func (b *Backend) ntpStage(tx *Tx) map[string]model.Object {
	return tx.staged("chrony", "NtpServer", func() any {
		b.ntp.mu.Lock()
		defer b.ntp.mu.Unlock()
		staged := maps.Clone(b.ntp.applied)
		if staged == nil {
			staged = map[string]model.Object{}
		}
		return staged
	}, b.flushNTP).(map[string]model.Object)
}

func sourcesOf(objs map[string]model.Object) []chrony.Source {
	keys := sortedKeys(objs)
	out := make([]chrony.Source, 0, len(keys))
	for _, k := range keys {
		out = append(out, sourceOf(objs[k]))
	}
	return out
}

// defaultSourceIntf is FlexSwitch's default SourceIntf, its management
// port: where the switch has no netdev of that name it binds nothing.
const defaultSourceIntf = "ma1"

// ntpDevice is the device the servers' SourceIntf binds chrony to ("" for
// none), refusing two different ones and names that are no device.
func (b *Backend) ntpDevice(objs map[string]model.Object) (string, error) {
	dev, from := "", ""
	for _, k := range sortedKeys(objs) {
		intf := objs[k].Str("SourceIntf")
		d := b.ports.Netdev(intf)
		if d == "" && intf != "" {
			if _, err := b.k.h.LinkByName(intf); err == nil {
				d = intf
			} else if intf != defaultSourceIntf {
				return "", &Refusal{Field: "SourceIntf", Msg: fmt.Sprintf("NTP server %s: SourceIntf %s is neither a front-panel port nor a netdev of the switch", k, intf)}
			}
		}
		if d == "" {
			continue
		}
		if dev != "" && d != dev {
			return "", &Refusal{Field: "SourceIntf", Msg: fmt.Sprintf("NTP server %s has SourceIntf %s and %s has %s: chrony binds all its NTP client sockets to one device (bindacqdevice); give the servers the same SourceIntf",
				from, objs[from].Str("SourceIntf"), k, intf)}
		}
		dev, from = d, k
	}
	return dev, nil
}

func (b *Backend) flushNTP(tx *Tx, value any) error {
	staged := value.(map[string]model.Object)
	b.ntp.mu.Lock()
	previous := b.ntp.applied
	b.ntp.mu.Unlock()
	if _, err := b.ntpDevice(staged); err != nil {
		return err
	}
	set := func(objs map[string]model.Object) error {
		ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
		defer cancel()
		dev, err := b.ntpDevice(objs)
		if err != nil {
			return err
		}
		if err := b.ntp.daemon.SetBindDevice(ctx, dev); err != nil {
			return unavailable("NtpServer", "chronyd", err)
		}
		if err := b.ntp.daemon.Apply(ctx, sourcesOf(objs)); err != nil {
			return unavailable("NtpServer", "chronyd", err)
		}
		b.ntp.mu.Lock()
		b.ntp.applied = objs
		b.ntp.mu.Unlock()
		b.ntp.sources.forget()
		return nil
	}
	return tx.change("apply the NTP servers to chrony", func() error { return set(staged) }, func() error { return set(previous) })
}

var ntpDriver = &driver{
	check: func(b *Backend, c changeView) error {
		if err := sourceOf(c.after()).Validate(); err != nil {
			return &Refusal{Field: "IpAddr", Msg: err.Error()}
		}
		return nil
	},
	ensure: func(b *Backend, tx *Tx, after, before model.Object) error {
		b.ntpStage(tx)[after.Str("IpAddr")] = after.Clone()
		return nil
	},
	remove: func(b *Backend, tx *Tx, before model.Object) error {
		delete(b.ntpStage(tx), before.Str("IpAddr"))
		return nil
	},
	state: func(b *Backend, o model.Object) (model.Object, error) { return b.ntp.state(o) },
}

// state reports what chronyd says of the server; a server chronyd does
// not list (a name it could not resolve yet) is "unknown".
func (r *ntpRunner) state(o model.Object) (model.Object, error) {
	srcs, err := r.sources.get(func() ([]chrony.SourceState, error) {
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		defer cancel()
		srcs, err := r.daemon.Sources(ctx)
		if err != nil {
			return nil, unavailable("NtpServer", "chronyd", err)
		}
		return srcs, nil
	})
	if err != nil {
		return nil, err
	}
	st := model.Object{"Status": "unknown", "Stratum": int64(0), "Reach": int64(0), "Selected": false,
		"OffsetUsec": int64(0), "DelayUsec": int64(0), "JitterUsec": int64(0), "PollSec": int64(0), "RootDelayUsec": int64(0), "RootDispersionUsec": int64(0)}
	for _, s := range srcs {
		if s.Address != o.Str("IpAddr") {
			continue
		}
		st["Status"], st["Stratum"], st["Reach"], st["Selected"] = s.State, int64(s.Stratum), int64(s.Reach), s.Selected
		st["OffsetUsec"], st["DelayUsec"], st["JitterUsec"] = s.Offset/1000, s.Delay/1000, s.Jitter/1000
		if s.Poll >= 0 && s.Poll < 32 {
			st["PollSec"] = int64(1) << s.Poll
		}
		// As RFC 5905's root delay and dispersion of the system through
		// this peer: the server's own plus those of the path to it.
		st["RootDelayUsec"], st["RootDispersionUsec"] = (s.RootDelay+s.Delay)/1000, (s.RootDispersion+s.PeerDispersion)/1000
	}
	return st, nil
}
