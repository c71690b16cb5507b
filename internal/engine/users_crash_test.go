package engine

import (
	"context"
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"sync"
	"testing"

	"github.com/swmgr/swmgr/internal/backend"
	"github.com/swmgr/swmgr/internal/model"
)

// copyDir copies the data directory as it is on disk at this moment: what
// a kill -9 now would leave behind. The caller makes sure nothing writes
// meanwhile (the writer is held, every answer given).
func copyDir(t *testing.T, src, dst string) {
	t.Helper()
	err := filepath.WalkDir(src, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel, err := filepath.Rel(src, p)
		if err != nil {
			return err
		}
		to := filepath.Join(dst, rel)
		info, err := d.Info()
		if err != nil {
			return err
		}
		if d.IsDir() {
			return os.MkdirAll(to, info.Mode().Perm())
		}
		b, err := os.ReadFile(p)
		if err != nil {
			return err
		}
		return os.WriteFile(to, b, info.Mode().Perm())
	})
	if err != nil {
		t.Fatal(err)
	}
}

// holdNtp makes f's simulated switch stop at the NtpServer change of a
// commit (10.9.9.9, which the tests put after the commit's User change):
// the writer has applied the User change in memory, nothing of the commit
// is in the store. reached is closed there; the change goes on when
// release is called (at the latest when the test ends, before the engine
// closes), and fails with fail if it is not nil.
func holdNtp(f *fixture, fail error) (reached chan struct{}, release func()) {
	reached, released := make(chan struct{}), make(chan struct{})
	release = sync.OnceFunc(func() { close(released) })
	f.t.Cleanup(release)
	f.fault = func(c backend.Change) error {
		if c.Kind.Name == "NtpServer" && c.After.Str("IpAddr") == "10.9.9.9" {
			close(reached)
			<-released
			return fail
		}
		return nil
	}
	return reached, release
}

// A User acknowledged must keep its password through a kill -9 that
// happens while a later commit deleting it, never answered, is in the
// writer: a Sync run meanwhile (here by the UserPassword action of another
// user) must not write the delete, which is only in memory. Written the
// accounts in memory, it would leave the store with victim and the files
// without; the next start's Reconcile would make victim again with a
// locked password (found by review).
func TestSyncDoesNotWriteUncommittedUserDelete(t *testing.T) {
	ctx := context.Background()
	dir := t.TempDir()
	f, acc := newUserFixtureAt(t, dir)
	f.mustApply(f.edit(backend.Create, "User", user("root1", "admin", "admin-password")))
	f.mustApply(f.edit(backend.Create, "User", user("victim", "operator", "victim-password")))
	f.mustApply(f.edit(backend.Create, "User", user("other", "operator", "other-password")))
	verify(t, onDisk(t, acc), "victim", "victim-password", true)

	reached, release := holdNtp(f, nil)
	done := make(chan error, 1)
	go func() {
		_, err := f.apply(f.edit(backend.Delete, "User", model.Object{"Name": "victim"}),
			f.edit(backend.Create, "NtpServer", model.Object{"IpAddr": "10.9.9.9"}))
		done <- err
	}()
	<-reached
	if err := acc.SetPassword(ctx, "other", "other-password-2"); err != nil {
		t.Fatal(err)
	}
	if !f.exists("User", "victim") {
		t.Fatal("victim's delete is already in the store")
	}
	crash := t.TempDir()
	copyDir(t, dir, crash)
	release()
	if err := <-done; err != nil {
		t.Fatal(err)
	}

	g, acc2 := newUserFixtureAt(t, crash)
	if !g.exists("User", "victim") {
		t.Fatal("the store after the crash has no victim (the delete was never committed)")
	}
	verify(t, acc2, "victim", "victim-password", true)
	verify(t, acc2, "other", "other-password-2", true)
}

// Every interleaving of a User change in the writer (not yet in the store)
// with a write of the account files from elsewhere, and of its outcome:
// after a kill -9 while the change is in the writer, and again after it
// was answered, every acknowledged user logs in with its acknowledged
// password and no change that was not acknowledged is seen.
func TestUserChangesSurviveKill9(t *testing.T) {
	ctx := context.Background()
	pendings := []struct {
		name string
		edit func(f *fixture) Edit
	}{
		{"create", func(f *fixture) Edit {
			return f.edit(backend.Create, "User", user("newbie", "operator", "newbie-password"))
		}},
		{"delete", func(f *fixture) Edit { return f.edit(backend.Delete, "User", model.Object{"Name": "victim"}) }},
		{"shell", func(f *fixture) Edit {
			return f.edit(backend.Update, "User", model.Object{"Name": "victim", "DefaultShell": "Bash"})
		}},
	}
	// What writes the account files while the change is in the writer.
	syncers := []string{
		"password of another user", // the UserPassword action (its own write)
		"password of the same user",
		"answer of an earlier commit", // its answerSynced, held until then
	}
	outcomes := []string{"committed", "store write failed", "refused by the switch"}
	for _, pending := range pendings {
		for _, syncer := range syncers {
			for _, outcome := range outcomes {
				t.Run(pending.name+"/"+syncer+"/"+outcome, func(t *testing.T) {
					dir := t.TempDir()
					var hold sync.Mutex // held: the next User Sync waits
					heldSync := make(chan struct{}, 1)
					f, acc := newUserFixtureAt(t, dir, func(b backend.Backend) backend.Backend {
						return userSyncBackend{b, func(ctx context.Context, inner func(context.Context) error) error {
							if !hold.TryLock() {
								select {
								case heldSync <- struct{}{}:
								default:
								}
								hold.Lock()
							}
							hold.Unlock()
							return inner(ctx)
						}}
					})
					f.mustApply(f.edit(backend.Create, "User", user("root1", "admin", "admin-password")))
					f.mustApply(f.edit(backend.Create, "User", user("victim", "operator", "victim-password")))
					f.mustApply(f.edit(backend.Create, "User", user("other", "operator", "other-password")))
					acked := map[string]string{"root1": "admin-password", "victim": "victim-password", "other": "other-password"}

					earlier := make(chan error, 1)
					unhold := func() {}
					if syncer == "answer of an earlier commit" {
						hold.Lock()
						unhold = sync.OnceFunc(hold.Unlock)
						t.Cleanup(unhold)
						go func() {
							_, err := f.apply(f.edit(backend.Create, "User", user("early", "operator", "early-password")))
							earlier <- err
						}()
						<-heldSync // early is in the store, its answer waits for its Sync
					}
					var refuse error
					if outcome == "refused by the switch" {
						refuse = errors.New("injected refusal")
					}
					reached, release := holdNtp(f, refuse)
					done := make(chan error, 1)
					go func() {
						_, err := f.apply(pending.edit(f), f.edit(backend.Create, "NtpServer", model.Object{"IpAddr": "10.9.9.9"}))
						done <- err
					}()
					<-reached
					switch syncer {
					case "password of another user":
						if err := acc.SetPassword(ctx, "other", "other-password-2"); err != nil {
							t.Fatal(err)
						}
						acked["other"] = "other-password-2"
					case "password of the same user":
						if err := acc.SetPassword(ctx, "victim", "victim-password-2"); err != nil {
							t.Fatal(err)
						}
						acked["victim"] = "victim-password-2"
					case "answer of an earlier commit":
						unhold()
						if err := <-earlier; err != nil {
							t.Fatal(err)
						}
						acked["early"] = "early-password"
					}
					if outcome == "store write failed" {
						var once sync.Once
						f.updateFault = func() (err error) {
							once.Do(func() { err = errors.New("injected store failure") })
							return err
						}
					}
					crash := t.TempDir()
					copyDir(t, dir, crash) // kill -9 while the change is in the writer
					release()
					err := <-done
					if (err == nil) != (outcome == "committed") {
						t.Fatalf("the commit's answer: %v", err)
					}
					// A kill -9 after the answer, with no Sync since: the undo
					// of a change that failed must not need one.
					crashAfter := t.TempDir()
					copyDir(t, dir, crashAfter)

					// check restarts on dir: each acknowledged user logs in,
					// and has a User; the others have neither.
					check := func(when, dir string, acked map[string]string, answered bool) {
						t.Helper()
						g, acc2 := newUserFixtureAt(t, dir)
						for name, password := range acked {
							if !g.exists("User", name) {
								t.Errorf("%s: the store has no User %s", when, name)
							}
							verify(t, acc2, name, password, true)
						}
						for _, name := range []string{"newbie", "victim", "early"} {
							if _, ok := acked[name]; ok {
								continue
							}
							if _, ok, _ := acc2.Lookup(ctx, name); ok || g.exists("User", name) {
								t.Errorf("%s: %s, not acknowledged (or deleted and answered), has an account or a User", when, name)
							}
						}
						if a, ok, _ := acc2.Lookup(ctx, "victim"); ok && (a.Shell == "/bin/bash") != (answered && pending.name == "shell") {
							t.Errorf("%s: victim's shell %q", when, a.Shell)
						}
					}
					check("kill -9 while in the writer", crash, acked, false)

					after := map[string]string{}
					for name, password := range acked {
						after[name] = password
					}
					if outcome == "committed" {
						switch pending.name {
						case "create":
							after["newbie"] = "newbie-password"
						case "delete":
							delete(after, "victim")
						}
					}
					check("kill -9 after the answer", crashAfter, after, outcome == "committed")
				})
			}
		}
	}
}
