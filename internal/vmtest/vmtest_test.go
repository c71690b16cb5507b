package vmtest

import (
	"bytes"
	"context"
	"os"
	"testing"
	"time"
)

// TestRunPassesOutputAndExitCode boots the VM once: the guest must run the
// stock Debian kernel (not the host's), see the host's files, and hand back
// the command's output and exit code.
func TestRunPassesOutputAndExitCode(t *testing.T) {
	if InVM() {
		t.Skip("inside the VM")
	}
	if why := Missing(); why != "" {
		if os.Getenv("CI") != "" {
			t.Fatal(why)
		}
		t.Skip(why)
	}
	wd, _ := os.Getwd()
	host, _ := os.ReadFile("/proc/sys/kernel/osrelease")
	res, err := Run(context.Background(), wd, "cat /proc/sys/kernel/osrelease; test -f vmtest.go && echo shared-root; exit 7", 3*time.Minute)
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("VM round trip %s: %s", res.Elapsed.Round(time.Millisecond), res.Output)
	if res.ExitCode != 7 {
		t.Fatalf("exit code %d, want 7; console:\n%s", res.ExitCode, res.Console)
	}
	if !bytes.Contains(res.Output, []byte("shared-root")) {
		t.Errorf("the guest does not see the host's files: %q", res.Output)
	}
	if bytes.Contains(res.Output, bytes.TrimSpace(host)) {
		t.Errorf("the guest runs the host's kernel %s, not Debian's", host)
	}
}
