package engine

import (
	"bytes"
	"context"
	"testing"

	"github.com/swmgr/swmgr/internal/apierr"
	"github.com/swmgr/swmgr/internal/backend"
	"github.com/swmgr/swmgr/internal/model"
	"github.com/swmgr/swmgr/internal/store"
)

// A create checked before the writer (precheckCreates) is stored, or
// refused, exactly as one the writer checks itself: the same object
// (defaults, canonical values), the same error.
func TestPrecheckedCreatesAsTheWriterChecks(t *testing.T) {
	ahead := newFixture(t, t.TempDir())
	inWriter := newFixture(t, t.TempDir())
	ctx := context.Background()
	for _, tc := range []struct {
		kind   string
		fields model.Object
	}{
		{"NtpServer", model.Object{"IpAddr": "10.0.0.1"}},
		{"NtpServer", model.Object{"IpAddr": "2001:DB8::1", "MinPoll": int64(4), "Prefer": true}},
		{"NtpServer", model.Object{"IpAddr": "10.0.0.2", "MinPoll": int64(12), "MaxPoll": int64(6)}}, // the kind's Check
		{"NtpServer", model.Object{"IpAddr": "10.0.0.3", "MaxPoll": int64(99)}},                      // a range
		{"NtpServer", model.Object{"MinPoll": int64(6)}},                                             // no key
		{"NtpServer", model.Object{"IpAddr": "10.0.0.1"}},                                            // exists: the writer's own check
		{"Span", model.Object{"SpanSessionName": "m1", "SrcIntfRefList": []string{"fpPort2"}}},       // a required field missing
		{"Span", model.Object{"SpanSessionName": "m2", "DstIntfRef": "fpPort1", "SrcIntfRefList": []string{"fpPort2"}}},
		{"Port", model.Object{"IntfRef": "fpPort1"}}, // not creatable
	} {
		ed := ahead.edit(backend.Create, tc.kind, tc.fields)
		if checked := precheckCreates([]Edit{ed}, false); (checked != nil) != (ahead.kind(tc.kind).Validate(ahead.kind(tc.kind).WithDefaults(tc.fields)) == nil && ahead.kind(tc.kind).RequireFields(tc.fields) == nil && ahead.kind(tc.kind).Creatable()) {
			t.Errorf("%s %v: checked ahead %v", tc.kind, tc.fields, checked)
		}
		_, errAhead := ahead.e.Apply(ctx, []Edit{ed}, Meta{Source: "test"}, nil)
		edWriter := inWriter.edit(backend.Create, tc.kind, tc.fields)
		_, errWriter := inWriter.e.Commit(ctx, Request{Meta: Meta{Source: "test"}, Prepare: func(_ *View, r *Request) error {
			r.Edits = []Edit{edWriter}
			return nil
		}})
		if (errAhead == nil) != (errWriter == nil) || errAhead != nil && apierr.From(errAhead).Message != apierr.From(errWriter).Message {
			t.Errorf("%s %v: checked ahead: %v; in the writer: %v", tc.kind, tc.fields, errAhead, errWriter)
			continue
		}
		if errAhead != nil {
			continue
		}
		k := ahead.kind(tc.kind)
		obj := k.WithDefaults(tc.fields)
		if err := k.Validate(obj); err != nil { // canonical values, as stored
			t.Fatal(err)
		}
		key := k.Key(obj)
		if a, w := storedPublic(t, ahead.st, tc.kind, key), storedPublic(t, inWriter.st, tc.kind, key); !bytes.Equal(a, w) || a == nil {
			t.Errorf("%s %s: stored %s checked ahead, %s in the writer", tc.kind, key, a, w)
		}
	}

	many := make([]Edit, maxPrecheck+1)
	for i := range many {
		many[i] = ahead.edit(backend.Create, "NtpServer", model.Object{"IpAddr": "10.1.0.1"})
	}
	if precheckCreates(many, false) != nil || precheckCreates(many[:1], true) != nil {
		t.Error("checked ahead: a request of more than maxPrecheck edits, or edits a Prepare step replaces")
	}
}

func storedPublic(t *testing.T, st *store.Store, kind, key string) []byte {
	t.Helper()
	var out []byte
	st.View(func(tx store.Txn) error {
		if r, ok, _ := tx.Get(kind, key); ok {
			out = append(out, r.Public...)
		}
		return nil
	})
	return out
}
