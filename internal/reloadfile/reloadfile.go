// Package reloadfile keeps what is parsed from a few files current while
// they are replaced under a running process: a certificate and its key, a
// bearer token. Every Get looks at the files (a stat each: their size,
// modification time, inode and device) and parses them again when any of
// that changed, so a file replaced by a rename, rewritten in place or
// touched is read on the next use, with no restart, no signal and no
// timer. A reading that fails (a key replaced before its certificate, a
// half-written file) keeps the last good value and is tried again on the
// next Get: whoever uses the value never sees a gap.
package reloadfile

import (
	"bytes"
	"errors"
	"fmt"
	"os"
	"sync"
	"syscall"
	"time"
)

// Parse makes a value of the files' contents, in the order of the paths.
type Parse[T any] func(contents [][]byte) (T, error)

// File is a value parsed from files, parsed again when they change.
type File[T any] struct {
	paths []string
	parse Parse[T]
	// OnReload, if set, is told of each reading after the first: the
	// value (when err is nil) or why the files could not be read.
	onReload func(v T, err error)
	// optional: a missing file reads as empty (OpenOptional).
	optional bool

	mu       sync.Mutex
	stamps   []stamp // of the files the value was read from
	value    T
	failedAt []stamp // of the files whose reading failed last: not tried again until they change
}

// stamp is what tells that a file changed without reading it.
type stamp struct {
	size      int64
	mtime     time.Time
	ino, dev  uint64
	ctimeNsec int64
}

func stampOf(path string) (stamp, error) {
	fi, err := os.Stat(path)
	if err != nil {
		return stamp{}, err
	}
	s := stamp{size: fi.Size(), mtime: fi.ModTime()}
	if st, ok := fi.Sys().(*syscall.Stat_t); ok {
		s.ino, s.dev = st.Ino, st.Dev
		s.ctimeNsec = st.Ctim.Sec*1e9 + st.Ctim.Nsec
	}
	return s, nil
}

// Open reads and parses the files once; it fails if they cannot be. Later
// readings are reported to onReload (may be nil).
func Open[T any](parse Parse[T], onReload func(v T, err error), paths ...string) (*File[T], error) {
	return (&File[T]{paths: paths, parse: parse, onReload: onReload}).first()
}

// OpenOptional is Open of files that may be missing: a missing file reads
// as empty (a trust bundle not set), and its removal is a change like any
// other, not a failed reading.
func OpenOptional[T any](parse Parse[T], onReload func(v T, err error), paths ...string) (*File[T], error) {
	return (&File[T]{paths: paths, parse: parse, onReload: onReload, optional: true}).first()
}

// first reads and parses the files the first time.
func (f *File[T]) first() (*File[T], error) {
	stamps, v, err := f.read()
	if err != nil {
		return nil, err
	}
	f.stamps, f.value = stamps, v
	return f, nil
}

// Get returns the value of the files as they are now, or, if they cannot
// be read or parsed as they are, the last value that could.
func (f *File[T]) Get() T {
	f.mu.Lock()
	defer f.mu.Unlock()
	now := make([]stamp, len(f.paths))
	for i, p := range f.paths {
		s, err := stampOf(p)
		if err != nil {
			s = stamp{size: -1} // missing: a change, read (and fail) once
		}
		now[i] = s
	}
	if equalStamps(now, f.stamps) || equalStamps(now, f.failedAt) {
		return f.value
	}
	stamps, v, err := f.read()
	if err != nil {
		f.failedAt = now
		if f.onReload != nil {
			f.onReload(v, err)
		}
		return f.value
	}
	f.stamps, f.value, f.failedAt = stamps, v, nil
	if f.onReload != nil {
		f.onReload(v, nil)
	}
	return v
}

// read reads every file, stamped before and after: a file that changed
// while it was read is read again on the next Get.
func (f *File[T]) read() ([]stamp, T, error) {
	var zero T
	stamps := make([]stamp, len(f.paths))
	contents := make([][]byte, len(f.paths))
	for i, p := range f.paths {
		before, err := stampOf(p)
		if f.optional && errors.Is(err, os.ErrNotExist) {
			stamps[i] = stamp{size: -1} // as Get stamps a missing file
			continue
		}
		if err != nil {
			return nil, zero, err
		}
		b, err := os.ReadFile(p)
		if err != nil {
			return nil, zero, err
		}
		after, err := stampOf(p)
		if err != nil {
			return nil, zero, err
		}
		if before != after {
			return nil, zero, fmt.Errorf("%s changed while it was read", p)
		}
		stamps[i], contents[i] = before, b
	}
	v, err := f.parse(contents)
	if err != nil {
		return nil, zero, err
	}
	return stamps, v, nil
}

func equalStamps(a, b []stamp) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if a[i] != b[i] {
			return false
		}
	}
	return true
}

// Token reads a bearer token the way Prometheus writes and reads one
// (credentials_file, bearer_token_file): the file's contents without
// surrounding white space. It must hold at least minLen characters, so
// that it cannot be guessed.
func Token(minLen int) Parse[[]byte] {
	return func(contents [][]byte) ([]byte, error) {
		t := bytes.TrimSpace(contents[0])
		switch {
		case len(t) == 0:
			return nil, errors.New("the token file is empty")
		case len(t) < minLen:
			return nil, fmt.Errorf("the token is %d characters long; use at least %d (openssl rand -hex 32 makes one)", len(t), minLen)
		case bytes.ContainsAny(t, " \t\r\n"):
			return nil, errors.New("the token holds white space; write it on one line")
		}
		return t, nil
	}
}
