package intent

import (
	"net/http"
	"strings"
	"testing"

	"github.com/swmgr/swmgr/internal/intent/intenttest"
)

// TestVerifyWebhook: the forms git servers authenticate a webhook with,
// right and wrong: only a signature over the very body under the secret,
// or GitLab's token equal to the secret, passes; the reason of a refusal
// never holds the secret.
func TestVerifyWebhook(t *testing.T) {
	const secret = "0123456789abcdef-webhook"
	body := intenttest.PushBody("refs/heads/main", strings.Repeat("1", 40), strings.Repeat("2", 40), "main")
	good := intenttest.HubSignature(secret, body)
	bare := strings.TrimPrefix(good, "sha256=")
	for _, tc := range []struct {
		name    string
		headers map[string]string
		body    []byte
		secret  string
		ok      bool
	}{
		{"GitHub signature", map[string]string{HeaderHubSignature256: good}, body, secret, true},
		{"GitHub signature in upper case", map[string]string{HeaderHubSignature256: "sha256=" + strings.ToUpper(bare)}, body, secret, true},
		{"Gitea's bare signature", map[string]string{HeaderGiteaSignature: bare}, body, secret, true},
		{"Forgejo's bare signature", map[string]string{HeaderForgejoSignature: bare}, body, secret, true},
		{"GitLab token", map[string]string{HeaderGitlabToken: secret}, body, secret, true},
		{"missing", nil, body, secret, false},
		{"signature under another secret", map[string]string{HeaderHubSignature256: intenttest.HubSignature("another-secret-0123", body)}, body, secret, false},
		{"body changed after signing", map[string]string{HeaderHubSignature256: good}, append([]byte(nil), strings.Replace(string(body), "main", "mainx", 1)...), secret, false},
		{"signature cut short", map[string]string{HeaderHubSignature256: good[:len(good)-2]}, body, secret, false},
		{"signature not hex", map[string]string{HeaderHubSignature256: "sha256=" + strings.Repeat("zz", 32)}, body, secret, false},
		{"empty signature", map[string]string{HeaderHubSignature256: "sha256="}, body, secret, false},
		{"wrong algorithm named", map[string]string{HeaderHubSignature256: "sha1=" + bare}, body, secret, false},
		{"SHA-1 signature only", map[string]string{headerHubSignatureSHA1: "sha1=0123456789012345678901234567890123456789"}, body, secret, false},
		{"a wrong GitHub signature beside a right GitLab token", map[string]string{HeaderHubSignature256: intenttest.HubSignature("x-other-secret-01", body), HeaderGitlabToken: secret}, body, secret, false},
		{"GitLab token wrong", map[string]string{HeaderGitlabToken: "0123456789abcdef-webhooK"}, body, secret, false},
		{"GitLab token a prefix of the secret", map[string]string{HeaderGitlabToken: secret[:10]}, body, secret, false},
		{"GitLab token the secret and more", map[string]string{HeaderGitlabToken: secret + "x"}, body, secret, false},
		{"no secret configured, signed under the empty key", map[string]string{HeaderHubSignature256: intenttest.HubSignature("", body)}, body, "", false},
		{"no secret configured, empty token", map[string]string{HeaderGitlabToken: ""}, body, "", false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			h := http.Header{}
			for k, v := range tc.headers {
				h.Set(k, v)
			}
			err := verifyWebhook(h, tc.body, tc.secret)
			if (err == nil) != tc.ok {
				t.Fatalf("verifyWebhook: %v, want ok=%v", err, tc.ok)
			}
			if err != nil && tc.secret != "" && strings.Contains(err.Error(), tc.secret) {
				t.Fatalf("the reason holds the secret: %v", err)
			}
		})
	}
}

// TestPushWanted: which pushes fetch, for a source at each kind of
// TargetRevision, and what the sender is told of the others.
func TestPushWanted(t *testing.T) {
	at := func(ref string) *source {
		return &source{git: &gitRepo{url: "file:///srv/intent.git", path: "leaf1.json", ref: ref}}
	}
	commit := strings.Repeat("ab", 20)
	for _, tc := range []struct {
		name string
		src  *source
		ev   pushEvent
		want bool
		says string
	}{
		{"the branch followed", at("main"), push("refs/heads/main", ""), true, "queued"},
		{"the branch followed, named in full", at("refs/heads/main"), push("refs/heads/main", ""), true, "queued"},
		{"another branch", at("main"), push("refs/heads/dev", ""), false, "push to refs/heads/dev ignored: TargetRevision is main"},
		{"a branch whose name ends as the one followed", at("main"), push("refs/heads/not-main", ""), false, "ignored"},
		{"the tag followed", at("release-1"), push("refs/tags/release-1", ""), true, "queued"},
		{"HEAD, a push to the default branch", at("HEAD"), push("refs/heads/trunk", "trunk"), true, "queued"},
		{"HEAD, a push to another branch", at("HEAD"), push("refs/heads/main", "trunk"), false, "the default branch trunk"},
		{"HEAD, no default branch said", at("HEAD"), push("refs/heads/main", ""), true, "queued"},
		{"HEAD, GitLab's default branch", at("HEAD"), func() pushEvent { e := push("refs/heads/dev", ""); e.Project.DefaultBranch = "main"; return e }(), false, "ignored"},
		{"a commit id", at(commit), push("refs/heads/main", "main"), false, "commit id"},
		{"a body that names no ref", at("main"), pushEvent{}, true, "queued"},
		{"a source at a URL", &source{url: "https://192.0.2.1/leaf1.json"}, push("refs/heads/anything", ""), true, "https://192.0.2.1/leaf1.json"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got, says := pushWanted(tc.src, tc.ev)
			if got != tc.want || !strings.Contains(says, tc.says) {
				t.Fatalf("pushWanted: %v %q, want %v and %q", got, says, tc.want, tc.says)
			}
		})
	}
}

func push(ref, defaultBranch string) pushEvent {
	var e pushEvent
	e.Ref, e.Repository.DefaultBranch = ref, defaultBranch
	return e
}

// TestReadPush: a push's ref from JSON and from GitHub's form encoding.
func TestReadPush(t *testing.T) {
	body := intenttest.PushBody("refs/heads/main", strings.Repeat("1", 40), strings.Repeat("2", 40), "trunk")
	if ev := readPush("application/json", body); ev.Ref != "refs/heads/main" || ev.Repository.DefaultBranch != "trunk" {
		t.Fatalf("JSON: %+v", ev)
	}
	form := "payload=" + strings.NewReplacer("{", "%7B", "}", "%7D", `"`, "%22", ":", "%3A", ",", "%2C", "/", "%2F", " ", "+").Replace(string(body))
	if ev := readPush("application/x-www-form-urlencoded", []byte(form)); ev.Ref != "refs/heads/main" {
		t.Fatalf("form: %+v", ev)
	}
	if ev := readPush("application/json", []byte("not json")); ev.Ref != "" {
		t.Fatalf("not JSON: %+v", ev)
	}
}
