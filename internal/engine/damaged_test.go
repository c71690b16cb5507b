package engine_test

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"net/http"
	"strings"
	"testing"

	"github.com/swmgr/swmgr/internal/apierr"
	"github.com/swmgr/swmgr/internal/backend"
	"github.com/swmgr/swmgr/internal/engine/enginetest"
	"github.com/swmgr/swmgr/internal/model"
	"github.com/swmgr/swmgr/internal/store"
)

// TestDamagedRecordIsNotServed: a stored object whose JSON is damaged (on
// disk, under a running swmgr) is never handed out: a list of its kind
// answers the others, valid JSON; a read of it by key answers 500
// damaged_record naming its kind, key and ObjectId and how to recover. The
// next start refuses the data directory, naming the record.
func TestDamagedRecordIsNotServed(t *testing.T) {
	dir := t.TempDir()
	f := enginetest.New(t, dir)
	k := f.Kind("NtpServer")
	for _, addr := range []string{"192.0.2.1", "192.0.2.2", "192.0.2.3"} {
		f.MustApply(f.Edit(backend.Create, "NtpServer", model.Object{"IpAddr": addr}))
	}
	var id string
	err := f.St.Update(func(tx store.Txn) error {
		rec, _, err := tx.Get("NtpServer", k.Key(model.Object{"IpAddr": "192.0.2.2"}))
		if err != nil {
			return err
		}
		id = rec.ID.String()
		rec.Public = bytes.Repeat([]byte{0xff}, len(rec.Public))
		return tx.Put(&rec, nil, nil)
	})
	if err != nil {
		t.Fatal(err)
	}

	page, err := f.E.List(context.Background(), k, 0, 10, false, nil)
	var got struct {
		Objects []struct{ Object model.Object }
	}
	if err != nil || json.Unmarshal(page, &got) != nil || len(got.Objects) != 2 {
		t.Fatalf("the list: %v\n%q", err, page)
	}
	for _, o := range got.Objects {
		if o.Object["IpAddr"] == "192.0.2.2" {
			t.Errorf("the damaged object was listed: %v", o.Object)
		}
	}
	_, _, err = f.E.GetByKey(context.Background(), k, model.Object{"IpAddr": "192.0.2.2"}, false, nil)
	e := apierr.From(err)
	if e.Status != http.StatusInternalServerError || e.Code != apierr.CodeDamagedRecord || !strings.Contains(e.Message, `NtpServer "192.0.2.2"`) || !strings.Contains(e.Message, id) || !strings.Contains(e.Message, "backup") {
		t.Errorf("the read of the damaged object: %d %s %q", e.Status, e.Code, e.Message)
	}
	if out, _, err := f.E.GetByKey(context.Background(), k, model.Object{"IpAddr": "192.0.2.3"}, false, nil); err != nil || !json.Valid(out) {
		t.Errorf("the read of another object: %v %q", err, out)
	}

	f.E.Close()
	f.St.Close()
	err = openEngineErr(t, dir, model.Builtin())
	if !errors.Is(err, store.ErrDamaged) || !strings.Contains(err.Error(), `NtpServer "192.0.2.2"`) || !strings.Contains(err.Error(), id) || !strings.Contains(err.Error(), "backup") {
		t.Errorf("the start on the damaged record: %v", err)
	}
}
