package auth

import (
	"context"
	"net"
	"net/http"
	"net/http/httptest"
	"testing"
	"time"

	"github.com/swmgr/swmgr/internal/accounts"
	"github.com/swmgr/swmgr/internal/peercred"
)

// sessionEnv is a Verifier over real account files, with Sessions told of
// every change made through acc, as swmgr serve wires them.
type sessionEnv struct {
	raw      *accounts.Files
	acc      accounts.Accounts // raw, observed
	verifier *Verifier
	sessions *Sessions
}

func newSessionEnv(t *testing.T, interval time.Duration) *sessionEnv {
	t.Helper()
	raw, err := accounts.OpenFiles(t.TempDir(), accounts.FilesOptions{Scheme: accounts.SHA512})
	if err != nil {
		t.Fatal(err)
	}
	e := &sessionEnv{raw: raw}
	e.verifier = NewVerifier(AccountsCheck(raw, nil), VerifierOptions{})
	e.sessions = NewSessions(SessionOptions{Verifier: e.verifier, Interval: interval})
	e.acc = accounts.Observe(raw, func(name string) {
		e.verifier.Forget(name)
		e.sessions.Changed(name)
	})
	return e
}

func (e *sessionEnv) create(t *testing.T, name, group, password string) {
	t.Helper()
	if err := e.acc.Create(context.Background(), name, group, "/bin/sh", password); err != nil {
		t.Fatal(err)
	}
}

// ended waits (generously) for a held context to end and returns why.
func ended(t *testing.T, what string, ctx context.Context) (status int) {
	t.Helper()
	select {
	case <-ctx.Done():
	case <-time.After(20 * time.Second):
		t.Fatalf("%s: still held", what)
	}
	if r := Revoked(ctx); r != nil {
		return r.Status
	}
	return 0
}

// stillAllowed checks synchronously that every held request of name would
// go on if checked now.
func (e *sessionEnv) stillAllowed(t *testing.T, name string, want int) {
	t.Helper()
	e.sessions.mu.Lock()
	var held []*session
	for x := range e.sessions.byName[name] {
		held = append(held, x)
	}
	e.sessions.mu.Unlock()
	if len(held) != want {
		t.Fatalf("%s: %d requests held, want %d", name, len(held), want)
	}
	for _, x := range held {
		if refused, retry := e.sessions.authorise(x); refused != nil || retry {
			t.Errorf("%s: a held request would end: %v (retry %v)", name, refused, retry)
		}
	}
}

// A held request ends, with a 401, as soon as its user's account is
// deleted or its password set; the other users' requests go on. A role
// change (the account made again in another group) authorises it again:
// it goes on while the new role may make the request, and ends with a 403
// when it may not.
func TestSessionsEndWhenTheAccountChanges(t *testing.T) {
	e := newSessionEnv(t, time.Hour)
	e.create(t, "alice", "operator", "alice-pass-1")
	e.create(t, "bob", "users", "bob-pass-1")
	e.create(t, "carol", "admin", "carol-pass-1")
	bg := context.Background()
	alice1, stop := e.sessions.Hold(bg, "alice", "alice-pass-1", NeedRead)
	defer stop()
	alice2, stop := e.sessions.Hold(bg, "alice", "alice-pass-1", NeedRead)
	defer stop()
	bob, stop := e.sessions.Hold(bg, "bob", "bob-pass-1", NeedRead)
	defer stop()
	carolRead, stop := e.sessions.Hold(bg, "carol", "carol-pass-1", NeedRead)
	defer stop()
	carolAdmin, stop := e.sessions.Hold(bg, "carol", "carol-pass-1", NeedAdmin)
	defer stop()
	if n := e.sessions.Len(); n != 5 {
		t.Fatalf("%d requests held, want 5", n)
	}

	if _, err := e.acc.Delete(bg, "alice"); err != nil {
		t.Fatal(err)
	}
	for _, c := range []context.Context{alice1, alice2} {
		if got := ended(t, "alice's stream after her deletion", c); got != http.StatusUnauthorized {
			t.Errorf("alice's stream ended with %d, want 401", got)
		}
	}
	if err := e.acc.SetPassword(bg, "bob", "bob-pass-2"); err != nil {
		t.Fatal(err)
	}
	if got := ended(t, "bob's stream after his password was set", bob); got != http.StatusUnauthorized {
		t.Errorf("bob's stream ended with %d, want 401", got)
	}
	if carolRead.Err() != nil || carolAdmin.Err() != nil {
		t.Fatal("carol's streams ended with the others' changes")
	}

	// carol, admin, is made again in group users with the same password.
	if _, err := e.raw.Delete(bg, "carol"); err != nil {
		t.Fatal(err)
	}
	e.create(t, "carol", "users", "carol-pass-1")
	if got := ended(t, "carol's stream that needs an admin", carolAdmin); got != http.StatusForbidden {
		t.Errorf("carol's admin stream ended with %d, want 403", got)
	}
	e.stillAllowed(t, "carol", 1)
	if n := e.sessions.Len(); n != 1 {
		t.Errorf("%d requests held, want carol's read", n)
	}
}

// A change nothing reports (an account changed behind swmgr's back, as a
// central server can stop accepting a user) is found by the periodic
// check, although the login's answer is still in the Verifier's cache.
func TestSessionsCheckedPeriodically(t *testing.T) {
	e := newSessionEnv(t, 50*time.Millisecond)
	e.create(t, "dave", "operator", "dave-pass-1")
	if _, ok, err := e.verifier.Verify(context.Background(), "dave", "dave-pass-1"); !ok || err != nil {
		t.Fatalf("dave's login: %v %v", ok, err)
	}
	held, stop := e.sessions.Hold(context.Background(), "dave", "dave-pass-1", NeedRead)
	defer stop()
	if err := e.raw.SetPassword(context.Background(), "dave", "dave-pass-2"); err != nil { // not observed
		t.Fatal(err)
	}
	if got := ended(t, "dave's stream", held); got != http.StatusUnauthorized {
		t.Errorf("ended with %d, want 401", got)
	}
	// A released request is forgotten.
	other, stop2 := e.sessions.Hold(context.Background(), "nobody", "x", NeedRead)
	stop2()
	if got := ended(t, "a released request", other); got != 0 || e.sessions.Len() != 0 {
		t.Errorf("a released request: status %d, %d held", got, e.sessions.Len())
	}
}

// A request without credentials from a local peer is its OS user's again:
// with its User deleted, it goes on as a local user who is not a User may
// (read), or ends where those are refused.
func TestSessionsOfLocalPeers(t *testing.T) {
	for _, refuse := range []bool{false, true} {
		group := map[string]string{"erin": "operator"}
		peers := NewPeers(PeerOptions{
			RefuseOthers: refuse,
			Cred:         func(net.Conn) (peercred.Cred, error) { return peercred.Cred{UID: 1005}, nil },
			UserName:     func(uint32) (string, error) { return "erin", nil },
			UserGroup: func(_ context.Context, name string) (string, bool, error) {
				g, ok := group[name]
				return g, ok, nil
			},
		})
		e := newSessionEnv(t, time.Hour)
		r := httptest.NewRequest(http.MethodGet, "/public/v1/events", nil)
		r = r.WithContext(peers.ConnContext(r.Context(), nil))
		if id, err := peers.identity(r.Context()); err != nil || id.Role != Operator { // as Handler identifies it
			t.Fatalf("erin: %+v %v", id, err)
		}
		held, stop := e.sessions.HoldRequest(r, NeedRead)
		delete(group, "erin")
		peers.Forget("erin")
		e.sessions.Changed("erin")
		if refuse {
			if got := ended(t, "erin's stream, local users refused", held); got != http.StatusUnauthorized {
				t.Errorf("ended with %d, want 401", got)
			}
		} else {
			e.stillAllowed(t, "erin", 1)
		}
		stop()
	}
}
