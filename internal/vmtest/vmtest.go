// Package vmtest runs Go tests inside a QEMU virtual machine that boots
// Debian's stock kernel, for kernel features the test machines' own kernel
// lacks (VRF devices, 802.1Q, VLAN-filtering bridges, dummy devices, the
// matchall classifier).
//
// The VM shares the host's filesystem read-only (9p under a tmpfs overlay),
// so the test binary that is already running is simply run again inside,
// with EnvInVM set and a -test.run pattern selecting the tests that need
// the stock kernel. The kernel is downloaded with apt and unpacked into a
// cache directory once (never installed); QEMU runs with software
// emulation, one CPU. See docs/linux-backend.md.
package vmtest

import (
	"bytes"
	"context"
	_ "embed"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"
)

// EnvInVM is set to "1" in the environment of tests run inside the VM.
const EnvInVM = "SWMGR_IN_VM"

// EnvDir overrides where the VM image is built and cached.
const EnvDir = "SWMGR_VM_DIR"

// EnvRun, when set, replaces RunTests' pattern (to run one test in the VM
// while working on it).
const EnvRun = "SWMGR_VMTEST_RUN"

// EnvBench, when set, makes RunTests run the benchmarks it selects (a
// -test.bench pattern) in the VM instead of tests, each EnvBenchTime
// (-test.benchtime, default 3x).
const (
	EnvBench     = "SWMGR_VMTEST_BENCH"
	EnvBenchTime = "SWMGR_VMTEST_BENCHTIME"
)

// DefaultDir is the image cache when EnvDir is not set.
const DefaultDir = "/var/cache/swmgr-vmtest"

var (
	//go:embed files/setup.sh
	setupScript []byte
	//go:embed files/init
	initScript []byte
	//go:embed files/stage2.sh
	stage2Script []byte
)

// InVM reports whether this process runs inside the test VM.
func InVM() bool { return os.Getenv(EnvInVM) == "1" }

// Dir is the image cache directory.
func Dir() string {
	if d := os.Getenv(EnvDir); d != "" {
		return d
	}
	return DefaultDir
}

// Missing says why this machine cannot run the VM ("" if it can).
func Missing() string {
	if os.Geteuid() != 0 {
		return "the VM tests need root (9p export of /, netns inside)"
	}
	for _, tool := range []string{"qemu-system-x86_64", "busybox", "depmod", "cpio", "xz", "apt-get"} {
		if _, err := exec.LookPath(tool); err != nil {
			return fmt.Sprintf("%s is not installed (apt-get install qemu-system-x86 busybox-static kmod cpio xz-utils; .ci/run does)", tool)
		}
	}
	return ""
}

// Image builds the VM image in Dir() unless it is there already; concurrent
// callers (test packages run in parallel) wait for one build.
func Image(ctx context.Context) (string, error) {
	dir := Dir()
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return "", fmt.Errorf("vm image dir: %w", err)
	}
	lock, err := os.OpenFile(filepath.Join(dir, "lock"), os.O_CREATE|os.O_RDWR, 0o600)
	if err != nil {
		return "", fmt.Errorf("vm image lock: %w", err)
	}
	defer lock.Close()
	if err := syscall.Flock(int(lock.Fd()), syscall.LOCK_EX); err != nil {
		return "", fmt.Errorf("vm image lock: %w", err)
	}
	defer syscall.Flock(int(lock.Fd()), syscall.LOCK_UN)
	ready := filepath.Join(dir, "ready")
	if b, err := os.ReadFile(ready); err == nil && bytes.Equal(b, imageStamp()) {
		return dir, nil
	}
	os.Remove(ready)
	scripts := filepath.Join(dir, "scripts")
	if err := os.MkdirAll(scripts, 0o755); err != nil {
		return "", err
	}
	for name, body := range map[string][]byte{"setup.sh": setupScript, "init": initScript, "stage2.sh": stage2Script} {
		if err := os.WriteFile(filepath.Join(scripts, name), body, 0o755); err != nil {
			return "", fmt.Errorf("vm image: %w", err)
		}
	}
	cmd := exec.CommandContext(ctx, "bash", filepath.Join(scripts, "setup.sh"))
	cmd.Env = append(os.Environ(), "V="+dir, "INIT="+filepath.Join(scripts, "init"), "STAGE2="+filepath.Join(scripts, "stage2.sh"))
	out, err := cmd.CombinedOutput()
	if err != nil {
		return "", fmt.Errorf("build vm image in %s: %w\n%s", dir, err, out)
	}
	if err := os.WriteFile(ready, imageStamp(), 0o644); err != nil {
		return "", err
	}
	return dir, nil
}

// imageStamp changes whenever the scripts do, so an image built by older
// scripts is rebuilt.
func imageStamp() []byte {
	var b bytes.Buffer
	b.Write(setupScript)
	b.Write(initScript)
	b.Write(stage2Script)
	return []byte(strconv.FormatUint(fnv64(b.Bytes()), 16))
}

func fnv64(b []byte) uint64 {
	h := uint64(14695981039346656037)
	for _, c := range b {
		h ^= uint64(c)
		h *= 1099511628211
	}
	return h
}

// Result is what a command run in the VM did.
type Result struct {
	ExitCode int           // the command's; 255 if the VM died first
	Output   []byte        // the command's stdout and stderr
	Console  []byte        // the tail of the kernel console, for diagnosis
	Elapsed  time.Duration // boot to power-off
}

// Options are what a run may change in the VM.
type Options struct {
	// MemoryMB is the VM's memory; 0: 1024 MB, enough for one switch's
	// daemons (a fabric of four switches needs more).
	MemoryMB int
	// Env are NAME=value settings exported to the tests run inside.
	Env []string
}

func (o Options) memory() string {
	if o.MemoryMB == 0 {
		return "1024"
	}
	return strconv.Itoa(o.MemoryMB)
}

// Run boots the VM and runs the shell script inside, as root, in dir
// (which must be visible read-only through the shared host root).
func Run(ctx context.Context, dir, script string, timeout time.Duration) (*Result, error) {
	return RunWith(ctx, dir, script, timeout, Options{})
}

// RunWith is Run in a VM with o's memory (o.Env is RunTestsWith's).
func RunWith(ctx context.Context, dir, script string, timeout time.Duration, o Options) (*Result, error) {
	img, err := Image(ctx)
	if err != nil {
		return nil, err
	}
	kv, err := os.ReadFile(filepath.Join(img, "kernel-version"))
	if err != nil {
		return nil, fmt.Errorf("vm image: %w", err)
	}
	work, err := os.MkdirTemp(img, "run.")
	if err != nil {
		return nil, err
	}
	defer os.RemoveAll(work)
	cmdSh := fmt.Sprintf("cd %s || exit 125\n%s\n", shellQuote(dir), script)
	if err := os.WriteFile(filepath.Join(work, "cmd.sh"), []byte(cmdSh), 0o644); err != nil {
		return nil, err
	}
	ctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	mods := filepath.Join(img, "kpkg/lib/modules", strings.TrimSpace(string(kv)))
	args := []string{
		"-accel", "tcg", "-cpu", "max", "-m", o.memory(), "-smp", "1",
		"-kernel", filepath.Join(img, "vmlinux"), "-initrd", filepath.Join(img, "initrd.cpio"),
		"-append", "console=ttyS0 rdinit=/init panic=-1 quiet loglevel=3",
		"-display", "none", "-no-reboot", "-nic", "none", "-nodefaults",
		"-serial", "file:" + filepath.Join(work, "console.log"), "-serial", "stdio",
		"-virtfs", "local,path=/,mount_tag=hostroot,security_model=none,readonly=on,multidevs=remap",
		"-virtfs", "local,path=" + work + ",mount_tag=work,security_model=none",
		"-virtfs", "local,path=" + mods + ",mount_tag=kmods,security_model=none,readonly=on",
	}
	start := time.Now()
	q := exec.CommandContext(ctx, "qemu-system-x86_64", args...)
	var out bytes.Buffer
	q.Stdout, q.Stderr = &out, &out
	q.Stdin = nil
	runErr := q.Run()
	res := &Result{ExitCode: 255, Output: out.Bytes(), Elapsed: time.Since(start)}
	if b, err := os.ReadFile(filepath.Join(work, "rc")); err == nil {
		if n, err := strconv.Atoi(strings.TrimSpace(string(b))); err == nil {
			res.ExitCode = n
		}
	}
	if b, err := os.ReadFile(filepath.Join(work, "console.log")); err == nil {
		if len(b) > 4000 {
			b = b[len(b)-4000:]
		}
		res.Console = b
	}
	if ctx.Err() != nil {
		return res, fmt.Errorf("vm: gave up after %s: %w", timeout, ctx.Err())
	}
	var exitErr *exec.ExitError
	if runErr != nil && !errors.As(runErr, &exitErr) {
		return res, fmt.Errorf("vm: qemu: %w", runErr)
	}
	return res, nil
}

// testScript is the guest's script that runs args (a test binary and its
// flags) with EnvInVM and env ("NAME=value") in its environment.
func testScript(args, env []string) (string, error) {
	var script strings.Builder
	fmt.Fprintf(&script, "export %s=1\n", EnvInVM)
	for _, e := range env {
		if name, _, ok := strings.Cut(e, "="); !ok || name == "" || strings.ContainsAny(name, " \t\n'\"$") {
			return "", fmt.Errorf("vmtest: environment entry %q is not NAME=value", e)
		}
		fmt.Fprintf(&script, "export %s\n", shellQuote(e))
	}
	script.WriteString("exec")
	for _, a := range args {
		script.WriteString(" " + shellQuote(a))
	}
	return script.String(), nil
}

func shellQuote(s string) string { return "'" + strings.ReplaceAll(s, "'", `'\''`) + "'" }

// RunTests runs this test binary again inside the VM with -test.run
// pattern, and fails t if any of those tests fail. env ("NAME=value")
// is added to the tests' environment in the VM (what the host prepared
// for them, such as a binary it built). Outside CI it skips t when the
// machine cannot run the VM (no QEMU, not root); in CI (CI set) that is a
// failure, since .ci/run installs what the VM needs.
func RunTests(t *testing.T, pattern string, timeout time.Duration, env ...string) {
	t.Helper()
	RunTestsWith(t, pattern, timeout, Options{Env: env})
}

// RunTestsWith is RunTests in a VM with o's memory, o.Env exported to
// the tests.
func RunTestsWith(t *testing.T, pattern string, timeout time.Duration, o Options) {
	t.Helper()
	if InVM() {
		t.Skip("already inside the VM")
	}
	if why := Missing(); why != "" {
		if os.Getenv("CI") != "" {
			t.Fatalf("cannot run the stock-kernel VM tests: %s", why)
		}
		t.Skipf("skipping the stock-kernel VM tests: %s", why)
	}
	if p := os.Getenv(EnvRun); p != "" {
		pattern = p
	}
	bin, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	wd, err := os.Getwd()
	if err != nil {
		t.Fatal(err)
	}
	args := []string{bin, "-test.run", pattern, "-test.count=1", "-test.timeout", timeout.String()}
	if bench := os.Getenv(EnvBench); bench != "" {
		pattern = "benchmarks " + bench
		benchtime := os.Getenv(EnvBenchTime)
		if benchtime == "" {
			benchtime = "3x"
		}
		args = []string{bin, "-test.run", "^$", "-test.bench", bench, "-test.benchtime", benchtime, "-test.count=1", "-test.timeout", timeout.String()}
	}
	if testing.Verbose() {
		args = append(args, "-test.v")
	}
	script, err := testScript(args, o.Env)
	if err != nil {
		t.Fatal(err)
	}
	res, err := RunWith(context.Background(), wd, script, timeout+time.Minute, o)
	if res != nil {
		t.Logf("VM ran %s in %s (exit %d):\n%s", pattern, res.Elapsed.Round(time.Millisecond), res.ExitCode, res.Output)
	}
	if err != nil {
		t.Fatal(err)
	}
	if res.ExitCode != 0 {
		t.Fatalf("tests %s failed inside the VM (exit %d); kernel console tail:\n%s", pattern, res.ExitCode, res.Console)
	}
	if !bytes.Contains(res.Output, []byte("PASS")) && !bytes.Contains(res.Output, []byte("ok")) {
		t.Fatalf("the VM run printed no test result")
	}
}
