package obs

import (
	"io"
	"sync"
	"time"
)

// LineBuffer lets the access log cost no write system call per request:
// lines written through Buffered wait in memory and go out together at
// most FlushEvery later (or at 64 KiB). Lines written through Direct
// (the service's own log: warnings, errors) first flush what is pending
// and then go out at once, so both keep their order and a warning is
// never held back. Close flushes and makes every later write direct.
type LineBuffer struct {
	mu     sync.Mutex
	out    io.Writer
	buf    []byte
	every  time.Duration
	armed  bool
	closed bool
}

// FlushEvery is how long an access line may wait in a LineBuffer.
const FlushEvery = 50 * time.Millisecond

const lineBufferMax = 64 << 10

// NewLineBuffer buffers lines for out.
func NewLineBuffer(out io.Writer) *LineBuffer {
	return &LineBuffer{out: out, every: FlushEvery}
}

// Buffered is the writer for lines that may wait.
func (b *LineBuffer) Buffered() io.Writer { return bufferedLines{b} }

// Direct is the writer for lines that go out at once.
func (b *LineBuffer) Direct() io.Writer { return directLines{b} }

// Flush writes what is pending.
func (b *LineBuffer) Flush() {
	b.mu.Lock()
	defer b.mu.Unlock()
	b.armed = false
	b.flushLocked()
}

// Close flushes; later lines are written directly.
func (b *LineBuffer) Close() {
	b.mu.Lock()
	defer b.mu.Unlock()
	b.closed = true
	b.flushLocked()
}

// flushLocked writes the pending lines. A log cannot report its own
// write error, so it is dropped as slog's loggers drop it.
func (b *LineBuffer) flushLocked() {
	if len(b.buf) > 0 {
		b.out.Write(b.buf)
		b.buf = b.buf[:0]
	}
}

type bufferedLines struct{ b *LineBuffer }

func (w bufferedLines) Write(p []byte) (int, error) {
	b := w.b
	b.mu.Lock()
	defer b.mu.Unlock()
	if b.closed {
		return b.out.Write(p)
	}
	b.buf = append(b.buf, p...) // p is the handler's buffer: copied, not kept
	switch {
	case len(b.buf) >= lineBufferMax:
		b.flushLocked()
	case !b.armed:
		b.armed = true
		time.AfterFunc(b.every, b.Flush)
	}
	return len(p), nil
}

type directLines struct{ b *LineBuffer }

func (w directLines) Write(p []byte) (int, error) {
	b := w.b
	b.mu.Lock()
	defer b.mu.Unlock()
	b.flushLocked()
	return b.out.Write(p)
}
