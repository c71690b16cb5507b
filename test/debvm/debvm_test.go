// Package debvm tests the Debian package on the OS it ships for: Debian 12
// with systemd as PID 1, in a QEMU VM (software emulation; the stock
// kernel of internal/vmtest), its root filesystem made by mmdebstrap from
// Debian's archive and cached between runs. The checks themselves run in
// the VM (testdata/vm.sh); docs/packaging.md lists them.
package debvm

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/swmgr/swmgr/internal/testneed"
	"github.com/swmgr/swmgr/internal/vmtest"
)

// EnvRun must be "1" for the test to run: it takes minutes (a VM under
// software emulation), so `go test ./...` leaves it to .ci/run, which
// runs it once, beside the rest.
const EnvRun = "SWMGR_DEBVM"

// EnvDir overrides where the root filesystem is cached.
const EnvDir = "SWMGR_DEBVM_DIR"

// rootfsPackages are installed into the VM's root filesystem beside
// Debian's minimal base; the package's Depends come with it.
var rootfsPackages = []string{"systemd", "systemd-sysv", "dbus", "frr", "chrony", "iproute2", "procps",
	"bash-completion", "kmod", "passwd", "login", "util-linux", "ca-certificates"}

func TestDebianPackageInVM(t *testing.T) {
	img, rootfs, start := vmParts(t)
	work, version, _ := buildPair(t)
	t.Logf("packages %s and %s+1 built after %s", version, version, time.Since(start).Round(time.Second))
	runVM(t, img, rootfs, work, "vm.sh", start, 1)
}

// TestOSActivateInVM: gNOI's OS service in the package's VM
// (testdata/os.sh): the running version V and V+1 installed over
// OS.Install, Activate of V+1 restarts swmgr into it, then Activate of a
// V+2 whose binary exits at once is rolled back to V+1 by itself within
// the deadline, Verify saying why.
func TestOSActivateInVM(t *testing.T) {
	img, rootfs, start := vmParts(t)
	work, version, b := buildPair(t)
	brokenDeb(t, b, filepath.Join(work, "c"), version+"+2")
	buildClient(t, work)
	t.Logf("packages %s, +1 and a broken +2 built after %s", version, time.Since(start).Round(time.Second))
	runVM(t, img, rootfs, work, "os.sh", start, 1)
}

// TestRebootInVM: gNOI's System.Reboot in the package's VM
// (testdata/reboot.sh), its changes on a disk that the test boots three
// times: a commit awaiting its confirmation when swmgr reboots the
// switch still awaits after it, with the deadline it had; one whose
// deadline passed while the switch was down is rolled back as swmgr
// starts; an activation of V+1 that the reboot interrupts before V+1
// ran is resumed and rolled back to V; the config log has each Reboot.
func TestRebootInVM(t *testing.T) {
	img, rootfs, start := vmParts(t)
	work := workDir(t)
	a := buildDeb(t, filepath.Join(work, "a"), "")
	version := debVersion(a)
	// V+1 never runs here: V's binary serves.
	repackDeb(t, a, filepath.Join(work, "b"), version+"+1", nil)
	buildClient(t, work)
	t.Logf("package %s built, and +1 repacked, after %s", version, time.Since(start).Round(time.Second))
	runVM(t, img, rootfs, work, "reboot.sh", start, 3)
}

// buildClient builds ./gnoiclient, static, into work.
func buildClient(t *testing.T, work string) {
	t.Helper()
	client := exec.Command("go", "build", "-o", filepath.Join(work, "gnoiclient"), "./gnoiclient")
	client.Env = append(os.Environ(), "CGO_ENABLED=0")
	if out, err := client.CombinedOutput(); err != nil {
		t.Fatalf("go build ./gnoiclient: %v\n%s", err, out)
	}
}

// vmParts skips the test unless asked for and able to run the VM, and
// readies the kernel and the root filesystem.
func vmParts(t *testing.T) (img, rootfs string, start time.Time) {
	if os.Getenv(EnvRun) != "1" {
		t.Skipf("the Debian VM test takes minutes: .ci/run runs it (%s=1 go test -timeout 30m ./test/debvm)", EnvRun)
	}
	if why := vmtest.Missing(); why != "" {
		testneed.Missing(t, "qemu-system-x86 busybox-static kmod cpio xz-utils", why)
	}
	testneed.Program(t, "mmdebstrap", "mmdebstrap")
	testneed.Program(t, "dpkg", "dpkg-deb")
	ctx := context.Background()
	start = time.Now()
	img, err := vmtest.Image(ctx)
	if err != nil {
		t.Fatal(err)
	}
	rootfs, err = rootFS(ctx, t)
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("kernel and root filesystem ready after %s", time.Since(start).Round(time.Second))
	return img, rootfs, start
}

// brokenDeb repacks the package deb into dir at version with a
// /usr/bin/swmgr that exits at once.
func brokenDeb(t *testing.T, deb, dir, version string) {
	t.Helper()
	repackDeb(t, deb, dir, version, []byte("#!/bin/sh\necho 'a broken swmgr' >&2\nexit 1\n"))
}

// repackDeb repacks the package deb into dir at version, with binary as
// its /usr/bin/swmgr unless nil.
func repackDeb(t *testing.T, deb, dir, version string, binary []byte) {
	t.Helper()
	tree := t.TempDir()
	run := func(name string, args ...string) {
		t.Helper()
		if out, err := exec.Command(name, args...).CombinedOutput(); err != nil {
			t.Fatalf("%s %v: %v\n%s", name, args, err, out)
		}
	}
	run("dpkg-deb", "-R", deb, tree)
	if binary != nil {
		if err := os.WriteFile(filepath.Join(tree, "usr", "bin", "swmgr"), binary, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	control := filepath.Join(tree, "DEBIAN", "control")
	b, err := os.ReadFile(control)
	if err != nil {
		t.Fatal(err)
	}
	var lines []string
	for _, l := range strings.Split(string(b), "\n") {
		if strings.HasPrefix(l, "Version: ") {
			l = "Version: " + version
		}
		lines = append(lines, l)
	}
	if err := os.WriteFile(control, []byte(strings.Join(lines, "\n")), 0o644); err != nil {
		t.Fatal(err)
	}
	os.Remove(filepath.Join(tree, "DEBIAN", "md5sums"))
	os.MkdirAll(dir, 0o755)
	run("dpkg-deb", "--root-owner-group", "-Zgzip", "-b", tree, filepath.Join(dir, "swmgr_"+version+".deb"))
}

// runVM boots the Debian VM with work shared as /vmwork, runs the
// checks of testdata/script in it and fails the test unless all of them
// passed. With boots > 1 the VM's changes are kept on a disk and the
// script is to reboot the VM (QEMU then exits) boots-1 times; the test
// boots the disk again each time, telling the script which boot it is in
// /vmwork/boot, and not before the unix time a boot left in
// /vmwork/hold-until (a switch that stays down that long).
func runVM(t *testing.T, img, rootfs, work, script string, start time.Time, boots int) {
	t.Helper()
	for _, f := range []string{script, "lib.sh", "debvm-test.service"} {
		b, err := os.ReadFile(filepath.Join("testdata", f))
		if err != nil {
			t.Fatal(err)
		}
		if f == "debvm-test.service" {
			b = bytes.ReplaceAll(b, []byte("/vmwork/vm.sh"), []byte("/vmwork/"+script))
		}
		if err := os.WriteFile(filepath.Join(work, f), b, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	initrd := filepath.Join(work, "initrd.cpio")
	if err := makeInitrd(filepath.Join(img, "initrd.cpio"), filepath.Join("testdata", "init"), initrd); err != nil {
		t.Fatal(err)
	}
	kv, err := os.ReadFile(filepath.Join(img, "kernel-version"))
	if err != nil {
		t.Fatal(err)
	}
	mods := filepath.Join(img, "kpkg/lib/modules", strings.TrimSpace(string(kv)))
	args := []string{"-accel", "tcg", "-cpu", "max", "-m", "1024", "-smp", "1",
		"-kernel", filepath.Join(img, "vmlinux"), "-initrd", initrd,
		"-append", "console=ttyS0 rdinit=/init-debvm panic=-1 quiet loglevel=3 systemd.show_status=0 " +
			// No getty: without udev (not in the root filesystem) its device
			// never appears, and the boot waited 90 s for it.
			"systemd.mask=serial-getty@ttyS0.service systemd.mask=getty@tty1.service",
		"-display", "none", "-no-reboot", "-nic", "none", "-nodefaults",
		"-serial", "file:" + filepath.Join(work, "console.log"),
		"-virtfs", "local,path=" + rootfs + ",mount_tag=rootfs,security_model=none,readonly=on,multidevs=remap",
		"-virtfs", "local,path=" + work + ",mount_tag=work,security_model=none",
		"-virtfs", "local,path=" + mods + ",mount_tag=kmods,security_model=none,readonly=on",
	}
	if boots > 1 {
		args = append(args, "-drive", "file="+makeDisk(t, img, mods, work)+",format=raw,if=virtio")
	}
	checks := func() []byte {
		out, _ := os.ReadFile(filepath.Join(work, "out.log"))
		return out
	}
	failed := func(format string, a ...any) {
		t.Helper()
		console, _ := os.ReadFile(filepath.Join(work, "console.log"))
		if len(console) > 6000 {
			console = console[len(console)-6000:]
		}
		t.Fatalf("%s (whole test %s)\nthe VM's checks:\n%s\nthe last boot's console:\n%s", fmt.Sprintf(format, a...), time.Since(start).Round(time.Second), checks(), console)
	}
	for boot := 1; boot <= boots; boot++ {
		if err := os.WriteFile(filepath.Join(work, "boot"), []byte(strconv.Itoa(boot)+"\n"), 0o644); err != nil {
			t.Fatal(err)
		}
		bootStart := time.Now()
		qctx, cancel := context.WithTimeout(context.Background(), 20*time.Minute)
		qout, qerr := exec.CommandContext(qctx, "qemu-system-x86_64", args...).CombinedOutput()
		cancel()
		t.Logf("boot %d of %d: %s in the VM", boot, boots, time.Since(bootStart).Round(time.Second))
		if qerr != nil {
			failed("boot %d: qemu: %v %s", boot, qerr, qout)
		}
		if boot == boots {
			break
		}
		// A boot that rebooted left its script running: one that ended
		// wrote rc.
		if rc, err := os.ReadFile(filepath.Join(work, "rc")); err == nil {
			failed("boot %d ended without a reboot: the script exited %s", boot, strings.TrimSpace(string(rc)))
		}
		if b, err := os.ReadFile(filepath.Join(work, "hold-until")); err == nil {
			until, err := strconv.ParseInt(strings.TrimSpace(string(b)), 10, 64)
			if err != nil {
				failed("hold-until: %v", err)
			}
			wait := time.Until(time.Unix(until+1, 0))
			t.Logf("down for %s more, as boot %d asked", wait.Round(time.Second), boot)
			time.Sleep(wait)
		}
	}
	rc, err := os.ReadFile(filepath.Join(work, "rc"))
	if err != nil || strings.TrimSpace(string(rc)) != "0" {
		failed("the VM's checks failed (exit %q)", strings.TrimSpace(string(rc)))
	}
	out := checks()
	t.Logf("the VM's checks (whole test %s):\n%s", time.Since(start).Round(time.Second), out)
	lines, _ := os.ReadFile(filepath.Join(work, script))
	if n, want := strings.Count(string(out), "\nok - "), len(checkLine.FindAllIndex(lines, -1)); n != want {
		t.Errorf("%d checks passed of the script's %d", n, want)
	}
}

// checkLine is a check of a VM script: each runs once.
var checkLine = regexp.MustCompile(`(?m)^\s*check "`)

// makeDisk makes the VM's disk, an empty ext4 file system, and writes
// work/disk-modules, the modules (paths under mods) that stage 1
// (testdata/init) loads to mount it.
func makeDisk(t *testing.T, img, mods, work string) string {
	t.Helper()
	testneed.Program(t, "e2fsprogs", "mkfs.ext4")
	disk := filepath.Join(t.TempDir(), "disk.img")
	if err := os.WriteFile(disk, nil, 0o600); err != nil {
		t.Fatal(err)
	}
	if err := os.Truncate(disk, 2<<30); err != nil {
		t.Fatal(err)
	}
	if out, err := exec.Command("mkfs.ext4", "-q", "-F", disk).CombinedOutput(); err != nil {
		t.Fatalf("mkfs.ext4: %v\n%s", err, out)
	}
	kv := filepath.Base(mods)
	deps, err := exec.Command("modprobe", "-d", filepath.Join(img, "kpkg"), "-S", kv, "--show-depends", "-a", "virtio_blk", "ext4").Output()
	if err != nil {
		t.Fatalf("modprobe --show-depends virtio_blk ext4: %v", err)
	}
	var paths []string
	for _, l := range strings.Split(string(deps), "\n") {
		if f := strings.Fields(l); len(f) >= 2 && f[0] == "insmod" {
			rel, err := filepath.Rel(mods, f[1])
			if err != nil || strings.HasPrefix(rel, "..") {
				t.Fatalf("module %s is not under %s", f[1], mods)
			}
			paths = append(paths, rel)
		}
	}
	if err := os.WriteFile(filepath.Join(work, "disk-modules"), []byte(strings.Join(paths, "\n")+"\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	return disk
}

// workDir is the VM's work directory, shared as /vmwork.
func workDir(t *testing.T) string {
	work := t.TempDir()
	os.Chmod(work, 0o755)
	return work
}

// buildPair makes the VM's work directory with the package built from
// the tree in a/ and the same at a newer version (+1) in b/: its
// version and the newer package's path.
func buildPair(t *testing.T) (work, version, newer string) {
	t.Helper()
	work = workDir(t)
	version = debVersion(buildDeb(t, filepath.Join(work, "a"), ""))
	return work, version, buildDeb(t, filepath.Join(work, "b"), version+"+1")
}

// debVersion is the version in a package's file name.
func debVersion(deb string) string { return strings.SplitN(filepath.Base(deb), "_", 3)[1] }

// buildDeb builds the package into dir with version (the tree's when "").
func buildDeb(t *testing.T, dir, version string) string {
	t.Helper()
	cmd := exec.Command("sh", "../../packaging/build-deb.sh", dir)
	cmd.Env = append(os.Environ(), "SWMGR_VERSION="+version, "SWMGR_DEB_COMPRESSION=gzip")
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("build-deb.sh: %v\n%s", err, stderr.String())
	}
	return strings.TrimSpace(string(out))
}

// makeInitrd is internal/vmtest's initramfs (busybox and the modules for
// 9p and overlay) with the Debian VM's stage 1 appended as /init-debvm:
// the kernel unpacks concatenated archives in order.
func makeInitrd(base, init, out string) error {
	dir, err := os.MkdirTemp("", "debvm-init")
	if err != nil {
		return err
	}
	defer os.RemoveAll(dir)
	b, err := os.ReadFile(init)
	if err != nil {
		return err
	}
	if err := os.WriteFile(filepath.Join(dir, "init-debvm"), b, 0o755); err != nil {
		return err
	}
	cpio := exec.Command("cpio", "-o", "-H", "newc", "--quiet")
	cpio.Dir, cpio.Stdin = dir, strings.NewReader("init-debvm\n")
	extra, err := cpio.Output()
	if err != nil {
		return err
	}
	first, err := os.ReadFile(base)
	if err != nil {
		return err
	}
	return os.WriteFile(out, append(first, extra...), 0o644)
}

// rootFS is the cached root filesystem, made by mmdebstrap unless it is
// there already with the same package list; concurrent runs wait for one
// build.
func rootFS(ctx context.Context, t *testing.T) (string, error) {
	dir := os.Getenv(EnvDir)
	if dir == "" {
		dir = "/var/cache/swmgr-debvm"
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return "", err
	}
	lock, err := os.OpenFile(filepath.Join(dir, "lock"), os.O_CREATE|os.O_RDWR, 0o600)
	if err != nil {
		return "", err
	}
	defer lock.Close()
	if err := syscall.Flock(int(lock.Fd()), syscall.LOCK_EX); err != nil {
		return "", err
	}
	defer syscall.Flock(int(lock.Fd()), syscall.LOCK_UN)
	stamp := "bookworm minbase " + strings.Join(rootfsPackages, ",") + "\n"
	rootfs, ready := filepath.Join(dir, "rootfs"), filepath.Join(dir, "ready")
	if b, err := os.ReadFile(ready); err == nil && string(b) == stamp {
		return rootfs, nil
	}
	os.Remove(ready)
	os.RemoveAll(rootfs)
	tmp := rootfs + ".tmp"
	os.RemoveAll(tmp)
	start := time.Now()
	cmd := exec.CommandContext(ctx, "mmdebstrap", "--variant=minbase", "--include="+strings.Join(rootfsPackages, ","),
		"--components=main", "bookworm", tmp, "http://deb.debian.org/debian")
	out, err := cmd.CombinedOutput()
	if err != nil {
		return "", &buildError{err: err, out: out}
	}
	if err := os.Rename(tmp, rootfs); err != nil {
		return "", err
	}
	t.Logf("mmdebstrap made the root filesystem in %s", time.Since(start).Round(time.Second))
	return rootfs, os.WriteFile(ready, []byte(stamp), 0o644)
}

type buildError struct {
	err error
	out []byte
}

func (e *buildError) Error() string {
	out := e.out
	if len(out) > 3000 {
		out = out[len(out)-3000:]
	}
	return "mmdebstrap: " + e.err.Error() + "\n" + string(out)
}
