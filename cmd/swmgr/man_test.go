package main

import (
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"
)

// TestManPagesKeepAngleBrackets: a flag's usage and default are in its man
// page as the help shows them, and every <word> of a command's texts is
// there too; the markdown the pages go through would otherwise take <word>
// for an HTML tag and drop it (swmgr-serve's --socket default read
// "else /swmgr.sock").
func TestManPagesKeepAngleBrackets(t *testing.T) {
	angled := regexp.MustCompile(`<[a-z][a-z-]*>[^\s"),;]*`)
	// What each page must hold, read before writeManPages escapes the texts.
	want := map[string][]string{}
	flagLine := func(f *pflag.Flag) string {
		if f.Value.Type() == "string" {
			return `="` + f.DefValue + `"`
		}
		return "=" + f.DefValue
	}
	var walk func(c *cobra.Command)
	walk = func(c *cobra.Command) {
		if !c.IsAvailableCommand() && c.HasParent() || c.IsAdditionalHelpTopicCommand() {
			return
		}
		page := strings.ReplaceAll(c.CommandPath(), " ", "-") + ".1"
		for _, s := range []string{c.Short, c.Long} {
			want[page] = append(want[page], angled.FindAllString(s, -1)...)
		}
		c.Flags().VisitAll(func(f *pflag.Flag) {
			if angled.MatchString(f.Usage + f.DefValue) {
				want[page] = append(want[page], "--"+f.Name+`\fP`+flagLine(f), f.Usage)
			}
		})
		for _, sub := range c.Commands() {
			walk(sub)
		}
	}
	root := rootCommand()
	walk(root)
	if !strings.Contains(strings.Join(want["swmgr-serve.1"], " "), "else <data-dir>/swmgr.sock") {
		t.Fatalf("swmgr serve's texts no longer name <data-dir>/swmgr.sock: %q", want["swmgr-serve.1"])
	}
	dir := t.TempDir()
	if err := writeManPages(root, dir); err != nil {
		t.Fatal(err)
	}
	for page, words := range want {
		b, err := os.ReadFile(filepath.Join(dir, page))
		if err != nil {
			t.Fatal(err)
		}
		// roff writes a hyphen as \- in places; the reader sees "-".
		text := strings.ReplaceAll(string(b), `\-`, "-")
		for _, w := range words {
			if !strings.Contains(text, w) {
				t.Errorf("%s lost %q", page, w)
			}
		}
	}
}
