package frr

import (
	"context"
	"sync"
)

// Batcher coalesces concurrent apply requests: while FRR is busy with one
// round, every request that arrives joins the next round, which applies only
// the newest configuration (each request carries the whole desired state, in
// commit order), so N requests arriving together cost about one round, not
// N. Every request of a round gets that round's result.
type Batcher struct {
	apply func(ctx context.Context, cfg Config) error

	mu      sync.Mutex
	next    *round
	running bool
	rounds  int
}

type round struct {
	ctx  context.Context
	cfg  Config
	n    int // requests in this round
	done chan struct{}
	err  error
}

// NewBatcher coalesces calls to apply (typically Router.Apply).
func NewBatcher(apply func(ctx context.Context, cfg Config) error) *Batcher {
	return &Batcher{apply: apply}
}

// Apply asks for cfg to be applied and waits for the round that applies it
// (or a later configuration that supersedes it).
func (b *Batcher) Apply(ctx context.Context, cfg Config) error {
	return b.Submit(ctx, cfg)(ctx)
}

// Submit queues cfg at once (so requests submitted in commit order stay in
// that order) and returns the function that waits for its round's result.
func (b *Batcher) Submit(ctx context.Context, cfg Config) (wait func(context.Context) error) {
	b.mu.Lock()
	if b.next == nil {
		// The round outlives any single caller that gives up waiting.
		b.next = &round{ctx: context.WithoutCancel(ctx), done: make(chan struct{})}
	}
	r := b.next
	r.cfg = cfg
	r.n++
	if !b.running {
		b.running = true
		go b.run()
	}
	b.mu.Unlock()
	return func(ctx context.Context) error {
		select {
		case <-r.done:
			return r.err
		case <-ctx.Done():
			return ctx.Err()
		}
	}
}

func (b *Batcher) run() {
	for {
		b.mu.Lock()
		r := b.next
		b.next = nil
		if r == nil {
			b.running = false
			b.mu.Unlock()
			return
		}
		b.rounds++
		b.mu.Unlock()
		r.err = b.apply(r.ctx, r.cfg)
		close(r.done)
	}
}

// Rounds counts the apply rounds run so far.
func (b *Batcher) Rounds() int {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.rounds
}

// queued counts the requests waiting for the next round.
func (b *Batcher) queued() int {
	b.mu.Lock()
	defer b.mu.Unlock()
	if b.next == nil {
		return 0
	}
	return b.next.n
}
