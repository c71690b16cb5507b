package engine

import (
	"testing"
	"time"

	"github.com/swmgr/swmgr/internal/backend"
	"github.com/swmgr/swmgr/internal/model"
)

// TestGather: the writer's wait for the clients it expects ends as soon as
// they are all in, ends without them once none comes for lingerGap, and
// ends when the engine stops; the requests that came are all in the batch.
func TestGather(t *testing.T) {
	e := &Engine{jobs: make(chan *job, maxBatch), stopLoop: make(chan struct{})}
	timer := time.NewTimer(time.Hour)
	timer.Stop()

	for range 5 {
		e.jobs <- &job{}
	}
	if got := e.gather([]*job{{}}, 4, timer); len(got) != 4 {
		t.Errorf("expecting 4 with 1 queued and 5 waiting: gathered %d", len(got))
	}
	<-e.jobs
	<-e.jobs

	e.jobs <- &job{}
	start := time.Now()
	got := e.gather([]*job{{}}, 64, timer) // 62 never come
	if len(got) != 2 {
		t.Errorf("expecting 64 with 1 queued and 1 waiting: gathered %d", len(got))
	}
	if waited := time.Since(start); waited < lingerGap {
		t.Errorf("gave up after %v, before lingerGap (%v) without an arrival", waited, lingerGap)
	}

	close(e.stopLoop)
	if got := e.gather([]*job{{}}, 64, timer); len(got) != 1 {
		t.Errorf("stopping: gathered %d", len(got))
	}
}

// TestLoneClientDoesNotWait: sequential requests (batches of one) never
// enter the wait, so a lone client's commit is not delayed by it.
func TestLoneClientDoesNotWait(t *testing.T) {
	f := newFixture(t, t.TempDir())
	for i := range 20 {
		f.mustApply(f.edit(backend.Create, "NtpServer", model.Object{"IpAddr": addr(i + 1)}))
	}
	if n := f.e.lingered.Load(); n != 0 {
		t.Errorf("%d of 20 sequential creates waited for company", n)
	}
}
