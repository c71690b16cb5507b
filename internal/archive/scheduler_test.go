package archive

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/swmgr/swmgr/internal/archive/sshdtest"
)

// fakeClock is a clock that moves only when the test says so.
type fakeClock struct {
	mu      sync.Mutex
	now     time.Time
	waiters []fakeWaiter
}

type fakeWaiter struct {
	at time.Time
	ch chan time.Time
}

func newFakeClock() *fakeClock {
	return &fakeClock{now: time.Date(2026, 11, 23, 12, 0, 0, 0, time.UTC)}
}

func (c *fakeClock) Now() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.now
}

func (c *fakeClock) After(d time.Duration) <-chan time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	ch := make(chan time.Time, 1)
	if d <= 0 {
		ch <- c.now
		return ch
	}
	c.waiters = append(c.waiters, fakeWaiter{c.now.Add(d), ch})
	return ch
}

func (c *fakeClock) Advance(d time.Duration) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.now = c.now.Add(d)
	kept := c.waiters[:0]
	for _, w := range c.waiters {
		if !w.at.After(c.now) {
			w.ch <- c.now
		} else {
			kept = append(kept, w)
		}
	}
	c.waiters = kept
}

// Waiting reports how many timers are pending: a worker idle until its
// next run has one.
func (c *fakeClock) Waiting() int {
	c.mu.Lock()
	defer c.mu.Unlock()
	return len(c.waiters)
}

type renderCounter struct {
	rev     atomic.Uint64
	renders atomic.Int64
}

func (r *renderCounter) render(ctx context.Context, nonce, pass string) ([]byte, uint64, error) {
	r.renders.Add(1)
	rev := r.rev.Load()
	return []byte(fmt.Sprintf("{\"Revision\":%d}\n", rev)), rev, nil
}

func waitFor(t *testing.T, what string, limit time.Duration, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(limit)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("timed out after %v waiting for %s", limit, what)
		}
		time.Sleep(10 * time.Millisecond)
	}
}

func archivedFiles(t *testing.T, dir string) []string {
	entries, _ := os.ReadDir(dir)
	var names []string
	for _, e := range entries {
		names = append(names, e.Name())
	}
	sort.Strings(names)
	return names
}

func TestSchedulerRealServer(t *testing.T) {
	srv := sshdtest.Start(t)
	server := func(name, dir string) Server {
		return Server{Name: name, Remote: remoteOf(srv), DstFile: srv.Home + "/" + dir + "/startup-config", Timestamp: TimestampDisabled,
			Attempts: Attempts{Retries: 0, Timeout: 10 * time.Second, Backoff: 50 * time.Millisecond}}
	}

	t.Run("OnChange: a burst of 100 commits makes a handful of uploads of the last revision", func(t *testing.T) {
		rc := &renderCounter{}
		s, err := NewScheduler(SchedulerOptions{Render: rc.render, SFTP: newSFTP(t), Settle: 200 * time.Millisecond})
		if err != nil {
			t.Fatal(err)
		}
		defer s.Close()
		sv := server("a", "burst")
		sv.OnChange = true
		s.Sync([]Server{sv})
		waitFor(t, "the first upload", 20*time.Second, func() bool { st, _ := s.State("a"); return st.Uploads == 1 })
		for i := 1; i <= 100; i++ {
			rc.rev.Store(uint64(i))
			s.Changed()
			time.Sleep(time.Millisecond)
		}
		start := time.Now()
		waitFor(t, "revision 100 archived", 20*time.Second, func() bool { st, _ := s.State("a"); return st.LastRevision == 100 })
		t.Logf("revision 100 archived %v after the last commit", time.Since(start))
		time.Sleep(500 * time.Millisecond)
		st, _ := s.State("a")
		t.Logf("100 commits made %d uploads", st.Uploads-1)
		if n := st.Uploads - 1; n < 1 || n > 5 {
			t.Fatalf("100 commits made %d uploads, want 1..5", n)
		}
		got, _ := os.ReadFile(sv.DstFile)
		if string(got) != "{\"Revision\":100}\n" {
			t.Fatalf("archived %q", got)
		}
	})

	t.Run("Interval with an injected clock, resumed after a restart, stopped by a delete", func(t *testing.T) {
		clock := newFakeClock()
		rc := &renderCounter{}
		statePath := filepath.Join(t.TempDir(), "state.json")
		sv := server("b", "interval")
		sv.Interval = 60 * time.Minute
		sv.Timestamp = TimestampAppend
		opts := SchedulerOptions{Render: rc.render, SFTP: newSFTP(t), StatePath: statePath, Clock: clock}
		s, err := NewScheduler(opts)
		if err != nil {
			t.Fatal(err)
		}
		s.Sync([]Server{sv})
		waitFor(t, "the first upload", 20*time.Second, func() bool { st, _ := s.State("b"); return st.Uploads == 1 && clock.Waiting() == 1 })
		st, _ := s.State("b")
		if want := clock.Now().Add(time.Hour); !st.NextRun.Equal(want) {
			t.Fatalf("NextRun %v, want %v", st.NextRun, want)
		}
		clock.Advance(59 * time.Minute)
		time.Sleep(300 * time.Millisecond)
		if st, _ := s.State("b"); st.Uploads != 1 {
			t.Fatalf("uploaded %d times before the interval ended", st.Uploads)
		}
		clock.Advance(time.Minute)
		waitFor(t, "the second upload", 20*time.Second, func() bool { st, _ := s.State("b"); return st.Uploads == 2 && clock.Waiting() == 1 })
		files := archivedFiles(t, filepath.Dir(sv.DstFile))
		if len(files) != 2 || !strings.HasPrefix(files[0], "startup-config-20261123T120000Z") || files[1] != "startup-config-20261123T130000Z" {
			t.Fatalf("files %v, want startup-config-<timestamp> at 12:00 and 13:00", files)
		}

		// A restart resumes the schedule: no upload until 14:00.
		s.Close()
		s, err = NewScheduler(opts)
		if err != nil {
			t.Fatal(err)
		}
		defer s.Close()
		s.Sync([]Server{sv})
		waitFor(t, "the worker to wait", 5*time.Second, func() bool { return clock.Waiting() == 1 })
		if st, _ := s.State("b"); st.Uploads != 2 || !st.NextRun.Equal(clock.Now().Add(time.Hour)) {
			t.Fatalf("after a restart: %+v", st)
		}
		clock.Advance(time.Hour)
		waitFor(t, "the upload after the restart", 20*time.Second, func() bool { st, _ := s.State("b"); return st.Uploads == 3 })

		// Deleting the server stops its uploads.
		waitFor(t, "the worker to wait", 5*time.Second, func() bool { return clock.Waiting() >= 1 })
		renders := rc.renders.Load()
		s.Sync(nil)
		clock.Advance(10 * time.Hour)
		time.Sleep(300 * time.Millisecond)
		if rc.renders.Load() != renders {
			t.Fatal("a deleted server still uploaded")
		}
		if _, ok := s.State("b"); ok {
			t.Fatal("a deleted server still has state")
		}
	})

	t.Run("prepend names; server down then back: state shows the error, then the success", func(t *testing.T) {
		rc := &renderCounter{}
		s, err := NewScheduler(SchedulerOptions{Render: rc.render, SFTP: newSFTP(t), Settle: 50 * time.Millisecond})
		if err != nil {
			t.Fatal(err)
		}
		defer s.Close()
		sv := server("c", "downup")
		sv.OnChange = true
		sv.Timestamp = TimestampPrepend
		s.Sync([]Server{sv})
		waitFor(t, "the first upload", 20*time.Second, func() bool { st, _ := s.State("c"); return st.Uploads == 1 })
		if files := archivedFiles(t, filepath.Dir(sv.DstFile)); len(files) != 1 || !strings.HasSuffix(files[0], "Z-startup-config") {
			t.Fatalf("files %v, want <timestamp>-startup-config", files)
		}
		srv.Stop()
		rc.rev.Store(7)
		s.Changed()
		waitFor(t, "the failure", 20*time.Second, func() bool { st, _ := s.State("c"); return st.Failures == 1 })
		st, _ := s.State("c")
		if !strings.Contains(st.LastError, "connect") || st.LastRevision == 7 {
			t.Fatalf("state after the failure: %+v", st)
		}
		srv.Restart()
		s.Changed()
		waitFor(t, "the success", 20*time.Second, func() bool { st, _ := s.State("c"); return st.Uploads == 2 })
		st, _ = s.State("c")
		if st.LastError != "" || st.LastRevision != 7 {
			t.Fatalf("state after the success: %+v", st)
		}
	})

	t.Run("OnChange: a revision already archived is not uploaded again; a restart catches up", func(t *testing.T) {
		rc := &renderCounter{}
		rc.rev.Store(5)
		opts := SchedulerOptions{Render: rc.render, SFTP: newSFTP(t), StatePath: filepath.Join(t.TempDir(), "state.json"),
			Settle: 50 * time.Millisecond, Revision: rc.rev.Load}
		s, err := NewScheduler(opts)
		if err != nil {
			t.Fatal(err)
		}
		sv := server("e", "catchup")
		sv.OnChange = true
		s.Sync([]Server{sv})
		waitFor(t, "the first upload", 20*time.Second, func() bool { st, _ := s.State("e"); return st.Uploads == 1 })
		// The commit that created the server signals too; so does one
		// that changed nothing. Neither has anything new.
		s.Changed()
		time.Sleep(400 * time.Millisecond)
		if st, _ := s.State("e"); st.Uploads != 1 || rc.renders.Load() != 1 {
			t.Fatalf("revision 5 archived %d times (%d renders), want once", st.Uploads, rc.renders.Load())
		}
		// Commits while swmgr is down (or in the moment before a crash):
		// the next start archives them without waiting for a commit.
		s.Close()
		rc.rev.Store(9)
		s, err = NewScheduler(opts)
		if err != nil {
			t.Fatal(err)
		}
		defer s.Close()
		s.Sync([]Server{sv})
		waitFor(t, "revision 9 archived after the restart", 20*time.Second, func() bool { st, _ := s.State("e"); return st.LastRevision == 9 })
		time.Sleep(300 * time.Millisecond)
		if st, _ := s.State("e"); st.Uploads != 2 {
			t.Fatalf("after the restart: %+v, want 2 uploads", st)
		}
	})

	t.Run("wrong password: a failure in state, no retries", func(t *testing.T) {
		rc := &renderCounter{}
		s, err := NewScheduler(SchedulerOptions{Render: rc.render, SFTP: newSFTP(t)})
		if err != nil {
			t.Fatal(err)
		}
		defer s.Close()
		sv := server("d", "badpw")
		sv.Remote.Password = "wrong-password"
		sv.Attempts.Retries = 3
		s.Sync([]Server{sv})
		waitFor(t, "the failure", 20*time.Second, func() bool { st, _ := s.State("d"); return st.Failures == 1 })
		if st, _ := s.State("d"); !strings.Contains(st.LastError, "refused the user name or password") {
			t.Fatalf("LastError %q", st.LastError)
		}
	})
}
