package cli

import (
	"fmt"
	"io"
	"slices"
	"strings"
	"unicode/utf8"

	"github.com/swmgr/swmgr/client"
	"github.com/swmgr/swmgr/internal/model"
)

// showWidth is the width every show fits: wider cells wrap.
const showWidth = 120

// showForm is how one `show` prints its kind's state.
type showForm struct {
	// flex: FlexSwitch's words (show interface, show ip bgp neighbor):
	// "Applying Show:" first, REST field names as headings.
	flex    bool
	columns []string // model.CLIShow.Columns; nil: the kind's Brief
	only    string   // keep the objects with this field set
	detail  bool     // "Field  value" lines
}

// showKind prints the state of every object of k (or the one named) as
// form says: a table that fits showWidth, or Field value lines with
// `detail`, a key value, or for a kind of one object.
func (s *Session) showKind(k *model.Kind, form *showForm, rest []token) error {
	if form == nil {
		form = &showForm{flex: true}
	}
	objs, err := s.listState(k)
	if client.IsNotFound(err) && k.Class == model.Config {
		objs, err = s.listAll(s.api.Objects, k)
	}
	for _, name := range k.CLI.Also {
		if err != nil {
			break
		}
		var more []model.Object
		more, err = s.listState(s.cat.reg.Named(name))
		objs = append(objs, more...)
	}
	if err != nil {
		s.printf("ERROR: %s\n", errText(err))
		return errFailed
	}
	detail := form.detail || k.Singleton
	brief := false
	if len(rest) > 0 {
		last := rest[len(rest)-1]
		if !s.isKeyOf(k, objs, last.text) {
			switch m := matchWord(last.text, []string{"brief", "detail"}); {
			case len(m) == 1 && m[0] == "brief":
				brief, detail = true, false
				rest = rest[:len(rest)-1]
			case len(m) == 1:
				detail = true
				rest = rest[:len(rest)-1]
			}
		}
	}
	if len(rest) > 0 {
		text := rest[0].text
		if k.CLI.Join && len(rest) == 2 && strings.EqualFold(text, k.CLI.Words[len(k.CLI.Words)-1]) {
			text += rest[1].text
			rest = rest[1:]
		}
		if len(rest) > 1 {
			s.printf("ERROR: Invalid Value %s: one %s at a time\n", rest[1].text, s.showKeyField(k).Name)
			return errFailed
		}
		want := joinValue(k, text)
		name := s.showKeyField(k).Name
		objs = slices.DeleteFunc(objs, func(o model.Object) bool { return !strings.EqualFold(display(o[name]), want) })
		detail = !brief
	}
	if form.only != "" {
		objs = slices.DeleteFunc(objs, func(o model.Object) bool { return isZero(o[form.only]) })
	}
	if s.json {
		return s.printJSON(objs)
	}
	if form.flex {
		s.printf("Applying Show:\n")
	}
	if len(objs) == 0 {
		if form.only != "" {
			s.printf("No Data To Display for %s (none with %s)\n", k.StateName(), form.only)
			return nil
		}
		s.printf("No Data To Display for %s\n", k.StateName())
		return nil
	}
	if detail {
		s.printDetail(k, objs)
		return nil
	}
	cols := form.columns
	if cols == nil {
		cols = k.CLI.Brief
	}
	var parsed []model.ShowColumn
	if cols != nil {
		parsed, _ = s.cat.reg.ShowColumns(k, cols) // a column the kind lacks is left out
	}
	if len(parsed) == 0 {
		parsed = autoColumns(k, objs)
	}
	header := make([]string, len(parsed))
	for i, c := range parsed {
		header[i] = c.Title
		if form.flex && !brief && len(c.Path) == 1 {
			header[i] = c.Path[0]
		}
	}
	others := s.referrers(k, parsed)
	rows := make([][]string, len(objs))
	for i, o := range objs {
		row := make([]string, len(parsed))
		for j, c := range parsed {
			row[j] = s.cell(k, o, c, others)
		}
		rows[i] = row
	}
	dropped := writeFitted(terminal{s}, header, rows, true, showWidth)
	if cols == nil && (dropped > 0 || len(parsed) < countFields(k)) {
		s.printf("(more fields: show %s detail)\n", strings.Join(k.CLIShow(), " "))
	}
	return nil
}

// isKeyOf reports whether v names one of objs (so `show vrf default` is
// not read as `detail`).
func (s *Session) isKeyOf(k *model.Kind, objs []model.Object, v string) bool {
	name := s.showKeyField(k).Name
	want := joinValue(k, v)
	for _, o := range objs {
		if strings.EqualFold(display(o[name]), want) {
			return true
		}
	}
	return false
}

// showKeyField is the field a value after a show's words selects.
func (s *Session) showKeyField(k *model.Kind) *model.Field {
	if vf := s.cat.valueField(k); vf != nil {
		return vf
	}
	if keys := k.Keys(); len(keys) > 0 {
		return keys[len(keys)-1]
	}
	if len(k.Fields) > 0 {
		return k.Fields[0]
	}
	return &model.Field{}
}

func isZero(v any) bool {
	switch x := v.(type) {
	case nil:
		return true
	case string:
		return x == ""
	case int64:
		return x == 0
	case bool:
		return !x
	case []string:
		return len(x) == 0
	case []model.Object:
		return len(x) == 0
	}
	return false
}

// countFields is the number of public fields of k's state form.
func countFields(k *model.Kind) int {
	n := 0
	for _, f := range append(slices.Clone(k.Fields), k.StateOnly...) {
		if f.Secret == model.Public {
			n++
		}
	}
	return n
}

// autoColumns are, for a kind that declares no brief columns, its public
// fields in model order that objs hold (all of them: writeFitted keeps
// those that fit).
func autoColumns(k *model.Kind, objs []model.Object) []model.ShowColumn {
	var out []model.ShowColumn
	for _, f := range append(slices.Clone(k.Fields), k.StateOnly...) {
		if f.Secret != model.Public {
			continue
		}
		for _, o := range objs {
			if _, ok := o[f.Name]; ok {
				out = append(out, model.ShowColumn{Path: []string{f.Name}, Title: f.Name})
				break
			}
		}
	}
	if len(out) == 0 {
		// Fields the model does not declare (a newer server): show them all.
		seen := map[string]bool{}
		for _, o := range objs {
			for _, n := range sortedKeys(o) {
				if !seen[n] {
					seen[n] = true
					out = append(out, model.ShowColumn{Path: []string{n}, Title: n})
				}
			}
		}
	}
	return out
}

// referrers reads, for each Kind.Field column, which objects of that kind
// name which object of k: the key value of k, then the column's values.
func (s *Session) referrers(k *model.Kind, cols []model.ShowColumn) map[string]map[string][]string {
	out := map[string]map[string][]string{}
	for _, c := range cols {
		if c.Other == nil {
			continue
		}
		id := strings.Join(c.Path, ".")
		if out[id] != nil {
			continue
		}
		m := map[string][]string{}
		out[id] = m
		objs, err := s.listAll(s.api.Objects, c.Other)
		if err != nil {
			continue
		}
		for _, o := range objs {
			v := display(o[c.Path[1]])
			for _, f := range c.Other.Fields {
				if f.Ref != k.Name {
					continue
				}
				switch x := o[f.Name].(type) {
				case string:
					if x != "" && !slices.Contains(m[x], v) {
						m[x] = append(m[x], v)
					}
				case []string:
					for _, e := range x {
						if !slices.Contains(m[e], v) {
							m[e] = append(m[e], v)
						}
					}
				}
			}
		}
	}
	return out
}

// cell is one column's text for o.
func (s *Session) cell(k *model.Kind, o model.Object, c model.ShowColumn, others map[string]map[string][]string) string {
	if c.Other != nil {
		key := display(o[s.showKeyField(k).Name])
		return strings.Join(others[strings.Join(c.Path, ".")][key], ",")
	}
	f := k.StateField(c.Path[0])
	v := o[c.Path[0]]
	for _, p := range c.Path[1:] {
		rec, _ := v.(model.Object)
		v = rec[p]
		if f != nil {
			f = subField(f, p)
		}
	}
	return cellText(f, v)
}

func subField(f *model.Field, name string) *model.Field {
	for _, s := range f.Sub {
		if s.Name == name {
			return s
		}
	}
	return nil
}

// cellText is a value as a show prints it: an integer the model names by
// its name, records by their values.
func cellText(f *model.Field, v any) string {
	if n, ok := v.(int64); ok && f != nil {
		if name := f.ValueName(n); name != "" {
			return name
		}
	}
	if recs, ok := v.([]model.Object); ok && f != nil {
		parts := make([]string, 0, len(recs))
		for _, r := range recs {
			var vals []string
			for _, sf := range f.Sub {
				if t := cellText(sf, r[sf.Name]); t != "" && !isZero(r[sf.Name]) {
					vals = append(vals, t)
				}
			}
			parts = append(parts, strings.Join(vals, " "))
		}
		return strings.Join(parts, ", ")
	}
	return display(v)
}

// printDetail prints each object as "Field  value" lines, records as
// Field.Sub lines, objects apart by a blank line.
func (s *Session) printDetail(k *model.Kind, objs []model.Object) {
	for i, o := range objs {
		if i > 0 {
			s.printf("\n")
		}
		var lines [][2]string
		var add func(prefix string, f *model.Field, v any)
		add = func(prefix string, f *model.Field, v any) {
			switch x := v.(type) {
			case model.Object:
				for _, sf := range f.Sub {
					if sv, ok := x[sf.Name]; ok {
						add(prefix+"."+sf.Name, sf, sv)
					}
				}
			case []model.Object:
				if len(x) == 0 {
					lines = append(lines, [2]string{prefix, ""})
				}
				for j, r := range x {
					add(fmt.Sprintf("%s[%d]", prefix, j+1), f, r)
				}
			case string:
				// A value shown on its own line is still one line of the
				// terminal's (escaped), but for text the model says is
				// several lines: each of its lines, each escaped.
				if f != nil && f.Text == model.TextLines {
					for j, l := range strings.Split(strings.TrimSuffix(x, "\n"), "\n") {
						if j > 0 {
							prefix = ""
						}
						lines = append(lines, [2]string{prefix, escapeText(l)})
					}
					return
				}
				lines = append(lines, [2]string{prefix, escapeText(x)})
			default:
				lines = append(lines, [2]string{prefix, escapeText(cellText(f, v))})
			}
		}
		seen := map[string]bool{}
		for _, f := range append(slices.Clone(k.Fields), k.StateOnly...) {
			if f.Secret != model.Public || seen[f.Name] {
				continue
			}
			seen[f.Name] = true
			if v, ok := o[f.Name]; ok {
				add(f.Name, f, v)
			}
		}
		for _, n := range sortedKeys(o) {
			if !seen[n] && fieldAny(k, n) == nil {
				add(n, nil, o[n])
			}
		}
		width := 0
		for _, l := range lines {
			width = max(width, utf8.RuneCountInString(l[0]))
		}
		width = min(width, 40)
		for _, l := range lines {
			name := l[0]
			pad := max(width-utf8.RuneCountInString(name), 0)
			valWidth := showWidth - max(width, utf8.RuneCountInString(name)) - 4
			for j, part := range wrapCellAt(l[1], valWidth) {
				if j == 0 {
					s.printf("  %s%s  %s\n", name, strings.Repeat(" ", pad), part)
				} else {
					s.printf("  %s  %s\n", strings.Repeat(" ", max(width, utf8.RuneCountInString(name))), part)
				}
			}
		}
	}
}

// writeFitted prints a table (as writeTable) no wider than limit: columns
// are narrowed, widest first, down to their heading's or 8 characters,
// their cells wrapped; columns that still do not fit are left out (their
// count is returned).
func writeFitted(w io.Writer, header []string, rows [][]string, boxed bool, limit int) (dropped int) {
	// A value: one line, nothing a terminal acts on.
	header, rows = escapeCells([][]string{header})[0], escapeCells(rows)
	n := len(header)
	width := make([]int, n)
	floor := make([]int, n)
	for i, h := range header {
		width[i] = utf8.RuneCountInString(h)
		floor[i] = min(max(utf8.RuneCountInString(h), 8), 30)
	}
	for _, r := range rows {
		for i, c := range r {
			width[i] = max(width[i], utf8.RuneCountInString(c))
		}
	}
	for i := range width {
		floor[i] = min(floor[i], width[i])
	}
	total := func(cols int) int {
		t := 1
		for i := 0; i < cols; i++ {
			t += width[i]
			if i < cols-1 {
				t += 4
			}
		}
		return t
	}
	for total(n) > limit {
		widest := -1
		for i := 0; i < n; i++ {
			if width[i] > floor[i] && (widest < 0 || width[i] > width[widest]) {
				widest = i
			}
		}
		if widest < 0 {
			break
		}
		width[widest]--
	}
	for n > 1 && total(n) > limit {
		n--
		dropped++
	}
	cut := func(r []string) [][]string {
		parts := make([][]string, n)
		height := 1
		for i := 0; i < n; i++ {
			parts[i] = wrapCellAt(r[i], width[i])
			height = max(height, len(parts[i]))
		}
		out := make([][]string, height)
		for l := range out {
			out[l] = make([]string, n)
			for i := 0; i < n; i++ {
				if l < len(parts[i]) {
					out[l][i] = parts[i][l]
				}
			}
		}
		return out
	}
	line := func(cells []string) string {
		var b strings.Builder
		b.WriteString(" ")
		for i, c := range cells {
			if i == len(cells)-1 {
				b.WriteString(c)
			} else {
				b.WriteString(c + strings.Repeat(" ", width[i]-utf8.RuneCountInString(c)+4))
			}
		}
		return strings.TrimRight(b.String(), " ") + "\n"
	}
	dash := strings.Repeat("-", max(min(total(n), limit)-1, 10)) + "\n"
	if boxed {
		io.WriteString(w, dash)
	}
	for _, h := range cut(header) {
		io.WriteString(w, line(h))
	}
	io.WriteString(w, dash)
	for _, r := range rows {
		for _, l := range cut(r) {
			io.WriteString(w, line(l))
		}
	}
	return dropped
}
