package cli

import (
	"errors"
	"fmt"
	"regexp"
	"strconv"
	"strings"
	"unicode"
	"unicode/utf8"

	"github.com/swmgr/swmgr/internal/model"
)

// token is one word of a command line.
type token struct {
	text   string
	pos    int  // byte offset in the line, for the caret under a bad word
	end    int  // byte offset just past it in the line (its closing quote included)
	quoted bool // written in double quotes: never a command word or `?`
}

// tokenize splits a line at blanks; double quotes keep blanks in a value
// (`description "to spine 1"`). Inside them a backslash escapes a quote or
// itself, and \uHHHH, \UHHHHHHHH and \xHH are the characters quote writes
// so (any other backslash is itself: "C:\new").
func tokenize(line string) ([]token, error) {
	var toks []token
	i := 0
	for i < len(line) {
		for i < len(line) && (line[i] == ' ' || line[i] == '\t') {
			i++
		}
		if i >= len(line) {
			break
		}
		start := i
		if line[i] == '"' {
			var b strings.Builder
			i++
			closed := false
			for i < len(line) {
				c := line[i]
				if c == '\\' {
					if n := unescape(&b, line[i:]); n > 0 {
						i += n
						continue
					}
				}
				if c == '"' {
					closed = true
					i++
					break
				}
				b.WriteByte(c)
				i++
			}
			if !closed {
				return nil, errors.New("unterminated quote")
			}
			toks = append(toks, token{text: b.String(), pos: start, end: i, quoted: true})
			continue
		}
		for i < len(line) && line[i] != ' ' && line[i] != '\t' {
			i++
		}
		toks = append(toks, token{text: line[start:i], pos: start, end: i})
	}
	return toks, nil
}

// quote writes a value so that tokenize reads it back as one token, and
// so that the line it is on stays one line of printable text whatever the
// value holds: a value with blanks, quotes, backslashes, a character the
// CLI reads as a command (| ; ?) or a control character is put in double
// quotes, inside which control characters are escapes (\u000a, \u001b), so a
// value can never end its quotes, its line or its command (a replayed
// `show run` runs only the commands it shows).
func quote(v string) string {
	if v != "" && v != "?" && !strings.ContainsFunc(v, needsQuotes) {
		return v
	}
	var b strings.Builder
	b.WriteByte('"')
	appendEscaped(&b, v, func(r rune) bool { return r == '"' || r == '\\' })
	b.WriteByte('"')
	return b.String()
}

func needsQuotes(r rune) bool {
	return r == '"' || r == '\\' || r == '|' || r == ';' || unicode.IsSpace(r) || model.IsLineBreaking(r)
}

// escapeText writes a value for a terminal: its control characters (and
// line and format characters, Unicode category C) as escapes, the rest as
// it is. Every value the CLI shows (a cell of a table: escapeCells) goes
// through it, so no value can move the cursor, retitle the window, paint
// (the session's output lets its own colours through) or forge a line.
func escapeText(v string) string {
	if !strings.ContainsFunc(v, model.IsLineBreaking) && utf8.ValidString(v) {
		return v
	}
	var b strings.Builder
	appendEscaped(&b, v, nil)
	return b.String()
}

// escapeCells returns the cells of a table, each through escapeText: the
// one way both table writers (writeTable, writeFitted) take their cells.
func escapeCells(rows [][]string) [][]string {
	out := make([][]string, len(rows))
	for i, r := range rows {
		out[i] = make([]string, len(r))
		for j, c := range r {
			out[i][j] = escapeText(c)
		}
	}
	return out
}

// appendEscaped writes v with each control character (model.IsLineBreaking)
// and each byte that is not UTF-8 as an escape tokenize reads back, and
// with a backslash before each rune for which also(r) holds.
func appendEscaped(b *strings.Builder, v string, also func(rune) bool) {
	for i := 0; i < len(v); {
		r, size := utf8.DecodeRuneInString(v[i:])
		switch {
		case r == utf8.RuneError && size == 1:
			fmt.Fprintf(b, `\x%02x`, v[i])
		case model.IsLineBreaking(r) && r > 0xFFFF:
			fmt.Fprintf(b, `\U%08x`, r)
		case model.IsLineBreaking(r):
			fmt.Fprintf(b, `\u%04x`, r)
		case also != nil && also(r):
			b.WriteByte('\\')
			b.WriteRune(r)
		default:
			b.WriteString(v[i : i+size])
		}
		i += size
	}
}

// unescape reads the escape at the start of s (a backslash first) into b
// and returns its length; 0 if s does not start with one.
func unescape(b *strings.Builder, s string) int {
	if len(s) < 2 {
		return 0
	}
	var digits int
	switch s[1] {
	case '"', '\\':
		b.WriteByte(s[1])
		return 2
	case 'x':
		digits = 2
	case 'u':
		digits = 4
	case 'U':
		digits = 8
	}
	if digits == 0 || len(s) < 2+digits {
		return 0
	}
	n, err := strconv.ParseUint(s[2:2+digits], 16, 32)
	if err != nil {
		return 0
	}
	if s[1] == 'x' {
		b.WriteByte(byte(n))
	} else if !utf8.ValidRune(rune(n)) {
		return 0
	} else {
		b.WriteRune(rune(n))
	}
	return 2 + digits
}

// pipe is one `| <filter>` after a command.
type pipe struct {
	name string // include, exclude, count, json, no-more
	re   *regexp.Regexp
}

var pipeNames = []string{"include", "exclude", "count", "json", "no-more"}

// pipeBars is the indexes of the bars of line outside quotes (a backslash
// in quotes escapes the next byte).
func pipeBars(line string) []int {
	var bars []int
	inQuote := false
	for i := 0; i < len(line); i++ {
		switch line[i] {
		case '\\':
			if inQuote {
				i++
			}
		case '"':
			inQuote = !inQuote
		case '|':
			if !inQuote {
				bars = append(bars, i)
			}
		}
	}
	return bars
}

// splitPipes cuts `cmd | include x | count` at the bars outside quotes.
func splitPipes(line string) (string, []pipe, error) {
	var parts []string
	last := 0
	for _, i := range pipeBars(line) {
		parts = append(parts, line[last:i])
		last = i + 1
	}
	parts = append(parts, line[last:])
	var pipes []pipe
	for _, p := range parts[1:] {
		p = strings.TrimSpace(p)
		name, arg, _ := strings.Cut(p, " ")
		arg = strings.TrimSpace(arg)
		m := matchWord(name, pipeNames)
		if len(m) != 1 {
			return "", nil, fmt.Errorf("unknown filter %q after |: want one of %s", name, strings.Join(pipeNames, ", "))
		}
		pp := pipe{name: m[0]}
		switch pp.name {
		case "include", "exclude":
			if arg == "" {
				return "", nil, fmt.Errorf("| %s needs a regular expression", pp.name)
			}
			if t, err := tokenize(arg); err == nil && len(t) == 1 {
				arg = t[0].text
			}
			re, err := regexp.Compile(arg)
			if err != nil {
				return "", nil, fmt.Errorf("| %s: %v", pp.name, err)
			}
			pp.re = re
		default:
			if arg != "" {
				return "", nil, fmt.Errorf("| %s takes no argument", pp.name)
			}
		}
		pipes = append(pipes, pp)
	}
	return parts[0], pipes, nil
}

// filter applies the line filters of pipes to text.
func filter(text string, pipes []pipe) string {
	lines := strings.SplitAfter(text, "\n")
	if len(lines) > 0 && lines[len(lines)-1] == "" {
		lines = lines[:len(lines)-1]
	}
	for _, p := range pipes {
		switch p.name {
		case "include", "exclude":
			var kept []string
			for _, l := range lines {
				if p.re.MatchString(strings.TrimRight(l, "\n")) == (p.name == "include") {
					kept = append(kept, l)
				}
			}
			lines = kept
		case "count":
			lines = []string{fmt.Sprintf("Count: %d lines\n", len(lines))}
		}
	}
	return strings.Join(lines, "")
}
