package engine_test

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"maps"
	"math/rand/v2"
	"reflect"
	"strings"
	"sync"
	"testing"

	"github.com/google/uuid"

	"github.com/swmgr/swmgr/internal/backend"
	"github.com/swmgr/swmgr/internal/engine"
	"github.com/swmgr/swmgr/internal/engine/enginetest"
	"github.com/swmgr/swmgr/internal/engine/feed"
	"github.com/swmgr/swmgr/internal/engine/history"
	"github.com/swmgr/swmgr/internal/model"
)

// orderKey is the object every edit of TestSameObjectEditsInOrder changes.
const orderKey = "10.7.7.7"

// orderEdit is one edit of that object: its operation and, for a create or
// an update, its MinPoll.
type orderEdit struct {
	op      backend.Op
	minPoll int64
}

func (e orderEdit) String() string {
	if e.op == backend.Delete {
		return "delete"
	}
	return fmt.Sprintf("%s %d", e.op, e.minPoll)
}

var (
	create = func(p int64) orderEdit { return orderEdit{backend.Create, p} }
	update = func(p int64) orderEdit { return orderEdit{backend.Update, p} }
	del    = orderEdit{op: backend.Delete}
)

// TestSameObjectEditsInOrder: edits of one object, made in one commit or
// as requests of one group commit, end as their order says, in the store,
// the cache, the switch, the revision records and the change feed; the
// records, replayed in order on the configuration before, give the one
// after; and a rollback restores the configuration before.
func TestSameObjectEditsInOrder(t *testing.T) {
	cases := []struct {
		name   string
		exists bool // the object exists before, with MinPoll 6
		edits  []orderEdit
		want   int64 // MinPoll after; 0: the object is gone
		// oneCommit is the changes of the edits made in one commit, in
		// order (none: no revision).
		oneCommit []string
	}{
		{"create, delete", false, []orderEdit{create(4), del}, 0, nil},
		{"create, update, delete", false, []orderEdit{create(4), update(5), del}, 0, nil},
		{"create, update", false, []orderEdit{create(4), update(5)}, 5, []string{"create 5"}},
		{"update, delete", true, []orderEdit{update(5), del}, 0, []string{"delete 6"}},
		{"update, update, delete", true, []orderEdit{update(5), update(7), del}, 0, []string{"delete 6"}},
		{"update, update", true, []orderEdit{update(5), update(7)}, 7, []string{"update 7"}},
		{"update, update back", true, []orderEdit{update(5), update(6)}, 6, nil},
		{"delete, create", true, []orderEdit{del, create(4)}, 4, []string{"delete 6", "create 4"}},
		{"update, delete, create", true, []orderEdit{update(5), del, create(4)}, 4, []string{"delete 6", "create 4"}},
		{"delete, create, update", true, []orderEdit{del, create(4), update(5)}, 5, []string{"delete 6", "create 5"}},
		{"delete, create, delete", true, []orderEdit{del, create(4), del}, 0, []string{"delete 6"}},
		{"delete, create, delete, create", true, []orderEdit{del, create(4), del, create(8)}, 8, []string{"delete 6", "create 8"}},
	}
	for _, tc := range cases {
		for _, batched := range []bool{false, true} {
			name := tc.name + "/one commit"
			if batched {
				name = tc.name + "/one group commit"
			}
			t.Run(name, func(t *testing.T) {
				o := newOrderFixture(t)
				if tc.exists {
					o.MustApply(o.edit(create(6)))
				}
				start, mark := o.E.Revision(), o.mark()
				before, beforeID := o.current()
				sub := o.E.Feed().Subscribe()
				defer sub.Close()

				if batched {
					o.groupCommit(tc.edits)
				} else {
					edits := make([]engine.Edit, len(tc.edits))
					for i, ed := range tc.edits {
						edits[i] = o.edit(ed)
					}
					out := o.MustApply(edits...)
					if got := o.revisionChanges(start, o.E.Revision()); !reflect.DeepEqual(got, tc.oneCommit) {
						t.Errorf("the commit's changes are %q; want %q", got, tc.oneCommit)
					}
					if len(tc.oneCommit) == 0 && out.Revision != 0 {
						t.Errorf("a commit that changes nothing made revision %d", out.Revision)
					}
				}
				end := o.E.Revision()
				if batched && end != start+uint64(len(tc.edits)) {
					t.Errorf("%d requests made %d revisions", len(tc.edits), end-start)
				}

				after, afterID := o.current()
				if got := minPoll(after); got != tc.want {
					t.Errorf("after %v: MinPoll %d (0: gone); want %d", tc.edits, got, tc.want)
				}
				if stored := o.Object("NtpServer", orderKey); minPoll(stored) != tc.want {
					t.Errorf("the store holds %v; want MinPoll %d", stored, tc.want)
				}
				var ids []string // every ObjectId the object had
				for _, d := range o.objectDiffs(start, end) {
					ids = append(ids, d.ObjectId)
				}
				o.checkByID(ids, afterID, after)
				o.checkReplay(start, end, before, beforeID, after, afterID)
				o.checkBackend(mark, start, end)
				o.checkEvents(sub, start, end)

				// A rollback restores the object as it was before.
				mark = o.mark()
				if _, err := o.h.Rollback(context.Background(), start, engine.Request{}); err != nil {
					t.Fatalf("rollback to %d: %v", start, err)
				}
				rolled, rolledID := o.current()
				if !reflect.DeepEqual(rolled, before) || rolledID != beforeID {
					t.Errorf("after the rollback: %s %v; want %s %v", rolledID, rolled, beforeID, before)
				}
				o.checkReplay(end, o.E.Revision(), after, afterID, rolled, rolledID)
				o.checkBackend(mark, end, o.E.Revision())
			})
		}
	}
}

type orderFixture struct {
	*enginetest.Fixture
	t *testing.T
	h *history.History

	mu      sync.Mutex
	applied []string // what the switch was handed: each change of the object, as describe makes it
	all     []string // every change the switch was handed: "op Kind key"
	hold    func(backend.Change) error
}

func newOrderFixture(t *testing.T) *orderFixture {
	o := &orderFixture{Fixture: enginetest.New(t, t.TempDir()), t: t}
	o.h = history.New(o.E)
	if err := o.h.Start(context.Background()); err != nil {
		t.Fatal(err)
	}
	o.SetFault(func(c backend.Change) error {
		o.mu.Lock()
		hold := o.hold
		o.all = append(o.all, c.Op.String()+" "+c.Kind.Name+" "+c.Key)
		if c.Kind.Name == "NtpServer" && c.Key == orderKey {
			o.applied = append(o.applied, describe(c.Op.String(), c.Before, c.After))
		}
		o.mu.Unlock()
		if hold != nil {
			return hold(c)
		}
		return nil
	})
	return o
}

// mark is where the switch's changes from now on start in applied.
func (o *orderFixture) mark() int {
	o.mu.Lock()
	defer o.mu.Unlock()
	return len(o.applied)
}

func (o *orderFixture) edit(ed orderEdit) engine.Edit { return o.editOf(orderKey, ed) }

// editOf is ed of the object with key.
func (o *orderFixture) editOf(key string, ed orderEdit) engine.Edit {
	fields := model.Object{"IpAddr": key}
	if ed.op != backend.Delete {
		fields["MinPoll"] = ed.minPoll
	}
	return o.Edit(ed.op, "NtpServer", fields)
}

// groupCommit makes each edit a request of its own, all in one batch of
// the writer.
func (o *orderFixture) groupCommit(edits []orderEdit) {
	o.t.Helper()
	requests := make([][]engine.Edit, len(edits))
	for i, ed := range edits {
		requests[i] = []engine.Edit{o.edit(ed)}
	}
	_, errs := o.groupCommitRequests(requests)
	for i, err := range errs {
		if err != nil {
			o.t.Fatalf("request %d (%v): %v", i, edits[i], err)
		}
	}
}

// groupCommitRequests runs the requests in one batch of the writer, in
// order, and returns their errors: the writer is held in the switch by a
// request of another object (which then fails, making no revision) while
// they queue.
func (o *orderFixture) groupCommitRequests(requests [][]engine.Edit) ([]*engine.Outcome, []error) {
	o.t.Helper()
	entered, release := make(chan struct{}), make(chan struct{})
	const holder = "10.9.9.9"
	o.mu.Lock()
	o.hold = func(c backend.Change) error {
		if c.Key != holder {
			return nil
		}
		close(entered)
		<-release
		return fmt.Errorf("held the writer")
	}
	o.mu.Unlock()
	held := make(chan error, 1)
	go func() {
		_, err := o.Apply(o.Edit(backend.Create, "NtpServer", model.Object{"IpAddr": holder}))
		held <- err
	}()
	<-entered
	outs, errs := make([]*engine.Outcome, len(requests)), make([]error, len(requests))
	var wg sync.WaitGroup
	for i, edits := range requests {
		wg.Go(func() { outs[i], errs[i] = o.Apply(edits...) })
		enginetest.WaitFor(o.t, "the request to queue", func() bool { return o.E.QueuedRequests() == i+1 })
	}
	close(release)
	if err := <-held; err == nil {
		o.t.Fatal("the request holding the writer succeeded")
	}
	wg.Wait()
	o.mu.Lock()
	o.hold = nil
	o.mu.Unlock()
	return outs, errs
}

// TestGroupCommitSeesEarlierRequests: a request of a group commit sees the
// object as the requests before it in the batch left it, also when it
// creates and deletes the object itself.
func TestGroupCommitSeesEarlierRequests(t *testing.T) {
	cases := []struct {
		name     string
		requests [][]orderEdit
		status   []int // of each request: 0 for success
		want     int64 // MinPoll after; 0: gone
	}{
		{"deleted, then created and deleted, then updated",
			[][]orderEdit{{del}, {create(4), del}, {update(5)}}, []int{0, 0, 404}, 0},
		{"deleted, then created and deleted, then created",
			[][]orderEdit{{del}, {create(4), del}, {create(8)}}, []int{0, 0, 0}, 8},
		{"deleted, then created and deleted, then deleted",
			[][]orderEdit{{del}, {create(4), del}, {del}}, []int{0, 0, 404}, 0},
		{"updated and deleted, then updated",
			[][]orderEdit{{update(5), del}, {update(7)}}, []int{0, 404}, 0},
		{"deleted and created, then updated and deleted",
			[][]orderEdit{{del, create(4)}, {update(5), del}}, []int{0, 0}, 0},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			o := newOrderFixture(t)
			o.MustApply(o.edit(create(6)))
			start, mark := o.E.Revision(), o.mark()
			before, beforeID := o.current()
			requests := make([][]engine.Edit, len(tc.requests))
			for i, eds := range tc.requests {
				for _, ed := range eds {
					requests[i] = append(requests[i], o.edit(ed))
				}
			}
			_, errs := o.groupCommitRequests(requests)
			for i, err := range errs {
				if got := enginetest.Status(err); got != tc.status[i] || (got == 0) != (err == nil) {
					t.Errorf("request %d %v: %v; want status %d", i, tc.requests[i], err, tc.status[i])
				}
			}
			after, afterID := o.current()
			if got := minPoll(after); got != tc.want {
				t.Errorf("MinPoll %d (0: gone); want %d", got, tc.want)
			}
			end := o.E.Revision()
			o.checkReplay(start, end, before, beforeID, after, afterID)
			o.checkBackend(mark, start, end)
		})
	}
}

// current is the object as GET by key answers, decoded, and its ObjectId;
// nil when there is none.
func (o *orderFixture) current() (map[string]any, string) {
	o.t.Helper()
	k := o.Kind("NtpServer")
	body, _, err := o.E.GetByKey(context.Background(), k, model.Object{"IpAddr": orderKey}, false, nil)
	if enginetest.Status(err) == 404 {
		return nil, ""
	}
	if err != nil {
		o.t.Fatal(err)
	}
	var got struct {
		Object   map[string]any
		ObjectId string
	}
	if err := json.Unmarshal(body, &got); err != nil {
		o.t.Fatal(err)
	}
	return got.Object, got.ObjectId
}

// checkByID checks GET by ObjectId (served by the cache) against GET by
// key: the object there now is found by its id, one deleted is not.
func (o *orderFixture) checkByID(ids []string, afterID string, after map[string]any) {
	o.t.Helper()
	k := o.Kind("NtpServer")
	for _, id := range append(ids, afterID) {
		if id == "" {
			continue
		}
		body, _, err := o.E.GetByID(context.Background(), k, uuid.MustParse(id), false, nil)
		if id != afterID {
			if enginetest.Status(err) != 404 {
				o.t.Errorf("GET by the ObjectId %s of an object deleted: %s, %v; want a 404", id, body, err)
			}
			continue
		}
		var got struct{ Object map[string]any }
		if err != nil || json.Unmarshal(body, &got) != nil || !reflect.DeepEqual(got.Object, after) {
			o.t.Errorf("GET by ObjectId %s: %s, %v; want %v", id, body, err, after)
		}
	}
}

// records are the public revision records from after start to end.
func (o *orderFixture) records(start, end uint64) []engine.Revision {
	o.t.Helper()
	var out []engine.Revision
	for rev := start + 1; rev <= end; rev++ {
		body, err := o.h.GetRevision(rev, nil)
		if err != nil {
			o.t.Fatal(err)
		}
		var r engine.Revision
		if err := json.Unmarshal(body, &r); err != nil {
			o.t.Fatal(err)
		}
		out = append(out, r)
	}
	return out
}

// objectDiffs are the changes to the object in the revisions from after
// start to end, in record order.
func (o *orderFixture) objectDiffs(start, end uint64) []engine.Diff {
	var out []engine.Diff
	for _, r := range o.records(start, end) {
		for _, d := range r.Changes {
			if d.Kind == "NtpServer" && d.Key == "IpAddr="+orderKey {
				out = append(out, d)
			}
		}
	}
	return out
}

// revisionChanges describes objectDiffs.
func (o *orderFixture) revisionChanges(start, end uint64) []string {
	var out []string
	for _, d := range o.objectDiffs(start, end) {
		out = append(out, describe(d.Op, decode(o.t, d.Before), decode(o.t, d.After)))
	}
	return out
}

// checkReplay replays the object's changes from after start to end on the
// object as it was at start: each must find the object as its Before says
// (or absent, for a create), and they must end with the object as it is.
func (o *orderFixture) checkReplay(start, end uint64, before map[string]any, beforeID string, after map[string]any, afterID string) {
	o.t.Helper()
	state, id := before, beforeID
	for _, d := range o.objectDiffs(start, end) {
		if d.Op == "create" {
			if state != nil {
				o.t.Errorf("replaying revisions %d..%d: a create of an object that exists: %+v", start+1, end, d)
			}
		} else if !reflect.DeepEqual(decode(o.t, d.Before), state) || d.ObjectId != id {
			o.t.Errorf("replaying revisions %d..%d: the %s of %s %s finds %s %v", start+1, end, d.Op, d.ObjectId, d.Before, id, state)
		}
		state, id = decode(o.t, d.After), d.ObjectId
		if d.Op == "delete" {
			state, id = nil, ""
		}
	}
	if !reflect.DeepEqual(state, after) || id != afterID {
		o.t.Errorf("revisions %d..%d replayed give %s %v; the object is %s %v", start+1, end, id, state, afterID, after)
	}
}

// checkBackend checks that the switch was handed, from mark on, the
// changes the revisions from after start to end record, in their order.
func (o *orderFixture) checkBackend(mark int, start, end uint64) {
	o.t.Helper()
	o.mu.Lock()
	got := append([]string(nil), o.applied[mark:]...)
	o.mu.Unlock()
	if want := o.revisionChanges(start, end); !reflect.DeepEqual(got, want) && len(got)+len(want) > 0 {
		o.t.Errorf("the switch was handed %q; the revisions %d..%d record %q", got, start+1, end, want)
	}
}

// checkEvents checks that sub got one event per revision from after start
// to end, each the revision record.
func (o *orderFixture) checkEvents(sub *feed.Subscription, start, end uint64) {
	o.t.Helper()
	events, err := sub.Take(nil)
	if err != nil {
		o.t.Fatal(err)
	}
	records := o.records(start, end)
	if len(events) != len(records) {
		o.t.Fatalf("%d events for revisions %d..%d", len(events), start+1, end)
	}
	for i, ev := range events {
		var r engine.Revision
		if err := json.Unmarshal(ev.Data, &r); err != nil || ev.Revision != records[i].Revision || !reflect.DeepEqual(r, records[i]) {
			o.t.Errorf("event %d: %s (%v); the revision record: %+v", ev.Revision, ev.Data, err, records[i])
		}
	}
}

// describe is a change of the object, as the switch got it or a revision
// records it: "delete 6" (the MinPoll it had), "create 4", "update 5".
func describe(op string, before, after map[string]any) string {
	if op == "delete" {
		return fmt.Sprintf("delete %d", minPoll(before))
	}
	return fmt.Sprintf("%s %d", op, minPoll(after))
}

func minPoll(o map[string]any) int64 {
	switch v := o["MinPoll"].(type) {
	case int64:
		return v
	case float64:
		return int64(v)
	}
	return 0
}

func decode(t *testing.T, raw json.RawMessage) map[string]any {
	if raw == nil {
		return nil
	}
	var o map[string]any
	if err := json.Unmarshal(raw, &o); err != nil {
		t.Fatal(err)
	}
	return o
}

// TestRandomEditSequencesMatchAModel commits random sequences of edits of
// two objects and compares the result with the edits applied one by one
// to a map: a request fails as the first of its edits that does not apply
// would (changing nothing), or ends as the map does; its record holds, per
// object, one change or a delete then a create, which replayed on the map
// before give the map after. Each sequence is one commit, or is cut into
// requests that run in one group commit.
func TestRandomEditSequencesMatchAModel(t *testing.T) {
	for _, batched := range []bool{false, true} {
		t.Run(map[bool]string{false: "one commit", true: "one group commit"}[batched], func(t *testing.T) {
			o := newOrderFixture(t)
			applied := map[string]int64{} // key -> MinPoll of the object there
			rng := rand.New(rand.NewPCG(16, 510))
			rounds, committed := 300, 0
			if batched {
				rounds = 60 // each waits for its requests to queue
			}
			for round := range rounds {
				n := 1
				if batched {
					n = 1 + rng.IntN(4)
				}
				var requests []randomRequest
				var edits [][]engine.Edit
				state := applied
				for range n {
					r := newRandomRequest(rng, state)
					requests, edits = append(requests, r), append(edits, o.editsOf(r))
					if r.status == 0 {
						state = r.after
					}
				}
				start := o.E.Revision()
				var outs []*engine.Outcome
				var errs []error
				if batched {
					outs, errs = o.groupCommitRequests(edits)
				} else {
					out, err := o.Apply(edits[0]...)
					outs, errs = []*engine.Outcome{out}, []error{err}
				}
				rev := start
				for i, r := range requests {
					if got := enginetest.Status(errs[i]); got != r.status || (errs[i] != nil) != (r.status != 0) {
						t.Fatalf("round %d, request %d %q: %v; want status %d", round, i, r.steps, errs[i], r.status)
					}
					if r.status != 0 {
						continue
					}
					switch outs[i].Revision {
					case 0:
						if !maps.Equal(applied, r.after) {
							t.Fatalf("round %d, request %d %q: no revision, but it changes %v into %v", round, i, r.steps, applied, r.after)
						}
					case rev + 1:
						checkRecordShape(t, o, rev, rev+1, applied, r.after, r.steps)
						rev++
					default:
						t.Fatalf("round %d, request %d %q: revision %d after revision %d", round, i, r.steps, outs[i].Revision, rev)
					}
					applied = r.after
					committed++
				}
				if o.E.Revision() != rev {
					t.Fatalf("round %d: the requests made revisions %d..%d; their answers say up to %d", round, start+1, o.E.Revision(), rev)
				}
				for _, key := range randomKeys {
					got := minPoll(o.Object("NtpServer", key))
					if want := applied[key]; got != want {
						t.Fatalf("round %d %v: %s has MinPoll %d (0: gone); want %d", round, requests, key, got, want)
					}
				}
			}
			if committed < rounds/2 {
				t.Errorf("only %d of %d random requests were valid: the test hardly tests commits", committed, rounds)
			}
			t.Logf("%d random requests were valid", committed)
		})
	}
}

var randomKeys = []string{"10.7.7.7", "10.7.7.8"}

// randomRequest is a random sequence of edits, and what it should do to
// the objects of randomKeys.
type randomRequest struct {
	edits  []orderEdit
	keys   []string // the key of each edit
	steps  []string
	status int              // 0, or the status of the first edit that does not apply
	after  map[string]int64 // the objects after, if it applies
}

func (r randomRequest) String() string { return fmt.Sprint(r.steps) }

// newRandomRequest makes 1 to 6 edits, mostly ones that apply to the
// objects as before says (which it does not change).
func newRandomRequest(rng *rand.Rand, before map[string]int64) randomRequest {
	r := randomRequest{after: maps.Clone(before)}
	for range 1 + rng.IntN(6) {
		key := randomKeys[rng.IntN(len(randomKeys))]
		ed := orderEdit{minPoll: int64(4 + rng.IntN(6))}
		_, exists := r.after[key]
		ed.op = []backend.Op{backend.Update, backend.Delete}[rng.IntN(2)]
		if !exists {
			ed.op = backend.Create
		}
		if rng.IntN(10) == 0 {
			ed.op = []backend.Op{backend.Create, backend.Update, backend.Delete}[rng.IntN(3)]
		}
		switch {
		case r.status != 0:
		case ed.op == backend.Create && exists:
			r.status = 409
		case ed.op != backend.Create && !exists:
			r.status = 404
		}
		if ed.op == backend.Delete {
			delete(r.after, key)
		} else {
			r.after[key] = ed.minPoll
		}
		r.edits, r.keys = append(r.edits, ed), append(r.keys, key)
		r.steps = append(r.steps, fmt.Sprintf("%s %s %d", ed.op, key, ed.minPoll))
	}
	return r
}

func (o *orderFixture) editsOf(r randomRequest) []engine.Edit {
	edits := make([]engine.Edit, len(r.edits))
	for i, ed := range r.edits {
		edits[i] = o.editOf(r.keys[i], ed)
	}
	return edits
}

// checkRecordShape checks the revisions from after start to end against
// the objects before and after them.
func checkRecordShape(t *testing.T, o *orderFixture, start, end uint64, before, after map[string]int64, steps []string) {
	t.Helper()
	replayed := maps.Clone(before)
	seen := map[string][]string{}
	for _, r := range o.records(start, end) {
		for _, d := range r.Changes {
			key := strings.TrimPrefix(d.Key, "IpAddr=")
			seen[key] = append(seen[key], d.Op)
			_, exists := replayed[key]
			switch d.Op {
			case "create":
				if exists {
					t.Fatalf("%q: the record creates %s, which exists", steps, key)
				}
				replayed[key] = minPoll(decode(t, d.After))
			case "update", "delete":
				if !exists || replayed[key] != minPoll(decode(t, d.Before)) {
					t.Fatalf("%q: the record's %s of %s finds %s", steps, d.Op, key, d.Before)
				}
				replayed[key] = minPoll(decode(t, d.After))
				if d.Op == "delete" {
					delete(replayed, key)
				}
			}
		}
	}
	for key, ops := range seen {
		if len(ops) > 1 && !reflect.DeepEqual(ops, []string{"delete", "create"}) {
			t.Fatalf("%q: the record changes %s by %q; want one change, or a delete then a create", steps, key, ops)
		}
	}
	if !maps.Equal(replayed, after) {
		t.Fatalf("%q: the record replayed gives %v; want %v", steps, replayed, after)
	}
}

// TestRecreateNamedObject: an object that others name can be deleted and
// created again in one commit only with the objects that name it (deleted
// and created again after it, or new); the switch gets the deletes, users
// first, then the creates, the object first.
func TestRecreateNamedObject(t *testing.T) {
	vrf := model.Object{"Vrf": "red"}
	intf := func(port string) model.Object {
		return model.Object{"IntfRef": port, "IpAddr": "10.4.0.1/24", "Vrf": "red"}
	}
	cases := []struct {
		name       string
		edits      func(o *orderFixture) []engine.Edit
		status     int
		switchGets []string // what the switch gets, if the commit is made
	}{
		{"the object alone", func(o *orderFixture) []engine.Edit {
			return []engine.Edit{o.Edit(backend.Delete, "Vrf", vrf), o.Edit(backend.Create, "Vrf", vrf)}
		}, 409, nil},
		{"the object, and an update of its user", func(o *orderFixture) []engine.Edit {
			return []engine.Edit{o.Edit(backend.Delete, "Vrf", vrf), o.Edit(backend.Create, "Vrf", vrf),
				o.Edit(backend.Update, "IPv4Intf", model.Object{"IntfRef": "fpPort2", "IpAddr": "10.4.0.2/24"})}
		}, 409, nil},
		{"the object, and a new user beside the old one", func(o *orderFixture) []engine.Edit {
			return []engine.Edit{o.Edit(backend.Delete, "Vrf", vrf), o.Edit(backend.Create, "Vrf", vrf),
				o.Edit(backend.Create, "IPv4Intf", intf("fpPort3"))}
		}, 409, nil},
		{"the object and its user", func(o *orderFixture) []engine.Edit {
			return []engine.Edit{o.Edit(backend.Delete, "IPv4Intf", intf("fpPort2")), o.Edit(backend.Delete, "Vrf", vrf),
				o.Edit(backend.Create, "Vrf", vrf), o.Edit(backend.Create, "IPv4Intf", intf("fpPort2"))}
		}, 0, []string{"delete IPv4Intf fpPort2", "delete Vrf red", "create Vrf red", "create IPv4Intf fpPort2"}},
		{"the object, its user moved to a new one", func(o *orderFixture) []engine.Edit {
			return []engine.Edit{o.Edit(backend.Delete, "IPv4Intf", intf("fpPort2")), o.Edit(backend.Delete, "Vrf", vrf),
				o.Edit(backend.Create, "Vrf", vrf), o.Edit(backend.Create, "IPv4Intf", intf("fpPort3"))}
		}, 0, []string{"delete IPv4Intf fpPort2", "delete Vrf red", "create Vrf red", "create IPv4Intf fpPort3"}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			o := newOrderFixture(t)
			o.MustApply(o.Edit(backend.Create, "Vrf", vrf))
			o.MustApply(o.Edit(backend.Create, "IPv4Intf", intf("fpPort2")))
			dump := o.Dump()
			o.mu.Lock()
			o.all = nil
			o.mu.Unlock()
			_, err := o.Apply(tc.edits(o)...)
			if got := enginetest.Status(err); got != tc.status || (err != nil) != (tc.status != 0) {
				t.Fatalf("%v; want status %d", err, tc.status)
			}
			if err != nil && !strings.Contains(err.Error(), "Vrf Vrf=red is still used by IPv4Intf IntfRef=fpPort2") {
				t.Errorf("%v; want it to name the user of the Vrf", err)
			}
			o.mu.Lock()
			got := o.all
			o.mu.Unlock()
			if !reflect.DeepEqual(got, tc.switchGets) {
				t.Errorf("the switch got %q; want %q", got, tc.switchGets)
			}
			if err != nil {
				if !bytes.Equal(o.Dump(), dump) {
					t.Error("a refused commit changed the store")
				}
				return
			}
			if !o.Exists("Vrf", "red") {
				t.Error("the object is gone")
			}
		})
	}
}

// TestBreakoutThereAndBack: a port broken out and back in one commit ends
// with the sub-ports its last mode gives, in the store and on the switch,
// which gets the sub-ports' deletes before the port's update and their
// creates after it.
func TestBreakoutThereAndBack(t *testing.T) {
	cases := []struct {
		name  string
		from  string
		modes []string
		subs  int // sub-ports after
	}{
		{"1x40, 4x10, 1x40", "1x40", []string{"4x10", "1x40"}, 0},
		{"4x10, 1x40, 4x10", "4x10", []string{"1x40", "4x10"}, 4},
		{"4x10, 4x25, 4x10", "4x10", []string{"4x25", "4x10"}, 4},
		{"1x40, 4x10, 4x25", "1x40", []string{"4x10", "4x25"}, 4},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			o := newOrderFixture(t)
			port := func(mode string) engine.Edit {
				return o.Edit(backend.Update, "Port", model.Object{"IntfRef": "fpPort4", "BreakOutMode": mode})
			}
			if tc.from != "1x40" {
				o.MustApply(port(tc.from))
			}
			o.mu.Lock()
			o.all = nil
			o.mu.Unlock()
			var edits []engine.Edit
			for _, m := range tc.modes {
				edits = append(edits, port(m))
			}
			o.MustApply(edits...)
			for i := 1; i <= 4; i++ {
				key := fmt.Sprintf("fpPort4s%d", i)
				if got, want := o.Exists("Port", key), i <= tc.subs; got != want {
					t.Errorf("%s exists: %v; want %v", key, got, want)
				}
			}
			if got := o.Object("Port", "fpPort4"); got["BreakOutMode"] != tc.modes[len(tc.modes)-1] {
				t.Errorf("fpPort4: %v", got)
			}
			o.mu.Lock()
			defer o.mu.Unlock()
			t.Logf("the switch got %q", o.all)
			stage := 0 // 0: sub-port deletes, 1: the port's update, 2: sub-port creates
			for _, c := range o.all {
				now := map[bool]int{true: 0, false: 2}[strings.HasPrefix(c, "delete")]
				if c == "update Port fpPort4" {
					now = 1
				}
				if now < stage {
					t.Errorf("the switch got %q: %q out of order", o.all, c)
				}
				stage = now
			}
		})
	}
}
