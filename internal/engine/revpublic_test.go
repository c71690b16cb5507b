package engine

import (
	"bytes"
	"encoding/json"
	"strings"
	"testing"

	"github.com/swmgr/swmgr/internal/backend"
	"github.com/swmgr/swmgr/internal/model"
	"github.com/swmgr/swmgr/internal/store"
)

// wholePublicRevision is publicRevision's way for any record: decode it
// whole, encode its Revision.
func wholePublicRevision(t *testing.T, data []byte) []byte {
	r, err := DecodeStoredRevision(data)
	if err != nil {
		t.Fatal(err)
	}
	r.Revision.Changes = make([]Diff, len(r.Changes))
	for i, d := range r.Changes {
		r.Revision.Changes[i] = d.Diff
	}
	out, err := json.Marshal(r.Revision)
	if err != nil {
		t.Fatal(err)
	}
	return out
}

// The streamed public form of a stored record is, byte for byte, the one
// decoding it whole gives: for the records commits write (secrets, HTML
// characters, creates, updates, deletes, a large commit), and for a record
// encoding/json wrote; records of another shape are left to the whole
// decoding.
func TestStreamedPublicRevision(t *testing.T) {
	f := newFixture(t, t.TempDir())
	f.mustApply(f.edit(backend.Create, "ConfigArchiveServer", model.Object{"IpAddr": "192.0.2.9", "Username": "u<&>", "Password": "first-secret"}))
	f.mustApply(f.edit(backend.Update, "ConfigArchiveServer", model.Object{"IpAddr": "192.0.2.9", "Password": "second-secret"}))
	f.mustApply(f.edit(backend.Delete, "ConfigArchiveServer", model.Object{"IpAddr": "192.0.2.9"}))
	var edits []Edit
	for i := range 3000 {
		edits = append(edits, f.edit(backend.Create, "NtpServer", model.Object{"IpAddr": addr(i + 1)}))
	}
	last := f.mustApply(edits...).Revision
	var records [][]byte
	f.st.View(func(tx store.Txn) error {
		for rev := uint64(1); rev <= last; rev++ {
			if data := tx.GetRevision(rev); data != nil {
				records = append(records, bytes.Clone(data))
			}
		}
		return nil
	})
	if len(records) < 4 {
		t.Fatalf("%d records", len(records))
	}
	r, _ := DecodeStoredRevision(records[0])
	r.Comment = "a <comment> & \u2028"
	std, _ := json.Marshal(r) // a record as encoding/json writes it
	records = append(records, std)
	for i, data := range records {
		got, ok := streamPublicRevision(nil, bytes.NewReader(data), len(data))
		if !ok {
			t.Fatalf("record %d not streamed: %.200s", i, data)
		}
		if want := wholePublicRevision(t, data); !bytes.Equal(got, want) {
			t.Fatalf("record %d streamed as\n%.300s\nwant\n%.300s", i, got, want)
		}
	}
	for _, other := range []string{
		`{"Changes":[],"Revision":1}`,              // Changes not last
		`{"Revision":1,"Extra":2,"Changes":[]}`,    // a field write does not make
		`{"Revision":1,"Changes":[]}{}`,            // trailing data
		`{"Revision":1,"Changes":[{"Kind":1}]}`,    // not a record
		`{"Revision":1,"Revision":2,"Changes":[]}`, // a field twice
		`{"Revision":1,"Changes":null}`,            // no list
		`{"Revision":1,"Changes":[]`,               // cut short
	} {
		if out, ok := streamPublicRevision(nil, strings.NewReader(other), len(other)); ok {
			t.Errorf("%s streamed as %s", other, out)
		}
	}
}
