package accounts

import (
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"
)

func openFiles(t *testing.T, opts FilesOptions) *Files {
	t.Helper()
	f, err := OpenFiles(filepath.Join(t.TempDir(), "etc"), opts)
	if err != nil {
		t.Fatal(err)
	}
	return f
}

// snapshot returns the four files' contents, byte for byte.
func snapshot(t *testing.T, dir string) map[string]string {
	t.Helper()
	out := map[string]string{}
	for _, n := range etcFiles {
		b, err := os.ReadFile(filepath.Join(dir, n))
		if err != nil {
			t.Fatal(err)
		}
		out[n] = string(b)
	}
	return out
}

// entries returns the four files' entries, sorted (a restored entry may
// come back at the end of its file).
func entries(t *testing.T, dir string) string {
	t.Helper()
	var out []string
	for n, s := range snapshot(t, dir) {
		for _, l := range strings.Split(strings.TrimSpace(s), "\n") {
			out = append(out, n+": "+l)
		}
	}
	slices.Sort(out)
	return strings.Join(out, "\n")
}

func line(t *testing.T, dir, file, name string) string {
	t.Helper()
	b, err := os.ReadFile(filepath.Join(dir, file))
	if err != nil {
		t.Fatal(err)
	}
	for _, l := range strings.Split(string(b), "\n") {
		if strings.HasPrefix(l, name+":") {
			return l
		}
	}
	return ""
}

func TestFilesLifecycle(t *testing.T) {
	ctx := context.Background()
	for _, tc := range []struct {
		scheme Scheme
		prefix string
	}{{Yescrypt, "$y$j9T$"}, {SHA512, "$6$"}} {
		t.Run(string(tc.scheme), func(t *testing.T) {
			f := openFiles(t, FilesOptions{Scheme: tc.scheme})
			dir := f.Dir()
			if fi, err := os.Stat(dir); err != nil || fi.Mode().Perm() != 0o700 {
				t.Fatalf("dir mode: %v %v", fi.Mode(), err)
			}
			if err := f.Create(ctx, "alice", "staff", "/bin/bash", "correct-horse"); err != nil {
				t.Fatal(err)
			}
			if got := line(t, dir, passwdFile, "alice"); got != "alice:x:1000:1000::/home/alice:/bin/bash" {
				t.Errorf("passwd: %q", got)
			}
			if got := line(t, dir, groupFile, "staff"); got != "staff:x:1000:" {
				t.Errorf("group: %q", got)
			}
			if got := line(t, dir, gshadowFile, "staff"); got != "staff:!::" {
				t.Errorf("gshadow: %q", got)
			}
			sh := strings.Split(line(t, dir, shadowFile, "alice"), ":")
			if len(sh) != 9 || !strings.HasPrefix(sh[1], tc.prefix) {
				t.Fatalf("shadow: %q", sh)
			}
			for _, n := range []string{shadowFile, gshadowFile} {
				if fi, _ := os.Stat(filepath.Join(dir, n)); fi.Mode().Perm() != 0o600 {
					t.Errorf("%s mode %v", n, fi.Mode())
				}
			}
			checkVerify(t, f, "alice", "correct-horse", true, "staff")
			checkVerify(t, f, "alice", "wrong-horse!", false, "")
			checkVerify(t, f, "nobody", "correct-horse", false, "")

			// A second user in an existing group; Members.
			if err := f.Create(ctx, "bob", "users", "/usr/bin/swmgr", "battery-staple"); err != nil {
				t.Fatal(err)
			}
			if a, ok, _ := f.Lookup(ctx, "bob"); !ok || a.GID != 100 || a.Group != "users" || a.UID != 1001 || a.Shell != "/usr/bin/swmgr" {
				t.Errorf("bob: %+v %v", a, ok)
			}
			if m, _ := f.Members(ctx, "staff"); len(m) != 1 || m[0] != "alice" {
				t.Errorf("members: %v", m)
			}

			// Shell and password changes.
			if err := f.SetShell(ctx, "alice", "/usr/bin/swmgr"); err != nil {
				t.Fatal(err)
			}
			if a, _, _ := f.Lookup(ctx, "alice"); a.Shell != "/usr/bin/swmgr" {
				t.Errorf("shell: %q", a.Shell)
			}
			if err := f.SetPassword(ctx, "alice", "new-password-1"); err != nil {
				t.Fatal(err)
			}
			checkVerify(t, f, "alice", "correct-horse", false, "")
			checkVerify(t, f, "alice", "new-password-1", true, "staff")

			// Reopening reads the same files.
			g, err := OpenFiles(dir, FilesOptions{})
			if err != nil {
				t.Fatal(err)
			}
			checkVerify(t, g, "alice", "new-password-1", true, "staff")

			// Delete removes the account and its emptied group; Restore
			// puts back exactly what was there.
			before := entries(t, dir)
			r, err := f.Delete(ctx, "alice")
			if err != nil {
				t.Fatal(err)
			}
			after := snapshot(t, dir)
			for n, s := range after {
				if strings.Contains(s, "alice") || strings.Contains(s, "staff") {
					t.Errorf("%s still names alice or staff:\n%s", n, s)
				}
			}
			for _, s := range []string{fmt.Sprint(r), fmt.Sprint(*r), fmt.Sprintf("%v %+v %#v %s %+v", r, r, r, r, *r)} {
				if strings.Contains(s, "$") {
					t.Errorf("a Removed prints its hash: %s", s)
				}
			}
			checkVerify(t, f, "alice", "new-password-1", false, "")
			if err := f.Restore(ctx, r); err != nil {
				t.Fatal(err)
			}
			if got := entries(t, dir); got != before {
				t.Errorf("restore:\nwant %v\ngot  %v", before, got)
			}
			checkVerify(t, f, "alice", "new-password-1", true, "staff")

			// The group users is a system group and stays.
			if _, err := f.Delete(ctx, "bob"); err != nil {
				t.Fatal(err)
			}
			if line(t, dir, groupFile, "users") == "" {
				t.Error("the system group users was removed with bob")
			}
		})
	}
}

func checkVerify(t *testing.T, a Accounts, name, password string, want bool, group string) {
	t.Helper()
	ok, g, err := a.Verify(context.Background(), name, password)
	if err != nil || ok != want || g != group {
		t.Errorf("Verify(%s): %v %q %v; want %v %q", name, ok, g, err, want, group)
	}
}

func TestFilesErrors(t *testing.T) {
	ctx := context.Background()
	f := openFiles(t, FilesOptions{Scheme: SHA512})
	if err := f.Create(ctx, "alice", "users", "/bin/bash", "password1"); err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		name                        string
		user, group, shell, passwrd string
		want                        error
	}{
		{"duplicate", "alice", "users", "/bin/bash", "password1", ErrExists},
		{"upper case", "Alice", "users", "/bin/bash", "password1", ErrInvalid},
		{"option-like", "-alice", "users", "/bin/bash", "password1", ErrInvalid},
		{"bad group", "carol", "a:b", "/bin/bash", "password1", ErrInvalid},
		{"relative shell", "carol", "users", "bash", "password1", ErrInvalid},
		{"short password", "carol", "users", "/bin/bash", "short", ErrInvalid},
		{"newline in password", "carol", "users", "/bin/bash", "pass\nword1", ErrInvalid},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if err := f.Create(ctx, tc.user, tc.group, tc.shell, tc.passwrd); !errors.Is(err, tc.want) {
				t.Errorf("got %v, want %v", err, tc.want)
			}
		})
	}
	if err := f.SetPassword(ctx, "nobody", "password1"); !errors.Is(err, ErrNotFound) {
		t.Errorf("SetPassword of nobody: %v", err)
	}
	if err := f.SetShell(ctx, "nobody", "/bin/sh"); !errors.Is(err, ErrNotFound) {
		t.Errorf("SetShell of nobody: %v", err)
	}
	if _, err := f.Delete(ctx, "nobody"); !errors.Is(err, ErrNotFound) {
		t.Errorf("Delete of nobody: %v", err)
	}
}

// A change that cannot replace every file it touches leaves all of them,
// and the accounts, as they were.
func TestFilesAllOrNothing(t *testing.T) {
	ctx := context.Background()
	for _, failAt := range []string{passwdFile, shadowFile, groupFile, gshadowFile} {
		t.Run(failAt, func(t *testing.T) {
			f := openFiles(t, FilesOptions{Scheme: SHA512})
			before := snapshot(t, f.Dir())
			f.replaceHook = func(name string) error {
				if name == failAt {
					return errors.New("injected")
				}
				return nil
			}
			if err := f.Create(ctx, "alice", "staff", "/bin/bash", "password1"); err == nil {
				t.Fatal("create succeeded")
			}
			if got := snapshot(t, f.Dir()); fmt.Sprint(got) != fmt.Sprint(before) {
				t.Errorf("files changed:\n%v\n%v", before, got)
			}
			if _, ok, _ := f.Lookup(ctx, "alice"); ok {
				t.Error("alice exists")
			}
			entries, _ := os.ReadDir(f.Dir())
			if len(entries) != 4 {
				t.Errorf("left-over files: %v", entries)
			}
			f.replaceHook = nil
			if err := f.Create(ctx, "alice", "staff", "/bin/bash", "password1"); err != nil {
				t.Fatal(err)
			}
		})
	}
}

func TestVerifyRefusesLockedAndExpired(t *testing.T) {
	ctx := context.Background()
	now := time.Date(2026, 11, 23, 12, 0, 0, 0, time.UTC)
	f := openFiles(t, FilesOptions{Scheme: SHA512, Now: func() time.Time { return now }})
	for _, n := range []string{"locked", "expired", "fine"} {
		if err := f.Create(ctx, n, "users", "/bin/bash", "password1"); err != nil {
			t.Fatal(err)
		}
	}
	next := f.cur.Load().clone()
	next.shadow[next.shadow.find("locked")][1] = "!" + next.shadow[next.shadow.find("locked")][1]
	next.shadow[next.shadow.find("expired")][7] = daysNow(now.Add(-24 * time.Hour))
	next.shadow[next.shadow.find("fine")][7] = daysNow(now.Add(48 * time.Hour))
	if err := f.commit(next); err != nil {
		t.Fatal(err)
	}
	checkVerify(t, f, "locked", "password1", false, "")
	checkVerify(t, f, "expired", "password1", false, "")
	checkVerify(t, f, "fine", "password1", true, "users")
}

// Hashes interoperate with the system's crypt(3) (libxcrypt), through perl.
func TestHashInteroperatesWithLibxcrypt(t *testing.T) {
	perl, err := exec.LookPath("perl")
	if err != nil {
		t.Skip("perl is not installed; cannot call the system's crypt(3)")
	}
	crypt := func(password, salt string) string {
		out, err := exec.Command(perl, "-e", `print crypt($ARGV[0], $ARGV[1])`, password, salt).Output()
		if err != nil {
			t.Fatal(err)
		}
		return string(out)
	}
	var m matcher
	for _, s := range []Scheme{Yescrypt, SHA512} {
		h, err := Hash("interop-pass", s)
		if err != nil {
			t.Fatal(err)
		}
		if got := crypt("interop-pass", h); got != h {
			t.Errorf("%s: libxcrypt computes %q for our %q", s, got, h)
		}
	}
	for _, salt := range []string{"$y$j9T$F5Jx5fExrKuPp53xLKQ..1$", "$6$saltsaltsalt$"} {
		h := crypt("interop-pass", salt)
		if ok, err := m.match(h, "interop-pass"); !ok || err != nil {
			t.Errorf("libxcrypt hash %q does not match: %v", h, err)
		}
		if ok, _ := m.match(h, "other-pass"); ok {
			t.Errorf("libxcrypt hash %q matches a wrong password", h)
		}
	}
	for _, h := range []string{"", "*", "!", "!$6$x$y", "$1$abc$def", "plain"} {
		if ok, err := m.match(h, "x"); ok || err != nil {
			t.Errorf("match(%q) = %v, %v", h, ok, err)
		}
	}
}

func TestObserve(t *testing.T) {
	ctx := context.Background()
	var seen []string
	a := Observe(openFiles(t, FilesOptions{Scheme: SHA512}), func(n string) { seen = append(seen, n) })
	a.Create(ctx, "alice", "users", "/bin/bash", "password1")
	a.SetShell(ctx, "alice", "/bin/sh")
	a.SetPassword(ctx, "alice", "password2")
	a.Verify(ctx, "alice", "password2")
	r, _ := a.Delete(ctx, "alice")
	a.Restore(ctx, r)
	if got := strings.Join(seen, ","); got != "alice,alice,alice,alice,alice" {
		t.Errorf("changes seen: %s", got)
	}
}
