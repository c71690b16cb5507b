package engine

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/swmgr/swmgr/internal/accounts"
	"github.com/swmgr/swmgr/internal/apierr"
	"github.com/swmgr/swmgr/internal/backend"
	"github.com/swmgr/swmgr/internal/model"
)

// userSyncBackend is a backend whose User driver's Sync goes through sync,
// which is given the driver's own.
type userSyncBackend struct {
	backend.Backend
	sync func(ctx context.Context, inner func(context.Context) error) error
}

func (b userSyncBackend) Drivers() map[string]*backend.Driver {
	ds := b.Backend.Drivers()
	u := *ds["User"]
	inner := u.Sync
	u.Sync = func(ctx context.Context) error { return b.sync(ctx, inner) }
	ds["User"] = &u
	return ds
}

// onDisk reads the account files afresh, as a restart after a kill -9 would.
func onDisk(t *testing.T, acc *accounts.Files) *accounts.Files {
	t.Helper()
	d, err := accounts.OpenFiles(acc.Dir(), accounts.FilesOptions{Scheme: accounts.SHA512})
	if err != nil {
		t.Fatal(err)
	}
	return d
}

// A commit with a User is answered once the account files are on disk.
func TestUserAnsweredWhenOnDisk(t *testing.T) {
	ctx := context.Background()
	f, acc := newUserFixture(t)
	f.mustApply(f.edit(backend.Create, "User", user("root1", "admin", "admin-password")))
	f.mustApply(f.edit(backend.Create, "User", user("alice", "operator", "alice-password")))
	verify(t, onDisk(t, acc), "alice", "alice-password", true)
	f.mustApply(f.edit(backend.Update, "User", model.Object{"Name": "alice", "DefaultShell": "Bash"}))
	if a, _, _ := onDisk(t, acc).Lookup(ctx, "alice"); a.Shell != "/bin/bash" {
		t.Errorf("alice's shell on disk after the answer: %q", a.Shell)
	}

	f.mustApply(f.edit(backend.Delete, "User", model.Object{"Name": "alice"}))
	if _, ok, _ := onDisk(t, acc).Lookup(ctx, "alice"); ok {
		t.Error("alice's account is still on disk after her delete was answered")
	}
}

// A bulk commit (collectAfter changes or more, whose working set the
// writer releases early) with a User is answered once the account files are
// on disk too.
func TestUserInBulkCommitAnsweredWhenOnDisk(t *testing.T) {
	f, acc := newUserFixture(t)
	f.mustApply(f.edit(backend.Create, "User", user("root1", "admin", "admin-password")))
	edits := []Edit{f.edit(backend.Create, "User", user("bob", "operator", "bob-password"))}
	for i := range collectAfter {
		edits = append(edits, f.edit(backend.Create, "NtpServer", model.Object{"IpAddr": fmt.Sprintf("10.%d.%d.%d", i>>16&255, i>>8&255, i&255)}))
	}
	f.mustApply(edits...)
	verify(t, onDisk(t, acc), "bob", "bob-password", true)
}

// The account files' write does not hold up the writer: while a User
// commit waits for it, other commits are made and answered.
func TestUserSyncDoesNotHoldOtherCommits(t *testing.T) {
	inSync := make(chan struct{})
	release := make(chan struct{})
	var once sync.Once
	f, acc := newUserFixture(t, func(b backend.Backend) backend.Backend {
		return userSyncBackend{b, func(ctx context.Context, inner func(context.Context) error) error {
			first := false
			once.Do(func() { first = true })
			if first {
				close(inSync)
				<-release
			}
			return inner(ctx)
		}}
	})
	userDone := make(chan error, 1)
	go func() {
		_, err := f.apply(f.edit(backend.Create, "User", user("root1", "admin", "admin-password")))
		userDone <- err
	}()
	<-inSync
	ntpDone := make(chan error, 1)
	go func() {
		_, err := f.apply(f.edit(backend.Create, "NtpServer", model.Object{"IpAddr": "10.9.9.9"}))
		ntpDone <- err
	}()
	select {
	case err := <-ntpDone:
		if err != nil {
			t.Fatal(err)
		}
	case <-time.After(time.Minute):
		close(release)
		t.Fatal("an NtpServer create waited for a User commit's account files")
	}
	select {
	case err := <-userDone:
		t.Fatalf("the User commit was answered before its account files were written: %v", err)
	default:
	}
	// Committed, not yet answered: the store and the accounts in memory
	// have it, so it can log in as soon as it is answered.
	if !f.exists("User", "root1") {
		t.Error("root1 is not in the store")
	}
	verify(t, acc, "root1", "admin-password", true)
	close(release)
	if err := <-userDone; err != nil {
		t.Fatal(err)
	}
	verify(t, onDisk(t, acc), "root1", "admin-password", true)
}

// A commit whose account files cannot be written is answered with a 500
// that says the change is committed.
func TestUserSyncFailureAnswered(t *testing.T) {
	f, _ := newUserFixture(t, func(b backend.Backend) backend.Backend {
		return userSyncBackend{b, func(ctx context.Context, inner func(context.Context) error) error {
			return errors.New("injected write failure")
		}}
	})
	_, err := f.apply(f.edit(backend.Create, "User", user("root1", "admin", "admin-password")))
	var e *apierr.Error
	if !errors.As(err, &e) || e.Status != http.StatusInternalServerError || !strings.Contains(e.Message, "is committed (revision") || !strings.Contains(e.Message, "injected write failure") {
		t.Fatalf("answer: %v", err)
	}
	if !f.exists("User", "root1") {
		t.Error("the User is not committed")
	}
}

// At start, the account files are made to match the stored Users: an
// account lost from the files comes back (locked: its password was never
// stored), a changed shell is put back, an account no User has goes.
func TestRestartReconcilesAccounts(t *testing.T) {
	ctx := context.Background()
	dir := t.TempDir()
	f, acc := newUserFixtureAt(t, dir)
	f.mustApply(f.edit(backend.Create, "User", user("root1", "admin", "admin-password")))
	f.mustApply(f.edit(backend.Create, "User", model.Object{"Name": "alice", "Group": "operator", "Password": "alice-password", "DefaultShell": "Bash"}))
	f.mustApply(f.edit(backend.Create, "User", user("bob", "netops", "bob-password")))
	rev := f.e.Revision()
	f.e.Close()
	f.st.Close()

	// What a power loss, or a hand, can do to the files.
	damage := onDisk(t, acc)
	if _, err := damage.Delete(ctx, "bob"); err != nil {
		t.Fatal(err)
	}
	if err := damage.SetShell(ctx, "alice", "/bin/sh"); err != nil {
		t.Fatal(err)
	}
	if err := damage.Create(ctx, "mallory", "users", "/bin/bash", "mallory-password"); err != nil {
		t.Fatal(err)
	}

	g, acc2 := newUserFixtureAt(t, dir)
	if g.e.Revision() != rev {
		t.Errorf("the start made a commit: revision %d -> %d", rev, g.e.Revision())
	}
	for _, a := range []*accounts.Files{acc2, onDisk(t, acc2)} {
		verify(t, a, "root1", "admin-password", true)
		verify(t, a, "alice", "alice-password", true)
		if u, _, _ := a.Lookup(ctx, "alice"); u.Shell != "/bin/bash" {
			t.Errorf("alice's shell: %q", u.Shell)
		}
		if u, ok, _ := a.Lookup(ctx, "bob"); !ok || u.Group != "netops" || u.Shell != "/usr/bin/swmgr" {
			t.Errorf("bob: %+v %v", u, ok)
		}
		verify(t, a, "bob", "bob-password", false)
		if _, ok, _ := a.Lookup(ctx, "mallory"); ok {
			t.Error("mallory, who is no User, has an account")
		}
	}
	if err := acc2.SetPassword(ctx, "bob", "bob-password-2"); err != nil { // what UserPassword does
		t.Fatal(err)
	}
	verify(t, onDisk(t, acc2), "bob", "bob-password-2", true)
}
