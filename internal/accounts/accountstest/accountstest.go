// Package accountstest makes root prefixes for tests of the operating
// system's account tools (useradd -P <prefix> and the others).
//
// A prefix holds a small fixed set of account files, not a copy of the
// host's: other tests on the same machine add and remove host accounts
// while a copy is read file by file, and a copy caught between two of them
// (a user whose group is already gone) would change what the tools do.
package accountstest

import (
	"os"
	"path/filepath"
	"testing"
)

// files are the account files of a new prefix: root, nobody, and the
// groups users and nogroup, as on a fresh Debian system.
var files = []struct {
	name, text string
	mode       os.FileMode
}{
	{"passwd", "root:x:0:0:root:/root:/bin/bash\nnobody:x:65534:65534:nobody:/nonexistent:/usr/sbin/nologin\n", 0o644},
	{"shadow", "root:*:20000:0:99999:7:::\nnobody:*:20000:0:99999:7:::\n", 0o600},
	{"group", "root:x:0:\nusers:x:100:\nnogroup:x:65534:\n", 0o644},
	{"gshadow", "root:*::\nusers:*::\nnogroup:*::\n", 0o600},
}

// Prefix makes a root directory with etc/ (the account files) and home/,
// removed when the test ends.
func Prefix(t testing.TB) string {
	t.Helper()
	root := t.TempDir()
	for _, d := range []string{"etc", "home"} {
		if err := os.MkdirAll(filepath.Join(root, d), 0o755); err != nil {
			t.Fatal(err)
		}
	}
	for _, f := range files {
		if err := os.WriteFile(filepath.Join(root, "etc", f.name), []byte(f.text), f.mode); err != nil {
			t.Fatal(err)
		}
	}
	return root
}
