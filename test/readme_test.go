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

	"github.com/swmgr/swmgr/internal/testneed"
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

// readmeBlock is one fenced block of the README.
type readmeBlock struct {
	line  int    // of the opening fence, 1-based
	lang  string // "sh", or "" for the CLI session and the like
	lines []string
}

func readmeBlocks(readme string) []readmeBlock {
	var blocks []readmeBlock
	var cur *readmeBlock
	for i, line := range strings.Split(readme, "\n") {
		switch {
		case cur == nil && strings.HasPrefix(line, "```"):
			cur = &readmeBlock{line: i + 1, lang: strings.TrimPrefix(line, "```")}
		case cur != nil && strings.HasPrefix(line, "```"):
			blocks = append(blocks, *cur)
			cur = nil
		case cur != nil:
			cur.lines = append(cur.lines, line)
		}
	}
	return blocks
}

// notRun are the README's shell blocks the walkthrough test does not
// paste, by their first line, and why; every other sh block runs.
var notRun = map[string]string{
	"go run ./cmd/swmgr serve": "the server itself: the test starts the same binary, its addresses and data directory changed",
	readmeTestCommand:          "the test suite, which this test is part of",
	"go build -o swmgr ./cmd/swmgr                 # Go 1.26; one static-enough binary": "building and installing the package: TestDebianPackage and TestDebianPackageInVM",
}

// cliPrompt is the CLI's prompt at the start of a line of the README's
// CLI session: what follows it is a command (up to an annotation in
// parentheses after two blanks or more).
var (
	cliPrompt     = regexp.MustCompile(`^switch(\([^)]*\))?[>#]`)
	cliAnnotation = regexp.MustCompile(`\s{2,}\(.*\)$`)
)

// readmeScript is the README's walkthrough as one bash script: every sh
// block in order (but notRun's), each "# NNN" line turned into a check;
// the CLI session (a block of switch> prompts) is piped into
// `swmgr cli`, its exit status must be 0 and each output line it shows
// (but "...") must appear in the CLI's output ("..." within a line
// standing for anything). It returns the script
// and the number of checks.
func readmeScript(t testing.TB, readme string) (string, int) {
	var script strings.Builder
	checks, ran, cliBlocks := 0, 0, 0
	for _, b := range readmeBlocks(readme) {
		switch {
		case b.lang == "sh":
			if len(b.lines) > 0 && notRun[b.lines[0]] != "" {
				continue
			}
			ran++
			fmt.Fprintf(&script, "# README.md:%d\n", b.line)
			for i, line := range b.lines {
				if m := statusLine.FindStringSubmatch(line); m != nil {
					fmt.Fprintf(&script, "expect_status %s %d\n", m[1], b.line+1+i)
					checks++
					continue
				}
				script.WriteString(line + "\n")
			}
		case b.lang == "" && len(b.lines) > 0 && cliPrompt.MatchString(b.lines[0]):
			cliBlocks++
			var in, want []string
			for _, line := range b.lines {
				if loc := cliPrompt.FindStringIndex(line); loc != nil {
					in = append(in, strings.TrimSpace(cliAnnotation.ReplaceAllString(line[loc[1]:], "")))
				} else if l := strings.TrimSpace(line); l != "" && l != "..." {
					want = append(want, l)
				}
			}
			fmt.Fprintf(&script, "# README.md:%d: the CLI session\npending\nswmgr cli >\"$RT/cli.out\" 2>&1 <<'README_CLI' || { cat \"$RT/cli.out\"; fail \"line %d: swmgr cli exited $?\"; }\n%s\nREADME_CLI\ncat \"$RT/cli.out\"\n", b.line, b.line, strings.Join(in, "\n"))
			for _, w := range want {
				// "..." in a line stands for what varies (a time).
				parts := strings.Split(w, "...")
				for i := range parts {
					parts[i] = regexp.QuoteMeta(parts[i])
				}
				fmt.Fprintf(&script, "grep -qE -- %s \"$RT/cli.out\" || fail %s\n", shellQuote(strings.Join(parts, ".*")), shellQuote(fmt.Sprintf("line %d: the CLI did not print %q", b.line, w)))
			}
			checks++
			fmt.Fprintf(&script, "echo README-CHECKED %d\n", b.line)
		}
	}
	if ran < 4 || cliBlocks != 1 {
		t.Fatalf("README.md: %d shell blocks run and %d CLI sessions; the walkthrough has more", ran, cliBlocks)
	}
	return script.String(), checks
}

func shellQuote(s string) string { return "'" + strings.ReplaceAll(s, "'", `'\''`) + "'" }

// TestReadmeSession pastes the README's walkthrough, every shell block and
// the CLI session in order, into bash against one fresh `swmgr serve` with
// the defaults the README assumes (HTTP and HTTPS, the first admin's
// password generated into the data directory), only the addresses and the
// data directory changed, and `swmgr` the binary under test on the PATH,
// SWMGR_SOCKET naming the server's socket.
func TestReadmeSession(t *testing.T) {
	for _, tool := range [][2]string{{"bash", "bash"}, {"curl", "curl"}, {"python3", "python3"}} {
		testneed.Program(t, tool[1], tool[0])
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
	bin := t.TempDir()
	if err := os.Symlink(swmgrBin, filepath.Join(bin, "swmgr")); err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command("bash", "-c", readmeShell+script+"pending\n")
	cmd.Env = append(os.Environ(), "RT="+t.TempDir(), "PATH="+bin+":"+os.Getenv("PATH"), "SWMGR_SOCKET="+filepath.Join(dir, "swmgr.sock"))
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

// readmeTestCommand is the README's command that runs the whole suite.
const readmeTestCommand = "go run ./test/testsum -count=1 -timeout 25m ./..."

// TestCIRunsTheReadmeTestCommand: the README's test command (the block
// after "Run the whole test suite") is readmeTestCommand, and .ci/run runs
// exactly it.
func TestCIRunsTheReadmeTestCommand(t *testing.T) {
	readme, err := os.ReadFile("../README.md")
	if err != nil {
		t.Fatal(err)
	}
	_, after, ok := strings.Cut(string(readme), "Run the whole test suite")
	blocks := readmeBlocks(after)
	if !ok || len(blocks) == 0 || len(blocks[0].lines) != 1 || blocks[0].lines[0] != readmeTestCommand {
		t.Fatalf("the README's test command is not %q", readmeTestCommand)
	}
	ci, err := os.ReadFile("../.ci/run")
	if err != nil {
		t.Fatal(err)
	}
	runs := 0
	for _, line := range strings.Split(string(ci), "\n") {
		if cmd, _, _ := strings.Cut(line, " ||"); strings.TrimSpace(cmd) == readmeTestCommand {
			runs++
		}
	}
	if runs != 1 {
		t.Errorf(".ci/run runs the README's test command %d times, want once:\n%s", runs, ci)
	}
}
