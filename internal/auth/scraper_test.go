package auth

import (
	"context"
	"fmt"
	"log/slog"
	"net/http"
	"net/netip"
	"testing"
	"time"
)

// A client that keeps sending one refused credential (a Prometheus scraper
// configured with the break-glass admin's name and a password the central
// servers refuse) gets 401 on every request for an hour, and the admin
// still logs in from the scraper's address and from a new one; a guesser
// trying new passwords from that address is still locked out.
func TestRepeatedRefusedCredentialLocksNobodyOut(t *testing.T) {
	c := newClock()
	check := func(_ context.Context, name, password string) (string, bool, error) {
		return "admin", name == "admin" && password == "right", nil
	}
	v := NewVerifier(check, VerifierOptions{Now: c.now})
	th := NewThrottle(ThrottleOptions{Now: c.now})
	log := slog.New(slog.DiscardHandler)
	ctx := context.Background()
	scraper, elsewhere := ip("192.0.2.9"), ip("198.51.100.7")

	codes := map[int]int{}
	for range 240 { // every 15 s for an hour
		_, refused := Login(ctx, v, th, log, "admin", "stale", scraper, "GET /metrics")
		if refused == nil {
			t.Fatal("a wrong password was accepted")
		}
		codes[refused.Err.Status]++
		c.add(15 * time.Second)
	}
	if codes[http.StatusUnauthorized] != 240 {
		t.Errorf("scrapes answered %v, want 240 x 401", codes)
	}
	for _, addr := range []netip.Addr{elsewhere, scraper} {
		if _, refused := Login(ctx, v, th, log, "admin", "right", addr, "GET /"); refused != nil {
			t.Errorf("the admin is refused from %s: %v", addr, refused.Err)
		}
	}
	// New passwords are guesses: five lock the pair.
	var last *Refusal
	for i := range 6 {
		_, last = Login(ctx, v, th, log, "admin", fmt.Sprintf("guess%d", i), scraper, "GET /")
	}
	if last == nil || last.Err.Status != http.StatusTooManyRequests {
		t.Errorf("six guesses from one address: the sixth answered %v, want 429", last)
	}
}
