package engine

import (
	"encoding/json"
	"reflect"
	"strings"
	"testing"

	"github.com/swmgr/swmgr/internal/backend"
	"github.com/swmgr/swmgr/internal/engine/feed"
	"github.com/swmgr/swmgr/internal/model"
	"github.com/swmgr/swmgr/internal/store"
)

// The revision records written by hand (write) read back as the structs
// encoding/json would have written: the same values, for every field.
func TestHandWrittenRevisionRecords(t *testing.T) {
	head := Revision{Revision: 42, Time: "2026-11-23T18:00:00Z", User: "ad\"min<&>", Source: "rest", Comment: "a \\ comment\n\u2028é"}
	diffs := []Diff{
		{Kind: "NtpServer", Key: "IpAddr=192.0.2.1", ObjectId: "0f8fad5b-d9cb-469f-a165-70867728950e", Op: "create", After: json.RawMessage(`{"IpAddr":"192.0.2.1"}`)},
		{Kind: "User", Key: "Name=x\"y", ObjectId: "1f8fad5b-d9cb-469f-a165-70867728950e", Op: "delete", Before: json.RawMessage(`{"Name":"x\"y","Password":"******"}`)},
	}
	public := appendRevisionHead(nil, &head, 0)
	for i := range diffs {
		if i > 0 {
			public = append(public, ',')
		}
		public = appendDiff(public, &diffs[i])
	}
	public = append(public, "]}"...)
	want := head
	want.Changes = diffs
	std, _ := json.Marshal(want)
	var got, exp any
	if err := json.Unmarshal(public, &got); err != nil {
		t.Fatalf("%v: %s", err, public)
	}
	json.Unmarshal(std, &exp)
	if !reflect.DeepEqual(got, exp) {
		t.Fatalf("hand-written %s\nencoding/json %s", public, std)
	}
}

// A commit's stored record decodes to what encoding/json would have
// stored: a rollback reads it (with its sealed secrets) and the feed's
// resumption re-encodes it.
func TestStoredRevisionRecordDecodes(t *testing.T) {
	f := newFixture(t, t.TempDir())
	f.mustApply(f.edit(backend.Create, "ConfigArchiveServer", model.Object{"IpAddr": "192.0.2.9", "Username": "u", "Password": "first-secret"}))
	out := f.mustApply(f.edit(backend.Update, "ConfigArchiveServer", model.Object{"IpAddr": "192.0.2.9", "Password": "second-secret"}))
	var data []byte
	f.st.View(func(tx store.Txn) error { data = append(data, tx.GetRevision(out.Revision)...); return nil })
	r, err := DecodeStoredRevision(data)
	if err != nil {
		t.Fatal(err)
	}
	if len(r.Changes) != 1 || r.Changes[0].StoreKey != "192.0.2.9" || r.Changes[0].BeforeSealed == nil || r.Changes[0].AfterSealed == nil || len(r.Changes[0].Before) == 0 {
		t.Fatalf("stored record %s decodes to %+v", data, r)
	}
	k, id := f.kind("ConfigArchiveServer"), out.IDs[0]
	before, err1 := f.e.box.Unseal(r.Changes[0].BeforeSealed, sealAD(k, id))
	after, err2 := f.e.box.Unseal(r.Changes[0].AfterSealed, sealAD(k, id))
	if err1 != nil || err2 != nil || !strings.Contains(string(before), "first-secret") || !strings.Contains(string(after), "second-secret") {
		t.Fatalf("sealed secrets of the record: %q %v, %q %v", before, err1, after, err2)
	}
	if len(out.Diffs) != 1 || string(out.Diffs[0].After) != string(r.Changes[0].After) {
		t.Fatalf("the commit's diffs %+v differ from its record's %+v", out.Diffs, r.Changes)
	}
}

// A commit whose event is too large for the feed's ring reaches
// subscribers all the same, read from the store.
func TestLargeEventIsReadFromTheStore(t *testing.T) {
	f := newFixture(t, t.TempDir())
	sub := f.e.Feed().Subscribe()
	defer sub.Close()
	var edits []Edit
	for i := range 3000 {
		edits = append(edits, f.edit(backend.Create, "NtpServer", model.Object{"IpAddr": addr(i + 1)}))
	}
	out := f.mustApply(edits...)
	f.mustApply(f.edit(backend.Create, "NtpServer", model.Object{"IpAddr": "192.0.2.200"}))
	events, err := sub.Take(nil)
	if err != nil || len(events) != 2 {
		t.Fatalf("took %d events, %v; want 2", len(events), err)
	}
	if len(events[0].Data) <= feed.MaxRingEvent || events[0].Revision != out.Revision {
		t.Fatalf("the large event: revision %d, %d bytes", events[0].Revision, len(events[0].Data))
	}
	var r Revision
	if err := json.Unmarshal(events[0].Data, &r); err != nil || len(r.Changes) != 3000 || r.Changes[2999].Op != "create" {
		t.Fatalf("the large event decodes to %d changes, %v", len(r.Changes), err)
	}
	if !strings.Contains(string(events[1].Data), "192.0.2.200") {
		t.Fatalf("the small event after it: %s", events[1].Data)
	}
}
