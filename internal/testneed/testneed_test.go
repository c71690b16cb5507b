package testneed

import (
	"os"
	"os/exec"
	"strings"
	"testing"
)

// A missing program skips naming its package; under CI it fails. Each case
// runs in a child process, whose failure or skip is what is checked.
func TestProgram(t *testing.T) {
	if os.Getenv("TESTNEED_CHILD") == "1" {
		Program(t, "no-such-package", "no-such-program-"+t.Name())
		return
	}
	if p := Program(t, "coreutils", "/no/such/true", "true"); !strings.HasSuffix(p, "/true") {
		t.Fatalf("found %q, want the PATH's true", p)
	}
	for _, ci := range []string{"", "1"} {
		cmd := exec.Command(os.Args[0], "-test.run", "^TestProgram$", "-test.v")
		cmd.Env = append(os.Environ(), "TESTNEED_CHILD=1", "CI="+ci)
		out, err := cmd.CombinedOutput()
		s := string(out)
		if !strings.Contains(s, "no-such-package") {
			t.Errorf("CI=%q: the message does not name the package:\n%s", ci, s)
		}
		if ci == "" && (err != nil || !strings.Contains(s, "--- SKIP")) {
			t.Errorf("CI unset: want a skip, got %v:\n%s", err, s)
		}
		if ci != "" && (err == nil || !strings.Contains(s, "--- FAIL")) {
			t.Errorf("CI=1: want a failure, got %v:\n%s", err, s)
		}
	}
}
