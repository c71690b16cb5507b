package linux

import (
	"fmt"
	"math/rand/v2"
	"os"
	"os/exec"
	"regexp"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/swmgr/swmgr/internal/testneed"
	"github.com/swmgr/swmgr/internal/vmtest"
)

// lab is a switch in a network namespace of its own, with front-panel
// ports fpPort1..N as veths whose far ends (eth0) sit in one "host"
// namespace each. Names carry a random prefix: other tests run at the same
// time on the machine.
type lab struct {
	t      testing.TB
	prefix string
	sw     string   // the switch's namespace
	hosts  []string // host namespaces, hosts[i] behind fpPort<i+1>
	k      *Kernel
}

func needRoot(t testing.TB) {
	t.Helper()
	if os.Geteuid() != 0 {
		t.Skip("needs root to make network namespaces")
	}
	testneed.Program(t, "iproute2", "ip")
}

func run(t testing.TB, args ...string) string {
	t.Helper()
	out, err := exec.Command(args[0], args[1:]...).CombinedOutput()
	if err != nil {
		t.Fatalf("%s: %v\n%s", strings.Join(args, " "), err, out)
	}
	return string(out)
}

func newLab(t *testing.T, ports int, opts KernelOptions) *lab {
	t.Helper()
	return newLabNamed(t, "lnx", ports, opts)
}

// newLabNamed is newLab with the name prefix of the test's area.
func newLabNamed(t *testing.T, area string, ports int, opts KernelOptions) *lab {
	t.Helper()
	needRoot(t)
	l := &lab{t: t, prefix: fmt.Sprintf("%s%05d", area, rand.IntN(100000))}
	l.sw = l.prefix + "sw"
	t.Cleanup(l.cleanup)
	run(t, "ip", "netns", "add", l.sw)
	run(t, "ip", "-n", l.sw, "link", "set", "lo", "up")
	noIPv6(t, l.sw)
	for i := 1; i <= ports; i++ {
		h := fmt.Sprintf("%sh%d", l.prefix, i)
		l.hosts = append(l.hosts, h)
		run(t, "ip", "netns", "add", h)
		run(t, "ip", "-n", l.sw, "link", "add", fmt.Sprintf("fpPort%d", i), "type", "veth", "peer", "name", "eth0", "netns", h)
		run(t, "ip", "-n", h, "link", "set", "lo", "up")
		noIPv6(t, h)
		run(t, "ip", "-n", h, "link", "set", "eth0", "up")
		// Up once, so the kernel gives the port its default qdisc now
		// rather than at the test's first "up" (which no rollback undoes).
		run(t, "ip", "-n", l.sw, "link", "set", fmt.Sprintf("fpPort%d", i), "up")
		run(t, "ip", "-n", l.sw, "link", "set", fmt.Sprintf("fpPort%d", i), "down")
	}
	opts.Netns = l.sw
	if opts.VRFNetnsPrefix == "" {
		opts.VRFNetnsPrefix = l.prefix + "vrf-"
	}
	k, err := OpenKernel(opts)
	if err != nil {
		t.Fatal(err)
	}
	l.k = k
	return l
}

// noIPv6 turns IPv6 off in a namespace: its link-local addresses and
// neighbour discovery would come and go in dumps and mirror counts.
func noIPv6(t *testing.T, ns string) {
	run(t, "ip", "netns", "exec", ns, "sysctl", "-qw", "net.ipv6.conf.all.disable_ipv6=1", "net.ipv6.conf.default.disable_ipv6=1")
}

func (l *lab) cleanup() {
	if l.k != nil {
		l.k.Close()
	}
	out, _ := exec.Command("ip", "netns", "list").Output()
	for _, line := range strings.Split(string(out), "\n") {
		if f := strings.Fields(line); len(f) > 0 && strings.HasPrefix(f[0], l.prefix) {
			exec.Command("ip", "netns", "del", f[0]).Run()
		}
	}
}

// host runs a command in host i's namespace (1-based).
func (l *lab) host(i int, args ...string) string {
	l.t.Helper()
	return run(l.t, append([]string{"ip", "netns", "exec", l.hosts[i-1]}, args...)...)
}

// needPing skips the test (fails it in CI) without busybox, whose ping the
// tests send: the machine's own ping may be missing or need a capability.
func needPing(t testing.TB) {
	t.Helper()
	testneed.Program(t, "busybox-static", "busybox")
}

// ping reports whether host i reaches addr.
func (l *lab) ping(i int, addr string) bool {
	l.t.Helper()
	needPing(l.t)
	out, err := exec.Command("ip", "netns", "exec", l.hosts[i-1], "busybox", "ping", "-c", "1", "-W", "2", addr).CombinedOutput()
	if err != nil && !strings.Contains(string(out), "0 packets received") && !strings.Contains(string(out), "unreachable") {
		l.t.Logf("ping %s from host %d: %v %s", addr, i, err, out)
	}
	return err == nil
}

// rxPackets is how many packets host i's eth0 received.
func (l *lab) rxPackets(i int) int {
	l.t.Helper()
	out := l.host(i, "cat", "/sys/class/net/eth0/statistics/rx_packets")
	var n int
	fmt.Sscan(out, &n)
	return n
}

var (
	indexRE = regexp.MustCompile(`(?m)^\d+: `)
	statsRE = regexp.MustCompile(`(?s)\\? *(RX|TX):.*?(\n|$)`)
	// Carrier and timers are operational, not configuration.
	operRE = regexp.MustCompile(`NO-CARRIER,|,?LOWER_UP|state (UP|DOWN|UNKNOWN|LOWERLAYERDOWN) |[a-z_]+_timer +[0-9.]+ ?`)
)

// dump is the switch's kernel state as text: links, addresses, routes of
// every table, rules, qdiscs and filters, for every namespace of the lab
// (the VRF namespaces included), without interface indexes and counters.
func (l *lab) dump() string {
	l.t.Helper()
	var nss []string
	out, _ := exec.Command("ip", "netns", "list").Output()
	for _, line := range strings.Split(string(out), "\n") {
		if f := strings.Fields(line); len(f) > 0 && strings.HasPrefix(f[0], l.prefix) && !strings.Contains(f[0], l.prefix+"h") {
			nss = append(nss, f[0])
		}
	}
	sort.Strings(nss)
	var b strings.Builder
	for _, ns := range nss {
		fmt.Fprintf(&b, "== %s\n", ns)
		b.WriteString(indexRE.ReplaceAllString(linkShow(l.t, ns, "-d"), ""))
		b.WriteString(indexRE.ReplaceAllString(run(l.t, "ip", "-n", ns, "-o", "addr", "show"), ""))
		b.WriteString(run(l.t, "ip", "-n", ns, "route", "show", "table", "all"))
		// The kernel's l3mdev rules come with a namespace's first VRF
		// device and stay (swmgr leaves them: see EnsureVRF).
		for _, rule := range strings.SplitAfter(run(l.t, "ip", "-n", ns, "rule", "show"), "\n") {
			if !strings.Contains(rule, "l3mdev") {
				b.WriteString(rule)
			}
		}
		links := linkShow(l.t, ns)
		for _, line := range strings.Split(links, "\n") {
			f := strings.Fields(line)
			if len(f) < 2 {
				continue
			}
			dev := strings.SplitN(strings.TrimSuffix(f[1], ":"), "@", 2)[0]
			b.WriteString(run(l.t, "tc", "-n", ns, "qdisc", "show", "dev", dev))
			for _, hook := range []string{"ingress", "egress"} {
				fl, _ := exec.Command("tc", "-n", ns, "filter", "show", "dev", dev, hook).CombinedOutput()
				b.WriteString(dev + " " + hook + ": " + string(fl) + "\n")
			}
		}
		if _, err := exec.LookPath("bridge"); err == nil {
			bv, _ := exec.Command("bridge", "-n", ns, "vlan", "show").CombinedOutput()
			b.Write(bv)
		}
	}
	var keep []string
	for _, line := range strings.Split(operRE.ReplaceAllString(statsRE.ReplaceAllString(b.String(), ""), ""), "\n") {
		// The default qdisc of a link is attached when it first goes up
		// and dropped when it moves between namespaces: it is not
		// configuration, and a down link may show either.
		line = strings.ReplaceAll(line, "qdisc noop ", "qdisc noqueue ")
		if strings.HasPrefix(line, "qdisc noqueue 0: root") {
			continue
		}
		if !strings.Contains(line, "inet6") && !strings.Contains(line, "fe80::") {
			keep = append(keep, line)
		}
	}
	return strings.Join(keep, "\n")
}

func diffLines(a, b string) string {
	la, lb := strings.Split(a, "\n"), strings.Split(b, "\n")
	in := map[string]int{}
	for _, x := range la {
		in[x]++
	}
	var out []string
	for _, x := range lb {
		if in[x] > 0 {
			in[x]--
			continue
		}
		out = append(out, "+ "+x)
	}
	for x, n := range in {
		for ; n > 0; n-- {
			out = append(out, "- "+x)
		}
	}
	sort.Strings(out)
	return strings.Join(out, "\n")
}

// eventually polls cond for up to d.
func eventually(d time.Duration, cond func() bool) bool {
	deadline := time.Now().Add(d)
	for time.Now().Before(deadline) {
		if cond() {
			return true
		}
		time.Sleep(50 * time.Millisecond)
	}
	return cond()
}

// needFeature skips a test the kernel cannot run; the VM runs it (see
// TestStockKernelInVM).
func needFeature(t *testing.T, k *Kernel, ok bool, what string) {
	t.Helper()
	if !ok {
		if vmtest.InVM() {
			t.Fatalf("the stock kernel in the VM lacks %s", what)
		}
		t.Skipf("this kernel lacks %s; TestStockKernelInVM runs this test in a VM with Debian's stock kernel", what)
	}
}

// linkShow is `ip -n ns -o link show` without the "Peer netns reference is
// invalid" complaints ip prints when another process (other tests on the
// machine) changes namespaces while it resolves a veth peer's.
func linkShow(t testing.TB, ns string, extra ...string) string {
	t.Helper()
	out := run(t, append(append([]string{"ip", "-n", ns}, extra...), "-o", "link", "show")...)
	var b strings.Builder
	for _, line := range strings.SplitAfter(out, "\n") {
		if !strings.Contains(line, "Peer netns reference is invalid") {
			b.WriteString(line)
		}
	}
	return b.String()
}
