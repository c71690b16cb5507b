// Package ztp is zero-touch provisioning: a switch with no configuration
// asks DHCP on its management interface and, in-band, on its front-panel
// ports that have link (the first valid answer wins) where its
// configuration is (option 67, a URL or a file on the TFTP server of
// option 66; a provisioning script: option 239, run only when allowed),
// fetches the document over HTTP, HTTPS, TFTP or SFTP, verifies it (an ed25519
// signature, or the SHA-256 DHCP option 224 gives, or neither when
// unsigned documents are allowed), applies it as one commit of source ztp
// awaiting confirmation, and confirms it when the health check passes;
// else the commit is rolled back and the attempt made again after a
// backoff. Its progress is the ZtpState kind (the service fills it: a
// bind.Source) and its state file in the data directory, so that it
// resumes after a restart. docs/ztp.md is the walkthrough.
package ztp

import (
	"context"
	"crypto/x509"
	"errors"
	"fmt"
	"log/slog"
	"net/http"
	"path/filepath"
	"sync"
	"time"

	"github.com/swmgr/swmgr/internal/apierr"
	"github.com/swmgr/swmgr/internal/atomicfile"
	"github.com/swmgr/swmgr/internal/bind"
	"github.com/swmgr/swmgr/internal/datadir"
	"github.com/swmgr/swmgr/internal/engine"
	"github.com/swmgr/swmgr/internal/engine/history"
	"github.com/swmgr/swmgr/internal/lifecycle"
	"github.com/swmgr/swmgr/internal/model"
)

// Source is the commits' source (engine.Meta.Source) provisioning makes.
const Source = "ztp"

// The phases ZtpState's Phase names.
const (
	PhaseDisabled   = "disabled"
	PhaseIdle       = "idle"
	PhaseDHCP       = "dhcp"
	PhaseFetch      = "fetch"
	PhaseVerify     = "verify"
	PhaseScript     = "script"
	PhaseApply      = "apply"
	PhaseConfirming = "confirming"
	PhaseBackoff    = "backoff"
	PhaseDone       = "done"
	PhaseStopped    = "stopped"
)

// Options configure provisioning. The zero value is disabled.
type Options struct {
	// Enabled: swmgr serves with --ztp.
	Enabled bool
	// Arm arms provisioning at this start (a new data directory).
	Arm bool
	// Interface is the management interface DHCP runs on.
	Interface string
	// InBandPorts runs DHCP on the front-panel ports too (those InBand
	// lists that are up with link), not only on Interface.
	InBandPorts bool
	// InBand are the dataplane's front-panel ports (the service fills it
	// on the Linux dataplane; the zero value: none).
	InBand   InBand
	Verifier Verifier
	// RootCAs check HTTPS servers; nil: the system's.
	RootCAs *x509.CertPool
	// SFTP fetches sftp:// URLs (nil: refused).
	SFTP *SFTPClient
	// AllowScript runs the script option 239 names.
	AllowScript   bool
	ScriptTimeout time.Duration // default 5 min
	// HealthURL, when set, must answer 2xx before the commit's deadline
	// for it to be confirmed; "" confirms once the commit is applied.
	HealthURL string
	// ConfirmWait is how long the commit waits for its confirmation
	// (default 2 min).
	ConfirmWait time.Duration
	// Backoff is the wait after the first failed attempt, doubled after
	// each up to MaxBackoff (defaults 5 s and 5 min).
	Backoff, MaxBackoff time.Duration
	// DHCPTimeout bounds each DHCP message's wait (default 5 s).
	DHCPTimeout time.Duration
}

func (o *Options) defaults() {
	def := func(d *time.Duration, v time.Duration) {
		if *d <= 0 {
			*d = v
		}
	}
	def(&o.ScriptTimeout, 5*time.Minute)
	def(&o.ConfirmWait, 2*time.Minute)
	def(&o.Backoff, 5*time.Second)
	def(&o.MaxBackoff, 5*time.Minute)
	def(&o.DHCPTimeout, 5*time.Second)
}

// Status is what the state file keeps and ZtpState shows.
type Status struct {
	Armed           bool
	Phase           string
	ServerAddr      string `json:",omitempty"`
	LeaseAddr       string `json:",omitempty"`
	LeaseInterface  string `json:",omitempty"`
	LeaseNetns      string `json:",omitempty"` // the lease interface's network namespace ("": swmgr's)
	ConfigURL       string `json:",omitempty"`
	ScriptURL       string `json:",omitempty"`
	Verified        string `json:",omitempty"`
	Attempts        int64
	LastError       string `json:",omitempty"`
	Revision        uint64 `json:",omitempty"`
	FactoryRevision uint64
	OfferAt         time.Time `json:",omitzero"`
	AppliedAt       time.Time `json:",omitzero"`
	ConfirmedAt     time.Time `json:",omitzero"`
	NextAttemptAt   time.Time `json:",omitzero"`
}

// Service runs provisioning and answers for ZtpState and ZtpRearm.
type Service struct {
	o    Options
	eng  *engine.Engine
	hist *history.History
	lc   *lifecycle.Lifecycle
	log  *slog.Logger
	file string
	dir  string
	get  *Fetcher

	mu     sync.Mutex
	st     Status
	cancel context.CancelFunc
	done   chan struct{}
	base   context.Context
}

// New builds provisioning over the engine, its history (the confirmation)
// and the lifecycle (the document's decoding and commit); dataDir holds
// its state file.
func New(o Options, eng *engine.Engine, hist *history.History, lc *lifecycle.Lifecycle, dataDir string, log *slog.Logger) *Service {
	o.defaults()
	s := &Service{o: o, eng: eng, hist: hist, lc: lc, log: log.With("part", "ztp"), dir: dataDir,
		file: filepath.Join(dataDir, datadir.ZTPState), get: NewFetcher(o.RootCAs, 30*time.Second)}
	if o.SFTP != nil {
		sftp := *o.SFTP
		sftp.OnUnknownHostKey = func(host, fingerprint string) {
			s.log.Warn("ztp: SFTP server's host key unknown, accepted (--ztp-sftp-allow-unknown-host-key)", "host", host, "fingerprint", fingerprint)
		}
		s.get.SFTP = &sftp
	}
	return s
}

// Name names provisioning in the binding table.
func (s *Service) Name() string { return "zero-touch provisioning" }

// Bindings are its rows: ZtpState's source and the ZtpRearm action.
func (s *Service) Bindings() []bind.Binding {
	return []bind.Binding{
		{Kind: "ZtpState", Source: s.stateObjects},
		{Kind: "ZtpRearm", Action: &bind.Action{Run: s.rearm}},
	}
}

// Status is provisioning's progress now.
func (s *Service) Status() Status {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.st
}

func (s *Service) stateObjects(context.Context) ([]model.Object, error) {
	st := s.Status()
	stamp := func(t time.Time) string {
		if t.IsZero() {
			return ""
		}
		return t.UTC().Format(time.RFC3339Nano)
	}
	return []model.Object{{
		"Enabled": s.o.Enabled, "Armed": st.Armed, "Phase": st.Phase, "Interface": s.o.Interface,
		"ServerAddr": st.ServerAddr, "LeaseAddr": st.LeaseAddr, "LeaseInterface": st.LeaseInterface, "ConfigURL": st.ConfigURL, "ScriptURL": st.ScriptURL,
		"Verified": st.Verified, "Attempts": st.Attempts, "LastError": st.LastError,
		"Revision": int64(st.Revision), "FactoryRevision": int64(st.FactoryRevision),
		"OfferAt": stamp(st.OfferAt), "AppliedAt": stamp(st.AppliedAt), "ConfirmedAt": stamp(st.ConfirmedAt), "NextAttemptAt": stamp(st.NextAttemptAt),
	}}, nil
}

// update changes the status and keeps it in the state file (so a restart
// resumes it), logging the phase it enters.
func (s *Service) update(fn func(st *Status)) {
	s.mu.Lock()
	before := s.st.Phase
	fn(&s.st)
	st := s.st
	s.mu.Unlock()
	if st.Phase != before {
		s.log.Info("ztp phase", "phase", st.Phase, "attempt", st.Attempts, "config_url", st.ConfigURL, "error", st.LastError)
	}
	data, _ := jsonMarshal(st)
	if err := atomicfile.Replace(s.file, data, 0o600); err != nil {
		s.log.Error("ztp state file", "err", err)
	}
}

// Start loads the state file and, when provisioning is enabled and armed
// (now, or at an earlier start that was stopped before it finished),
// runs it until it is done, stops or Close. Call it once the switch's
// own first commits (the first admin) are made: the revision then is the
// factory one every failure leaves.
func (s *Service) Start(ctx context.Context) error {
	var st Status
	damaged, err := datadir.LoadState(s.file, &st)
	if err != nil {
		return err
	}
	if damaged != nil {
		s.log.Warn("ztp state file damaged; moved aside", "path", damaged.Aside, "err", damaged.Err)
	}
	s.mu.Lock()
	s.st = st
	s.base = ctx
	s.mu.Unlock()
	switch {
	case !s.o.Enabled:
		s.update(func(st *Status) { st.Phase = PhaseDisabled })
		return nil
	case s.o.Arm && !st.Armed:
		rev := s.eng.Revision()
		s.update(func(st *Status) { *st = Status{Armed: true, Phase: PhaseIdle, FactoryRevision: rev} })
	case !st.Armed:
		if st.Phase == "" || st.Phase == PhaseDisabled {
			s.update(func(st *Status) { st.Phase = PhaseIdle })
		}
		return nil
	}
	s.launch()
	return nil
}

// launch runs provisioning in its goroutine.
func (s *Service) launch() {
	s.mu.Lock()
	defer s.mu.Unlock()
	ctx, cancel := context.WithCancel(s.base)
	s.cancel, s.done = cancel, make(chan struct{})
	go func(done chan struct{}) {
		defer close(done)
		s.run(ctx)
	}(s.done)
}

// Close stops provisioning; its state file says where it was.
func (s *Service) Close() {
	s.mu.Lock()
	cancel, done := s.cancel, s.done
	s.mu.Unlock()
	if cancel != nil {
		cancel()
		<-done
	}
}

// rearm is ZtpRearm: provisioning starts again from the running
// configuration.
func (s *Service) rearm(ctx context.Context, c bind.Call) (bind.Result, error) {
	if !s.o.Enabled {
		return bind.Result{}, apierr.New(http.StatusConflict, apierr.CodeConflict, c.Kind.Name, "", "zero-touch provisioning is not enabled: serve with --ztp")
	}
	if c.DryRun {
		return bind.Result{DryRun: true}, nil
	}
	s.Close()
	rev := s.eng.Revision()
	s.update(func(st *Status) { *st = Status{Armed: true, Phase: PhaseIdle, FactoryRevision: rev} })
	s.launch()
	if c.Log != nil {
		if err := s.eng.LogSuccess(ctx, c.Meta, c.Log); err != nil {
			s.log.Error("config log write failed", "err", err)
		}
	}
	return bind.Result{Value: map[string]any{"Result": "Success", "FactoryRevision": rev}}, nil
}

// errStandDown ends provisioning: another source configured the switch.
var errStandDown = errors.New("stand down")

// run makes attempts until one is confirmed, provisioning stands down, or
// ctx ends.
func (s *Service) run(ctx context.Context) {
	wait := s.o.Backoff
	for {
		if p, err := s.eng.PendingConfirm(); err == nil && p != nil && p.User == Source {
			// A restart while our commit awaited confirmation: see it through.
			s.update(func(st *Status) { st.Phase, st.Revision = PhaseConfirming, p.Revision })
			if err := s.confirm(ctx, p.Revision, time.Unix(0, p.Deadline)); err == nil {
				return
			} else if ctx.Err() != nil {
				return
			} else {
				s.failed(err)
			}
		} else {
			err := s.attempt(ctx)
			switch {
			case err == nil:
				return
			case ctx.Err() != nil:
				return
			case errors.Is(err, errStandDown):
				return
			}
			s.failed(err)
		}
		next := time.Now().Add(wait)
		s.update(func(st *Status) { st.Phase, st.NextAttemptAt = PhaseBackoff, next })
		select {
		case <-ctx.Done():
			return
		case <-time.After(wait):
		}
		wait = min(2*wait, s.o.MaxBackoff)
	}
}

func (s *Service) failed(err error) {
	s.log.Warn("ztp attempt failed", "err", err)
	s.update(func(st *Status) { st.LastError = err.Error() })
}

// attempt is one try: DHCP, fetch, verify, the script, the commit, its
// confirmation.
func (s *Service) attempt(ctx context.Context) error {
	s.update(func(st *Status) {
		st.Attempts++
		st.Phase, st.NextAttemptAt = PhaseDHCP, time.Time{}
		st.ServerAddr, st.LeaseAddr, st.LeaseInterface, st.LeaseNetns, st.ConfigURL, st.ScriptURL, st.Verified = "", "", "", "", "", "", ""
		st.OfferAt, st.AppliedAt, st.ConfirmedAt, st.Revision = time.Time{}, time.Time{}, time.Time{}, 0
	})
	if err := s.standDown(); err != nil {
		return err
	}
	links := []dhcpLink{{name: s.o.Interface}}
	if s.o.InBandPorts {
		var err error
		if links, err = s.o.InBand.links(s.o.Interface); err != nil {
			s.log.Warn("ztp: the front-panel ports cannot be looked at; DHCP on the management interface only", "err", err)
		}
	}
	names := make([]string, len(links))
	for i, l := range links {
		names[i] = l.name
	}
	s.log.Info("ztp: DHCP", "interfaces", names)
	offer, err := leaseFirst(ctx, links, s.o.DHCPTimeout)
	if offer != nil {
		s.update(func(st *Status) {
			st.ServerAddr, st.ConfigURL, st.ScriptURL, st.OfferAt = offer.Server, offer.ConfigURL, offer.ScriptURL, offer.At
			st.LeaseInterface, st.LeaseNetns = offer.Interface, offer.Netns
			if offer.Addr != nil {
				st.LeaseAddr = offer.Addr.String()
			}
		})
	}
	if err != nil {
		return err
	}
	if offer.ScriptURL != "" {
		if err := s.script(ctx, offer.ScriptURL, offer.Interface); err != nil {
			return err
		}
	}
	if offer.ConfigURL == "" {
		if offer.ScriptURL != "" && s.o.AllowScript {
			return s.finish(0)
		}
		return fmt.Errorf("the DHCP server %s gave no configuration URL (option %d)", offer.Server, OptionConfigURL)
	}
	s.update(func(st *Status) { st.Phase = PhaseFetch })
	get := s.fetcher()
	data, err := get.Get(ctx, offer.ConfigURL, MaxDocument)
	if err != nil {
		return err
	}
	s.update(func(st *Status) { st.Phase = PhaseVerify })
	how, err := s.o.Verifier.Verify(ctx, get, offer.ConfigURL, data, offer.SHA256)
	if err != nil {
		return err
	}
	s.update(func(st *Status) { st.Phase, st.Verified = PhaseApply, how })
	factory := s.Status().FactoryRevision
	req := engine.Request{
		Meta:       engine.Meta{User: Source, Source: Source, Comment: "zero-touch provisioning from " + offer.ConfigURL},
		Log:        &engine.LogInfo{API: "ztp", Operation: "APPLY", Data: offer.ConfigURL},
		Confirm:    s.o.ConfirmWait,
		IfRevision: factory,
	}
	out, err := s.lc.ApplyDocument(ctx, "ZtpState", "ConfigURL", data, nil, req)
	var ae *apierr.Error
	if errors.As(err, &ae) && ae.Status == http.StatusPreconditionFailed {
		return s.standDown()
	}
	if err != nil {
		return fmt.Errorf("apply %s: %w", offer.ConfigURL, err)
	}
	if out.Revision == 0 {
		// The document is the running configuration already.
		return s.finish(0)
	}
	s.update(func(st *Status) { st.Phase, st.Revision, st.AppliedAt = PhaseConfirming, out.Revision, time.Now() })
	return s.confirm(ctx, out.Revision, time.Now().Add(s.o.ConfirmWait))
}

// standDown ends provisioning when the running configuration moved past
// the factory revision by another source's commit: the switch is being
// configured otherwise.
func (s *Service) standDown() error {
	factory, now := s.Status().FactoryRevision, s.eng.Revision()
	if now == factory {
		return nil
	}
	s.update(func(st *Status) {
		st.Armed, st.Phase = false, PhaseStopped
		st.LastError = fmt.Sprintf("the configuration was changed by another source (revision %d, provisioning started from %d): provisioning stands down; ZtpRearm arms it again", now, factory)
	})
	return errStandDown
}

// script fetches, verifies and runs the provisioning script, if allowed.
func (s *Service) script(ctx context.Context, raw, iface string) error {
	if !s.o.AllowScript {
		s.log.Warn("ztp: DHCP option 239 names a provisioning script; not run (serve with --ztp-allow-script)", "url", raw)
		return nil
	}
	s.update(func(st *Status) { st.Phase = PhaseScript })
	get := s.fetcher()
	body, err := get.Get(ctx, raw, MaxScript)
	if err != nil {
		return fmt.Errorf("script: %w", err)
	}
	if _, err := s.o.Verifier.Verify(ctx, get, raw, body, nil); err != nil {
		return fmt.Errorf("script: %w", err)
	}
	out, err := runScript(ctx, s.dir, body, iface, s.o.ScriptTimeout)
	s.log.Info("ztp script ran", "url", raw, "output", out, "err", err)
	return err
}

// AwaitHealthy runs check every half second until it passes (nil) or
// deadline passes or ctx ends; it answers check's last error (nil: it
// passed). A confirmed commit's health check is run so, before its
// confirmation or its rollback.
func AwaitHealthy(ctx context.Context, deadline time.Time, check func(context.Context) error) error {
	for {
		last := check(ctx)
		if last == nil {
			return nil
		}
		select {
		case <-ctx.Done():
			return last
		case <-time.After(min(500*time.Millisecond, max(0, time.Until(deadline)))):
		}
		if time.Now().After(deadline) {
			return last
		}
	}
}

// confirm waits for the health check until deadline, then confirms rev;
// past the deadline it rolls rev back (if history has not already).
func (s *Service) confirm(ctx context.Context, rev uint64, deadline time.Time) error {
	if s.o.HealthURL != "" {
		last := AwaitHealthy(ctx, deadline, s.healthy)
		if ctx.Err() != nil {
			return ctx.Err()
		}
		if last != nil {
			meta := engine.Meta{User: Source, Source: Source, Comment: "the health check did not pass"}
			if _, err := s.hist.Cancel(ctx, rev, engine.Request{Meta: meta}); err != nil {
				s.log.Info("ztp: rollback at the deadline", "err", err)
			}
			s.waitRolledBack(ctx, rev)
			return fmt.Errorf("health check %s did not pass within %v: %v; revision %d rolled back", s.o.HealthURL, s.o.ConfirmWait, last, rev)
		}
	}
	meta := engine.Meta{User: Source, Source: Source, Comment: "the health check passed"}
	if err := s.hist.Confirm(ctx, rev, engine.Request{Meta: meta, Log: &engine.LogInfo{API: "ztp", Operation: "CONFIRM", Data: fmt.Sprint(rev)}}); err != nil {
		s.waitRolledBack(ctx, rev)
		return fmt.Errorf("confirm revision %d: %w", rev, err)
	}
	return s.finish(rev)
}

// waitRolledBack waits until rev no longer awaits confirmation, then takes
// the revision the rollback made as the factory one (its configuration
// is the factory configuration).
func (s *Service) waitRolledBack(ctx context.Context, rev uint64) {
	for ctx.Err() == nil {
		p, err := s.eng.PendingConfirm()
		if err == nil && (p == nil || p.Revision != rev) {
			now := s.eng.Revision()
			s.update(func(st *Status) { st.FactoryRevision, st.Revision = now, 0 })
			return
		}
		select {
		case <-ctx.Done():
		case <-time.After(100 * time.Millisecond):
		}
	}
}

func (s *Service) healthy(ctx context.Context) error {
	ctx, cancel := context.WithTimeout(ctx, 5*time.Second)
	defer cancel()
	_, err := s.fetcher().Get(ctx, s.o.HealthURL, 64<<10)
	return err
}

// fetcher fetches through the lease's network namespace.
func (s *Service) fetcher() *Fetcher { return s.get.InNetns(s.Status().LeaseNetns) }

// finish marks provisioning done.
func (s *Service) finish(rev uint64) error {
	s.update(func(st *Status) {
		st.Armed, st.Phase, st.LastError, st.ConfirmedAt, st.Revision = false, PhaseDone, "", time.Now(), rev
	})
	return nil
}
