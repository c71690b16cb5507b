package test

import (
	"fmt"
	"io/fs"
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

	"github.com/swmgr/swmgr/internal/datadir"
	"github.com/swmgr/swmgr/internal/testneed"
)

// The Debian package as an operator gets it: built by the script, installed
// with dpkg, its unit verified by systemd, its binary, man pages,
// completions and default options working, removed (data kept) and purged
// (what the package made gone, anything else kept and named). The test
// runs whether /var/lib/swmgr exists or not: a data directory the package
// did not make is left as it was. The package on Debian with systemd
// running is TestDebianPackageInVM's (test/debvm).
// dashboardInstalled is where the package puts the Grafana dashboard
// (docs/grafana/swmgr-dashboard.json).
const dashboardInstalled = "/usr/share/swmgr/grafana/swmgr-dashboard.json"

func TestDebianPackage(t *testing.T) {
	if testing.Short() {
		t.Skip("builds and installs a package")
	}
	if os.Geteuid() != 0 {
		t.Skip("installing a package needs root")
	}
	for _, tool := range [][2]string{{"dpkg", "dpkg"}, {"dpkg-deb", "dpkg"}, {"systemd-analyze", "systemd"}, {"man", "man-db"}} {
		testneed.Program(t, tool[1], tool[0])
	}
	// The package is installed system-wide, so two runs of this test at
	// once (two checkouts, two agents) would remove each other's package:
	// they take turns on a machine-wide lock, held until the purge is done.
	lockPackageTest(t)
	if out, err := exec.Command("dpkg-query", "-W", "-f", "${Status}", "swmgr").CombinedOutput(); err == nil && strings.Contains(string(out), "installed") {
		t.Skip("a swmgr package is already installed on this machine; this test would replace it")
	}
	const data = "/var/lib/swmgr"
	before, existed := dirListing(t, data)

	out := t.TempDir()
	build := exec.Command("sh", "../packaging/build-deb.sh", out)
	build.Env = append(os.Environ(), "SWMGR_VERSION=", "SWMGR_DEB_COMPRESSION=gzip")
	b, err := build.Output()
	if err != nil {
		t.Fatalf("build-deb.sh: %v", err)
	}
	deb := strings.TrimSpace(string(b))
	// The version: CHANGELOG.md's newest, then ~git<time>.<commit> unless
	// the commit is tagged with it.
	changelog, err := os.ReadFile("../CHANGELOG.md")
	if err != nil {
		t.Fatal(err)
	}
	m := regexp.MustCompile(`(?m)^## ([0-9][0-9.]*)`).FindSubmatch(changelog)
	if m == nil {
		t.Fatal("CHANGELOG.md has no '## <version>' heading")
	}
	arch := strings.TrimSpace(run(t, "dpkg", "--print-architecture"))
	vm := regexp.MustCompile(`^swmgr_(` + regexp.QuoteMeta(string(m[1])) + `(~git[0-9]{14}\.[0-9a-f]{12})?)_` + arch + `\.deb$`).FindStringSubmatch(filepath.Base(deb))
	if vm == nil {
		t.Fatalf("package %s: want swmgr_%s[~git<time>.<commit>]_%s.deb", deb, m[1], arch)
	}
	version := vm[1]
	info := run(t, "dpkg-deb", "--info", deb)
	for _, want := range []string{"Package: swmgr", "Version: " + version, "conffiles", "Recommends: systemd, bash-completion"} {
		if !strings.Contains(info, want) {
			t.Errorf("dpkg-deb --info lacks %q:\n%s", want, info)
		}
	}

	t.Cleanup(func() { exec.Command("dpkg", "--purge", "swmgr").Run() })
	installed := dpkg(t, "-i", deb)
	if _, err := os.Stat("/run/systemd/system"); err != nil && !strings.Contains(installed, ". /etc/default/swmgr && /usr/bin/swmgr serve $SWMGR_OPTS") {
		t.Errorf("dpkg -i without systemd does not say how to start swmgr:\n%s", installed)
	}

	files := run(t, "dpkg", "-L", "swmgr")
	for _, f := range []string{"/usr/bin/swmgr", "/lib/systemd/system/swmgr.service", "/etc/default/swmgr",
		"/usr/share/man/man1/swmgr.1.gz", "/usr/share/man/man1/swmgr-serve.1.gz",
		"/usr/share/bash-completion/completions/swmgr", "/usr/share/zsh/vendor-completions/_swmgr",
		"/usr/share/fish/vendor_completions.d/swmgr.fish", "/usr/share/doc/swmgr/README.md", "/usr/share/doc/swmgr/openapi.json",
		"/usr/share/doc/swmgr/copyright", "/usr/share/doc/swmgr/changelog.gz", "/usr/share/doc/swmgr/packaging.md",
		dashboardInstalled} {
		if !strings.Contains(files, f+"\n") {
			t.Errorf("the package does not install %s", f)
		}
	}
	if v := run(t, "/usr/bin/swmgr", "--version"); !regexp.MustCompile(`^swmgr ` + regexp.QuoteMeta(version) + ` \(commit [0-9a-f]{40}(\+dirty)?, go1\.\S+ \S+\)\n$`).MatchString(v) {
		t.Errorf("swmgr --version: %q; the package is %s", v, version)
	}
	if !existed {
		checkMode(t, data, 0o700|os.ModeDir)
	}
	checkMode(t, "/etc/default/swmgr", 0o600)
	checkMode(t, dashboardInstalled, 0o644)
	if got, err := os.ReadFile(dashboardInstalled); err != nil {
		t.Error(err)
	} else if want, err := os.ReadFile("../docs/grafana/swmgr-dashboard.json"); err != nil || string(got) != string(want) {
		t.Errorf("%s is not docs/grafana/swmgr-dashboard.json (%v)", dashboardInstalled, err)
	}
	if out, err := exec.Command("systemd-analyze", "verify", "/lib/systemd/system/swmgr.service").CombinedOutput(); err != nil {
		t.Errorf("systemd-analyze verify: %v\n%s", err, out)
	}
	unit, _ := os.ReadFile("/lib/systemd/system/swmgr.service")
	for _, want := range []string{"Type=notify", "ExecStart=/usr/bin/swmgr serve $SWMGR_OPTS", "NoNewPrivileges=yes", "ProtectSystem=", "StateDirectory=swmgr"} {
		if !strings.Contains(string(unit), want) {
			t.Errorf("the unit lacks %q", want)
		}
	}
	page := run(t, "man", "-P", "cat", "swmgr-serve")
	// The text as one line: words broken at the margin joined again.
	flat := regexp.MustCompile(`\s+`).ReplaceAllString(regexp.MustCompile(`\x{2010}\n\s*`).ReplaceAllString(page, ""), " ")
	for _, want := range []string{"--data-dir", "<data-dir>/initial-admin-password", "else <data-dir>/swmgr.sock", "EXAMPLE", "FILES", "/var/lib/swmgr/swmgr.db", "ENVIRONMENT", "SWMGR_ADMIN_PASSWORD"} {
		if !strings.Contains(flat, want) {
			t.Errorf("man swmgr-serve lacks %q:\n%s", want, page)
		}
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
	serve := exec.Command("sh", "-c", `. /etc/default/swmgr && exec /usr/bin/swmgr serve $SWMGR_OPTS --data-dir "$1" --http "$2" --https "" --socket "" --ztp=false`,
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

	// remove keeps the data and the edited options.
	dpkg(t, "--remove", "swmgr")
	for _, gone := range []string{"/usr/bin/swmgr", "/lib/systemd/system/swmgr.service"} {
		if _, err := os.Stat(gone); err == nil {
			t.Errorf("%s left after remove", gone)
		}
	}
	for _, kept := range []string{data, "/etc/default/swmgr"} {
		if _, err := os.Stat(kept); err != nil {
			t.Errorf("remove deleted %s", kept)
		}
	}
	// purge removes the options, and the data directory only if the
	// package made it: a file swmgr did not make is kept and named.
	var notes string
	if existed {
		notes = dpkg(t, "--purge", "swmgr")
		if after, _ := dirListing(t, data); after != before {
			t.Errorf("purge changed %s, which was there before the package:\nbefore:\n%s\nafter:\n%s", data, before, after)
		}
		if !strings.Contains(notes, "kept "+data) {
			t.Errorf("purge does not say it kept %s:\n%s", data, notes)
		}
	} else {
		mine := filepath.Join(data, "operator-notes.txt")
		if err := os.WriteFile(mine, []byte("not swmgr's\n"), 0o600); err != nil {
			t.Fatal(err)
		}
		os.WriteFile(filepath.Join(data, "swmgr.db"), nil, 0o600) // as the service would have made it
		t.Cleanup(func() { os.Remove(mine); os.Remove(data) })
		notes = dpkg(t, "--purge", "swmgr")
		if after, _ := dirListing(t, data); !strings.HasPrefix(after, "operator-notes.txt ") || strings.Count(after, "\n") != 1 {
			t.Errorf("after purge %s holds:\n%s\nwant only the operator's file", data, after)
		}
		if !strings.Contains(notes, "operator-notes.txt") {
			t.Errorf("purge does not name the file it kept:\n%s", notes)
		}
		os.Remove(mine)
		os.Remove(data)
		// Made by the package and left with nothing else: purge removes it.
		dpkg(t, "-i", deb)
		dpkg(t, "--purge", "swmgr")
		if _, err := os.Stat(data); err == nil {
			t.Errorf("%s left after purge", data)
		}
	}
	if _, err := os.Stat("/etc/default/swmgr"); err == nil {
		t.Errorf("/etc/default/swmgr left after purge")
	}
	if out, _ := exec.Command("dpkg-query", "-W", "-f", "${Status}", "swmgr").CombinedOutput(); strings.Contains(string(out), " installed") {
		t.Errorf("still installed after purge: %s", out)
	}
}

// TestPurgeRemovesSwmgrFiles: the package's purge deletes each of
// swmgr's own names in the data directory (internal/datadir), so a file
// swmgr adds there is not left behind or, worse, taken for the operator's.
func TestPurgeRemovesSwmgrFiles(t *testing.T) {
	b, err := os.ReadFile("../packaging/deb/postrm")
	if err != nil {
		t.Fatal(err)
	}
	m := regexp.MustCompile(`(?s)for f in (.*?); do`).FindSubmatch(b)
	if m == nil {
		t.Fatal("postrm: no 'for f in ...; do' list of swmgr's files")
	}
	listed := map[string]bool{}
	for _, f := range strings.Fields(strings.ReplaceAll(string(m[1]), "\\\n", " ")) {
		listed[f] = true
	}
	want := []string{datadir.StartupConfig}
	for _, f := range datadir.Files() {
		want = append(want, f.Name)
	}
	for _, f := range want {
		if !listed[f] {
			t.Errorf("postrm's purge does not remove %s (internal/datadir)", f)
		}
		delete(listed, f)
	}
	for f := range listed {
		t.Errorf("postrm's purge removes %s, which internal/datadir does not declare", f)
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
// apt) holds the lock, as apt's DPkg::Lock::Timeout would; it returns
// dpkg's output.
func dpkg(t testing.TB, args ...string) string {
	t.Helper()
	deadline := time.Now().Add(10 * time.Minute)
	for {
		out, err := exec.Command("dpkg", args...).CombinedOutput()
		if err == nil {
			return string(out)
		}
		if !strings.Contains(string(out), "lock") || time.Now().After(deadline) {
			t.Fatalf("dpkg %v: %v\n%s", args, err, out)
		}
		time.Sleep(2 * time.Second)
	}
}

// dirListing lists dir's entries (names, modes, sizes, recursively) and
// reports whether dir exists.
func dirListing(t testing.TB, dir string) (string, bool) {
	t.Helper()
	if _, err := os.Stat(dir); err != nil {
		return "", false
	}
	var b strings.Builder
	filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err != nil || p == dir {
			return nil
		}
		rel, _ := filepath.Rel(dir, p)
		if fi, err := d.Info(); err == nil && !d.IsDir() {
			fmt.Fprintf(&b, "%s %v %d\n", rel, fi.Mode(), fi.Size())
			return nil
		}
		fmt.Fprintf(&b, "%s/\n", rel)
		return nil
	})
	return b.String(), true
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
