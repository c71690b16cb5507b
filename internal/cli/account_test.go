package cli

import (
	"bytes"
	"encoding/json"
	"io"
	"net/http"
	"strings"
	"sync"
	"testing"

	"github.com/swmgr/swmgr/internal/model"
	"github.com/swmgr/swmgr/internal/testserver"
)

// recordingServer is a real server stack that keeps the bodies of the
// command records it is sent.
func recordingServer(t *testing.T) (*testserver.Server, func() []map[string]any) {
	t.Helper()
	var mu sync.Mutex
	var bodies []map[string]any
	action := ""
	srv, err := testserver.Start("", testserver.Options{Ports: 4, Wrap: func(h http.Handler) http.Handler {
		return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			if action != "" && r.Method == http.MethodPost && strings.HasSuffix(r.URL.Path, "/action/"+action) {
				b, _ := io.ReadAll(r.Body)
				var m map[string]any
				json.Unmarshal(b, &m)
				mu.Lock()
				bodies = append(bodies, m)
				mu.Unlock()
				r.Body = io.NopCloser(bytes.NewReader(b))
			}
			h.ServeHTTP(w, r)
		})
	}})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(srv.Close)
	k := model.Builtin().CommandAction()
	if k == nil {
		t.Fatal("the model declares no action that records commands")
	}
	action = k.Name
	return srv, func() []map[string]any {
		mu.Lock()
		defer mu.Unlock()
		return append([]map[string]any(nil), bodies...)
	}
}

// TestCommandRecordsOfASession: every line a session runs (blank lines
// aside) is sent, in order, with its context, the session's id and its
// number; a secret value typed on a line is masked before it leaves.
func TestCommandRecordsOfASession(t *testing.T) {
	srv, records := recordingServer(t)
	out, err := run(t, srv, "where\n\nenable\nconfig\ntacacs server 192.0.2.9\nsecret \"typed key-1\"\nexit\nshow running-config | include tacacs\n")
	if err != nil {
		t.Fatalf("%v\n%s", err, out)
	}
	if strings.Contains(out, "command accounting") {
		t.Errorf("a record was not taken:\n%s", out)
	}
	want := []struct{ line, where string }{
		{"where", ""}, {"enable", ""}, {"config", "enable"}, {"tacacs server 192.0.2.9", "enable config"},
		{"secret ********", "enable config tacacs server 192.0.2.9"}, {"exit", "enable config tacacs server 192.0.2.9"},
		{"show running-config | include tacacs", "enable config"},
	}
	got := records()
	if len(got) != len(want) {
		t.Fatalf("%d records, want %d: %v", len(got), len(want), got)
	}
	session := got[0]["Session"]
	for i, w := range want {
		r := got[i]
		if r["Command"] != w.line || r["Context"] != w.where || r["Session"] != session || r["Seq"] != float64(i+1) {
			t.Errorf("record %d: %v, want %q in %q, number %d of session %v", i, r, w.line, w.where, i+1, session)
		}
	}
	if b, _ := json.Marshal(got); bytes.Contains(b, []byte("key-1")) {
		t.Errorf("the secret left the CLI: %s", b)
	}
}

// TestCommandRecordsRefusedAreToldOnce: with more records than are let
// through (the CLI's own bound of records waiting, or the server's per
// user, whichever a flood meets first) the commands still run, and the
// session says once that records were not taken.
func TestCommandRecordsRefusedAreToldOnce(t *testing.T) {
	srv, _ := recordingServer(t)
	out, err := run(t, srv, strings.Repeat("where\n", 400))
	if err != nil {
		t.Fatalf("%v\n%s", err, out)
	}
	if n := strings.Count(out, "cmd: "); n != 400 {
		t.Errorf("%d of 400 commands ran", n)
	}
	if n := strings.Count(out, "% command accounting: a record of this session's commands was not taken ("); n != 1 {
		t.Errorf("the refusal is told %d times, want once:\n%s", n, out[max(0, len(out)-2000):])
	}
	for _, line := range strings.Split(out, "\n") {
		if n := len([]rune(line)); n > 120 {
			t.Errorf("a line of %d columns, past the CLI's 120: %q", n, line)
		}
	}
}
