package accounts

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/swmgr/swmgr/internal/accounts/accountstest"
)

// prefixRoot makes a root prefix with account files of its own
// (accountstest), for OS to act on with -P. The tools need root even then.
func prefixRoot(t *testing.T) string {
	t.Helper()
	if os.Geteuid() != 0 {
		t.Skip("the OS account tools (useradd, usermod, ...) need root, even under a prefix; run as root (CI does)")
	}
	for _, tool := range []string{"useradd", "usermod", "userdel", "groupadd", "groupdel"} {
		if _, err := (&OS{}).tool(tool); err != nil {
			t.Skipf("%v", err)
		}
	}
	return accountstest.Prefix(t)
}

func TestOSUnderPrefix(t *testing.T) {
	ctx := context.Background()
	root := prefixRoot(t)
	etcDir := filepath.Join(root, "etc")
	for _, scheme := range []Scheme{Yescrypt, SHA512} {
		t.Run(string(scheme), func(t *testing.T) {
			o := &OS{Prefix: root, Scheme: scheme}
			if err := o.Create(ctx, "swmgrtu", "swmgrtg", "/bin/bash", "first-password"); err != nil {
				t.Fatal(err)
			}
			want := map[Scheme]string{Yescrypt: "$y$", SHA512: "$6$"}[scheme]
			if sh := line(t, etcDir, shadowFile, "swmgrtu"); !strings.HasPrefix(strings.Split(sh, ":")[1], want) {
				t.Errorf("shadow entry %q: want a %s hash", sh, want)
			}
			if line(t, etcDir, groupFile, "swmgrtg") == "" {
				t.Error("group swmgrtg was not made")
			}
			if _, err := os.Stat(filepath.Join(root, "home", "swmgrtu")); err != nil {
				t.Errorf("home: %v", err)
			}
			checkVerify(t, o, "swmgrtu", "first-password", true, "swmgrtg")
			checkVerify(t, o, "swmgrtu", "wrong-password", false, "")
			if err := o.Create(ctx, "swmgrtu", "swmgrtg", "/bin/bash", "first-password"); !errors.Is(err, ErrExists) {
				t.Errorf("second create: %v", err)
			}
			if err := o.SetShell(ctx, "swmgrtu", "/usr/bin/swmgr"); err != nil {
				t.Fatal(err)
			}
			if a, _, _ := o.Lookup(ctx, "swmgrtu"); a.Shell != "/usr/bin/swmgr" {
				t.Errorf("shell %q", a.Shell)
			}
			if err := o.SetPassword(ctx, "swmgrtu", "second-password"); err != nil {
				t.Fatal(err)
			}
			checkVerify(t, o, "swmgrtu", "first-password", false, "")
			checkVerify(t, o, "swmgrtu", "second-password", true, "swmgrtg")

			r, err := o.Delete(ctx, "swmgrtu")
			if err != nil {
				t.Fatal(err)
			}
			noTrace(t, root, "swmgrtu", "swmgrtg")
			if err := o.Restore(ctx, r); err != nil {
				t.Fatal(err)
			}
			checkVerify(t, o, "swmgrtu", "second-password", true, "swmgrtg")
			if _, err := o.Delete(ctx, "swmgrtu"); err != nil {
				t.Fatal(err)
			}
			noTrace(t, root, "swmgrtu", "swmgrtg")
			if _, err := o.Delete(ctx, "swmgrtu"); !errors.Is(err, ErrNotFound) {
				t.Errorf("second delete: %v", err)
			}
		})
	}
}

func noTrace(t *testing.T, root, user, group string) {
	t.Helper()
	for _, n := range append(etcFiles, backupFiles...) {
		data, _ := os.ReadFile(filepath.Join(root, "etc", n))
		for _, l := range strings.Split(string(data), "\n") {
			f := strings.Split(l, ":")
			if f[0] == user || f[0] == group || len(f) > 3 && strings.Contains(","+f[len(f)-1]+",", ","+user+",") {
				t.Errorf("%s still has %q", n, l)
			}
		}
	}
	if _, err := os.Stat(filepath.Join(root, "home", user)); !os.IsNotExist(err) {
		t.Errorf("home of %s: %v", user, err)
	}
}

// A tool that fails half-way through a create leaves neither the account
// nor the group it made.
func TestOSCreateFailureLeavesNothing(t *testing.T) {
	ctx := context.Background()
	root := prefixRoot(t)
	tools := t.TempDir()
	for _, tool := range []string{"useradd", "userdel", "groupadd", "groupdel"} {
		p, _ := (&OS{}).tool(tool)
		if err := os.Symlink(p, filepath.Join(tools, tool)); err != nil {
			t.Fatal(err)
		}
	}
	usermod, _ := (&OS{}).tool("usermod")
	script := "#!/bin/sh\nfor a; do [ \"$a\" = -p ] && { echo 'injected failure' >&2; exit 1; }; done\nexec " + usermod + " \"$@\"\n"
	if err := os.WriteFile(filepath.Join(tools, "usermod"), []byte(script), 0o755); err != nil {
		t.Fatal(err)
	}
	before := entries(t, filepath.Join(root, "etc"))
	o := &OS{Prefix: root, Tools: tools, Scheme: SHA512}
	err := o.Create(ctx, "swmgrtf", "swmgrtfg", "/bin/bash", "some-password")
	var te *ToolError
	if !errors.As(err, &te) || te.Tool != "usermod" || !strings.Contains(err.Error(), "injected failure") {
		t.Fatalf("create: %v", err)
	}
	if strings.Contains(err.Error(), "$6$") || strings.Contains(err.Error(), "some-password") {
		t.Errorf("the error shows the hash or the password: %v", err)
	}
	if got := entries(t, filepath.Join(root, "etc")); got != before {
		t.Errorf("account files changed:\n%s", got)
	}
	noTrace(t, root, "swmgrtf", "swmgrtfg")
}

// TestOSReconcile: at start the accounts swmgr made on a host (their
// comment is Marker) become those of the stored Users, and no other
// account of the host is touched, whatever its name.
func TestOSReconcile(t *testing.T) {
	ctx := context.Background()
	root := prefixRoot(t)
	etcDir := filepath.Join(root, "etc")
	o := &OS{Prefix: root, Scheme: SHA512}
	// Made by swmgr: kept (right), kept (shell and group wrong), removed
	// (no User has it; its group goes with it). Made by hand: a User's
	// name (left alone), and one no User has (left alone).
	for _, a := range []struct{ name, group, shell string }{
		{"swmgrrkeep", "swmgrrg", "/bin/bash"},
		{"swmgrrfix", "swmgrrg", "/bin/sh"},
		{"swmgrrgone", "swmgrrgoneg", "/bin/bash"},
	} {
		if err := o.Create(ctx, a.name, a.group, a.shell, "some-password"); err != nil {
			t.Fatal(err)
		}
	}
	for _, name := range []string{"swmgrrhand", "swmgrrhost"} {
		if err := o.run(ctx, "", "useradd", true, "-m", "-c", "made by hand", "-g", "users", "-s", "/bin/bash", name); err != nil {
			t.Fatal(err)
		}
	}
	if f := strings.Split(line(t, etcDir, passwdFile, "swmgrrkeep"), ":"); f[4] != Marker {
		t.Fatalf("an account OS made has comment %q, want %q", f[4], Marker)
	}
	keepHash := strings.Split(line(t, etcDir, shadowFile, "swmgrrkeep"), ":")[1]
	want := []Account{
		{Name: "swmgrrkeep", Group: "swmgrrg", Shell: "/bin/bash"},
		{Name: "swmgrrfix", Group: "swmgrrg2", Shell: "/usr/bin/swmgr"},
		{Name: "swmgrrnew", Group: "swmgrrg", Shell: "/bin/bash"},
		{Name: "swmgrrhand", Group: "swmgrrg", Shell: "/usr/bin/swmgr"},
	}
	did, err := o.Reconcile(ctx, want)
	if err != nil {
		t.Fatal(err)
	}
	var said []string
	for _, r := range did {
		said = append(said, r.Account+": "+r.Did)
	}
	t.Logf("repairs:\n%s", strings.Join(said, "\n"))
	for _, w := range []string{"swmgrrgone: removed", "swmgrrnew: made", "swmgrrfix: set the primary group", "swmgrrfix: set the login shell", "swmgrrhand: left"} {
		if !slices.ContainsFunc(said, func(s string) bool { return strings.HasPrefix(s, w) }) {
			t.Errorf("no repair %q reported", w)
		}
	}
	if len(did) != 5 {
		t.Errorf("%d repairs, want 5", len(did))
	}
	noTrace(t, root, "swmgrrgone", "swmgrrgoneg")
	for _, c := range []struct{ name, group, shell, comment string }{
		{"swmgrrkeep", "swmgrrg", "/bin/bash", Marker},
		{"swmgrrfix", "swmgrrg2", "/usr/bin/swmgr", Marker},
		{"swmgrrnew", "swmgrrg", "/bin/bash", Marker},
		{"swmgrrhand", "users", "/bin/bash", "made by hand"},
		{"swmgrrhost", "users", "/bin/bash", "made by hand"},
	} {
		a, ok, err := o.Lookup(ctx, c.name)
		if err != nil || !ok {
			t.Errorf("%s: %v %v", c.name, ok, err)
			continue
		}
		if a.Group != c.group || a.Shell != c.shell {
			t.Errorf("%s: group %s shell %s, want %s %s", c.name, a.Group, a.Shell, c.group, c.shell)
		}
		if f := strings.Split(line(t, etcDir, passwdFile, c.name), ":"); f[4] != c.comment {
			t.Errorf("%s: comment %q, want %q", c.name, f[4], c.comment)
		}
	}
	if h := strings.Split(line(t, etcDir, shadowFile, "swmgrrkeep"), ":")[1]; h != keepHash {
		t.Errorf("the password of an account that was right changed")
	}
	if h := strings.Split(line(t, etcDir, shadowFile, "swmgrrnew"), ":")[1]; !strings.HasPrefix(h, "!") {
		t.Errorf("a made account's password is %q, want locked", h)
	}
	checkVerify(t, o, "swmgrrnew", "some-password", false, "")
	// A second pass has nothing left to do but the account made by hand.
	did, err = o.Reconcile(ctx, want)
	if err != nil || len(did) != 1 || did[0].Account != "swmgrrhand" {
		t.Errorf("second reconcile: %v %v", did, err)
	}
}

// Two swmgr on one host (two data directories: two Owners) each reconcile
// the accounts they made, and leave the other's alone: neither removes the
// other's account at its start, nor takes it over for a User of its own.
func TestOSReconcileLeavesAnotherOwners(t *testing.T) {
	ctx := context.Background()
	root := prefixRoot(t)
	etcDir := filepath.Join(root, "etc")
	a := &OS{Prefix: root, Scheme: SHA512, Owner: "00000000000000aa"}
	b := &OS{Prefix: root, Scheme: SHA512, Owner: "00000000000000bb"}
	if err := a.Create(ctx, "swmgroa", "users", "/bin/bash", "some-password"); err != nil {
		t.Fatal(err)
	}
	if f := strings.Split(line(t, etcDir, passwdFile, "swmgroa"), ":"); f[4] != "swmgr 00000000000000aa" {
		t.Fatalf("comment %q, want %q", f[4], a.Comment())
	}
	// b starts with no Users, then with a User of a's account's name.
	for _, want := range [][]Account{nil, {{Name: "swmgroa", Group: "admin", Shell: "/usr/bin/swmgr"}}} {
		did, err := b.Reconcile(ctx, want)
		if err != nil {
			t.Fatal(err)
		}
		if len(did) != len(want) || len(did) == 1 && !strings.Contains(did[0].Did, "left account swmgroa as it is") {
			t.Errorf("b's repairs with Users %v: %+v", want, did)
		}
		acc, ok, err := a.Lookup(ctx, "swmgroa")
		if err != nil || !ok || acc.Group != "users" || acc.Shell != "/bin/bash" {
			t.Fatalf("a's account after b's reconcile: %+v %v %v", acc, ok, err)
		}
	}
	checkVerify(t, a, "swmgroa", "some-password", true, "users")
	// An account marked before accounts carried a tag ("swmgr" alone) is
	// the swmgr's whose User names it, and takes its tag; one that no User
	// names is left alone.
	for _, name := range []string{"swmgrolegacy", "swmgrolone"} {
		if err := b.run(ctx, "", "useradd", true, "-m", "-c", Marker, "-g", "users", "-s", "/bin/bash", name); err != nil {
			t.Fatal(err)
		}
	}
	did, err := b.Reconcile(ctx, []Account{{Name: "swmgrolegacy", Group: "users", Shell: "/bin/bash"}})
	if err != nil || len(did) != 1 || !strings.HasPrefix(did[0].Did, "marked account swmgrolegacy") {
		t.Errorf("b's reconcile of a legacy account: %+v %v", did, err)
	}
	for name, comment := range map[string]string{"swmgrolegacy": b.Comment(), "swmgrolone": Marker, "swmgroa": a.Comment()} {
		if f := strings.Split(line(t, etcDir, passwdFile, name), ":"); len(f) < 5 || f[4] != comment {
			t.Errorf("%s: passwd entry %q, want the comment %q", name, f, comment)
		}
	}
	// a's own reconcile still removes its account that no User has.
	did, err = a.Reconcile(ctx, nil)
	if err != nil || len(did) != 1 || did[0].Account != "swmgroa" {
		t.Errorf("a's reconcile: %+v %v", did, err)
	}
	noTrace(t, root, "swmgroa", "swmgroa")
}

// With Groups, an account is made in those groups only: Create refuses any
// other (ErrInvalid) and makes nothing; Reconcile neither makes nor moves
// an account into another, and says so.
func TestOSGroupsAllowlist(t *testing.T) {
	ctx := context.Background()
	root := prefixRoot(t)
	etcDir := filepath.Join(root, "etc")
	o := &OS{Prefix: root, Scheme: SHA512, Groups: []string{"admin", "operator", "users"}}
	if err := o.run(ctx, "", "groupadd", true, "ssl-cert"); err != nil {
		t.Fatal(err)
	}
	for _, g := range []string{"ssl-cert", "swmgrgnew", "root"} {
		err := o.Create(ctx, "swmgrgbad", g, "/bin/bash", "some-password")
		if !errors.Is(err, ErrInvalid) || !strings.Contains(err.Error(), "admin, operator, users") {
			t.Errorf("group %s: %v", g, err)
		}
		if line(t, etcDir, passwdFile, "swmgrgbad") != "" {
			t.Fatalf("group %s: the account was made", g)
		}
	}
	if line(t, etcDir, groupFile, "swmgrgnew") != "" {
		t.Error("the group was made")
	}
	if err := o.Create(ctx, "swmgrgok", "operator", "/bin/bash", "some-password"); err != nil {
		t.Fatal(err)
	}
	did, err := o.Reconcile(ctx, []Account{
		{Name: "swmgrgok", Group: "ssl-cert", Shell: "/bin/bash"},
		{Name: "swmgrgmiss", Group: "ssl-cert", Shell: "/bin/bash"},
	})
	if err != nil {
		t.Fatal(err)
	}
	if len(did) != 2 || !strings.Contains(did[0].Did, "neither made nor changed") || !strings.Contains(did[1].Did, "neither made nor changed") {
		t.Errorf("repairs: %+v", did)
	}
	if line(t, etcDir, passwdFile, "swmgrgmiss") != "" {
		t.Error("Reconcile made an account in ssl-cert")
	}
	if f := strings.Split(line(t, etcDir, passwdFile, "swmgrgok"), ":"); f[3] == strings.Split(line(t, etcDir, groupFile, "ssl-cert"), ":")[2] {
		t.Error("Reconcile moved an account into ssl-cert")
	}
}
