package vmtest

import (
	"os/exec"
	"strings"
	"testing"
)

// TestScriptPassesEnvironment: the guest's script runs the binary with
// EnvInVM and each NAME=value given, quoted so that a value reaches it
// whole; an entry that is not NAME=value is refused.
func TestScriptPassesEnvironment(t *testing.T) {
	script, err := testScript([]string{"/usr/bin/env"}, []string{"SWMGR_BLACKBOX_BINARY=/tmp/a b'c $(id)"})
	if err != nil {
		t.Fatal(err)
	}
	out, err := exec.Command("bash", "-c", script).CombinedOutput()
	if err != nil {
		t.Fatalf("%v: %s", err, out)
	}
	for _, want := range []string{EnvInVM + "=1\n", "SWMGR_BLACKBOX_BINARY=/tmp/a b'c $(id)\n"} {
		if !strings.Contains(string(out), want) {
			t.Errorf("the environment lacks %q:\n%s", want, out)
		}
	}
	for _, bad := range []string{"NOVALUE", "=x", "A B=x", "$(id)=x"} {
		if _, err := testScript([]string{"/usr/bin/env"}, []string{bad}); err == nil {
			t.Errorf("entry %q accepted", bad)
		}
	}
}
