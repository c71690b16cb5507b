package service

import (
	"context"

	"github.com/swmgr/swmgr/internal/backend"
)

// plane is what the engine applies configuration to: the composed drivers
// of every provider, applied through the Linux dataplane's batch when it
// is the dataplane (its companions included), else commit by commit.
type plane struct {
	name    string
	drivers map[string]*backend.Driver
	batch   backend.Batcher // nil: commit by commit
	close   func() error
}

func (p *plane) Name() string                        { return p.name }
func (p *plane) Drivers() map[string]*backend.Driver { return p.drivers }
func (p *plane) Close() error                        { return p.close() }

// ApplyBatch implements backend.Batcher.
func (p *plane) ApplyBatch(ctx context.Context, commits []*backend.Commit) (int, error) {
	if p.batch != nil {
		return p.batch.ApplyBatch(ctx, commits)
	}
	for i, c := range commits {
		if err := backend.ApplyCommit(ctx, p.drivers, c); err != nil {
			return i, err
		}
	}
	return len(commits), nil
}
