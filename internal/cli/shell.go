package cli

import (
	"bufio"
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"sync"

	"github.com/ergochat/readline"
	"golang.org/x/term"

	"github.com/swmgr/swmgr/client"
	"github.com/swmgr/swmgr/internal/model"
)

// RunOptions say where the commands come from and where output goes.
type RunOptions struct {
	In          io.Reader // commands when not interactive
	Out         io.Writer
	Interactive bool     // a terminal: line editor, completion, colour
	Color       bool     // colour on the terminal
	Commands    []string // -c: run these and exit
	Banner      bool
	HistoryFile string // interactive history ("" for none)
	Endpoint    string // what the prompt falls back to
	// Shell runs bash for `shell` (interactive sessions on the switch
	// only); OSUser and Root say who the CLI runs as.
	Shell  func(ctx context.Context) error
	OSUser string
	Root   bool
	// Probe runs `ping` and `traceroute` on the switch (gNOI); nil: they
	// say how to make them available.
	Probe Prober
}

// ErrSomeFailed is returned when a scripted line failed.
var ErrSomeFailed = errors.New("a command failed")

// Run runs a CLI session until exit, quit or the end of input.
func Run(ctx context.Context, api *client.Client, o RunOptions) error {
	if o.Interactive && o.Commands == nil {
		return runInteractive(ctx, api, o)
	}
	var next func() (string, error)
	if o.Commands != nil {
		cmds := o.Commands
		next = func() (string, error) {
			if len(cmds) == 0 {
				return "", io.EOF
			}
			c := cmds[0]
			cmds = cmds[1:]
			return c, nil
		}
	} else {
		sc := bufio.NewScanner(o.In)
		sc.Buffer(make([]byte, 64*1024), 1<<20)
		next = func() (string, error) {
			if sc.Scan() {
				return sc.Text(), nil
			}
			if err := sc.Err(); err != nil {
				return "", err
			}
			return "", io.EOF
		}
	}
	var s *Session
	read := func(prompt string) (string, error) {
		l, err := next()
		if err == nil && prompt != "" {
			io.WriteString(o.Out, TerminalSafe(prompt+l, false)+"\n")
		}
		return l, err
	}
	s, err := NewSession(ctx, api, o.Endpoint, Options{Out: o.Out, Ask: read, Lines: read, Probe: o.Probe})
	if err != nil {
		return err
	}
	defer s.Close()
	failed := false
	for {
		line, err := next()
		if err == io.EOF {
			break
		}
		if err != nil {
			return err
		}
		io.WriteString(o.Out, TerminalSafe(s.Prompt()+MaskSecrets(s.cat.reg, line), false)+"\n")
		switch err := s.Execute(line); {
		case errors.Is(err, errQuit):
			s.EndRecords()
			return finish(failed)
		case err != nil:
			failed = true
		}
	}
	s.EndRecords()
	return finish(failed)
}

func finish(failed bool) error {
	if failed {
		return ErrSomeFailed
	}
	return nil
}

// SplitCommands cuts `-c "cmd; cmd"` at semicolons outside quotes.
func SplitCommands(s string) []string {
	var out []string
	inQuote := false
	last := 0
	for i := 0; i < len(s); i++ {
		switch s[i] {
		case '\\':
			if inQuote {
				i++
			}
		case '"':
			inQuote = !inQuote
		case ';':
			if !inQuote {
				out = append(out, strings.TrimSpace(s[last:i]))
				last = i + 1
			}
		}
	}
	return append(out, strings.TrimSpace(s[last:]))
}

type completer struct{ s *Session }

func (c completer) Do(line []rune, pos int) ([][]rune, int) {
	cands, partial := c.s.Complete(string(line[:pos]))
	var out [][]rune
	for _, w := range cands {
		if strings.ContainsFunc(w, model.IsLineBreaking) {
			continue // a live key stored before control characters were refused: readline would print it raw
		}
		out = append(out, []rune(w[len(partial):]+" "))
	}
	return out, len([]rune(partial))
}

// MaskSecrets is line with every secret value masked (the model's
// MaskCommandLine): for echoes, the command column of showunapplied and
// what leaves the switch (a command's accounting record, which the server
// masks again with the same reading).
func MaskSecrets(reg *model.Registry, line string) string { return reg.MaskCommandLine(line) }

// HasSecret reports whether a command line carries a secret value. A
// line with an unterminated quote may (MaskSecrets masks all after it).
func HasSecret(reg *model.Registry, line string) bool {
	toks, err := tokenize(line)
	if err != nil {
		return true
	}
	for _, t := range toks {
		if reg.IsSecretWord(t.text) {
			return true
		}
	}
	return false
}

func runInteractive(ctx context.Context, api *client.Client, o RunOptions) error {
	var rl *readline.Instance
	ask := func(prompt string) (string, error) {
		return rl.ReadLineWithConfig(&readline.Config{Prompt: prompt + " "})
	}
	lines := func(prompt string) (string, error) {
		return rl.ReadLineWithConfig(&readline.Config{Prompt: prompt})
	}
	s, err := NewSession(ctx, api, o.Endpoint, Options{Out: o.Out, Color: o.Color, Interact: true, Ask: ask, Lines: lines, Shell: o.Shell, OSUser: o.OSUser, Root: o.Root, Probe: o.Probe})
	if err != nil {
		return err
	}
	cfg := &readline.Config{
		Prompt:                 s.Prompt(),
		AutoComplete:           completer{s},
		HistoryFile:            o.HistoryFile,
		DisableAutoSaveHistory: true,
		InterruptPrompt:        "^C",
		EOFPrompt:              "",
		Stdout:                 o.Out,
	}
	cfg.Listener = func(line []rune, pos int, key rune) ([]rune, int, bool) {
		if key == '\t' {
			// TAB where no word can be listed: the form of the value.
			before := string(line[:pos])
			if cands, _ := s.Complete(before); len(cands) == 0 {
				if h := s.Hint(before); h != "" {
					fmt.Fprintf(rl, "\n%s\n", h)
					return line, pos, true
				}
			}
			return nil, 0, false
		}
		// Instant help: `?` prints what may come next and re-draws the
		// line without it. Inside quotes it is a character of the value.
		if key != '?' || pos == 0 || line[pos-1] != '?' || strings.Count(string(line[:pos-1]), `"`)%2 == 1 {
			return nil, 0, false
		}
		before := string(line[:pos-1])
		var buf bytes.Buffer
		out := s.out
		s.out = &buf
		toks, _ := tokenize(before)
		if !strings.HasSuffix(before, " ") && len(toks) > 0 {
			// `sh?` lists the words sh may be.
			cands, _ := s.Complete(before)
			s.printHelp(nil, rowsOf(cands))
		} else {
			s.help(toks)
		}
		s.out = out
		fmt.Fprintf(rl, "\n%s", strings.ReplaceAll(buf.String(), "\n", "\r\n"))
		nl := append(append([]rune{}, line[:pos-1]...), line[pos:]...)
		return nl, pos - 1, true
	}
	defer s.Close()
	rl, err = readline.NewFromConfig(cfg)
	if err != nil {
		return err
	}
	defer rl.Close()
	s.out = rl.Stdout()
	// Live notices: the change feed, followed while the session is open;
	// a notice is decided and printed between commands (mu), above the
	// prompt being edited.
	var mu sync.Mutex
	feedCtx, stopFeed := context.WithCancel(ctx)
	defer stopFeed()
	go func() {
		for ev, err := range api.Events(feedCtx, client.FeedOptions{}) {
			if err != nil {
				return
			}
			mu.Lock()
			line := s.Notice(ev)
			mu.Unlock()
			if line != "" {
				fmt.Fprintf(rl.Stdout(), "%s\n", line)
			}
		}
	}()
	if o.Banner {
		s.printf("swmgr Console, Connected to: %s (%s)\nUsing snap style cli\n", s.host, o.Endpoint)
	}
	for {
		rl.SetPrompt(s.Prompt())
		line, err := rl.ReadLine()
		if errors.Is(err, readline.ErrInterrupt) {
			// Ctrl-C clears the line and keeps the mode.
			continue
		}
		if err == io.EOF {
			s.printf("\n")
			return nil
		}
		if err != nil {
			return err
		}
		if strings.TrimSpace(line) != "" && o.HistoryFile != "" && !HasSecret(s.cat.reg, line) {
			rl.SaveToHistory(line)
		}
		if !pages(line) {
			mu.Lock()
			err := s.Execute(line)
			mu.Unlock()
			if errors.Is(err, errQuit) {
				return nil
			}
			continue
		}
		var buf bytes.Buffer
		mu.Lock()
		s.out = &buf
		err = s.Execute(line)
		s.out = rl.Stdout()
		mu.Unlock()
		height := s.PageLength()
		if height < 0 {
			if _, h, e := term.GetSize(int(os.Stdout.Fd())); e == nil {
				height = h
			}
		}
		if s.noMore {
			height, s.noMore = 0, false
		}
		page(rl, s.out, buf.String(), height)
		if errors.Is(err, errQuit) {
			return nil
		}
	}
}

// pages reports whether a line's output goes through the pager: shows and
// help, whose output can be long.
func pages(line string) bool {
	f := strings.Fields(line)
	if len(f) == 0 {
		return false
	}
	w := strings.ToLower(f[0])
	return len(w) >= 2 && (strings.HasPrefix("show", w) || strings.HasPrefix("showunapplied", w) || strings.HasPrefix("show_cli", w) || w == "help" || f[len(f)-1] == "?")
}

// page writes text a screen at a time under --More--: space shows the
// next page, Enter the next line, q the prompt again.
func page(rl *readline.Instance, out io.Writer, text string, height int) {
	lines := strings.SplitAfter(text, "\n")
	if height <= 1 || len(lines) < height {
		io.WriteString(out, text)
		return
	}
	step := height - 1
	for len(lines) > 0 {
		n := min(step, len(lines))
		io.WriteString(out, strings.Join(lines[:n], ""))
		lines = lines[n:]
		if len(lines) == 0 || (len(lines) == 1 && lines[0] == "") {
			return
		}
		var key rune
		_, err := rl.ReadLineWithConfig(&readline.Config{
			Prompt: "--More--",
			FuncFilterInputRune: func(r rune) (rune, bool) {
				// Any key answers at once: it becomes Enter.
				key = r
				return '\r', true
			},
		})
		switch {
		case err != nil || key == 'q' || key == 'Q':
			return
		case key == '\r' || key == '\n':
			step = 1
		default:
			step = height - 1
		}
	}
}

func rowsOf(words []string) [][]string {
	var out [][]string
	for _, w := range words {
		out = append(out, []string{w, ""})
	}
	return out
}

// DefaultHistoryFile is ~/.swmgr_cli_history, or "" without a home.
func DefaultHistoryFile() string {
	home, err := os.UserHomeDir()
	if err != nil || home == "" {
		return ""
	}
	return filepath.Join(home, ".swmgr_cli_history")
}
