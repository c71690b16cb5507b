package intent_test

import (
	"bufio"
	"bytes"
	"context"
	"crypto/ed25519"
	"crypto/rand"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/swmgr/swmgr/internal/model"
	"github.com/swmgr/swmgr/internal/testserver"
)

// intentServer serves one signed document at /intent.json (and its
// signature at /intent.json.sig) to requests bearing the token.
type intentServer struct {
	*httptest.Server
	key   ed25519.PrivateKey
	token string

	mu       sync.Mutex
	doc, sig []byte
	healthy  bool // /health answers 200, else 503
}

func newIntentServer(t *testing.T) *intentServer {
	_, key, err := ed25519.GenerateKey(rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	s := &intentServer{key: key, token: "intent-token-1"}
	s.Server = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		s.mu.Lock()
		doc, sig, healthy := s.doc, s.sig, s.healthy
		s.mu.Unlock()
		if r.URL.Path == "/health" { // another service's: no token
			if !healthy {
				http.Error(w, "not yet", http.StatusServiceUnavailable)
			}
			return
		}
		if r.Header.Get("Authorization") != "Bearer "+s.token {
			http.Error(w, "no", http.StatusUnauthorized)
			return
		}
		switch r.URL.Path {
		case "/intent.json":
			w.Write(doc)
		case "/intent.json.sig":
			w.Write(sig)
		default:
			http.NotFound(w, r)
		}
	}))
	t.Cleanup(s.Close)
	return s
}

func (s *intentServer) publicKey() string {
	return base64.StdEncoding.EncodeToString(s.key.Public().(ed25519.PublicKey))
}

// serve publishes doc signed by the server's key.
func (s *intentServer) serve(doc []byte) { s.serveSigned(doc, ed25519.Sign(s.key, doc)) }

func (s *intentServer) serveSigned(doc, sig []byte) {
	s.mu.Lock()
	s.doc, s.sig = doc, []byte(base64.StdEncoding.EncodeToString(sig))
	s.mu.Unlock()
}

// document is a saved configuration file holding the VLANs given.
func document(vlans ...string) []byte {
	return fmt.Appendf(nil, `{"SchemaVersion":%d,"ConfigData":{"Vlan":[%s]}}`, model.Builtin().SchemaVersion(), strings.Join(vlans, ","))
}

// sw is the switch under test, reached over its REST API.
type sw struct {
	t   *testing.T
	url string
}

func startSwitch(t *testing.T) *sw { return startSwitchIn(t, "") }

// startSwitchIn starts the switch with its data directory in dir ("": one
// of its own).
func startSwitchIn(t *testing.T, dir string) *sw {
	s, err := testserver.Start(dir, testserver.Options{Ports: 2})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(s.Close)
	return &sw{t: t, url: s.URL + "/public/v1"}
}

func (s *sw) do(method, path, body string) (int, map[string]any) {
	s.t.Helper()
	return s.send(method, path, []byte(body))
}

// send is do with a body of bytes and headers (name, value pairs).
func (s *sw) send(method, path string, body []byte, headers ...string) (int, map[string]any) {
	s.t.Helper()
	req, err := http.NewRequest(method, s.url+path, bytes.NewReader(body))
	if err != nil {
		s.t.Fatal(err)
	}
	req.Header.Set("Content-Type", "application/json")
	for i := 0; i+1 < len(headers); i += 2 {
		req.Header.Set(headers[i], headers[i+1])
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		s.t.Fatal(err)
	}
	defer resp.Body.Close()
	data, _ := io.ReadAll(resp.Body)
	var m map[string]any
	json.Unmarshal(data, &m)
	if m == nil {
		m = map[string]any{"raw": string(data)}
	}
	return resp.StatusCode, m
}

// stateEvents follows the change feed (GET /events) from now until the
// test ends and hands over the data of its `event: state` events.
func (s *sw) stateEvents() <-chan string {
	s.t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	s.t.Cleanup(cancel)
	req, _ := http.NewRequestWithContext(ctx, "GET", s.url+"/events", nil)
	resp, err := http.DefaultClient.Do(req)
	if err != nil || resp.StatusCode != 200 {
		s.t.Fatalf("GET /events: %v %v", resp, err)
	}
	out := make(chan string, 16)
	go func() {
		defer resp.Body.Close()
		sc := bufio.NewScanner(resp.Body)
		sc.Buffer(make([]byte, 1<<20), 1<<20)
		state := false
		for sc.Scan() {
			line := sc.Text()
			switch {
			case line == "event: state":
				state = true
			case strings.HasPrefix(line, "data: ") && state:
				select {
				case out <- strings.TrimPrefix(line, "data: "):
				default:
				}
				state = false
			case line == "":
				state = false
			}
		}
	}()
	return out
}

func (s *sw) must(method, path, body string) map[string]any {
	s.t.Helper()
	code, m := s.do(method, path, body)
	if code/100 != 2 {
		s.t.Fatalf("%s %s %s: %d %v", method, path, body, code, m)
	}
	return m
}

// state reads a state object's fields.
func (s *sw) state(path string) map[string]any {
	s.t.Helper()
	m := s.must("GET", path, "")
	o, _ := m["Object"].(map[string]any)
	return o
}

// first is the first object of a list.
func (s *sw) first(path string) map[string]any {
	s.t.Helper()
	objs, _ := s.must("GET", path, "")["Objects"].([]any)
	if len(objs) == 0 {
		s.t.Fatalf("GET %s: no objects", path)
	}
	return objs[0].(map[string]any)["Object"].(map[string]any)
}

// vlans are the running VLAN ids.
func (s *sw) vlans() []float64 {
	s.t.Helper()
	m := s.must("GET", "/config/Vlans", "")
	var ids []float64
	objs, _ := m["Objects"].([]any)
	for _, o := range objs {
		ids = append(ids, o.(map[string]any)["Object"].(map[string]any)["VlanId"].(float64))
	}
	return ids
}

func (s *sw) revision() float64 {
	s.t.Helper()
	return s.state("/state/SystemParam")["RunningRevision"].(float64)
}

// eventually waits (generously: the machine is shared) until cond holds.
func eventually(t *testing.T, what string, within time.Duration, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(within)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("not within %v: %s", within, what)
		}
		time.Sleep(100 * time.Millisecond)
	}
}

func sameVlans(got []float64, want ...float64) bool {
	if len(got) != len(want) {
		return false
	}
	for i := range got {
		if got[i] != want[i] {
			return false
		}
	}
	return true
}

// TestIntentFollowsDriftAndReverts: a signed intent is applied as a
// commit of source intent; a change of the document lands at the next
// poll; an out-of-band change shows as drift within seconds, is kept under
// Policy report and reverted at the next poll under Policy revert.
func TestIntentFollowsDriftAndReverts(t *testing.T) {
	src := newIntentServer(t)
	src.serve(document(`{"VlanId":100,"Description":"intent one"}`))
	s := startSwitch(t)
	s.must("POST", "/config/IntentSource", fmt.Sprintf(`{"URL":%q,"Interval":5,"Password":%q,"PublicKey":%q}`, src.URL+"/intent.json", src.token, src.publicKey()))
	// The IntentSource's commit makes the first poll at once.
	eventually(t, "the intent applied", 10*time.Second, func() bool { return sameVlans(s.vlans(), 100) })
	st := s.first("/state/IntentSources")
	if st["Verified"] != "signature" || st["LastError"] != "" || st["AppliedRevision"].(float64) == 0 {
		t.Fatalf("IntentSource state: %v", st)
	}
	rev := s.must("GET", fmt.Sprintf("/revisions/%v", st["AppliedRevision"]), "")
	if rev["Source"] != "intent" || rev["User"] != "intent" {
		t.Fatalf("the intent's commit: %v", rev)
	}
	// Confirmed by its default health check (the intent's URL answered
	// again after the commit): nothing awaits confirmation.
	eventually(t, "the intent's commit confirmed", 10*time.Second, func() bool {
		return s.must("GET", "/revisions/pending", "")["Awaiting"] == false
	})
	if got := s.first("/config/IntentSources"); got["Password"] != "" {
		t.Fatalf("the token is read back: %v", got)
	}

	// A change of the document lands within one poll interval (5 s; the
	// wait is generous).
	src.serve(document(`{"VlanId":200}`))
	eventually(t, "the changed intent applied", 20*time.Second, func() bool { return sameVlans(s.vlans(), 200) })
	eventually(t, "no drift after the intent's commit", 5*time.Second, func() bool {
		d := s.state("/state/Drift")
		return d["Following"] == true && d["InDrift"] == false
	})

	// Out of band: drift within 5 s, kept under Policy report, and on the
	// change feed as a change of DriftState.
	events := s.stateEvents()
	s.must("POST", "/config/Vlan", `{"VlanId":300}`)
	select {
	case ev := <-events:
		if !strings.Contains(ev, `"Kind":"DriftState"`) || !strings.Contains(ev, `"InDrift":true`) || !strings.Contains(ev, "extra Vlan VlanId=300") {
			t.Errorf("the feed's state event: %s", ev)
		}
	case <-time.After(10 * time.Second):
		t.Errorf("no DriftState event on the change feed within 10 s of the drift")
	}
	var d map[string]any
	eventually(t, "drift shown", 5*time.Second, func() bool { d = s.state("/state/Drift"); return d["InDrift"] == true })
	if d["Differences"].(float64) != 1 || d["Since"] == "" || !strings.Contains(fmt.Sprint(d["Objects"]), "extra Vlan VlanId=300") {
		t.Fatalf("DriftState: %v", d)
	}
	s.must("POST", "/action/IntentFetch", `{}`)
	if got := s.vlans(); !sameVlans(got, 200, 300) {
		t.Fatalf("Policy report changed the configuration: VLANs %v", got)
	}

	// Policy revert: the next poll applies the intent again.
	s.must("PATCH", "/config/IntentSource", `{"Name":"default","Policy":"revert"}`)
	eventually(t, "reverted", 20*time.Second, func() bool { return sameVlans(s.vlans(), 200) })
	s.must("PATCH", "/config/Vlan", `{"VlanId":200,"Description":"changed by hand"}`)
	eventually(t, "drift shown", 5*time.Second, func() bool {
		d = s.state("/state/Drift")
		return d["InDrift"] == true
	})
	if !strings.Contains(fmt.Sprint(d["Objects"]), `different Vlan VlanId=200: Description "changed by hand" -> ""`) {
		t.Fatalf("DriftState: %v", d)
	}
	eventually(t, "reverted at the next poll", 20*time.Second, func() bool {
		d = s.state("/state/Drift")
		return d["InDrift"] == false
	})
}

// TestIntentCommitAwaitsItsHealthCheck: an intent's commit awaits
// confirmation; while its health check fails it is rolled back at
// ConfirmWait's end, with the reason in the state, and the next poll
// applies it again; once the check passes the commit is confirmed
// (nothing awaits confirmation, the intent stays).
func TestIntentCommitAwaitsItsHealthCheck(t *testing.T) {
	src := newIntentServer(t)
	src.serve(document(`{"VlanId":100}`))
	s := startSwitch(t)
	s.must("POST", "/config/IntentSource", fmt.Sprintf(`{"URL":%q,"Interval":3600,"Password":%q,"PublicKey":%q,"ConfirmWait":2,"HealthURL":%q}`,
		src.URL+"/intent.json", src.token, src.publicKey(), src.URL+"/health"))
	eventually(t, "the intent applied, awaiting confirmation", 10*time.Second, func() bool {
		p := s.must("GET", "/revisions/pending", "")
		return p["Awaiting"] == true && p["User"] == "intent" && sameVlans(s.vlans(), 100)
	})
	eventually(t, "rolled back at the deadline", 10*time.Second, func() bool {
		return sameVlans(s.vlans()) && s.first("/state/IntentSources")["LastError"] != ""
	})
	st := s.first("/state/IntentSources")
	if msg := fmt.Sprint(st["LastError"]); !strings.Contains(msg, "the health check "+src.URL+"/health did not answer within 2s") || !strings.Contains(msg, "rolled back") {
		t.Errorf("LastError %q, want the health check named and the rollback said", msg)
	}

	src.mu.Lock()
	src.healthy = true
	src.mu.Unlock()
	s.must("POST", "/action/IntentFetch", `{}`)
	if p := s.must("GET", "/revisions/pending", ""); p["Awaiting"] == true || !sameVlans(s.vlans(), 100) {
		t.Fatalf("after a passing health check: pending %v, VLANs %v; want confirmed, [100]", p, s.vlans())
	}
	if st := s.first("/state/IntentSources"); st["LastError"] != "" || st["AppliedRevision"].(float64) == 0 {
		t.Errorf("IntentSource state: %v", st)
	}
}

// TestIntentRefusesHostileDocuments: each document is refused with its
// reason in the state, and nothing changes.
func TestIntentRefusesHostileDocuments(t *testing.T) {
	src := newIntentServer(t)
	src.serve(document(`{"VlanId":100}`))
	s := startSwitch(t)
	s.must("POST", "/config/IntentSource", fmt.Sprintf(`{"URL":%q,"Interval":3600,"Password":%q,"PublicKey":%q}`, src.URL+"/intent.json", src.token, src.publicKey()))
	eventually(t, "the intent applied", 10*time.Second, func() bool { return sameVlans(s.vlans(), 100) })
	_, other, _ := ed25519.GenerateKey(rand.Reader)
	deep := fmt.Appendf(nil, `{"SchemaVersion":%d,"ConfigData":{"Vlan":[{"VlanId":1,"Description":%s%s}]}}`, model.Builtin().SchemaVersion(),
		strings.Repeat("[", 100000), strings.Repeat("]", 100000))
	tests := []struct {
		name, why string
		doc, sig  []byte
	}{
		{"signed by another key", "bad signature", document(`{"VlanId":400}`), ed25519.Sign(other, document(`{"VlanId":400}`))},
		{"too large", "larger than", bytes.Repeat([]byte(" "), 16<<20+1), nil},
		{"too deep", "not a valid configuration", deep, nil},
		{"control characters", "Description", document(`{"VlanId":400,"Description":"a\u0007b"}`), nil},
		{"accounts", "holds User objects", fmt.Appendf(nil, `{"SchemaVersion":%d,"ConfigData":{"User":[{"Name":"evil","Group":"admin"}]}}`, model.Builtin().SchemaVersion()), nil},
		{"its own source", "holds IntentSource objects", fmt.Appendf(nil, `{"SchemaVersion":%d,"ConfigData":{"IntentSource":[{"URL":"http://192.0.2.1/x","AllowUnsigned":true}]}}`, model.Builtin().SchemaVersion()), nil},
		{"unknown kind", "does not have", fmt.Appendf(nil, `{"SchemaVersion":%d,"ConfigData":{"Bogus":[{}]}}`, model.Builtin().SchemaVersion()), nil},
		{"not JSON", "not a valid configuration", []byte("\x00\x01garbage"), nil},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			s.t = t
			before := s.revision()
			if tc.sig != nil {
				src.serveSigned(tc.doc, tc.sig)
			} else {
				src.serve(tc.doc)
			}
			code, m := s.do("POST", "/action/IntentFetch", `{}`)
			if code != http.StatusBadGateway || !strings.Contains(fmt.Sprint(m), tc.why) {
				t.Fatalf("IntentFetch: %d %v, want 502 saying %q", code, m, tc.why)
			}
			st := s.first("/state/IntentSources")
			if !strings.Contains(st["LastError"].(string), tc.why) {
				t.Fatalf("LastError %q does not say %q", st["LastError"], tc.why)
			}
			if after := s.revision(); after != before || !sameVlans(s.vlans(), 100) {
				t.Fatalf("a refused intent changed the switch: revision %v -> %v, VLANs %v", before, after, s.vlans())
			}
		})
	}
}

// TestCheckCompliance: the difference between the running configuration
// and a document, in Golden Config's shape, with nothing changed.
func TestCheckCompliance(t *testing.T) {
	s := startSwitch(t)
	s.must("POST", "/config/Vlan", `{"VlanId":10}`)
	s.must("POST", "/config/Vlan", `{"VlanId":20,"Description":"old"}`)
	before := s.revision()
	doc := document(`{"VlanId":20,"Description":"new"}`, `{"VlanId":30}`)
	got := s.must("POST", "/action/CheckCompliance", fmt.Sprintf(`{"Document":%s}`, doc))
	if s.revision() != before {
		t.Fatal("CheckCompliance changed the configuration")
	}
	var c struct {
		Compliant bool `json:"compliant"`
		Missing   []struct {
			Kind, Key string
			Object    map[string]any
		} `json:"missing"`
		Extra []struct{ Kind, Key string } `json:"extra"`
		Diff  []struct {
			Kind, Key string
			Fields    []struct {
				Field             string
				Running, Intended any
			}
		} `json:"different"`
	}
	raw, _ := json.Marshal(got)
	if err := json.Unmarshal(raw, &c); err != nil {
		t.Fatal(err)
	}
	if c.Compliant || len(c.Missing) != 1 || c.Missing[0].Key != "VlanId=30" || c.Missing[0].Object["VlanId"] != float64(30) ||
		len(c.Extra) != 1 || c.Extra[0].Key != "VlanId=10" ||
		len(c.Diff) != 1 || c.Diff[0].Key != "VlanId=20" || len(c.Diff[0].Fields) != 1 ||
		c.Diff[0].Fields[0].Field != "Description" || c.Diff[0].Fields[0].Running != "old" || c.Diff[0].Fields[0].Intended != "new" {
		t.Fatalf("compliance: %s", raw)
	}
	same := document(`{"VlanId":10}`, `{"VlanId":20,"Description":"old"}`)
	got = s.must("POST", "/action/CheckCompliance?dry_run=true", fmt.Sprintf(`{"Document":%s}`, same))
	if got["compliant"] != true {
		t.Fatalf("the running configuration's own document: %v", got)
	}
	code, m := s.do("POST", "/action/CheckCompliance", `{"Document":{"ConfigData":{"Vlan":[{"VlanId":"x"}]}}}`)
	if code != http.StatusBadRequest {
		t.Fatalf("a document that is not valid: %d %v", code, m)
	}
}
