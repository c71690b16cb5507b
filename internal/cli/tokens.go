package cli

import (
	"errors"
	"fmt"
	"regexp"
	"strings"
)

// token is one word of a command line.
type token struct {
	text   string
	pos    int  // byte offset in the line, for the caret under a bad word
	quoted bool // written in double quotes: never a command word or `?`
}

// tokenize splits a line at blanks; double quotes keep blanks in a value
// (`description "to spine 1"`) and a backslash escapes a quote or itself
// inside them.
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
				if c == '\\' && i+1 < len(line) && (line[i+1] == '"' || line[i+1] == '\\') {
					b.WriteByte(line[i+1])
					i += 2
					continue
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
			toks = append(toks, token{text: b.String(), pos: start, quoted: true})
			continue
		}
		for i < len(line) && line[i] != ' ' && line[i] != '\t' {
			i++
		}
		toks = append(toks, token{text: line[start:i], pos: start})
	}
	return toks, nil
}

// quote writes a value so that tokenize reads it back as one token.
func quote(v string) string {
	if v != "" && !strings.ContainsAny(v, " \t\"\\|") {
		return v
	}
	return `"` + strings.NewReplacer(`\`, `\\`, `"`, `\"`).Replace(v) + `"`
}

// pipe is one `| <filter>` after a command.
type pipe struct {
	name string // include, exclude, count, json, no-more
	re   *regexp.Regexp
}

var pipeNames = []string{"include", "exclude", "count", "json", "no-more"}

// splitPipes cuts `cmd | include x | count` at the bars outside quotes.
func splitPipes(line string) (string, []pipe, error) {
	var parts []string
	inQuote := false
	last := 0
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
				parts = append(parts, line[last:i])
				last = i + 1
			}
		}
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
