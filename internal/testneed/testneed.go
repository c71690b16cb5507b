// Package testneed is for tests that start real programs (busybox, FRR,
// chronyd, sshd, QEMU, chromium...): where a program is missing, the test
// skips with a message naming the Debian package that provides it, so
// `go test ./...` passes on a machine with only Go installed. Under CI (the
// CI variable set, as .ci/run sets it) the same absence fails the test:
// .ci/run installs every such package, so a skip there would hide a test
// that never ran.
package testneed

import (
	"os"
	"os/exec"
	"strings"
	"testing"
)

// InCI reports whether the tests run in CI, where a missing tool fails.
func InCI() bool { return os.Getenv("CI") != "" }

// Program returns the path of the first of names found (a name with a
// slash is a path to stat, any other is looked up in PATH). If none is
// found it skips t naming the Debian package pkg, or fails t in CI.
func Program(t testing.TB, pkg string, names ...string) string {
	t.Helper()
	for _, name := range names {
		if strings.Contains(name, "/") {
			if _, err := os.Stat(name); err == nil {
				return name
			}
			continue
		}
		if p, err := exec.LookPath(name); err == nil {
			return p
		}
	}
	Missing(t, pkg, strings.Join(names, " or ")+" not found")
	return ""
}

// Missing skips t because what is missing, naming the Debian package that
// provides it; in CI it fails t instead.
func Missing(t testing.TB, pkg, what string) {
	t.Helper()
	if InCI() {
		t.Fatalf("%s: .ci/run installs Debian's %s, and in CI a test that needs it must run", what, pkg)
	}
	t.Skipf("%s: apt-get install %s (.ci/run does)", what, pkg)
}

// Root skips t unless the test runs as root, which what needs (network
// namespaces, a daemon's port) requires; in CI, which runs as root, it
// fails t instead.
func Root(t testing.TB, what string) {
	t.Helper()
	if os.Geteuid() == 0 {
		return
	}
	if InCI() {
		t.Fatalf("%s need root, and CI runs as root", what)
	}
	t.Skipf("skipping: %s need root", what)
}
