package api

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/swmgr/swmgr/internal/engine"
	"github.com/swmgr/swmgr/internal/engine/history"
	"github.com/swmgr/swmgr/internal/store"
)

// txnServer is the in-process swmgr of newAPIHarness, seen through the few
// helpers the transaction tests use.
type txnServer struct {
	t      testing.TB
	url    string
	client *http.Client
	st     *store.Store
	eng    *engine.Engine
}

func newTxnServer(t testing.TB) *txnServer {
	t.Helper()
	h := newAPIHarness(t)
	return &txnServer{t: t, url: h.base, client: h.client, st: h.st, eng: h.eng}
}

func (s *txnServer) do(method, path, body string, hdr ...string) (int, map[string]any, http.Header) {
	s.t.Helper()
	req, err := http.NewRequest(method, s.url+path, strings.NewReader(body))
	if err != nil {
		s.t.Fatal(err)
	}
	for i := 0; i+1 < len(hdr); i += 2 {
		req.Header.Set(hdr[i], hdr[i+1])
	}
	resp, err := s.client.Do(req)
	if err != nil {
		s.t.Fatal(err)
	}
	defer resp.Body.Close()
	data, _ := io.ReadAll(resp.Body)
	var m map[string]any
	if len(data) > 0 {
		if err := json.Unmarshal(data, &m); err != nil {
			s.t.Fatalf("%s %s: body is not JSON: %q", method, path, data)
		}
	}
	return resp.StatusCode, m, resp.Header
}

func (s *txnServer) dump() []byte {
	var b bytes.Buffer
	if err := s.st.Dump(&b); err != nil {
		s.t.Fatal(err)
	}
	return b.Bytes()
}

func TestCandidateOverREST(t *testing.T) {
	s := newTxnServer(t)
	code, body, _ := s.do("POST", "/candidates", `{"Comment":"add red"}`)
	if code != 201 {
		t.Fatalf("create candidate: %d %v", code, body)
	}
	id := body["CandidateId"].(string)
	base := uint64(body["BaseRevision"].(float64))
	steps := []struct {
		method, path, body string
		want               int
	}{
		{"POST", "/candidates/" + id + "/config/Vrf", `{"Vrf":"red"}`, 201},
		{"POST", "/candidates/" + id + "/config/IPv4Intf", `{"IntfRef":"fpPort1","IpAddr":"10.0.0.1/24","Vrf":"red"}`, 201},
		{"POST", "/candidates/" + id + "/config/IPv4Intf", `{"IntfRef":"fpPort2","IpAddr":"10.0.0.1/24","Vrf":"blue"}`, 400},
		{"PATCH", "/candidates/" + id + "/config/Port", `{"IntfRef":"fpPort1","AdminState":"UP"}`, 200},
		{"GET", "/candidates/" + id + "/config/IPv4Intf?IntfRef=fpPort1", ``, 200},
		{"GET", "/config/IPv4Intf?IntfRef=fpPort1", ``, 404}, // not running yet
		{"PUT", "/candidates/" + id + "/config/Vrf", `{}`, 405},
		{"POST", "/candidates/" + id + "/config/SystemParam", `{}`, 405},
		{"GET", "/candidates/nope/diff", ``, 404},
		{"POST", "/candidates/" + id + "/commit", `{"Confirm":-1}`, 400},
		{"POST", "/candidates/" + id + "/commit", `{"Bogus":1}`, 400},
	}
	for _, st := range steps {
		if code, body, _ := s.do(st.method, st.path, st.body); code != st.want {
			t.Fatalf("%s %s: %d %v; want %d", st.method, st.path, code, body, st.want)
		}
	}
	_, list, _ := s.do("GET", "/candidates/"+id+"/config/IPv4Intfs?Count=1", ``)
	if list["ObjCount"].(float64) != 1 {
		t.Fatalf("candidate list: %v", list)
	}
	_, diff, _ := s.do("GET", "/candidates/"+id+"/diff", ``)
	if n := len(diff["Changes"].([]any)); n != 3 {
		t.Fatalf("diff has %d changes; want 3: %v", n, diff)
	}
	before := s.dump()
	if code, body, _ := s.do("POST", "/candidates/"+id+"/commit?dry_run=true", `{}`); code != 200 || body["DryRun"] != true {
		t.Fatalf("dry-run commit: %d %v", code, body)
	}
	if code, _, _ := s.do("POST", "/candidates/"+id+"/commit", `{}`, "If-Match", `"`+strconv.FormatUint(base+5, 10)+`"`); code != 412 {
		t.Fatalf("commit with a stale If-Match: %d", code)
	}
	if !bytes.Equal(before, s.dump()) {
		t.Fatal("a dry run or refused commit changed the store")
	}
	code, body, hdr := s.do("POST", "/candidates/"+id+"/commit", `{"Comment":"red vrf"}`, "If-Match", `"`+strconv.FormatUint(base, 10)+`"`)
	if code != 200 || body["Revision"].(float64) != float64(base+1) || hdr.Get("ETag") == "" {
		t.Fatalf("commit: %d %v", code, body)
	}
	_, rev, _ := s.do("GET", "/revisions/"+strconv.FormatUint(base+1, 10), ``)
	if rev["Comment"] != "red vrf" || len(rev["Changes"].([]any)) != 3 {
		t.Fatalf("revision record: %v", rev)
	}
	if code, _, _ := s.do("GET", "/config/IPv4Intf?IntfRef=fpPort1", ``); code != 200 {
		t.Fatal("committed object missing")
	}
}

func TestDryRunWritesChangeNothing(t *testing.T) {
	s := newTxnServer(t)
	s.do("POST", "/config/NtpServer", `{"IpAddr":"10.0.0.1"}`)
	before := s.dump()
	for _, st := range []struct{ method, path, body string }{
		{"POST", "/config/NtpServer?dry_run=true", `{"IpAddr":"10.0.0.2"}`},
		{"PATCH", "/config/NtpServer?dry_run=true", `{"IpAddr":"10.0.0.1","MinPoll":4}`},
		{"DELETE", "/config/NtpServer?dry_run=true&IpAddr=10.0.0.1", ``},
		{"PATCH", "/config/Port?dry_run=true", `{"IntfRef":"fpPort1","BreakOutMode":"4x10"}`},
		{"POST", "/action/Rollback?dry_run=true", `{"Revision":1}`},
		{"POST", "/action/ClearConfigLog?dry_run=true", `{}`},
	} {
		code, body, _ := s.do(st.method, st.path, st.body)
		if code != 200 || body["DryRun"] != true {
			t.Errorf("%s %s: %d %v", st.method, st.path, code, body)
		}
	}
	if code, _, _ := s.do("POST", "/config/NtpServer?dry_run=true", `{"IpAddr":"10.0.0.1"}`); code != 409 {
		t.Errorf("dry run of a duplicate: %d; want 409", code)
	}
	if code, _, _ := s.do("POST", "/config/NtpServer?dry_run=maybe", `{"IpAddr":"10.0.0.3"}`); code != 400 {
		t.Errorf("dry_run=maybe: %d; want 400", code)
	}
	if !bytes.Equal(before, s.dump()) {
		t.Fatal("a dry run changed the store")
	}
	_, log, _ := s.do("GET", "/state/ConfigLogs", ``)
	if n := log["ObjCount"].(float64); n != 1 {
		t.Fatalf("config log has %v entries; dry runs must not add any", n)
	}
}

// sseClient reads commit events until it has want ids or stop is closed.
func readEvents(t *testing.T, url, lastID string, want int, stopAfter int) []uint64 {
	t.Helper()
	req, _ := http.NewRequest("GET", url, nil)
	if lastID != "" {
		req.Header.Set("Last-Event-ID", lastID)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	resp, err := http.DefaultClient.Do(req.WithContext(ctx))
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	if resp.StatusCode != 200 || resp.Header.Get("Content-Type") != "text/event-stream" {
		t.Fatalf("events: %d %s", resp.StatusCode, resp.Header.Get("Content-Type"))
	}
	var ids []uint64
	sc := bufio.NewScanner(resp.Body)
	sc.Buffer(make([]byte, 1<<20), 1<<22)
	var id uint64
	for sc.Scan() {
		line := sc.Text()
		switch {
		case strings.HasPrefix(line, "id: "):
			id, _ = strconv.ParseUint(line[4:], 10, 64)
		case strings.HasPrefix(line, "event: error"):
			t.Fatalf("error event after %v", ids)
		case strings.HasPrefix(line, "data: ") && id != 0:
			var rev engine.Revision
			if err := json.Unmarshal([]byte(line[6:]), &rev); err != nil || rev.Revision != id {
				t.Fatalf("event %d data: %v %q", id, err, line)
			}
			ids = append(ids, id)
			id = 0
			if len(ids) == want || len(ids) == stopAfter {
				return ids
			}
		}
	}
	t.Fatalf("stream ended after %d events: %v", len(ids), sc.Err())
	return nil
}

func TestEventFeedResumesWithoutLossOrRepeat(t *testing.T) {
	s := newTxnServer(t)
	start := s.eng.Revision()
	const n = 120
	var wg sync.WaitGroup
	wg.Add(1)
	go func() { // commits keep coming while the client reads and reconnects
		defer wg.Done()
		for i := range n {
			req, _ := http.NewRequest("POST", s.url+"/config/NtpServer", strings.NewReader(fmt.Sprintf(`{"IpAddr":"10.7.0.%d"}`, i+1)))
			resp, err := http.DefaultClient.Do(req)
			if err != nil {
				t.Error(err)
				return
			}
			resp.Body.Close()
		}
	}()
	url := s.url + "/events?since=" + strconv.FormatUint(start, 10)
	first := readEvents(t, url, "", n, 50)
	rest := readEvents(t, s.url+"/events", strconv.FormatUint(first[len(first)-1], 10), n-len(first), n)
	wg.Wait()
	all := append(first, rest...)
	if len(all) != n {
		t.Fatalf("got %d events, want %d", len(all), n)
	}
	for i, id := range all {
		if id != start+uint64(i)+1 {
			t.Fatalf("event %d is revision %d; want %d", i, id, start+uint64(i)+1)
		}
	}
}

// An EventSource reconnects to the URL it was opened with, ?since= and
// all, adding Last-Event-ID: the header, when sent, says where to resume,
// or every reconnect would replay from since again.
func TestEventFeedLastEventIDWinsOverSince(t *testing.T) {
	s := newTxnServer(t)
	start := s.eng.Revision()
	for i := range 4 {
		if code, body, _ := s.do("POST", "/config/NtpServer", fmt.Sprintf(`{"IpAddr":"10.8.0.%d"}`, i+1)); code != 201 {
			t.Fatalf("create: %d %v", code, body)
		}
	}
	rev := func(n uint64) string { return strconv.FormatUint(start+n, 10) }
	tests := []struct {
		name, query, lastID string
		first               uint64 // the first revision streamed, after start
	}{
		{"since alone", "?since=" + rev(0), "", 1},
		{"Last-Event-ID alone", "", rev(1), 2},
		{"reconnect: Last-Event-ID after since", "?since=" + rev(0), rev(2), 3},
		{"Last-Event-ID before since", "?since=" + rev(3), rev(1), 2},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			got := readEvents(t, s.url+"/events"+tc.query, tc.lastID, 1, 1)
			if got[0] != start+tc.first {
				t.Fatalf("first event is revision %d; want %d", got[0], start+tc.first)
			}
		})
	}
}

func TestEventFeedHeartbeatAndBadParams(t *testing.T) {
	s := newTxnServer(t)
	if code, _, _ := s.do("GET", "/events?since=abc", ``); code != 400 {
		t.Fatalf("since=abc: %d", code)
	}
	if code, _, _ := s.do("POST", "/events", ``); code != 405 {
		t.Fatalf("POST /events: %d", code)
	}
	resp, err := http.Get(s.url + "/events?heartbeat=1")
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	line, err := bufio.NewReader(resp.Body).ReadString('\n')
	if err != nil || line != ": heartbeat\n" {
		t.Fatalf("first line %q, %v; want a heartbeat", line, err)
	}
}

// The commit awaiting confirmation is readable (GET /revisions/pending), and
// a commit records which tool made it: cli for swmgr's CLI, rest otherwise.
func TestPendingConfirmationAndSource(t *testing.T) {
	s := newTxnServer(t)
	pending := func() map[string]any {
		t.Helper()
		code, body, _ := s.do("GET", "/revisions/pending", ``)
		if code != 200 {
			t.Fatalf("GET /revisions/pending: %d %v", code, body)
		}
		return body
	}
	if got := pending(); len(got) != 1 || got["Awaiting"] != false {
		t.Fatalf("nothing awaits yet: %v", got)
	}
	if code, _, _ := s.do("POST", "/revisions/pending", `{}`); code != 405 {
		t.Fatalf("POST /revisions/pending: %d, want 405", code)
	}
	record := func(rev float64) map[string]any {
		t.Helper()
		_, body, _ := s.do("GET", "/revisions/"+strconv.FormatFloat(rev, 'f', 0, 64), ``)
		return body
	}
	source := func(rev float64) any { t.Helper(); return record(rev)["Source"] }
	code, body, _ := s.do("POST", "/config/Vrf", `{"Vrf":"plain"}`)
	if code != 201 {
		t.Fatalf("create: %d %v", code, body)
	}
	_, list, _ := s.do("GET", "/revisions?Count=1", ``)
	newest := list["Objects"].([]any)[0].(map[string]any)["Object"].(map[string]any)["Revision"].(float64)
	if got := source(newest); got != "rest" {
		t.Errorf("a plain REST write's source: %v, want rest", got)
	}

	for i, ua := range []string{CLIUserAgent, CLIUserAgent + "/1.2", "swmgr-cli-not", "curl/8.0", AnsibleUserAgent, AnsibleUserAgent + "/1.0.0", "swmgr-ansiblex"} {
		_, cand, _ := s.do("POST", "/candidates", `{"Comment":"by `+ua+`"}`, "User-Agent", ua)
		id := cand["CandidateId"].(string)
		if code, body, _ := s.do("POST", "/candidates/"+id+"/config/Vrf", `{"Vrf":"v`+strconv.Itoa(i)+`"}`, "User-Agent", ua); code != 201 {
			t.Fatalf("stage: %d %v", code, body)
		}
		code, body, _ := s.do("POST", "/candidates/"+id+"/commit", `{"Comment":"c `+ua+`","Confirm":120}`, "User-Agent", ua)
		if code != 200 {
			t.Fatalf("commit with Confirm: %d %v", code, body)
		}
		rev := body["Revision"].(float64)
		want := "rest"
		switch ua {
		case CLIUserAgent, CLIUserAgent + "/1.2":
			want = "cli"
		case AnsibleUserAgent, AnsibleUserAgent + "/1.0.0":
			want = "ansible"
		}
		if got := source(rev); got != want {
			t.Errorf("User-Agent %q: source %v, want %s", ua, got, want)
		}
		got := pending()
		if got["Awaiting"] != true || got["Revision"] != rev || got["User"] != record(rev)["User"] || got["Comment"] != "c "+ua {
			t.Fatalf("pending after a confirmed commit: %v", got)
		}
		if body["ConfirmBy"] != got["ConfirmBy"] {
			t.Errorf("the commit answered ConfirmBy %v, /revisions/pending %v: want the one deadline the engine enforces", body["ConfirmBy"], got["ConfirmBy"])
		}
		if i == 0 {
			// As an older swmgr stored the wait (without User and Comment):
			// the answer is the same, from the revision record.
			if err := s.st.Update(func(tx store.Txn) error {
				var c map[string]any
				if err := json.Unmarshal(tx.Meta("confirm"), &c); err != nil || c["Comment"] != "c "+ua {
					t.Fatalf("stored wait %s (%v): want its Comment", tx.Meta("confirm"), err)
				}
				delete(c, "User")
				delete(c, "Comment")
				data, _ := json.Marshal(c)
				tx.SetMeta("confirm", data)
				return nil
			}); err != nil {
				t.Fatal(err)
			}
			if old := pending(); old["Comment"] != got["Comment"] || old["User"] != got["User"] || old["Revision"] != got["Revision"] || old["ConfirmBy"] != got["ConfirmBy"] {
				t.Fatalf("pending from an older stored wait: %v, want %v", old, got)
			}
		}
		if left := got["SecondsLeft"].(float64); left < 100 || left > 120 {
			t.Errorf("SecondsLeft %v, want about 120", left)
		}
		if by, err := time.Parse(time.RFC3339, got["ConfirmBy"].(string)); err != nil || by.Before(time.Now().Add(100*time.Second)) || by.After(time.Now().Add(121*time.Second)) {
			t.Errorf("ConfirmBy %v (%v), want about 2 minutes from now", got["ConfirmBy"], err)
		}
		if code, body, _ := s.do("POST", "/revisions/"+strconv.FormatFloat(rev, 'f', 0, 64)+"/confirm", ``); code != 200 {
			t.Fatalf("confirm: %d %v", code, body)
		}
		if got := pending(); got["Awaiting"] != false {
			t.Fatalf("pending after the confirmation: %v", got)
		}
	}
}

// A subscriber resuming from a revision whose record is no longer kept is
// told so in one error event for all the revisions it misses (not one per
// revision: after 100,000 commits, since=0 would get ~99,000), naming them,
// how many are kept and the revision the stream continues with, and then
// gets every kept revision in order, none missing or repeated.
func TestEventFeedReportsRevisionsNoLongerKept(t *testing.T) {
	s := newTxnServer(t)
	start := s.eng.Revision()
	const extra = 3
	n := history.Kept + extra
	var wg sync.WaitGroup
	for c := range 16 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := c; i < n; i += 16 {
				req, _ := http.NewRequest("POST", s.url+"/config/NtpServer", strings.NewReader(fmt.Sprintf(`{"IpAddr":"10.%d.%d.%d"}`, 8+i/65536, i/256%256, i%256)))
				resp, err := s.client.Do(req)
				if err != nil {
					t.Error(err)
					return
				}
				resp.Body.Close()
				if resp.StatusCode != http.StatusCreated {
					t.Errorf("create %d: %d", i, resp.StatusCode)
					return
				}
			}
		}()
	}
	wg.Wait()
	cur := s.eng.Revision()
	if cur < start+uint64(n) {
		t.Fatalf("revision %d after %d creates from %d", cur, n, start)
	}
	oldest := cur - history.Kept + 1
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	req, _ := http.NewRequestWithContext(ctx, "GET", s.url+"/events?since=0", nil)
	resp, err := s.client.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	sc := bufio.NewScanner(resp.Body)
	sc.Buffer(make([]byte, 1<<20), 1<<22)
	type event struct {
		kind, id, data string
	}
	var events []event
	var ev event
	for len(events) < history.Kept+1 && sc.Scan() {
		switch line := sc.Text(); {
		case line == "":
			if ev != (event{}) { // not a heartbeat
				events = append(events, ev)
			}
			ev = event{}
		case strings.HasPrefix(line, "event: "):
			ev.kind = line[len("event: "):]
		case strings.HasPrefix(line, "id: "):
			ev.id = line[len("id: "):]
		case strings.HasPrefix(line, "data: "):
			ev.data = line[len("data: "):]
		}
	}
	if len(events) < history.Kept+1 {
		t.Fatalf("the stream ended after %d events: %v", len(events), sc.Err())
	}
	gone := events[0]
	if gone.kind != "error" {
		t.Fatalf("first event %+.200v; want the error event saying revisions 1 to %d are no longer kept", gone, oldest-1)
	}
	var notice struct {
		Message                                  string
		FirstMissing, LastMissing, ContinuesWith uint64
	}
	if err := json.Unmarshal([]byte(gone.data), &notice); err != nil {
		t.Fatalf("error event data %q: %v", gone.data, err)
	}
	wantMsg := fmt.Sprintf("revisions 1 to %d are no longer kept (the last %d are); continuing with revision %d", oldest-1, history.Kept, oldest)
	if notice.Message != wantMsg || notice.FirstMissing != 1 || notice.LastMissing != oldest-1 || notice.ContinuesWith != oldest {
		t.Errorf("error event %s; want Message %q, FirstMissing 1, LastMissing %d, ContinuesWith %d", gone.data, wantMsg, oldest-1, oldest)
	}
	if strings.Contains(gone.data, "LastEventId") {
		t.Errorf("error event %s names LastEventId: clients take that as being dropped and reconnect", gone.data)
	}
	for i, ev := range events[1:] {
		want := strconv.FormatUint(oldest+uint64(i), 10)
		if ev.kind != "commit" || ev.id != want {
			t.Fatalf("event %d after the error: %s %s; want the commit of revision %s (every kept revision, in order, once)", i, ev.kind, ev.id, want)
		}
	}
}

// The change feed's notice of revisions no longer kept names one revision
// or a range, and where the stream continues; the oldest kept revision is
// 1 until more than history.Kept were made.
func TestGoneNotice(t *testing.T) {
	for _, tc := range []struct {
		first, next uint64
		want        string
	}{
		{1, 2, fmt.Sprintf("revision 1 is no longer kept (the last %d are); continuing with revision 2", history.Kept)},
		{1, 99001, fmt.Sprintf("revisions 1 to 99000 are no longer kept (the last %d are); continuing with revision 99001", history.Kept)},
		{7, 9, fmt.Sprintf("revisions 7 to 8 are no longer kept (the last %d are); continuing with revision 9", history.Kept)},
	} {
		got := goneNotice(tc.first, tc.next)
		if got["Message"] != tc.want || got["FirstMissing"] != tc.first || got["LastMissing"] != tc.next-1 || got["ContinuesWith"] != tc.next {
			t.Errorf("goneNotice(%d, %d) = %v; want Message %q, FirstMissing %d, LastMissing %d, ContinuesWith %d", tc.first, tc.next, got, tc.want, tc.first, tc.next-1, tc.next)
		}
	}
}

func TestSecondsLeftRoundsUp(t *testing.T) {
	now := time.Date(2026, 11, 24, 5, 0, 0, 0, time.UTC)
	for _, tc := range []struct {
		until time.Duration
		want  int64
	}{
		{120 * time.Second, 120},
		{119*time.Second + 999*time.Millisecond, 120},
		{time.Second, 1},
		{300 * time.Millisecond, 1}, // Confirm 1, read at once: time is left
		{time.Nanosecond, 1},
		{0, 0},
		{-5 * time.Second, 0}, // past: the rollback is under way
	} {
		if got := secondsLeft(now.Add(tc.until), now); got != tc.want {
			t.Errorf("secondsLeft with %v to go = %d, want %d", tc.until, got, tc.want)
		}
	}
}

// TestDecodeOptionsAnswersAlike: the same body always gets the same error,
// naming the first bad field and the accepted ones in name order.
func TestDecodeOptionsAnswersAlike(t *testing.T) {
	for _, tc := range []struct{ body, want string }{
		{`{"Zeta":1,"Alpha":2}`, `unknown field "Alpha"; this request takes Comment, Confirm, Force`},
		{`{"Force":"yes","Bogus":1}`, `unknown field "Bogus"; this request takes Comment, Confirm, Force`},
		{`{"Force":"yes","Confirm":"x"}`, `Confirm has the wrong type`},
	} {
		for range 20 {
			var (
				comment string
				confirm int64
				force   bool
			)
			r := httptest.NewRequest("POST", "/public/v1/candidates/x/commit", strings.NewReader(tc.body))
			err := decodeOptions(r, map[string]any{"Comment": &comment, "Confirm": &confirm, "Force": &force})
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Fatalf("%s: %v, want %q", tc.body, err, tc.want)
			}
		}
	}
}
