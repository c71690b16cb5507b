package test

import (
	"fmt"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/swmgr/swmgr/internal/intent/intenttest"
)

// TestIntentFromGitThroughTheBinary: the real binary follows a signed
// document in a git repository: applied at the commit its state shows,
// cached under the data directory, a new commit applied at the next poll;
// git runs with an environment of its own (swmgr's GIT_TRACE, which git
// would obey, is not handed over: no trace is written); the cache is
// removed with the IntentSource.
func TestIntentFromGitThroughTheBinary(t *testing.T) {
	repo := intenttest.NewRepository(t)
	first := repo.CommitSigned("fabric/leaf1.json", ztpDocument(100))
	trace := filepath.Join(t.TempDir(), "git-trace")
	t.Setenv("GIT_TRACE", trace)
	dir := t.TempDir()
	s := startServer(t, dir)
	s.expect(t, 201, "POST", "/config/IntentSource", fmt.Sprintf(`{"RepoURL":%q,"Path":"fabric/leaf1.json","TargetRevision":"main","Interval":5,"PublicKey":%q}`,
		"file://"+repo.Dir, repo.PublicKey()))
	// awaitApplied waits (generously: the machine is shared) for commit's
	// document to be applied.
	awaitApplied := func(commit string) {
		t.Helper()
		var st map[string]any
		for deadline := time.Now().Add(30 * time.Second); time.Now().Before(deadline); time.Sleep(100 * time.Millisecond) {
			if objs := s.listAll(t, "/state/IntentSources", 10); len(objs) == 1 {
				if st, _ = objs[0]["Object"].(map[string]any); st["AppliedCommit"] == commit {
					return
				}
			}
		}
		t.Fatalf("commit %s not applied within 30 s: %v", commit, st)
	}
	awaitApplied(first)
	if v := s.do(t, "GET", "/config/Vlan?VlanId=100", ""); v.code != 200 {
		t.Fatalf("the intent's VLAN: %v", v)
	}
	caches, _ := filepath.Glob(filepath.Join(dir, "intent-git", "*", "repo.git"))
	if len(caches) != 1 {
		t.Fatalf("the git cache under the data directory: %v", caches)
	}
	second := repo.CommitSigned("fabric/leaf1.json", ztpDocument(200))
	awaitApplied(second)
	if v := s.do(t, "GET", "/config/Vlan?VlanId=100", ""); v.code != 404 {
		t.Fatalf("VLAN 100 after the new commit: %v", v)
	}
	if _, err := os.Stat(trace); err == nil {
		t.Fatal("git wrote swmgr's GIT_TRACE: it inherited swmgr's environment")
	}

	// The IntentSource deleted: its cache goes with it.
	s.expect(t, 200, "DELETE", "/config/IntentSource", `{"Name":"default"}`)
	for deadline := time.Now().Add(10 * time.Second); ; time.Sleep(100 * time.Millisecond) {
		if _, err := os.Stat(filepath.Join(dir, "intent-git")); os.IsNotExist(err) {
			break
		}
		if time.Now().After(deadline) {
			t.Fatal("the git cache is still in the data directory 10 s after its IntentSource was deleted")
		}
	}
}
