// Command testsum runs `go test -json` with the arguments it is given and
// prints what `go test` would (each package's ok or FAIL line, the output of
// the tests that fail, build errors), then every skipped test with its
// reason, and last one line counting the tests (subtests included) that
// passed, failed and skipped:
//
//	tests: 812 passed, 0 failed, 9 skipped
//
// It exits with go test's status. The README's test command and .ci/run
// run the suite through it: `go run ./test/testsum -count=1 -timeout 25m ./...`.
package main

import (
	"bufio"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"sort"
	"strings"
)

func main() {
	os.Exit(run("", os.Args[1:], os.Stdout, os.Stderr))
}

// run runs go test -json args in dir and writes the summary to stdout; it
// returns the exit status.
func run(dir string, args []string, stdout, stderr io.Writer) int {
	cmd := exec.Command("go", append([]string{"test", "-json"}, args...)...)
	cmd.Dir, cmd.Stderr = dir, stderr
	events, err := cmd.StdoutPipe()
	if err != nil {
		fmt.Fprintln(stderr, "testsum:", err)
		return 2
	}
	if err := cmd.Start(); err != nil {
		fmt.Fprintln(stderr, "testsum:", err)
		return 2
	}
	s := newSummary(stdout)
	s.read(events)
	err = cmd.Wait()
	s.close()
	var exit *exec.ExitError
	switch {
	case errors.As(err, &exit):
		return exit.ExitCode()
	case err != nil:
		fmt.Fprintln(stderr, "testsum:", err)
		return 2
	case s.failed > 0:
		return 1 // go test said ok to a failed test: not expected, but never a pass
	}
	return 0
}

// event is one line of go test -json: a test2json TestEvent or a build
// event (ImportPath).
type event struct {
	Action     string
	Package    string
	Test       string
	Output     string
	ImportPath string
}

// summary follows the event stream: output held per test until the test
// ends (printed if it failed), counts, and the skipped tests' reasons.
type summary struct {
	w                     io.Writer
	held                  map[[2]string]*strings.Builder // package, test: output so far
	passed, failed, skips int
	reasons               []string
}

func newSummary(w io.Writer) *summary {
	return &summary{w: w, held: map[[2]string]*strings.Builder{}}
}

func (s *summary) read(r io.Reader) {
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 0, 64<<10), 64<<20)
	for sc.Scan() {
		var e event
		if err := json.Unmarshal(sc.Bytes(), &e); err != nil || e.Action == "" {
			fmt.Fprintln(s.w, sc.Text()) // not an event: as it came
			continue
		}
		s.event(e)
	}
}

func (s *summary) event(e event) {
	switch {
	case e.Action == "build-output":
		io.WriteString(s.w, e.Output)
	case e.Test == "" && e.Action == "output":
		// The package's own lines: "ok  pkg 0.1s", "FAIL pkg", a panic.
		if line := strings.TrimSpace(e.Output); line != "PASS" && !strings.HasPrefix(line, "=== ") {
			io.WriteString(s.w, e.Output)
		}
	case e.Test == "" && e.Action == "fail":
		// A package that failed with tests still running (a timeout, a
		// panic): their output is what says why.
		for k, b := range s.held {
			if k[0] == e.Package {
				io.WriteString(s.w, withoutMarks(b.String()))
				delete(s.held, k)
			}
		}
	case e.Test == "":
	case e.Action == "output":
		k := [2]string{e.Package, e.Test}
		if s.held[k] == nil {
			s.held[k] = &strings.Builder{}
		}
		s.held[k].WriteString(e.Output)
	case e.Action == "pass", e.Action == "fail", e.Action == "skip":
		k := [2]string{e.Package, e.Test}
		out := ""
		if b := s.held[k]; b != nil {
			out = b.String()
		}
		delete(s.held, k)
		switch e.Action {
		case "pass":
			s.passed++
		case "fail":
			s.failed++
			io.WriteString(s.w, withoutMarks(out))
		case "skip":
			s.skips++
			s.reasons = append(s.reasons, fmt.Sprintf("%s %s: %s", e.Package, e.Test, skipReason(out)))
		}
	}
}

// withoutMarks is a test's output without the "=== RUN" (PAUSE, CONT)
// lines go test -json adds, as go test without -v shows it.
func withoutMarks(out string) string {
	lines := strings.SplitAfter(out, "\n")
	kept := lines[:0]
	for _, l := range lines {
		if !strings.HasPrefix(strings.TrimSpace(l), "=== ") {
			kept = append(kept, l)
		}
	}
	return strings.Join(kept, "")
}

// skipReason is what a skipped test logged, without the lines the testing
// package writes around it.
func skipReason(out string) string {
	var lines []string
	for _, l := range strings.Split(out, "\n") {
		l = strings.TrimSpace(l)
		if l == "" || strings.HasPrefix(l, "=== ") || strings.HasPrefix(l, "--- SKIP") {
			continue
		}
		lines = append(lines, l)
	}
	if len(lines) == 0 {
		return "(no reason given)"
	}
	return strings.Join(lines, " / ")
}

// close writes the skipped tests and the closing line.
func (s *summary) close() {
	if len(s.reasons) > 0 {
		sort.Strings(s.reasons)
		fmt.Fprintf(s.w, "\nskipped (%d):\n", len(s.reasons))
		for _, r := range s.reasons {
			fmt.Fprintln(s.w, "  "+r)
		}
	}
	fmt.Fprintf(s.w, "tests: %d passed, %d failed, %d skipped\n", s.passed, s.failed, s.skips)
}
