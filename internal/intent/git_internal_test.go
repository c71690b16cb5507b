package intent

import (
	"context"
	"crypto/rand"
	"net"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/swmgr/swmgr/internal/intent/intenttest"
	"github.com/swmgr/swmgr/internal/testneed"
)

// TestGitFetcherRefusesATooLargeRepository: a repository whose ref brings
// more than the bound is refused with the reason, its cache removed; the
// same repository within the bound is read.
func TestGitFetcherRefusesATooLargeRepository(t *testing.T) {
	big := make([]byte, 4<<20) // random: git cannot compress it
	rand.Read(big)
	r := intenttest.NewRepository(t)
	r.Commit(map[string][]byte{"intent.json": []byte(`{}`), "blob.bin": big})
	repo := gitRepo{url: "file://" + r.Dir, path: "intent.json", ref: "main", maxSize: 1 << 20}

	g := &gitFetcher{program: "git", dir: filepath.Join(t.TempDir(), "cache"), timeout: time.Minute}
	_, err := g.read(context.Background(), repo, 1<<20)
	if err == nil || !strings.Contains(err.Error(), "the repository is too large: more than 1048576 bytes fetched") {
		t.Fatalf("a 4 MiB repository with a 1 MiB bound: %v", err)
	}
	if size, _ := dirSize(g.dir); size > 1<<20 {
		t.Fatalf("the refused repository's cache still holds %d bytes", size)
	}

	repo.maxSize = 64 << 20
	f, err := g.read(context.Background(), repo, 1<<20)
	if err != nil || string(f.data) != `{}` || f.sig != nil || !isObjectID(f.commit) {
		t.Fatalf("within the bound: %+v %v", f, err)
	}
}

// TestGitRunnerRefusesHostileRepositories: what the model refuses is
// refused again before git runs (a source read from an older store, a
// caller that skipped the model), and git never runs a remote helper.
func TestGitRunnerRefusesHostileRepositories(t *testing.T) {
	testneed.Program(t, "git", "git")
	marker := filepath.Join(t.TempDir(), "pwned")
	g := &gitFetcher{program: "git", dir: filepath.Join(t.TempDir(), "cache"), timeout: time.Minute}
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
	cache, err := g.cacheFor(context.Background(), gitRepo{url: "file:///tmp", maxSize: 1 << 20})
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
	g := &gitFetcher{program: "git", dir: filepath.Join(t.TempDir(), "cache"), timeout: 2 * time.Second}
	_, err = g.read(context.Background(), gitRepo{url: "https://" + ln.Addr().String() + "/r.git", path: "a.json", ref: "main"}, 1<<20)
	if err == nil || !strings.Contains(err.Error(), "killed after 2s") {
		t.Fatalf("a server that never answers: %v", err)
	}
}
