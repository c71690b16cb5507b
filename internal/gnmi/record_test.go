package gnmi

import (
	"encoding/json"
	"reflect"
	"testing"

	"github.com/swmgr/swmgr/internal/engine"
	"github.com/swmgr/swmgr/internal/model"
)

// records are revision records as the change feed carries them, and
// variants with what JSON allows there.
var records = []string{
	`{"Revision":2,"Time":"2026-11-27T15:52:11.248592166Z","User":"","Source":"test","Comment":"","Changes":[{"Kind":"Port","Key":"IntfRef=fpPort1","ObjectId":"01a21db5-00ee-78bd-954d-0837d890a953","Op":"update","Before":{"IntfRef":"fpPort1","Mtu":1500,"EnableFEC":false},"After":{"IntfRef":"fpPort1","Mtu":1234,"EnableFEC":false}}]}`,
	`{"Revision":3,"Time":"2026-11-27T15:52:11Z","User":"a\"dmin","Source":"rest","Comment":"{[\\\"]}","Changes":[]}`,
	`{"Revision":4,"Time":"2026-11-27T15:52:11Z","Changes":[{"Kind":"Ntp\u0053erver","Op":"create","After":{"IpAddr":"10.0.0.1","Nested":{"a":[1,2,{"b":"]}"}],"c":null},"S":"x\\y\"z"}},{"Kind":"Vlan","Op":"delete","Before":{"VlanId":5,"IntfList":["a","b"]}}]}`,
	" {\n \"Time\" : \"t\" , \"Changes\" : [ { \"Kind\" : \"K\" , \"Before\" : null , \"After\" : [ ] , \"X\" : -1.5e3 } ] } ",
	`{"Changes":[{"Kind":"K","After":true}],"Extra":{"deep":[[[[[[[[[[[[[[[[[[1]]]]]]]]]]]]]]]]]]}}`,
}

// bad are not records: parseRecord refuses them (its caller then asks
// encoding/json).
var bad = []string{
	``, `[]`, `{`, `{"Changes":[{"Kind":"K"}`, `{"Changes":[{"Kind":1}]}`, `{"Time":"a` + "\n" + `"}`,
	`{"Changes":[{"After":{"a":1]}}]}`, `{"Changes":[{"After":tru}]}`, `{"Time":"t"} x`, `{"Time":"t",}`, `{"Changes":[{"After":{"a":"\"}}]}`,
}

// checkRecord: parseRecord reads valid JSON as encoding/json reads its
// Time and Changes, or refuses it. What it skips it does not validate (the engine writes valid
// JSON): of invalid JSON, only that it does not fail is checked.
func checkRecord(t *testing.T, data []byte) {
	t.Helper()
	if !json.Valid(data) {
		parseRecord(data)
		return
	}
	var rev struct { // what parseRecord reads of engine.Revision
		Time    string
		Changes []engine.Diff
	}
	jerr := json.Unmarshal(data, &rev)
	tm, changes, ok := parseRecord(data)
	if !ok {
		return // the caller decodes it with encoding/json
	}
	if jerr != nil {
		t.Fatalf("parseRecord read %q, which encoding/json refuses: %v", data, jerr)
	}
	if tm != rev.Time {
		t.Errorf("%q: Time %q; encoding/json: %q", data, tm, rev.Time)
	}
	if len(changes) != len(rev.Changes) {
		t.Fatalf("%q: %d changes; encoding/json: %d", data, len(changes), len(rev.Changes))
	}
	for i := range changes {
		if !reflect.DeepEqual(changes[i], rev.Changes[i]) {
			t.Errorf("%q: change %d is %+v; encoding/json: %+v", data, i, changes[i], rev.Changes[i])
		}
	}
}

// TestParseRecord: parseRecord reads a record as encoding/json does, and
// refuses what is not one.
func TestParseRecord(t *testing.T) {
	for _, r := range records {
		if _, _, ok := parseRecord([]byte(r)); !ok {
			t.Errorf("parseRecord refused %q", r)
		}
		checkRecord(t, []byte(r))
	}
	for _, r := range bad {
		if _, _, ok := parseRecord([]byte(r)); ok {
			t.Errorf("parseRecord read %q", r)
		}
	}
}

// TestParseRecordOfCommits: the records of real commits, with secrets
// and odd values, read as encoding/json reads them.
func TestParseRecordOfCommits(t *testing.T) {
	fx := start(t, Options{})
	sub := fx.f.E.Feed().Follow()
	defer sub.Close()
	fx.f.MustApply(fx.f.Edit(model.Create, "NtpServer", model.Object{"IpAddr": "10.0.0.9"}))
	fx.f.MustApply(fx.f.Edit(model.Update, "Port", model.Object{"IntfRef": "fpPort1", "Description": "a \"quoted\" \\ {desc} \u00e9"}))
	fx.f.MustApply(fx.f.Edit(model.Delete, "NtpServer", model.Object{"IpAddr": "10.0.0.9"}))
	var n int
	for n < 3 {
		<-sub.Notify
		evs, err := sub.Take(nil)
		if err != nil {
			t.Fatal(err)
		}
		for _, ev := range evs {
			if _, _, ok := parseRecord(ev.Data); !ok {
				t.Errorf("parseRecord refused the record of revision %d: %s", ev.Revision, ev.Data)
			}
			checkRecord(t, ev.Data)
			n++
		}
	}
}

func FuzzParseRecord(f *testing.F) {
	for _, r := range append(records, bad...) {
		f.Add([]byte(r))
	}
	f.Fuzz(func(t *testing.T, data []byte) { checkRecord(t, data) })
}
