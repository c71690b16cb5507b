package auth

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"testing"
	"time"
)

// Attempts count when they begin: a burst of concurrent guesses for one
// name from one address gets MaxFailures checks, not one per request.
func TestThrottleCountsAttemptsWhenTheyBegin(t *testing.T) {
	th := NewThrottle(ThrottleOptions{Now: newClock().now})
	a := ip("192.0.2.1")
	var begun []*Attempt
	for range 100 {
		if at, wait := th.Begin("admin", a); wait == 0 {
			begun = append(begun, at)
		}
	}
	if len(begun) != 5 {
		t.Fatalf("%d of 100 concurrent attempts began, want 5", len(begun))
	}
	for i, at := range begun {
		d := at.End(Failed)
		if (i == 4) != (d == time.Minute) {
			t.Errorf("failure %d locked for %v", i+1, d)
		}
	}
	if _, wait := th.Begin("admin", a); wait != time.Minute {
		t.Errorf("after 5 failures: wait %v", wait)
	}
	// Aborted attempts (the check did not run) do not count.
	b := ip("192.0.2.2")
	for range 10 {
		at, wait := th.Begin("admin", b)
		if wait != 0 {
			t.Fatalf("aborted attempts counted: wait %v", wait)
		}
		at.End(Aborted)
	}
}

// The per-name budget spans addresses; an address trusted for the name (a
// success from it) is not held to it.
func TestThrottleUserBudgetAcrossAddresses(t *testing.T) {
	c := newClock()
	th := NewThrottle(ThrottleOptions{Now: c.now})
	home := ip("10.0.0.1")
	at, _ := th.Begin("admin", home)
	at.End(Succeeded) // the admin logged in from home once
	checked := 0
	for i := range 40 {
		addr := ip(fmt.Sprintf("127.0.0.%d", i+2))
		for range 5 {
			at, wait := th.Begin("admin", addr)
			if wait > 0 {
				continue
			}
			checked++
			if at.Trusted() {
				t.Fatal("an attacker's address is trusted")
			}
			at.End(Failed)
		}
	}
	if checked != 20 {
		t.Errorf("40 addresses x 5 guesses: %d checked, want the budget of 20", checked)
	}
	if th.Wait("admin", ip("198.51.100.1")) == 0 {
		t.Error("a new address is not refused while the name is over its budget")
	}
	at, wait := th.Begin("admin", home)
	if wait != 0 || !at.Trusted() {
		t.Fatalf("the admin's trusted address is refused: %v", wait)
	}
	at.End(Succeeded)
	if th.Wait("bob", ip("127.0.0.2")) != 0 {
		t.Error("another name is refused")
	}
	// The budget frees up as failures leave the window.
	c.add(5 * time.Minute)
	if d := th.Wait("admin", ip("198.51.100.1")); d != 0 {
		t.Errorf("after the window: %v", d)
	}
	// Trust expires.
	c.add(31 * 24 * time.Hour)
	if at, _ := th.Begin("admin", home); at == nil || at.Trusted() {
		t.Error("trust did not expire")
	}
}

// Memory does not grow with the number of names and addresses tried.
func TestThrottleBoundedUnderSpray(t *testing.T) {
	th := NewThrottle(ThrottleOptions{Now: newClock().now, MaxEntries: 100})
	for i := range 5000 {
		at, wait := th.Begin(fmt.Sprintf("n%d", i), ip(fmt.Sprintf("10.0.%d.%d", i/250, i%250)))
		if wait == 0 {
			at.End([]Outcome{Failed, Succeeded}[i%2])
		}
	}
	if len(th.m) > 100 || len(th.users) > 100 || len(th.trusted) > 100 {
		t.Errorf("%d pairs, %d names, %d trusted", len(th.m), len(th.users), len(th.trusted))
	}
}

// At most Checks password checks run at once, Queue wait, the rest are
// refused at once; a priority check has a slot of its own.
func TestVerifierBoundsChecks(t *testing.T) {
	release := make(chan struct{})
	var mu sync.Mutex
	running, peak := 0, 0
	v := NewVerifier(func(ctx context.Context, name, password string) (string, bool, error) {
		mu.Lock()
		running++
		peak = max(peak, running)
		mu.Unlock()
		<-release
		mu.Lock()
		running--
		mu.Unlock()
		return "admin", password == "right", nil
	}, VerifierOptions{Checks: 2, Queue: 3, QueueWait: time.Minute})
	type result struct {
		ok  bool
		err error
	}
	results := make(chan result, 20)
	for i := range 20 {
		go func() {
			_, ok, err := v.Check(context.Background(), fmt.Sprintf("u%d", i), "wrong", false)
			results <- result{ok, err}
		}()
	}
	busy := 0
	for range 15 { // 2 run, 3 wait, 15 are refused at once
		if r := <-results; errors.Is(r.err, ErrBusy) {
			busy++
		}
	}
	if busy != 15 {
		t.Fatalf("%d refused at once, want 15", busy)
	}
	// A priority check runs although the others are full.
	done := make(chan result)
	go func() {
		_, ok, err := v.Check(context.Background(), "admin", "right", true)
		done <- result{ok, err}
	}()
	for {
		mu.Lock()
		r := running
		mu.Unlock()
		if r == 3 {
			break
		}
		time.Sleep(time.Millisecond)
	}
	close(release)
	if r := <-done; !r.ok || r.err != nil {
		t.Errorf("priority check: %v %v", r.ok, r.err)
	}
	for range 5 {
		if r := <-results; r.err != nil || r.ok {
			t.Errorf("a queued check: %v %v", r.ok, r.err)
		}
	}
	if peak != 3 {
		t.Errorf("%d checks ran at once, want 2 + 1 priority", peak)
	}
	// Waiting is bounded in time too.
	v2 := NewVerifier(func(ctx context.Context, name, password string) (string, bool, error) {
		time.Sleep(time.Second)
		return "", false, nil
	}, VerifierOptions{Checks: 1, QueueWait: 10 * time.Millisecond})
	go v2.Check(context.Background(), "a", "x", false)
	time.Sleep(50 * time.Millisecond)
	if _, _, err := v2.Check(context.Background(), "b", "x", false); !errors.Is(err, ErrBusy) {
		t.Errorf("after QueueWait: %v", err)
	}
}
