// Package intenttest makes real git repositories for the intent's tests
// (internal/intent and the black-box tests): Debian's git, its
// configuration the test's own, documents committed with their detached
// ed25519 signature beside them as an IntentSource with RepoURL reads
// them; and the push webhooks git servers send about them.
package intenttest

import (
	"crypto/ed25519"
	"crypto/hmac"
	"crypto/rand"
	"crypto/sha256"
	"encoding/base64"
	"encoding/hex"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/swmgr/swmgr/internal/testneed"
)

// Repository is a real repository a test commits to.
type Repository struct {
	t *testing.T
	// Dir is its work tree; Key signs the documents CommitSigned commits.
	Dir string
	Key ed25519.PrivateKey
}

// NewRepository makes an empty repository whose branch is main, skipping
// the test (failing it under $CI) without git.
func NewRepository(t *testing.T) *Repository {
	t.Helper()
	testneed.Program(t, "git", "git", "/usr/lib/git-core/git-http-backend")
	_, key, err := ed25519.GenerateKey(rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	r := &Repository{t: t, Dir: filepath.Join(t.TempDir(), "intent.git"), Key: key}
	r.Git("init", "-q", "-b", "main", r.Dir)
	return r
}

// PublicKey is Key's public half as IntentSource's PublicKey holds it.
func (r *Repository) PublicKey() string {
	return base64.StdEncoding.EncodeToString(r.Key.Public().(ed25519.PublicKey))
}

// Git runs git in the repository, its configuration the test's own.
func (r *Repository) Git(args ...string) string {
	r.t.Helper()
	cmd := exec.Command("git", args...)
	cmd.Dir = filepath.Dir(r.Dir)
	if _, err := os.Stat(r.Dir); err == nil {
		cmd.Dir = r.Dir
	}
	cmd.Env = []string{"PATH=/usr/bin:/bin", "HOME=" + r.Dir, "GIT_CONFIG_NOSYSTEM=1", "GIT_CONFIG_GLOBAL=/dev/null",
		"GIT_AUTHOR_NAME=fleet", "GIT_AUTHOR_EMAIL=fleet@example.net", "GIT_COMMITTER_NAME=fleet", "GIT_COMMITTER_EMAIL=fleet@example.net"}
	out, err := cmd.CombinedOutput()
	if err != nil {
		r.t.Fatalf("git %v: %v: %s", args, err, out)
	}
	return strings.TrimSpace(string(out))
}

// Commit writes files (path: content; nil removes it) and commits them,
// answering the commit id.
func (r *Repository) Commit(files map[string][]byte) string {
	r.t.Helper()
	for name, data := range files {
		p := filepath.Join(r.Dir, name)
		if data == nil {
			os.Remove(p)
			continue
		}
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			r.t.Fatal(err)
		}
		if err := os.WriteFile(p, data, 0o644); err != nil {
			r.t.Fatal(err)
		}
	}
	r.Git("add", "-A")
	r.Git("commit", "-q", "--allow-empty", "-m", "intent")
	return r.Git("rev-parse", "HEAD")
}

// CommitSigned commits doc at path with its detached signature beside it
// (path + ".sig", base64).
func (r *Repository) CommitSigned(path string, doc []byte) string {
	sig := base64.StdEncoding.EncodeToString(ed25519.Sign(r.Key, doc))
	return r.Commit(map[string][]byte{path: doc, path + ".sig": []byte(sig)})
}

// PushBody is a push's webhook body as GitHub (and Gitea, Forgejo) sends
// it, trimmed to what a push says: the ref pushed, the commits before and
// after, the repository and its default branch.
func PushBody(ref, before, after, defaultBranch string) []byte {
	return fmt.Appendf(nil, `{"ref":%q,"before":%q,"after":%q,"created":false,"deleted":false,"forced":false,`+
		`"repository":{"id":1,"name":"intent","full_name":"fabric/intent","clone_url":"https://git.example.net/fabric/intent.git","default_branch":%q},`+
		`"pusher":{"name":"fleet","email":"fleet@example.net"},"commits":[{"id":%q,"message":"intent","added":[],"removed":[],"modified":["leaf1.json"]}]}`,
		ref, before, after, defaultBranch, after)
}

// HubSignature is X-Hub-Signature-256 of body under secret, as GitHub,
// Gitea and Forgejo sign a webhook.
func HubSignature(secret string, body []byte) string {
	m := hmac.New(sha256.New, []byte(secret))
	m.Write(body)
	return "sha256=" + hex.EncodeToString(m.Sum(nil))
}
