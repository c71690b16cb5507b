package model

import (
	"errors"
	"fmt"
	"strings"
)

// CLICommand declares how the CLI (swmgr cli, FlexSwitch's command set)
// reaches a kind: the words typed before its value, the prompt segment each
// word adds, and the context that holds it. The CLI derives its whole word
// tree, help, completion, show commands and `show run` from these
// declarations and the fields'; nothing in the CLI names a kind.
//
// Examples (the prompt follows FlexSwitch's rule, see docs/cli.md):
//
//	interface fpPort 1        Words {interface fpPort}, Join     -> (config-if-fpPort-1)#
//	router bgp 65001          Words {router bgp}, Value ASNum    -> (config-router-bgp-65001)#
//	  neighbor ip 10.1.1.2    Parents {BGPGlobal BGPVrf}         -> (config-router-bgp-65001-neighbor-10.1.1.2)#
//	user alice password P     Line: a one-liner, queued at once
type CLICommand struct {
	Words  []string // the command words before the value
	Prompt []string // the prompt segment of each word; "" adds none
	// Value is the field the token after Words sets; "" for none. It
	// defaults to the kind's last key field when the kind has one not
	// inherited from the parent context.
	Value string
	// Join makes the value the last word followed by the token: `fpPort 1`
	// sets IntfRef fpPort1 (FlexSwitch's port prefix as a word).
	Join bool
	// Parents are the kinds whose contexts hold this one; none: (config)#.
	Parents []string
	// Inherit is the field that takes the key of the enclosing context's
	// object (IPv4Intf IntfRef from its port, a neighbour's Vrf from its
	// BGP VRF).
	Inherit string
	// Line makes the command a one-liner: words after the value set fields
	// (`user alice password P`), and it opens no context.
	Line bool
	// Context is a word after Words that opens a context of the same kind
	// instead (`save config toFile`).
	Context string
	// Show are the words after `show` that print the kind's state; default
	// Words.
	Show []string
	// Brief are the columns of the kind's state table: the ones people
	// read, in order (see CLIShow.Columns for the forms). nil: the fields
	// in model order, as many as fit the terminal.
	Brief []string
	// Shows are more `show` forms of the kind's state: the words of other
	// CLIs' habits (`show ip bgp summary`) with their own table.
	Shows []CLIShow
	// Also are state-only kinds whose objects the kind's own show lists
	// after its own, in its Brief's columns (fields of the same names in
	// each): `show ip route` lists IPv6RouteState's routes beside
	// IPv4RouteState's.
	Also []string
}

// CLIShow is one more `show` of a kind's state beside FlexSwitch's words.
// Its output fits 120 columns and has no "Applying Show:" line.
type CLIShow struct {
	Words []string // after `show`
	// Columns of the table, each one of:
	//   Field                  a field of the state form
	//   Field.Sub.Sub          an integer inside a record field
	//   Kind.Field             a field of the object of another config kind
	//                          that names this one (IPv4Intf.IpAddr for a
	//                          port), or holds it in a list (Vlan.VlanId)
	// followed by ":Title" for the column's heading (default the field's
	// name). nil: the kind's Brief.
	Columns []string
	// Only keeps the objects whose field of this name is set (not zero, ""
	// or false): the selected NTP source, the ports with an LLDP neighbor.
	Only string
	// Detail prints each object as "Field  value" lines, not a table.
	Detail bool
	Doc    string // the help of the words
}

// ShowColumn is one parsed column of a CLIShow or Brief.
type ShowColumn struct {
	Path  []string // field, then sub-fields; or kind, field
	Other *Kind    // the kind whose objects name this one, for Kind.Field
	Title string
}

// ShowColumns parses a column list against kind k and registry r. A
// column naming no field is left out and reported (a model derived from
// this one may drop fields); the builtin model has none, as a test checks.
func (r *Registry) ShowColumns(k *Kind, cols []string) ([]ShowColumn, error) {
	var out []ShowColumn
	var errs []error
	for _, c := range cols {
		spec, title, _ := strings.Cut(c, ":")
		path := strings.Split(spec, ".")
		col := ShowColumn{Path: path, Title: title}
		if col.Title == "" {
			col.Title = path[len(path)-1]
		}
		if f := k.anyField(path[0]); f != nil {
			for _, sub := range path[1:] {
				if f = f.subField(sub); f == nil {
					break
				}
			}
			if f == nil {
				errs = append(errs, fmt.Errorf("%s: show column %s: no such sub-field", k.Name, c))
				continue
			}
		} else if o := r.Lookup(Config, path[0]); o != nil && len(path) == 2 && o.Field(path[1]) != nil {
			col.Other = o
		} else {
			errs = append(errs, fmt.Errorf("%s: show column %s is not a field of the kind or Kind.Field", k.Name, c))
			continue
		}
		out = append(out, col)
	}
	return out, errors.Join(errs...)
}

// anyField is a field of the config or state form.
func (k *Kind) anyField(name string) *Field {
	if f := k.byName[name]; f != nil {
		return f
	}
	for _, f := range k.StateOnly {
		if f.Name == name {
			return f
		}
	}
	return nil
}

// StateField returns the field named name of k's state form: a config
// field or a state-only one.
func (k *Kind) StateField(name string) *Field { return k.anyField(name) }

// ValueName is the name of an integer field's value when the model names
// them (a BGP session's state: 6 is Established), else "".
func (f *Field) ValueName(v int64) string {
	if v >= 0 && v < int64(len(f.Names)) {
		return f.Names[v]
	}
	return ""
}

// CLIWord is the word the CLI uses for the field.
func (f *Field) CLIWord() string {
	if f.CLI != "" {
		return f.CLI
	}
	return f.Name
}

// IsCLISwitch reports whether the field is set by its bare word and
// cleared by `no <word>` (booleans and declared two-value enums).
func (f *Field) IsCLISwitch() bool {
	return f.Type == Bool || (f.CLISwitch != "" && len(f.Enum) == 2)
}

// CLISwitchValues returns the value the bare word sets and the one `no
// <word>` sets.
func (f *Field) CLISwitchValues() (on, off any) {
	if f.Type == Bool {
		return true, false
	}
	for _, v := range f.Enum {
		if v != f.CLISwitch {
			off = v
		}
	}
	return f.CLISwitch, off
}

// CLIValueField is the field the token after the command words sets, or
// nil.
func (k *Kind) CLIValueField() *Field {
	c := k.CLI
	if c == nil {
		return nil
	}
	if c.Value != "" {
		return k.Field(c.Value)
	}
	for i := len(k.keys) - 1; i >= 0; i-- {
		if k.keys[i].Name != c.Inherit {
			return k.keys[i]
		}
	}
	return nil
}

// CLIShow are the words after `show` for the kind's state.
func (k *Kind) CLIShow() []string {
	if k.CLI == nil {
		return nil
	}
	if k.CLI.Show != nil {
		return k.CLI.Show
	}
	return k.CLI.Words
}

// checkCLI catches declaration mistakes the CLI would trip over.
func (r *Registry) checkCLI() error {
	for _, k := range r.kinds {
		c := k.CLI
		if c == nil {
			continue
		}
		if len(c.Words) == 0 || len(c.Prompt) > len(c.Words) {
			return fmt.Errorf("%s: CLI needs Words and at most one Prompt segment per word", k.Name)
		}
		for _, w := range c.Words {
			if w == "" || strings.ContainsAny(w, " \t|") {
				return fmt.Errorf("%s: CLI word %q", k.Name, w)
			}
		}
		if c.Value != "" && k.Field(c.Value) == nil {
			return fmt.Errorf("%s: CLI Value %s is not a field", k.Name, c.Value)
		}
		if c.Inherit != "" && k.Field(c.Inherit) == nil {
			return fmt.Errorf("%s: CLI Inherit %s is not a field", k.Name, c.Inherit)
		}
		for _, p := range c.Parents {
			pk := r.Lookup(Config, p)
			if pk == nil || pk.CLI == nil {
				return fmt.Errorf("%s: CLI parent %s is not a config kind with a CLI context", k.Name, p)
			}
		}
		for _, sh := range c.Shows {
			if len(sh.Words) == 0 {
				return fmt.Errorf("%s: a CLI show needs words", k.Name)
			}
		}
		for _, name := range c.Also {
			ak := r.Named(name)
			if ak == nil || ak.Class != State || c.Brief == nil {
				return fmt.Errorf("%s: CLI Also %s needs a state-only kind of that name and the kind's Brief", k.Name, name)
			}
			if _, err := r.ShowColumns(ak, c.Brief); err != nil {
				return fmt.Errorf("%s: CLI Also %s: %w", k.Name, name, err)
			}
		}
		for _, f := range k.Fields {
			if f.CLISwitch != "" && (len(f.Enum) != 2 || !containsString(f.Enum, f.CLISwitch)) {
				return fmt.Errorf("%s.%s: CLISwitch %q needs a two-value enum holding it", k.Name, f.Name, f.CLISwitch)
			}
		}
	}
	return nil
}

func containsString(list []string, s string) bool {
	for _, v := range list {
		if v == s {
			return true
		}
	}
	return false
}

// secretWords are the CLI words (and names) of the fields whose values
// are secrets, in lower case: the value after one on a command line is
// never shown, kept in a history or sent in a record. NewRegistry sets
// them once.
func secretWords(kinds []*Kind) map[string]bool {
	w := map[string]bool{}
	for _, k := range kinds {
		for _, f := range k.Fields {
			// A Document (ApplyConfig's ConfigData) is never a CLI word's
			// value; as a word it would mask what follows "config".
			if f.Secret != Public && f.Type != Document {
				w[strings.ToLower(f.CLIWord())] = true
				w[strings.ToLower(f.Name)] = true
			}
		}
	}
	return w
}

// IsSecretWord reports whether tok is a secret word (the CLI word or name
// of a secret field) or an abbreviation of one, as the CLI accepts any
// unique prefix of a word (Passwor, pa). A shorter word that only looks
// like one masks a value needlessly, which is harmless.
func (r *Registry) IsSecretWord(tok string) bool {
	t := strings.ToLower(tok)
	if t == "" {
		return false
	}
	for w := range r.secretWords {
		if strings.HasPrefix(w, t) {
			return true
		}
	}
	return false
}

// MaskCommandLine returns a CLI command line with the value after each
// secret word (IsSecretWord, abbreviated or not) replaced by ********: a
// word up to the next blank, a double-quoted value up to its closing quote
// (inside quotes a backslash escapes the next character, as the CLI reads
// them); after an unterminated quote, everything. It reads the words as
// the CLI does without knowing its commands, so it serves whatever holds
// a command line that leaves the switch (a command's accounting record),
// on either end.
func (r *Registry) MaskCommandLine(line string) string {
	var b strings.Builder
	maskNext := false
	for i := 0; i < len(line); {
		if c := line[i]; c == ' ' || c == '\t' {
			b.WriteByte(c)
			i++
			continue
		}
		start, end, closed := i, i, true
		if line[i] == '"' {
			closed = false
			for end = i + 1; end < len(line); end++ {
				if line[end] == '\\' {
					end++
					continue
				}
				if line[end] == '"' {
					closed = true
					end++
					break
				}
			}
			end = min(end, len(line))
		} else {
			for end < len(line) && line[end] != ' ' && line[end] != '\t' {
				end++
			}
		}
		word := line[start:end]
		switch {
		case maskNext || !closed:
			b.WriteString("********")
		default:
			b.WriteString(word)
		}
		if !closed {
			return b.String()
		}
		maskNext = line[start] != '"' && r.IsSecretWord(word)
		i = end
	}
	return b.String()
}
