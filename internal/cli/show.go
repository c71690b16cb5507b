package cli

import (
	"encoding/json"
	"fmt"
	"slices"
	"strconv"
	"strings"

	"github.com/swmgr/swmgr/client"
	"github.com/swmgr/swmgr/internal/model"
)

var showControls = []*option{
	{words: []string{"run"}, control: "run", help: "The running config as re-playable commands (show run full: with defaults)"},
	{words: []string{"running_config"}, control: "run", help: "Alias of show run"},
	{words: []string{"running-config"}, control: "run", help: "Alias of show run"},
	{words: []string{"config", "diff"}, control: "diff", help: "Pending vs running config (or: <rev1> [<rev2>])"},
	{words: []string{"config", "history"}, control: "history", help: "The revisions of the configuration"},
	{words: []string{"config", "revision"}, control: "revision", help: "What one revision changed"},
	{words: []string{"config", "confirm-status"}, control: "confirm-status", help: "The commit awaiting confirmation: revision, user, time left"},
}

func (s *Session) showOptions() []*option {
	out := slices.Clone(showControls)
	for _, k := range s.cat.shows {
		out = append(out, &option{words: k.CLIShow(), kind: k, help: k.Doc, show: &showForm{flex: true}})
		if k.CLI.Join && k.CLI.Show == nil && len(k.CLI.Words) > 1 {
			// `show interface` as well as `show interface fpPort 3`.
			all := strings.Join(k.CLI.Words[:len(k.CLI.Words)-1], " ")
			out = append(out, &option{words: k.CLI.Words[:len(k.CLI.Words)-1], kind: k, show: &showForm{flex: true},
				help: fmt.Sprintf("Every %s (FlexSwitch's table); %s %s <value>: one", k.Name, all, k.CLI.Words[len(k.CLI.Words)-1])})
		}
		if k.Class == model.Action {
			continue
		}
		for _, sh := range k.CLI.Shows {
			help := sh.Doc
			if help == "" {
				help = k.Doc
			}
			out = append(out, &option{words: sh.Words, kind: k, help: help, show: &showForm{columns: sh.Columns, only: sh.Only, detail: sh.Detail}})
		}
	}
	return out
}

func isShowRunHeader(line string) bool {
	return line == "printing without defaults" || line == "printing with defaults"
}

// show runs `show ...`; it works in every mode, as in FlexSwitch.
func (s *Session) show(args []token, line string) error {
	if len(args) == 0 {
		s.printf("%% Incomplete command: show what? (show ?)\n")
		return errFailed
	}
	matched, used, bad, amb := resolve(args, s.showOptions())
	if matched == nil {
		off := strings.Index(line, args[0].text)
		shifted := make([]token, len(args))
		for i, t := range args {
			shifted[i] = t
			if off < 0 {
				shifted[i].pos = t.pos
			}
		}
		return s.badToken(line, shifted, bad, amb)
	}
	rest := args[used:]
	o := matched[0]
	switch o.control {
	case "run":
		full := len(rest) == 1 && len(matchWord(rest[0].text, []string{"full"})) == 1
		if len(rest) > 0 && !full {
			return s.badToken(line, args, used, nil)
		}
		return s.showRun(full)
	case "diff":
		return s.showDiff(rest)
	case "history":
		return s.showHistory()
	case "revision":
		return s.showRevision(rest)
	case "confirm-status":
		if len(rest) > 0 {
			return s.badToken(line, args, used, nil)
		}
		return s.showConfirmStatus()
	}
	return s.showKind(o.kind, o.show, rest)
}

func (s *Session) printJSON(v any) error {
	b, err := json.MarshalIndent(map[string]any{"Objects": v}, "", "  ")
	if err != nil {
		return err
	}
	s.printf("%s\n", b)
	return nil
}

// ---- show run ----

// snapshot is a whole configuration: kind name, then key, then object.
type snapshot map[string]map[string]model.Object

// configKinds are the config kinds the CLI configures.
func (c *catalog) configKinds() []*model.Kind {
	var out []*model.Kind
	for _, k := range c.reg.Kinds() {
		if k.CLI != nil && k.Class == model.Config {
			out = append(out, k)
		}
	}
	return out
}

func (s *Session) snapshot(objs client.Objects) (snapshot, error) {
	snap := snapshot{}
	for _, k := range s.cat.configKinds() {
		list, err := s.listAll(objs, k)
		if err != nil {
			return nil, err
		}
		m := make(map[string]model.Object, len(list))
		for _, o := range list {
			m[keyString(k, o)] = o
		}
		snap[k.Name] = m
	}
	return snap, nil
}

func (s *Session) showRun(full bool) error {
	snap, err := s.snapshot(s.api.Objects)
	if err != nil {
		s.printf("ERROR: %s\n", errText(err))
		return errFailed
	}
	if s.json {
		out := map[string][]model.Object{}
		for k, m := range snap {
			for _, ks := range sortedKeys(m) {
				out[k] = append(out[k], m[ks])
			}
		}
		return s.printJSON(out)
	}
	if full {
		s.printf("printing with defaults\n")
	} else {
		s.printf("printing without defaults\n")
	}
	for _, l := range s.renderRun(snap, full) {
		s.printf("%s\n", l)
	}
	return nil
}

// commandOf is the command that opens o's context.
func (s *Session) commandOf(k *model.Kind, o model.Object) string {
	words := strings.Join(k.CLI.Words, " ")
	if k.CLI.Join {
		keys := k.Keys()
		v := display(o[keys[len(keys)-1].Name])
		w := k.CLI.Words[len(k.CLI.Words)-1]
		return words + " " + strings.TrimPrefix(v, w)
	}
	for _, lf := range s.cat.leadKeys(k) {
		words += " " + quote(display(o[lf.Name]))
	}
	if vf := s.cat.valueField(k); vf != nil {
		if l, ok := o[vf.Name].([]string); ok && vf.Type == model.StringList && len(l) > 0 {
			return words + " " + quote(l[0]) // the others: listValueLines
		}
		return words + " " + quote(display(o[vf.Name]))
	}
	return words
}

// listValueLines are the commands that add the elements after the first
// of a list that is its kind's value (`ip helper-address 192.0.2.68`),
// each its own line beside the context's.
func (s *Session) listValueLines(k *model.Kind, o model.Object, indent string) []string {
	vf := s.cat.valueField(k)
	l, _ := o[vf.Name].([]string)
	if vf.Type != model.StringList || len(l) < 2 {
		return nil
	}
	words := strings.Join(k.CLI.Words, " ")
	for _, lf := range s.cat.leadKeys(k) {
		words += " " + quote(display(o[lf.Name]))
	}
	var out []string
	for _, e := range l[1:] {
		out = append(out, indent+words+" "+quote(e))
	}
	return out
}

// NotShown stands in `show run` for a secret's value, which is never
// shown (a sealed field's, or a User's password, which swmgr never has): a
// replay refuses the line, naming the field, and so exits non-zero instead
// of silently leaving the secret out.
const NotShown = "<secret-not-shown>"

// replaysSecret reports whether show run writes f's line with NotShown:
// sealed fields (they may be set; a read never says) and required secrets
// (a User's password, without which the User cannot be made).
func replaysSecret(f *model.Field) bool {
	return f.Secret == model.Sealed || f.Secret == model.Transient && f.Required
}

// renderRun is the configuration as re-playable commands: `!` before each
// top-level block, two blanks of indent per context level, non-default
// values only unless full.
func (s *Session) renderRun(snap snapshot, full bool) []string {
	var out []string
	for _, k := range s.cat.config {
		m := snap[k.Name]
		for _, ks := range naturalSort(sortedKeys(m)) {
			if b := s.renderBlock(snap, k, m[ks], 0, full); len(b) > 0 {
				out = append(out, "!")
				out = append(out, b...)
			}
		}
	}
	return out
}

func (s *Session) renderBlock(snap snapshot, k *model.Kind, o model.Object, depth int, full bool) []string {
	ind := strings.Repeat("  ", depth+1)
	var body []string
	vf := s.cat.valueField(k)
	for _, f := range k.Fields {
		if replaysSecret(f) && !f.Key && f != vf {
			// Never shown: a line that a replay refuses, so that it
			// says what it could not reproduce and exits non-zero.
			body = append(body, ind+f.CLIWord()+" "+NotShown)
			continue
		}
		if f.Key || f.ReadOnly || f == vf || f.Secret != model.Public || f.Name == k.CLI.Inherit || f.Type == model.Record || (f.Type == model.RecordList && recordIdentity(f) == nil) {
			continue
		}
		v, ok := o[f.Name]
		if !ok {
			continue
		}
		if !full && (sameValue(v, defaultOf(f)) || sameValue(v, s.baseline(k, o, f))) {
			continue
		}
		word := f.CLIWord()
		switch {
		case f.Type == model.RecordList:
			recs, _ := v.([]model.Object)
			for _, r := range recs {
				body = append(body, ind+word+" "+recordText(f, r, full))
			}
		case f.Type == model.StringList:
			l, _ := v.([]string)
			for _, e := range l {
				body = append(body, ind+word+" "+quote(e))
			}
		case f.IsCLISwitch():
			on, _ := f.CLISwitchValues()
			if sameValue(v, on) {
				body = append(body, ind+word)
			} else {
				body = append(body, ind+"no "+word)
			}
		default:
			body = append(body, ind+word+" "+quote(display(v)))
		}
	}
	key := keyOf(k, o)
	for _, ch := range s.cat.children[k.Name] {
		m := snap[ch.Name]
		parentVal := s.cat.inherited(k, key)
		for _, ks := range naturalSort(sortedKeys(m)) {
			co := m[ks]
			if ch.CLI.Inherit != "" && !sameValue(co[ch.CLI.Inherit], parentVal) {
				continue
			}
			body = append(body, s.renderBlock(snap, ch, co, depth+1, full)...)
		}
	}
	if vf != nil && !vf.Key && display(o[vf.Name]) == "" {
		// `router bgp` without an AS: nothing to replay.
		return nil
	}
	if len(body) == 0 && !k.Creatable() && !(vf != nil && !vf.Key && !sameValue(o[vf.Name], defaultOf(vf))) && !full {
		return nil
	}
	block := append([]string{strings.Repeat("  ", depth) + s.commandOf(k, o)}, body...)
	if vf != nil {
		block = append(block, s.listValueLines(k, o, strings.Repeat("  ", depth))...)
	}
	return block
}

// baseline is, beside the model's default, a value a field has when
// nobody configured it: for objects that exist from the start (ports, the
// BGP speaker, system settings) their value in the factory configuration,
// revision 1, while it is kept (a port's MediaType is what was discovered;
// a reset to factory defaults may give the model's default instead).
func (s *Session) baseline(k *model.Kind, o model.Object, f *model.Field) any {
	if !k.Creatable() {
		if s.factory == nil {
			s.factory = snapshot{}
			ctx, cancel := s.rctx()
			r, err := s.api.Revision(ctx, 1)
			cancel()
			if err == nil && r.Source == "system" {
				for _, c := range r.Changes {
					fk := s.cat.reg.Lookup(model.Config, c.Kind)
					if fk == nil || c.After == nil {
						continue
					}
					if s.factory[fk.Name] == nil {
						s.factory[fk.Name] = map[string]model.Object{}
					}
					fo := typed(fk, c.After)
					s.factory[fk.Name][keyString(fk, fo)] = fo
				}
			}
		}
		if fo, ok := s.factory[k.Name][keyString(k, o)]; ok {
			if v, ok := fo[f.Name]; ok {
				return v
			}
		}
	}
	return defaultOf(f)
}

// naturalSort orders keys with numbers by value (fpPort2 before fpPort10).
func naturalSort(keys []string) []string {
	slices.SortFunc(keys, naturalCompare)
	return keys
}

func naturalCompare(a, b string) int {
	for a != "" && b != "" {
		da, db := digitsPrefix(a), digitsPrefix(b)
		if da != "" && db != "" {
			na, _ := strconv.ParseUint(da, 10, 64)
			nb, _ := strconv.ParseUint(db, 10, 64)
			if na != nb {
				if na < nb {
					return -1
				}
				return 1
			}
			a, b = a[len(da):], b[len(db):]
			continue
		}
		if a[0] != b[0] {
			if a[0] < b[0] {
				return -1
			}
			return 1
		}
		a, b = a[1:], b[1:]
	}
	return len(a) - len(b)
}

func digitsPrefix(s string) string {
	i := 0
	for i < len(s) && s[i] >= '0' && s[i] <= '9' {
		i++
	}
	return s[:i]
}

// ---- history and diffs ----

func (s *Session) showHistory() error {
	ctx, cancel := s.rctx()
	defer cancel()
	var rows [][]string
	var list []client.Revision
	for r, err := range s.api.Revisions(ctx) {
		if err != nil {
			s.printf("ERROR: %s\n", errText(err))
			return errFailed
		}
		list = append(list, r)
		rows = append(rows, []string{strconv.FormatUint(r.Revision, 10), r.Time.Local().Format("2006-01-02 15:04:05"), r.User, r.Source, strconv.Itoa(len(r.Changes)), r.Comment})
	}
	if s.json {
		return s.printJSON(list)
	}
	s.printf("Applying Show:\n")
	writeTable(terminal{s}, []string{"Revision", "Time", "User", "Source", "Changes", "Comment"}, rows, true)
	return nil
}

func (s *Session) showRevision(rest []token) error {
	if len(rest) != 1 {
		s.printf("ERROR: Value expected for revision\n")
		return errFailed
	}
	n, err := strconv.ParseUint(rest[0].text, 10, 64)
	if err != nil {
		s.printf("ERROR: Invalid Value %s, must be a revision number\n", rest[0].text)
		return errFailed
	}
	ctx, cancel := s.rctx()
	defer cancel()
	r, err := s.api.Revision(ctx, n)
	if err != nil {
		s.printf("ERROR: %s\n", errText(err))
		return errFailed
	}
	if s.json {
		return s.printJSON(r)
	}
	s.printf("Revision %d  %s  %s  %s  %s\n", r.Revision, r.Time.Local().Format("2006-01-02 15:04:05"), r.User, r.Source, r.Comment)
	for _, c := range r.Changes {
		s.printf("  %s %s %s\n", c.Op, c.Kind, c.Key)
	}
	return nil
}

// snapshotAt winds now back to how the configuration was after rev, from
// the revision records (newest first).
func (s *Session) snapshotAt(now snapshot, rev uint64) (snapshot, error) {
	snap := snapshot{}
	for k, m := range now {
		c := make(map[string]model.Object, len(m))
		for ks, o := range m {
			c[ks] = o
		}
		snap[k] = c
	}
	ctx, cancel := s.rctx()
	defer cancel()
	reached, running := false, true
	for r, err := range s.api.Revisions(ctx) {
		if err != nil {
			return nil, fmt.Errorf("read revisions: %s", errText(err))
		}
		// The newest comes first: a later revision is not "reached" by
		// undoing nothing, it does not exist yet.
		if running && r.Revision < rev {
			return nil, fmt.Errorf("no revision %d; the running revision is %d (show config history)", rev, r.Revision)
		}
		running = false
		if r.Revision <= rev {
			reached = true
			break
		}
		for i := len(r.Changes) - 1; i >= 0; i-- {
			c := r.Changes[i]
			k := s.cat.reg.Lookup(model.Config, c.Kind)
			if k == nil || snap[k.Name] == nil {
				continue
			}
			ref := c.After
			if ref == nil {
				ref = c.Before
			}
			ks := keyString(k, typed(k, ref))
			if c.Before == nil {
				delete(snap[k.Name], ks)
			} else {
				snap[k.Name][ks] = typed(k, c.Before)
			}
		}
	}
	if !reached && rev != 0 {
		return nil, fmt.Errorf("revision %d is not kept (show config history)", rev)
	}
	return snap, nil
}

func (s *Session) showDiff(rest []token) error {
	if len(rest) == 0 {
		return s.showPendingDiff()
	}
	var revs []uint64
	for _, t := range rest {
		n, err := strconv.ParseUint(t.text, 10, 64)
		if err != nil || len(revs) == 2 {
			s.printf("ERROR: Invalid Value %s, want: show config diff [<rev1> [<rev2>]]\n", t.text)
			return errFailed
		}
		revs = append(revs, n)
	}
	now, err := s.snapshot(s.api.Objects)
	if err != nil {
		s.printf("ERROR: %s\n", errText(err))
		return errFailed
	}
	a, err := s.snapshotAt(now, revs[0])
	if err != nil {
		s.printf("ERROR: %v\n", err)
		return errFailed
	}
	b := now
	if len(revs) == 2 {
		if b, err = s.snapshotAt(now, revs[1]); err != nil {
			s.printf("ERROR: %v\n", err)
			return errFailed
		}
	}
	s.printDiff(s.renderRun(a, false), s.renderRun(b, false))
	return nil
}

// showPendingDiff is the pending config against the running one, in
// command form.
func (s *Session) showPendingDiff() error {
	run, err := s.snapshot(s.api.Objects)
	if err != nil {
		s.printf("ERROR: %s\n", errText(err))
		return errFailed
	}
	pend := run
	if s.cand != nil {
		if pend, err = s.snapshot(s.cand.Objects); err != nil {
			s.printf("ERROR: %s\n", errText(err))
			return errFailed
		}
	}
	s.printDiff(s.renderRun(run, false), s.renderRun(pend, false))
	for _, e := range s.pending {
		if e.op == opAction {
			s.printf("+ %s\n", e.cmd)
		}
	}
	return nil
}

// printDiff prints the lines removed (-) and added (+), each under the
// unchanged block headers that lead to it.
func (s *Session) printDiff(a, b []string) {
	ops := diffLines(a, b)
	indent := func(l string) int { return len(l) - len(strings.TrimLeft(l, " ")) }
	var headers []string // the unchanged context at each depth
	printed := map[int]bool{}
	for _, op := range ops {
		l := op.line
		d := indent(l) / 2
		if op.mark == ' ' {
			if l == "!" {
				headers, printed = nil, map[int]bool{}
				continue
			}
			headers = append(headers[:min(d, len(headers))], l)
			for i := d; i < len(headers)+1; i++ {
				delete(printed, i)
			}
			continue
		}
		if l == "!" {
			continue
		}
		for i := 0; i < d && i < len(headers); i++ {
			if !printed[i] {
				s.printf("  %s\n", headers[i])
				printed[i] = true
			}
		}
		mark := s.red("-")
		if op.mark == '+' {
			mark = s.green("+")
		}
		s.printf("%s %s\n", mark, l)
		headers = append(headers[:min(d, len(headers))], l)
		printed[d] = true
	}
}

type diffOp struct {
	mark byte
	line string
}

// diffLines is a longest-common-subsequence line diff; past a size where
// the table would be large it compares the lines as sets.
func diffLines(a, b []string) []diffOp {
	n, m := len(a), len(b)
	if n*m > 16_000_000 {
		inB := map[string]int{}
		for _, l := range b {
			inB[l]++
		}
		var out []diffOp
		for _, l := range a {
			if inB[l] > 0 {
				inB[l]--
				out = append(out, diffOp{' ', l})
			} else {
				out = append(out, diffOp{'-', l})
			}
		}
		inA := map[string]int{}
		for _, l := range a {
			inA[l]++
		}
		for _, l := range b {
			if inA[l] > 0 {
				inA[l]--
			} else {
				out = append(out, diffOp{'+', l})
			}
		}
		return out
	}
	lcs := make([][]int32, n+1)
	for i := range lcs {
		lcs[i] = make([]int32, m+1)
	}
	for i := n - 1; i >= 0; i-- {
		for j := m - 1; j >= 0; j-- {
			if a[i] == b[j] {
				lcs[i][j] = lcs[i+1][j+1] + 1
			} else {
				lcs[i][j] = max(lcs[i+1][j], lcs[i][j+1])
			}
		}
	}
	var out []diffOp
	i, j := 0, 0
	for i < n && j < m {
		switch {
		case a[i] == b[j]:
			out = append(out, diffOp{' ', a[i]})
			i++
			j++
		case lcs[i+1][j] >= lcs[i][j+1]:
			out = append(out, diffOp{'-', a[i]})
			i++
		default:
			out = append(out, diffOp{'+', b[j]})
			j++
		}
	}
	for ; i < n; i++ {
		out = append(out, diffOp{'-', a[i]})
	}
	for ; j < m; j++ {
		out = append(out, diffOp{'+', b[j]})
	}
	return out
}

// showCLI lists every command path (FlexSwitch's show_cli).
func (s *Session) showCLI() {
	var walk func(k *model.Kind, depth int)
	walk = func(k *model.Kind, depth int) {
		ind := strings.Repeat("  ", depth)
		path := strings.Join(k.CLI.Words, " ")
		if vf := s.cat.valueField(k); vf != nil || k.CLI.Join {
			path += " <value>"
		}
		s.printf("%s%s\n", ind, path)
		if k.Class == model.Action && k.CLI.Line && k.CLI.Context == "" {
			return
		}
		fr := &frame{kind: k}
		if k.Class == model.Action {
			fr.entry = &entry{}
		}
		for _, f := range s.leafFields(fr) {
			s.printf("%s  %s\n", ind, f.CLIWord())
		}
		for _, ch := range s.cat.children[k.Name] {
			walk(ch, depth+1)
		}
	}
	for _, k := range s.cat.top {
		walk(k, 0)
	}
	for _, o := range s.showOptions() {
		s.printf("show %s\n", strings.Join(o.words, " "))
	}
}
