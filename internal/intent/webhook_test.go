package intent_test

import (
	"bytes"
	"fmt"
	"net"
	"net/http"
	"net/url"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/swmgr/swmgr/internal/intent/intenttest"
)

// The webhook's headers and bound, as git servers and docs/ztp.md name
// them.
const (
	webhookSecret  = "5f1c0e2a9b7d4c3e8a6f0b1d2c3e4f50"
	hubSignature   = "X-Hub-Signature-256"
	gitlabToken    = "X-Gitlab-Token"
	maxWebhookBody = 1 << 20
)

// webhook POSTs body to the switch's push webhook with headers (name,
// value pairs), answering the status and the body's fields.
func (s *sw) webhook(body []byte, headers ...string) (int, map[string]any) {
	s.t.Helper()
	return s.send("POST", "/intent/webhook", body, headers...)
}

// followRepository makes a switch follow repo's leaf1.json at main, polled
// every hour (a fetch sooner is the webhook's), and waits for commit to be
// applied.
func followRepository(t *testing.T, repo *intenttest.Repository, commit string) *sw {
	s := startSwitch(t)
	s.must("POST", "/config/IntentSource", fmt.Sprintf(`{"RepoURL":%q,"Path":"leaf1.json","TargetRevision":"main","Interval":3600,"ConfirmWait":0,"PublicKey":%q,"WebhookSecret":%q}`,
		"file://"+repo.Dir, repo.PublicKey(), webhookSecret))
	eventually(t, "the first commit applied", 20*time.Second, func() bool { return s.first("/state/IntentSources")["AppliedCommit"] == commit })
	return s
}

// TestWebhookFetchesAPush: a push's webhook signed with the WebhookSecret
// (GitHub's form, then GitLab's token) makes the switch fetch at once, an
// hour before its next poll; the commit is recorded as a push's. A webhook
// refused (no signature, a wrong one) or about another branch fetches
// nothing, a body too large is refused; the secret is never read back.
func TestWebhookFetchesAPush(t *testing.T) {
	repo := intenttest.NewRepository(t)
	first := repo.CommitSigned("leaf1.json", document(`{"VlanId":100}`))
	s := followRepository(t, repo, first)
	polls := s.first("/state/IntentSources")["Polls"]

	second := repo.CommitSigned("leaf1.json", document(`{"VlanId":200}`))
	push := intenttest.PushBody("refs/heads/main", first, second, "main")
	other := intenttest.PushBody("refs/heads/dev", first, second, "main")
	for _, tc := range []struct {
		name    string
		body    []byte
		headers []string
		status  int
	}{
		{"another branch", other, []string{hubSignature, intenttest.HubSignature(webhookSecret, other), "X-GitHub-Event", "push"}, http.StatusOK},
		{"GitHub's ping", push, []string{hubSignature, intenttest.HubSignature(webhookSecret, push), "X-GitHub-Event", "ping"}, http.StatusOK},
		// Four refusals: a fifth would lock the address out
		// (TestWebhookLockedOutAfterRefusals).
		{"no signature", push, nil, http.StatusForbidden},
		{"signed under another secret", push, []string{hubSignature, intenttest.HubSignature("not-the-webhook-secret", push)}, http.StatusForbidden},
		{"a signature of another body", push, []string{hubSignature, intenttest.HubSignature(webhookSecret, other)}, http.StatusForbidden},
		{"a wrong GitLab token", push, []string{gitlabToken, webhookSecret[:20]}, http.StatusForbidden},
	} {
		code, m := s.webhook(tc.body, tc.headers...)
		if code != tc.status {
			t.Fatalf("%s: %d %v, want %d", tc.name, code, m, tc.status)
		}
		if code == http.StatusForbidden && fmt.Sprint(m) != fmt.Sprint(map[string]any{"Result": m["Result"], "Error": m["Error"]}) {
			t.Fatalf("%s: %v", tc.name, m)
		}
	}
	// None of them asked for a fetch: a second later (the poller runs a
	// fetch at once when asked), nothing was fetched nor applied.
	time.Sleep(time.Second)
	st := s.first("/state/IntentSources")
	if st["Polls"] != polls || st["AppliedCommit"] != first || !sameVlans(s.vlans(), 100) {
		t.Fatalf("a refused or ignored webhook fetched: %v (polls before %v)", st, polls)
	}
	if st["WebhooksRefused"] != float64(4) || st["Webhooks"] != float64(2) || !strings.Contains(fmt.Sprint(st["LastWebhook"]), "ping") {
		t.Fatalf("the webhooks counted: %v", st)
	}

	code, m := s.webhook(push, hubSignature, intenttest.HubSignature(webhookSecret, push), "X-GitHub-Event", "push")
	if code != http.StatusAccepted {
		t.Fatalf("the push: %d %v", code, m)
	}
	eventually(t, "the pushed commit applied", 20*time.Second, func() bool { return s.first("/state/IntentSources")["AppliedCommit"] == second })
	st = s.first("/state/IntentSources")
	rev := s.must("GET", fmt.Sprintf("/revisions/%v", st["AppliedRevision"]), "")
	if rev["Source"] != "intent" || !strings.Contains(fmt.Sprint(rev["Comment"]), "push webhook from 127.0.0.1") || !strings.Contains(fmt.Sprint(rev["Comment"]), second[:12]) {
		t.Fatalf("the pushed commit's revision: %v", rev)
	}
	logged := fmt.Sprint(s.must("GET", "/state/ConfigLogs", ""))
	if !strings.Contains(logged, "push webhook from 127.0.0.1") {
		t.Fatalf("the config log does not say a push fetched it: %s", logged)
	}

	// A body too large is refused before its signature is looked at.
	huge := bytes.Repeat([]byte(" "), maxWebhookBody+1)
	if code, m := s.webhook(huge, hubSignature, intenttest.HubSignature(webhookSecret, huge)); code != http.StatusRequestEntityTooLarge {
		t.Fatalf("a body too large: %d %v", code, m)
	}

	// GitLab's token.
	third := repo.CommitSigned("leaf1.json", document(`{"VlanId":300}`))
	gitlab := []byte(fmt.Sprintf(`{"object_kind":"push","ref":"refs/heads/main","checkout_sha":%q,"project":{"default_branch":"main"}}`, third))
	if code, m := s.webhook(gitlab, gitlabToken, webhookSecret, "X-Gitlab-Event", "Push Hook"); code != http.StatusAccepted {
		t.Fatalf("GitLab's push: %d %v", code, m)
	}
	eventually(t, "GitLab's pushed commit applied", 20*time.Second, func() bool { return sameVlans(s.vlans(), 300) })

	// The secret is write-only: never read back, nor in the config log.
	for _, path := range []string{"/config/IntentSources", "/state/IntentSources", "/state/ConfigLogs"} {
		if got := fmt.Sprint(s.must("GET", path, "")); strings.Contains(got, webhookSecret) {
			t.Fatalf("GET %s holds the webhook secret: %s", path, got)
		}
	}
}

// TestWebhookCoalescesABurst: twenty pushes at once make at most two
// fetches (one under way, one queued behind it), and the commit pushed is
// applied.
func TestWebhookCoalescesABurst(t *testing.T) {
	repo := intenttest.NewRepository(t)
	first := repo.CommitSigned("leaf1.json", document(`{"VlanId":100}`))
	s := followRepository(t, repo, first)
	polls := s.first("/state/IntentSources")["Polls"].(float64)
	second := repo.CommitSigned("leaf1.json", document(`{"VlanId":200}`))
	push := intenttest.PushBody("refs/heads/main", first, second, "main")
	sig := intenttest.HubSignature(webhookSecret, push)
	const burst = 20
	var wg sync.WaitGroup
	codes := make(chan int, burst)
	for range burst {
		wg.Add(1)
		go func() {
			defer wg.Done()
			code, _ := s.webhook(push, hubSignature, sig)
			codes <- code
		}()
	}
	wg.Wait()
	close(codes)
	accepted := 0
	for code := range codes {
		switch code {
		case http.StatusAccepted:
			accepted++
		case http.StatusTooManyRequests: // more at once from one address than the throttle lets through
		default:
			t.Fatalf("a push of the burst: %d", code)
		}
	}
	if accepted == 0 {
		t.Fatal("no push of the burst was accepted")
	}
	eventually(t, "the pushed commit applied", 20*time.Second, func() bool { return s.first("/state/IntentSources")["AppliedCommit"] == second })
	// Each fetch of a queued push starts at once: a second later, every
	// fetch the burst asked for has run.
	time.Sleep(time.Second)
	fetched := s.first("/state/IntentSources")["Polls"].(float64) - polls
	t.Logf("%d pushes at once (%d accepted): %v fetches", burst, accepted, fetched)
	if fetched < 1 || fetched > 2 {
		t.Fatalf("%d pushes at once (%d accepted) made %v fetches, want 1 or 2", burst, accepted, fetched)
	}
}

// TestWebhookLockedOutAfterRefusals: refused webhooks from an address
// count as failed logins do: after five, the address is refused (429 with
// Retry-After) even with the right signature, and nothing is fetched.
func TestWebhookLockedOutAfterRefusals(t *testing.T) {
	repo := intenttest.NewRepository(t)
	first := repo.CommitSigned("leaf1.json", document(`{"VlanId":100}`))
	s := followRepository(t, repo, first)
	second := repo.CommitSigned("leaf1.json", document(`{"VlanId":200}`))
	push := intenttest.PushBody("refs/heads/main", first, second, "main")
	for i := range 5 {
		if code, m := s.webhook(push, hubSignature, intenttest.HubSignature(fmt.Sprintf("guess-%d-0123456789", i), push)); code != http.StatusForbidden {
			t.Fatalf("guess %d: %d %v", i, code, m)
		}
	}
	req, _ := http.NewRequest("POST", s.url+"/intent/webhook", bytes.NewReader(push))
	req.Header.Set(hubSignature, intenttest.HubSignature(webhookSecret, push))
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusTooManyRequests || resp.Header.Get("Retry-After") == "" {
		t.Fatalf("the right signature after five guesses: %d, Retry-After %q", resp.StatusCode, resp.Header.Get("Retry-After"))
	}
	if st := s.first("/state/IntentSources"); st["AppliedCommit"] != first || st["Webhooks"] != float64(0) {
		t.Fatalf("a locked-out webhook was served: %v", st)
	}
}

// TestWebhookBoundsBodiesUnderWay: sixteen webhooks whose bodies are
// still arriving (four addresses, four each: under the throttle's five
// per address) hold every slot; another address is then answered 503 at
// once rather than have its body read too. Once they go, webhooks are
// read again.
func TestWebhookBoundsBodiesUnderWay(t *testing.T) {
	s := startSwitch(t)
	u, err := url.Parse(s.url)
	if err != nil {
		t.Fatal(err)
	}
	var slow []net.Conn
	defer func() {
		for _, c := range slow {
			c.Close()
		}
	}()
	for i := range 16 {
		d := net.Dialer{LocalAddr: &net.TCPAddr{IP: net.IPv4(127, 0, 0, byte(2+i/4))}}
		c, err := d.Dial("tcp", u.Host)
		if err != nil {
			t.Fatal(err)
		}
		slow = append(slow, c)
		fmt.Fprintf(c, "POST /public/v1/intent/webhook HTTP/1.1\r\nHost: %s\r\nContent-Type: application/json\r\nContent-Length: 100\r\n\r\n{", u.Host)
	}
	// from addresses of their own each time (a refusal counts against its
	// address): 503 once the sixteen are being read.
	try := 0
	status := func() int {
		try++
		d := net.Dialer{LocalAddr: &net.TCPAddr{IP: net.IPv4(127, 0, 1, byte(try))}}
		client := &http.Client{Transport: &http.Transport{DialContext: d.DialContext}}
		defer client.CloseIdleConnections()
		resp, err := client.Post(s.url+"/intent/webhook", "application/json", strings.NewReader("{}"))
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		return resp.StatusCode
	}
	eventually(t, "503 while sixteen bodies are under way", 5*time.Second, func() bool { return status() == http.StatusServiceUnavailable })
	for _, c := range slow {
		c.Close()
	}
	slow = nil
	eventually(t, "webhooks read again", 5*time.Second, func() bool { return status() == http.StatusForbidden })
}
