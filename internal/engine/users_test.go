package engine

import (
	"bytes"
	"context"
	"errors"
	"io"
	"log/slog"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/swmgr/swmgr/internal/accounts"
	"github.com/swmgr/swmgr/internal/backend"
	"github.com/swmgr/swmgr/internal/backend/sim"
	"github.com/swmgr/swmgr/internal/model"
	"github.com/swmgr/swmgr/internal/secrets"
	"github.com/swmgr/swmgr/internal/store"
)

// newUserFixture is a fixture whose simulated switch keeps accounts in
// files (sha512crypt, fast enough for tests), written behind as serve does.
func newUserFixture(t testing.TB, wrap ...func(backend.Backend) backend.Backend) (*fixture, *accounts.Files) {
	t.Helper()
	return newUserFixtureAt(t, t.TempDir(), wrap...)
}

// newUserFixtureAt is newUserFixture on the data directory dir: a restart
// when an engine ran there before.
func newUserFixtureAt(t testing.TB, dir string, wrap ...func(backend.Backend) backend.Backend) (*fixture, *accounts.Files) {
	t.Helper()
	acc, err := accounts.OpenFiles(filepath.Join(dir, "accounts"), accounts.FilesOptions{Scheme: accounts.SHA512, WriteBehind: true})
	if err != nil {
		t.Fatal(err)
	}
	return newAccountsFixture(t, dir, acc, true, wrap...), acc
}

// newAccountsFixture is a fixture on dir whose simulated switch applies
// Users to acc; own says acc belongs to the switch alone.
func newAccountsFixture(t testing.TB, dir string, acc accounts.Accounts, own bool, wrap ...func(backend.Backend) backend.Backend) *fixture {
	t.Helper()
	var err error
	f := &fixture{t: t, dir: dir}
	f.sim = sim.New(sim.Options{Ports: 4, Version: "test", Accounts: acc, OwnAccounts: own, CLIShell: "/usr/bin/swmgr", Fault: func(c backend.Change) error {
		if f.fault != nil {
			return f.fault(c)
		}
		return nil
	}})
	if f.st, err = store.Open(dir); err != nil {
		t.Fatal(err)
	}
	box, err := secrets.Open(dir)
	if err != nil {
		t.Fatal(err)
	}
	var b backend.Backend = f.sim
	for _, w := range wrap {
		b = w(b)
	}
	f.e = New(model.Builtin(), faultyStore{f.st, f}, b, box, slog.New(slog.NewTextHandler(io.Discard, nil)))
	if err := f.e.Start(context.Background()); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { f.e.Close(); f.st.Close() })
	return f
}

// faultyStore is a store whose writes fail while its fixture's
// updateFault says so.
type faultyStore struct {
	*store.Store
	f *fixture
}

func (s faultyStore) Update(fn func(tx store.Txn) error) error {
	if s.f.updateFault != nil {
		if err := s.f.updateFault(); err != nil {
			return err
		}
	}
	return s.Store.Update(fn)
}

func (s faultyStore) Bulk(objects, rest func(tx store.Txn) error) error {
	if s.f.updateFault != nil {
		if err := s.f.updateFault(); err != nil {
			return err
		}
	}
	return s.Store.Bulk(objects, rest)
}

func user(name, group, password string) model.Object {
	return model.Object{"Name": name, "Group": group, "Password": password}
}

func verify(t *testing.T, acc accounts.Accounts, name, password string, want bool) {
	t.Helper()
	ok, _, err := acc.Verify(context.Background(), name, password)
	if ok != want || err != nil {
		t.Errorf("Verify(%s) = %v, %v; want %v", name, ok, err, want)
	}
}

func TestUsersDriveAccounts(t *testing.T) {
	ctx := context.Background()
	f, acc := newUserFixture(t)
	f.mustApply(f.edit(backend.Create, "User", user("root1", "admin", "admin-password")))
	f.mustApply(f.edit(backend.Create, "User", model.Object{"Name": "alice", "Group": "netops", "Password": "alice-password", "DefaultShell": "Bash"}))
	verify(t, acc, "alice", "alice-password", true)
	if a, ok, _ := acc.Lookup(ctx, "alice"); !ok || a.Group != "netops" || a.Shell != "/bin/bash" {
		t.Errorf("alice: %+v", a)
	}
	if a, _, _ := acc.Lookup(ctx, "root1"); a.Shell != "/usr/bin/swmgr" {
		t.Errorf("CLI shell: %q", a.Shell)
	}

	// Only Access and DefaultShell change; anything else says how.
	f.mustApply(f.edit(backend.Update, "User", model.Object{"Name": "alice", "DefaultShell": "CLI", "Access": "Bash"}))
	if a, _, _ := acc.Lookup(ctx, "alice"); a.Shell != "/usr/bin/swmgr" {
		t.Errorf("shell after update: %q", a.Shell)
	}
	for _, fields := range []model.Object{{"Name": "alice", "Group": "admin"}, {"Name": "alice", "Password": "new-password"}} {
		_, err := f.apply(f.edit(backend.Update, "User", fields))
		if status(err) != 400 || !strings.Contains(err.Error(), "delete and re-create") {
			t.Errorf("update %v: %v", fields, err)
		}
	}

	// Creates that the model or the accounts refuse.
	for _, tc := range []struct {
		fields model.Object
		want   int
	}{
		{user("Bad", "users", "password1"), 400},
		{user("bob", "users", "short"), 400},
		{user("bob", "users", ""), 400},
		{user("bob", "users", "pass\nword1"), 400},
		{user("alice", "users", "password1"), 409},
	} {
		if _, err := f.apply(f.edit(backend.Create, "User", tc.fields)); status(err) != tc.want {
			t.Errorf("create %v: %v; want %d", tc.fields["Name"], err, tc.want)
		}
	}

	f.mustApply(f.edit(backend.Delete, "User", model.Object{"Name": "alice"}))
	if _, ok, _ := acc.Lookup(ctx, "alice"); ok {
		t.Error("alice's account outlived her User")
	}
	if m, _ := acc.Members(ctx, "netops"); len(m) != 0 {
		t.Errorf("netops: %v", m)
	}

	// Neither the store nor the account files outside shadow hold a
	// password or a hash.
	shadow, _ := os.ReadFile(filepath.Join(acc.Dir(), "shadow"))
	hash := strings.Split(strings.Split(string(shadow), "root1:")[1], ":")[0]
	for _, secret := range []string{"admin-password", "alice-password", hash} {
		if bytes.Contains(f.dump(), []byte(secret)) {
			t.Errorf("the store holds %q", secret)
		}
	}
}

func TestLastAdminCannotBeDeleted(t *testing.T) {
	f, acc := newUserFixture(t)
	f.mustApply(f.edit(backend.Create, "User", user("root1", "admin", "admin-password")))
	_, err := f.apply(f.edit(backend.Delete, "User", model.Object{"Name": "root1"}))
	if status(err) != 409 || !strings.Contains(err.Error(), "last user of group admin") {
		t.Fatalf("delete of the last admin: %v", err)
	}
	verify(t, acc, "root1", "admin-password", true)
	// Replacing it in the same commit is fine; so is deleting one of two.
	f.mustApply(f.edit(backend.Delete, "User", model.Object{"Name": "root1"}), f.edit(backend.Create, "User", user("root2", "admin", "admin-password2")))
	f.mustApply(f.edit(backend.Create, "User", user("root3", "admin", "admin-password3")))
	f.mustApply(f.edit(backend.Delete, "User", model.Object{"Name": "root2"}))
	if _, err := f.apply(f.edit(backend.Delete, "User", model.Object{"Name": "root3"})); status(err) != 409 {
		t.Errorf("delete of the last admin: %v", err)
	}
}

// A commit that fails after deleting (or creating) an account puts the
// account back as it was, password hash included.
func TestUserChangesAreAllOrNothing(t *testing.T) {
	f, acc := newUserFixture(t)
	f.mustApply(f.edit(backend.Create, "User", user("root1", "admin", "admin-password")))
	f.mustApply(f.edit(backend.Create, "User", user("alice", "netops", "alice-password")))
	before := f.dump()
	f.fault = func(c backend.Change) error {
		if c.Kind.Name == "NtpServer" {
			return errors.New("injected hardware failure")
		}
		return nil
	}
	ntp := f.edit(backend.Create, "NtpServer", model.Object{"IpAddr": "192.0.2.1"})
	if _, err := f.apply(f.edit(backend.Delete, "User", model.Object{"Name": "alice"}), f.edit(backend.Create, "User", user("bob", "netops", "bob-password")), ntp); err == nil {
		t.Fatal("the commit succeeded")
	}
	verify(t, acc, "alice", "alice-password", true)
	if a, ok, _ := acc.Lookup(context.Background(), "alice"); !ok || a.Group != "netops" {
		t.Errorf("alice after undo: %+v %v", a, ok)
	}
	if _, ok, _ := acc.Lookup(context.Background(), "bob"); ok {
		t.Error("bob's account outlived the failed commit")
	}
	if !bytes.Equal(f.dump(), before) {
		t.Error("the store changed")
	}
}
