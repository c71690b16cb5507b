package candidates

import (
	"testing"

	"github.com/swmgr/swmgr/internal/engine"
)

// TestCacheKeepsSeveralViews: staging into one candidate, then another,
// then the first again finds the first's view kept (no replay of its
// edits), within the bounds on the views kept.
func TestCacheKeepsSeveralViews(t *testing.T) {
	var c cache
	a, b := &engine.View{}, &engine.View{}
	c.keep("a", 50000, 7, a)
	c.keep("b", 1, 7, b)
	if got := c.cached("a", 50000, 7); got != a {
		t.Fatalf("the view of a is not kept after staging into b: %p", got)
	}
	if got := c.cached("a", 50000, 7); got != nil {
		t.Fatal("a view taken is still in the cache")
	}
	if got := c.cached("b", 1, 8); got != nil {
		t.Fatal("a view of an older revision is used")
	}

	// Past cachedViews, the least recently kept goes.
	for i, id := range []string{"1", "2", "3", "4", "5"} {
		c.keep(id, i, 9, &engine.View{})
	}
	if len(c.views) != cachedViews || c.cached("1", 0, 9) != nil || c.cached("5", 4, 9) == nil {
		t.Fatalf("views kept: %d, want the %d most recent", len(c.views), cachedViews)
	}

	// Past cachedEdits in all, the older views go; the last one stays.
	c.keep("big", cachedEdits, 9, &engine.View{})
	if len(c.views) != 1 || c.views[0].id != "big" {
		t.Fatalf("views kept beside one of cachedEdits edits: %d", len(c.views))
	}
	c.keep("small", 10, 9, &engine.View{})
	if len(c.views) != 1 {
		t.Fatalf("views kept past cachedEdits: %d", len(c.views))
	}

	// Views resolved on an older revision are dropped.
	c.keep("x", 1, 10, &engine.View{})
	if len(c.views) != 1 {
		t.Fatalf("views of older revisions kept: %d", len(c.views))
	}
	c.drop("x")
	if len(c.views) != 0 {
		t.Fatal("a dropped view is kept")
	}
}
