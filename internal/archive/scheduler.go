package archive

import (
	"context"
	"encoding/json"
	"fmt"
	"log/slog"
	"sync"
	"time"

	"github.com/swmgr/swmgr/internal/atomicfile"
	"github.com/swmgr/swmgr/internal/datadir"
)

// Clock is the scheduler's time, injectable for tests.
type Clock interface {
	Now() time.Time
	After(d time.Duration) <-chan time.Time
}

type realClock struct{}

func (realClock) Now() time.Time                         { return time.Now() }
func (realClock) After(d time.Duration) <-chan time.Time { return time.After(d) }

// Server is one ConfigArchiveServer as the scheduler needs it.
type Server struct {
	Name       string // the object's key (IpAddr)
	Remote     Remote
	DstFile    string
	Interval   time.Duration // 0: only on change
	OnChange   bool
	Nonce      string
	Passphrase string
	Timestamp  string
	Attempts   Attempts
}

// Render makes the file to archive: the configuration document, encrypted
// when nonce and passphrase are set, and the revision it holds.
type Render func(ctx context.Context, nonce, passphrase string) ([]byte, uint64, error)

// State is what state/ConfigArchiveServer shows of one server.
type State struct {
	LastAttempt  time.Time `json:",omitzero"`
	LastSuccess  time.Time `json:",omitzero"`
	LastError    string    `json:",omitempty"`
	LastFile     string    `json:",omitempty"`
	LastRevision uint64    `json:",omitempty"`
	NextRun      time.Time `json:",omitzero"`
	Uploads      int64     `json:",omitempty"`
	Failures     int64     `json:",omitempty"`
	Running      bool      `json:"-"`
}

// SchedulerOptions wire a scheduler.
type SchedulerOptions struct {
	Render    Render
	SFTP      *SFTP
	StatePath string // "" keeps state in memory
	Clock     Clock  // nil: real time
	Log       *slog.Logger
	// Settle is how long OnChange waits for commits to stop before it
	// uploads, so a burst makes one upload; at most MaxSettle after the
	// first. Defaults 500 ms and 5 s.
	Settle, MaxSettle time.Duration
	// Revision is the running revision (nil: unknown). With it, OnChange
	// does not upload a revision already archived (the commit that creates
	// a server is archived once, not twice), and a server whose last
	// archive is older than the running configuration (commits made just
	// before a crash or a stop) uploads as soon as it starts.
	Revision func() uint64
}

// Scheduler uploads the configuration to every ConfigArchiveServer: each
// Interval and, with OnChange, after commits (coalesced). It runs one
// goroutine per server and never makes a commit wait.
type Scheduler struct {
	o       SchedulerOptions
	ctx     context.Context
	cancel  context.CancelFunc
	mu      sync.Mutex
	workers map[string]*worker
	states  map[string]State
	wg      sync.WaitGroup
}

type worker struct {
	srv     Server
	changed chan struct{} // cap 1: coalesced commit signals
	stop    context.CancelFunc
	done    chan struct{}
}

// NewScheduler loads the persisted state (the schedule resumes from it).
func NewScheduler(o SchedulerOptions) (*Scheduler, error) {
	if o.Clock == nil {
		o.Clock = realClock{}
	}
	if o.Log == nil {
		o.Log = slog.New(slog.DiscardHandler)
	}
	if o.Settle == 0 {
		o.Settle = 500 * time.Millisecond
	}
	if o.MaxSettle == 0 {
		o.MaxSettle = 5 * time.Second
	}
	s := &Scheduler{o: o, workers: map[string]*worker{}, states: map[string]State{}}
	s.ctx, s.cancel = context.WithCancel(context.Background())
	if o.StatePath != "" {
		// Damaged: every server archives at once, as on a new switch.
		damaged, err := datadir.LoadState(o.StatePath, &s.states)
		if err != nil {
			return nil, fmt.Errorf("read archive state: %w", err)
		}
		if damaged != nil {
			o.Log.Warn("the archive schedule was damaged; every archive server uploads at once", "err", damaged)
		}
		if s.states == nil {
			s.states = map[string]State{}
		}
	}
	return s, nil
}

// Sync makes the running workers match servers: new ones start, changed
// ones restart (and pin their host key anew), removed ones stop and forget
// their state.
func (s *Scheduler) Sync(servers []Server) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.ctx.Err() != nil {
		return
	}
	want := map[string]Server{}
	for _, srv := range servers {
		want[srv.Name] = srv
	}
	for name, w := range s.workers {
		if srv, ok := want[name]; !ok || !sameServer(srv, w.srv) {
			w.stop() // its upload in flight is abandoned; it records nothing more
			delete(s.workers, name)
			if s.o.SFTP != nil && s.o.SFTP.Pins != nil {
				s.o.SFTP.Pins.Forget(Endpoint(w.srv.Remote.Host, w.srv.Remote.Port))
			}
			st := State{Uploads: s.states[name].Uploads, Failures: s.states[name].Failures}
			if !ok {
				delete(s.states, name)
			} else {
				// Updated: the counts stay; the next run is now.
				s.states[name] = st
			}
		}
	}
	for name, srv := range want {
		if s.workers[name] != nil {
			continue
		}
		ctx, cancel := context.WithCancel(s.ctx)
		w := &worker{srv: srv, changed: make(chan struct{}, 1), stop: cancel, done: make(chan struct{})}
		s.workers[name] = w
		st := s.states[name]
		if st.NextRun.IsZero() || srv.Interval == 0 {
			st.NextRun = s.o.Clock.Now() // a new server archives at once
			if srv.Interval == 0 && !st.LastSuccess.IsZero() {
				st.NextRun = time.Time{}
			}
		}
		s.states[name] = st
		if srv.OnChange && s.o.Revision != nil && st.LastRevision != s.o.Revision() {
			w.changed <- struct{}{}
		}
		s.wg.Add(1)
		go s.run(ctx, w)
	}
	s.persistLocked()
}

func sameServer(a, b Server) bool {
	type key struct {
		Name, DstFile, Nonce, Passphrase, Timestamp string
		Remote                                      Remote
		Interval, Timeout, Backoff                  time.Duration
		OnChange                                    bool
		Retries                                     int
	}
	k := func(s Server) key {
		return key{s.Name, s.DstFile, s.Nonce, s.Passphrase, s.Timestamp, s.Remote, s.Interval, s.Attempts.Timeout, s.Attempts.Backoff, s.OnChange, s.Attempts.Retries}
	}
	return k(a) == k(b)
}

// Changed tells OnChange servers that a commit happened. It never blocks.
func (s *Scheduler) Changed() {
	s.mu.Lock()
	defer s.mu.Unlock()
	for _, w := range s.workers {
		if w.srv.OnChange {
			select {
			case w.changed <- struct{}{}:
			default:
			}
		}
	}
}

// State returns a server's archive state.
func (s *Scheduler) State(name string) (State, bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	st, ok := s.states[name]
	if ok && s.workers[name] == nil {
		return State{}, false
	}
	return st, ok
}

// Close stops every worker, abandoning uploads in flight.
func (s *Scheduler) Close() {
	s.mu.Lock()
	s.cancel()
	s.mu.Unlock()
	s.wg.Wait()
}

func (s *Scheduler) run(ctx context.Context, w *worker) {
	defer s.wg.Done()
	defer close(w.done)
	clock := s.o.Clock
	for {
		s.mu.Lock()
		next := s.states[w.srv.Name].NextRun
		s.mu.Unlock()
		if ctx.Err() != nil {
			return
		}
		var timer <-chan time.Time
		if !next.IsZero() {
			timer = clock.After(max(next.Sub(clock.Now()), 0))
		}
		select {
		case <-ctx.Done():
			return
		case <-timer:
		case <-w.changed:
			if !s.settle(ctx, w) {
				return
			}
			if s.upToDate(w) {
				continue
			}
		}
		s.archive(ctx, w)
	}
}

// upToDate tells whether w's last upload succeeded with the running
// revision: a change signal then has nothing new to archive (a commit that
// changed nothing, or the one that created the server, archived at once).
func (s *Scheduler) upToDate(w *worker) bool {
	if s.o.Revision == nil {
		return false
	}
	s.mu.Lock()
	st := s.states[w.srv.Name]
	s.mu.Unlock()
	return st.LastError == "" && !st.LastSuccess.IsZero() && st.LastRevision == s.o.Revision()
}

// settle waits until commits stop for Settle (at most MaxSettle).
func (s *Scheduler) settle(ctx context.Context, w *worker) bool {
	limit := time.NewTimer(s.o.MaxSettle)
	defer limit.Stop()
	for {
		quiet := time.NewTimer(s.o.Settle)
		select {
		case <-ctx.Done():
			quiet.Stop()
			return false
		case <-limit.C:
			quiet.Stop()
			return true
		case <-quiet.C:
			return true
		case <-w.changed:
			quiet.Stop()
		}
	}
}

func (s *Scheduler) archive(ctx context.Context, w *worker) {
	srv := w.srv
	clock := s.o.Clock
	start := clock.Now()
	s.update(w, func(st *State) { st.LastAttempt, st.Running = start, true })
	file := Stamp(srv.DstFile, srv.Timestamp, start)
	data, rev, err := s.o.Render(ctx, srv.Nonce, srv.Passphrase)
	if err == nil {
		attempts := srv.Attempts
		attempts.OnRetry = func(_ int, err error) {
			s.update(w, func(st *State) { st.LastError = "retrying: " + err.Error() })
		}
		err = s.o.SFTP.Upload(ctx, srv.Remote, file, data, attempts)
	}
	if ctx.Err() != nil {
		return // deleted, updated or shutting down: no state to record
	}
	now := clock.Now()
	s.update(w, func(st *State) {
		st.Running = false
		if err != nil {
			st.LastError = err.Error()
			st.Failures++
			s.o.Log.Warn("configuration archive failed", "server", srv.Name, "file", file, "err", err)
		} else {
			st.LastError = ""
			st.LastSuccess, st.LastFile, st.LastRevision = now, file, rev
			st.Uploads++
			s.o.Log.Info("configuration archived", "server", srv.Name, "file", file, "revision", rev)
		}
		st.NextRun = time.Time{}
		if srv.Interval > 0 {
			st.NextRun = start.Add(srv.Interval)
		}
	})
}

// update changes w's state, unless w was stopped meanwhile.
func (s *Scheduler) update(w *worker, fn func(*State)) {
	s.mu.Lock()
	defer s.mu.Unlock()
	name := w.srv.Name
	if s.workers[name] != w {
		return
	}
	st := s.states[name]
	fn(&st)
	s.states[name] = st
	s.persistLocked()
}

// persistLocked writes the state file so that the schedule survives a
// restart. Written under mu, it is small (one entry per server).
func (s *Scheduler) persistLocked() {
	if s.o.StatePath == "" {
		return
	}
	data, err := json.MarshalIndent(s.states, "", "  ")
	if err == nil {
		err = atomicfile.Replace(s.o.StatePath, data, 0o600)
	}
	if err != nil {
		s.o.Log.Error("cannot write the archive state", "err", err)
	}
}
