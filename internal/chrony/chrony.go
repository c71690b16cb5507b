// Package chrony runs NTP through chronyd: swmgr's own chronyd instance
// (its own configuration, socket and state directory, optionally inside
// the switch's network namespace, never the host's chrony service), one
// file per NTP server in its sources directory applied with
// `chronyc reload sources` (no restart, the other sources keep their
// state), and the sources' state read over chronyd's command socket.
package chrony

import (
	"bytes"
	"context"
	"encoding/csv"
	"errors"
	"fmt"
	"log/slog"
	"net/netip"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/swmgr/swmgr/internal/atomicfile"
	"github.com/swmgr/swmgr/internal/daemon"
)

// Options place one chronyd instance.
type Options struct {
	// Dir holds chrony.conf, the sources directory and, in run/, the
	// command socket, pid file and drift file.
	Dir string
	// Netns is the named network namespace chronyd runs in ("" = ours).
	Netns string
	// NoClock runs chronyd with -x: it measures but never sets the
	// system clock (tests, containers).
	NoClock bool
	// User is the account chronyd drops to; default Debian's "_chrony".
	User string
	// Chronyd and Chronyc are the programs; default /usr/sbin/chronyd and
	// /usr/bin/chronyc.
	Chronyd, Chronyc string
	// Extra lines for chrony.conf (tests: a local server's settings).
	Extra []string
	// Log receives chronyd's starts, exits and restarts (nil: none).
	Log *slog.Logger
}

// Source is one NTP server as chrony takes it.
type Source struct {
	Address string // an IP address or a host name
	MinPoll int    // log2 seconds
	MaxPoll int
	Prefer  bool
}

// Daemon is one chronyd swmgr owns.
type Daemon struct {
	opts  Options
	group *daemon.Group

	mu         sync.Mutex // serialises changes of the sources and the binding
	current    []Source
	bindDevice string
}

// New prepares an instance; Start runs it.
func New(opts Options) (*Daemon, error) {
	if opts.Dir == "" {
		return nil, errors.New("chrony: Options.Dir is required")
	}
	if opts.User == "" {
		opts.User = "_chrony"
	}
	if opts.Chronyd == "" {
		opts.Chronyd = "/usr/sbin/chronyd"
	}
	if opts.Chronyc == "" {
		opts.Chronyc = "/usr/bin/chronyc"
	}
	d := &Daemon{opts: opts}
	argv := []string{opts.Chronyd, "-d", "-f", d.path("chrony.conf"), "-u", opts.User}
	if opts.NoClock {
		argv = append(argv, "-x")
	}
	d.group = daemon.NewGroup([]daemon.Spec{{
		Name: "chronyd", Argv: argv, Netns: opts.Netns, LogPath: d.path("chronyd.log"),
		Ready: func(ctx context.Context) error {
			_, err := d.chronyc(ctx, "-c", "tracking")
			return err
		},
	}}, func(ctx context.Context, name string) error {
		// chronyd reads the sources directory at start: nothing to push
		// back, but say so if it cannot be read.
		_, err := d.chronyc(ctx, "-c", "-n", "sources")
		return err
	}, opts.Log)
	return d, nil
}

func (d *Daemon) path(name string) string { return filepath.Join(d.opts.Dir, name) }
func (d *Daemon) socket() string          { return d.path("run/chronyd.sock") }

// Start writes chrony.conf, prepares the directories and starts chronyd.
func (d *Daemon) Start(ctx context.Context) error {
	acct, err := daemon.LookupAccount(d.opts.User)
	if err != nil {
		return fmt.Errorf("chrony: user %q (install Debian's chrony package): %w", d.opts.User, err)
	}
	uid, gid := acct.UID, acct.GIDs[0]
	// chronyd reads its sources and makes its socket after dropping to its
	// user: the directory is root's, its user must pass through it and
	// every directory above (MakeDir says which one does not).
	if err := daemon.MakeDir(d.opts.Dir, 0o755, 0, 0, acct); err != nil {
		return fmt.Errorf("chrony: %w", err)
	}
	// chronyd refuses a socket directory that others can read.
	for _, sub := range []string{"run", "sources.d"} {
		if err := daemon.MakeDir(d.path(sub), 0o750, uid, gid, acct); err != nil {
			return fmt.Errorf("chrony: %w", err)
		}
	}
	if err := d.stopStale(ctx); err != nil {
		return err
	}
	if err := d.writeConf(d.bindDevice); err != nil {
		return err
	}
	return d.group.Start(ctx)
}

// writeConf writes chrony.conf; dev, when set, binds the NTP client
// sockets to that network device.
func (d *Daemon) writeConf(dev string) error {
	conf := []string{
		"# written by swmgr: each NTP server is a file in sources.d",
		"port 0", // a client: it serves no time
		"cmdport 0",
		"bindcmdaddress " + d.socket(),
		"pidfile " + d.path("run/chronyd.pid"),
		"driftfile " + d.path("run/chrony.drift"),
		"sourcedir " + d.path("sources.d"),
		"makestep 1 3",
	}
	if dev != "" {
		conf = append(conf, "bindacqdevice "+dev)
	}
	conf = append(conf, d.opts.Extra...)
	if err := atomicfile.Replace(d.path("chrony.conf"), []byte(strings.Join(conf, "\n")+"\n"), 0o644); err != nil {
		return fmt.Errorf("chrony: %w", err)
	}
	return nil
}

// BindDevice is the device the NTP client sockets are bound to ("" none).
func (d *Daemon) BindDevice() string {
	d.mu.Lock()
	defer d.mu.Unlock()
	return d.bindDevice
}

// SetBindDevice binds chronyd's NTP client sockets to the network device
// dev ("" unbinds them): the NtpServers' SourceIntf. chrony takes it only
// as the global bindacqdevice directive (chrony 4.3 has no per-source
// interface), which it reads at start: chronyd is restarted, and reads
// its sources again from sources.d. If it does not come back, the
// previous configuration is put back.
func (d *Daemon) SetBindDevice(ctx context.Context, dev string) error {
	if strings.ContainsAny(dev, " \t\n/") || len(dev) > 15 {
		return fmt.Errorf("chrony: %q is not a network device name", dev)
	}
	d.mu.Lock()
	defer d.mu.Unlock()
	if dev == d.bindDevice {
		return nil
	}
	if err := d.writeConf(dev); err != nil {
		return err
	}
	if err := d.group.Restart(ctx); err != nil {
		if werr := d.writeConf(d.bindDevice); werr != nil {
			return fmt.Errorf("chrony: bind to %s: %w; putting the previous configuration back: %v", dev, err, werr)
		}
		if rerr := d.group.Restart(ctx); rerr != nil {
			return fmt.Errorf("chrony: bind to %s: %w; and the restart with the previous configuration failed: %v", dev, err, rerr)
		}
		return fmt.Errorf("chrony: bind to %s: %w", dev, err)
	}
	d.bindDevice = dev
	return nil
}

// stopStale ends a chronyd of this directory that outlived the swmgr that
// started it (a kill -9 of swmgr leaves its daemons running), and waits
// until it is gone: a new chronyd refuses to start while the pid in its pid
// file exists.
func (d *Daemon) stopStale(ctx context.Context) error {
	ctx, cancel := context.WithTimeout(ctx, 10*time.Second)
	defer cancel()
	_, err := daemon.KillStale(ctx, d.path("run/chronyd.pid"), d.path("chrony.conf"))
	if err != nil {
		return fmt.Errorf("chrony: %w", err)
	}
	return nil
}

// Stop ends chronyd.
func (d *Daemon) Stop() { d.group.Stop() }

// Status reports chronyd for SystemStatus.FlexDaemons.
func (d *Daemon) Status() []daemon.Status { return d.group.Status() }

// Pid is chronyd's process id.
func (d *Daemon) Pid() int { return d.group.Pid("chronyd") }

func (d *Daemon) chronyc(ctx context.Context, args ...string) (string, error) {
	cmd := exec.CommandContext(ctx, d.opts.Chronyc, append([]string{"-h", d.socket()}, args...)...)
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		return "", fmt.Errorf("chronyc %s: %w: %s", strings.Join(args, " "), err, strings.TrimSpace(stderr.String()+string(out)))
	}
	return string(out), nil
}

var hostRE = regexp.MustCompile(`^[A-Za-z0-9]([A-Za-z0-9-]{0,62}\.)*[A-Za-z0-9-]{1,63}\.?$`)

// Validate refuses what chrony cannot take, without touching chronyd.
func (s Source) Validate() error {
	if _, err := netip.ParseAddr(s.Address); err != nil && !hostRE.MatchString(s.Address) {
		return fmt.Errorf("NTP server %q is neither an IP address nor a host name", s.Address)
	}
	if s.MinPoll < -6 || s.MaxPoll > 24 || s.MinPoll > s.MaxPoll {
		return fmt.Errorf("NTP server %s: MinPoll %d / MaxPoll %d: want -6 <= MinPoll <= MaxPoll <= 24", s.Address, s.MinPoll, s.MaxPoll)
	}
	return nil
}

// line is the source's line in chrony's configuration syntax.
func (s Source) line() string {
	l := fmt.Sprintf("server %s iburst minpoll %d maxpoll %d", s.Address, s.MinPoll, s.MaxPoll)
	if s.Prefer {
		l += " prefer"
	}
	return l
}

// fileName is the source's file in sources.d.
func (s Source) fileName() string {
	return "swmgr-" + strings.NewReplacer(":", "_", "/", "_").Replace(strings.ToLower(s.Address)) + ".sources"
}

// Apply makes chronyd use exactly these sources: it writes the files that
// differ, removes the others and has chronyd reload them. If chronyd
// refuses, the previous files are put back and reloaded.
func (d *Daemon) Apply(ctx context.Context, sources []Source) error {
	for _, s := range sources {
		if err := s.Validate(); err != nil {
			return fmt.Errorf("chrony: %w", err)
		}
	}
	d.mu.Lock()
	defer d.mu.Unlock()
	before, err := d.readFiles()
	if err != nil {
		return err
	}
	want := map[string]string{}
	for _, s := range sources {
		want[s.fileName()] = s.line() + "\n"
	}
	if err := d.writeFiles(before, want); err != nil {
		return err
	}
	if _, err := d.chronyc(ctx, "reload", "sources"); err != nil {
		if rerr := d.writeFiles(want, before); rerr != nil {
			return fmt.Errorf("chrony: %w; putting the previous sources back: %v", err, rerr)
		}
		d.chronyc(ctx, "reload", "sources")
		return fmt.Errorf("chrony: %w", err)
	}
	d.current = slices.Clone(sources)
	return nil
}

func (d *Daemon) readFiles() (map[string]string, error) {
	entries, err := os.ReadDir(d.path("sources.d"))
	if err != nil {
		return nil, fmt.Errorf("chrony: %w", err)
	}
	out := map[string]string{}
	for _, e := range entries {
		if !strings.HasPrefix(e.Name(), "swmgr-") {
			continue // not ours
		}
		b, err := os.ReadFile(filepath.Join(d.path("sources.d"), e.Name()))
		if err != nil {
			return nil, fmt.Errorf("chrony: %w", err)
		}
		out[e.Name()] = string(b)
	}
	return out, nil
}

func (d *Daemon) writeFiles(have, want map[string]string) error {
	dir := d.path("sources.d")
	for name, content := range want {
		if have[name] == content {
			continue
		}
		if err := atomicfile.Replace(filepath.Join(dir, name), []byte(content), 0o644); err != nil {
			return fmt.Errorf("chrony: %w", err)
		}
	}
	for name := range have {
		if _, ok := want[name]; !ok {
			if err := os.Remove(filepath.Join(dir, name)); err != nil && !errors.Is(err, os.ErrNotExist) {
				return fmt.Errorf("chrony: %w", err)
			}
		}
	}
	return nil
}

// SourceState is what chronyd reports about one source.
type SourceState struct {
	Address  string
	State    string // selected, combined, not-combined, unreachable, falseticker, too-variable
	Selected bool
	Stratum  int
	Reach    int   // the reachability register (octal in chronyc's display)
	Offset   int64 // nanoseconds, the last sample's offset
	Delay    int64 // nanoseconds, the round trip (0 until measured)
	Jitter   int64 // nanoseconds, the standard deviation of the samples
	Poll     int   // log2 seconds between polls now
	// RootDelay and RootDispersion are the server's own, as its packets
	// say (to its reference clock), PeerDispersion the dispersion of the
	// samples of it (nanoseconds; 0 until measured).
	RootDelay, RootDispersion, PeerDispersion int64
}

var stateNames = map[string]string{"*": "selected", "+": "combined", "-": "not-combined", "?": "unreachable", "x": "falseticker", "~": "too-variable"}

// Sources reads every source's state over chronyd's command socket.
func (d *Daemon) Sources(ctx context.Context) ([]SourceState, error) {
	out, err := d.chronyc(ctx, "-c", "-n", "sources")
	if err != nil {
		return nil, err
	}
	states, err := parseSources(out)
	if err != nil {
		return nil, err
	}
	if stats, err := d.chronyc(ctx, "-c", "-n", "sourcestats"); err == nil {
		applyStats(states, stats)
	}
	if data, err := d.chronyc(ctx, "-c", "-n", "ntpdata"); err == nil {
		applyNTPData(states, data)
	}
	return states, nil
}

func seconds(s string) int64 {
	f, err := strconv.ParseFloat(s, 64)
	if err != nil {
		return 0
	}
	return int64(f * 1e9)
}

// parseSources reads `chronyc -c -n sources`: mode, state, address,
// stratum, poll, reach (octal), last rx, offset, raw offset, error.
func parseSources(out string) ([]SourceState, error) {
	recs, err := csv.NewReader(strings.NewReader(out)).ReadAll()
	if err != nil {
		return nil, fmt.Errorf("chrony: sources: %w", err)
	}
	var states []SourceState
	for _, r := range recs {
		if len(r) < 10 || r[0] != "^" {
			continue // not a server (a peer or a reference clock)
		}
		stratum, _ := strconv.Atoi(r[3])
		poll, _ := strconv.Atoi(r[4])
		reach, _ := strconv.ParseInt(r[5], 8, 32)
		states = append(states, SourceState{Address: r[2], State: stateNames[r[1]], Selected: r[1] == "*",
			Stratum: stratum, Poll: poll, Reach: int(reach), Offset: seconds(r[7])})
	}
	return states, nil
}

// applyStats reads `chronyc -c -n sourcestats`: address, samples, runs,
// span, frequency, skew, offset, standard deviation.
func applyStats(states []SourceState, out string) {
	recs, _ := csv.NewReader(strings.NewReader(out)).ReadAll()
	for _, r := range recs {
		if len(r) < 8 {
			continue
		}
		for i := range states {
			if states[i].Address == r[0] {
				states[i].Jitter = seconds(r[7])
			}
		}
	}
}

// applyNTPData reads `chronyc -c -n ntpdata` (chrony 4.x): remote address
// and id, port, local address and id, leap, version, mode, stratum, poll
// (log2 and seconds), precision (log2 and seconds), root delay, root
// dispersion, reference id and name, reference time, offset, peer delay,
// peer dispersion, response time, and more.
func applyNTPData(states []SourceState, out string) {
	recs, _ := csv.NewReader(strings.NewReader(out)).ReadAll()
	for _, r := range recs {
		if len(r) < 20 {
			continue
		}
		for i := range states {
			if states[i].Address == r[0] {
				states[i].RootDelay, states[i].RootDispersion = seconds(r[13]), seconds(r[14])
				states[i].Delay, states[i].PeerDispersion = seconds(r[19]), seconds(r[20])
			}
		}
	}
}
