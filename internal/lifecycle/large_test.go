package lifecycle

import (
	"context"
	"encoding/json"
	"fmt"
	"testing"

	"github.com/swmgr/swmgr/internal/engine"
	"github.com/swmgr/swmgr/internal/model"
	"github.com/swmgr/swmgr/internal/store"
)

// A restore large enough for its revision record to be stored deflated
// (store.DeflateAbove) and for its event to skip the feed's ring: the
// revision reads back whole through the API and the feed, a rollback to
// before it removes its objects, and a rollback to it brings them back with
// their ObjectIds.
func TestLargeRestoreHistory(t *testing.T) {
	const n = 6000 // ~2 MiB of record
	s := newSwitch(t, harnessOptions{tune: func(o *Options) { o.NoScheduler = true }})
	fill(t, s, n)
	if _, err := s.lc.Save(context.Background(), model.Object{"Timestamp": "disabled"}, false); err != nil {
		t.Fatal(err)
	}
	_, saved := s.snapshot()
	if _, err := s.eng.Replace(context.Background(), engine.Replacement{Keep: s.lc.keepAdmins}, engine.Request{Meta: engine.Meta{Source: "test"}}); err != nil {
		t.Fatal(err)
	}
	before := s.revision()
	sub := s.eng.Feed().Subscribe()
	defer sub.Close()

	var out struct {
		Revision uint64
		Changes  int
	}
	s.must("POST", "/action/ResetConfigToFile", `{}`, &out)
	if out.Revision != before+1 || out.Changes < n {
		t.Fatalf("the restore answered %+v; want revision %d with at least %d changes", out, before+1, n)
	}
	var rec engine.Revision
	s.must("GET", fmt.Sprintf("/revisions/%d", out.Revision), "", &rec)
	if len(rec.Changes) != out.Changes || rec.Source != "restore" {
		t.Fatalf("revision %d: source %q, %d changes; want %d", out.Revision, rec.Source, len(rec.Changes), out.Changes)
	}
	var raw []byte
	s.st.View(func(tx store.Txn) error { raw = append(raw, tx.GetRevision(out.Revision)...); return nil })
	if len(raw) <= store.DeflateAbove {
		t.Fatalf("the record is %d bytes: not over store.DeflateAbove, so this test does not test a deflated one", len(raw))
	}
	byKey := map[string]engine.Diff{}
	for _, d := range rec.Changes {
		byKey[d.Key] = d
	}
	want := saved["NtpServer|10.0.23.111"]
	d := byKey["IpAddr=10.0.23.111"]
	var after map[string]any
	if err := json.Unmarshal(d.After, &after); err != nil || d.Op != "create" || after["MinPoll"] != float64(want.obj.Int("MinPoll")) {
		t.Fatalf("the restore's diff of 10.0.23.111: %+v (%v)", d, err)
	}

	events, err := sub.Take(nil)
	if err != nil || len(events) != 1 || events[0].Revision != out.Revision {
		t.Fatalf("the feed: %d events, %v", len(events), err)
	}
	var ev engine.Revision
	if err := json.Unmarshal(events[0].Data, &ev); err != nil || len(ev.Changes) != out.Changes {
		t.Fatalf("the restore's event: %d changes, %v", len(ev.Changes), err)
	}

	_, restored := s.snapshot()
	s.must("POST", "/action/Rollback", fmt.Sprintf(`{"Revision":%d}`, before), nil)
	_, rolled := s.snapshot()
	if _, ok := rolled["NtpServer|10.0.23.111"]; ok || len(rolled) > len(restored)-n {
		t.Fatalf("after the rollback to before the restore: %d objects (%d with it)", len(rolled), len(restored))
	}
	s.must("POST", "/action/Rollback", fmt.Sprintf(`{"Revision":%d}`, out.Revision), nil)
	_, again := s.snapshot()
	compare(t, "rolled back to the restore", restored, again, true)
}
