package accounts

import (
	"context"
	"errors"
	"testing"
)

// With WriteBehind, only changes settled as committed reach the files,
// whoever writes them (Sync, or SetPassword's own write): a change the
// engine applied inside a commit that is not in its store yet must not be
// on disk at a crash, or the next start's Reconcile would "repair" it
// against the store and lose a password. Each case starts from alice
// (password "alice-pw1") committed and on disk, makes a change not committed
// yet, possibly changes alice's password meanwhile (the UserPassword
// action), then looks at the files (a crash now), settles the change as
// committed or not, syncs and looks again.
func TestFilesSettle(t *testing.T) {
	ctx := context.Background()
	type want struct {
		name, password string
		ok             bool
	}
	for _, tc := range []struct {
		name     string
		pending  func(t *testing.T, f *Files) // the change the commit made
		password string                       // alice's new password meanwhile, if any
		crash    []want                       // on disk before Settle
		commit   []want                       // on disk (and in memory) after Settle(true) and Sync
		revert   []want                       // on disk (and in memory) after Settle(false) and Sync
	}{
		{
			name:     "create",
			pending:  func(t *testing.T, f *Files) { must(t, f.Create(ctx, "bob", "ops", "/bin/sh", "bob-pass1")) },
			password: "alice-pw2",
			crash:    []want{{"alice", "alice-pw2", true}, {"bob", "bob-pass1", false}},
			commit:   []want{{"alice", "alice-pw2", true}, {"bob", "bob-pass1", true}},
			revert:   []want{{"alice", "alice-pw2", true}, {"bob", "bob-pass1", false}},
		},
		{
			name: "delete",
			pending: func(t *testing.T, f *Files) {
				_, err := f.Delete(ctx, "alice")
				must(t, err)
			},
			crash:  []want{{"alice", "alice-pw1", true}},
			commit: []want{{"alice", "alice-pw1", false}},
			revert: []want{{"alice", "alice-pw1", true}},
		},
		{
			name: "delete, password changed meanwhile",
			pending: func(t *testing.T, f *Files) {
				_, err := f.Delete(ctx, "alice")
				must(t, err)
			},
			password: "alice-pw2",
			crash:    []want{{"alice", "alice-pw2", true}},
			commit:   []want{{"alice", "alice-pw2", false}, {"alice", "alice-pw1", false}},
			revert:   []want{{"alice", "alice-pw2", true}, {"alice", "alice-pw1", false}},
		},
		{
			// A later change of the same commit failed: the driver restores
			// what the delete removed; the password set since stays.
			name: "delete undone in the commit, password changed meanwhile",
			pending: func(t *testing.T, f *Files) {
				r, err := f.Delete(ctx, "alice")
				must(t, err)
				if err := f.SetPassword(ctx, "alice", "alice-pw2"); err != nil {
					t.Fatal(err)
				}
				must(t, f.Restore(ctx, r))
			},
			crash:  []want{{"alice", "alice-pw2", true}},
			commit: []want{{"alice", "alice-pw2", true}, {"alice", "alice-pw1", false}},
			revert: []want{{"alice", "alice-pw2", true}, {"alice", "alice-pw1", false}},
		},
		{
			// The commit re-creates alice: its password comes after the
			// action's, which applies to the committed account only.
			name: "delete and create again, password changed meanwhile",
			pending: func(t *testing.T, f *Files) {
				_, err := f.Delete(ctx, "alice")
				must(t, err)
				must(t, f.Create(ctx, "alice", "staff", "/bin/sh", "alice-pwnew"))
			},
			password: "alice-pw2",
			crash:    []want{{"alice", "alice-pw2", true}, {"alice", "alice-pwnew", false}},
			commit:   []want{{"alice", "alice-pwnew", true}, {"alice", "alice-pw2", false}},
			revert:   []want{{"alice", "alice-pw2", true}, {"alice", "alice-pwnew", false}},
		},
		{
			name:     "shell change, password changed meanwhile",
			pending:  func(t *testing.T, f *Files) { must(t, f.SetShell(ctx, "alice", "/bin/bash")) },
			password: "alice-pw2",
			crash:    []want{{"alice", "alice-pw2", true}},
			commit:   []want{{"alice", "alice-pw2", true}},
			revert:   []want{{"alice", "alice-pw2", true}},
		},
	} {
		for _, committed := range []bool{true, false} {
			t.Run(tc.name+map[bool]string{true: "/committed", false: "/reverted"}[committed], func(t *testing.T) {
				f := openFiles(t, FilesOptions{Scheme: SHA512, WriteBehind: true})
				must(t, f.Create(ctx, "alice", "staff", "/bin/sh", "alice-pw1"))
				f.Settle(true)
				must(t, f.Sync(ctx))

				tc.pending(t, f)
				if tc.password != "" {
					must(t, f.SetPassword(ctx, "alice", tc.password))
				}
				must(t, f.Sync(ctx)) // another commit's answer
				check := func(when string, a Accounts, ws []want) {
					t.Helper()
					for _, w := range ws {
						if ok, _, err := a.Verify(ctx, w.name, w.password); ok != w.ok || err != nil {
							t.Errorf("%s: Verify(%s, %s) = %v, %v; want %v", when, w.name, w.password, ok, err, w.ok)
						}
					}
				}
				check("on disk before Settle", reopen(t, f.Dir()), tc.crash)
				f.Settle(committed)
				must(t, f.Sync(ctx))
				ws := tc.revert
				if committed {
					ws = tc.commit
				}
				check("in memory", f, ws)
				check("on disk", reopen(t, f.Dir()), ws)
				if a, _, _ := reopen(t, f.Dir()).Lookup(ctx, "alice"); committed && a.Shell == "/bin/bash" != (tc.name == "shell change, password changed meanwhile") {
					t.Errorf("alice's shell on disk: %q", a.Shell)
				}
			})
		}
	}
}

// The UserPassword action on an account whose create is not committed
// finds no account: its User is not in the store either, and a password
// written with the committed accounts could not include it.
func TestFilesSetPasswordOfUncommittedCreate(t *testing.T) {
	ctx := context.Background()
	f := openFiles(t, FilesOptions{Scheme: SHA512, WriteBehind: true})
	must(t, f.Create(ctx, "bob", "ops", "/bin/sh", "bob-pass1"))
	if err := f.SetPassword(ctx, "bob", "bob-pass2"); !errors.Is(err, ErrNotFound) {
		t.Fatalf("SetPassword: %v; want ErrNotFound", err)
	}
	checkVerify(t, f, "bob", "bob-pass1", true, "ops")
	f.Settle(true)
	must(t, f.SetPassword(ctx, "bob", "bob-pass2"))
	checkVerify(t, reopen(t, f.Dir()), "bob", "bob-pass2", true, "ops")
}

func must(t *testing.T, err error) {
	t.Helper()
	if err != nil {
		t.Fatal(err)
	}
}
