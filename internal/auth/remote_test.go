package auth

import (
	"context"
	"errors"
	"log/slog"
	"net/http"
	"net/netip"
	"strings"
	"sync/atomic"
	"testing"
	"time"
)

// TestVerifierRemote: the remote provider's answer is final (a refusal
// does not fall to the accounts), is cached for the TTL it gives (0: not
// at all), and ForgetAll drops it; only when no server answered do the
// accounts decide. A remote check that hangs takes no turn of the
// password checks: with one check slot, a local login goes through while
// it hangs.
func TestVerifierRemote(t *testing.T) {
	var localChecks, remoteChecks atomic.Int32
	hang := make(chan struct{})
	v := NewVerifier(func(ctx context.Context, name, password string) (string, bool, error) {
		localChecks.Add(1)
		return "admin", name == "local" && password == "local-pass", nil
	}, VerifierOptions{Checks: 1, Remote: func(ctx context.Context, name, password string) (RemoteResult, error) {
		remoteChecks.Add(1)
		switch name {
		case "remote":
			return RemoteResult{Answered: true, OK: password == "remote-pass", Group: "operator", TTL: time.Minute}, nil
		case "uncached":
			return RemoteResult{Answered: true, OK: true, Group: "read-only"}, nil
		case "slow":
			<-hang
		}
		return RemoteResult{}, nil // no server answered
	}})
	ctx := context.Background()
	if id, ok, err := v.Verify(ctx, "remote", "remote-pass"); !ok || err != nil || id.Role != Operator {
		t.Fatalf("remote login: %+v %v %v", id, ok, err)
	}
	if _, ok, _ := v.Verify(ctx, "remote", "remote-pass"); !ok || remoteChecks.Load() != 1 {
		t.Errorf("a cached remote login asked the server again (%d)", remoteChecks.Load())
	}
	if _, ok, _ := v.Verify(ctx, "remote", "wrong"); ok || localChecks.Load() != 0 {
		t.Errorf("a remote refusal: ok %v, local checks %d; want refused, no local check", ok, localChecks.Load())
	}
	v.ForgetAll()
	v.Verify(ctx, "remote", "remote-pass")
	if remoteChecks.Load() != 3 {
		t.Errorf("after ForgetAll the server was not asked again (%d)", remoteChecks.Load())
	}
	v.Verify(ctx, "uncached", "x")
	v.Verify(ctx, "uncached", "x")
	if remoteChecks.Load() != 5 {
		t.Errorf("a TTL of 0 was cached (%d)", remoteChecks.Load())
	}
	// No server answered: the accounts decide.
	if id, ok, err := v.Verify(ctx, "local", "local-pass"); !ok || err != nil || id.Role != Admin || localChecks.Load() != 1 {
		t.Errorf("fallback to the accounts: %+v %v %v (local checks %d)", id, ok, err, localChecks.Load())
	}
	// A hanging remote check holds no slot.
	done := make(chan struct{})
	go func() { v.Check(ctx, "slow", "x", false); close(done) }()
	for remoteChecks.Load() != 7 {
		time.Sleep(time.Millisecond)
	}
	if _, ok, err := v.Check(ctx, "local", "local-pass", false); !ok || err != nil {
		t.Errorf("a local login while a remote check hangs: %v %v", ok, err)
	}
	select {
	case <-done:
		t.Error("the hanging check returned early")
	default:
	}
	close(hang)
	<-done
}

// TestLoginTellsTheRemoteCheckItsClient: Login hands the remote check the
// client's address (which bounds one client's checks there), and a remote
// refusal for load (Busy) is a 503 in the remote check's words, not a
// wrong password: nothing is counted against the name.
func TestLoginTellsTheRemoteCheckItsClient(t *testing.T) {
	var seen netip.Addr
	refusal := errors.New("too many logins from 192.0.2.7 are being checked by the servers")
	v := NewVerifier(func(ctx context.Context, name, password string) (string, bool, error) {
		return "", false, nil
	}, VerifierOptions{Remote: func(ctx context.Context, name, password string) (RemoteResult, error) {
		seen = ClientAddr(ctx)
		return RemoteResult{}, Busy(refusal)
	}})
	th := NewThrottle(ThrottleOptions{})
	client := ip("192.0.2.7")
	for range 10 {
		_, r := Login(context.Background(), v, th, slog.New(slog.DiscardHandler), "alice", "password-1", client, "GET /")
		if r == nil || r.Err.Status != http.StatusServiceUnavailable || !strings.Contains(r.Err.Error(), refusal.Error()) {
			t.Fatalf("a busy remote check: %+v, want 503 saying %q", r, refusal)
		}
	}
	if seen != client {
		t.Errorf("the remote check saw client %v, want %v", seen, client)
	}
	if th.Wait("alice", client) != 0 {
		t.Error("refusals for load were counted as failures")
	}
	if !errors.Is(Busy(refusal), ErrBusy) || !errors.Is(Busy(refusal), refusal) {
		t.Error("Busy is not both ErrBusy and its cause")
	}
}
