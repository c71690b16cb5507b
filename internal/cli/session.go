// Package cli is `swmgr cli`: FlexSwitch's command-line interface (modes,
// contexts, pending config, apply, showunapplied, show run) over swmgr's
// public REST API, with the additions of modern network CLIs (diff,
// confirmed commit, history, rollback, pipes, instant help).
//
// The word tree comes from the object model: each kind declares its command
// words and context (model.CLICommand) and each field its CLI word; nothing
// here names a kind. Pending config lives in a server-side candidate, so
// `apply` is one atomic commit.
package cli

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"sort"
	"strconv"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/swmgr/swmgr/client"
	"github.com/swmgr/swmgr/internal/model"
)

// Mode is the CLI's top-level mode.
type Mode int

// The modes, as FlexSwitch had them.
const (
	UserMode   Mode = iota // host>
	EnableMode             // host#
	ConfigMode             // host(config)# and the contexts below it
)

// frame is one object context, e.g. (config-if-fpPort-1)#.
type frame struct {
	kind   *model.Kind
	key    model.Object // key fields of the object
	cmd    string       // the command that opened it
	prompt string       // the prompt segment it adds
	entry  *entry       // the pending entry of an action context
	depth  int          // its indentation level in `show run`
}

// errQuit ends the session.
var errQuit = errors.New("quit")

// errFailed marks a line that failed (its message is already printed).
var errFailed = errors.New("command failed")

// Options configure a session.
type Options struct {
	Out      io.Writer
	Color    bool          // ANSI colours (a terminal)
	Timeout  time.Duration // per REST request
	Interact bool          // a person at a terminal
	// Ask reads the answer to a question (the exit question); nil: "no".
	Ask func(prompt string) (string, error)
	// Lines reads one more input line (load merge terminal); io.EOF ends.
	Lines func(prompt string) (string, error)
	// Shell runs an interactive shell as the CLI's own OS user (`shell`);
	// nil where none is offered (scripts, --url).
	Shell func(ctx context.Context) error
	// OSUser is the OS account the CLI runs as, whose User's Access says
	// whether it may have a shell; Root skips that check.
	OSUser string
	Root   bool
	// Probe runs ping and traceroute on the switch; nil: not available.
	Probe Prober
}

// Session is one CLI session.
type Session struct {
	ctx     context.Context
	api     *client.Client
	cat     *catalog
	out     io.Writer
	color   bool
	timeout time.Duration
	opts    Options

	mode    Mode
	stack   []*frame
	host    string
	pending []*entry
	cand    *client.Candidate // nil until something is staged
	confirm uint64            // revision of the last `apply confirmed`
	json    bool              // `| json`: shows print the API's objects
	factory snapshot          // revision 1, read once: the baselines of show run
	pageLen int               // `terminal length`: -1 the terminal's height, 0 no pager
	noMore  bool              // `| no-more` on the line being run
	opening bool              // a context's new object is being staged
	own     map[uint64]bool   // revisions this session's commits made
	records *commandRecords   // command accounting (nil: the model declares no action for it)
}

// NewSession starts a session on api; it reads the host name for the prompt.
func NewSession(ctx context.Context, api *client.Client, endpoint string, o Options) (*Session, error) {
	if o.Timeout == 0 {
		o.Timeout = 60 * time.Second
	}
	if o.Out == nil {
		o.Out = io.Discard
	}
	s := &Session{ctx: ctx, api: api, cat: newCatalog(model.Builtin(), nil), out: o.Out, color: o.Color, timeout: o.Timeout, opts: o, pageLen: -1, own: map[uint64]bool{}}
	if sys := s.cat.hostKind; sys != nil {
		ctx, cancel := s.rctx()
		it, err := api.Get(ctx, sys.Name, nil)
		cancel()
		if err != nil {
			return nil, fmt.Errorf("unable to connect to swmgr at %s: %w", endpoint, err)
		}
		s.host, _ = it.Object[s.cat.hostField].(string)
		s.host = escapeText(s.host)
	}
	if s.host == "" {
		s.host = endpoint
	}
	if k := s.cat.reg.CommandAction(); k != nil {
		s.records = newCommandRecords(ctx, api, k.Name, o.Timeout)
	}
	return s, nil
}

// Close ends the session: what is still pending is discarded, with its
// candidate, as leaving FlexSwitch's config mode did; the command records
// still waiting are sent.
func (s *Session) Close() {
	s.clearPending()
	s.records.close()
}

// EndRecords sends the command records still waiting and prints, if
// one was not taken and that was not told yet, why.
func (s *Session) EndRecords() {
	s.records.close()
	s.notice(s.records.note())
}

// notice prints a notice ("": none) as "% " lines within the CLI's 120
// columns.
func (s *Session) notice(n string) {
	if n == "" {
		return
	}
	for _, line := range wrapCellAt(n, 118) {
		s.printf("%% %s\n", line)
	}
}

// Prompt is the prompt of the current mode and context.
func (s *Session) Prompt() string {
	switch s.mode {
	case UserMode:
		return s.host + ">"
	case EnableMode:
		return s.host + "#"
	}
	p := s.host + "(config"
	for _, f := range s.stack {
		p += f.prompt
	}
	return p + ")#"
}

// Mode reports the current mode.
func (s *Session) Mode() Mode { return s.mode }

// HasPending reports whether entries wait for apply.
func (s *Session) HasPending() bool { return len(s.pending) > 0 }

// write is the one way the session writes to its output: through
// TerminalSafe, so that whatever a message or a table carries (a server's
// error, a value that escaped display), no control character but the line
// ends, tabs and the session's own colours reaches the terminal. A value
// is escaped whole before it gets here (escapeText, escapeCells): the
// colours let through here must be the session's own.
func (s *Session) write(text string) {
	io.WriteString(s.out, TerminalSafe(text, s.color))
}

func (s *Session) printf(format string, a ...any) { s.write(fmt.Sprintf(format, a...)) }

// terminal is the session's output (write) as an io.Writer, for the
// table writers.
type terminal struct{ s *Session }

func (t terminal) Write(p []byte) (int, error) {
	t.s.write(string(p))
	return len(p), nil
}

// sgr are the only escape sequences the CLI writes itself: its colours.
var sgr = []string{"\x1b[31m", "\x1b[32m", "\x1b[33m", "\x1b[0m"}

// TerminalSafe returns text with every control character (C0 but newline
// and tab, DEL, C1, the format characters and line separators of the
// Basic Multilingual Plane) and every byte that is not UTF-8 written as an
// escape (\u001b), except, when colors is set, the colour sequences the
// CLI writes itself. A terminal acts on nothing else in it: no cursor
// motion, no title, no clearing, no forged line start (\r).
func TerminalSafe(text string, colors bool) string {
	clean := true
	for i := 0; i < len(text); i++ {
		if c := text[i]; c < 0x20 && c != '\n' && c != '\t' || c >= 0x7f {
			clean = false
			break
		}
	}
	if clean {
		return text
	}
	var b strings.Builder
	for i := 0; i < len(text); {
		if colors && text[i] == 0x1b {
			if n := sgrAt(text[i:]); n > 0 {
				b.WriteString(text[i : i+n])
				i += n
				continue
			}
		}
		r, size := utf8.DecodeRuneInString(text[i:])
		switch {
		case r == '\n' || r == '\t':
			b.WriteRune(r)
		case r == utf8.RuneError && size == 1, r <= 0xFFFF && model.IsLineBreaking(r):
			appendEscaped(&b, text[i:i+size], nil)
		default:
			b.WriteString(text[i : i+size])
		}
		i += size
	}
	return b.String()
}

func sgrAt(s string) int {
	for _, q := range sgr {
		if strings.HasPrefix(s, q) {
			return len(q)
		}
	}
	return 0
}

func (s *Session) paint(code, text string) string {
	if !s.color {
		return text
	}
	return "\x1b[" + code + "m" + text + "\x1b[0m"
}

func (s *Session) red(t string) string    { return s.paint("31", t) }
func (s *Session) green(t string) string  { return s.paint("32", t) }
func (s *Session) yellow(t string) string { return s.paint("33", t) }

// Execute runs one line; a non-nil error means the line failed (the
// message is printed) or, errQuit, that the session ends.
func (s *Session) Execute(line string) error {
	trimmed := strings.TrimSpace(line)
	if trimmed == "" {
		return nil
	}
	s.records.add(s.cat.reg, trimmed, s.where())
	defer func() { s.notice(s.records.note()) }()
	// A pasted `show run` is indented by context depth: a line indented
	// less than the current context belongs to an enclosing one.
	if s.mode == ConfigMode && len(s.stack) > 0 && (line[0] == ' ' || line[0] == '\t') {
		indent := len(line) - len(strings.TrimLeft(line, " \t"))
		depth := indent / 2
		for len(s.stack) > 0 && s.stack[len(s.stack)-1].depth > depth {
			s.stack = s.stack[:len(s.stack)-1]
		}
	}
	cmd, pipes, err := splitPipes(trimmed)
	if err != nil {
		s.printf("ERROR: %v\n", err)
		return errFailed
	}
	if len(pipes) == 0 {
		return s.execute(cmd)
	}
	var buf bytes.Buffer
	out := s.out
	s.out = &buf
	for _, p := range pipes {
		switch p.name {
		case "json":
			s.json = true
		case "no-more":
			s.noMore = true
		}
	}
	err = s.execute(strings.TrimSpace(cmd))
	s.out, s.json = out, false
	s.printf("%s", filter(buf.String(), pipes))
	return err
}

func (s *Session) execute(cmd string) error {
	toks, err := tokenize(cmd)
	if err != nil {
		s.printf("ERROR: %v\n", err)
		return errFailed
	}
	if len(toks) == 0 {
		return nil
	}
	if last := toks[len(toks)-1]; last.text == "?" && !last.quoted {
		s.help(toks[:len(toks)-1])
		return nil
	}
	if !toks[0].quoted && strings.HasPrefix(toks[0].text, "!") {
		// `!` closes a block of `show run`: back to (config)#. Elsewhere
		// it starts a comment.
		if s.mode == ConfigMode {
			s.stack = nil
		}
		return nil
	}
	if s.mode == ConfigMode && isShowRunHeader(cmd) {
		return nil
	}
	if s.mode == ConfigMode {
		return s.execConfig(toks, cmd)
	}
	return s.execExec(toks, cmd)
}

// ---- matching ----

// option is one command at a level.
type option struct {
	words   []string
	kind    *model.Kind  // a context or one-liner
	field   *model.Field // a leaf of the current context
	control string       // a local command
	help    string
	show    *showForm // how a show prints its kind
}

func (o *option) target() any {
	switch {
	case o.field != nil:
		return o.field
	case o.kind != nil:
		return o.kind
	}
	return o.control
}

// matchWord reports the words of list that tok selects: an exact
// (case-insensitive) match, else every word it is a prefix of.
func matchWord(tok string, list []string) []string {
	var exact, pre []string
	lt := strings.ToLower(tok)
	for _, w := range list {
		lw := strings.ToLower(w)
		if lw == lt {
			exact = append(exact, w)
		} else if strings.HasPrefix(lw, lt) {
			pre = append(pre, w)
		}
	}
	if len(exact) > 0 {
		return exact
	}
	if w, ok := habitual[lt]; ok && len(pre) > 1 {
		for _, p := range pre {
			if strings.EqualFold(p, w) {
				return []string{p}
			}
		}
	}
	return pre
}

// habitual are the abbreviations every IOS, EOS or NX-OS user types, which
// resolve to their word even where another word shares the prefix (`sh`
// is show, not showunapplied or shutdown).
var habitual = map[string]string{
	"sh": "show", "int": "interface", "conf": "config", "wr": "write", "br": "brief", "mem": "memory", "t": "terminal", "nei": "neighbor",
}

// resolve matches the leading tokens against opts. It returns the options
// whose words all matched (with the number of tokens used) or, on failure,
// the index of the bad token and the ambiguous candidates.
func resolve(toks []token, opts []*option) (matched []*option, used int, bad int, ambiguous []string) {
	live := opts
	for i := 0; ; i++ {
		var done, more []*option
		for _, o := range live {
			if len(o.words) == i {
				done = append(done, o)
			} else {
				more = append(more, o)
			}
		}
		if i >= len(toks) || len(more) == 0 || toks[i].quoted {
			if len(done) > 0 {
				return done, i, -1, nil
			}
			return nil, i, i, nil
		}
		var words []string
		seen := map[string]bool{}
		for _, o := range more {
			if !seen[o.words[i]] {
				seen[o.words[i]] = true
				words = append(words, o.words[i])
			}
		}
		hit := matchWord(toks[i].text, words)
		if len(hit) == 0 {
			if len(done) > 0 {
				return done, i, -1, nil
			}
			return nil, i, i, nil
		}
		var next []*option
		targets := map[any]bool{}
		for _, o := range more {
			for _, h := range hit {
				if o.words[i] == h {
					next = append(next, o)
					targets[o.target()] = true
				}
			}
		}
		if len(hit) > 1 && len(targets) > 1 {
			// Ambiguous unless every candidate leads to the same thing.
			var list []string
			for _, o := range next {
				list = append(list, canonicalWord(o, i))
			}
			sort.Strings(list)
			return nil, i, i, dedupe(list)
		}
		live = next
	}
}

func canonicalWord(o *option, i int) string {
	if o.field != nil && i == 0 {
		return o.field.CLIWord()
	}
	return o.words[i]
}

func dedupe(l []string) []string {
	var out []string
	for i, s := range l {
		if i == 0 || s != l[i-1] {
			out = append(out, s)
		}
	}
	return out
}

// badToken prints FlexSwitch's caret under the bad token.
func (s *Session) badToken(line string, toks []token, bad int, ambiguous []string) error {
	// The line is printed masked (it may hold a secret value), so the caret
	// is placed by the masked length of what precedes the bad token.
	masked := MaskSecrets(s.cat.reg, line)
	pos := len(masked)
	if bad < len(toks) {
		pos = len(MaskSecrets(s.cat.reg, line[:toks[bad].pos]))
	}
	s.printf("%s\n%s^\n", masked, strings.Repeat(" ", pos))
	if len(ambiguous) > 0 {
		s.printf("%% Ambiguous command: %s → %s\n", toks[bad].text, strings.Join(ambiguous, " "))
	} else if bad >= len(toks) {
		s.printf("%% Incomplete command\n")
	} else {
		s.printf("ERROR Invalid command entered\n")
	}
	return errFailed
}

// ---- exec modes ----

var execControls = []*option{
	{words: []string{"enable"}, control: "enable", help: "Enter privileged mode"},
	{words: []string{"config"}, control: "config", help: "Enter configuration mode"},
	{words: []string{"configure"}, control: "config", help: "Enter configuration mode (alias of config)"},
	{words: []string{"exit"}, control: "exit", help: "Exit the current mode"},
	{words: []string{"quit"}, control: "quit", help: "Exit the shell"},
	{words: []string{"show"}, control: "show", help: "Show running system information"},
	{words: []string{"where"}, control: "where", help: "Show the current context"},
	{words: []string{"help"}, control: "help", help: "Show the commands of this mode"},
	{words: []string{"write", "memory"}, control: "write", help: "Save the running configuration (SaveConfig)"},
	{words: []string{"confirm"}, control: "confirm", help: "Confirm the last confirmed apply"},
	{words: []string{"cancel"}, control: "cancel", help: "Cancel the last confirmed apply: roll it back now"},
	{words: []string{"show_cli"}, control: "show_cli", help: "List every command path"},
	{words: []string{"terminal", "length"}, control: "terminal", help: "Lines per page on a terminal (0: no pager)"},
	{words: []string{"shell"}, control: "shell", help: "Run bash on the switch as yourself (User Access Bash); exit returns here"},
	{words: []string{"ping"}, control: "ping", help: "Ping from the switch: ping <destination> [count N] [size N] [interval S] [source A] [vrf V]"},
	{words: []string{"traceroute"}, control: "traceroute", help: "Trace the route from the switch: traceroute <destination> [max-ttl N] [source A] [vrf V]"},
	{words: []string{"reload_cli_model"}, control: "reload", help: "Re-read the object model and the server's kinds without leaving the CLI"},
}

func (s *Session) execOptions() []*option {
	var out []*option
	for _, o := range execControls {
		if s.mode == UserMode && (o.control == "write" || o.control == "confirm" || o.control == "cancel" || o.control == "shell") {
			continue
		}
		if s.mode == EnableMode && o.control == "enable" {
			continue
		}
		out = append(out, o)
	}
	return out
}

func (s *Session) execExec(toks []token, line string) error {
	matched, used, bad, amb := resolve(toks, s.execOptions())
	if matched == nil {
		return s.badToken(line, toks, bad, amb)
	}
	rest := toks[used:]
	switch c := matched[0].control; c {
	case "enable":
		s.mode = EnableMode
	case "config":
		if s.mode == UserMode {
			s.printf("Must be in privilege mode to execute config\n")
			return errFailed
		}
		if len(rest) > 0 && !(len(rest) == 1 && len(matchWord(rest[0].text, []string{"terminal"})) == 1) {
			return s.badToken(line, toks, used, nil)
		}
		s.mode = ConfigMode
		s.printf("\n*** Configuration will only be applied once 'apply' command is entered ***\n\n")
	case "exit":
		if s.mode == EnableMode {
			s.printf("Exiting Privilege mode\n")
			s.mode = UserMode
			return nil
		}
		s.printf("Quiting Shell\n")
		return errQuit
	case "quit":
		s.printf("Quiting Shell\n")
		return errQuit
	case "show":
		return s.show(rest, line)
	case "where":
		s.printf("cmd: %s\n", s.where())
	case "help":
		s.help(nil)
	case "write":
		return s.writeMemory()
	case "confirm":
		return s.doConfirm(rest)
	case "cancel":
		return s.doCancel(rest)
	case "show_cli":
		s.showCLI()
	case "terminal":
		return s.terminalLength(rest)
	case "shell":
		return s.shell()
	case "ping":
		return s.probe(false, rest)
	case "traceroute":
		return s.probe(true, rest)
	case "reload":
		return s.reloadModel()
	}
	return nil
}

// terminalLength is `terminal length <n>`: the pager's page (0: off).
func (s *Session) terminalLength(rest []token) error {
	n, err := strconv.Atoi(joinTokens(rest))
	if err != nil || n < 0 || n > 10000 {
		s.printf("ERROR: Value expected for length: 0 (no pager) to 10000 lines\n")
		return errFailed
	}
	s.pageLen = n
	return nil
}

// PageLength is the pager's page: -1 the terminal's height, 0 off.
func (s *Session) PageLength() int { return s.pageLen }

func (s *Session) where() string {
	var parts []string
	if s.mode >= EnableMode {
		parts = append(parts, "enable")
	}
	if s.mode == ConfigMode {
		parts = append(parts, "config")
	}
	for _, f := range s.stack {
		parts = append(parts, f.cmd)
	}
	return strings.Join(parts, " ")
}

// writeMemory saves the running configuration at once (IOS/EOS habit).
func (s *Session) writeMemory() error {
	k := s.cat.saveKind
	if k == nil {
		s.printf("ERROR: this server has no save action\n")
		return errFailed
	}
	e := &entry{kind: k, op: opAction, at: time.Now()}
	return s.runAction(e)
}
