package configlog

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/swmgr/swmgr/internal/model"
	"github.com/swmgr/swmgr/internal/store"
)

func openLog(t *testing.T) (*store.Store, *Log) {
	t.Helper()
	st, err := store.Open(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { st.Close() })
	k := model.Builtin().Lookup(model.State, "ConfigLog")
	if k == nil {
		t.Fatal("no ConfigLog state kind")
	}
	return st, New(k)
}

type page struct {
	MoreExist  bool
	NextMarker uint64
	ObjCount   int
	Objects    []struct{ Object map[string]any }
}

// TestPagesBoundedInBytes: entries with the largest Data make pages of
// about MaxPageBytes however many are asked for, and paging on from
// NextMarker reads every entry once.
func TestPagesBoundedInBytes(t *testing.T) {
	st, l := openLog(t)
	const n = 1100
	big := strings.Repeat("x", 3*MaxData)
	if err := st.Update(func(tx store.Txn) error {
		for range n {
			l.Append(tx, "admin", "127.0.0.1:1", &Info{API: "ntpserver", Operation: "POST", Data: big}, "Success")
		}
		return nil
	}); err != nil {
		t.Fatal(err)
	}
	var marker uint64
	seen := 0
	for pages := 0; ; pages++ {
		var out []byte
		if err := st.View(func(tx store.Txn) (err error) {
			out, err = l.List(tx, marker, 1024, nil)
			return err
		}); err != nil {
			t.Fatal(err)
		}
		if len(out) > MaxPageBytes+4*MaxData {
			t.Fatalf("a page of %d bytes, more than about %d", len(out), MaxPageBytes)
		}
		var p page
		if err := json.Unmarshal(out, &p); err != nil {
			t.Fatal(err)
		}
		if p.ObjCount != len(p.Objects) || p.ObjCount == 0 {
			t.Fatalf("page at %d: ObjCount %d, %d objects", marker, p.ObjCount, len(p.Objects))
		}
		for _, o := range p.Objects {
			data, _ := o.Object["Data"].(string)
			if len(data) > MaxData+64 || !strings.Contains(data, "(cut: 6144 bytes in all)") {
				t.Fatalf("Data of %d bytes: %.80q...", len(data), data)
			}
		}
		seen += p.ObjCount
		if !p.MoreExist {
			break
		}
		marker = p.NextMarker
	}
	if seen != store.MaxLogEntries {
		t.Errorf("paging read %d entries, want the %d kept", seen, store.MaxLogEntries)
	}
}

// TestFailuresDoNotPushSuccessesOut: a flood of failures after some
// successes leaves every success; once the log is full of failures, new
// successes replace failures down to MaxLogFailures, and a flood of
// failures leaves the newest MaxLogEntries-MaxLogFailures successes.
func TestFailuresDoNotPushSuccessesOut(t *testing.T) {
	st, l := openLog(t)
	write := func(user, result string, times int) {
		t.Helper()
		if err := st.Update(func(tx store.Txn) error {
			for range times {
				l.Append(tx, user, "127.0.0.1:1", &Info{API: "ntpserver", Operation: "POST", Data: `{"IpAddr":"10.0.0.1"}`}, result)
			}
			return nil
		}); err != nil {
			t.Fatal(err)
		}
	}
	count := func() (successes, failures int, firstSuccess float64) {
		t.Helper()
		var marker uint64
		for {
			var out []byte
			st.View(func(tx store.Txn) (err error) {
				out, err = l.List(tx, marker, 1024, nil)
				return err
			})
			var p page
			if err := json.Unmarshal(out, &p); err != nil {
				t.Fatal(err)
			}
			for _, o := range p.Objects {
				if o.Object["Result"] == "Success" {
					if successes == 0 {
						firstSuccess = o.Object["SeqNum"].(float64)
					}
					successes++
				} else {
					failures++
				}
			}
			if !p.MoreExist {
				return
			}
			marker = p.NextMarker
		}
	}
	write("admin", "Success", 3)
	write("ro", "Error: forbidden", 1040)
	if s, f, first := count(); s != 3 || f != store.MaxLogEntries-3 || first != 1 {
		t.Fatalf("after 3 successes and 1040 failures: %d successes from SeqNum %v, %d failures", s, first, f)
	}
	write("admin", "Success", 700)
	// Failures made room first, down to MaxLogFailures; then the oldest
	// entries went, whatever they were.
	if s, f, first := count(); s != 700 || f != store.MaxLogEntries-700 || first != 1044 {
		t.Fatalf("then 700 successes: %d successes from SeqNum %v, %d failures", s, first, f)
	}
	write("ro", "Error: forbidden", 2000)
	if s, f, _ := count(); s != store.MaxLogEntries-store.MaxLogFailures || f != store.MaxLogFailures {
		t.Fatalf("then 2000 failures: %d successes, %d failures; want %d and %d", s, f, store.MaxLogEntries-store.MaxLogFailures, store.MaxLogFailures)
	}
}

// TestEntryBytesAsTheModelWrites: an entry written directly is byte for byte
// what the model's encoder writes of the same values (the form entries had
// before), escapes and invalid UTF-8 included.
func TestEntryBytesAsTheModelWrites(t *testing.T) {
	_, l := openLog(t)
	if !l.direct {
		t.Fatal("ConfigLogState no longer has the fields of an entry in their order: update entryFields")
	}
	cases := []entryValues{
		{"2026-11-23 21:39:27.159964897 +0000 UTC", "ntpserver", "POST", `{"IpAddr":"10.0.0.1","MinPoll":6}`, "Success", "127.0.0.1:1", "admin"},
		{"", "user", "PATCH", "{\"Name\":\"\\u00e9\\n\"}\x01\xff", "Error: bad \"quote\" \\ and <html> & \u2028", "", ""},
		{"t", "x", "DELETE", Bound(strings.Repeat("y", 3*MaxData)), "Success", "[::1]:80", "ünï"},
	}
	for i, c := range cases {
		seq := uint64(1 + i*1000)
		direct, generic := l.entry(seq, &c, true), l.entry(seq, &c, false)
		if string(direct) != string(generic) {
			t.Errorf("case %d:\n direct %s\n model  %s", i, direct, generic)
		}
		var entry map[string]any
		if err := json.Unmarshal(direct, &entry); err != nil || entry["SeqNum"] != float64(seq) || entry["Data"] != strings.ToValidUTF8(c[3], "\uFFFD") {
			t.Errorf("case %d: %s is not the entry: %v", i, direct, err)
		}
	}
}
