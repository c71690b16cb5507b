package main

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestSummaryOfARealRun: on a real go test run of a module with a test
// that passes, one that fails, one that skips and a skipped subtest, the
// output holds the failure's output and none of the passing test's, every
// skip with its reason, and ends with the line counting them; the exit
// status is go test's.
func TestSummaryOfARealRun(t *testing.T) {
	dir := t.TempDir()
	files := map[string]string{
		"go.mod": "module example.com/sample\n\ngo 1.22\n",
		"sample_test.go": `package sample

import "testing"

func TestPasses(t *testing.T) { t.Log("quiet-when-passing") }
func TestFails(t *testing.T)  { t.Error("loud-when-failing") }
func TestSkips(t *testing.T)  { t.Skip("needs the moon") }
func TestParent(t *testing.T) {
	t.Run("sub", func(t *testing.T) { t.Skipf("needs %s", "the sun") })
}
`,
	}
	for name, text := range files {
		if err := os.WriteFile(filepath.Join(dir, name), []byte(text), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	var out, errs bytes.Buffer
	code := run(dir, []string{"-count=1", "./..."}, &out, &errs)
	text := out.String()
	if code != 1 {
		t.Errorf("exit status %d, want go test's 1\n%s\n%s", code, text, errs.String())
	}
	lines := strings.Split(strings.TrimRight(text, "\n"), "\n")
	if last := lines[len(lines)-1]; last != "tests: 2 passed, 1 failed, 2 skipped" {
		t.Errorf("the closing line: %q\n%s", last, text)
	}
	for _, want := range []string{"loud-when-failing", "FAIL\texample.com/sample", "skipped (2):",
		"example.com/sample TestSkips: sample_test.go:7: needs the moon",
		"example.com/sample TestParent/sub: sample_test.go:9: needs the sun"} {
		if !strings.Contains(text, want) {
			t.Errorf("the output lacks %q:\n%s", want, text)
		}
	}
	if strings.Contains(text, "quiet-when-passing") || strings.Contains(text, "=== RUN") {
		t.Errorf("the output shows a passing test's lines:\n%s", text)
	}
}
