package linux

import (
	"bufio"
	"bytes"
	"fmt"
	"regexp"
	"sort"
	"strconv"
	"strings"
	"sync"
)

// PortMap says which netdev is each front-panel port.
type PortMap struct {
	// mu guards the maps: a breakout adds and removes sub-ports while
	// state reads look ports up.
	mu       sync.RWMutex
	byPort   map[string]string // fpPort1 -> swp1
	byNetdev map[string]string // swp1 -> fpPort1
	split    map[string]int    // fpPort1 -> its devlink sub-port count, while split
}

var (
	portNameRE = regexp.MustCompile(`^fpPort([1-9][0-9]{0,3})(?:s([1-9]))?$`)
	// defaultNetdevRE is what a port's netdev is called without a map:
	// swp<N>[s<M>] (Cumulus, SONiC-on-Linux, switchdev drivers) or the
	// port's own name.
	defaultNetdevRE = regexp.MustCompile(`^(?:swp|fpPort)([1-9][0-9]{0,3})(?:s([1-9]))?$`)
	netdevNameRE    = regexp.MustCompile(`^[^\s/:]{1,15}$`)
)

// ParsePortMap reads a port map file: one "fpPort<N>[s<M>] <netdev>" per
// line; blank lines and "#" comments are ignored. Every error names the
// line.
func ParsePortMap(data []byte) (*PortMap, error) {
	m := &PortMap{byPort: map[string]string{}, byNetdev: map[string]string{}}
	lineOf := map[string]int{}
	sc := bufio.NewScanner(bytes.NewReader(data))
	for n := 1; sc.Scan(); n++ {
		line := sc.Text()
		if i := strings.IndexByte(line, '#'); i >= 0 {
			line = line[:i]
		}
		f := strings.Fields(line)
		if len(f) == 0 {
			continue
		}
		if len(f) != 2 {
			return nil, fmt.Errorf("line %d: want \"fpPort<N> <netdev>\", got %q", n, strings.TrimSpace(line))
		}
		port, dev := f[0], f[1]
		if !portNameRE.MatchString(port) {
			return nil, fmt.Errorf("line %d: %q is not a port name (fpPort<N> or fpPort<N>s<M>)", n, port)
		}
		if !netdevNameRE.MatchString(dev) {
			return nil, fmt.Errorf("line %d: %q is not a netdev name (1-15 characters, no spaces, '/' or ':')", n, dev)
		}
		if prev, ok := m.byPort[port]; ok {
			return nil, fmt.Errorf("line %d: %s is mapped twice (to %s on line %d and to %s)", n, port, prev, lineOf["p"+port], dev)
		}
		if prev, ok := m.byNetdev[dev]; ok {
			return nil, fmt.Errorf("line %d: netdev %s is mapped twice (to %s on line %d and to %s)", n, dev, prev, lineOf["d"+dev], port)
		}
		m.byPort[port], m.byNetdev[dev] = dev, port
		lineOf["p"+port], lineOf["d"+dev] = n, n
	}
	if err := sc.Err(); err != nil {
		return nil, err
	}
	if len(m.byPort) == 0 {
		return nil, fmt.Errorf("no ports in the map")
	}
	return m, nil
}

// DefaultPortMap maps every netdev named swp<N>[s<M>] or fpPort<N>[s<M>] to
// fpPort<N>[s<M>].
func DefaultPortMap(netdevs []string) (*PortMap, error) {
	m := &PortMap{byPort: map[string]string{}, byNetdev: map[string]string{}}
	sort.Strings(netdevs)
	for _, dev := range netdevs {
		g := defaultNetdevRE.FindStringSubmatch(dev)
		if g == nil {
			continue
		}
		port := "fpPort" + g[1]
		if g[2] != "" {
			port += "s" + g[2]
		}
		if prev, ok := m.byPort[port]; ok {
			return nil, fmt.Errorf("both %s and %s would be %s; give a --port-map", prev, dev, port)
		}
		m.byPort[port], m.byNetdev[dev] = dev, port
	}
	return m, nil
}

// Check refuses a map that names netdevs the namespace does not have.
func (m *PortMap) Check(netdevs []string) error {
	have := map[string]bool{}
	for _, d := range netdevs {
		have[d] = true
	}
	var missing []string
	for _, p := range m.Ports() {
		if !have[m.byPort[p]] {
			missing = append(missing, fmt.Sprintf("%s (for %s)", m.byPort[p], p))
		}
	}
	if len(missing) > 0 {
		return fmt.Errorf("the port map names netdevs that do not exist: %s", strings.Join(missing, ", "))
	}
	return nil
}

// Netdev is the netdev of a port ("" if the map has none).
func (m *PortMap) Netdev(port string) string {
	m.mu.RLock()
	defer m.mu.RUnlock()
	return m.byPort[port]
}

// Port is the port a netdev is ("" if none).
func (m *PortMap) Port(netdev string) string {
	m.mu.RLock()
	defer m.mu.RUnlock()
	return m.byNetdev[netdev]
}

// Len is the number of mapped ports.
func (m *PortMap) Len() int {
	m.mu.RLock()
	defer m.mu.RUnlock()
	return len(m.byPort)
}

// netdevs is a copy of the port -> netdev map.
func (m *PortMap) netdevs() map[string]string {
	m.mu.RLock()
	defer m.mu.RUnlock()
	out := make(map[string]string, len(m.byPort))
	for p, d := range m.byPort {
		out[p] = d
	}
	return out
}

// setSubports maps port's breakout sub-ports <port>s1.. to the netdevs of
// subs (in sub-port order), replacing the ones it had.
func (m *PortMap) setSubports(port string, subs []DevlinkPort) {
	m.mu.Lock()
	defer m.mu.Unlock()
	for p, d := range m.byPort {
		if strings.HasPrefix(p, port+"s") && allDigits(p[len(port)+1:]) {
			delete(m.byPort, p)
			delete(m.byNetdev, d)
		}
	}
	if m.split == nil {
		m.split = map[string]int{}
	}
	delete(m.split, port)
	if len(subs) > 0 {
		m.split[port] = len(subs)
	}
	for i, s := range subs {
		if s.Netdev == "" {
			continue
		}
		p := fmt.Sprintf("%ss%d", port, i+1)
		m.byPort[p], m.byNetdev[s.Netdev] = s.Netdev, p
	}
}

// Ports lists the mapped ports in port order (fpPort2 before fpPort10).
func (m *PortMap) Ports() []string {
	m.mu.RLock()
	defer m.mu.RUnlock()
	out := make([]string, 0, len(m.byPort))
	for p := range m.byPort {
		out = append(out, p)
	}
	sort.Slice(out, func(i, j int) bool { return portLess(out[i], out[j]) })
	return out
}

func portLess(a, b string) bool {
	an, as := portNumbers(a)
	bn, bs := portNumbers(b)
	if an != bn {
		return an < bn
	}
	return as < bs
}

func portNumbers(p string) (int, int) {
	g := portNameRE.FindStringSubmatch(p)
	if g == nil {
		return 0, 0
	}
	n, _ := strconv.Atoi(g[1])
	s, _ := strconv.Atoi(g[2])
	return n, s
}

// splitInto is the number of devlink sub-ports port is split into (0: not
// split).
func (m *PortMap) splitInto(port string) int {
	m.mu.RLock()
	defer m.mu.RUnlock()
	return m.split[port]
}
