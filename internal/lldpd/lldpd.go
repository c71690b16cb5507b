// Package lldpd runs LLDP (802.1AB) through lldpd: swmgr's own lldpd
// instance (its own control socket, optionally inside the switch's
// network namespace, never the host's lldpd service),
// configured with lldpcli over that socket, and the neighbors read with
// `lldpcli -f json0 show neighbors details`. lldpd starts paused and
// reads no configuration file (not the host's /etc/lldpd.conf or
// lldpd.d): what it runs is only what Apply sends.
//
// Every value reaches lldpcli as an argument of its own (never through a
// shell or a command file), and the values are checked first: a system
// name or a port name is made of safe characters only, so no value can
// become another lldpcli command or word.
package lldpd

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"maps"
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

// Options place one lldpd instance.
type Options struct {
	// Dir holds lldpd's control socket, its pid and its log.
	Dir string
	// Netns is the named network namespace lldpd runs in ("" = ours).
	Netns string
	// Lldpd and Lldpcli are the programs; default /usr/sbin/lldpd and
	// /usr/sbin/lldpcli.
	Lldpd, Lldpcli string
	// Log receives lldpd's starts, exits and restarts (nil: none).
	Log *slog.Logger
}

// Mode is what LLDP does on one port, in lldpcli's words.
type Mode string

// The modes of `configure ports <port> lldp status`.
const (
	RxAndTx  Mode = "rx-and-tx"
	RxOnly   Mode = "rx-only"
	TxOnly   Mode = "tx-only"
	Disabled Mode = "disabled"
)

// Config is all of LLDP's configuration, applied as a whole.
type Config struct {
	// Enable runs LLDP; when false lldpd is paused (it neither sends nor
	// receives).
	Enable bool
	// SystemName is the name announced ("" lets lldpd announce the
	// kernel's host name).
	SystemName string
	// TxInterval is the seconds between frames (0: lldpd's default, 30).
	TxInterval int
	// Ports are the ports LLDP runs on, by network device, and what it
	// does there; lldpd ignores every other device.
	Ports map[string]Mode
}

// safeNameRE is a system name lldpcli takes as one plain word: a host
// name's characters.
var safeNameRE = regexp.MustCompile(`^[A-Za-z0-9][A-Za-z0-9._-]{0,63}$`)

// netdevRE is a network device name without a character lldpcli's
// interface pattern treats specially (',', '!', '*', '?').
var netdevRE = regexp.MustCompile(`^[A-Za-z0-9][A-Za-z0-9._-]{0,14}$`)

// Validate refuses what cannot be passed to lldpcli as plain words.
func (c Config) Validate() error {
	if c.SystemName != "" && !safeNameRE.MatchString(c.SystemName) {
		return fmt.Errorf("system name %q: want 1..64 letters, digits, '.', '_' or '-', starting with a letter or digit", c.SystemName)
	}
	if c.TxInterval < 0 || c.TxInterval > 3600 {
		return fmt.Errorf("transmit interval %d s: want 1..3600", c.TxInterval)
	}
	for dev, m := range c.Ports {
		if !netdevRE.MatchString(dev) {
			return fmt.Errorf("port %q is not a network device name", dev)
		}
		switch m {
		case RxAndTx, RxOnly, TxOnly, Disabled:
		default:
			return fmt.Errorf("port %s: LLDP mode %q: want %s, %s, %s or %s", dev, m, RxAndTx, RxOnly, TxOnly, Disabled)
		}
	}
	return nil
}

// commands are the lldpcli commands that make lldpd run c, each a list of
// words, keyed by what they set (a later command of the same key replaces
// an earlier one).
func (c Config) commands() []command {
	txInterval := c.TxInterval
	if txInterval == 0 {
		txInterval = 30
	}
	devs := slices.Sorted(maps.Keys(c.Ports))
	pattern := strings.Join(devs, ",")
	if pattern == "" {
		// No port: a pattern that matches no device name.
		pattern = "!*"
	}
	out := []command{
		// The port id is the port's name (fpPort1), as a switch's is,
		// rather than its MAC address.
		{"portidsubtype", []string{"configure", "lldp", "portidsubtype", "ifname"}},
		{"pattern", []string{"configure", "system", "interface", "pattern", pattern}},
		{"tx-interval", []string{"configure", "lldp", "tx-interval", strconv.Itoa(txInterval)}},
	}
	if c.SystemName != "" {
		out = append(out, command{"hostname", []string{"configure", "system", "hostname", c.SystemName}})
	} else {
		out = append(out, command{"hostname", []string{"unconfigure", "system", "hostname"}})
	}
	for _, dev := range devs {
		out = append(out, command{"port " + dev, []string{"configure", "ports", dev, "lldp", "status", string(c.Ports[dev])}})
	}
	if c.Enable {
		out = append(out, command{"run", []string{"resume"}})
	} else {
		out = append(out, command{"run", []string{"pause"}})
	}
	return out
}

type command struct {
	key  string
	args []string
}

// Daemon is one lldpd swmgr owns.
type Daemon struct {
	opts  Options
	group *daemon.Group

	mu   sync.Mutex // serialises changes of the configuration
	sent map[string][]string
	cfg  Config
}

// New prepares an instance; Start runs it.
func New(opts Options) (*Daemon, error) {
	if opts.Dir == "" {
		return nil, errors.New("lldpd: Options.Dir is required")
	}
	if opts.Lldpd == "" {
		opts.Lldpd = "/usr/sbin/lldpd"
	}
	if opts.Lldpcli == "" {
		opts.Lldpcli = "/usr/sbin/lldpcli"
	}
	d := &Daemon{opts: opts}
	// -d: in the foreground, logging to stderr; -u: our control socket,
	// so that a host lldpd and another swmgr's run beside this one. At
	// start lldpd runs "lldpcli <its configuration files> resume" (-L):
	// /bin/true instead, so that it reads none of the host's files and
	// stays paused until Apply says whether to run (a resume of its own
	// could otherwise come after Apply's pause).
	argv := []string{opts.Lldpd, "-d", "-u", d.socket(), "-L", "/bin/true"}
	d.group = daemon.NewGroup([]daemon.Spec{{
		Name: "lldpd", Argv: argv, Netns: opts.Netns, LogPath: d.path("lldpd.log"),
		Ready: func(ctx context.Context) error {
			_, err := d.lldpcli(ctx, "show", "configuration")
			return err
		},
	}}, func(ctx context.Context, name string) error {
		// A restarted lldpd starts from its defaults: send everything.
		if err := d.writePid(); err != nil {
			return err
		}
		d.mu.Lock()
		defer d.mu.Unlock()
		d.sent = nil
		return d.send(ctx, d.cfg)
	}, opts.Log)
	return d, nil
}

func (d *Daemon) path(name string) string { return filepath.Join(d.opts.Dir, name) }
func (d *Daemon) socket() string          { return d.path("lldpd.socket") }

// Start starts lldpd, paused until Apply says what to run. An lldpd of
// this directory that outlived the swmgr that started it (a kill -9 of
// swmgr leaves it running, holding the socket's lock) is ended first.
func (d *Daemon) Start(ctx context.Context) error {
	// lldpcli is set-user-id _lldpd: that user, with swmgr's groups, must
	// pass through the directory and every one above to reach the socket
	// (MakeDir says which one does not).
	acct, err := daemon.LookupAccount(lldpUser)
	if err != nil {
		return fmt.Errorf("lldpd: user %q (install Debian's lldpd package): %w", lldpUser, err)
	}
	if err := daemon.MakeDir(d.opts.Dir, 0o755, 0, 0, daemon.SetUIDAccount(acct)); err != nil {
		return fmt.Errorf("lldpd: %w", err)
	}
	stale, cancel := context.WithTimeout(ctx, 10*time.Second)
	defer cancel()
	// lldpd renames itself "lldpd: monitor.": its command line no longer
	// holds its socket's path, so the pid file of this directory says
	// which lldpd is ours.
	if _, err := daemon.KillStale(stale, d.pidFile(), "lldpd"); err != nil {
		return fmt.Errorf("lldpd: %w", err)
	}
	if err := d.group.Start(ctx); err != nil {
		return fmt.Errorf("lldpd: %w", err)
	}
	return d.writePid()
}

// lldpUser is the account lldpd and lldpcli run as (Debian's).
const lldpUser = "_lldpd"

func (d *Daemon) pidFile() string { return d.path("lldpd.pid") }

// writePid records lldpd's pid (lldpd writes no pid file in the
// foreground) for the KillStale of the next start.
func (d *Daemon) writePid() error {
	if err := atomicfile.Replace(d.pidFile(), []byte(strconv.Itoa(d.Pid())+"\n"), 0o644); err != nil {
		return fmt.Errorf("lldpd: %w", err)
	}
	return nil
}

// Stop ends lldpd.
func (d *Daemon) Stop() { d.group.Stop() }

// Status reports lldpd for SystemStatus.FlexDaemons.
func (d *Daemon) Status() []daemon.Status { return d.group.Status() }

// Pid is lldpd's process id.
func (d *Daemon) Pid() int { return d.group.Pid("lldpd") }

// Apply makes lldpd run c: it sends the commands whose words changed
// since the last Apply. If lldpd refuses one, the previous configuration
// is sent back.
func (d *Daemon) Apply(ctx context.Context, c Config) error {
	if err := c.Validate(); err != nil {
		return fmt.Errorf("lldpd: %w", err)
	}
	d.mu.Lock()
	defer d.mu.Unlock()
	if err := d.send(ctx, c); err != nil {
		// The previous configuration goes back even when ctx has run out
		// (a start on a loaded machine), within a bound of its own.
		back, cancel := context.WithTimeout(context.WithoutCancel(ctx), rollbackTimeout)
		defer cancel()
		if rerr := d.send(back, d.cfg); rerr != nil {
			return fmt.Errorf("lldpd: %w; sending the previous configuration back: %v", err, rerr)
		}
		return fmt.Errorf("lldpd: %w", err)
	}
	d.cfg = c
	return nil
}

// rollbackTimeout bounds sending the previous configuration back after a
// failed Apply.
const rollbackTimeout = time.Minute

// send sends the commands of c that differ from those sent last.
func (d *Daemon) send(ctx context.Context, c Config) error {
	if d.sent == nil {
		d.sent = map[string][]string{}
	}
	for _, cmd := range c.commands() {
		if slices.Equal(d.sent[cmd.key], cmd.args) {
			continue
		}
		if _, err := d.lldpcli(ctx, cmd.args...); err != nil {
			delete(d.sent, cmd.key) // unknown: send it again next time
			return err
		}
		d.sent[cmd.key] = cmd.args
	}
	return nil
}

func (d *Daemon) lldpcli(ctx context.Context, args ...string) ([]byte, error) {
	cmd := exec.CommandContext(ctx, d.opts.Lldpcli, append([]string{"-u", d.socket()}, args...)...)
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	// lldpcli exits 0 on some refusals: what it says on stderr counts.
	if err == nil && bytes.Contains(stderr.Bytes(), []byte("[WARN")) {
		err = errors.New("refused")
	}
	if err != nil {
		return nil, fmt.Errorf("lldpcli %s: %w: %s", strings.Join(args, " "), err, strings.TrimSpace(stderr.String()))
	}
	return out, nil
}

// Neighbor is what one neighbor announced on one port.
type Neighbor struct {
	Port            string // the local network device it was heard on
	ChassisID       string
	ChassisIDType   string // mac, ip, local, ifname...
	PortID          string
	PortDescription string
	SystemName      string
	SystemDescr     string
	MgmtAddresses   []string
	Capabilities    []string // what the neighbor can be (Bridge, Router...)
	Enabled         []string // what it is
	TTL             int      // seconds
	VlanID          int      // the port VLAN id (802.1), 0 when not announced
}

// Neighbors reads the neighbors lldpd knows.
func (d *Daemon) Neighbors(ctx context.Context) ([]Neighbor, error) {
	out, err := d.lldpcli(ctx, "-f", "json0", "show", "neighbors", "details")
	if err != nil {
		return nil, fmt.Errorf("lldpd: %w", err)
	}
	return ParseNeighbors(out)
}

// value is json0's leaf: a list of {"value": ...} (or {"type": ...,
// "value": ...}) objects.
type value []struct {
	Type    string `json:"type"`
	Value   string `json:"value"`
	Enabled bool   `json:"enabled"`
}

func (v value) first() string {
	if len(v) == 0 {
		return ""
	}
	return v[0].Value
}

// ParseNeighbors reads `lldpcli -f json0 show neighbors details`, whose
// lists are always lists (json0's fixed structure).
func ParseNeighbors(out []byte) ([]Neighbor, error) {
	var doc struct {
		LLDP []struct {
			Interface []struct {
				Name    string `json:"name"`
				Chassis []struct {
					ID         value `json:"id"`
					Name       value `json:"name"`
					Descr      value `json:"descr"`
					MgmtIP     value `json:"mgmt-ip"`
					Capability value `json:"capability"`
				} `json:"chassis"`
				Port []struct {
					ID    value `json:"id"`
					Descr value `json:"descr"`
					TTL   value `json:"ttl"`
				} `json:"port"`
				Vlan []struct {
					VlanID string `json:"vlan-id"`
					PVID   bool   `json:"pvid"`
				} `json:"vlan"`
			} `json:"interface"`
		} `json:"lldp"`
	}
	if err := json.Unmarshal(out, &doc); err != nil {
		return nil, fmt.Errorf("lldpd: neighbors: %w", err)
	}
	var ns []Neighbor
	for _, l := range doc.LLDP {
		for _, i := range l.Interface {
			n := Neighbor{Port: i.Name}
			for _, c := range i.Chassis {
				if len(c.ID) > 0 {
					n.ChassisID, n.ChassisIDType = c.ID[0].Value, c.ID[0].Type
				}
				n.SystemName, n.SystemDescr = c.Name.first(), c.Descr.first()
				for _, a := range c.MgmtIP {
					n.MgmtAddresses = append(n.MgmtAddresses, a.Value)
				}
				for _, cap := range c.Capability {
					n.Capabilities = append(n.Capabilities, cap.Type)
					if cap.Enabled {
						n.Enabled = append(n.Enabled, cap.Type)
					}
				}
			}
			for _, p := range i.Port {
				n.PortID, n.PortDescription = p.ID.first(), p.Descr.first()
				n.TTL, _ = strconv.Atoi(p.TTL.first())
			}
			for _, v := range i.Vlan {
				if v.PVID {
					n.VlanID, _ = strconv.Atoi(v.VlanID)
				}
			}
			ns = append(ns, n)
		}
	}
	return ns, nil
}

// Counters is what lldpd counted on one port since it started.
type Counters struct {
	Port           string // the local network device
	Tx, Rx         int64  // frames sent and received
	RxDiscarded    int64  // frames received and thrown away (malformed)
	RxUnrecognized int64  // TLVs received that lldpd does not know
	AgedOut        int64  // neighbors forgotten when their TTL ran out
	Inserted       int64  // neighbors learned
	Deleted        int64  // neighbors removed (a shutdown frame)
}

// Statistics reads lldpd's counters of every port it runs on.
func (d *Daemon) Statistics(ctx context.Context) ([]Counters, error) {
	out, err := d.lldpcli(ctx, "-f", "json0", "show", "statistics")
	if err != nil {
		return nil, fmt.Errorf("lldpd: %w", err)
	}
	return ParseStatistics(out)
}

// ParseStatistics reads `lldpcli -f json0 show statistics`: per interface,
// each counter a list of one {"<name>": "<decimal>"}.
func ParseStatistics(out []byte) ([]Counters, error) {
	var doc struct {
		LLDP []struct {
			Interface []map[string]json.RawMessage `json:"interface"`
		} `json:"lldp"`
	}
	if err := json.Unmarshal(out, &doc); err != nil {
		return nil, fmt.Errorf("lldpd: statistics: %w", err)
	}
	var cs []Counters
	for _, l := range doc.LLDP {
		for _, i := range l.Interface {
			var c Counters
			if err := json.Unmarshal(i["name"], &c.Port); err != nil {
				return nil, fmt.Errorf("lldpd: statistics: interface name: %w", err)
			}
			for name, into := range map[string]*int64{"tx": &c.Tx, "rx": &c.Rx, "rx_discarded_cnt": &c.RxDiscarded,
				"rx_unrecognized_cnt": &c.RxUnrecognized, "ageout_cnt": &c.AgedOut, "insert_cnt": &c.Inserted, "delete_cnt": &c.Deleted} {
				var leaf []map[string]string
				if raw, ok := i[name]; ok {
					if err := json.Unmarshal(raw, &leaf); err != nil {
						return nil, fmt.Errorf("lldpd: statistics of %s: %s: %w", c.Port, name, err)
					}
				}
				if len(leaf) > 0 {
					n, err := strconv.ParseInt(leaf[0][name], 10, 64)
					if err != nil {
						return nil, fmt.Errorf("lldpd: statistics of %s: %s: %w", c.Port, name, err)
					}
					*into = n
				}
			}
			cs = append(cs, c)
		}
	}
	return cs, nil
}
