package reloadfile

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func TestToken(t *testing.T) {
	for _, c := range []struct {
		file, want, err string
	}{
		{"0123456789abcdef\n", "0123456789abcdef", ""},
		{"  0123456789abcdef  \r\n", "0123456789abcdef", ""},
		{"", "", "empty"},
		{"short\n", "", "at least 16"},
		{"0123456789 abcdef\n", "", "white space"},
	} {
		got, err := Token(16)([][]byte{[]byte(c.file)})
		if c.err != "" {
			if err == nil || !strings.Contains(err.Error(), c.err) {
				t.Errorf("%q: %v, want an error saying %q", c.file, err, c.err)
			}
			continue
		}
		if err != nil || string(got) != c.want {
			t.Errorf("%q: %q %v", c.file, got, err)
		}
	}
}

// A file rewritten in place or replaced by a rename is read on the next
// Get; one that cannot be parsed keeps the last value and is reported once.
func TestFileFollowsItsFile(t *testing.T) {
	path := filepath.Join(t.TempDir(), "token")
	write := func(s string) {
		tmp := path + ".tmp"
		if err := os.WriteFile(tmp, []byte(s), 0o600); err != nil {
			t.Fatal(err)
		}
		if err := os.Rename(tmp, path); err != nil {
			t.Fatal(err)
		}
	}
	write("first-token-0123456789\n")
	var failures int
	f, err := Open(Token(16), func(_ []byte, err error) {
		if err != nil {
			failures++
		}
	}, path)
	if err != nil {
		t.Fatal(err)
	}
	if got := string(f.Get()); got != "first-token-0123456789" {
		t.Fatalf("first: %q", got)
	}
	write("second-token-0123456789\n")
	if got := string(f.Get()); got != "second-token-0123456789" {
		t.Errorf("after a rename: %q", got)
	}
	if err := os.WriteFile(path, []byte("third-token-0123456789-longer\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	if got := string(f.Get()); got != "third-token-0123456789-longer" {
		t.Errorf("rewritten in place: %q", got)
	}
	write("bad\n")
	for range 3 {
		if got := string(f.Get()); got != "third-token-0123456789-longer" {
			t.Errorf("a bad file replaced the value: %q", got)
		}
	}
	if failures != 1 {
		t.Errorf("a bad file reported %d times, want once", failures)
	}
	if _, err := Open(Token(16), nil, filepath.Join(t.TempDir(), "missing")); err == nil {
		t.Error("a missing file opened")
	}
}
