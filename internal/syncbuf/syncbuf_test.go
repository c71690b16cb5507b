package syncbuf

import (
	"strings"
	"sync"
	"testing"
)

// Writers and a reader at once: run with -race, every write is kept whole.
func TestConcurrentWritesAndReads(t *testing.T) {
	var b Buffer
	var wg sync.WaitGroup
	for i := 0; i < 8; i++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for j := 0; j < 100; j++ {
				b.Write([]byte("line\n"))
				_ = b.String()
			}
		}()
	}
	wg.Wait()
	if got := strings.Count(b.String(), "line\n"); got != 800 {
		t.Fatalf("%d lines, want 800", got)
	}
}

// Take hands over what was written since the last Take, once.
func TestTake(t *testing.T) {
	var b Buffer
	b.Write([]byte("a\n"))
	b.Write([]byte("b\n"))
	if got := b.Take(); got != "a\nb\n" {
		t.Fatalf("first Take = %q", got)
	}
	if got := b.Take(); got != "" {
		t.Fatalf("second Take = %q, want nothing", got)
	}
	b.Write([]byte("c\n"))
	if got, all := b.Take(), b.String(); got != "c\n" || all != "" {
		t.Fatalf("Take = %q, then String = %q", got, all)
	}
}
