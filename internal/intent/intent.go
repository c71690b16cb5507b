// Package intent makes the switch follow its intended configuration: the
// document an IntentSource names is polled over HTTP or HTTPS (checked
// against the source's own CAs when it has them), or read from a git
// repository at a ref with Debian's git (git.go), verified
// (an ed25519 detached signature, as zero-touch provisioning verifies),
// and applied whole as one commit of source intent when it changed (the
// intent is the whole configuration; accounts and the IntentSource itself
// are kept, and a document holding either is refused). After every commit
// the running configuration is compared with the intent last applied
// (DriftState); with Policy revert the next poll applies the intent again.
// CheckCompliance answers the same comparison for any document, in
// Nautobot Golden Config's JSON compliance shape. docs/ztp.md is the
// walkthrough.
//
// Its config rows (Config) are bound before the engine and apply nothing:
// the Service reads the IntentSource from the engine and follows the
// commits through the change feed, as central AAA does.
package intent

import (
	"bytes"
	"context"
	"crypto/ed25519"
	"crypto/sha256"
	"crypto/x509"
	"encoding/base64"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"net/http"
	"net/netip"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/swmgr/swmgr/internal/apierr"
	"github.com/swmgr/swmgr/internal/backend"
	"github.com/swmgr/swmgr/internal/bind"
	"github.com/swmgr/swmgr/internal/datadir"
	"github.com/swmgr/swmgr/internal/engine"
	"github.com/swmgr/swmgr/internal/engine/feed"
	"github.com/swmgr/swmgr/internal/engine/history"
	"github.com/swmgr/swmgr/internal/lifecycle"
	"github.com/swmgr/swmgr/internal/model"
	"github.com/swmgr/swmgr/internal/ztp"
)

// Source is the commits' source (engine.Meta.Source, and their user) an
// intent makes.
const Source = "intent"

// ProviderName names the intent in the binding table.
const ProviderName = "intent"

// sourceKind is the kind that says where the intent comes from; held are
// the kinds (besides accounts) an intent may not write.
const sourceKind = "IntentSource"

var held = []string{sourceKind}

// driftKind is the state the Service fills with the drift, which it puts
// on the change feed when it changes.
const driftKind = "DriftState"

// Bounds of the state the Service keeps.
const (
	maxDriftLines = 100 // DriftState's Objects
	maxLine       = 512 // one of them, in bytes
	// minDriftGap spaces the drift's computations (each a dry run of the
	// whole intent through the writer) under a stream of commits.
	minDriftGap = 500 * time.Millisecond
)

// Config is the intent's part of what the engine applies through:
// IntentSource's driver. There is nothing to apply at the switch: the
// Service follows the commits through the change feed.
func Config() bind.Provider { return configRows{} }

type configRows struct{}

func (configRows) Name() string { return ProviderName }

func (configRows) Bindings() []bind.Binding {
	return []bind.Binding{{Kind: sourceKind, Driver: &backend.Driver{
		Apply: func(context.Context, backend.Change) (model.Object, error) { return nil, nil },
	}}}
}

// Options configure the Service.
type Options struct {
	Engine    *engine.Engine
	Lifecycle *lifecycle.Lifecycle
	// History confirms an intent's commit, or rolls it back.
	History *history.History
	Log     *slog.Logger
	// RootCAs check HTTPS servers of a source without CACertificates;
	// nil: the system's.
	RootCAs *x509.CertPool
	// MaxDocument bounds a document (default ztp.MaxDocument).
	MaxDocument int64
	// DataDir holds the git sources' cache (datadir.IntentGit); "": git
	// sources are refused.
	DataDir string
	// GitTimeout bounds one git run (default DefaultGitTimeout).
	GitTimeout time.Duration
}

// source is one reading of the IntentSource.
type source struct {
	url, username, password string
	git                     *gitRepo // RepoURL's source, or nil
	caCerts                 []string // CACertificates: base64 DER
	interval                time.Duration
	key                     ed25519.PublicKey
	allowUnsigned, revert   bool
	confirmWait             time.Duration // 0: plain commits
	healthURL               string        // "": url answers again
	webhookSecret           string        // "": the push webhook is refused
}

func (s *source) auth(r *http.Request) {
	if h := s.authHeader(); h != "" {
		r.Header.Set("Authorization", h)
	}
}

// authHeader is the Authorization header the source's server is given:
// basic with Username, else Password as a bearer token; "" for none.
func (s *source) authHeader() string {
	switch {
	case s.username != "":
		return basicAuth(s.username, s.password)
	case s.password != "":
		return "Bearer " + s.password
	}
	return ""
}

// where names the source in messages and commits.
func (s *source) where() string {
	if s.git != nil {
		return fmt.Sprintf("%s %s@%s", redact(s.git.url), s.git.path, s.git.ref)
	}
	return s.url
}

// status is what IntentSource's state shows.
type status struct {
	lastPoll, nextPoll, appliedAt time.Time
	digest, verified              string
	commit, appliedCommit         string
	appliedDigest                 string
	appliedRevision               uint64
	polls, refused                int64
	lastError                     string
	// The push webhook's: accepted and refused, the last accepted.
	webhooks, webhooksRefused int64
	webhookAt                 time.Time
	lastWebhook               string
}

// drift is what DriftState shows.
type drift struct {
	following, inDrift bool
	since, checkedAt   time.Time
	checkedRevision    uint64
	differences        int
	lines              []string
	lastError          string
}

// Service polls the intent, applies it and computes the drift.
type Service struct {
	o   Options
	log *slog.Logger
	get *ztp.Fetcher
	git *gitFetcher

	// withCAs is the fetcher for a source with CACertificates, kept for
	// the next poll while they stay the same (caKey); only the poller
	// uses them.
	withCAs *ztp.Fetcher
	caKey   string

	mu      sync.Mutex
	st      status
	dr      drift
	applied []byte // the document last applied (or found in place)
	// intentRevision is the revision at which it was in place.
	intentRevision uint64

	// driftMu serialises the drift's computations.
	driftMu sync.Mutex

	fetch chan chan pollResult // IntentFetch asks the poller
	push  chan struct{}        // a push webhook asks the poller
	// pushFrom is the address of the last push that asked (under mu).
	pushFrom netip.Addr
	changed  chan struct{} // the IntentSource changed
	dirty    chan struct{} // a commit was made: compute the drift
	stop     context.CancelFunc
	done     sync.WaitGroup
}

// New builds the Service; Start runs it.
func New(o Options) *Service {
	if o.Log == nil {
		o.Log = slog.New(slog.DiscardHandler)
	}
	if o.MaxDocument <= 0 {
		o.MaxDocument = ztp.MaxDocument
	}
	if o.GitTimeout <= 0 {
		o.GitTimeout = DefaultGitTimeout
	}
	git := &gitFetcher{program: "git", timeout: o.GitTimeout}
	if o.DataDir != "" {
		git.dir = filepath.Join(o.DataDir, datadir.IntentGit)
	}
	return &Service{o: o, log: o.Log.With("part", "intent"), get: ztp.NewFetcher(o.RootCAs, 60*time.Second), git: git,
		fetch: make(chan chan pollResult), push: make(chan struct{}, 1), changed: make(chan struct{}, 1), dirty: make(chan struct{}, 1)}
}

// Start follows the commits and polls the IntentSource, if any, at once.
func (s *Service) Start(ctx context.Context) error {
	sub := s.o.Engine.Feed().Follow()
	ctx, s.stop = context.WithCancel(context.WithoutCancel(ctx))
	s.done.Add(3)
	go func() {
		defer s.done.Done()
		sub.Watch(ctx, func(events []feed.Event, dropped bool) {
			for _, ev := range events {
				if touches(ev.Data) {
					poke(s.changed)
				}
			}
			if dropped {
				poke(s.changed)
			}
			poke(s.dirty)
		})
	}()
	go func() {
		defer s.done.Done()
		s.driftLoop(ctx)
	}()
	go func() {
		defer s.done.Done()
		s.pollLoop(ctx)
	}()
	return nil
}

// Close stops polling and following.
func (s *Service) Close() {
	if s.stop != nil {
		s.stop()
		s.done.Wait()
	}
}

func poke(ch chan struct{}) {
	select {
	case ch <- struct{}{}:
	default:
	}
}

// touches reports whether a revision record changes the IntentSource.
func touches(data []byte) bool {
	return bytes.Contains(data, []byte(`"Kind":"`+sourceKind+`"`))
}

// readSource reads the IntentSource, nil when there is none.
func (s *Service) readSource(ctx context.Context) (*source, error) {
	var src *source
	_, err := s.o.Engine.Snapshot(ctx, []string{sourceKind}, nil, func(_ *model.Kind, o model.Object) error {
		src = &source{url: o.Str("URL"), username: o.Str("Username"), password: o.Str("Password"),
			interval: time.Duration(o.Int("Interval")) * time.Second, allowUnsigned: o.Bool("AllowUnsigned"), revert: o.Str("Policy") == "revert",
			confirmWait: time.Duration(o.Int("ConfirmWait")) * time.Second, healthURL: o.Str("HealthURL"), caCerts: o.List("CACertificates"),
			webhookSecret: o.Str("WebhookSecret")}
		if repo := o.Str("RepoURL"); repo != "" {
			src.git = &gitRepo{url: repo, path: o.Str("Path"), ref: o.Str("TargetRevision"), authHeader: src.authHeader(), maxSize: o.Int("RepoSizeLimit") << 20}
			if len(src.caCerts) > 0 {
				pem, err := caPEM(src.caCerts)
				if err != nil {
					return err
				}
				src.git.caPEM = pem
			}
		}
		if k := o.Str("PublicKey"); k != "" {
			raw, err := base64.StdEncoding.DecodeString(k)
			if err != nil || len(raw) != ed25519.PublicKeySize {
				return fmt.Errorf("IntentSource PublicKey: not an ed25519 key")
			}
			src.key = raw
		}
		return nil
	})
	if err != nil {
		return nil, fmt.Errorf("read the IntentSource: %w", err)
	}
	return src, nil
}

// pollResult is one poll's outcome, IntentFetch's answer.
type pollResult struct {
	applied  bool
	revision uint64
	digest   string
	commit   string // a git source's
	err      error
	field    string // the IntentSource's field err is about
}

// pollLoop polls at each interval, when the IntentSource changes, when
// IntentFetch asks and when a push webhook does, until ctx ends.
func (s *Service) pollLoop(ctx context.Context) {
	timer := time.NewTimer(0) // the first poll at once
	defer timer.Stop()
	for {
		var reply chan pollResult
		woken := false
		select {
		case <-ctx.Done():
			return
		case <-timer.C:
		case <-s.changed:
		case reply = <-s.fetch:
		case <-s.push:
			woken = true
		}
		pusher, pushed := s.pushedBy(woken)
		src, err := s.readSource(ctx)
		var res pollResult
		switch {
		case err != nil:
			res.err = err
		case src == nil:
			s.forget()
			res.err = apierr.New(http.StatusConflict, apierr.CodeConflict, sourceKind, "", "no IntentSource is configured")
		default:
			var why trigger
			if pushed {
				why = trigger{push: true, from: pusher}
			}
			res = s.poll(ctx, src, why)
		}
		if reply != nil {
			reply <- res
		}
		timer.Stop()
		select { // a timer that fired while the poll ran
		case <-timer.C:
		default:
		}
		if src != nil {
			timer.Reset(src.interval)
			s.mu.Lock()
			s.st.nextPoll = time.Now().Add(src.interval)
			s.mu.Unlock()
		}
	}
}

// forget drops the intent when its source is deleted: nothing is
// followed, no drift, no repository cached.
func (s *Service) forget() {
	if err := s.git.clear(); err != nil {
		s.log.Warn("intent: remove the git cache", "err", err)
	}
	s.driftMu.Lock()
	defer s.driftMu.Unlock()
	s.mu.Lock()
	defer s.mu.Unlock()
	s.st, s.dr, s.applied, s.intentRevision = status{}, drift{}, nil, 0
}

// poll fetches and verifies the document and applies it when it changed
// (or, Policy revert, when the configuration drifted from it). A document
// refused changes nothing; LastError says why.
func (s *Service) poll(ctx context.Context, src *source, why trigger) pollResult {
	s.mu.Lock()
	s.st.polls++
	s.st.lastPoll = time.Now()
	s.mu.Unlock()
	res := s.pollOnce(ctx, src, why)
	res.field = "URL"
	if src.git != nil {
		res.field = "RepoURL"
	}
	s.mu.Lock()
	if res.err != nil {
		s.st.refused++
		s.st.lastError = res.err.Error()
	} else {
		s.st.lastError = ""
	}
	s.mu.Unlock()
	if res.err != nil {
		s.log.Warn("intent refused", "source", src.where(), "err", res.err)
	}
	return res
}

// fetched is a source's document that passed verification.
type fetched struct {
	data   []byte
	how    string // signature or unsigned
	commit string // a git source's commit id
}

// fetchDocument reads the source's document and verifies it: over HTTP(S)
// with its signature at the URL + ".sig", or from the repository with its
// signature at Path + ".sig" at the same commit.
func (s *Service) fetchDocument(ctx context.Context, src *source) (fetched, error) {
	if src.git == nil {
		f, err := s.httpFetcher(src)
		if err != nil {
			return fetched{}, err
		}
		f = f.WithAuth(src.auth)
		data, err := f.Get(ctx, src.url, s.o.MaxDocument)
		if err != nil {
			return fetched{}, explainTLS(err, src)
		}
		how, err := ztp.Verifier{Key: src.key, AllowUnsigned: src.allowUnsigned}.Verify(ctx, f, src.url, data, nil)
		if err != nil {
			return fetched{}, explainTLS(err, src)
		}
		return fetched{data: data, how: how}, nil
	}
	file, err := s.git.read(ctx, *src.git, s.o.MaxDocument)
	if err != nil {
		return fetched{}, err
	}
	out := fetched{data: file.data, how: "unsigned", commit: file.commit}
	switch {
	case src.key != nil && file.sig == nil:
		return fetched{}, fmt.Errorf("signature: no %s%s at commit %s", src.git.path, ztp.SignatureSuffix, file.commit)
	case src.key != nil:
		if err := ztp.VerifySignature(src.key, file.data, file.sig); err != nil {
			return fetched{}, fmt.Errorf("%w (commit %s)", err, file.commit)
		}
		out.how = "signature"
	case !src.allowUnsigned:
		return fetched{}, errors.New("unsigned document refused: give the IntentSource's PublicKey, or set AllowUnsigned")
	}
	return out, nil
}

// httpFetcher is the fetcher for the source's HTTPS server: checked against
// its CACertificates when it has them, else against Options.RootCAs.
func (s *Service) httpFetcher(src *source) (*ztp.Fetcher, error) {
	if len(src.caCerts) == 0 {
		return s.get, nil
	}
	key := strings.Join(src.caCerts, ",")
	if s.withCAs != nil && s.caKey == key {
		return s.withCAs, nil
	}
	pool := x509.NewCertPool()
	for _, c := range src.caCerts {
		cert, err := model.ParseCACertificate(c)
		if err != nil {
			return nil, fmt.Errorf("IntentSource CACertificates: %w", err)
		}
		pool.AddCert(cert)
	}
	s.withCAs, s.caKey = ztp.NewFetcher(pool, 60*time.Second), key
	return s.withCAs, nil
}

// explainTLS says which CAs a server's certificate was checked against
// when it was signed by none of them.
func explainTLS(err error, src *source) error {
	var unknown x509.UnknownAuthorityError
	if !errors.As(err, &unknown) {
		return err
	}
	who := "a CA the system trusts"
	if len(src.caCerts) > 0 {
		who = "one of the IntentSource's CACertificates"
	}
	return fmt.Errorf("%w: the server's certificate is not signed by %s", err, who)
}

// trigger is what asked for a poll besides its interval, for the commit's
// record: a push webhook, from its sender's address.
type trigger struct {
	push bool
	from netip.Addr
}

// note is what the commit's comment and config log entry add for it.
func (t trigger) note() string {
	if !t.push {
		return ""
	}
	return fmt.Sprintf(", fetched on a push webhook from %s", t.from)
}

func (s *Service) pollOnce(ctx context.Context, src *source, why trigger) pollResult {
	doc, err := s.fetchDocument(ctx, src)
	if err != nil {
		return pollResult{err: err}
	}
	data := doc.data
	sum := sha256.Sum256(data)
	digest := hex.EncodeToString(sum[:])
	s.mu.Lock()
	s.st.digest, s.st.verified, s.st.commit = digest, doc.how, doc.commit
	same := digest == s.st.appliedDigest
	s.mu.Unlock()
	if same && !src.revert {
		return pollResult{digest: digest, commit: doc.commit}
	}
	if same {
		// Policy revert: applied again only when the configuration drifted.
		if s.computeDrift(ctx) == 0 {
			return pollResult{digest: digest}
		}
	}
	req := engine.Request{
		Meta:    engine.Meta{User: Source, Source: Source, Comment: intentComment(src, doc.commit, digest) + why.note()},
		Log:     &engine.LogInfo{API: Source, Operation: "APPLY", Data: src.where() + why.note()},
		Confirm: src.confirmWait,
	}
	out, err := s.o.Lifecycle.ApplyDocument(ctx, sourceKind, docField(src), data, held, req)
	if err != nil {
		return pollResult{digest: digest, err: fmt.Errorf("the document was refused, nothing changed: %w", err)}
	}
	rev := out.Revision
	if rev != 0 && src.confirmWait > 0 {
		if err := s.confirm(ctx, src, rev); err != nil {
			return pollResult{digest: digest, err: err}
		}
	}
	at := rev
	if at == 0 {
		at = s.o.Engine.Revision() // the configuration was the intent already
	}
	s.mu.Lock()
	s.applied, s.intentRevision = data, at
	s.st.appliedDigest, s.st.appliedRevision, s.st.appliedAt, s.st.appliedCommit = digest, rev, time.Now(), doc.commit
	s.mu.Unlock()
	if rev != 0 {
		s.log.Info("intent applied", "source", src.where(), "commit", doc.commit, "sha256", digest, "revision", rev, "changes", out.Changes)
	}
	s.computeDrift(ctx)
	return pollResult{applied: rev != 0, revision: rev, digest: digest, commit: doc.commit}
}

// intentComment is the intent's commit's comment: where the document
// came from, its commit id and digest.
func intentComment(src *source, commit, digest string) string {
	if commit != "" {
		return fmt.Sprintf("intent %s commit %.12s (sha256 %.12s)", src.where(), commit, digest)
	}
	return fmt.Sprintf("intent %s (sha256 %.12s)", src.url, digest)
}

// docField is the IntentSource's field a refusal of its document names.
func docField(src *source) string {
	if src.git != nil {
		return "Path"
	}
	return "URL"
}

// confirm runs the health check of the intent's commit rev until its
// deadline, then confirms it, or rolls it back when the check did not
// pass: an intent that cuts the switch off from its source of truth (or
// fails the given check) does not stay.
func (s *Service) confirm(ctx context.Context, src *source, rev uint64) error {
	check, what := src.url, "the intent's URL"
	switch {
	case src.healthURL != "":
		check, what = src.healthURL, "the health check "+src.healthURL
	case src.git != nil:
		what = "the intent's repository"
	}
	f, err := s.httpFetcher(src)
	if err != nil {
		return err
	}
	if src.healthURL == "" {
		f = f.WithAuth(src.auth)
	}
	last := ztp.AwaitHealthy(ctx, time.Now().Add(src.confirmWait), func(ctx context.Context) error {
		ctx, cancel := context.WithTimeout(ctx, 5*time.Second)
		defer cancel()
		if src.git != nil && src.healthURL == "" {
			return s.git.reachable(ctx, *src.git)
		}
		_, err := f.Get(ctx, check, s.o.MaxDocument)
		return err
	})
	if last != nil {
		meta := engine.Meta{User: Source, Source: Source, Comment: "the intent's health check did not pass"}
		if _, err := s.o.History.Cancel(ctx, rev, engine.Request{Meta: meta, Log: &engine.LogInfo{API: Source, Operation: "CANCEL", Data: fmt.Sprint(rev)}}); err != nil {
			s.log.Info("intent: rollback at the deadline", "revision", rev, "err", err)
		}
		return fmt.Errorf("%s did not answer within %v after revision %d (%v): it was rolled back", what, src.confirmWait, rev, last)
	}
	meta := engine.Meta{User: Source, Source: Source, Comment: "the intent's health check passed"}
	if err := s.o.History.Confirm(ctx, rev, engine.Request{Meta: meta, Log: &engine.LogInfo{API: Source, Operation: "CONFIRM", Data: fmt.Sprint(rev)}}); err != nil {
		return fmt.Errorf("confirm revision %d: %w", rev, err)
	}
	return nil
}

// driftLoop computes the drift after commits, at most once every
// minDriftGap, until ctx ends.
func (s *Service) driftLoop(ctx context.Context) {
	for {
		select {
		case <-ctx.Done():
			return
		case <-s.dirty:
		}
		s.computeDrift(ctx)
		select {
		case <-ctx.Done():
			return
		case <-time.After(minDriftGap):
		}
	}
}

// computeDrift compares the running configuration with the intent last
// applied and keeps the outcome in DriftState; it answers how many objects
// differ. A DriftState that changed (drift begun or ended, other objects
// differing) goes on the change feed as `event: state`.
func (s *Service) computeDrift(ctx context.Context) int {
	n, changed := s.compareDrift(ctx)
	if changed {
		s.publishDrift(ctx)
	}
	return n
}

// publishDrift puts DriftState on the change feed.
func (s *Service) publishDrift(ctx context.Context) {
	k := s.o.Engine.Registry().Named(driftKind)
	objs, err := s.driftObjects(ctx)
	if k == nil || err != nil || len(objs) != 1 {
		return
	}
	s.o.Engine.Feed().PublishState(k.AppendStateEvent(nil, objs[0], time.Now()))
}

// compareDrift is computeDrift's comparison: it also says whether the
// outcome differs from the one before.
func (s *Service) compareDrift(ctx context.Context) (int, bool) {
	s.driftMu.Lock()
	defer s.driftMu.Unlock()
	s.mu.Lock()
	doc := s.applied
	s.mu.Unlock()
	if doc == nil {
		return 0, false
	}
	rev := s.o.Engine.Revision()
	diffs, err := s.o.Lifecycle.CompareDocument(ctx, sourceKind, "URL", doc, held)
	now := time.Now()
	s.mu.Lock()
	defer s.mu.Unlock()
	d := &s.dr
	before := *d
	d.following, d.checkedAt, d.checkedRevision = true, now, rev
	if err != nil {
		d.lastError = err.Error()
		return d.differences, d.lastError != before.lastError
	}
	c := Compare(diffs)
	d.lastError = ""
	d.differences = c.Count()
	d.lines = c.Lines(maxDriftLines, maxLine)
	was := d.inDrift
	d.inDrift = d.differences > 0
	switch {
	case d.inDrift && !was:
		d.since = now
		s.log.Warn("the configuration drifted from the intent", "objects", d.differences, "revision", rev)
	case !d.inDrift:
		d.since = time.Time{}
	}
	return d.differences, d.following != before.following || d.inDrift != before.inDrift ||
		d.differences != before.differences || !slices.Equal(d.lines, before.lines) || d.lastError != before.lastError
}

// Provider is the Service's own rows: its share of IntentSource's state,
// DriftState, IntentFetch and CheckCompliance.
func (s *Service) Provider() bind.Provider { return serviceRows{s} }

type serviceRows struct{ s *Service }

func (serviceRows) Name() string { return ProviderName }

func (p serviceRows) Bindings() []bind.Binding {
	return []bind.Binding{
		{Kind: sourceKind, Driver: &backend.Driver{State: p.s.sourceState}},
		{Kind: driftKind, Source: p.s.driftObjects},
		{Kind: "IntentFetch", Action: &bind.Action{Run: p.s.fetchNow}},
		{Kind: "CheckCompliance", Action: &bind.Action{Run: p.s.checkCompliance}},
	}
}

func stamp(t time.Time) string {
	if t.IsZero() {
		return ""
	}
	return t.UTC().Format(time.RFC3339Nano)
}

func (s *Service) sourceState(context.Context, model.Object) (model.Object, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	st := s.st
	return model.Object{
		"LastPollAt": stamp(st.lastPoll), "NextPollAt": stamp(st.nextPoll), "Digest": st.digest, "Verified": st.verified,
		"Commit": st.commit, "AppliedCommit": st.appliedCommit,
		"AppliedDigest": st.appliedDigest, "AppliedRevision": int64(st.appliedRevision), "AppliedAt": stamp(st.appliedAt),
		"Polls": st.polls, "Refused": st.refused, "LastError": st.lastError,
		"Webhooks": st.webhooks, "WebhooksRefused": st.webhooksRefused, "WebhookAt": stamp(st.webhookAt), "LastWebhook": st.lastWebhook,
	}, nil
}

func (s *Service) driftObjects(context.Context) ([]model.Object, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	d := s.dr
	lines := d.lines
	if lines == nil {
		lines = []string{}
	}
	return []model.Object{{
		"Following": d.following, "InDrift": d.inDrift, "Since": stamp(d.since), "CheckedAt": stamp(d.checkedAt),
		"CheckedRevision": int64(d.checkedRevision), "IntentDigest": s.st.appliedDigest, "IntentRevision": int64(s.intentRevision),
		"Differences": int64(d.differences), "Objects": lines, "LastError": d.lastError,
	}}, nil
}

// fetchNow is IntentFetch: a poll now, answered with its outcome.
func (s *Service) fetchNow(ctx context.Context, c bind.Call) (bind.Result, error) {
	if c.DryRun {
		return bind.Result{DryRun: true}, nil
	}
	reply := make(chan pollResult, 1)
	select {
	case s.fetch <- reply:
	case <-ctx.Done():
		return bind.Result{}, ctx.Err()
	}
	var res pollResult
	select {
	case res = <-reply:
	case <-ctx.Done():
		return bind.Result{}, ctx.Err()
	}
	if res.err != nil {
		var ae *apierr.Error
		if errors.As(res.err, &ae) && ae.Status == http.StatusConflict && ae.Object == sourceKind && ae.Field == "" {
			return bind.Result{}, ae
		}
		field := res.field
		if field == "" {
			field = "URL"
		}
		return bind.Result{}, apierr.New(http.StatusBadGateway, apierr.CodeInvalidValue, sourceKind, field, "%v", res.err)
	}
	return bind.Result{Revision: res.revision, Value: map[string]any{"Result": "Success", "Applied": res.applied, "Revision": res.revision, "Digest": res.digest, "Commit": res.commit}}, nil
}

// checkCompliance is CheckCompliance: the difference between the running
// configuration and the document, changing nothing.
func (s *Service) checkCompliance(ctx context.Context, c bind.Call) (bind.Result, error) {
	raw, _ := c.Fields["Document"].(json.RawMessage)
	diffs, err := s.o.Lifecycle.CompareDocument(ctx, c.Kind.Name, "Document", raw, held)
	if err != nil {
		return bind.Result{}, err
	}
	return bind.Result{DryRun: c.DryRun, Value: Compare(diffs)}, nil
}
