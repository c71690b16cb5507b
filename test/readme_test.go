package test

import (
	"fmt"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"
)

// readmeShell runs before the README's commands: curl prints the body and
// remembers the status; a status of 400 or more must be announced by the
// next "# NNN" line (expect_status), else the script fails at the next
// command or at its end. Commands that set their own -w (reading a header)
// run curl as they are.
const readmeShell = `set -euo pipefail
fail() { echo "README: $*" >&2; exit 1; }
pending() { if [ -s "$RT/pending" ]; then fail "$(cat "$RT/pending")"; fi; }
curl() {
	pending
	for a in "$@"; do if [ "$a" = -w ]; then command curl "$@"; return; fi; done
	local code rc=0
	code=$(command curl -o "$RT/body" -w '%{http_code}' "$@") || rc=$?
	cat "$RT/body"; echo
	if [ $rc -ne 0 ] && [ $rc -ne 28 ]; then fail "curl $* exited $rc"; fi
	echo "$code" >"$RT/status"
	if [ "$code" -ge 400 ]; then echo "curl $*: status $code" >"$RT/pending"; fi
}
expect_status() {
	local got; got=$(cat "$RT/status")
	[ "$got" = "$1" ] || fail "line $2: want status $1, got $got"
	: >"$RT/pending"
	echo "README-CHECKED $2"
}
`

var statusLine = regexp.MustCompile(`^# (\d{3}) `)

// readmeScript is the README's curl session (from "## A session with curl"
// to "## The command line") as a bash script, each "# NNN" line turned into
// a check, and the number of checks.
func readmeScript(t testing.TB, readme string) (string, int) {
	start := strings.Index(readme, "## A session with curl")
	end := strings.Index(readme, "## The command line")
	if start < 0 || end < start {
		t.Fatal("README.md: no curl session")
	}
	var script strings.Builder
	checks := 0
	in := false
	for i, line := range strings.Split(readme[start:end], "\n") {
		switch {
		case strings.HasPrefix(line, "```sh"):
			in = true
		case strings.HasPrefix(line, "```"):
			in = false
		case in:
			if m := statusLine.FindStringSubmatch(line); m != nil {
				fmt.Fprintf(&script, "expect_status %s %d\n", m[1], i+1)
				checks++
				continue
			}
			script.WriteString(line + "\n")
		}
	}
	return script.String(), checks
}

// TestReadmeSession pastes the README's curl session, in order, into bash
// against a fresh `swmgr serve` with the defaults the README assumes (HTTP
// and HTTPS, the first admin's password generated into the data directory),
// only the addresses and the data directory changed.
func TestReadmeSession(t *testing.T) {
	for _, tool := range []string{"bash", "curl", "python3"} {
		if _, err := exec.LookPath(tool); err != nil {
			t.Skipf("%s is not installed", tool)
		}
	}
	readme, err := os.ReadFile("../README.md")
	if err != nil {
		t.Fatal(err)
	}
	script, checks := readmeScript(t, string(readme))
	if checks < 3 {
		t.Fatalf("the README's session has %d status checks", checks)
	}

	dir := t.TempDir()
	httpAddr, httpsAddr := freeAddr(t), freeAddr(t)
	serve := exec.Command(swmgrBin, "serve", "--data-dir", dir, "--http", httpAddr, "--https", httpsAddr, "--socket", filepath.Join(dir, "swmgr.sock"))
	for _, e := range os.Environ() {
		if !strings.HasPrefix(e, "SWMGR_") { // the password is generated, as on a fresh install
			serve.Env = append(serve.Env, e)
		}
	}
	logs := &syncBuffer{}
	serve.Stdout, serve.Stderr = logs, logs
	if err := serve.Start(); err != nil {
		t.Fatal(err)
	}
	defer func() {
		serve.Process.Signal(os.Interrupt)
		serve.Wait()
		if t.Failed() {
			t.Logf("swmgr logged:\n%s", tail(logs.String(), 4000))
		}
	}()
	for deadline := time.Now().Add(30 * time.Second); ; {
		resp, err := http.Get("http://" + httpAddr + "/readyz")
		if err == nil {
			resp.Body.Close()
			if resp.StatusCode == 200 {
				break
			}
		}
		if time.Now().After(deadline) {
			t.Fatalf("swmgr not ready: %v\n%s", err, logs.String())
		}
		time.Sleep(50 * time.Millisecond)
	}

	_, httpsPort, _ := strings.Cut(httpsAddr, ":")
	script = strings.NewReplacer(
		"localhost:8080", httpAddr,
		"https://localhost/", "https://localhost:"+httpsPort+"/",
		"D=/var/lib/swmgr", "D="+dir,
	).Replace(script)
	cmd := exec.Command("bash", "-c", readmeShell+script+"pending\n")
	cmd.Env = append(os.Environ(), "RT="+t.TempDir())
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("the README's session failed: %v\n%s", err, tail(string(out), 6000))
	}
	if n := strings.Count(string(out), "README-CHECKED"); n != checks {
		t.Errorf("%d of the README's %d status checks ran:\n%s", n, checks, tail(string(out), 6000))
	}
	for _, want := range []string{`"CandidateId"`, `"Revision"`, "event: commit", `"Name":"admin"`, `"Candidates":[{"CandidateId"`} {
		if !strings.Contains(string(out), want) {
			t.Errorf("the session's output lacks %s:\n%s", want, tail(string(out), 6000))
		}
	}
}
