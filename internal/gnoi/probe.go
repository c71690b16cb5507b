package gnoi

import (
	"bufio"
	"bytes"
	"context"
	"fmt"
	"io"
	"net"
	"net/netip"
	"os/exec"
	"regexp"
	"strconv"
	"strings"
	"sync"
	"time"

	spb "github.com/openconfig/gnoi/system"
	"github.com/openconfig/gnoi/types"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"

	"github.com/swmgr/swmgr/internal/auth"
	"github.com/swmgr/swmgr/internal/gnmi"
)

// ProbeLimits bound what one Ping or Traceroute, and one user's at once,
// may make the switch send; a zero field is its default.
type ProbeLimits struct {
	MaxCount    int           // echo requests of one Ping: DefaultMaxCount
	MinInterval time.Duration // between a non-admin's echo requests: DefaultMinInterval
	MaxDuration time.Duration // of one probe, then it is stopped: DefaultMaxDuration
	UserProbes  int           // probes of one user at once: DefaultUserProbes
}

// Defaults of ProbeLimits, and a Ping's defaults.
const (
	DefaultMaxCount    = 1000
	DefaultMinInterval = 200 * time.Millisecond
	DefaultMaxDuration = 10 * time.Minute
	DefaultUserProbes  = 4
	defaultCount       = 5
	defaultInterval    = time.Second
	defaultWait        = 2 * time.Second
	maxWait            = time.Minute
	maxSize            = 65507 // an IPv4 datagram's payload less the ICMP header
	defaultMaxTTL      = 30
	maxTTL             = 255
)

func (l ProbeLimits) withDefaults() ProbeLimits {
	if l.MaxCount <= 0 {
		l.MaxCount = DefaultMaxCount
	}
	if l.MinInterval <= 0 {
		l.MinInterval = DefaultMinInterval
	}
	if l.MaxDuration <= 0 {
		l.MaxDuration = DefaultMaxDuration
	}
	if l.UserProbes <= 0 {
		l.UserProbes = DefaultUserProbes
	}
	return l
}

// probes counts each user's probes running.
type probes struct {
	limits ProbeLimits
	mu     sync.Mutex
	byUser map[string]int
}

// start counts one more probe of user; ResourceExhausted when the user
// runs as many as the limit. done ends it.
func (p *probes) start(user string) (done func(), err error) {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.byUser == nil {
		p.byUser = map[string]int{}
	}
	if p.byUser[user] >= p.limits.UserProbes {
		return nil, status.Errorf(codes.ResourceExhausted, "user %s runs %d pings and traceroutes already: wait for one to end", user, p.byUser[user])
	}
	p.byUser[user]++
	return func() {
		p.mu.Lock()
		defer p.mu.Unlock()
		if p.byUser[user]--; p.byUser[user] == 0 {
			delete(p.byUser, user)
		}
	}, nil
}

// Probe is a ping or traceroute to run: its program and arguments, built
// from parsed values only (no shell; the destination an address, after
// "--").
type Probe struct {
	Argv []string
}

// vrfName is what a network instance may be called (a Linux VRF device).
var vrfName = regexp.MustCompile(`^[A-Za-z0-9][A-Za-z0-9_.-]{0,14}$`)

// hostName is what a destination that is not an address may be: a DNS
// name (RFC 1123 labels).
var hostName = regexp.MustCompile(`^([A-Za-z0-9]([A-Za-z0-9-]{0,61}[A-Za-z0-9])?\.)*[A-Za-z0-9]([A-Za-z0-9-]{0,61}[A-Za-z0-9])?\.?$`)

// resolve parses dest as an address, or resolves it as a name (the first
// address of the family asked for).
func resolve(ctx context.Context, dest string, family types.L3Protocol) (netip.Addr, error) {
	if dest == "" {
		return netip.Addr{}, invalid("destination is required")
	}
	if a, err := netip.ParseAddr(dest); err == nil {
		if a.Zone() != "" {
			return netip.Addr{}, invalid("destination %q: an address with a zone is not accepted", dest)
		}
		a = a.Unmap()
		if (family == types.L3Protocol_IPV4 && !a.Is4()) || (family == types.L3Protocol_IPV6 && !a.Is6()) {
			return netip.Addr{}, invalid("destination %s is not an %s address", a, family)
		}
		return a, nil
	}
	if len(dest) > 253 || !hostName.MatchString(dest) {
		return netip.Addr{}, invalid("destination %q is neither an IP address nor a host name", dest)
	}
	network := "ip"
	switch family {
	case types.L3Protocol_IPV4:
		network = "ip4"
	case types.L3Protocol_IPV6:
		network = "ip6"
	}
	rctx, cancel := context.WithTimeout(ctx, 10*time.Second)
	defer cancel()
	addrs, err := net.DefaultResolver.LookupNetIP(rctx, network, dest)
	if err != nil || len(addrs) == 0 {
		return netip.Addr{}, status.Errorf(codes.NotFound, "destination %q cannot be resolved: %v", dest, err)
	}
	return addrs[0].Unmap(), nil
}

// source parses the source address ("" none), of dest's family.
func source(src string, dest netip.Addr) (string, error) {
	if src == "" {
		return "", nil
	}
	a, err := netip.ParseAddr(src)
	if err != nil || a.Zone() != "" {
		return "", invalid("source %q is not an IP address", src)
	}
	a = a.Unmap()
	if a.Is4() != dest.Is4() {
		return "", invalid("source %s and destination %s are of different families", a, dest)
	}
	return a.String(), nil
}

// InstanceExec is the command prefix that runs a probe in a network
// instance: "" (the default instance) or a VRF's name; an error is an
// instance that is not there.
type InstanceExec func(instance string) ([]string, error)

// NetnsExec runs probes in netns ("": this namespace), a VRF as a VRF
// device in it: ip [-n NETNS] vrf exec VRF, ip netns exec NETNS, or
// nothing. What runs a probe when the dataplane does not say
// (Options.ExecIn).
func NetnsExec(netns string) InstanceExec {
	return func(instance string) ([]string, error) {
		switch {
		case instance != "" && netns != "":
			return []string{"ip", "-n", netns, "vrf", "exec", instance}, nil
		case instance != "":
			return []string{"ip", "vrf", "exec", instance}, nil
		case netns != "":
			return []string{"ip", "netns", "exec", netns}, nil
		}
		return nil, nil
	}
}

// prefix is what runs a probe in the request's network instance, which
// must be "default" or look like a VRF's name.
func prefix(in InstanceExec, instance string) ([]string, error) {
	if instance == "default" || instance == "DEFAULT" {
		instance = ""
	}
	if instance != "" && !vrfName.MatchString(instance) {
		return nil, invalid("network instance %q is not a VRF's name", instance)
	}
	argv, err := in(instance)
	if err != nil {
		return nil, invalid("network instance %q: %v", instance, err)
	}
	return argv, nil
}

// waitOf is a request's wait for a reply (0: the default), bounded.
func waitOf(ns int64) (time.Duration, error) {
	wait := time.Duration(ns)
	switch {
	case wait == 0:
		return defaultWait, nil
	case wait < 0 || wait > maxWait:
		return 0, invalid("wait %v: from 1ms to %v", wait, maxWait)
	}
	return wait, nil
}

// probeRequest is what Ping's and Traceroute's requests say of where to
// probe.
type probeRequest interface {
	GetDestination() string
	GetSource() string
	GetL3Protocol() types.L3Protocol
	GetNetworkInstance() string
}

// target is where a probe runs (the command's prefix: namespace, VRF) and
// the destination and source addresses it is given.
func target(ctx context.Context, r probeRequest, in InstanceExec) (argv []string, dest netip.Addr, src string, err error) {
	if dest, err = resolve(ctx, r.GetDestination(), r.GetL3Protocol()); err != nil {
		return nil, dest, "", err
	}
	if src, err = source(r.GetSource(), dest); err != nil {
		return nil, dest, "", err
	}
	argv, err = prefix(in, r.GetNetworkInstance())
	return argv, dest, src, err
}

// seconds is d in seconds as ping and traceroute take it.
func seconds(d time.Duration) string { return strconv.FormatFloat(d.Seconds(), 'f', 3, 64) }

// PingArgs checks a PingRequest against the limits (admin: whether its
// user is an admin, who may send faster) and builds the command.
func PingArgs(ctx context.Context, r *spb.PingRequest, l ProbeLimits, admin bool, in InstanceExec) (*Probe, error) {
	count := int(r.GetCount())
	switch {
	case count == 0:
		count = defaultCount
	case count < 0 || count > l.MaxCount:
		return nil, invalid("count %d: send 1 to %d echo requests", count, l.MaxCount)
	}
	interval := time.Duration(r.GetInterval())
	switch {
	case interval == 0:
		interval = defaultInterval
	case interval < 0:
		return nil, invalid("interval %v is negative", interval)
	case interval < l.MinInterval && !admin:
		return nil, invalid("interval %v: less than %v between echo requests is for admins", interval, l.MinInterval)
	case interval < 2*time.Millisecond:
		return nil, invalid("interval %v: at least 2ms", interval)
	}
	if time.Duration(count)*interval > l.MaxDuration {
		return nil, invalid("count %d at interval %v lasts more than %v", count, interval, l.MaxDuration)
	}
	wait, err := waitOf(r.GetWait())
	if err != nil {
		return nil, err
	}
	if r.GetSize() < 0 || r.GetSize() > maxSize {
		return nil, invalid("size %d: from 0 to %d bytes", r.GetSize(), maxSize)
	}
	argv, dest, src, err := target(ctx, r, in)
	if err != nil {
		return nil, err
	}
	argv = append(argv, "ping", "-n", familyFlag(dest), "-c", strconv.Itoa(count), "-i", seconds(interval), "-W", seconds(wait))
	if r.GetSize() > 0 {
		argv = append(argv, "-s", strconv.Itoa(int(r.GetSize())))
	}
	if r.GetDoNotFragment() {
		argv = append(argv, "-M", "do")
	}
	if src != "" {
		argv = append(argv, "-I", src)
	}
	return &Probe{Argv: append(argv, "--", dest.String())}, nil
}

func familyFlag(a netip.Addr) string {
	if a.Is4() {
		return "-4"
	}
	return "-6"
}

// TracerouteArgs checks a TracerouteRequest and builds the command: one
// probe per hop (-q 1), numeric (-n).
func TracerouteArgs(ctx context.Context, r *spb.TracerouteRequest, l ProbeLimits, in InstanceExec) (*Probe, error) {
	first := int(r.GetInitialTtl())
	if first == 0 {
		first = 1
	}
	last := int(r.GetMaxTtl())
	if last == 0 {
		last = defaultMaxTTL
	}
	if first < 1 || first > maxTTL || last < first || last > maxTTL {
		return nil, invalid("initial_ttl %d and max_ttl %d: 1 <= initial_ttl <= max_ttl <= %d", first, last, maxTTL)
	}
	wait, err := waitOf(r.GetWait())
	if err != nil {
		return nil, err
	}
	if time.Duration(last-first+1)*wait > l.MaxDuration {
		return nil, invalid("%d hops waiting %v each last more than %v", last-first+1, wait, l.MaxDuration)
	}
	argv, dest, src, err := target(ctx, r, in)
	if err != nil {
		return nil, err
	}
	argv = append(argv, "traceroute", "-n", familyFlag(dest), "-q", "1", "-f", strconv.Itoa(first), "-m", strconv.Itoa(last), "-w", seconds(wait))
	switch r.GetL4Protocol() {
	case spb.TracerouteRequest_ICMP:
		argv = append(argv, "-I")
	case spb.TracerouteRequest_TCP:
		argv = append(argv, "-T")
	case spb.TracerouteRequest_UDP:
		argv = append(argv, "-U")
	default:
		return nil, invalid("l4protocol %s: use ICMP, TCP or UDP", r.GetL4Protocol())
	}
	if r.GetDoNotFragment() {
		argv = append(argv, "-F")
	}
	if src != "" {
		argv = append(argv, "-s", src)
	}
	return &Probe{Argv: append(argv, "--", dest.String())}, nil
}

// maxStderr is how much of a probe's error output is kept for its error.
const maxStderr = 4 << 10

// Run runs the probe until it ends, ctx ends or limit passes, handing
// each line of its output to line; an exit that is not the program's
// "no reply" (1) is an error with its message.
func (p *Probe) Run(ctx context.Context, limit time.Duration, line func(string) error) error {
	ctx, cancel := context.WithTimeout(ctx, limit)
	defer cancel()
	cmd := exec.CommandContext(ctx, p.Argv[0], p.Argv[1:]...)
	cmd.Env = []string{"PATH=/usr/sbin:/usr/bin:/sbin:/bin", "LC_ALL=C"}
	cmd.WaitDelay = 5 * time.Second
	var stderr limitedBuffer
	stderr.limit = maxStderr
	cmd.Stderr = &stderr
	out, err := cmd.StdoutPipe()
	if err != nil {
		return status.Errorf(codes.Internal, "%s: %v", p.Argv[0], err)
	}
	if err := cmd.Start(); err != nil {
		return status.Errorf(codes.Unavailable, "%s cannot be run: %v", p.Argv[0], err)
	}
	sc := bufio.NewScanner(out)
	var lerr error
	for sc.Scan() && lerr == nil {
		lerr = line(sc.Text())
	}
	if lerr != nil {
		cancel()
	}
	_, _ = io.Copy(io.Discard, out)
	werr := cmd.Wait()
	switch {
	case lerr != nil:
		return lerr
	case ctx.Err() == context.DeadlineExceeded:
		return status.Errorf(codes.DeadlineExceeded, "stopped after %v", limit)
	case ctx.Err() != nil:
		return status.FromContextError(ctx.Err()).Err()
	}
	if ee, ok := werr.(*exec.ExitError); ok && ee.ExitCode() == 1 {
		return nil // no reply: the answers say so
	}
	if werr != nil {
		msg := strings.TrimSpace(stderr.String())
		if msg == "" {
			msg = werr.Error()
		}
		return status.Errorf(codes.InvalidArgument, "%s: %s", strings.Join(p.Argv, " "), msg)
	}
	return nil
}

// limitedBuffer keeps the first limit bytes written to it.
type limitedBuffer struct {
	bytes.Buffer
	limit int
}

func (b *limitedBuffer) Write(p []byte) (int, error) {
	if room := b.limit - b.Len(); room > 0 {
		b.Buffer.Write(p[:min(room, len(p))])
	}
	return len(p), nil
}

var (
	pingReply   = regexp.MustCompile(`^(\d+) bytes from ([^:]+): icmp_seq=(\d+) ttl=(\d+) time=([\d.]+) ms`)
	pingTotals  = regexp.MustCompile(`^(\d+) packets transmitted, (\d+) (?:packets )?received.*time (\d+)ms`)
	pingRTT     = regexp.MustCompile(`^rtt min/avg/max/mdev = ([\d.]+)/([\d.]+)/([\d.]+)/([\d.]+) ms`)
	traceHeader = regexp.MustCompile(`^traceroute to (\S+) \(([^)]+)\), (\d+) hops max, (\d+) byte packets`)
	traceHop    = regexp.MustCompile(`^\s*(\d+)\s+(\S+)(?:\s+([\d.]+) ms)?(?:\s+!(\S*))?`)
)

// ms is a time in milliseconds, as ping writes it, in nanoseconds.
func ms(s string) int64 {
	f, _ := strconv.ParseFloat(s, 64)
	return int64(f * 1e6)
}

func atoi(s string) int32 {
	n, _ := strconv.ParseInt(s, 10, 32)
	return int32(n)
}

// PingParser reads ping's output: a response per reply, and the summary
// at the end (Summary).
type PingParser struct {
	dest    string
	summary *spb.PingResponse
}

// Line is the response a line of ping's output makes (nil: none).
func (p *PingParser) Line(l string) *spb.PingResponse {
	if m := pingReply.FindStringSubmatch(l); m != nil {
		return &spb.PingResponse{Bytes: atoi(m[1]), Source: m[2], Sequence: atoi(m[3]), Ttl: atoi(m[4]), Time: ms(m[5])}
	}
	if strings.HasPrefix(l, "PING ") {
		if f := strings.Fields(l); len(f) > 1 {
			p.dest = f[1]
		}
	}
	if m := pingTotals.FindStringSubmatch(l); m != nil {
		p.summary = &spb.PingResponse{Source: p.dest, Sent: atoi(m[1]), Received: atoi(m[2]), Time: ms(m[3])}
	}
	if m := pingRTT.FindStringSubmatch(l); m != nil && p.summary != nil {
		p.summary.MinTime, p.summary.AvgTime, p.summary.MaxTime, p.summary.StdDev = ms(m[1]), ms(m[2]), ms(m[3]), ms(m[4])
	}
	return nil
}

// Summary is the response of ping's statistics (nil if it wrote none).
func (p *PingParser) Summary() *spb.PingResponse { return p.summary }

// traceStates maps traceroute's annotations (!H ...) to gNOI's states.
func traceState(note string) (spb.TracerouteResponse_State, int32) {
	switch {
	case note == "H":
		return spb.TracerouteResponse_HOST_UNREACHABLE, 1
	case note == "N":
		return spb.TracerouteResponse_NETWORK_UNREACHABLE, 0
	case note == "P":
		return spb.TracerouteResponse_PROTOCOL_UNREACHABLE, 2
	case note == "S":
		return spb.TracerouteResponse_SOURCE_ROUTE_FAILED, 5
	case strings.HasPrefix(note, "F"):
		return spb.TracerouteResponse_FRAGMENTATION_NEEDED, 4
	case note == "X":
		return spb.TracerouteResponse_PROHIBITED, 13
	case note == "V":
		return spb.TracerouteResponse_PRECEDENCE_VIOLATION, 14
	case note == "C":
		return spb.TracerouteResponse_PRECEDENCE_CUTOFF, 15
	}
	if code, err := strconv.Atoi(note); err == nil {
		return spb.TracerouteResponse_ICMP, int32(code)
	}
	return spb.TracerouteResponse_UNKNOWN, 0
}

// TraceLine is the response a line of traceroute's output makes (nil:
// none): the header first, then one per hop.
func TraceLine(l string) *spb.TracerouteResponse {
	if m := traceHeader.FindStringSubmatch(l); m != nil {
		return &spb.TracerouteResponse{DestinationName: m[1], DestinationAddress: m[2], Hops: atoi(m[3]), PacketSize: atoi(m[4])}
	}
	m := traceHop.FindStringSubmatch(l)
	if m == nil {
		return nil
	}
	r := &spb.TracerouteResponse{Hop: atoi(m[1])}
	if m[2] == "*" {
		r.State = spb.TracerouteResponse_NONE
		return r
	}
	r.Address = m[2]
	if m[3] != "" {
		r.Rtt = ms(m[3])
	}
	if len(m) > 4 && strings.Contains(l, "!") {
		r.State, r.IcmpCode = traceState(m[4])
	}
	return r
}

// isAdmin says whether the RPC's user is an admin.
func isAdmin(ctx context.Context) bool { return gnmi.Identity(ctx).Role >= auth.Admin }

// run runs a probe built for the RPC's user, counted among the user's
// probes, sending what parse makes of each line of its output.
func run[T any](ctx context.Context, s *Server, p *Probe, err error, parse func(string) *T, send func(*T) error) error {
	if err != nil {
		return err
	}
	done, err := s.probe.start(gnmi.Identity(ctx).Name)
	if err != nil {
		return err
	}
	defer done()
	return p.Run(ctx, s.probe.limits.MaxDuration+maxWait, func(l string) error {
		if resp := parse(l); resp != nil {
			return send(resp)
		}
		return nil
	})
}

// instanceExec is what runs a probe in a network instance: the
// dataplane's word, else a VRF device in Options.Netns.
func (s *Server) instanceExec() InstanceExec {
	if s.o.ExecIn != nil {
		return s.o.ExecIn
	}
	return NetnsExec(s.o.Netns)
}

// Ping runs ping from the switch and streams a response per reply, then
// the summary.
func (s *Server) Ping(r *spb.PingRequest, stream spb.System_PingServer) error {
	ctx := stream.Context()
	p, err := PingArgs(ctx, r, s.probe.limits, isAdmin(ctx), s.instanceExec())
	var parse PingParser
	if err := run(ctx, s, p, err, parse.Line, stream.Send); err != nil {
		return err
	}
	if sum := parse.Summary(); sum != nil {
		return stream.Send(sum)
	}
	return status.Error(codes.Internal, "ping wrote no statistics")
}

// Traceroute runs traceroute from the switch and streams its header,
// then a response per hop.
func (s *Server) Traceroute(r *spb.TracerouteRequest, stream spb.System_TracerouteServer) error {
	ctx := stream.Context()
	p, err := TracerouteArgs(ctx, r, s.probe.limits, s.instanceExec())
	return run(ctx, s, p, err, TraceLine, stream.Send)
}

// String is the command line, for the log and errors.
func (p *Probe) String() string { return fmt.Sprint(p.Argv) }
