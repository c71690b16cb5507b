package intent

import (
	"encoding/json"
	"fmt"
	"slices"
	"strings"

	"github.com/swmgr/swmgr/internal/model"
)

// Compliance is the difference between the running configuration and a
// document, in Nautobot Golden Config's JSON compliance shape (compliant,
// missing, extra) with swmgr's objects as its units and the objects that
// are in both but differ listed field by field. Secrets are "******".
type Compliance struct {
	Compliant bool `json:"compliant"`
	// Missing are in the document, not running: they would be created.
	Missing []ObjectDiff `json:"missing"`
	// Extra are running, not in the document: they would be deleted (or,
	// a kind whose objects always exist, put back to its defaults: then
	// in Different).
	Extra []ObjectDiff `json:"extra"`
	// Different are in both, with other values.
	Different []ObjectDiff `json:"different"`
}

// ObjectDiff is one object of a Compliance.
type ObjectDiff struct {
	Kind string `json:"kind"`
	Key  string `json:"key"`
	// Object is the object whole (missing: the document's; extra: the
	// running one).
	Object json.RawMessage `json:"object,omitempty"`
	// Fields are the fields that differ (different).
	Fields []FieldDiff `json:"fields,omitempty"`
}

// FieldDiff is one field's values: running now, and intended by the
// document.
type FieldDiff struct {
	Field    string `json:"field"`
	Running  any    `json:"running"`
	Intended any    `json:"intended"`
}

// Compare turns a dry run's changes (of a replace by the document) into
// its Compliance: a create is missing, a delete extra, an update different
// with the fields whose values differ. A secret shows "******" on both
// sides whatever its value: an update whose public fields are all equal
// differs in a secret, and lists the secrets set as differing.
func Compare(diffs []model.Diff) Compliance {
	c := Compliance{Compliant: len(diffs) == 0, Missing: []ObjectDiff{}, Extra: []ObjectDiff{}, Different: []ObjectDiff{}}
	for _, d := range diffs {
		o := ObjectDiff{Kind: d.Kind, Key: d.Key}
		switch d.Op {
		case "create":
			o.Object = d.After
			c.Missing = append(c.Missing, o)
		case "delete":
			o.Object = d.Before
			c.Extra = append(c.Extra, o)
		default:
			o.Fields = fieldDiffs(d.Before, d.After)
			c.Different = append(c.Different, o)
		}
	}
	return c
}

// fieldDiffs are the fields of before and after whose values differ, by
// name; when none does, the secrets either sets ("******").
func fieldDiffs(before, after json.RawMessage) []FieldDiff {
	var b, a map[string]any
	_ = json.Unmarshal(before, &b)
	_ = json.Unmarshal(after, &a)
	names := make([]string, 0, len(a)+len(b))
	for n := range a {
		names = append(names, n)
	}
	for n := range b {
		if _, ok := a[n]; !ok {
			names = append(names, n)
		}
	}
	slices.Sort(names)
	var out, secrets []FieldDiff
	for _, n := range names {
		bv, av := b[n], a[n]
		if bv == model.Redacted || av == model.Redacted {
			secrets = append(secrets, FieldDiff{Field: n, Running: bv, Intended: av})
		}
		if fmt.Sprint(bv) != fmt.Sprint(av) {
			out = append(out, FieldDiff{Field: n, Running: bv, Intended: av})
		}
	}
	if len(out) == 0 {
		return secrets
	}
	return out
}

// Count is how many objects differ.
func (c Compliance) Count() int { return len(c.Missing) + len(c.Extra) + len(c.Different) }

// Lines are the first max differences as one line each (at most maxLen
// bytes): "missing Kind Key", "extra Kind Key", "different Kind Key:
// Field running -> intended, ...".
func (c Compliance) Lines(max, maxLen int) []string {
	var lines []string
	add := func(s string) {
		if len(lines) < max {
			if len(s) > maxLen {
				s = strings.ToValidUTF8(s[:maxLen-3], "") + "..."
			}
			lines = append(lines, s)
		}
	}
	for _, o := range c.Missing {
		add(fmt.Sprintf("missing %s %s", o.Kind, o.Key))
	}
	for _, o := range c.Extra {
		add(fmt.Sprintf("extra %s %s", o.Kind, o.Key))
	}
	for _, o := range c.Different {
		var parts []string
		for _, f := range o.Fields {
			parts = append(parts, fmt.Sprintf("%s %s -> %s", f.Field, show(f.Running), show(f.Intended)))
		}
		add(fmt.Sprintf("different %s %s: %s", o.Kind, o.Key, strings.Join(parts, ", ")))
	}
	return lines
}

// show is a value in a line: JSON, so that strings are quoted and a list
// reads as one.
func show(v any) string {
	b, err := json.Marshal(v)
	if err != nil {
		return fmt.Sprint(v)
	}
	return string(b)
}
