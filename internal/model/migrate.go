package model

import (
	"fmt"
	"slices"
)

// SchemaVersion is the version of the stored form of the declared config
// kinds. Records written before swmgr stored a version are version 0, which
// has the form of version 1. A change of the model that renaming a field
// (Kind.Renamed) or a default (Field.Default) cannot carry, such as a field
// split or a change of unit, raises it and declares a Migration from the
// version before.
const SchemaVersion = 1

// Migration changes an object of one config kind from the form of schema
// version From to that of From+1. It runs over the stored objects at the
// start that raises the version, over the objects a rollback restores from
// a revision record written before, and over the objects of a saved file
// written before, as a restore reads them. Its function gets the object as
// JSON decodes it (numbers as float64), its sealed fields in clear (opened
// in memory only; a transient one, never kept, is absent), and returns
// the new one; an error stops the start (or refuses the rollback or the
// restore), naming the kind, the object and the error.
type Migration struct {
	From    int
	Kind    string
	Doc     string // what changed, for the log
	Migrate func(obj map[string]any) (map[string]any, error)
}

// migrations are the declared migrations, oldest first; none so far
// (version 1 is the first version stored).
var migrations = []Migration{}

// UnversionedSchema is the schema version of what was written before it
// carried one: a revision record without a SchemaVersion, a saved file
// without one (format 1, or format 2 of a swmgr before schema versions
// were written), a store whose meta holds none (version 0). All of them
// predate version 2, and versions 0 and 1 have one form, so they are read
// as version 1; no migration is from version 0.
const UnversionedSchema = 1

// SchemaVersion is the version the registry's kinds are stored in.
func (r *Registry) SchemaVersion() int {
	if r.schemaVersion == 0 {
		return SchemaVersion
	}
	return r.schemaVersion
}

// Migrations returns the registry's migrations, by From then declaration
// order.
func (r *Registry) Migrations() []Migration {
	if r.migrations == nil {
		return migrations
	}
	return r.migrations
}

// WithSchema returns a copy of r at schema version version with the
// migrations ms (a later model, in tests). Each migration's From must be
// below version and its Kind a declared config kind.
func (r *Registry) WithSchema(version int, ms ...Migration) (*Registry, error) {
	c := *r
	c.schemaVersion = version
	c.migrations = slices.Clone(ms)
	for _, m := range ms {
		if m.From < UnversionedSchema || m.From >= version {
			return nil, fmt.Errorf("migration of %s from version %d: migrations are from version %d (0 has its form) up to the schema version, %d", m.Kind, m.From, UnversionedSchema, version)
		}
		if k := r.Lookup(Config, m.Kind); k == nil || k.Name != m.Kind {
			return nil, fmt.Errorf("migration of %s, which is not a declared config kind", m.Kind)
		}
		if m.Migrate == nil {
			return nil, fmt.Errorf("migration of %s from version %d has no function", m.Kind, m.From)
		}
	}
	slices.SortStableFunc(c.migrations, func(a, b Migration) int { return a.From - b.From })
	return &c, nil
}

// MigrationsOf returns the migrations to run over an object of kind
// written at schema version from to give it the registry's form, oldest
// first; none when it is in that form.
func (r *Registry) MigrationsOf(kind string, from int) []Migration {
	var steps []Migration
	for _, m := range r.Migrations() {
		if m.Kind == kind && m.From >= from && m.From < r.SchemaVersion() {
			steps = append(steps, m)
		}
	}
	return steps
}

// Upgrade runs steps (MigrationsOf) over obj, an object as JSON decodes it,
// and returns it in the form of the last one; an error names the
// migration that failed.
func Upgrade(obj map[string]any, steps []Migration) (map[string]any, error) {
	for _, m := range steps {
		var err error
		if obj, err = m.Migrate(obj); err != nil {
			return nil, fmt.Errorf("migration from version %d (%s): %w", m.From, m.Doc, err)
		}
		if obj == nil {
			return nil, fmt.Errorf("migration from version %d (%s) returned no object", m.From, m.Doc)
		}
	}
	return obj, nil
}
