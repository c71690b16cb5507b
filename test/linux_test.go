// The Linux backend under kill -9: writers change addresses, ports and
// mirror sessions of a switch namespace as fast as they can; the process is
// killed without warning at a random moment (often in the middle of an
// apply, between its kernel changes and the store's commit). After each
// restart on the same data directory the kernel must be exactly what the
// store says, and every acknowledged write must be in the store.

package test

import (
	"fmt"
	"math/rand/v2"
	"os"
	"os/exec"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"
)

const kill9Ports = 16

// kill9Lab is a namespace with ports swp1..swp16 (veth pairs swp1-swp2, ...),
// removed when the test ends.
func kill9Lab(t *testing.T) string {
	t.Helper()
	if os.Geteuid() != 0 {
		t.Skip("needs root to make a network namespace")
	}
	ns := fmt.Sprintf("lnxk9%05d", rand.IntN(100000))
	var batch strings.Builder
	fmt.Fprintf(&batch, "netns add %s\n", ns)
	for i := 1; i <= kill9Ports; i += 2 {
		fmt.Fprintf(&batch, "-n %s link add swp%d type veth peer name swp%d\n", ns, i, i+1)
	}
	t.Cleanup(func() { exec.Command("ip", "netns", "del", ns).Run() })
	for _, line := range strings.Split(strings.TrimSpace(batch.String()), "\n") {
		if out, err := exec.Command("ip", strings.Fields(line)...).CombinedOutput(); err != nil {
			t.Fatalf("ip %s: %v %s", line, err, out)
		}
	}
	return ns
}

// kernelView is what the kernel has on each port netdev, in the words of
// the store: the addresses, Mtu, AdminState and whether a mirror filter is
// on it.
func kernelView(t *testing.T, ns string) map[string]string {
	t.Helper()
	out := map[string]string{}
	for i := 1; i <= kill9Ports; i++ {
		dev := fmt.Sprint("swp", i)
		link, err := exec.Command("ip", "-n", ns, "-o", "link", "show", "dev", dev).Output()
		if err != nil {
			t.Fatalf("ip link show %s: %v", dev, err)
		}
		f := strings.Fields(string(link))
		mtu := f[slices.Index(f, "mtu")+1]
		admin := "DOWN"
		if strings.Contains(f[2], ",UP") || strings.Contains(f[2], "<UP") {
			admin = "UP"
		}
		addrs, err := exec.Command("ip", "-n", ns, "-4", "-o", "addr", "show", "dev", dev).Output()
		if err != nil {
			t.Fatalf("ip addr show %s: %v", dev, err)
		}
		var as []string
		for _, l := range strings.Split(strings.TrimSpace(string(addrs)), "\n") {
			if g := strings.Fields(l); len(g) >= 4 {
				as = append(as, g[3])
			}
		}
		filters := ""
		for _, hook := range []string{"ingress", "egress"} {
			fs, _ := exec.Command("tc", "-n", ns, "filter", "show", "dev", dev, hook).Output()
			if strings.Contains(string(fs), "mirred") {
				filters += " mirror-" + hook
			}
		}
		out[fmt.Sprint("fpPort", i)] = fmt.Sprintf("mtu %s %s addr %v%s", mtu, admin, as, filters)
	}
	return out
}

// storeView is the same from the store's configuration.
func storeView(t *testing.T, s *server) map[string]string {
	t.Helper()
	addr := map[string][]string{}
	for _, e := range s.listAll(t, "/config/IPv4Intfs", 1024) {
		o := e["Object"].(map[string]any)
		if o["AdminState"] == "UP" {
			addr[o["IntfRef"].(string)] = []string{o["IpAddr"].(string)}
		}
	}
	mirror := map[string]string{}
	for _, e := range s.listAll(t, "/config/Spans", 1024) {
		o := e["Object"].(map[string]any)
		if o["AdminState"] != "UP" {
			continue
		}
		hooks := map[string]string{"RX": " mirror-ingress", "TX": " mirror-egress", "BOTH": " mirror-ingress mirror-egress"}[o["MirrorDir"].(string)]
		for _, p := range o["SrcIntfRefList"].([]any) {
			mirror[p.(string)] = hooks
		}
	}
	out := map[string]string{}
	for _, e := range s.listAll(t, "/config/Ports", 1024) {
		o := e["Object"].(map[string]any)
		name := o["IntfRef"].(string)
		out[name] = fmt.Sprintf("mtu %v %s addr %v%s", o["Mtu"], o["AdminState"], addr[name], mirror[name])
	}
	return out
}

func diffViews(kernel, store map[string]string) string {
	var d []string
	for i := 1; i <= kill9Ports; i++ {
		p := fmt.Sprint("fpPort", i)
		if kernel[p] != store[p] {
			d = append(d, fmt.Sprintf("%s: kernel %q, store %q", p, kernel[p], store[p]))
		}
	}
	return strings.Join(d, "\n")
}

func TestLinuxKill9MidApplyConverges(t *testing.T) {
	ns := kill9Lab(t)
	const cycles, writers = 4, 4
	seed := uint64(time.Now().UnixNano())
	rng := rand.New(rand.NewPCG(seed, 0x9))
	t.Logf("seed %d", seed)
	dir := t.TempDir()
	undone := 0
	for cycle := range cycles {
		s := startServer(t, dir, "--backend", "linux", "--netns", ns, "--bgp", "sim", "--ntp", "sim", "--system", "sim")
		// The start reconciled: the kernel is what the store says.
		if d := diffViews(kernelView(t, ns), storeView(t, s)); d != "" {
			t.Fatalf("cycle %d: after the start the kernel differs from the store:\n%s\nswmgr logged:\n%s", cycle, d, tail(s.logs.String(), 3000))
		}
		if strings.Contains(s.logs.String(), "the store did not record") {
			undone++
		}
		var (
			wg     sync.WaitGroup
			killed atomic.Bool
			acks   atomic.Int64
			mu     sync.Mutex
			// last[port] is the store form of the last acknowledged
			// IPv4Intf write of the port ("" for deleted); pending the
			// one in flight when the server died.
			last, pending = map[string]string{}, map[string]string{}
		)
		for w := range writers {
			wg.Add(1)
			go func() {
				defer wg.Done()
				call := func(method, path, body string, want int) bool {
					r, err := s.call(method, path, body)
					if err != nil {
						if !killed.Load() {
							t.Errorf("cycle %d: %s %s %s before the kill: %v", cycle, method, path, body, err)
						}
						return false
					}
					if r.code != want {
						t.Errorf("cycle %d: %s %s %s: %s", cycle, method, path, body, r)
						return false
					}
					acks.Add(1)
					return true
				}
				for i := 0; ; i++ {
					port := fmt.Sprint("fpPort", w*4+i%4+1)
					addr := fmt.Sprintf("10.%d.%d.1/24", w*4+i%4+1, (cycle*64+i)%256)
					admin := []string{"UP", "DOWN"}[i/4%2]
					steps := []struct {
						method, path, body string
						want               int
						intf               string // the IPv4Intf this step leaves ("-": no change)
					}{
						{"DELETE", "/config/IPv4Intf", jsonOf(map[string]any{"IntfRef": port}), 0, ""},
						{"POST", "/config/IPv4Intf", jsonOf(map[string]any{"IntfRef": port, "IpAddr": addr}), 201, addr},
						{"PATCH", "/config/Port", jsonOf(map[string]any{"IntfRef": port, "Mtu": 1400 + (cycle*97+i)%600, "AdminState": admin}), 200, "-"},
					}
					if w == 0 && i%4 == 0 {
						span := jsonOf(map[string]any{"SpanSessionName": "k9", "DstIntfRef": "fpPort16", "SrcIntfRefList": []string{fmt.Sprint("fpPort", 5+i%8)}, "MirrorDir": []string{"RX", "TX", "BOTH"}[i%3]})
						steps = append(steps, struct {
							method, path, body string
							want               int
							intf               string
						}{"DELETE", "/config/Span", `{"SpanSessionName":"k9"}`, 0, "-"}, struct {
							method, path, body string
							want               int
							intf               string
						}{"POST", "/config/Span", span, 201, "-"})
					}
					for _, st := range steps {
						mu.Lock()
						if st.intf != "-" {
							pending[port] = st.intf
						}
						mu.Unlock()
						want := st.want
						if want == 0 { // a delete of something that may not exist
							r, err := s.call(st.method, st.path, st.body)
							if err != nil {
								if !killed.Load() {
									t.Errorf("cycle %d: %s %s before the kill: %v", cycle, st.method, st.body, err)
								}
								return
							}
							if r.code != 200 && r.code != 404 {
								t.Errorf("cycle %d: %s %s %s: %s", cycle, st.method, st.path, st.body, r)
								return
							}
							acks.Add(1)
						} else if !call(st.method, st.path, st.body, want) {
							return
						}
						mu.Lock()
						if st.intf != "-" {
							last[port] = st.intf
						}
						delete(pending, port)
						mu.Unlock()
					}
				}
			}()
		}
		time.Sleep(time.Duration(300+rng.IntN(1200)) * time.Millisecond)
		killed.Store(true)
		s.kill9()
		wg.Wait()
		if acks.Load() == 0 {
			t.Fatalf("cycle %d: no write was acknowledged before the kill", cycle)
		}
		t.Logf("cycle %d: %d writes acknowledged before the kill", cycle, acks.Load())
		s = startServer(t, dir, "--backend", "linux", "--netns", ns, "--bgp", "sim", "--ntp", "sim", "--system", "sim")
		if d := diffViews(kernelView(t, ns), storeView(t, s)); d != "" {
			t.Fatalf("cycle %d: after kill -9 and a restart the kernel differs from the store:\n%s\nswmgr logged:\n%s", cycle, d, tail(s.logs.String(), 3000))
		}
		if strings.Contains(s.logs.String(), "the store did not record") {
			undone++
		}
		// Every acknowledged write is in the store (or the write in flight
		// at the kill, which may or may not have been committed).
		stored := map[string]string{}
		for _, e := range s.listAll(t, "/config/IPv4Intfs", 1024) {
			o := e["Object"].(map[string]any)
			stored[o["IntfRef"].(string)] = o["IpAddr"].(string)
		}
		mu.Lock()
		for port, want := range last {
			if got := stored[port]; got != want {
				if p, inFlight := pending[port]; !inFlight || got != p {
					t.Errorf("cycle %d: %s: store has IPv4Intf %q, the last acknowledged write left %q", cycle, port, got, want)
				}
			}
		}
		mu.Unlock()
		s.stop(t)
	}
	t.Logf("%d of %d starts undid an apply the store had not recorded", undone, 2*cycles)
}
