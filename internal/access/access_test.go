package access

import (
	"context"
	"errors"
	"path/filepath"
	"strings"
	"testing"

	"github.com/swmgr/swmgr/internal/accounts"
	"github.com/swmgr/swmgr/internal/engine/users"
	"github.com/swmgr/swmgr/internal/lifecycle"
	"github.com/swmgr/swmgr/internal/model"
	"github.com/swmgr/swmgr/internal/secrets"
	"github.com/swmgr/swmgr/internal/service"
	"github.com/swmgr/swmgr/internal/store"
)

// open runs the service on the simulated switch with the access half, as
// serve does.
func open(t *testing.T) *Access {
	t.Helper()
	dir := t.TempDir()
	st, err := store.Open(dir)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { st.Close() })
	box, err := secrets.Open(dir)
	if err != nil {
		t.Fatal(err)
	}
	acc, err := accounts.OpenFiles(filepath.Join(dir, "accounts"), accounts.FilesOptions{Scheme: accounts.SHA512})
	if err != nil {
		t.Fatal(err)
	}
	a, svc, err := Open(context.Background(), Options{}, service.Options{Store: st, Box: box, DataDir: dir, Version: "test", Dataplane: service.Sim, Ports: 2,
		Accounts: acc, OwnAccounts: true, CLIShell: "/bin/false", Lifecycle: lifecycle.Options{NoScheduler: true}})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { svc.Close() })
	return a
}

// TestFirstAdmin: the first admin is made once, its password asked only
// when no admin exists; a password source that fails, or a password the
// model refuses, stops the start with where the password came from.
func TestFirstAdmin(t *testing.T) {
	for _, tc := range []struct {
		name     string
		password func() (string, string, error)
		wantErr  string // "" for none
	}{
		{"made", func() (string, string, error) { return "first-admin-pw", "the test", nil }, ""},
		{"source fails", func() (string, string, error) { return "", "", errors.New("no password file") }, "no password file"},
		{"refused", func() (string, string, error) { return "short", "the test's file", nil }, `make the first admin "admin" (password from the test's file)`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			a := open(t)
			ctx := context.Background()
			err := a.FirstAdmin(ctx, tc.password)
			if tc.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tc.wantErr) {
					t.Fatalf("FirstAdmin: %v, want an error with %q", err, tc.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			all, err := users.List(ctx, a.svc.Engine)
			if err != nil || len(all) != 1 || all[0].Str("Name") != FirstAdminName || all[0].Str("Group") != model.AdminGroup {
				t.Fatalf("users after the first start: %v %v", all, err)
			}
			asked := false
			if err := a.FirstAdmin(ctx, func() (string, string, error) { asked = true; return "other-admin-pw", "again", nil }); err != nil || asked {
				t.Errorf("with an admin: err %v, password asked %v; want neither", err, asked)
			}
		})
	}
}
