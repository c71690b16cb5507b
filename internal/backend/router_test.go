package backend

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"testing"

	"github.com/swmgr/swmgr/internal/model"
)

// txLog is a transactional provider that writes what it does to a log: it
// owns the kinds named "Own", applies a commit's changes in a transaction
// of its own (onePass: the whole batch in one first, as the Linux
// dataplane does, then commit by commit should it fail).
type txLog struct {
	log     *[]string
	onePass bool
}

func (p txLog) Owns(kind string) bool { return kind == "Own" }

func (p txLog) ApplyTransactions(ctx context.Context, commits []*Commit, then func(context.Context, int, int) error) (int, error) {
	tx := func(first, end int) error {
		*p.log = append(*p.log, fmt.Sprintf("begin %d-%d", first, end))
		for _, c := range commits[first:end] {
			c.Filled = make([]model.Object, len(c.Changes))
			for i, ch := range c.Changes {
				if ch.Kind.Name != "Own" {
					return fmt.Errorf("handed %s, which it does not own", ch.Kind.Name)
				}
				*p.log = append(*p.log, "own "+ch.Key)
				c.Filled[i] = model.Object{"By": "own " + ch.Key}
			}
		}
		if err := then(ctx, first, end); err != nil {
			*p.log = append(*p.log, "rollback")
			return err
		}
		*p.log = append(*p.log, "commit")
		return nil
	}
	if p.onePass && len(commits) > 1 && tx(0, len(commits)) == nil {
		return len(commits), nil
	}
	for i := range commits {
		if err := tx(i, i+1); err != nil {
			return i, err
		}
	}
	return len(commits), nil
}

// TestRouterOrder: the transactional provider's changes go first, in its
// transaction; the other providers' changes of the same commits are
// applied before it commits, and a failure among them undoes them newest
// first, then the transaction. Without a transactional provider each
// commit is applied on its own. What each applied comes back in Filled,
// in the commit's order.
func TestRouterOrder(t *testing.T) {
	own, other := &model.Kind{Name: "Own"}, &model.Kind{Name: "Other"}
	change := func(k *model.Kind, key string) Change {
		return Change{Kind: k, Op: Create, Key: key, After: model.Object{"Key": key}}
	}
	batch := func() []*Commit {
		return []*Commit{
			{Changes: []Change{change(own, "a"), change(other, "x")}},
			{Changes: []Change{change(other, "y"), change(own, "b"), change(other, "bad")}},
			{Changes: []Change{change(own, "c")}},
		}
	}
	for _, tc := range []struct {
		name    string
		tx      func(log *[]string) Transactional
		applied int
		log     string
	}{
		{"no transactional provider: commit by commit", func(*[]string) Transactional { return nil }, 1,
			"own a, apply x, apply y, own b, revert own b, revert y"},
		{"a transaction per commit", func(log *[]string) Transactional { return txLog{log: log} }, 1,
			"begin 0-1, own a, apply x, commit, begin 1-2, own b, apply y, revert y, rollback"},
		{"the batch in one transaction, then per commit", func(log *[]string) Transactional { return txLog{log: log, onePass: true} }, 1,
			"begin 0-3, own a, own b, own c, apply x, apply y, revert y, revert x, rollback, " +
				"begin 0-1, own a, apply x, commit, begin 1-2, own b, apply y, revert y, rollback"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var log []string
			driver := func(prefix string) *Driver {
				return &Driver{
					Apply: func(_ context.Context, c Change) (model.Object, error) {
						if c.Key == "bad" {
							return nil, errors.New("refused")
						}
						if c.Op == Delete {
							log = append(log, "revert "+prefix+c.Key)
							return nil, nil
						}
						log = append(log, "apply "+prefix+c.Key)
						return model.Object{"By": "apply " + prefix + c.Key}, nil
					},
				}
			}
			ds := map[string]*Driver{"Other": driver(""), "Own": driver("own ")}
			r := NewRouter("test", ds, tc.tx(&log), nil)
			if r.tx == nil {
				// Commit by commit: the own kind is applied through its
				// driver, as any other.
				ds["Own"].Apply = func(_ context.Context, c Change) (model.Object, error) {
					if c.Op == Delete {
						log = append(log, "revert own "+c.Key)
						return nil, nil
					}
					log = append(log, "own "+c.Key)
					return model.Object{"By": "own " + c.Key}, nil
				}
			}
			commits := batch()
			n, err := r.ApplyBatch(context.Background(), commits)
			if n != tc.applied || err == nil || !strings.Contains(err.Error(), "refused") {
				t.Fatalf("ApplyBatch: %d, %v; want %d applied and the refusal", n, err, tc.applied)
			}
			if got := strings.Join(log, ", "); got != tc.log {
				t.Errorf("log\n%s\nwant\n%s", got, tc.log)
			}
			var filled []string
			for _, f := range commits[0].Filled {
				filled = append(filled, f.Str("By"))
			}
			if want := []string{"own a", "apply x"}; !slices.Equal(filled, want) {
				t.Errorf("the first commit's Filled %v, want %v", filled, want)
			}
		})
	}
}
