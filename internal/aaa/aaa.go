// Package aaa is swmgr's central authentication, authorization and
// accounting, and the forwarding of its log: the provider behind the
// login check of every front door (package auth asks it before the local
// users), the sender of an accounting record per commit and per command
// run in the CLI (which hands its records to CommandAction's handler),
// and the syslog forwarder of SyslogCollector. Connections to a Tacacs
// server take their source address from its SourceIntf, as the dataplane
// knows it (Options.SourceAddr).
//
// It follows the configuration: at start and after every commit that
// touches Tacacs, TacacsGlobal, RadiusServer, AAAGlobal or SyslogCollector
// it reads them again (secrets in clear, in memory only: they leave the
// process only on the wire to their server) and tells its owner
// (Options.OnChange) so that remote logins cached under the old
// configuration are forgotten.
//
// A login is checked by the methods of AAAGlobal's AuthOrder in order
// (tacacs+ when TacacsGlobal Enable is "true" and a Tacacs exists, radius
// when a RadiusServer exists), each server of a method in its order. The
// first answer, yes or no, is final; a server that cannot be reached,
// times out or answers with an error passes to the next one. When no
// server answered, Login says so (Answered false) and the caller checks
// the local users; that is logged at warning. The role comes from the
// server (TacacsRole, RadiusRole; docs/aaa.md).
package aaa

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"slices"
	"strconv"
	"sync"
	"sync/atomic"
	"time"

	tq "github.com/facebookincubator/tacquito"

	"github.com/swmgr/swmgr/internal/engine/feed"
	"github.com/swmgr/swmgr/internal/model"
)

// Roles a server can give, named as the groups package auth maps to roles.
const (
	RoleAdmin    = "admin"
	RoleOperator = "operator"
	RoleReadOnly = "read-only"
)

func roleName(s string) string {
	switch s {
	case "admin", "operator", "read-only":
		return s
	case "readonly", "read_only", "reader":
		return RoleReadOnly
	}
	return ""
}

// kinds are the kinds whose objects configure this package.
var kinds = []string{"TacacsGlobal", "Tacacs", "RadiusServer", "AAAGlobal", "SyslogCollector"}

// readKinds are the kinds the configuration is read from: kinds, and the
// kind of the switch's host name (model.Hostname), which names the switch
// to the servers (its provider is the system daemon's; this package only
// reads it).
var readKinds = append(kinds[:len(kinds):len(kinds)], model.Hostname.Kind)

// Source is where the configuration comes from: the engine.
type Source interface {
	// Snapshot calls fn with every object of kinds, secrets in clear.
	Snapshot(ctx context.Context, kinds []string, begin func(rev uint64), fn func(k *model.Kind, o model.Object) error) (uint64, error)
	Feed() *feed.Broker
	// LastCommit is the revision of the last commit answered (or about
	// to be): a login waits until the service has followed it.
	LastCommit() uint64
}

// catchUpWait bounds how long a login waits for the service to follow the
// commits answered before it (a feed that lags that much is logged).
const catchUpWait = 2 * time.Second

// Options configure a Service.
type Options struct {
	Source Source
	Log    *slog.Logger
	// OnChange is called after the configuration changed (and once at
	// start): remote logins verified under the old one must be checked
	// again.
	OnChange func()
	// MaxLogins bounds the remote login checks under way at once (each
	// waits on the network, not on a CPU); past it Login answers ErrBusy.
	// Default 64.
	MaxLogins int
	// MaxLoginsPerClient bounds those of one client (an IPv4 address, an
	// IPv6 /64), so that one client cannot take them all; past it Login
	// answers an error that wraps ErrBusy and names the client. Default
	// MaxLogins/8.
	MaxLoginsPerClient int
	// LocalUser reports whether name is a local user's (a User object).
	// A login under such a name asks the servers as any other, but takes
	// none of the MaxLogins: the local admin's way in survives a storm
	// of logins under other names. Its attempts are bounded by the
	// caller's throttle, which counts them per name and address before
	// they start (package auth). Nil: no name is.
	LocalUser func(ctx context.Context, name string) bool
	// QueueLen bounds the accounting records waiting to be sent; past it
	// a record is dropped and counted. Default 1024.
	QueueLen int
	// Syslog receives the service's log lines once a SyslogCollector
	// exists (nil: no forwarding).
	Syslog *Forwarder
	// SourceAddr reads the address of a Tacacs server's SourceIntf (nil:
	// connections take the routing table's source address).
	SourceAddr SourceAddrFunc
	// Now is the clock of the command records' rate (nil: time.Now);
	// tests stop it.
	Now func() time.Time
	// Instance is an id of the data directory (the same at every start,
	// another on every switch): the accounting records' session and task
	// ids begin with it, so that no server takes one switch's record for
	// another's duplicate. Default: a random one per Service.
	Instance string
}

// ErrBusy: too many remote login checks are under way.
var ErrBusy = errors.New("too many logins are being checked by the servers; try again in a second")

// config is one reading of the configuration.
type config struct {
	methods    []method // AuthOrder's methods that have servers, in its order
	accounting bool
	cacheTTL   time.Duration
}

// method is one method of AuthOrder as Login and accounting ask it: its
// servers in their order, and what it notes of a login's outcome.
type method struct {
	name    string // tacacs+ or radius
	kind    string // the kind of its servers, whose ConnFailReason is noted
	servers []methodServer
	// answered, if set, is told after the method was asked about a login
	// whether one of its servers answered.
	answered func(bool)
}

// methodServer is one server of a method: one exchange of each sort with
// it, and what its answer means.
type methodServer struct {
	key  string // ServerIp: its object's key, for its state
	addr string // host:port of its logins, for the log
	// check asks the server about a user name and password: the role it
	// gives and yes, or no (ok false) with a nil error. An error (the
	// server could not be reached, timed out or answered with an error)
	// passes to the next server.
	check func(ctx context.Context, name, password, remAddr string) (role string, ok bool, err error)
	// acctAddr is host:port of its accounting, for the log; account sends
	// it one record, nil if it takes none. An error passes the record to
	// the next server of the method.
	acctAddr string
	account  func(ctx context.Context, r Record) error
}

// Service is the provider. Its methods are safe for concurrent use.
type Service struct {
	o      Options
	cfg    atomic.Pointer[config]
	logins *loginSlots

	// state
	mu         sync.Mutex
	failReason map[string]string // kind NUL ServerIp -> ConnFailReason
	// followed is the last commit the service has taken (its
	// configuration read after it, its accounting queued); moved is
	// closed and replaced each time it advances.
	followed  uint64
	moved     chan struct{}
	tacacsUp  string       // "UP", "DOWN" or ""
	active    atomic.Int64 // TACACS+ sessions under way
	fallbacks atomic.Int64
	acct      *accounting
	cmdRate   *rateByUser // CLI command records per user
	sources   *sourceNotes

	stop context.CancelFunc
	done chan struct{}
}

// New makes a Service; Start reads the configuration and follows it.
func New(o Options) *Service {
	if o.MaxLogins <= 0 {
		o.MaxLogins = 64
	}
	if o.MaxLoginsPerClient <= 0 {
		o.MaxLoginsPerClient = max(1, o.MaxLogins/8)
	}
	if o.QueueLen <= 0 {
		o.QueueLen = 1024
	}
	if o.Log == nil {
		o.Log = slog.New(slog.DiscardHandler)
	}
	if o.Now == nil {
		o.Now = time.Now
	}
	if o.Instance == "" {
		o.Instance = randomInstance()
	}
	s := &Service{o: o, moved: make(chan struct{}), logins: newLoginSlots(o.MaxLogins, o.MaxLoginsPerClient), failReason: map[string]string{}}
	s.cfg.Store(&config{})
	s.acct = newAccounting(s, o.QueueLen)
	s.cmdRate = newRateByUser(CommandRate, CommandBurst)
	s.sources = &sourceNotes{log: o.Log, why: map[string]string{}}
	return s
}

// Start reads the configuration, then follows commits: each changes the
// configuration it reads, or is an accounting record. It never makes a
// commit wait.
func (s *Service) Start(ctx context.Context) error {
	sub := s.o.Source.Feed().Follow()
	if err := s.reload(ctx, true); err != nil {
		sub.Close()
		return err
	}
	ctx, s.stop = context.WithCancel(context.WithoutCancel(ctx))
	s.done = make(chan struct{})
	s.acct.start(ctx)
	go func() {
		defer close(s.done)
		sub.Watch(ctx, func(events []feed.Event, dropped bool) {
			touched, changed := dropped, dropped // some were dropped: read again to be sure
			if dropped {
				// Records of the commits the feed dropped for us are lost:
				// counted (as one; how many is not known) when they would
				// have been sent.
				if c := s.cfg.Load(); c.accounting && c.accounts() {
					s.acct.dropped.Add(1)
					s.o.Log.Warn("accounting records lost: the change feed dropped commits before they were read")
				}
			}
			for _, ev := range events {
				read, aaa := touches(ev.Data)
				touched, changed = touched || read, changed || aaa
			}
			if touched {
				if err := s.reload(ctx, changed); err != nil && ctx.Err() == nil {
					s.o.Log.Error("cannot read the AAA configuration", "err", err)
				}
			}
			for _, ev := range events {
				s.acct.commit(ev)
			}
			if n := len(events); n > 0 {
				s.follow(events[n-1].Revision)
			}
		})
	}()
	return nil
}

// Close stops following commits and sending records.
func (s *Service) Close() {
	if s.stop != nil {
		s.stop()
		<-s.done
		s.acct.wait()
	}
}

// touches reports whether a commit changed what reload reads, and whether
// it changed the AAA kinds themselves (not only the switch's name).
func touches(data []byte) (read, aaa bool) {
	for _, k := range readKinds {
		if bytes.Contains(data, []byte(`"Kind":"`+k+`"`)) {
			read = true
			aaa = aaa || slices.Contains(kinds, k)
		}
	}
	return read, aaa
}

// reload reads the configuration and swaps it in; changed says the AAA
// kinds changed (OnChange is told), not only the switch's name.
func (s *Service) reload(ctx context.Context, changed bool) error {
	c := &config{accounting: true, cacheTTL: 30 * time.Second}
	var (
		order    []string
		tacacs   []tacacsServer
		tacacsTO = 10 * time.Second
		radius   []radiusServer
	)
	tacacsOn := false
	var collectors []Collector
	var hostname string
	rev, err := s.o.Source.Snapshot(ctx, readKinds, nil, func(k *model.Kind, o model.Object) error {
		switch k.Name {
		case "TacacsGlobal":
			tacacsOn = o.Str("Enable") == "true"
			tacacsTO = time.Duration(o.Int("Timeout")) * time.Second
		case "Tacacs":
			tacacs = append(tacacs, tacacsServer{
				host:    o.Str("ServerIp"),
				addr:    net.JoinHostPort(o.Str("ServerIp"), strconv.FormatInt(o.Int("Port"), 10)),
				secret:  []byte(o.Str("Secret")),
				service: authenServices[o.Str("AuthService")],
				privLvl: tq.PrivLvl(o.Int("PrivilegeLevel")),
				debug:   o.Int("Debug") == 1,
				source:  s.sourceOf(o.Str("SourceIntf"), o.Str("ServerIp")),
			})
		case "RadiusServer":
			radius = append(radius, radiusServer{
				host: o.Str("ServerIp"), port: int(o.Int("Port")), acctPort: int(o.Int("AcctPort")),
				secret: []byte(o.Str("Secret")), timeout: time.Duration(o.Int("Timeout")) * time.Second,
				retries: int(o.Int("Retries")), priority: o.Int("Priority"),
			})
		case "AAAGlobal":
			order = o.List("AuthOrder")
			c.accounting = o.Bool("Accounting")
			c.cacheTTL = time.Duration(o.Int("CacheSeconds")) * time.Second
		case model.Hostname.Kind:
			hostname = o.Str(model.Hostname.Field)
		case "SyslogCollector":
			collectors = append(collectors, Collector{
				Addr: net.JoinHostPort(o.Str("ServerIpAddr"), strconv.FormatInt(o.Int("Port"), 10)), Name: o.Str("ServerIpAddr"),
				TCP: o.Str("Transport") == "TCP", Severity: model.SeverityLevel(o.Str("Severity")), Facility: int(o.Int("Facility")),
			})
		}
		return nil
	})
	if err != nil {
		return fmt.Errorf("read the AAA configuration: %w", err)
	}
	id := nas{name: nasName(hostname), instance: s.o.Instance}
	for i := range tacacs {
		tacacs[i].nas = id
	}
	for i := range radius {
		radius[i].nas = id
	}
	if order == nil { // no AAAGlobal yet (before the first start's defaults)
		order = []string{"tacacs+", "radius"}
	}
	slices.SortStableFunc(radius, func(a, b radiusServer) int { return int(a.priority - b.priority) })
	if !tacacsOn {
		tacacs = nil
	}
	for _, m := range order {
		switch {
		case m == "tacacs+" && len(tacacs) > 0:
			c.methods = append(c.methods, s.tacacsMethod(tacacs, tacacsTO))
		case m == "radius" && len(radius) > 0:
			c.methods = append(c.methods, radiusMethod(radius))
		}
	}
	s.cfg.Store(c)
	if s.o.Syslog != nil {
		s.o.Syslog.Configure(collectors)
	}
	if changed && s.o.OnChange != nil {
		s.o.OnChange()
	}
	s.follow(rev)
	return nil
}

// follow records that the service has taken every commit up to rev.
func (s *Service) follow(rev uint64) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if rev > s.followed {
		s.followed = rev
		close(s.moved)
		s.moved = make(chan struct{})
	}
}

// catchUp waits, at most catchUpWait, until the service has followed every
// commit answered before it was called: a login right after the commit
// that configured a server is checked with that server, not before it.
func (s *Service) catchUp(ctx context.Context) {
	want := s.o.Source.LastCommit()
	timer := time.NewTimer(catchUpWait)
	defer timer.Stop()
	for {
		s.mu.Lock()
		followed, moved := s.followed, s.moved
		s.mu.Unlock()
		if followed >= want {
			return
		}
		select {
		case <-moved:
		case <-timer.C:
			s.o.Log.Warn("a login is checked before central AAA followed the last commits", "followed", followed, "last_commit", want)
			return
		case <-ctx.Done():
			return
		}
	}
}

// Result is a remote check's outcome.
type Result struct {
	Answered bool          // a server answered; false: check the local users
	OK       bool          // the server said yes
	Group    string        // the role it gave: admin, operator or read-only
	Method   string        // tacacs+ or radius
	TTL      time.Duration // how long the login may be trusted
}

// Configured reports whether any remote method has a server.
func (s *Service) Configured() bool { return len(s.cfg.Load().methods) > 0 }

// Login checks a user name and password with the servers. remAddr is the
// client's address, sent to the server; the checks of one client are
// bounded by its address ("" or not an address: all such clients count as
// one). It waits on the network, never on a CPU; at most MaxLogins run at
// once, MaxLoginsPerClient of one client, and a local user's name takes
// no slot (Options.LocalUser).
func (s *Service) Login(ctx context.Context, name, password, remAddr string) (Result, error) {
	s.catchUp(ctx)
	c := s.cfg.Load()
	if len(c.methods) == 0 {
		return Result{}, nil
	}
	if s.o.LocalUser == nil || !s.o.LocalUser(ctx, name) {
		release, err := s.logins.take(remAddr)
		if err != nil {
			return Result{}, err
		}
		defer release()
	}
	var tried []string
	for _, m := range c.methods {
		for _, srv := range m.servers {
			role, ok, err := srv.check(ctx, name, password, remAddr)
			s.noteServer(m.kind, srv.key, err)
			if err != nil {
				tried = append(tried, srv.addr+": "+err.Error())
				continue
			}
			if m.answered != nil {
				m.answered(true)
			}
			return Result{Answered: true, OK: ok, Group: role, Method: m.name, TTL: c.cacheTTL}, nil
		}
		if m.answered != nil {
			m.answered(false)
		}
	}
	if ctx.Err() != nil {
		return Result{}, ctx.Err()
	}
	s.fallbacks.Add(1)
	s.o.Log.Warn("no AAA server answered; checking the local users", "user", name, "tried", tried)
	return Result{}, nil
}

func (s *Service) noteServer(kind, name string, err error) {
	reason := ""
	if err != nil {
		reason = err.Error()
	}
	s.mu.Lock()
	s.failReason[kind+"\x00"+name] = reason
	s.mu.Unlock()
}

func (s *Service) setTacacsUp(v string) {
	s.mu.Lock()
	s.tacacsUp = v
	s.mu.Unlock()
}

// State returns the operational fields this package knows of an object
// of one of its kinds (nil for others).
func (s *Service) State(kind string, o model.Object) model.Object {
	switch kind {
	case "Tacacs", "RadiusServer":
		st := s.acct.serverState(kind, o.Str("ServerIp"))
		s.mu.Lock()
		defer s.mu.Unlock()
		st["ConnFailReason"] = s.failReason[kind+"\x00"+o.Str("ServerIp")]
		return st
	case "TacacsGlobal":
		s.mu.Lock()
		defer s.mu.Unlock()
		return model.Object{"OperStatus": s.tacacsUp, "NumActiveSessions": s.active.Load()}
	case "AAAGlobal":
		st := s.acct.counters()
		st["LocalFallbacks"] = s.fallbacks.Load()
		return st
	case "SyslogCollector":
		if s.o.Syslog != nil {
			return s.o.Syslog.State(o.Str("ServerIpAddr"))
		}
	}
	return nil
}

// sourceOf is the source of connections to a server whose SourceIntf is
// intf ("" or no way to read addresses: nil, the routing table's).
func (s *Service) sourceOf(intf, server string) *sourceIntf {
	if intf == "" || s.o.SourceAddr == nil {
		return nil
	}
	return &sourceIntf{intf: intf, server: server, lookup: s.o.SourceAddr, notes: s.sources}
}
