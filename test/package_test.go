package test

import (
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"syscall"
	"testing"
	"time"
)

// The Debian package as an operator gets it: built by the script, installed
// with dpkg, its unit verified by systemd, its binary, man pages,
// completions and default options working, removed (data kept) and purged
// (data gone) cleanly.
func TestDebianPackage(t *testing.T) {
	if testing.Short() {
		t.Skip("builds and installs a package")
	}
	if os.Geteuid() != 0 {
		t.Skip("installing a package needs root")
	}
	for _, tool := range []string{"dpkg", "dpkg-deb", "systemd-analyze", "man"} {
		if _, err := exec.LookPath(tool); err != nil {
			t.Skipf("%s is not installed", tool)
		}
	}
	// The package is installed system-wide, so two runs of this test at
	// once (two checkouts, two agents) would remove each other's package:
	// they take turns on a machine-wide lock, held until the purge is done.
	lockPackageTest(t)
	if out, err := exec.Command("dpkg-query", "-W", "-f", "${Status}", "swmgr").CombinedOutput(); err == nil && strings.Contains(string(out), "installed") {
		t.Skip("a swmgr package is already installed on this machine; this test would replace it")
	}
	if _, err := os.Stat("/var/lib/swmgr"); err == nil {
		t.Skip("/var/lib/swmgr exists; purging the test's package would delete it")
	}

	out := t.TempDir()
	build := exec.Command("sh", "../packaging/build-deb.sh", out)
	build.Env = append(os.Environ(), "SWMGR_VERSION=1.2.3~test", "SWMGR_DEB_COMPRESSION=gzip")
	b, err := build.Output()
	if err != nil {
		t.Fatalf("build-deb.sh: %v", err)
	}
	deb := strings.TrimSpace(string(b))
	if filepath.Base(deb) != "swmgr_1.2.3~test_"+strings.TrimSpace(run(t, "dpkg", "--print-architecture"))+".deb" {
		t.Fatalf("package %s", deb)
	}
	info := run(t, "dpkg-deb", "--info", deb)
	for _, want := range []string{"Package: swmgr", "Version: 1.2.3~test", "conffiles"} {
		if !strings.Contains(info, want) {
			t.Errorf("dpkg-deb --info lacks %q:\n%s", want, info)
		}
	}

	t.Cleanup(func() { exec.Command("dpkg", "--purge", "swmgr").Run() })
	dpkg(t, "-i", deb)

	files := run(t, "dpkg", "-L", "swmgr")
	for _, f := range []string{"/usr/bin/swmgr", "/lib/systemd/system/swmgr.service", "/etc/default/swmgr",
		"/usr/share/man/man1/swmgr.1.gz", "/usr/share/man/man1/swmgr-serve.1.gz",
		"/usr/share/bash-completion/completions/swmgr", "/usr/share/zsh/vendor-completions/_swmgr",
		"/usr/share/fish/vendor_completions.d/swmgr.fish", "/usr/share/doc/swmgr/README.md", "/usr/share/doc/swmgr/openapi.json"} {
		if !strings.Contains(files, f+"\n") {
			t.Errorf("the package does not install %s", f)
		}
	}
	if v := run(t, "/usr/bin/swmgr", "--version"); !regexp.MustCompile(`^swmgr 1\.2\.3~test \(commit [0-9a-f]{40}(\+dirty)?, go1\.\S+ \S+\)\n$`).MatchString(v) {
		t.Errorf("swmgr --version: %q", v)
	}
	checkMode(t, "/var/lib/swmgr", 0o700|os.ModeDir)
	checkMode(t, "/etc/default/swmgr", 0o600)
	if out, err := exec.Command("systemd-analyze", "verify", "/lib/systemd/system/swmgr.service").CombinedOutput(); err != nil {
		t.Errorf("systemd-analyze verify: %v\n%s", err, out)
	}
	unit, _ := os.ReadFile("/lib/systemd/system/swmgr.service")
	for _, want := range []string{"Type=notify", "ExecStart=/usr/bin/swmgr serve $SWMGR_OPTS", "NoNewPrivileges=yes", "ProtectSystem=", "StateDirectory=swmgr"} {
		if !strings.Contains(string(unit), want) {
			t.Errorf("the unit lacks %q", want)
		}
	}
	if page := run(t, "man", "-P", "cat", "swmgr-serve"); !strings.Contains(page, "--data-dir") {
		t.Errorf("man swmgr-serve does not describe --data-dir:\n%s", page)
	}
	if c := run(t, "bash", "-c", "source /usr/share/bash-completion/completions/swmgr && complete -p swmgr"); !strings.Contains(c, "swmgr") {
		t.Errorf("bash completion: %q", c)
	}

	// The installed binary serves with the package's default options, as
	// the unit starts it (the data directory aside, so that nothing is left
	// in /var/lib/swmgr), and tells systemd it is ready.
	sock := filepath.Join(t.TempDir(), "notify")
	notify, err := net.ListenUnixgram("unixgram", &net.UnixAddr{Name: sock, Net: "unixgram"})
	if err != nil {
		t.Fatal(err)
	}
	defer notify.Close()
	addr := freeAddr(t)
	serve := exec.Command("sh", "-c", `. /etc/default/swmgr && exec /usr/bin/swmgr serve $SWMGR_OPTS --data-dir "$1" --http "$2" --https "" --socket ""`,
		"sh", filepath.Join(t.TempDir(), "data"), addr)
	serve.Env = append(os.Environ(), "NOTIFY_SOCKET="+sock)
	logs := &syncBuffer{}
	serve.Stdout, serve.Stderr = logs, logs
	if err := serve.Start(); err != nil {
		t.Fatal(err)
	}
	defer func() {
		serve.Process.Signal(os.Interrupt)
		serve.Wait()
	}()
	notify.SetReadDeadline(time.Now().Add(60 * time.Second))
	buf := make([]byte, 256)
	if n, err := notify.Read(buf); err != nil || !strings.Contains(string(buf[:n]), "READY=1") {
		t.Fatalf("sd_notify: %q, %v; logs:\n%s", buf[:n], err, logs.String())
	}
	resp, err := client.Get("http://" + addr + "/readyz")
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		t.Errorf("/readyz: %d", resp.StatusCode)
	}
	serve.Process.Signal(os.Interrupt)
	serve.Wait()

	// remove keeps the data and the edited options; purge removes both.
	dpkg(t, "--remove", "swmgr")
	for _, gone := range []string{"/usr/bin/swmgr", "/lib/systemd/system/swmgr.service"} {
		if _, err := os.Stat(gone); err == nil {
			t.Errorf("%s left after remove", gone)
		}
	}
	for _, kept := range []string{"/var/lib/swmgr", "/etc/default/swmgr"} {
		if _, err := os.Stat(kept); err != nil {
			t.Errorf("remove deleted %s", kept)
		}
	}
	dpkg(t, "--purge", "swmgr")
	for _, gone := range []string{"/var/lib/swmgr", "/etc/default/swmgr"} {
		if _, err := os.Stat(gone); err == nil {
			t.Errorf("%s left after purge", gone)
		}
	}
	if out, _ := exec.Command("dpkg-query", "-W", "-f", "${Status}", "swmgr").CombinedOutput(); strings.Contains(string(out), " installed") {
		t.Errorf("still installed after purge: %s", out)
	}
}

func run(t testing.TB, name string, args ...string) string {
	t.Helper()
	out, err := exec.Command(name, args...).CombinedOutput()
	if err != nil {
		t.Fatalf("%s %v: %v\n%s", name, args, err, out)
	}
	return string(out)
}

// dpkg runs dpkg, waiting while another package operation (other tests,
// apt) holds the lock, as apt's DPkg::Lock::Timeout would.
func dpkg(t testing.TB, args ...string) {
	t.Helper()
	deadline := time.Now().Add(10 * time.Minute)
	for {
		out, err := exec.Command("dpkg", args...).CombinedOutput()
		if err == nil {
			return
		}
		if !strings.Contains(string(out), "lock") || time.Now().After(deadline) {
			t.Fatalf("dpkg %v: %v\n%s", args, err, out)
		}
		time.Sleep(2 * time.Second)
	}
}

func checkMode(t testing.TB, path string, want os.FileMode) {
	t.Helper()
	fi, err := os.Stat(path)
	if err != nil {
		t.Error(err)
		return
	}
	if fi.Mode() != want {
		t.Errorf("%s: mode %v, want %v", path, fi.Mode(), want)
	}
}

// lockPackageTest holds an exclusive lock on a machine-wide file until the
// test ends (the descriptor is closed by the last cleanup, which runs after
// the purge because cleanups run in reverse order).
func lockPackageTest(t *testing.T) {
	t.Helper()
	f, err := os.OpenFile("/run/lock/swmgr-package-test.lock", os.O_CREATE|os.O_RDWR, 0o600)
	if err != nil {
		t.Fatalf("package test lock: %v", err)
	}
	t.Cleanup(func() { f.Close() })
	if err := syscall.Flock(int(f.Fd()), syscall.LOCK_EX); err != nil {
		t.Fatalf("package test lock: %v", err)
	}
}
