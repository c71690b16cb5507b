package intent

import (
	"context"
	"crypto/ed25519"
	"crypto/rand"
	"encoding/base64"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/swmgr/swmgr/internal/testneed"
)

// TestRepository is a real repository a test commits to, with Debian's
// git (a test helper: the black-box tests use it too).
type TestRepository struct {
	t *testing.T
	// Dir is its work tree; Key signs the documents CommitSigned commits.
	Dir string
	Key ed25519.PrivateKey
}

// NewTestRepository makes an empty repository whose branch is main.
func NewTestRepository(t *testing.T) *TestRepository {
	t.Helper()
	testneed.Program(t, "git", "git", "/usr/lib/git-core/git-http-backend")
	_, key, err := ed25519.GenerateKey(rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	r := &TestRepository{t: t, Dir: filepath.Join(t.TempDir(), "intent.git"), Key: key}
	r.Git("init", "-q", "-b", "main", r.Dir)
	return r
}

// PublicKey is Key's public half as IntentSource's PublicKey holds it.
func (r *TestRepository) PublicKey() string {
	return base64.StdEncoding.EncodeToString(r.Key.Public().(ed25519.PublicKey))
}

// Git runs git in the repository, its configuration the test's own.
func (r *TestRepository) Git(args ...string) string {
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
func (r *TestRepository) Commit(files map[string][]byte) string {
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
func (r *TestRepository) CommitSigned(path string, doc []byte) string {
	sig := base64.StdEncoding.EncodeToString(ed25519.Sign(r.Key, doc))
	return r.Commit(map[string][]byte{path: doc, path + ".sig": []byte(sig)})
}

// TestGitFetcherRefusesATooLargeRepository: a repository whose ref brings
// more than the bound is refused with the reason, its cache removed; the
// same repository within the bound is read.
func TestGitFetcherRefusesATooLargeRepository(t *testing.T) {
	big := make([]byte, 4<<20) // random: git cannot compress it
	rand.Read(big)
	r := NewTestRepository(t)
	r.Commit(map[string][]byte{"intent.json": []byte(`{}`), "blob.bin": big})
	repo := gitRepo{url: "file://" + r.Dir, path: "intent.json", ref: "main"}

	g := &gitFetcher{program: "git", dir: filepath.Join(t.TempDir(), "cache"), max: 1 << 20, timeout: time.Minute}
	_, err := g.read(context.Background(), repo, 1<<20)
	if err == nil || !strings.Contains(err.Error(), "the repository is too large: more than 1048576 bytes fetched") {
		t.Fatalf("a 4 MiB repository with a 1 MiB bound: %v", err)
	}
	if size, _ := dirSize(g.dir); size > 1<<20 {
		t.Fatalf("the refused repository's cache still holds %d bytes", size)
	}

	g.max = 64 << 20
	f, err := g.read(context.Background(), repo, 1<<20)
	if err != nil || string(f.data) != `{}` || f.sig != nil || !isCommitID(f.commit) {
		t.Fatalf("within the bound: %+v %v", f, err)
	}
}

// TestGitRunnerRefusesHostileRepositories: what the model refuses is
// refused again before git runs (a source read from an older store, a
// caller that skipped the model), and git never runs a remote helper.
func TestGitRunnerRefusesHostileRepositories(t *testing.T) {
	testneed.Program(t, "git", "git")
	marker := filepath.Join(t.TempDir(), "pwned")
	g := &gitFetcher{program: "git", dir: filepath.Join(t.TempDir(), "cache"), max: 1 << 20, timeout: time.Minute}
	for _, r := range []gitRepo{
		{url: "ext::sh -c touch% " + marker, path: "a.json", ref: "main"},
		{url: "fd::3", path: "a.json", ref: "main"},
		{url: "-uhelp", path: "a.json", ref: "main"},
		{url: "file:///tmp", path: "a.json", ref: "--upload-pack=touch " + marker},
		{url: "file:///tmp", path: "../a.json", ref: "main"},
		{url: "file:///tmp", path: "-a.json", ref: "main"},
	} {
		if _, err := g.read(context.Background(), r, 1<<20); err == nil || !strings.Contains(err.Error(), "refused") {
			t.Errorf("%+v: %v, want refused", r, err)
		}
		if _, err := gitEnv(t.TempDir(), &r); r.url != "file:///tmp" && err == nil {
			t.Errorf("git's environment allowed the protocol of %q", r.url)
		}
	}
	// Past every check, git itself allows only the repository's protocol.
	cache, err := g.cacheFor(context.Background(), "file:///tmp")
	if err != nil {
		t.Fatal(err)
	}
	if _, err := g.run(context.Background(), cache, &gitRepo{url: "file:///tmp"}, 0, "fetch", "-q", "--end-of-options", "ext::sh -c touch% "+marker, "main"); err == nil {
		t.Error("git fetched through ext::")
	}
	if _, err := os.Stat(marker); err == nil {
		t.Fatal("a hostile repository ran a command")
	}
}

// TestGitRunnerIsBoundedInTime: a server that never answers does not hold
// the poll: git (and its helpers) are killed at the timeout, and the
// reason says so.
func TestGitRunnerIsBoundedInTime(t *testing.T) {
	testneed.Program(t, "git", "git")
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	go func() { // accepts and never answers
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			defer c.Close()
		}
	}()
	g := &gitFetcher{program: "git", dir: filepath.Join(t.TempDir(), "cache"), max: 1 << 20, timeout: 2 * time.Second}
	_, err = g.read(context.Background(), gitRepo{url: "https://" + ln.Addr().String() + "/r.git", path: "a.json", ref: "main"}, 1<<20)
	if err == nil || !strings.Contains(err.Error(), "killed after 2s") {
		t.Fatalf("a server that never answers: %v", err)
	}
}
