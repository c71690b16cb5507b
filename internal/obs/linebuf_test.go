package obs

import (
	"strings"
	"testing"
	"time"

	"github.com/swmgr/swmgr/internal/syncbuf"
)

func TestLineBuffer(t *testing.T) {
	tests := []struct {
		name  string
		write func(b *LineBuffer)
		// what out holds right after write, before any timer fires
		now string
		// and once the pending lines are flushed
		later string
	}{
		{"buffered lines wait", func(b *LineBuffer) {
			b.Buffered().Write([]byte("a\n"))
			b.Buffered().Write([]byte("b\n"))
		}, "", "a\nb\n"},
		{"a direct line flushes what is pending first, keeping the order", func(b *LineBuffer) {
			b.Buffered().Write([]byte("a\n"))
			b.Direct().Write([]byte("WARN\n"))
			b.Buffered().Write([]byte("b\n"))
		}, "a\nWARN\n", "a\nWARN\nb\n"},
		{"64 KiB of lines go out at once", func(b *LineBuffer) {
			b.Buffered().Write([]byte(strings.Repeat("x", lineBufferMax-1) + "\n"))
		}, strings.Repeat("x", lineBufferMax-1) + "\n", strings.Repeat("x", lineBufferMax-1) + "\n"},
		{"after Close every line is direct", func(b *LineBuffer) {
			b.Buffered().Write([]byte("a\n"))
			b.Close()
			b.Buffered().Write([]byte("b\n"))
		}, "a\nb\n", "a\nb\n"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			var out syncbuf.Buffer
			b := NewLineBuffer(&out)
			b.every = time.Hour // flushed by hand below, never by the timer
			tc.write(b)
			if got := out.String(); got != tc.now {
				t.Errorf("at once: %q, want %q", got, tc.now)
			}
			b.Flush()
			if got := out.String(); got != tc.later {
				t.Errorf("after Flush: %q, want %q", got, tc.later)
			}
		})
	}
}

// The timer flushes a buffered line without any other write.
func TestLineBufferFlushesByItself(t *testing.T) {
	var out syncbuf.Buffer
	b := NewLineBuffer(&out)
	b.every = time.Millisecond
	b.Buffered().Write([]byte("a\n"))
	for deadline := time.Now().Add(10 * time.Second); out.String() == ""; time.Sleep(time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatal("the buffered line was never written")
		}
	}
	if got := out.String(); got != "a\n" {
		t.Fatalf("%q", got)
	}
}
