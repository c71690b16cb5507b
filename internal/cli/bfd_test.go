package cli

import (
	"regexp"
	"strings"
	"testing"
)

// TestBfdCLI: a BFD parameter set and a session configured in the CLI's
// words, then `show bfd peers` lists the session (down on the simulated
// switch: no peer answers) with the parameters' intervals.
func TestBfdCLI(t *testing.T) {
	srv := startServer(t)
	out, err := run(t, srv, "enable\nconfig\nbfd profile fast\nRequiredMinRxInterval 100\nDesiredMinTxInterval 100\n!\nbfd session 10.0.0.2\nParamName fast\n!\napply\nshow run\nshow bfd peers\nshow bfd peers brief\n")
	if err != nil {
		t.Fatalf("%v\n%s", err, out)
	}
	for _, want := range []string{"sdk:createBfdSessionParam(fast,RequiredMinRxInterval=100,DesiredMinTxInterval=100) result: SUCCESS",
		"bfd session 10.0.0.2\n  ParamName fast\n", "bfd profile fast\n  RequiredMinRxInterval 100\n"} {
		if !strings.Contains(out, want) {
			t.Errorf("lacks %q:\n%s", want, out)
		}
	}
	flex := out[strings.Index(out, "#show bfd peers\n"):strings.Index(out, "#show bfd peers brief")]
	if !regexp.MustCompile(`(?m)^ 10\.0\.0\.2 +down +100 +100 +0\s*$`).MatchString(flex) {
		t.Errorf("show bfd peers lists no session with 10.0.0.2, down, at 100 ms:\n%s", flex)
	}
	brief := out[strings.Index(out, "#show bfd peers brief"):]
	if !regexp.MustCompile(`(?m)^ *10\.0\.0\.2 +down +100 +100 +3 +0 +0 +`).MatchString(brief) || !strings.Contains(brief, "Peer") {
		t.Errorf("show bfd peers brief:\n%s", brief)
	}
}
