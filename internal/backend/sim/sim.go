// Package sim is a simulated switch: the default backend, needing no root.
//
// It behaves like a small fixed-configuration switch with N 40G front-panel
// ports that can be broken out. It keeps the applied configuration in memory
// (the engine replays the stored configuration into it at every start),
// enforces the limits real hardware has (supported speeds, lane speeds of a
// breakout, four mirror sessions), and derives operational state from the
// applied configuration: a port's OperState follows its AdminState, its
// counters grow while it is up, and so on.
package sim

import (
	"context"
	"fmt"
	"net/http"
	"os"
	"strings"
	"sync"
	"time"

	"github.com/swmgr/swmgr/internal/accounts"
	"github.com/swmgr/swmgr/internal/apierr"
	"github.com/swmgr/swmgr/internal/backend"
	"github.com/swmgr/swmgr/internal/model"
)

// MaxSpanSessions is how many mirror sessions the simulated ASIC has.
const MaxSpanSessions = 4

var supportedSpeeds = map[int64]bool{1000: true, 10000: true, 25000: true, 40000: true, 50000: true, 100000: true}

// laneSpeed is the fastest a port can run in each breakout mode.
var laneSpeed = map[string]int64{"1x100": 100000, "1x40": 40000, "2x50": 50000, "4x25": 25000, "4x10": 10000}

// Options configure a simulated switch.
type Options struct {
	Ports   int    // front-panel ports, fpPort1..fpPort<Ports>
	Version string // reported as SwVersion
	// Fault, if set, is called before each change is applied; an error it
	// returns fails the change as a hardware error would. Tests use it.
	Fault func(backend.Change) error
	// Accounts, if set, are the switch's user accounts, which User objects
	// are applied to (see users.go). Without them users are only recorded.
	Accounts accounts.Accounts
	// OwnAccounts says the accounts belong to the simulated switch alone
	// (account files in its data directory): an account that a new User
	// finds already there is a leftover of a removed store, and is
	// replaced. Never set it for the host's accounts.
	OwnAccounts bool
	// CLIShell is the login shell of a User whose DefaultShell is CLI.
	CLIShell string
}

type portState struct {
	ifIndex            int64
	mac                string
	operUp             bool
	upSince            time.Time
	numUp, numDown     int64
	lastUp, lastDown   string
	inOctets, outOctet int64 // accumulated while up, before upSince
}

// Sim is a simulated switch.
type Sim struct {
	opts    Options
	started time.Time

	mu      sync.Mutex
	applied map[string]map[string]model.Object // kind -> key -> object
	ports   map[string]*portState
	removed map[string]removedAccount // user name -> what deleting its account removed, for undo
	times   map[string]*objectTimes   // kind NUL key -> when the object was created and last changed
}

// New makes a simulated switch.
func New(opts Options) *Sim {
	if opts.Ports <= 0 {
		opts.Ports = 32
	}
	return &Sim{opts: opts, started: time.Now(), applied: map[string]map[string]model.Object{}, ports: map[string]*portState{}, removed: map[string]removedAccount{}, times: map[string]*objectTimes{}}
}

// tracked are the kinds whose applied objects the simulated hardware needs
// to remember: ports, the mirror sessions it counts, the local AS, and the
// interfaces and static routes of its routing table.
var tracked = map[string]bool{"Port": true, "Span": true, "BGPGlobal": true, "IPv4Intf": true, "IPv4Route": true}

// Replays implements backend.Backend.
func (s *Sim) Replays(kind *model.Kind) bool { return tracked[kind.Name] }

// Name implements backend.Backend.
func (s *Sim) Name() string { return "sim" }

// Close implements backend.Backend.
func (s *Sim) Close() error { return nil }

func mac(port, sub int) string {
	return fmt.Sprintf("02:00:5e:%02x:%02x:%02x", port>>8, port&0xff, sub)
}

// Discover implements backend.Backend.
func (s *Sim) Discover(ctx context.Context) (map[string][]model.Object, error) {
	ports := make([]model.Object, 0, s.opts.Ports)
	for i := 1; i <= s.opts.Ports; i++ {
		ports = append(ports, model.Object{
			"IntfRef":   fmt.Sprintf("fpPort%d", i),
			"IfIndex":   int64(i),
			"MacAddr":   mac(i, 0),
			"Speed":     int64(40000),
			"MediaType": "QSFP+",
		})
	}
	sys := model.Object{"SwVersion": s.opts.Version, "SwitchMac": mac(0, 0)}
	return map[string][]model.Object{"Port": ports, "SystemParam": {sys}}, nil
}

// Apply implements backend.Backend.
func (s *Sim) Apply(ctx context.Context, changes []backend.Change) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	for i, c := range changes {
		if err := s.apply(ctx, c); err != nil {
			for j := i - 1; j >= 0; j-- {
				if uerr := s.apply(ctx, changes[j].Inverse()); uerr != nil {
					return fmt.Errorf("sim: undo after %v failed: %w", err, uerr)
				}
			}
			return err
		}
	}
	return nil
}

func (s *Sim) apply(ctx context.Context, c backend.Change) error {
	if s.opts.Fault != nil {
		if err := s.opts.Fault(c); err != nil {
			return err
		}
	}
	if c.Op != backend.Delete {
		if err := s.check(c); err != nil {
			return err
		}
	}
	switch c.Kind.Name {
	case "Port":
		s.applyPort(c)
	case "User":
		if err := s.applyUser(ctx, c); err != nil {
			return err
		}
	}
	s.noteChange(c)
	if !tracked[c.Kind.Name] {
		return nil
	}
	byKey := s.applied[c.Kind.Name]
	if byKey == nil {
		byKey = map[string]model.Object{}
		s.applied[c.Kind.Name] = byKey
	}
	if c.Op == backend.Delete {
		delete(byKey, c.Key)
	} else {
		byKey[c.Key] = c.After.Clone()
	}
	return nil
}

func refused(status int, kind, field, format string, args ...any) error {
	return apierr.New(status, apierr.CodeBackend, kind, field, "the switch refused: "+format, args...)
}

// check enforces what the simulated hardware cannot do.
func (s *Sim) check(c backend.Change) error {
	o := c.After
	switch c.Kind.Name {
	case "Port":
		name := o.Str("IntfRef")
		n, sub, _ := model.ParsePortName(name)
		if n > s.opts.Ports {
			return refused(http.StatusBadRequest, "Port", "IntfRef", "%s does not exist; this switch has fpPort1..fpPort%d", name, s.opts.Ports)
		}
		speed := o.Int("Speed")
		if !supportedSpeeds[speed] {
			return refused(http.StatusBadRequest, "Port", "Speed", "Speed %d is not supported; use 1000, 10000, 25000, 40000, 50000 or 100000", speed)
		}
		mode := o.Str("BreakOutMode")
		if sub != 0 {
			parent := s.applied["Port"][fmt.Sprintf("fpPort%d", n)]
			if parent == nil || parent.Str("BreakOutMode") != mode {
				return refused(http.StatusBadRequest, "Port", "BreakOutMode", "%s belongs to the breakout of fpPort%d; change BreakOutMode there", name, n)
			}
		}
		if max := laneSpeed[mode]; (sub != 0 || strings.HasPrefix(mode, "1x")) && speed > max {
			return refused(http.StatusBadRequest, "Port", "Speed", "Speed %d is more than a %s lane can carry (%d)", speed, mode, max)
		}
		if sub == 0 && c.Op == backend.Update && c.Before.Str("BreakOutMode") != mode {
			for key := range s.applied["Port"] {
				if pn, ps, _ := model.ParsePortName(key); pn == n && ps != 0 {
					return refused(http.StatusConflict, "Port", "BreakOutMode", "%s still has sub-port %s", name, key)
				}
			}
		}
	case "Span":
		if c.Op == backend.Create && o.Str("AdminState") == "UP" || c.Op == backend.Update && o.Str("AdminState") == "UP" && c.Before.Str("AdminState") != "UP" {
			active := 0
			for _, sp := range s.applied["Span"] {
				if sp.Str("AdminState") == "UP" {
					active++
				}
			}
			if active >= MaxSpanSessions {
				return refused(http.StatusConflict, "Span", "AdminState", "the switch has %d mirror sessions and all are in use", MaxSpanSessions)
			}
		}
	}
	return nil
}

// applyPort keeps the port's link state: OperState follows AdminState.
func (s *Sim) applyPort(c backend.Change) {
	name := c.Key
	if c.Op == backend.Delete {
		delete(s.ports, name)
		return
	}
	p := s.ports[name]
	if p == nil {
		n, sub, _ := model.ParsePortName(name)
		p = &portState{ifIndex: int64(n), mac: mac(n, 0)}
		if sub != 0 {
			p.ifIndex, p.mac = int64(1000*n+sub), mac(n, sub)
		}
		s.ports[name] = p
	}
	// Read-only fields come from the hardware.
	c.After["IfIndex"], c.After["MacAddr"] = p.ifIndex, p.mac
	now := time.Now().UTC().Round(0)
	up := c.After.Str("AdminState") == "UP"
	switch {
	case up && !p.operUp:
		p.operUp, p.upSince = true, now
		p.numUp++
		p.lastUp = now.String()
	case !up && p.operUp:
		ms := now.Sub(p.upSince).Milliseconds()
		p.inOctets += ms * 125
		p.outOctet += ms * 100
		p.operUp = false
		p.numDown++
		p.lastDown = now.String()
	}
}

// State implements backend.Backend.
func (s *Sim) State(ctx context.Context, kind *model.Kind, o model.Object) (model.Object, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	st := model.Object{}
	switch kind.Name {
	case "Port":
		p := s.ports[o.Str("IntfRef")]
		if p == nil {
			return nil, apierr.New(http.StatusServiceUnavailable, apierr.CodeNotReady, "Port", "", "port %s is not known to the switch yet", o.Str("IntfRef"))
		}
		in, out := p.inOctets, p.outOctet
		if p.operUp {
			ms := time.Since(p.upSince).Milliseconds()
			in, out = in+ms*125, out+ms*100
		}
		st["Name"] = o.Str("IntfRef")
		st["OperState"] = upDown(p.operUp)
		st["NumUpEvents"], st["NumDownEvents"] = p.numUp, p.numDown
		st["LastUpEventTime"], st["LastDownEventTime"] = p.lastUp, p.lastDown
		st["IfInOctets"], st["IfOutOctets"] = in, out
		st["IfInUcastPkts"], st["IfOutUcastPkts"] = in/500, out/500
		st["PresentInHW"] = "YES"
	case "IPv4Intf":
		p := s.ports[o.Str("IntfRef")]
		up := p != nil && p.operUp && o.Str("AdminState") == "UP"
		st["OperState"] = upDown(up)
		if p != nil {
			st["IfIndex"] = p.ifIndex
			if up {
				st["NumUpEvents"] = int64(1)
			}
		}
		st["L2IntfType"] = "Port"
		n, _, _ := model.ParsePortName(o.Str("IntfRef"))
		st["L2IntfId"] = int64(n)
	case "BGPGlobal":
		st["AS"] = o.Str("ASNum")
	case "BGPv4Neighbor":
		local := o.Str("LocalAS")
		if local == "" {
			local = s.applied["BGPGlobal"]["default"].Str("ASNum")
		}
		la, _ := model.ParseASN(local)
		pa, _ := model.ParseASN(o.Str("PeerAS"))
		if la != pa {
			st["PeerType"] = int64(1)
		}
		st["SessionState"] = int64(1) // Idle: a simulated switch has no peers to reach
	case "NtpServer":
		st["Status"] = "unreachable (simulated switch)"
		st["Stratum"] = int64(16)
	case "SystemParam":
		st["Distro"] = distro()
		st["Kernel"] = kernel()
		st["UpTime"] = time.Since(s.started).Round(time.Second).String()
	}
	s.fillCompatState(kind, o, st)
	return st, nil
}

func upDown(up bool) string {
	if up {
		return "UP"
	}
	return "DOWN"
}

func distro() string {
	b, err := os.ReadFile("/etc/os-release")
	if err != nil {
		return "unknown"
	}
	for _, line := range strings.Split(string(b), "\n") {
		if v, ok := strings.CutPrefix(line, "PRETTY_NAME="); ok {
			return strings.Trim(v, `"`)
		}
	}
	return "unknown"
}

func kernel() string {
	b, err := os.ReadFile("/proc/sys/kernel/osrelease")
	if err != nil {
		return "unknown"
	}
	return "Linux " + strings.TrimSpace(string(b))
}
