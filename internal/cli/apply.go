package cli

import (
	"context"
	"fmt"
	"io"
	"slices"
	"strconv"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/swmgr/swmgr/client"
	"github.com/swmgr/swmgr/internal/model"
)

const failBanner = "*************CONFIG FAILED ROLLING BACK ANY SUCCESSFUL CONFIG*************"

// applyCommand is `apply`, `apply check`, `apply comment <text>` and
// `apply confirmed [<minutes>]`.
func (s *Session) applyCommand(args []token, line string) error {
	var opts client.CommitOptions
	check := false
	if len(args) > 0 {
		m := matchWord(args[0].text, []string{"check", "comment", "confirmed"})
		if len(m) != 1 {
			return s.badToken(line, args, 0, m)
		}
		switch m[0] {
		case "check":
			check = true
		case "comment":
			opts.Comment = joinTokens(args[1:])
		case "confirmed":
			minutes := int64(10)
			if len(args) > 1 {
				n, err := strconv.ParseInt(args[1].text, 10, 64)
				if err != nil || n < 1 || n > 1440 {
					s.printf("ERROR: Invalid Value %s, must be beteween 1-1440\n", args[1].text)
					return errFailed
				}
				minutes = n
			}
			opts.Confirm = time.Duration(minutes) * time.Minute
		}
	}
	if check {
		return s.applyCheck()
	}
	return s.apply(opts)
}

// sdkLine is FlexSwitch's per-object result line: the SDK call with the
// key and required values positional, then the attributes set.
func (s *Session) sdkLine(e *entry) string {
	var args []string
	o := e.object()
	used := map[string]bool{}
	for _, f := range e.kind.Fields {
		if f.Key || f.Required {
			if v, ok := o[f.Name]; ok {
				args = append(args, maskIf(f, v))
				used[f.Name] = true
			}
		}
	}
	for _, st := range e.sets {
		if !used[st.field.Name] {
			args = append(args, st.field.Name+"="+maskIf(st.field, st.value))
		}
	}
	return fmt.Sprintf("sdk:%s%s(%s) result: ", e.op, e.kind.Name, strings.Join(args, ","))
}

func maskIf(f *model.Field, v any) string {
	if f.Secret != model.Public && display(v) != "" {
		return "********"
	}
	if recs, ok := v.([]model.Object); ok && recordIdentity(f) != nil {
		parts := make([]string, len(recs))
		for i, r := range recs {
			parts[i] = recordText(f, r, false)
		}
		return strings.Join(parts, "; ")
	}
	return display(v)
}

// recordText is a record of a list as its command writes it, without the
// list's word: `10.1.1.2 weight 5`; sub-fields at their default only when
// full.
func recordText(f *model.Field, r model.Object, full bool) string {
	id := recordIdentity(f)
	text := quote(display(r[id.Name]))
	for _, sf := range f.Sub {
		if sf != id && sf.Secret == model.Public && (full || !sameValue(r[sf.Name], defaultOf(sf))) {
			text += " " + sf.CLIWord() + " " + quote(display(r[sf.Name]))
		}
	}
	return text
}

func (s *Session) success(e *entry, code int) string {
	sep := " "
	if e.op == opDelete {
		sep = "   "
	}
	return s.green(fmt.Sprintf("SUCCESS:%shttp status code: %d", sep, code))
}

// apply commits every complete pending object change as one candidate
// commit, then runs the queued actions in order. On a failure nothing of
// the commit lands and every entry stays pending.
//
// An action cannot be part of the commit: the engine's commit holds object
// edits (store and switch), while actions reach outside it (an OS
// account's password, a file, the whole configuration replaced). So apply
// dry-runs every queued action first and commits nothing if one is
// refused; only a failure while an action runs, after the commit, can
// leave the commit applied and that action pending.
func (s *Session) apply(opts client.CommitOptions) error {
	s.stack = nil
	if len(s.pending) == 0 {
		return nil
	}
	var queued []*entry
	for _, e := range s.pending {
		if e.op == opAction || e.direct && e.valid() {
			queued = append(queued, e)
		}
	}
	if opts.Confirm > 0 && len(queued) > 0 {
		// While a commit awaits confirmation the server refuses every
		// other change, so the actions after it could not run.
		s.printf("ERROR: apply confirmed cannot run actions or create users (%s): apply them first, or remove them (no <command>)\n", queued[0].cmd)
		return errFailed
	}
	s.printf("Applying Config:\n")
	if failed := s.precheckActions(); failed {
		s.printf("%s\n", s.red(failBanner))
		s.printf("Nothing was changed; the pending config is kept (showunapplied, clearunapplied).\n")
		return errFailed
	}
	var objs, direct, actions, incomplete []*entry
	for _, e := range s.pending {
		switch {
		case e.op == opAction:
			actions = append(actions, e)
		case !e.valid():
			incomplete = append(incomplete, e)
		case e.direct:
			direct = append(direct, e)
		default:
			objs = append(objs, e)
		}
	}
	for _, e := range incomplete {
		why := fmt.Sprintf("missing fields %v", e.missing())
		if e.problem != "" {
			why = e.problem
		}
		s.printf("%s\n%s\n", s.yellow("Incomplete config not applying for:"), s.yellow(why))
		s.printEntry(e, "PENDING CONFIG")
	}
	if len(objs) > 0 && s.cand != nil {
		// Commits made since the candidate began: say which pending
		// entries they made void, and then commit nothing.
		if s.reportStale(objs) {
			s.printf("\n%s\n", s.red(failBanner))
			s.printf("Nothing was changed; the pending config is kept: remove what no longer applies (no <command>) or clearunapplied.\n")
			return errFailed
		}
		ctx, cancel := s.rctx()
		res, err := s.cand.Commit(ctx, opts)
		cancel()
		if err != nil {
			failed := objs[0]
			for _, e := range objs {
				if strings.EqualFold(errObject(err), e.kind.Name) {
					failed = e
					break
				}
			}
			s.printf("%s%s\n\n", s.sdkLine(failed), s.red("FAILED: "+errText(err)))
			s.printf("%s\n", s.red(failBanner))
			s.printf("Nothing was changed; the pending config is kept (showunapplied, clearunapplied).\n")
			return errFailed
		}
		for _, e := range objs {
			s.printEntry(e, "APPLIED CONFIG")
			code := 200
			if e.op == opCreate {
				code = 201
			}
			s.printf("%s%s\n\n", s.sdkLine(e), s.success(e, code))
		}
		s.cand = nil
		s.own[res.Revision] = true
		s.pending = slices.DeleteFunc(s.pending, func(e *entry) bool { return slices.Contains(objs, e) })
		if opts.Confirm > 0 && res.Revision != 0 {
			s.confirm = res.Revision
			by := res.ConfirmBy
			if by.IsZero() {
				by = time.Now().Add(opts.Confirm)
			}
			s.printf("Revision %d is rolled back at %s unless 'confirm' is entered\n", res.Revision, by.Local().Format(time.ANSIC))
		}
	}
	// Creates holding a value the server never stores, then actions, in
	// the order typed: each is its own request, so a failure stops there
	// and leaves it and the rest pending.
	for _, e := range append(direct, actions...) {
		var err error
		if e.op == opAction {
			err = s.runAction(e)
		} else {
			err = s.createDirect(e)
		}
		if err != nil {
			s.printf("The config above this line is applied; this entry and the ones after it stay pending.\n")
			return err
		}
		s.pending = slices.DeleteFunc(s.pending, func(x *entry) bool { return x == e })
	}
	return nil
}

// precheckActions dry-runs every queued action, in order, and prints the
// refused ones; it reports whether any was refused.
func (s *Session) precheckActions() (failed bool) {
	for _, e := range s.pending {
		if e.op != opAction {
			continue
		}
		ctx, cancel := s.rctx()
		_, err := s.api.Action(ctx, e.kind.Name, client.Object(e.object()), client.DryRun())
		cancel()
		if err != nil {
			s.printf("%s%s\n\n", s.sdkLine(e), s.red("FAILED: "+errText(err)))
			failed = true
		}
	}
	return failed
}

// createDirect creates an object outside the candidate (see sync).
func (s *Session) createDirect(e *entry) error {
	ctx, cancel := s.rctx()
	defer cancel()
	res, err := s.api.Create(ctx, e.kind.Name, client.Object(e.object()))
	if err != nil {
		s.printf("%s%s\n\n", s.sdkLine(e), s.red("FAILED: "+errText(err)))
		return errFailed
	}
	if rev, err := strconv.ParseUint(strings.Trim(res.ETag, `W/"`), 10, 64); err == nil {
		s.own[rev] = true // its ETag is the revision it made
	}
	s.printEntry(e, "APPLIED CONFIG")
	s.printf("%s%s\n\n", s.sdkLine(e), s.success(e, 201))
	return nil
}

// runAction posts one action and prints its line.
func (s *Session) runAction(e *entry) error {
	ctx, cancel := s.rctx()
	defer cancel()
	_, err := s.api.Action(ctx, e.kind.Name, client.Object(e.object()))
	if err != nil {
		s.printf("%s%s\n\n", s.sdkLine(e), s.red("FAILED: "+errText(err)))
		return errFailed
	}
	s.printf("%s%s\n\n", s.sdkLine(e), s.success(e, 200))
	return nil
}

// applyCheck validates the whole pending config on the server (a dry run
// of the commit and of each action), changing nothing.
func (s *Session) applyCheck() error {
	failed := false
	var objs []*entry
	for _, e := range s.pending {
		if e.op != opAction && !e.direct && e.valid() {
			objs = append(objs, e)
		}
	}
	if len(objs) > 0 && s.reportStale(objs) {
		return errFailed
	}
	if s.cand != nil {
		ctx, cancel := s.rctx()
		res, err := s.cand.Commit(ctx, client.CommitOptions{DryRun: true})
		cancel()
		if err != nil {
			s.printf("%s\n", s.red("FAILED: "+errText(err)))
			failed = true
		} else {
			for _, c := range res.Changes {
				s.printf("OK %s %s %s\n", c.Op, c.Kind, c.Key)
			}
		}
	}
	for _, e := range s.pending {
		switch {
		case e.op == opAction:
			ctx, cancel := s.rctx()
			_, err := s.api.Action(ctx, e.kind.Name, client.Object(e.object()), client.DryRun())
			cancel()
			if err != nil {
				s.printf("%s %s\n", strings.TrimSuffix(s.sdkLine(e), " result: "), s.red("FAILED: "+errText(err)))
				failed = true
			} else {
				s.printf("OK execute %s\n", e.kind.Name)
			}
		case !e.valid():
			s.printf("%s %s %v\n", e.cmd, s.yellow("incomplete: missing fields"), e.missing())
			failed = true
		}
	}
	if failed {
		return errFailed
	}
	s.printf("Check passed: nothing was changed\n")
	return nil
}

// doConfirm keeps the last confirmed apply (or the revision given).
func (s *Session) doConfirm(args []token) error {
	return s.decidePending(args, func(ctx context.Context, rev uint64) (string, error) {
		return fmt.Sprintf("Revision %d confirmed", rev), s.api.Confirm(ctx, rev)
	})
}

// doCancel rolls back now the last confirmed apply (or the revision
// given), as its timer would.
func (s *Session) doCancel(args []token) error {
	return s.decidePending(args, func(ctx context.Context, rev uint64) (string, error) {
		back, err := s.api.Cancel(ctx, rev)
		return fmt.Sprintf("Revision %d cancelled: rolled back in revision %d", rev, back), err
	})
}

// decidePending runs decide (confirm or cancel) on the revision given,
// else this session's last confirmed apply, else the commit the switch
// awaits, whoever made it.
func (s *Session) decidePending(args []token, decide func(ctx context.Context, rev uint64) (string, error)) error {
	rev := s.confirm
	if len(args) == 1 {
		n, err := strconv.ParseUint(args[0].text, 10, 64)
		if err != nil {
			s.printf("ERROR: Invalid Value %s, must be a revision number\n", args[0].text)
			return errFailed
		}
		rev = n
	}
	if rev == 0 {
		st, err := s.awaitingConfirm()
		if err != nil {
			s.printf("ERROR: %s\n", errText(err))
			return errFailed
		}
		if st == nil {
			s.printf("ERROR: no commit awaits confirmation\n")
			return errFailed
		}
		rev = st.Revision
	}
	ctx, cancel := s.rctx()
	defer cancel()
	done, err := decide(ctx, rev)
	if err != nil {
		s.printf("ERROR: %s\n", errText(err))
		return errFailed
	}
	s.printf("%s\n", done)
	if rev == s.confirm {
		s.confirm = 0
	}
	return nil
}

// ---- showunapplied ----

func (s *Session) showUnapplied(full bool) {
	s.printf("Unapplied Config\n")
	s.printf("%s\n", s.yellow("NOTE: If attribute is not user provisioned default values shown, when config is applied a"))
	s.printf("%s\n\n", s.yellow("read before write action will occur to fill in values of attributes not set by user."))
	for _, e := range s.pending {
		if !full && !e.valid() {
			continue
		}
		s.printEntry(e, "PENDING CONFIG")
	}
}

// printEntry is FlexSwitch's block for one entry: the object line, then
// the attributes typed and, for the others, their defaults.
func (s *Session) printEntry(e *entry, status string) {
	s.printf("\tobject: %s   status: %s  valid: %s\n", e.kind.Name, status, display(e.valid()))
	header := []string{"command", "attr", "value", "model attr", "iskey", "required", "userprov", "time provisioned"}
	var rows [][]string
	vf := s.cat.valueField(e.kind)
	seen := map[string]bool{}
	x := func(b bool) string {
		if b {
			return "X"
		}
		return ""
	}
	if e.op == opDelete {
		rows = append(rows, []string{"no " + e.cmd, "", "", "", "", "", "X", e.at.Format(time.ANSIC)})
	}
	for _, f := range e.kind.Keys() {
		if v, ok := e.key[f.Name]; ok {
			cmd := ""
			if f == vf || (e.kind.CLI.Join && f == e.kind.Keys()[len(e.kind.Keys())-1]) {
				cmd = e.cmd
			}
			rows = append(rows, []string{cmd, f.CLIWord(), maskIf(f, v), f.Name, "True", "X", x(cmd != ""), e.at.Format(time.ANSIC)})
			seen[f.Name] = true
		}
	}
	for _, st := range e.sets {
		f := st.field
		rows = append(rows, []string{st.cmd, f.CLIWord(), maskIf(f, st.value), f.Name, display(f.Key), x(f.Key || f.Required), "X", st.at.Format(time.ANSIC)})
		seen[f.Name] = true
	}
	if e.op != opDelete {
		for _, f := range e.kind.Fields {
			if seen[f.Name] || f.ReadOnly {
				continue
			}
			v := defaultOf(f)
			if e.base != nil {
				if bv, ok := e.base[f.Name]; ok {
					v = bv
				}
			}
			rows = append(rows, []string{"", f.CLIWord(), maskIf(f, v), f.Name, display(f.Key), x(f.Key || f.Required && f.Default == nil), "", ""})
		}
	}
	writeTable(terminal{s}, header, rows, false)
	s.printf("\n")
}

// cellWidth is where FlexSwitch's table printer wrapped a cell.
const cellWidth = 30

// wrapCell splits a cell into lines of at most cellWidth characters, at a
// blank where there is one in the line, else in the middle of the word (as
// FlexSwitch's printer cut EBGPAllowMultipleAS).
func wrapCell(c string) []string { return wrapCellAt(c, cellWidth) }

// wrapCellAt is wrapCell at width characters.
func wrapCellAt(c string, width int) []string {
	width = max(width, 1)
	var out []string
	for len([]rune(c)) > width {
		r := []rune(c)
		cut := strings.LastIndex(string(r[:width+1]), " ")
		if cut <= 0 {
			out = append(out, string(r[:width]))
			c = string(r[width:])
			continue
		}
		out = append(out, strings.TrimRight(string(r[:width+1])[:cut], " "))
		c = strings.TrimLeft(string(r[:width+1])[cut:]+string(r[width+1:]), " ")
	}
	return append(out, c)
}

// wrapRow turns one row into as many lines as its tallest wrapped cell.
func wrapRow(cells []string) [][]string {
	parts := make([][]string, len(cells))
	height := 1
	for i, c := range cells {
		parts[i] = wrapCell(c)
		height = max(height, len(parts[i]))
	}
	lines := make([][]string, height)
	for l := range lines {
		lines[l] = make([]string, len(cells))
		for i := range cells {
			if l < len(parts[i]) {
				lines[l][i] = parts[i][l]
			}
		}
	}
	return lines
}

// writeTable prints FlexSwitch's tables: a leading blank, columns four
// blanks apart, cells wrapped at 30 characters; around the header dashes
// (above too when boxed).
func writeTable(w io.Writer, header []string, rows [][]string, boxed bool) {
	heads := wrapRow(escapeCells([][]string{header})[0])
	var lines [][]string
	for _, cells := range escapeCells(rows) { // a value: one line, nothing a terminal acts on
		lines = append(lines, wrapRow(cells)...)
	}
	width := make([]int, len(header))
	for _, r := range append(append([][]string(nil), heads...), lines...) {
		for i, c := range r {
			if i < len(width) && utf8.RuneCountInString(c) > width[i] {
				width[i] = utf8.RuneCountInString(c)
			}
		}
	}
	total := 1
	for _, n := range width {
		total += n + 4
	}
	line := func(cells []string) string {
		var b strings.Builder
		b.WriteString(" ")
		for i, c := range cells {
			if i == len(cells)-1 || i >= len(width) {
				b.WriteString(c)
			} else {
				b.WriteString(c + strings.Repeat(" ", width[i]-utf8.RuneCountInString(c)+4))
			}
		}
		return strings.TrimRight(b.String(), " ") + "\n"
	}
	dash := strings.Repeat("-", max(total-4, 10)) + "\n"
	if boxed {
		io.WriteString(w, dash)
	}
	for _, h := range heads {
		io.WriteString(w, line(h))
	}
	io.WriteString(w, dash)
	for _, l := range lines {
		io.WriteString(w, line(l))
	}
}

// ---- rollback and load ----

// rollbackCommand loads, into the pending config, the changes that bring
// the running configuration back to how it was after revision rev.
//
// `rollback <rev>` names a revision (FlexSwitch's and NVUE's reading);
// `rollback previous <n>` is Junos's `rollback <n>`: the configuration as
// it was n commits ago.
func (s *Session) rollbackCommand(args []token) error {
	if len(args) == 2 && len(matchWord(args[0].text, []string{"previous"})) == 1 {
		n, err := strconv.ParseUint(args[1].text, 10, 64)
		if err != nil || n == 0 {
			s.printf("ERROR: Invalid Value %s, must be a number of commits (1: the one before the running configuration)\n", args[1].text)
			return errFailed
		}
		rev, err := s.revisionsAgo(n)
		if err != nil {
			s.printf("ERROR: %v\n", err)
			return errFailed
		}
		args = []token{{text: strconv.FormatUint(rev, 10)}}
	}
	if len(args) != 1 {
		s.printf("ERROR: Value expected for rollback: a revision (show config history), or previous <n> for n commits ago\n")
		return errFailed
	}
	rev, err := strconv.ParseUint(args[0].text, 10, 64)
	if err != nil || rev == 0 {
		s.printf("ERROR: Invalid Value %s, must be a revision number (or: rollback previous <n>)\n", args[0].text)
		return errFailed
	}
	now, err := s.snapshot(s.api.Objects)
	if err != nil {
		s.printf("ERROR: %v\n", err)
		return errFailed
	}
	then, err := s.snapshotAt(now, rev)
	if err != nil {
		s.printf("ERROR: %v\n", err)
		return errFailed
	}
	s.clearPending()
	s.stack = nil
	n := 0
	for _, k := range s.cat.configKinds() {
		cur, old := now[k.Name], then[k.Name]
		for ks, o := range old {
			c, ok := cur[ks]
			fr := &frame{kind: k, key: keyOf(k, o), cmd: s.commandOf(k, o)}
			if !ok {
				e := &entry{kind: k, op: opCreate, key: fr.key, cmd: fr.cmd, at: time.Now()}
				for _, f := range k.Fields {
					if v, ok := o[f.Name]; ok && !f.Key && !f.ReadOnly && !(f.Secret != model.Public) {
						e.put(f, v, "rollback "+args[0].text)
					}
				}
				if err := s.sync(e, nil); err != nil {
					return err
				}
				s.pending = append(s.pending, e)
				n++
				continue
			}
			for _, f := range k.Fields {
				if f.Key || f.ReadOnly || f.Secret != model.Public || sameValue(c[f.Name], o[f.Name]) {
					continue
				}
				if _, has := o[f.Name]; !has {
					continue
				}
				if err := s.setField(fr, f, o[f.Name], "rollback "+args[0].text); err != nil {
					return err
				}
				n++
			}
		}
		for ks, o := range cur {
			if _, ok := old[ks]; !ok && k.Creatable() {
				if err := s.deleteObject(k, keyOf(k, o), s.commandOf(k, o)); err != nil {
					return err
				}
				n++
			}
		}
	}
	s.printf("Loaded %d changes back to revision %d: showunapplied, show config diff, then apply\n", n, rev)
	return nil
}

// loadMerge reads commands in `show run` form into the pending config.
func (s *Session) loadMerge() error {
	if s.opts.Lines == nil {
		s.printf("ERROR: no terminal to read from\n")
		return errFailed
	}
	s.printf("Type or paste commands; end with Ctrl-D or a line \".\"\n")
	s.stack = nil
	failed := false
	for {
		line, err := s.opts.Lines("")
		if err != nil || strings.TrimSpace(line) == "." {
			break
		}
		if e := s.Execute(line); e != nil {
			if e == errQuit {
				return e
			}
			failed = true
		}
	}
	s.stack = nil
	if failed {
		return errFailed
	}
	return nil
}

// revisionsAgo is the revision n commits before the running one.
func (s *Session) revisionsAgo(n uint64) (uint64, error) {
	ctx, cancel := s.rctx()
	defer cancel()
	var i uint64
	for r, err := range s.api.Revisions(ctx) {
		if err != nil {
			return 0, fmt.Errorf("read revisions: %s", errText(err))
		}
		if i == n {
			return r.Revision, nil
		}
		i++
	}
	return 0, fmt.Errorf("there are not %d commits before the running configuration that are kept (show config history)", n)
}

// reportStale prints the pending entries among objs that commits since the
// candidate began made void (see staleEntries), under those commits; it
// reports whether there were any.
func (s *Session) reportStale(objs []*entry) bool {
	stale, since := s.staleEntries(objs)
	if len(stale) == 0 {
		return false
	}
	var revs []string
	for _, r := range since {
		revs = append(revs, fmt.Sprintf("%d (%s, %s)", r.Revision, r.User, r.Source))
	}
	s.printf("%s\n", s.yellow("The running configuration changed since these entries were typed: revision "+strings.Join(revs, ", revision ")))
	for _, e := range objs {
		if why, ok := stale[e]; ok {
			s.printf("%s%s\n", s.sdkLine(e), s.red("FAILED: no longer applies: "+why))
		}
	}
	return true
}
