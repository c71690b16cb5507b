package test

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/swmgr/swmgr/internal/intent/intenttest"
)

// TestIntentWebhookThroughTheBinary: the real binary follows a git
// repository polled every hour; a new commit pushed and its webhook POSTed
// with the right HMAC (no login) is applied at once, long before the next
// poll; a webhook with a wrong signature is refused with 403 and changes
// nothing. The WebhookSecret is in no read, in the config log, the log nor
// any file of the data directory.
func TestIntentWebhookThroughTheBinary(t *testing.T) {
	const secret = "c0ffee0123456789-push-webhook-secret"
	repo := intenttest.NewRepository(t)
	first := repo.CommitSigned("fabric/leaf1.json", ztpDocument(100))
	dir := t.TempDir()
	s := startServer(t, dir)
	s.expect(t, 201, "POST", "/config/IntentSource", fmt.Sprintf(`{"RepoURL":%q,"Path":"fabric/leaf1.json","TargetRevision":"main","Interval":3600,"PublicKey":%q,"WebhookSecret":%q}`,
		"file://"+repo.Dir, repo.PublicKey(), secret))
	state := func() map[string]any {
		t.Helper()
		objs := s.listAll(t, "/state/IntentSources", 10)
		if len(objs) != 1 {
			t.Fatalf("IntentSource state: %v", objs)
		}
		st, _ := objs[0]["Object"].(map[string]any)
		return st
	}
	awaitApplied := func(commit string) {
		t.Helper()
		var st map[string]any
		for deadline := time.Now().Add(30 * time.Second); time.Now().Before(deadline); time.Sleep(20 * time.Millisecond) {
			if st = state(); st["AppliedCommit"] == commit {
				return
			}
		}
		t.Fatalf("commit %s not applied within 30 s: %v", commit, st)
	}
	awaitApplied(first)
	polls := state()["Polls"]

	second := repo.CommitSigned("fabric/leaf1.json", ztpDocument(200))
	push := string(intenttest.PushBody("refs/heads/main", first, second, "main"))
	wrong := s.do(t, "POST", "/intent/webhook", push, "X-Hub-Signature-256", intenttest.HubSignature("not-"+secret, []byte(push)), "X-GitHub-Event", "push")
	if wrong.code != 403 || strings.Contains(string(wrong.raw), "HMAC") {
		t.Fatalf("a wrong signature: %v", wrong)
	}
	// The poller fetches at once when asked: a second later, nothing was.
	time.Sleep(time.Second)
	if st := state(); st["Polls"] != polls || st["AppliedCommit"] != first || st["WebhooksRefused"] != float64(1) {
		t.Fatalf("after a wrong signature: %v (polls before: %v)", st, polls)
	}

	sent := time.Now()
	ok := s.do(t, "POST", "/intent/webhook", push, "X-Hub-Signature-256", intenttest.HubSignature(secret, []byte(push)), "X-GitHub-Event", "push")
	if ok.code != 202 {
		t.Fatalf("the push: %v", ok)
	}
	awaitApplied(second)
	t.Logf("a pushed commit applied and confirmed %v after its webhook (Interval 3600 s)", time.Since(sent).Round(time.Millisecond))
	st := state()
	if next, err := time.Parse(time.RFC3339Nano, fmt.Sprint(st["NextPollAt"])); err != nil || time.Until(next) < 30*time.Minute {
		t.Fatalf("the next poll is not an hour away: %v", st)
	}
	if v := s.do(t, "GET", "/config/Vlan?VlanId=200", ""); v.code != 200 {
		t.Fatalf("the pushed commit's VLAN: %v", v)
	}
	rev := s.do(t, "GET", fmt.Sprintf("/revisions/%v", st["AppliedRevision"]), "")
	if rev.str("Source") != "intent" || !strings.Contains(rev.str("Comment"), "push webhook") {
		t.Fatalf("the pushed commit's revision: %v", rev)
	}

	// The secret: never read back, logged, nor in clear in a file.
	for _, path := range []string{"/config/IntentSources", "/state/IntentSources", "/state/ConfigLogs"} {
		if r := s.do(t, "GET", path, ""); strings.Contains(string(r.raw), secret) {
			t.Fatalf("GET %s holds the webhook secret", path)
		}
	}
	if strings.Contains(s.logs.String(), secret) {
		t.Fatal("the log holds the webhook secret")
	}
	filepath.WalkDir(dir, func(p string, d os.DirEntry, err error) error {
		if err == nil && d.Type().IsRegular() {
			if b, err := os.ReadFile(p); err == nil && strings.Contains(string(b), secret) {
				t.Errorf("%s holds the webhook secret in clear", p)
			}
		}
		return nil
	})
}
