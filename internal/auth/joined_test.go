package auth

import (
	"context"
	"fmt"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"sync"
	"sync/atomic"
	"testing"
	"time"
)

// TestConcurrentRequestsOneAttempt: requests sent at once with one
// credential while its check runs make one attempt: twenty with the right
// password all pass (no lockout of a client opening connections in
// parallel), and twenty with the same wrong one count as one failure.
func TestConcurrentRequestsOneAttempt(t *testing.T) {
	var calls atomic.Int32
	var gate chan struct{} // closed by the test once the requests piled up
	check := func(ctx context.Context, name, password string) (string, bool, error) {
		calls.Add(1)
		<-gate
		return "users", password == "right-pass-1", nil
	}
	c := newClock()
	h := Handler(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { w.WriteHeader(299) }), Options{
		Verifier: NewVerifier(check, VerifierOptions{Now: c.now}),
		Throttle: NewThrottle(ThrottleOptions{Now: c.now}),
		Log:      slog.New(slog.DiscardHandler),
	})
	burst := func(password string) map[int]int {
		t.Helper()
		gate = make(chan struct{})
		before := calls.Load()
		codes := make(chan int, 20)
		var wg sync.WaitGroup
		for range 20 {
			wg.Add(1)
			go func() {
				defer wg.Done()
				r := httptest.NewRequest("GET", "/public/v1/config/Ports", nil)
				r.RemoteAddr = "192.0.2.7:5555"
				r.Host = "192.0.2.1"
				r.SetBasicAuth("rd", password)
				w := httptest.NewRecorder()
				h.ServeHTTP(w, r)
				codes <- w.Code
			}()
		}
		for calls.Load() == before {
			time.Sleep(time.Millisecond)
		}
		time.Sleep(50 * time.Millisecond) // the others arrive while the check runs
		close(gate)
		wg.Wait()
		close(codes)
		got := map[int]int{}
		for code := range codes {
			got[code]++
		}
		return got
	}
	if got := burst("right-pass-1"); got[299] != 20 {
		t.Errorf("20 concurrent requests with the right password: %v", got)
	}
	c.add(time.Minute) // past the cache
	if got := burst("wrong-pass-1"); got[401] != 20 {
		t.Errorf("20 concurrent requests with one wrong password: %v", got)
	}
	// One failure counted, not twenty: three more do not lock the pair.
	for i := range 3 {
		r := httptest.NewRequest("GET", "/", nil)
		r.RemoteAddr = "192.0.2.7:5555"
		r.SetBasicAuth("rd", "wrong-pass-x")
		w := httptest.NewRecorder()
		h.ServeHTTP(w, r)
		if w.Code != 401 {
			t.Fatalf("failure %d after the burst: %d", i+2, w.Code)
		}
	}
}

// TestRefusalsAreHeld: with RefusalDelay, a login refused by the throttle
// is answered no sooner than the delay (a lower bound only: a timer never
// fires early), and a client that goes away is let go at once.
func TestRefusalsAreHeld(t *testing.T) {
	const delay = 300 * time.Millisecond
	c := newClock()
	h := Handler(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { w.WriteHeader(299) }), Options{
		Verifier:     NewVerifier(func(context.Context, string, string) (string, bool, error) { return "users", false, nil }, VerifierOptions{Now: c.now}),
		Throttle:     NewThrottle(ThrottleOptions{Now: c.now}),
		Log:          slog.New(slog.DiscardHandler),
		RefusalDelay: delay,
	})
	guesses := 0
	send := func(ctx context.Context) (int, time.Duration) {
		r := httptest.NewRequest("GET", "/", nil).WithContext(ctx)
		r.RemoteAddr = "192.0.2.7:5555"
		guesses++
		r.SetBasicAuth("rd", fmt.Sprintf("wrong-pass-%d", guesses))
		w := httptest.NewRecorder()
		start := time.Now()
		h.ServeHTTP(w, r)
		return w.Code, time.Since(start)
	}
	for range 5 {
		if code, _ := send(context.Background()); code != 401 {
			t.Fatalf("a wrong password: %d", code)
		}
	}
	if code, took := send(context.Background()); code != 429 || took < delay {
		t.Errorf("locked out: %d after %v; want 429 after at least %v", code, took, delay)
	}
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if code, _ := send(ctx); code != 429 {
		t.Errorf("locked out, client gone: %d", code)
	}
}
