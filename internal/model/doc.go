package model

import (
	"fmt"
	"strings"
)

// Markdown renders the reference of every kind from the declarations. The
// file docs/objects.md is this output; a test keeps the two equal.
func (r *Registry) Markdown() string {
	var b strings.Builder
	b.WriteString("# swmgr objects\n\n")
	b.WriteString("Generated from `internal/model/kinds.go` by `swmgr docs`; do not edit by hand.\n\n")
	b.WriteString("Paths: config kinds under `/public/v1/config/<Kind>`, their state forms under `/public/v1/state/<Kind>`, actions under `/public/v1/action/<Action>`. Names in paths are case-insensitive. See `docs/api.md` for status codes, errors and paging.\n\n")
	b.WriteString("Text: every string (and each element of a list, and each string of a nested object) is one line of printable characters: no control characters (newline, tab, NUL, ESC, U+0085, ...), format characters (U+200B, U+202E, ...) or line separators (U+2028, U+2029); a value that holds one is refused with 400 `invalid_value` naming the character. A field marked *name* holds " + strings.TrimPrefix(TextName.Rule(), "a name: ") + ".\n\n")
	for _, c := range []Class{Config, State, Action} {
		for _, k := range r.kinds {
			if k.Class == c {
				writeKind(&b, k, r)
			}
		}
	}
	return b.String()
}

func writeKind(b *strings.Builder, k *Kind, r *Registry) {
	fmt.Fprintf(b, "## %s (%s)\n\n%s\n\n", k.Name, k.Class, k.Doc)
	switch {
	case k.Class == Action:
		fmt.Fprintf(b, "`POST /public/v1/action/%s`. Who: %s.", k.Name, who(k))
		if k.DryRunnable {
			b.WriteString(" `?dry_run=true` reports what it would do.")
		} else {
			b.WriteString(" `?dry_run=true` only checks the fields and who may run it.")
		}
		b.WriteString("\n\n")
	case k.Class == State && k.Field("SeqNum") != nil:
		fmt.Fprintf(b, "`GET /public/v1/state/%ss` (list, oldest first), `GET /public/v1/state/%s?SeqNum=N` (one entry).\n\n", strings.TrimSuffix(k.Name, "State"), strings.TrimSuffix(k.Name, "State"))
	case k.Class == State && k.Singleton:
		fmt.Fprintf(b, "`GET /public/v1/state/%s`: its one object, whatever fields the query or body give.\n\n", strings.TrimSuffix(k.Name, "State"))
	case k.Class == State:
		fmt.Fprintf(b, "`GET /public/v1/state/%ss` (list), `GET /public/v1/state/%s` (the only one, or the one its fields given in the query or body name).\n\n", strings.TrimSuffix(k.Name, "State"), strings.TrimSuffix(k.Name, "State"))
	case k.Singleton:
		b.WriteString("Singleton: exists from the first start; read and changed (PATCH) without a key (a read finds it whatever key value it gives); cannot be created or deleted.\n\n")
	case k.Discovered:
		b.WriteString("Discovered from the switch: read and changed (PATCH); cannot be created or deleted.\n\n")
	default:
		b.WriteString("Operations: create, get by key, get by ObjectId, get all (paged), update by key or ObjectId, delete by key or ObjectId.\n\n")
	}
	if k.Class == State {
		fmt.Fprintf(b, "Source: %s.\n\n", sourceDoc[k.Source])
	}
	if k.Class == Config && k.WriteRole() != RoleOperator {
		fmt.Fprintf(b, "Writes need: %s.\n\n", who(k))
	}
	for _, c := range k.Constraints {
		fmt.Fprintf(b, "Rule across objects: %s.\n\n", c.Name)
	}
	if len(k.Fields) > 0 {
		b.WriteString("| Field | Type | Default | Allowed | Notes |\n|---|---|---|---|---|\n")
		for _, f := range k.Fields {
			writeField(b, f)
		}
		b.WriteString("\n")
	}
	if len(k.StateOnly) > 0 {
		fmt.Fprintf(b, "State form `%s` adds (read-only): ", k.StateName())
		if k.StateDoc != "" {
			b.WriteString(k.StateDoc + " ")
		}
		var names []string
		for _, f := range k.StateOnly {
			typ := f.Type.String()
			if len(f.Sub) > 0 {
				typ += " of " + subSummary(f)
			}
			n := fmt.Sprintf("`%s` (%s)", f.Name, typ)
			if f.Doc != "" {
				n = fmt.Sprintf("`%s` (%s, %s)", f.Name, typ, f.Doc)
			}
			names = append(names, n)
		}
		b.WriteString(strings.Join(names, ", ") + ".\n\n")
	} else if sk := r.Lookup(State, k.Name); k.Class == Config && sk != nil && sk.Class == State {
		fmt.Fprintf(b, "`/public/v1/state/%s` is the state-only kind `%s`, not a state form of these objects.\n\n", k.Name, sk.Name)
	} else if k.Class == Config {
		fmt.Fprintf(b, "State form `%s`: the applied configuration.\n\n", k.StateName())
	}
}

// subSummary renders the sub-fields of a record for one line of text:
// {Sent {Update, Notification}, Received {...}}.
func subSummary(f *Field) string {
	parts := make([]string, len(f.Sub))
	for i, s := range f.Sub {
		parts[i] = s.Name
		if len(s.Sub) > 0 {
			parts[i] += " " + subSummary(s)
		}
	}
	return "{" + strings.Join(parts, ", ") + "}"
}

func writeField(b *strings.Builder, f *Field) { writeFieldAs(b, f, f.Name) }

// writeFieldAs writes the row of f under name, then one row per sub-field
// of a record (Redistribution[].Sources).
func writeFieldAs(b *strings.Builder, f *Field, name string) {
	var notes []string
	if f.Key {
		notes = append(notes, "**key**")
	}
	if f.Required {
		notes = append(notes, "required at create")
	}
	switch f.Secret {
	case Sealed:
		notes = append(notes, "write-only, stored encrypted, read as \"\"")
	case Transient:
		notes = append(notes, "write-only, never stored, read as \"\"")
	}
	if f.ReadOnly {
		notes = append(notes, "set by the switch")
	}
	if f.CreateOnly {
		notes = append(notes, "create only")
	}
	if f.Ref != "" {
		r := "names a " + f.Ref
		if f.Format != nil && f.Format.Resolve != nil {
			r += " or another kind, by the value's form"
		}
		if f.RefImplied != "" {
			r += fmt.Sprintf(" (or %q, which always exists)", f.RefImplied)
		}
		notes = append(notes, r)
	}
	if len(f.Aliases) > 0 {
		notes = append(notes, "also spelt "+strings.Join(f.Aliases, ", "))
	}
	if f.UniqueWithin != nil {
		notes = append(notes, "unique per "+strings.Join(f.UniqueWithin, ", "))
	}
	if f.InEffect {
		notes = append(notes, "the state shows the value in effect")
	}
	if f.NotYet != "" {
		notes = append(notes, "not supported yet ("+f.NotYet+"): only the default is accepted")
	}
	if f.Doc != "" {
		notes = append(notes, f.Doc)
	}
	if f.PortList() {
		notes = append(notes, PortListNote)
	}
	allowed := ""
	switch {
	case len(f.Enum) > 0:
		allowed = strings.Join(f.Enum, ", ")
	case f.Range != nil:
		allowed = fmt.Sprintf("%d..%d", f.Range.Min, f.Range.Max)
	case f.Format != nil:
		allowed = f.Format.Doc
	case f.Text == TextName:
		allowed = "*name*"
	}
	if f.MaxLen > 0 {
		allowed = strings.TrimPrefix(allowed+fmt.Sprintf("; at most %d characters", f.MaxLen), "; ")
	}
	def := ""
	if f.Default != nil {
		def = fmt.Sprintf("`%v`", f.Default)
	}
	fmt.Fprintf(b, "| %s | %s | %s | %s | %s |\n", name, f.Type, def, strings.ReplaceAll(allowed, "|", "\\|"), strings.Join(notes, "; "))
	sep := "."
	if f.Type == RecordList {
		sep = "[]."
	}
	for _, s := range f.Sub {
		writeFieldAs(b, s, name+sep+s.Name)
	}
}

var sourceDoc = map[string]string{
	SourceBackend:   "the backend (its driver for the kind)",
	SourceService:   "the service itself",
	SourceConfigLog: "the config log",
}

// who is, for the docs, who may write objects of k or run it.
func who(k *Kind) string { return k.AccessFor("POST").Who() }
