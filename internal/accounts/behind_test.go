package accounts

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"testing"
)

// reopen reads dir's files afresh: what a restart (or a kill -9) would
// find on disk.
func reopen(t *testing.T, dir string) *Files {
	t.Helper()
	f, err := OpenFiles(dir, FilesOptions{Scheme: SHA512})
	if err != nil {
		t.Fatal(err)
	}
	return f
}

// With WriteBehind, changes are seen at once in memory and reach the files
// with Sync once settled as committed; SetPassword is on disk when it
// returns, with the committed changes only.
func TestFilesWriteBehind(t *testing.T) {
	ctx := context.Background()
	f := openFiles(t, FilesOptions{Scheme: SHA512, WriteBehind: true})
	dir := f.Dir()
	before := snapshot(t, dir)

	if err := f.Create(ctx, "alice", "staff", "/bin/bash", "password1"); err != nil {
		t.Fatal(err)
	}
	checkVerify(t, f, "alice", "password1", true, "staff")
	if err := f.Sync(ctx); err != nil {
		t.Fatal(err)
	}
	if got := snapshot(t, dir); fmt.Sprint(got) != fmt.Sprint(before) {
		t.Fatalf("the files changed before the change was settled as committed:\n%v", got)
	}
	f.Settle(true)
	if err := f.Sync(ctx); err != nil {
		t.Fatal(err)
	}
	checkVerify(t, reopen(t, dir), "alice", "password1", true, "staff")

	// SetPassword writes before it returns, with what was committed only;
	// the change not committed yet follows once it is.
	if err := f.SetShell(ctx, "alice", "/bin/sh"); err != nil {
		t.Fatal(err)
	}
	if err := f.SetPassword(ctx, "alice", "password2"); err != nil {
		t.Fatal(err)
	}
	on := reopen(t, dir)
	checkVerify(t, on, "alice", "password2", true, "staff")
	if a, _, _ := on.Lookup(ctx, "alice"); a.Shell != "/bin/bash" {
		t.Errorf("shell on disk before it was committed: %q", a.Shell)
	}
	f.Settle(true)
	if err := f.Sync(ctx); err != nil {
		t.Fatal(err)
	}
	if a, _, _ := reopen(t, dir).Lookup(ctx, "alice"); a.Shell != "/bin/sh" {
		t.Errorf("shell on disk after Sync: %q", a.Shell)
	}

	if _, err := f.Delete(ctx, "alice"); err != nil {
		t.Fatal(err)
	}
	checkVerify(t, f, "alice", "password2", false, "")
	checkVerify(t, reopen(t, dir), "alice", "password2", true, "staff")
	f.Settle(true)
	if err := f.Sync(ctx); err != nil {
		t.Fatal(err)
	}
	if _, ok, _ := reopen(t, dir).Lookup(ctx, "alice"); ok {
		t.Error("alice is still on disk after Sync")
	}
	if err := f.Sync(ctx); err != nil { // nothing left to write
		t.Fatal(err)
	}
}

// A Sync that cannot replace the files leaves them as they were and tries
// again next time; a password change that cannot be written is undone.
func TestFilesWriteBehindFailure(t *testing.T) {
	ctx := context.Background()
	f := openFiles(t, FilesOptions{Scheme: SHA512, WriteBehind: true})
	dir := f.Dir()
	if err := f.Create(ctx, "alice", "staff", "/bin/bash", "password1"); err != nil {
		t.Fatal(err)
	}
	f.Settle(true)
	if err := f.Sync(ctx); err != nil {
		t.Fatal(err)
	}
	before := snapshot(t, dir)
	f.replaceHook = func(name string) error {
		if name == shadowFile {
			return errors.New("injected")
		}
		return nil
	}
	if err := f.SetPassword(ctx, "alice", "password2"); err == nil {
		t.Fatal("SetPassword succeeded with a failing write")
	}
	checkVerify(t, f, "alice", "password1", true, "staff")
	checkVerify(t, f, "alice", "password2", false, "")

	if err := f.Create(ctx, "bob", "ops", "/bin/bash", "password3"); err != nil {
		t.Fatal(err)
	}
	f.Settle(true)
	if err := f.Sync(ctx); err == nil {
		t.Fatal("Sync succeeded with a failing write")
	}
	if got := snapshot(t, dir); fmt.Sprint(got) != fmt.Sprint(before) {
		t.Errorf("a failed Sync changed the files:\n%v\n%v", before, got)
	}
	checkVerify(t, f, "bob", "password3", true, "ops") // still made, in memory
	f.replaceHook = nil
	if err := f.Sync(ctx); err != nil {
		t.Fatal(err)
	}
	checkVerify(t, reopen(t, dir), "bob", "password3", true, "ops")
}

// Reconcile makes the accounts those wanted: missing ones made locked,
// groups and shells put right, the others (not system accounts) removed;
// passwords of accounts that stay are kept.
func TestFilesReconcile(t *testing.T) {
	ctx := context.Background()
	for _, behind := range []bool{false, true} {
		t.Run(fmt.Sprintf("WriteBehind=%v", behind), func(t *testing.T) {
			f := openFiles(t, FilesOptions{Scheme: SHA512, WriteBehind: behind})
			dir := f.Dir()
			for _, u := range []struct{ name, group string }{{"alice", "staff"}, {"bob", "ops"}, {"carol", "ops"}, {"erin", "lab"}} {
				if err := f.Create(ctx, u.name, u.group, "/bin/bash", u.name+"-password"); err != nil {
					t.Fatal(err)
				}
			}
			want := []Account{
				{Name: "alice", Group: "netops", Shell: "/bin/sh"},
				{Name: "bob", Group: "ops", Shell: "/bin/bash"},
				{Name: "dave", Group: "admin", Shell: "/usr/bin/swmgr"},
			}
			did, err := f.Reconcile(ctx, want)
			if err != nil {
				t.Fatal(err)
			}
			var got []string
			for _, d := range did {
				got = append(got, d.Account+": "+d.Did)
			}
			for _, w := range []string{
				"alice: moved account alice from group staff to netops",
				"alice: set the login shell of account alice to /bin/sh (was /bin/bash)",
				"dave: made the missing account dave (group admin) with a locked password",
				"carol: removed account carol, which no User has",
				"erin: removed account erin, which no User has",
			} {
				if !strings.Contains(strings.Join(got, "\n"), w) {
					t.Errorf("repairs lack %q:\n%s", w, strings.Join(got, "\n"))
				}
			}
			if len(did) != 5 {
				t.Errorf("%d repairs, want 5:\n%s", len(did), strings.Join(got, "\n"))
			}
			for _, a := range []Accounts{f, reopen(t, dir)} { // in memory, and on disk at once
				checkVerify(t, a, "alice", "alice-password", true, "netops")
				checkVerify(t, a, "bob", "bob-password", true, "ops")
				checkVerify(t, a, "dave", "", false, "")
				if d, ok, _ := a.Lookup(ctx, "dave"); !ok || d.Group != "admin" || d.Shell != "/usr/bin/swmgr" {
					t.Errorf("dave: %+v %v", d, ok)
				}
				for _, gone := range []string{"carol", "erin"} {
					if _, ok, _ := a.Lookup(ctx, gone); ok {
						t.Errorf("%s is still there", gone)
					}
				}
				if _, ok, _ := a.Lookup(ctx, "root"); !ok {
					t.Error("root was removed")
				}
			}
			e := reopen(t, dir).cur.Load()
			for _, g := range []string{"staff", "lab"} { // left empty
				if e.group.find(g) >= 0 || e.gshadow.find(g) >= 0 {
					t.Errorf("group %s is still there", g)
				}
			}
			if e.group.find("users") < 0 {
				t.Error("the system group users was removed")
			}
			if did, err := f.Reconcile(ctx, want); err != nil || len(did) != 0 {
				t.Errorf("second Reconcile: %v %v", did, err)
			}
			if _, err := f.Reconcile(ctx, []Account{{Name: "Bad Name", Group: "x", Shell: "/bin/sh"}}); !errors.Is(err, ErrInvalid) {
				t.Errorf("a bad name: %v", err)
			}
		})
	}
}

// The time a User create and delete hold the engine's writer on the
// simulated switch's accounts: written at once (each change's fsyncs) and
// written behind (memory only, and the Settle the writer calls after the
// store write of each batch; Sync runs outside the writer).
//
//	go test -run '^$' -bench FilesCreateDelete ./internal/accounts/
func BenchmarkFilesCreateDelete(b *testing.B) {
	ctx := context.Background()
	for _, behind := range []bool{false, true} {
		b.Run(fmt.Sprintf("WriteBehind=%v", behind), func(b *testing.B) {
			f, err := OpenFiles(b.TempDir(), FilesOptions{Scheme: SHA512, WriteBehind: behind})
			if err != nil {
				b.Fatal(err)
			}
			hash, err := f.HashPassword("bench-password")
			if err != nil {
				b.Fatal(err)
			}
			for i := 0; b.Loop(); i++ {
				name := fmt.Sprintf("bench%d", i)
				if err := f.CreateHashed(ctx, name, "operator", "/bin/sh", hash); err != nil {
					b.Fatal(err)
				}
				f.Settle(true)
				if _, err := f.Delete(ctx, name); err != nil {
					b.Fatal(err)
				}
				f.Settle(true)
			}
		})
	}
}
