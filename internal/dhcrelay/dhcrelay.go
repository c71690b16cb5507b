// Package dhcrelay runs DHCP relay (RFC 1542, option 82 of RFC 3046)
// through Debian's isc-dhcp-relay: one dhcrelay per VRF that relays,
// in the foreground under swmgr's supervision (internal/daemon), with
// option 82 appended (its circuit id is the name of the interface the
// request came in on), and counts kept by nftables counters on the
// relay's DHCP packets, since dhcrelay exports none.
//
// dhcrelay has no reload: a changed configuration is a new command line,
// so the VRF's dhcrelay is started again. Every argument is checked
// before: interface names are plain device names, servers are unicast
// IPv4 addresses, VRF names are plain names; no shell is involved.
package dhcrelay

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"maps"
	"net/netip"
	"os"
	"os/exec"
	"path/filepath"
	"reflect"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/swmgr/swmgr/internal/atomicfile"
	"github.com/swmgr/swmgr/internal/daemon"
)

// Options place the relays.
type Options struct {
	// Dir holds each dhcrelay's log and pid file.
	Dir string
	// Netns is the named network namespace of the default VRF ("" = ours).
	Netns string
	// Dhcrelay and Nft are the programs; default /usr/sbin/dhcrelay and
	// /usr/sbin/nft.
	Dhcrelay, Nft string
	// Log receives the relays' starts, exits and restarts (nil: none).
	Log *slog.Logger
}

// Config is the whole relay configuration, applied as a whole.
type Config struct {
	// HopCount is dhcrelay's maximum hop count (1..255).
	HopCount int
	// VRFs are the VRFs that relay, by name ("default" for the main
	// table); a VRF with no Downstream relays nothing.
	VRFs map[string]VRF
}

// VRF is one dhcrelay: the interfaces of one VRF whose clients it relays,
// to its servers.
type VRF struct {
	// Netns is the namespace it runs in ("": Options.Netns), for a VRF
	// made as a namespace.
	Netns string
	// Exec, for a VRF device, runs dhcrelay bound to it (ip vrf exec).
	Exec bool
	// Downstream are the clients' interfaces (netdevs).
	Downstream []string
	// Upstream are the interfaces the servers' answers may arrive on.
	Upstream []string
	// Addressed are the upstream interfaces that have an IPv4 address
	// (their own, or a loopback's they borrow). dhcrelay reads the
	// interfaces' addresses once, at its start, and discards an answer
	// arriving on one it found without: a change of this list starts it
	// again, as a change of its command line does.
	Addressed []string
	// Servers receive every request.
	Servers []netip.Addr
}

// nameRE is a network device or VRF name with no character any program
// reads specially.
var nameRE = regexp.MustCompile(`^[A-Za-z0-9][A-Za-z0-9._-]{0,14}$`)

// netnsRE is a named network namespace (a VRF made as one).
var netnsRE = regexp.MustCompile(`^[A-Za-z0-9][A-Za-z0-9._-]{0,200}$`)

// Validate refuses what cannot be passed to dhcrelay or nft as plain
// arguments, and interfaces that are both a client's and an upstream.
func (c Config) Validate() error {
	if c.HopCount < 1 || c.HopCount > 255 {
		return fmt.Errorf("hop count %d: want 1..255", c.HopCount)
	}
	for name, v := range c.VRFs {
		if name != "default" && !nameRE.MatchString(name) {
			return fmt.Errorf("VRF %q is not a VRF name", name)
		}
		if v.Netns != "" && !netnsRE.MatchString(v.Netns) {
			return fmt.Errorf("VRF %s: namespace %q is not a namespace name", name, v.Netns)
		}
		for _, dev := range slices.Concat(v.Downstream, v.Upstream) {
			if !nameRE.MatchString(dev) {
				return fmt.Errorf("VRF %s: %q is not a network device name", name, dev)
			}
		}
		for _, dev := range v.Downstream {
			if slices.Contains(v.Upstream, dev) {
				return fmt.Errorf("VRF %s: %s is both a clients' and an upstream interface", name, dev)
			}
		}
		if len(v.Downstream) > 0 && len(v.Servers) == 0 {
			return fmt.Errorf("VRF %s: no server", name)
		}
		for _, s := range v.Servers {
			if !s.Is4() || s.IsUnspecified() || s.IsMulticast() || s.IsLoopback() || s == netip.AddrFrom4([4]byte{255, 255, 255, 255}) {
				return fmt.Errorf("VRF %s: server %s is not a unicast IPv4 address", name, s)
			}
		}
	}
	return nil
}

// argv is the command line of v's dhcrelay (without the namespace's
// wrapper): in the foreground (its log is its output), option 82
// appended and any a client sent replaced (-m replace), the hop limit,
// the clients' and the upstream interfaces, then the servers. In the
// foreground dhcrelay writes no pid file: -pf names the one swmgr writes,
// so that the command line says which directory's dhcrelay it is
// (KillStale's mark).
func (o Options) argv(vrf string, v VRF, hops int) []string {
	var argv []string
	if v.Exec {
		argv = []string{"ip", "vrf", "exec", vrf}
	}
	argv = append(argv, o.Dhcrelay, "-d", "-4", "-pf", o.pidFile(vrf), "-a", "-m", "replace", "-c", strconv.Itoa(hops))
	for _, dev := range slices.Sorted(slices.Values(v.Downstream)) {
		argv = append(argv, "-id", dev)
	}
	for _, dev := range slices.Sorted(slices.Values(v.Upstream)) {
		argv = append(argv, "-iu", dev)
	}
	for _, s := range v.Servers {
		argv = append(argv, s.String())
	}
	return argv
}

// relay is one VRF's running dhcrelay.
type relay struct {
	argv      []string
	netns     string
	addressed []string
	group     *daemon.Group
}

// Daemon is the relays swmgr owns.
type Daemon struct {
	opts Options

	mu     sync.Mutex // serialises Apply and Stop
	relays map[string]*relay
	cfg    Config
	// noEgress: the kernel has no netfilter egress hook; the answers
	// relayed to clients and the requests relayed to servers are not
	// counted.
	noEgress bool
}

// New prepares the relays; Apply runs them.
func New(opts Options) (*Daemon, error) {
	if opts.Dir == "" {
		return nil, errors.New("dhcrelay: Options.Dir is required")
	}
	if opts.Dhcrelay == "" {
		opts.Dhcrelay = "/usr/sbin/dhcrelay"
	}
	if opts.Nft == "" {
		opts.Nft = "/usr/sbin/nft"
	}
	if opts.Log == nil {
		opts.Log = slog.New(slog.DiscardHandler)
	}
	return &Daemon{opts: opts, relays: map[string]*relay{}}, nil
}

// Start readies the directory and ends the dhcrelays a previous swmgr
// left running (a kill -9 of swmgr leaves them), which the pid files of
// this directory name.
func (d *Daemon) Start(ctx context.Context) error {
	if err := os.MkdirAll(d.opts.Dir, 0o755); err != nil {
		return fmt.Errorf("dhcrelay: %w", err)
	}
	pids, err := filepath.Glob(filepath.Join(d.opts.Dir, "dhcrelay-*.pid"))
	if err != nil {
		return fmt.Errorf("dhcrelay: %w", err)
	}
	stale, cancel := context.WithTimeout(ctx, 10*time.Second)
	defer cancel()
	for _, p := range pids {
		if _, err := daemon.KillStale(stale, p, p); err != nil {
			return fmt.Errorf("dhcrelay: %w", err)
		}
	}
	return nil
}

func (o Options) pidFile(vrf string) string {
	return filepath.Join(o.Dir, "dhcrelay-"+vrf+".pid")
}

// Apply makes the relays run c: the dhcrelay of each VRF whose command
// line changed is started again, one no longer needed is stopped, and the
// counters are set for c's interfaces and servers; c as it runs already
// changes nothing (the counts go on). If a relay fails to start, the
// previous configuration is applied again.
func (d *Daemon) Apply(ctx context.Context, c Config) error {
	if err := c.Validate(); err != nil {
		return fmt.Errorf("dhcrelay: %w", err)
	}
	d.mu.Lock()
	defer d.mu.Unlock()
	if reflect.DeepEqual(c, d.cfg) {
		// Nothing to restart, and the counters go on.
		return nil
	}
	if err := d.apply(ctx, c); err != nil {
		if rerr := d.apply(ctx, d.cfg); rerr != nil {
			return fmt.Errorf("dhcrelay: %w; applying the previous configuration again: %v", err, rerr)
		}
		return fmt.Errorf("dhcrelay: %w", err)
	}
	d.cfg = c
	return nil
}

func (d *Daemon) apply(ctx context.Context, c Config) error {
	want := map[string]*relay{}
	for name, v := range c.VRFs {
		if len(v.Downstream) == 0 {
			continue
		}
		netns := v.Netns
		if netns == "" {
			netns = d.opts.Netns
		}
		want[name] = &relay{argv: d.opts.argv(name, v, c.HopCount), netns: netns, addressed: slices.Sorted(slices.Values(v.Addressed))}
	}
	for name, r := range d.relays {
		if w := want[name]; w == nil || !slices.Equal(w.argv, r.argv) || w.netns != r.netns || !slices.Equal(w.addressed, r.addressed) {
			r.group.Stop()
			delete(d.relays, name)
			os.Remove(d.opts.pidFile(name))
		}
	}
	for _, name := range slices.Sorted(maps.Keys(want)) {
		if d.relays[name] != nil {
			continue
		}
		r := want[name]
		r.group = daemon.NewGroup([]daemon.Spec{{
			Name: "dhcrelay-" + name, Argv: r.argv, Netns: r.netns, LogPath: filepath.Join(d.opts.Dir, "dhcrelay-"+name+".log"),
		}}, func(context.Context, string) error { return d.writePid(name, r) }, d.opts.Log)
		if err := r.group.Start(ctx); err != nil {
			return fmt.Errorf("VRF %s: %w", name, err)
		}
		if err := d.writePid(name, r); err != nil {
			r.group.Stop()
			return err
		}
		d.relays[name] = r
	}
	return d.setCounters(ctx, c)
}

// writePid records the relay's pid for the KillStale of the next start.
func (d *Daemon) writePid(vrf string, r *relay) error {
	return atomicfile.Replace(d.opts.pidFile(vrf), []byte(strconv.Itoa(r.group.Pid("dhcrelay-"+vrf))+"\n"), 0o644)
}

// Stop ends the relays and removes the counters.
func (d *Daemon) Stop() {
	d.mu.Lock()
	defer d.mu.Unlock()
	for name, r := range d.relays {
		r.group.Stop()
		os.Remove(d.opts.pidFile(name))
	}
	d.relays = map[string]*relay{}
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	d.setCounters(ctx, Config{})
}

// Status reports the relays for SystemStatus.FlexDaemons.
func (d *Daemon) Status() []daemon.Status {
	d.mu.Lock()
	defer d.mu.Unlock()
	var out []daemon.Status
	for _, name := range slices.Sorted(maps.Keys(d.relays)) {
		out = append(out, d.relays[name].group.Status()...)
	}
	return out
}

// Pid is the process id of VRF vrf's dhcrelay (0: none runs).
func (d *Daemon) Pid(vrf string) int {
	d.mu.Lock()
	defer d.mu.Unlock()
	if r := d.relays[vrf]; r != nil {
		return r.group.Pid("dhcrelay-" + vrf)
	}
	return 0
}

// The counters live in a table of the namespace (of each namespace a VRF
// is made as), at the interfaces' own hooks (netdev ingress and egress):
// there each packet passes once, where the IP hooks see a VRF device's
// packets twice, and dhcrelay's answers to clients, which it sends on a
// packet socket, pass too (the IP hooks never see them). The clients'
// requests are counted coming in on their interface and the answers
// going out on it; a server's requests going out on an upstream
// interface and its answers coming in on one.
const counterTable = "swmgr_dhcp_relay"

// Counters are the relays' counts since the configuration last changed.
type Counters struct {
	ClientRx, ClientTx     map[string]int64     // by clients' interface
	ServerReq, ServerResps map[netip.Addr]int64 // by server
	Hosts                  []Host               // by interface, then MAC
}

// Host is what one client (by the hardware address in its requests)
// exchanged through the relay on one interface.
type Host struct {
	Netdev   string // the clients' interface
	MAC      string // chaddr: 02:00:00:00:00:01
	Requests int64  // requests received from it
	Replies  int64  // answers relayed to it
}

// chaddrBits is where a DHCP message's client hardware address is, from
// the UDP header on (8 bytes of UDP header, then 28 bytes of the message
// before chaddr), and how long an Ethernet address is, in bits.
const chaddrBits, macBits = (8 + 28) * 8, 48

// maxHosts bounds the clients counted per interface; a client not heard
// for a day is forgotten.
const maxHosts = 4096

// setCounters replaces the counter table of every namespace of c (and
// removes those of namespaces no longer used) in one nft run each.
func (d *Daemon) setCounters(ctx context.Context, c Config) error {
	byNetns := map[string][]VRF{}
	for _, v := range d.cfg.VRFs {
		byNetns[v.Netns] = nil // removed unless c still counts there
	}
	for _, v := range c.VRFs {
		if len(v.Downstream) > 0 {
			byNetns[v.Netns] = append(byNetns[v.Netns], v)
		}
	}
	for netns, vrfs := range byNetns {
		err := d.nft(ctx, netns, rulesFor(vrfs, !d.noEgress))
		if err != nil && !d.noEgress && len(vrfs) > 0 {
			// A kernel without the egress hook: count what comes in.
			if err2 := d.nft(ctx, netns, rulesFor(vrfs, false)); err2 != nil {
				return fmt.Errorf("counters: %w", err)
			}
			d.noEgress = true
			d.opts.Log.Warn("dhcrelay: the kernel has no netfilter egress hook: the answers relayed to clients and the requests relayed to servers are not counted", "err", err)
		} else if err != nil {
			return fmt.Errorf("counters: %w", err)
		}
	}
	return nil
}

// rulesFor is the nft script that replaces the counter table with that
// of vrfs (none: the table is removed). Counters are named by position:
// rx<i>/tx<i> for the i-th clients' interface, req<j>/resp<j> for the j-th
// server (counterIndex orders them alike); each interface has a chain per
// hook.
func rulesFor(vrfs []VRF, egress bool) string {
	var b strings.Builder
	fmt.Fprintf(&b, "table netdev %s {}\ndelete table netdev %s\n", counterTable, counterTable)
	devs, ups, servers := counterIndex(vrfs)
	if len(devs) == 0 {
		return b.String()
	}
	fmt.Fprintf(&b, "table netdev %s {\n", counterTable)
	for i := range devs {
		fmt.Fprintf(&b, "\tcounter rx%d {}\n\tcounter tx%d {}\n", i, i)
		for _, set := range []string{"rx", "tx"} {
			fmt.Fprintf(&b, "\tset h%d%s { typeof @th,%d,%d; flags dynamic,timeout; timeout 1d; size %d; counter; }\n", i, set, chaddrBits, macBits, maxHosts)
		}
	}
	for j := range servers {
		fmt.Fprintf(&b, "\tcounter req%d {}\n\tcounter resp%d {}\n", j, j)
	}
	chain := func(name, hook, dev string, rules []string) {
		fmt.Fprintf(&b, "\tchain %s { type filter hook %s device %q priority 0;\n", name, hook, dev)
		for _, r := range rules {
			fmt.Fprintf(&b, "\t\t%s\n", r)
		}
		b.WriteString("\t}\n")
	}
	for i, dev := range devs {
		// The interface's count first: a full set of clients stops the
		// rule at its update.
		chain(fmt.Sprintf("d%din", i), "ingress", dev, []string{fmt.Sprintf("udp dport 67 counter name rx%d update @h%drx { @th,%d,%d }", i, i, chaddrBits, macBits)})
		if egress {
			chain(fmt.Sprintf("d%dout", i), "egress", dev, []string{fmt.Sprintf("udp sport 67 udp dport 68 counter name tx%d update @h%dtx { @th,%d,%d }", i, i, chaddrBits, macBits)})
		}
	}
	var in, out []string
	for j, s := range servers {
		in = append(in, fmt.Sprintf("ip saddr %s udp sport 67 udp dport 67 counter name resp%d", s, j))
		out = append(out, fmt.Sprintf("ip daddr %s udp dport 67 counter name req%d", s, j))
	}
	for k, dev := range ups {
		chain(fmt.Sprintf("u%din", k), "ingress", dev, in)
		if egress {
			chain(fmt.Sprintf("u%dout", k), "egress", dev, out)
		}
	}
	b.WriteString("}\n")
	return b.String()
}

// counterIndex orders vrfs' clients' interfaces, upstream interfaces and
// servers (each once).
func counterIndex(vrfs []VRF) (devs, ups []string, servers []netip.Addr) {
	for _, v := range vrfs {
		devs = append(devs, v.Downstream...)
		ups = append(ups, v.Upstream...)
		for _, s := range v.Servers {
			if !slices.Contains(servers, s) {
				servers = append(servers, s)
			}
		}
	}
	slices.Sort(devs)
	slices.Sort(ups)
	ups = slices.Compact(ups)
	slices.SortFunc(servers, func(a, b netip.Addr) int { return a.Compare(b) })
	return devs, ups, servers
}

// Counters reads the relays' counts.
func (d *Daemon) Counters(ctx context.Context) (Counters, error) {
	d.mu.Lock()
	cfg := d.cfg
	d.mu.Unlock()
	out := Counters{ClientRx: map[string]int64{}, ClientTx: map[string]int64{}, ServerReq: map[netip.Addr]int64{}, ServerResps: map[netip.Addr]int64{}}
	byNetns := map[string][]VRF{}
	for _, v := range cfg.VRFs {
		if len(v.Downstream) > 0 {
			byNetns[v.Netns] = append(byNetns[v.Netns], v)
		}
	}
	for netns, vrfs := range byNetns {
		raw, err := d.nftOutput(ctx, netns, "-j", "list", "table", "netdev", counterTable)
		if err != nil {
			return Counters{}, fmt.Errorf("dhcrelay: counters: %w", err)
		}
		got, err := parseTable(raw)
		if err != nil {
			return Counters{}, err
		}
		devs, _, servers := counterIndex(vrfs)
		for i, dev := range devs {
			n := strconv.Itoa(i)
			out.ClientRx[dev] += got.counters["rx"+n]
			out.ClientTx[dev] += got.counters["tx"+n]
			rx, tx := got.sets["h"+n+"rx"], got.sets["h"+n+"tx"]
			for _, mac := range slices.Sorted(maps.Keys(rx)) {
				out.Hosts = append(out.Hosts, Host{Netdev: dev, MAC: mac, Requests: rx[mac], Replies: tx[mac]})
			}
		}
		for j, s := range servers {
			out.ServerReq[s] += got.counters["req"+strconv.Itoa(j)]
			out.ServerResps[s] += got.counters["resp"+strconv.Itoa(j)]
		}
	}
	slices.SortFunc(out.Hosts, func(a, b Host) int { return strings.Compare(a.Netdev+" "+a.MAC, b.Netdev+" "+b.MAC) })
	return out, nil
}

// table is what the counter table counted: each counter's packets by
// name, and each set's elements' packets by set and MAC address.
type table struct {
	counters map[string]int64
	sets     map[string]map[string]int64
}

// parseTable reads `nft -j list table netdev swmgr_dhcp_relay`.
func parseTable(raw []byte) (table, error) {
	var doc struct {
		Nftables []struct {
			Counter *struct {
				Name, Table string
				Packets     int64
			} `json:"counter"`
			Set *struct {
				Name, Table string
				Elem        []struct {
					Elem struct {
						Val     uint64
						Counter struct{ Packets int64 }
					}
				}
			} `json:"set"`
		} `json:"nftables"`
	}
	if err := json.Unmarshal(raw, &doc); err != nil {
		return table{}, fmt.Errorf("dhcrelay: nft's counters: %w", err)
	}
	out := table{counters: map[string]int64{}, sets: map[string]map[string]int64{}}
	for _, e := range doc.Nftables {
		if c := e.Counter; c != nil && c.Table == counterTable {
			out.counters[c.Name] = c.Packets
		}
		if set := e.Set; set != nil && set.Table == counterTable {
			m := map[string]int64{}
			for _, el := range set.Elem {
				m[macOf(el.Elem.Val)] = el.Elem.Counter.Packets
			}
			out.sets[set.Name] = m
		}
	}
	return out, nil
}

// macOf is a 48-bit address, as nft shows a raw payload key, in colon
// form.
func macOf(v uint64) string {
	var b strings.Builder
	for i := 5; i >= 0; i-- {
		fmt.Fprintf(&b, "%02x", byte(v>>(8*i)))
		if i > 0 {
			b.WriteByte(':')
		}
	}
	return b.String()
}

// nftCommand runs nft in netns ("": the default VRF's namespace).
func (d *Daemon) nftCommand(ctx context.Context, netns string, args ...string) *exec.Cmd {
	if netns == "" {
		netns = d.opts.Netns
	}
	if netns == "" {
		return exec.CommandContext(ctx, d.opts.Nft, args...)
	}
	return exec.CommandContext(ctx, "ip", append([]string{"netns", "exec", netns, d.opts.Nft}, args...)...)
}

func (d *Daemon) nft(ctx context.Context, netns, script string) error {
	cmd := d.nftCommand(ctx, netns, "-f", "-")
	cmd.Stdin = strings.NewReader(script)
	if out, err := cmd.CombinedOutput(); err != nil {
		return fmt.Errorf("nft: %w: %s", err, bytes.TrimSpace(out))
	}
	return nil
}

func (d *Daemon) nftOutput(ctx context.Context, netns string, args ...string) ([]byte, error) {
	var stderr bytes.Buffer
	cmd := d.nftCommand(ctx, netns, args...)
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		return nil, fmt.Errorf("nft %s: %w: %s", strings.Join(args, " "), err, bytes.TrimSpace(stderr.Bytes()))
	}
	return out, nil
}
