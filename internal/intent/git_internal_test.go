package intent

import (
	"context"
	"crypto/rand"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/swmgr/swmgr/internal/testneed"
)

// makeRepo is a repository with the files given committed on main.
func makeRepo(t *testing.T, files map[string][]byte) string {
	t.Helper()
	testneed.Program(t, "git", "git")
	dir := filepath.Join(t.TempDir(), "r.git")
	run := func(args ...string) {
		t.Helper()
		cmd := exec.Command("git", args...)
		cmd.Env = []string{"PATH=/usr/bin:/bin", "HOME=" + t.TempDir(), "GIT_CONFIG_NOSYSTEM=1", "GIT_AUTHOR_NAME=t", "GIT_AUTHOR_EMAIL=t@example.net",
			"GIT_COMMITTER_NAME=t", "GIT_COMMITTER_EMAIL=t@example.net"}
		if out, err := cmd.CombinedOutput(); err != nil {
			t.Fatalf("git %v: %v: %s", args, err, out)
		}
	}
	run("init", "-q", "-b", "main", dir)
	for name, data := range files {
		if err := os.WriteFile(filepath.Join(dir, name), data, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	run("-C", dir, "add", "-A")
	run("-C", dir, "commit", "-q", "-m", "files")
	return dir
}

// TestGitFetcherRefusesATooLargeRepository: a repository whose ref brings
// more than the bound is refused with the reason, its cache removed; the
// same repository within the bound is read.
func TestGitFetcherRefusesATooLargeRepository(t *testing.T) {
	big := make([]byte, 4<<20) // random: git cannot compress it
	rand.Read(big)
	dir := makeRepo(t, map[string][]byte{"intent.json": []byte(`{}`), "blob.bin": big})
	repo := gitRepo{url: "file://" + dir, path: "intent.json", ref: "main"}

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
