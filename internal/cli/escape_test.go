package cli

import (
	"bytes"
	"context"
	"io"
	"net/http"
	"strings"
	"testing"

	"github.com/swmgr/swmgr/client"
	"github.com/swmgr/swmgr/internal/model"
)

// hostileValues are values a field could hold (stored before the model
// refused control characters, or sent by a backend) that try to leave their
// quotes, their line or their command, or to drive the terminal.
var hostileValues = []string{
	"x\nuser mallory Group admin password mallory-pass-1",
	"x\"\n!\nuser mallory Group admin\n!\ninterface fpPort 1\n  description \"y",
	"a\rb", "tab\there", "\x1b]2;pwned\x07", "\x1b[2J", "\u009b2J", "\u0085next", "\u202eabc", "\u2028",
	"\x00nul", "\x7fdel", "\U000e0001tag", "uplink | include x", "a;b", "?", "", "C:\\new", `say "hi"`,
	"bad\xffbyte",
}

// TestQuoteStaysOneToken: whatever a value holds, quote writes it as one
// token of printable text on one line, and tokenize reads the value back.
func TestQuoteStaysOneToken(t *testing.T) {
	for _, v := range hostileValues {
		q := quote(v)
		if strings.ContainsFunc(q, model.IsLineBreaking) || strings.ContainsRune(q, 0xfffd) && !strings.ContainsRune(v, 0xfffd) && !strings.Contains(v, "\xff") {
			t.Errorf("quote(%q) = %q holds a control character", v, q)
		}
		line := "description " + q
		toks, err := tokenize(line)
		if err != nil || len(toks) != 2 || toks[1].text != v {
			t.Errorf("tokenize(%q) = %+v, %v; want [description %q]", line, toks, err, v)
		}
		if cmd, pipes, err := splitPipes(line); err != nil || len(pipes) != 0 || cmd != line {
			t.Errorf("splitPipes(%q) = %q %v %v", line, cmd, pipes, err)
		}
		if cmds := SplitCommands(line); len(cmds) != 1 {
			t.Errorf("SplitCommands(%q) = %q", line, cmds)
		}
	}
	// What was typed before escapes existed reads as it did.
	for typed, want := range map[string]string{`"C:\new"`: `C:\new`, `"a\qb"`: `a\qb`, `"\x4"`: `\x4`} {
		if toks, err := tokenize(typed); err != nil || len(toks) != 1 || toks[0].text != want {
			t.Errorf("tokenize(%s) = %+v, %v; want %q", typed, toks, err, want)
		}
	}
}

// TestTerminalSafe: newlines and tabs of the CLI's own output stay; every
// other control character is an escape; the colours pass only when the
// session paints.
func TestTerminalSafe(t *testing.T) {
	for _, tc := range []struct {
		in     string
		colors bool
		want   string
	}{
		{"plain\ttext\n", false, "plain\ttext\n"},
		{"a\x1b]2;pwned\x07b", true, `a\u001b]2;pwned\u0007b`},
		{"\x1b[31mFAILED\x1b[0m", true, "\x1b[31mFAILED\x1b[0m"},
		{"\x1b[31mFAILED\x1b[0m", false, `\u001b[31mFAILED\u001b[0m`},
		{"\x1b[2J\x1b[31m", true, "\\u001b[2J\x1b[31m"},
		{"over\rwrite", false, `over\u000dwrite`},
		{"c1\u009b2J \u0085 \u202e", false, `c1\u009b2J \u0085 \u202e`},
		{"bad\x9bbyte", false, `bad\x9bbyte`},
		{"café ✓", false, "café ✓"},
	} {
		if got := TerminalSafe(tc.in, tc.colors); got != tc.want {
			t.Errorf("TerminalSafe(%q, %v) = %q; want %q", tc.in, tc.colors, got, tc.want)
		}
	}
}

// TestTableCellsAreOneLine: a value in a table, of either writer (the
// fixed one and the one fitted to the screen), cannot add a row or drive
// the terminal.
func TestTableCellsAreOneLine(t *testing.T) {
	rows := [][]string{}
	for _, v := range hostileValues {
		rows = append(rows, []string{"fpPort1", v})
	}
	header := []string{"IntfRef", "Description"}
	for name, write := range map[string]func(w io.Writer){
		"writeTable":  func(w io.Writer) { writeTable(w, header, rows, true) },
		"writeFitted": func(w io.Writer) { writeFitted(w, header, rows, true, showWidth) },
	} {
		var b bytes.Buffer
		write(&b)
		out := b.String()
		if n := strings.Count(out, "\n"); n < len(rows)+3 || strings.Count(out, "fpPort1") != len(rows) {
			t.Fatalf("%s:\n%s", name, out)
		}
		for _, l := range strings.Split(out, "\n") {
			if strings.ContainsFunc(l, model.IsLineBreaking) {
				t.Errorf("%s: line %q holds a control character", name, l)
			}
			if strings.HasPrefix(strings.TrimSpace(l), "user ") || strings.HasPrefix(strings.TrimSpace(l), "!") {
				t.Errorf("%s: a value made a line of its own: %q", name, l)
			}
		}
	}
}

// TestConfigLogCannotColorTheTerminal: a refused write whose path holds a
// colour sequence (which a painting session lets through as its own) is
// shown by `show config log` as text, painting or not.
func TestConfigLogCannotColorTheTerminal(t *testing.T) {
	srv := startServer(t)
	for _, m := range []string{"DELETE", "POST"} {
		req, _ := http.NewRequest(m, srv.URL+"/public/v1/config/Port/%1b%5b33mYELLOW", strings.NewReader("{}"))
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
	}
	api, _ := client.New(srv.URL)
	for _, color := range []bool{false, true} {
		var out bytes.Buffer
		s, err := NewSession(context.Background(), api, "x", Options{Out: &out, Color: color})
		if err != nil {
			t.Fatal(err)
		}
		s.Execute("show config log")
		if strings.Contains(out.String(), "\x1b[33mYELLOW") || !strings.Contains(out.String(), `\u001b[33mYELLOW`) {
			t.Errorf("color %v: show config log:\n%s", color, out.String())
		}
	}
}

// TestMaskSecretsHidesEverySpelling: whatever way a secret value is
// written (plain, quoted, with escapes that make it shorter or longer than
// its value, an unterminated quote, an abbreviated word), nothing of it is
// left in the masked line, and the words around it are.
func TestMaskSecretsHidesEverySpelling(t *testing.T) {
	reg := model.Builtin()
	for _, tc := range []struct{ line, want string }{
		{"secret tac-key-1", "secret ********"},
		{`secret "tac key 1"`, "secret ********"},
		{`secret "\x74\x61\x63-key-1" port 49`, "secret ******** port 49"},
		{`secret "C:\new-key-1"`, "secret ********"},
		{`sec tac-key-1`, "sec ********"},
		{`user alice password "open-key-1`, "user alice password ********"},
		{`secret "open key-1 more`, "secret ********"},
		{`description "open secret key-1`, "description ********"},
		{"secret\ttac-key-1 secret  x", "secret\t******** secret  ********"},
		{"show running-config", "show running-config"},
	} {
		got := MaskSecrets(reg, tc.line)
		if got != tc.want {
			t.Errorf("MaskSecrets(%q) = %q, want %q", tc.line, got, tc.want)
		}
		for _, part := range []string{"key-1", "tac-key", "x74"} {
			if strings.Contains(got, part) {
				t.Errorf("MaskSecrets(%q) = %q leaves %q", tc.line, got, part)
			}
		}
	}
}

// TestDetailValuesAreOneLine: in a detail view ("Field  value" lines) a
// value cannot add a line, forge another field's line or drive the
// terminal (a neighbor's LLDP description, a backend's answer); text the
// model declares as lines (TextLines) is shown a line of its own for each
// of its lines, all under the value's column, each escaped.
func TestDetailValuesAreOneLine(t *testing.T) {
	reg := model.Builtin()
	for _, v := range hostileValues {
		var b bytes.Buffer
		s := &Session{cat: newCatalog(reg, nil), out: &b}
		s.printDetail(reg.Lookup(model.Config, "Port"), []model.Object{{"IntfRef": "fpPort1", "Description": v}})
		out := b.String()
		if n := strings.Count(out, "\n"); n != 2 {
			t.Errorf("Description %q: %d lines:\n%s", v, n, out)
		}
		for _, l := range strings.Split(out, "\n") {
			if strings.ContainsFunc(l, model.IsLineBreaking) {
				t.Errorf("line %q holds a control character", l)
			}
		}
	}

	var b bytes.Buffer
	s := &Session{cat: newCatalog(reg, nil), out: &b}
	k := reg.Lookup(model.Config, "DNSGlobal")
	s.printDetail(k, []model.Object{{"Vrf": "default", "ResolvConf": "search lab\nnameserver 10.0.0.1\n\x1b[2Jx\n"}})
	want := "  Vrf         default\n  ResolvConf  search lab\n              nameserver 10.0.0.1\n              \\u001b[2Jx\n"
	if got := b.String(); got != want {
		t.Errorf("TextLines in a detail view:\n%s\nwant:\n%s", got, want)
	}
}
