package users

import (
	"bytes"
	"context"
	"path/filepath"
	"strings"
	"testing"

	"github.com/swmgr/swmgr/internal/accounts"
	"github.com/swmgr/swmgr/internal/backend"
	"github.com/swmgr/swmgr/internal/backend/sim"
	"github.com/swmgr/swmgr/internal/engine"
	"github.com/swmgr/swmgr/internal/engine/enginetest"
	"github.com/swmgr/swmgr/internal/model"
	"github.com/swmgr/swmgr/internal/store"
)

// newUserFixture is an engine whose simulated switch keeps accounts in
// files (sha512crypt, fast enough for tests).
func newUserFixture(t testing.TB) (*enginetest.Fixture, *accounts.Files) {
	t.Helper()
	dir := t.TempDir()
	acc, err := accounts.OpenFiles(filepath.Join(dir, "accounts"), accounts.FilesOptions{Scheme: accounts.SHA512})
	if err != nil {
		t.Fatal(err)
	}
	f := enginetest.Start(t, dir, enginetest.Options{Sim: sim.Options{Ports: 4, Version: "test", Accounts: acc, OwnAccounts: true, CLIShell: "/usr/bin/swmgr"}})
	return f, acc
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

func TestSetPassword(t *testing.T) {
	ctx := context.Background()
	f, acc := newUserFixture(t)
	f.MustApply(f.Edit(backend.Create, "User", user("alice", "users", "alice-password")))
	meta := engine.Meta{User: "alice", Addr: "192.0.2.9:4000", Source: "rest"}
	info := func() *engine.LogInfo {
		return &engine.LogInfo{API: "userpassword", Operation: "POST", Data: `{"Name":"alice","Password":"******"}`}
	}
	if err := SetPassword(ctx, f.E, acc, "alice", "second-password", meta, info()); err != nil {
		t.Fatal(err)
	}
	verify(t, acc, "alice", "alice-password", false)
	verify(t, acc, "alice", "second-password", true)
	for _, tc := range []struct {
		name, password string
		want           int
	}{{"nobody", "third-password", 404}, {"alice", "short", 400}} {
		if err := SetPassword(ctx, f.E, acc, tc.name, tc.password, meta, info()); enginetest.Status(err) != tc.want {
			t.Errorf("SetPassword(%s): %v; want %d", tc.name, err, tc.want)
		}
	}
	var log bytes.Buffer
	f.St.View(func(tx store.Txn) error {
		_, _, err := tx.Log(0, 100, func(seq uint64, entry []byte) error { log.Write(entry); log.WriteByte('\n'); return nil })
		return err
	})
	if n := strings.Count(log.String(), `"UserName":"alice"`); n != 3 || !strings.Contains(log.String(), `"Result":"Success"`) || !strings.Contains(log.String(), "no User named nobody") {
		t.Errorf("config log:\n%s", log.String())
	}
	if strings.Contains(log.String(), "second-password") || bytes.Contains(f.Dump(), []byte("second-password")) {
		t.Error("a password reached the store")
	}
	// A backend without accounts cannot run it.
	plain := enginetest.New(t, t.TempDir())
	plain.MustApply(plain.Edit(backend.Create, "User", user("alice", "users", "alice-password")))
	if err := SetPassword(ctx, plain.E, nil, "alice", "second-password", meta, nil); enginetest.Status(err) != 501 {
		t.Errorf("without accounts: %v", err)
	}
}

// With the account files written behind (as serve opens them), the
// UserPassword action is answered once the password is on disk.
func TestSetPasswordOnDiskWhenAnswered(t *testing.T) {
	ctx := context.Background()
	dir := t.TempDir()
	acc, err := accounts.OpenFiles(filepath.Join(dir, "accounts"), accounts.FilesOptions{Scheme: accounts.SHA512, WriteBehind: true})
	if err != nil {
		t.Fatal(err)
	}
	f := enginetest.Start(t, dir, enginetest.Options{Sim: sim.Options{Ports: 4, Version: "test", Accounts: acc, OwnAccounts: true, CLIShell: "/usr/bin/swmgr"}})
	f.MustApply(f.Edit(backend.Create, "User", user("alice", "users", "alice-password")))
	if err := SetPassword(ctx, f.E, acc, "alice", "second-password", engine.Meta{Source: "test"}, nil); err != nil {
		t.Fatal(err)
	}
	onDisk, err := accounts.OpenFiles(acc.Dir(), accounts.FilesOptions{Scheme: accounts.SHA512})
	if err != nil {
		t.Fatal(err)
	}
	verify(t, onDisk, "alice", "second-password", true)
}
