package frr

import (
	"context"
	"encoding/binary"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"net/netip"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"time"
)

// BFD is the part of the configuration bfdd runs: named parameter sets
// (FRR's profiles, FlexSwitch's BfdSessionParam) and the sessions the
// switch runs on its own (FRR's static peers, FlexSwitch's BfdSession).
// BGP neighbours ask bfdd for their sessions themselves (Neighbor's
// BfdEnable and BfdSessionParam: `neighbor X bfd profile P`).
type BFD struct {
	Profiles []BFDProfile
	Peers    []BFDPeer
}

// BFDProfile is one parameter set; intervals are milliseconds. Zero
// values take bfdd's defaults, except EchoReceiveInterval, whose 0 says
// no echo packets are received (FlexSwitch's RequiredMinEchoRxInterval).
type BFDProfile struct {
	Name                string
	ReceiveInterval     uint32
	TransmitInterval    uint32
	DetectMultiplier    uint8
	EchoReceiveInterval uint32
}

// BFDPeer is one static session: with the peer at Address, on Interface
// ("" for the one the route takes), with Profile's parameters ("" for
// bfdd's defaults).
type BFDPeer struct {
	Address   string
	Interface string
	Profile   string
}

// bfdd's defaults, which its running configuration leaves out.
const (
	bfdDefaultInterval    = 300
	bfdDefaultMultiplier  = 3
	bfdDefaultEchoReceive = 50
)

// bfdBlock is the `bfd` node as bfdd prints it: its profiles and peers,
// each a header and its lines, in the order they must be entered
// (profiles before the peers that name them).
type bfdBlock []bfdNode

type bfdNode struct {
	header string // "profile NAME" or "peer ADDR[ interface IF]"
	lines  []string
}

func (n bfdNode) isProfile() bool { return strings.HasPrefix(n.header, "profile ") }

// render turns the BFD configuration into bfdd's normal form.
func (b BFD) render() (bfdBlock, error) {
	var out bfdBlock
	var errs []error
	seen := map[string]bool{}
	for _, p := range b.Profiles {
		if !wordRE.MatchString(p.Name) {
			errs = append(errs, fmt.Errorf("BFD profile %q: use letters, digits and _.:@/+- only", p.Name))
			continue
		}
		lines, err := p.lines()
		if err != nil {
			errs = append(errs, fmt.Errorf("BFD profile %s: %w", p.Name, err))
			continue
		}
		n := bfdNode{header: "profile " + p.Name, lines: lines}
		if seen[n.header] {
			errs = append(errs, fmt.Errorf("BFD profile %s is configured twice", p.Name))
			continue
		}
		seen[n.header] = true
		out = append(out, n)
	}
	for _, p := range b.Peers {
		a, err := netip.ParseAddr(p.Address)
		if err != nil || a.Zone() != "" {
			errs = append(errs, fmt.Errorf("BFD peer %q is not an IP address", p.Address))
			continue
		}
		n := bfdNode{header: "peer " + a.String()}
		if p.Interface != "" {
			if !ifNameRE.MatchString(p.Interface) {
				errs = append(errs, fmt.Errorf("BFD peer %s: interface %q is not an interface name", a, p.Interface))
				continue
			}
			n.header += " interface " + p.Interface
		}
		if p.Profile != "" {
			if !wordRE.MatchString(p.Profile) {
				errs = append(errs, fmt.Errorf("BFD peer %s: profile %q: use letters, digits and _.:@/+- only", a, p.Profile))
				continue
			}
			n.lines = []string{"profile " + p.Profile}
		}
		if seen[n.header] {
			errs = append(errs, fmt.Errorf("BFD peer %s is configured twice", strings.TrimPrefix(n.header, "peer ")))
			continue
		}
		seen[n.header] = true
		out = append(out, n)
	}
	return out, errors.Join(errs...)
}

// ifNameRE accepts a Linux interface name (at most 15 characters, none
// that FRR's command line would split at).
var ifNameRE = regexp.MustCompile(`^[A-Za-z0-9][A-Za-z0-9_.-]{0,14}$`)

// lines are a profile's settings that differ from bfdd's defaults, in the
// order bfdd prints them.
func (p BFDProfile) lines() ([]string, error) {
	var out []string
	inRange := func(what string, v uint32) error {
		if v != 0 && (v < 10 || v > 60000) {
			return fmt.Errorf("%s %d ms is out of range (10..60000)", what, v)
		}
		return nil
	}
	if err := errors.Join(inRange("receive interval", p.ReceiveInterval), inRange("transmit interval", p.TransmitInterval), inRange("echo receive interval", p.EchoReceiveInterval)); err != nil {
		return nil, err
	}
	if p.DetectMultiplier == 1 {
		return nil, errors.New("detection multiplier 1 is out of range (2..255)")
	}
	if m := p.DetectMultiplier; m != 0 && m != bfdDefaultMultiplier {
		out = append(out, fmt.Sprintf("detect-multiplier %d", m))
	}
	if t := p.TransmitInterval; t != 0 && t != bfdDefaultInterval {
		out = append(out, fmt.Sprintf("transmit-interval %d", t))
	}
	if r := p.ReceiveInterval; r != 0 && r != bfdDefaultInterval {
		out = append(out, fmt.Sprintf("receive-interval %d", r))
	}
	switch e := p.EchoReceiveInterval; e {
	case 0:
		out = append(out, "echo receive-interval disabled")
	case bfdDefaultEchoReceive:
	default:
		out = append(out, fmt.Sprintf("echo receive-interval %d", e))
	}
	return out, nil
}

// profileSettings are the commands that set every setting of a profile
// whose lines are lines: bfdd has no `no` form for them, so a setting
// that goes back to its default is set to the default.
func profileSettings(lines []string) []string {
	settings := []struct{ prefix, def string }{
		{"detect-multiplier ", strconv.Itoa(bfdDefaultMultiplier)},
		{"transmit-interval ", strconv.Itoa(bfdDefaultInterval)},
		{"receive-interval ", strconv.Itoa(bfdDefaultInterval)},
		{"echo receive-interval ", strconv.Itoa(bfdDefaultEchoReceive)},
	}
	out := make([]string, 0, len(settings))
	for _, s := range settings {
		cmd := s.prefix + s.def
		for _, l := range lines {
			if strings.HasPrefix(l, s.prefix) {
				cmd = l
			}
		}
		out = append(out, cmd)
	}
	return out
}

// parseBFD extracts the `bfd` node from bfdd's running configuration.
func parseBFD(text string) bfdBlock {
	var out bfdBlock
	in := false
	var cur *bfdNode
	for _, raw := range strings.Split(text, "\n") {
		line := strings.TrimRight(raw, " \r")
		trimmed := strings.TrimSpace(line)
		switch {
		case !in:
			in = line == "bfd"
		case line == "exit" || (trimmed != "" && !strings.HasPrefix(line, " ")):
			return out
		case trimmed == "" || trimmed == "!":
		case trimmed == "exit":
			cur = nil
		case strings.HasPrefix(line, "  ") && cur != nil:
			cur.lines = append(cur.lines, trimmed)
		default:
			out = append(out, bfdNode{header: trimmed})
			cur = &out[len(out)-1]
		}
	}
	return out
}

// diffBFD returns the commands that turn bfdd's running `bfd` node into
// the desired one: peers gone first (they may name a profile going too),
// then profiles gone, then profiles and peers added or changed.
func diffBFD(running, desired bfdBlock) []string {
	find := func(b bfdBlock, header string) *bfdNode {
		for i := range b {
			if b[i].header == header {
				return &b[i]
			}
		}
		return nil
	}
	var cmds []string
	for _, profiles := range []bool{false, true} {
		for _, r := range running {
			if r.isProfile() == profiles && find(desired, r.header) == nil {
				cmds = append(cmds, " no "+r.header)
			}
		}
	}
	for _, w := range desired {
		r := find(running, w.header)
		var body []string
		switch {
		case r != nil && slices.Equal(r.lines, w.lines):
			continue
		case w.isProfile():
			body = profileSettings(w.lines)
		case r == nil:
			body = w.lines
		default:
			for _, l := range slices.Backward(r.lines) {
				if !slices.Contains(w.lines, l) {
					body = append(body, "no "+l)
				}
			}
			for _, l := range w.lines {
				if !slices.Contains(r.lines, l) {
					body = append(body, l)
				}
			}
		}
		cmds = append(cmds, " "+w.header)
		for _, l := range body {
			cmds = append(cmds, "  "+l)
		}
		cmds = append(cmds, " exit")
	}
	if len(cmds) == 0 {
		return nil
	}
	return slices.Concat([]string{"bfd"}, cmds, []string{"exit"})
}

// BFDPeerState is one session bfdd runs, as `show bfd peers json` and
// `show bfd peers counters json` report it; intervals are milliseconds.
type BFDPeerState struct {
	Peer                   string `json:"peer"`
	Local                  string `json:"local"`
	VRF                    string `json:"vrf"`
	Interface              string `json:"interface"`
	Multihop               bool   `json:"multihop"`
	ID                     uint32 `json:"id"`
	RemoteID               uint32 `json:"remote-id"`
	Status                 string `json:"status"`   // up, down, init, shutdown
	Uptime                 int64  `json:"uptime"`   // seconds, while up
	Downtime               int64  `json:"downtime"` // seconds, while not up
	Diagnostic             string `json:"diagnostic"`
	RemoteDiagnostic       string `json:"remote-diagnostic"`
	ReceiveInterval        uint32 `json:"receive-interval"`
	TransmitInterval       uint32 `json:"transmit-interval"`
	DetectMultiplier       uint32 `json:"detect-multiplier"`
	RemoteReceiveInterval  uint32 `json:"remote-receive-interval"`
	RemoteTransmitInterval uint32 `json:"remote-transmit-interval"`
	RemoteDetectMultiplier uint32 `json:"remote-detect-multiplier"`
	SessionUp              uint64 `json:"session-up"`
	SessionDown            uint64 `json:"session-down"`
}

// key tells a session apart from the others.
func (s BFDPeerState) key() string { return s.VRF + "|" + s.Interface + "|" + s.Peer }

// BFDPeers reads every session bfdd runs, with its up and down counts.
func (r *Router) BFDPeers(ctx context.Context) ([]BFDPeerState, error) {
	c, err := r.dialVty(ctx, "bfdd")
	if err != nil {
		return nil, err
	}
	defer c.Close()
	peers, err := c.run("show bfd peers json")
	if err != nil {
		return nil, err
	}
	counters, err := c.run("show bfd peers counters json")
	if err != nil {
		return nil, err
	}
	return parseBFDPeers([]byte(peers), []byte(counters))
}

func parseBFDPeers(peers, counters []byte) ([]BFDPeerState, error) {
	var out, cs []BFDPeerState
	if err := json.Unmarshal(peers, &out); err != nil {
		return nil, fmt.Errorf("frr: reading bfdd's peers: %w", err)
	}
	if err := json.Unmarshal(counters, &cs); err != nil {
		return nil, fmt.Errorf("frr: reading bfdd's counters: %w", err)
	}
	for i := range out {
		for _, c := range cs {
			if c.key() == out[i].key() {
				out[i].SessionUp, out[i].SessionDown = c.SessionUp, c.SessionDown
			}
		}
	}
	return out, nil
}

// ResetBFDPeer takes a session down (administratively: its peer sees
// AdminDown, which ends no BGP session) and brings it up again. A session
// only BGP asked for is made a static peer for the while, then left to
// BGP again. ok is false when bfdd runs no such session.
func (r *Router) ResetBFDPeer(ctx context.Context, address, ifname string) (ok bool, err error) {
	peers, err := r.BFDPeers(ctx)
	if err != nil {
		return false, err
	}
	i := slices.IndexFunc(peers, func(p BFDPeerState) bool {
		return p.Peer == address && (ifname == "" || p.Interface == ifname) && !p.Multihop
	})
	if i < 0 {
		return false, nil
	}
	node, err := BFD{Peers: []BFDPeer{{Address: peers[i].Peer, Interface: peers[i].Interface}}}.render()
	if err != nil {
		return false, err
	}
	header := node[0].header
	r.applyMu.Lock()
	defer r.applyMu.Unlock()
	running, err := r.show(ctx, "bfdd", "show running-config")
	if err != nil {
		return false, err
	}
	static := slices.ContainsFunc(parseBFD(running), func(n bfdNode) bool { return n.header == header })
	// Two rounds: one batch is committed whole at its end, where a
	// shutdown and its no shutdown would cancel out.
	if err := r.configureOn(ctx, "bfdd", []string{"bfd", " " + header, "  shutdown", " exit", "exit"}); err != nil {
		return true, err
	}
	up := []string{"bfd", " " + header, "  no shutdown", " exit"}
	if !static {
		up = append(up, " no "+header)
	}
	return true, r.configureOn(ctx, "bfdd", append(up, "exit"))
}

// The messages of bfdd's control socket (bfdd/bfdctl.h): a header of the
// payload's length (big-endian), an id, a type and a version, then JSON.
const (
	bfdctlNotify        = 4 // BMT_NOTIFY: which notifications a client wants
	bfdctlVersion       = 1
	bfdctlNotifyState   = 1 // BCM_NOTIFY_PEER_STATE
	bfdctlHeaderLen     = 8
	bfdctlMaxPayloadLen = 1 << 20
)

// WatchBFD calls changed each time bfdd says a session changed state,
// through its control socket (the notifications its peers' state changes
// send), until ctx ends; after bfdd restarts it connects again. A caller
// reads the sessions' state on each call (BFDPeers): the notification is
// the moment, not the whole state.
func (r *Router) WatchBFD(ctx context.Context, changed func()) {
	for ctx.Err() == nil {
		err := r.watchBFDOnce(ctx, changed)
		if ctx.Err() != nil {
			return
		}
		if r.opts.Log != nil {
			r.opts.Log.Debug("frr: bfdd's control socket", "err", err)
		}
		select {
		case <-ctx.Done():
		case <-time.After(time.Second):
		}
	}
}

func (r *Router) watchBFDOnce(ctx context.Context, changed func()) error {
	var d net.Dialer
	conn, err := d.DialContext(ctx, "unix", r.bfdctlPath())
	if err != nil {
		return err
	}
	stop := context.AfterFunc(ctx, func() { conn.Close() })
	defer stop()
	defer conn.Close()
	req := make([]byte, bfdctlHeaderLen+8)
	binary.BigEndian.PutUint32(req, 8)
	req[6], req[7] = bfdctlNotify, bfdctlVersion
	// bfdd copies the flags as they are, in its own (the host's) order.
	binary.NativeEndian.PutUint64(req[bfdctlHeaderLen:], bfdctlNotifyState)
	if _, err := conn.Write(req); err != nil {
		return err
	}
	head := make([]byte, bfdctlHeaderLen)
	for {
		if _, err := io.ReadFull(conn, head); err != nil {
			return err
		}
		n := binary.BigEndian.Uint32(head)
		if n > bfdctlMaxPayloadLen {
			return fmt.Errorf("bfdd's control socket: a message of %d bytes", n)
		}
		if _, err := io.CopyN(io.Discard, conn, int64(n)); err != nil {
			return err
		}
		if head[6] == bfdctlNotify {
			changed()
		}
	}
}

func (r *Router) bfdctlPath() string { return filepath.Join(r.opts.Dir, "bfdd.sock") }
