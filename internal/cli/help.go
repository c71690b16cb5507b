package cli

import (
	"fmt"
	"slices"
	"strings"

	"github.com/swmgr/swmgr/internal/model"
)

// fieldHelp is the help of an attribute as FlexSwitch's schema built it:
// the allowed values or range, the description, the default.
func fieldHelp(f *model.Field) string {
	var parts []string
	switch {
	case f.IsCLISwitch():
		on, off := f.CLISwitchValues()
		parts = append(parts, fmt.Sprintf("%s/no %s: %s/%s", f.CLIWord(), f.CLIWord(), display(on), display(off)))
	case len(f.Enum) > 0:
		parts = append(parts, strings.Join(f.Enum, "/"))
	case f.Range != nil:
		parts = append(parts, fmt.Sprintf("%d-%d", f.Range.Min, f.Range.Max))
	case f.Type == model.StringList:
		parts = append(parts, "list, one value per command")
	case f.Type == model.RecordList && recordIdentity(f) != nil:
		id := recordIdentity(f)
		form := "<" + id.CLIWord() + ">"
		for _, sf := range f.Sub {
			if sf != id {
				form += " [" + sf.CLIWord() + " <" + sf.Type.String() + ">]"
			}
		}
		parts = append(parts, "list, one per command: "+form)
	default:
		parts = append(parts, f.Type.String())
	}
	if f.Doc != "" {
		parts = append(parts, f.Doc)
	} else {
		parts = append(parts, f.Name)
	}
	if f.Default != nil {
		parts = append(parts, "default: "+display(f.Default))
	}
	if f.Secret != model.Public {
		parts = append(parts, "(secret: never shown)")
	}
	return strings.Join(parts, "  ")
}

func (s *Session) levelOptions() []*option {
	if s.mode == ConfigMode {
		return s.configOptions(true)
	}
	return s.execOptions()
}

// help prints what may follow toks (`router bgp 65001 ?`, `?`).
func (s *Session) help(toks []token) {
	opts := s.levelOptions()
	if len(toks) > 0 && strings.EqualFold(toks[0].text, "no") && s.mode == ConfigMode {
		toks = toks[1:]
		opts = s.configOptions(false)
	}
	if len(toks) > 0 {
		if m, used, _, _ := resolve(toks, opts); m != nil && m[0].control == "show" {
			toks, opts = toks[used:], s.showOptions()
		}
	}
	if len(toks) > 0 && toks[len(toks)-1].text == "|" {
		s.printHelp(pipeHelp, nil)
		return
	}
	var control, context, actions [][]string
	listed := map[string]int{} // words -> row in context, listed once
	add := func(o *option, depth int) {
		if o.field != nil && depth == 0 && o.words[0] == o.field.Name && o.field.CLIWord() != o.field.Name {
			return // the REST name is a synonym of the CLI word, not another word
		}
		words := strings.Join(o.words[depth:], " ")
		row := []string{words, o.help}
		switch {
		case o.control != "":
			control = append(control, row)
		case o.kind != nil && o.kind.Class == model.Action:
			text := o.kind.Doc
			if o.kind.CLI.Line {
				text = s.lineForm(o.kind) + ": " + text
			}
			if i, ok := listed[words]; ok {
				// A word that opens a context and is also a one-liner
				// (user <Name> / user <Name> password <P>): one row.
				context[i][1] = strings.TrimSuffix(context[i][1], ".") + "; " + text
				return
			}
			actions = append(actions, []string{words, text})
		default:
			if i, ok := listed[words]; ok {
				context[i][1] = strings.TrimSuffix(context[i][1], ".") + "; " + row[1]
				return
			}
			for i, a := range actions {
				if a[0] == words {
					// the one-liner came first: list the context, mention it
					row[1] = strings.TrimSuffix(row[1], ".") + "; " + a[1]
					actions = append(actions[:i], actions[i+1:]...)
					break
				}
			}
			listed[words] = len(context)
			context = append(context, row)
		}
	}
	defer func() { s.printActions(actions) }()
	if len(toks) == 0 {
		for _, o := range opts {
			add(o, 0)
		}
		s.printHelp(control, context)
		return
	}
	// Options whose words continue the typed ones.
	var partial []*option
	for _, o := range opts {
		if continuesWords(o, toks) {
			partial = append(partial, o)
		}
	}
	if len(partial) > 0 {
		for _, o := range partial {
			add(o, len(toks))
		}
		s.printHelp(control, context)
		return
	}
	m, used, _, _ := resolve(toks, opts)
	if m == nil {
		s.printf("ERROR Invalid command entered\n")
		return
	}
	rest := toks[used:]
	o := m[0]
	switch {
	case o.field != nil:
		s.printHelp(nil, [][]string{{s.valuesOf(o.field), fieldHelp(o.field)}})
	case o.kind != nil && o.show != nil:
		rows := [][]string{{"<cr>", o.help}, {"brief", "a table of the columns people read"}, {"detail", "every field, one per line"}}
		if o.kind.Class == model.Config || len(o.kind.Keys()) > 0 {
			rows = append(rows, []string{valueHint(s.showKeyField(o.kind)), "one object, every field"})
		}
		rows = append(rows, []string{"|", "a filter: " + strings.Join(pipeNames, ", ")})
		s.printHelp(nil, rows)
	case o.kind != nil:
		k := o.kind
		vf := s.cat.valueField(k)
		if lead := s.cat.leadKeys(k); len(rest) < len(lead) {
			s.printHelp(nil, [][]string{{hintWithValues(lead[len(rest)], s.liveKeyValues(k, lead[len(rest)])), fieldHelp(lead[len(rest)])}})
			return
		} else if len(lead) > 0 {
			rest = rest[len(lead):]
		}
		if (vf != nil || k.CLI.Join) && len(rest) == 0 {
			vals := s.liveValues(k)
			desc := k.Doc
			if vf != nil {
				desc = fieldHelp(vf)
			}
			hint := ""
			if vf != nil {
				hint = hintWithValues(vf, vals)
			} else {
				hint = "<" + strings.Join(vals, ",") + ">"
			}
			s.printHelp(nil, [][]string{{hint, desc}})
			return
		}
		fr := &frame{kind: k}
		if k.Class == model.Action {
			fr.entry = &entry{}
		}
		context = append(context, []string{"<cr>", ""})
		for _, f := range s.leafFields(fr) {
			context = append(context, []string{f.CLIWord(), fieldHelp(f)})
		}
		for _, ch := range s.cat.children[k.Name] {
			context = append(context, []string{strings.Join(ch.CLI.Words, " "), ch.Doc})
		}
		if k.CLI.Context != "" {
			context = append(context, []string{k.CLI.Context, "arguments in a context"})
		}
		s.printHelp(nil, context)
	default:
		s.printHelp([][]string{{"<cr>", o.help}}, nil)
	}
}

func (s *Session) printHelp(control, context [][]string) {
	width := len("Command")
	for _, r := range append(slices.Clone(control), context...) {
		width = max(width, len(r[0]))
	}
	dash := strings.Repeat("-", 60) + "\n"
	s.printf("%s", dash)
	s.printf(" %-*s    %s\n", width, "Command", "Description")
	s.printf("%s", dash)
	row := func(r []string) {
		// The description wraps to fit 120 columns, under itself.
		for i, part := range wrapCellAt(r[1], max(showWidth-width-5, 30)) {
			if i == 0 {
				s.printf(" %-*s    %s\n", width, r[0], part)
			} else {
				s.printf(" %-*s    %s\n", width, "", part)
			}
		}
	}
	if len(control) > 0 {
		s.printf("control:\n")
		for _, r := range control {
			row(r)
		}
	}
	if len(context) > 0 {
		s.printf("%s\n", s.green("context:"))
		for _, r := range context {
			row(r)
		}
	}
}

func (s *Session) valuesOf(f *model.Field) string {
	switch {
	case f.IsCLISwitch():
		return f.CLIWord()
	case len(f.Enum) > 0:
		return strings.Join(f.Enum, ",")
	}
	return valueHint(f)
}

// valueHint is the form of a field's value, from its type and format:
// <1-4294967295>, <A.B.C.D>, <A.B.C.D/M>.
func valueHint(f *model.Field) string {
	if f == nil {
		return "<value>"
	}
	switch {
	case len(f.Enum) > 0:
		return "<" + strings.Join(f.Enum, "|") + ">"
	case f.Type == model.Bool:
		return "<true|false>"
	case f.Range != nil:
		return fmt.Sprintf("<%d-%d>", f.Range.Min, f.Range.Max)
	case f.Type == model.Int:
		return "<number>"
	}
	if f.Format != nil {
		return f.Format.Hint
	}
	if f.Type == model.StringList {
		return "<value>"
	}
	return "<text>"
}

// hintWithValues is a value's hint with the values that exist now.
func hintWithValues(f *model.Field, live []string) string {
	h := valueHint(f)
	if len(live) == 0 || len(f.Enum) > 0 {
		return h
	}
	if len(live) > 8 {
		live = append(live[:8:8], "...")
	}
	return h + " (" + strings.Join(live, ",") + ")"
}

// lineForm is a one-liner's whole form: user <Name> password <Password>.
func (s *Session) lineForm(k *model.Kind) string {
	form := strings.Join(k.CLI.Words, " ")
	vf := s.cat.valueField(k)
	if vf != nil {
		form += " " + valueHint(vf)
	}
	for _, f := range k.Fields {
		if f != vf && !f.ReadOnly {
			form += " " + f.CLIWord() + " " + valueHint(f)
			if !f.Required {
				form = form[:len(form)-len(f.CLIWord()+" "+valueHint(f))-1] + " [" + f.CLIWord() + " " + valueHint(f) + "]"
			}
		}
	}
	return form
}

// pipeHelp lists the filters after |.
var pipeHelp = [][]string{
	{"include <regex>", "only the lines that match"},
	{"exclude <regex>", "the lines that do not match"},
	{"count", "the number of lines"},
	{"json", "the objects as the API returns them"},
	{"no-more", "no pager"},
}

// printActions lists the one-line actions apart from the contexts.
func (s *Session) printActions(rows [][]string) {
	if len(rows) == 0 {
		return
	}
	s.printf("%s\n", s.green("actions (run by apply):"))
	width := 0
	for _, r := range rows {
		width = max(width, len(r[0]))
	}
	for _, r := range rows {
		for i, part := range wrapCellAt(r[1], max(showWidth-width-5, 30)) {
			if i == 0 {
				s.printf(" %-*s    %s\n", width, r[0], part)
			} else {
				s.printf(" %-*s    %s\n", width, "", part)
			}
		}
	}
}

// liveValues are the values the token after k's words can take: the keys
// of existing objects (ports as their numbers) or the value field's enum.
func (s *Session) liveValues(k *model.Kind) []string {
	return s.liveKeyValues(k, s.cat.valueField(k))
}

// liveKeyValues are the values field vf of k's existing objects has (or
// its enum); for the value that completes a command or a show.
func (s *Session) liveKeyValues(k *model.Kind, vf *model.Field) []string {
	if vf != nil && len(vf.Enum) > 0 {
		return vf.Enum
	}
	if k.Class != model.Config {
		return nil
	}
	name := ""
	if vf != nil {
		name = vf.Name
	} else if keys := k.Keys(); len(keys) > 0 {
		name = keys[len(keys)-1].Name
	}
	objs, err := s.listAll(s.view(), k)
	if err != nil {
		return nil
	}
	var out []string
	for _, o := range objs {
		v := display(o[name])
		if k.CLI.Join {
			v = strings.TrimPrefix(v, k.CLI.Words[len(k.CLI.Words)-1])
		}
		if v != "" && !slices.Contains(out, v) {
			out = append(out, v)
		}
	}
	return naturalSort(out)
}

// Complete returns the words that may replace the last, partial word of
// line, and that partial word.
func (s *Session) Complete(line string) (cands []string, partial string) {
	if i := lastPipe(line); i >= 0 {
		// After |: the filters.
		after := strings.TrimLeft(line[i+1:], " ")
		if strings.Contains(after, " ") {
			return nil, ""
		}
		for _, w := range pipeNames {
			if strings.HasPrefix(w, strings.ToLower(after)) {
				cands = append(cands, w)
			}
		}
		return cands, after
	}
	toks, err := tokenize(line)
	if err != nil {
		return nil, ""
	}
	if len(toks) > 0 && !strings.HasSuffix(line, " ") {
		partial = toks[len(toks)-1].text
		toks = toks[:len(toks)-1]
	}
	for _, w := range s.nextWords(toks) {
		if strings.HasPrefix(strings.ToLower(w), strings.ToLower(partial)) && !slices.Contains(cands, w) {
			cands = append(cands, w)
		}
	}
	return cands, partial
}

// nextWords lists every word that may follow toks.
func (s *Session) nextWords(toks []token) []string {
	opts := s.levelOptions()
	if len(toks) > 0 && s.mode == ConfigMode && strings.EqualFold(toks[0].text, "no") {
		toks, opts = toks[1:], s.configOptions(false)
	}
	if len(toks) > 0 {
		if m, used, _, _ := resolve(toks, opts); m != nil && m[0].control == "show" {
			toks, opts = toks[used:], s.showOptions()
			if len(toks) == 0 {
				var out []string
				for _, o := range opts {
					out = append(out, o.words[0])
				}
				return out
			}
		}
	}
	var out []string
	for _, o := range opts {
		if continuesWords(o, toks) {
			out = append(out, o.words[len(toks)])
		}
	}
	if len(out) > 0 || len(toks) == 0 {
		return out
	}
	m, used, _, _ := resolve(toks, opts)
	if m == nil {
		return nil
	}
	rest := toks[used:]
	o := m[0]
	switch {
	case o.field != nil && len(rest) == 0:
		f := o.field
		if f.IsCLISwitch() {
			return nil
		}
		if len(f.Enum) > 0 {
			return f.Enum
		}
		if f.Type == model.Bool {
			return []string{"true", "false"}
		}
		if f.Ref != "" {
			if k := s.cat.reg.Lookup(model.Config, f.Ref); k != nil && k.CLI != nil {
				vals := s.liveValues(k)
				if k.CLI.Join {
					for i, v := range vals {
						vals[i] = k.CLI.Words[len(k.CLI.Words)-1] + v
					}
				}
				return vals
			}
		}
	case o.kind != nil:
		k := o.kind
		lead := s.cat.leadKeys(k)
		if len(rest) < len(lead) {
			return s.liveKeyValues(k, lead[len(rest)])
		}
		if (s.cat.valueField(k) != nil || k.CLI.Join) && len(rest) == len(lead) {
			return s.liveValues(k)
		}
		if k.CLI.Context != "" && len(rest) <= 1 {
			return []string{k.CLI.Context}
		}
	case o.control == "apply" && len(rest) == 0:
		return []string{"check", "comment", "confirmed"}
	case o.control == "run" && len(rest) == 0:
		return []string{"full"}
	case o.control == "showunapplied" && len(rest) == 0:
		return []string{"full", "diff"}
	}
	return nil
}

// continuesWords reports whether o has more words than toks and its first
// ones match the typed toks.
func continuesWords(o *option, toks []token) bool {
	if len(o.words) <= len(toks) {
		return false
	}
	for i, t := range toks {
		if len(matchWord(t.text, []string{o.words[i]})) == 0 {
			return false
		}
	}
	return true
}

// lastPipe is the index of the last | outside quotes, or -1.
func lastPipe(line string) int {
	bars := pipeBars(line)
	if len(bars) == 0 {
		return -1
	}
	return bars[len(bars)-1]
}

// Hint is the form of the value that may come next on line (<A.B.C.D>,
// <1-4294967295>) and what it sets, when the line awaits a value that TAB
// cannot list; "" otherwise.
func (s *Session) Hint(line string) string {
	if lastPipe(line) >= 0 {
		return ""
	}
	toks, err := tokenize(line)
	if err != nil || len(toks) == 0 {
		return ""
	}
	if !strings.HasSuffix(line, " ") {
		toks = toks[:len(toks)-1]
	}
	opts := s.levelOptions()
	if len(toks) > 0 && s.mode == ConfigMode && strings.EqualFold(toks[0].text, "no") {
		toks, opts = toks[1:], s.configOptions(false)
	}
	if len(toks) == 0 {
		return ""
	}
	m, used, _, _ := resolve(toks, opts)
	if m == nil {
		return ""
	}
	rest := toks[used:]
	o := m[0]
	var f *model.Field
	switch {
	case o.field != nil && len(rest) == 0 && !o.field.IsCLISwitch():
		f = o.field
	case o.kind != nil && o.show == nil:
		lead := s.cat.leadKeys(o.kind)
		switch {
		case len(rest) < len(lead):
			f = lead[len(rest)]
		case len(rest) == len(lead):
			f = s.cat.valueField(o.kind)
		}
	}
	if f == nil {
		return ""
	}
	return valueHint(f) + "  " + fieldHelp(f)
}
