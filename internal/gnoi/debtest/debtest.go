// Package debtest builds small Debian packages with dpkg-deb for the
// tests of gNOI's OS service: a package name, a version and, unless nil,
// the contents of its /usr/bin/swmgr.
package debtest

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"testing"
)

// Build makes pkg's package at version (architecture all, gzip-compressed) holding binary
// as /usr/bin/swmgr (no binary when nil) and returns its bytes.
func Build(t testing.TB, pkg, version string, binary []byte) []byte {
	t.Helper()
	root := t.TempDir()
	must := func(err error) {
		t.Helper()
		if err != nil {
			t.Fatal(err)
		}
	}
	must(os.MkdirAll(filepath.Join(root, "DEBIAN"), 0o755))
	control := fmt.Sprintf("Package: %s\nVersion: %s\nArchitecture: all\nMaintainer: test <t@example.org>\nDescription: test\n", pkg, version)
	must(os.WriteFile(filepath.Join(root, "DEBIAN", "control"), []byte(control), 0o644))
	if binary != nil {
		must(os.MkdirAll(filepath.Join(root, "usr", "bin"), 0o755))
		must(os.WriteFile(filepath.Join(root, "usr", "bin", "swmgr"), binary, 0o755))
	} else {
		must(os.MkdirAll(filepath.Join(root, "usr", "share"), 0o755))
	}
	out := filepath.Join(t.TempDir(), "p.deb")
	if b, err := exec.Command("dpkg-deb", "--root-owner-group", "-Zgzip", "-b", root, out).CombinedOutput(); err != nil {
		t.Fatalf("dpkg-deb -b: %v: %s", err, b)
	}
	b, err := os.ReadFile(out)
	must(err)
	return b
}
