// Package model declares every kind of object swmgr knows, once.
//
// A Kind lists its fields with their types, keys, defaults, allowed values,
// ranges, formats, references, secrecy and aliases. Everything else reads this
// declaration: input parsing and validation (parse.go, validate.go), the
// canonical JSON encoding (encode.go), REST routing in package api, the commit
// engine's reference and derived-object checks, and the generated docs. Adding
// a field or a kind is a change to kinds.go and nothing else.
//
// Objects are flat records held as Object, a map from field name to a value of
// the field's Go type: string, int64, bool or []string.
package model

import (
	"encoding/json"
	"fmt"
	"slices"
	"sort"
	"strconv"
	"strings"
)

// Class says which part of the REST tree serves a kind.
type Class int

const (
	// Config kinds are created, read, updated and deleted under /config.
	Config Class = iota
	// State kinds are read-only under /state.
	State
	// Action kinds are executed under /action.
	Action
)

func (c Class) String() string {
	switch c {
	case Config:
		return "config"
	case State:
		return "state"
	case Action:
		return "action"
	}
	return "unknown"
}

// Type is the JSON type of a field.
type Type int

const (
	String Type = iota
	Int
	Bool
	StringList
	Record     // a JSON object of the field's Sub fields, held as Object
	RecordList // a JSON array of such objects, held as []Object
	// Document is a JSON object of an action's input handed whole to its
	// handler, which reads it (ApplyConfig's ConfigData, a configuration
	// document), held as json.RawMessage. Only actions declare it.
	Document
)

func (t Type) String() string {
	switch t {
	case String:
		return "string"
	case Int:
		return "integer"
	case Bool:
		return "boolean"
	case StringList:
		return "array of string"
	case Record:
		return "object"
	case RecordList:
		return "array of object"
	case Document:
		return "object"
	}
	return "unknown"
}

// Secrecy says how a secret field is kept.
type Secrecy int

const (
	// Public fields are stored and returned as they are.
	Public Secrecy = iota
	// Sealed fields are write-only: stored encrypted with the data
	// directory's key, returned as "".
	Sealed
	// Transient fields are write-only and never stored: they are handed to
	// the backend (a user's password goes to the OS) and forgotten.
	Transient
)

// Range bounds an integer field.
type Range struct{ Min, Max int64 }

// Field declares one field of a kind.
type Field struct {
	Name     string
	Type     Type
	Doc      string
	Key      bool     // identifies the object in by-key operations
	Required bool     // must be given at create (keys without a default always are)
	Default  any      // value when not given at create; nil means the type's zero value
	Enum     []string // allowed values of a string field
	// Names are the names of an integer field's values, Names[v] for v
	// (a BGP session's RFC 4271 state): shows print the name.
	Names []string
	// Metric, on a state field, exports it to Prometheus (see Metric).
	Metric     *Metric
	Range      *Range  // allowed values of an integer field
	MaxLen     int     // maximum length of a string field, 0 for none
	Format     *Format // form of a string field or of each list element (formats.go); nil for none
	Ref        string  // the config kind whose key this field names
	RefImplied string  // a value of Ref that always exists without an object ("default" VRF)
	Secret     Secrecy // Public, Sealed or Transient
	// Text is the class of text a string field holds (TextLine unless
	// declared; every secret is TextSecret): see Text.
	Text       Text
	Aliases    []string // other spellings accepted on input
	ReadOnly   bool     // set by the switch; a client may only repeat the current value
	CreateOnly bool     // may be given at create, never changed by update
	CLI        string   // the CLI's word where FlexSwitch's differs from Name ("router_id")
	CLISwitch  string   // for a two-value enum: the value the bare CLI word sets ("no <word>" sets the other)
	// Discovered says the switch reports the field's value when it finds
	// the object (a port's speed, its media): that value, not Default, is
	// what the object starts from, so a replace that leaves the field out
	// keeps its value instead of resetting it.
	Discovered bool
	// UniqueWithin, when not nil, makes the field's value unique among the
	// objects of its kind that agree on these fields (an interface address
	// within a VRF); an address/prefix compares by its address. The engine
	// checks it on the configuration a commit produces.
	UniqueWithin []string
	// InEffect says the state form shows the value in effect, which may
	// differ from the configured one: where the configuration says "the
	// default" ("", 0) or the switch negotiates (a BGP hold time), the
	// state shows what is used.
	InEffect bool
	// NotYet, when set, says why swmgr cannot make the field real yet
	// ("BFD"): it is accepted at its default, so that clients that send
	// every field keep working, and any other value is a 400 naming it.
	NotYet string
	// Sub declares the fields of a Record or of each element of a
	// RecordList (see record.go).
	Sub []*Field
	// CheckRecord validates relations between the sub-fields of one
	// complete record (an element of a RecordList).
	CheckRecord func(o Object) error
}

// RefTarget returns the kind and store key a reference value names: of
// Ref, or of the kind the value's form picks when the field's format names
// several kinds (an interface: fpPort1 a Port, Loopback1 a LogicalIntf;
// Ref is then the kind most values name).
func (f *Field) RefTarget(value string) (kind, key string) {
	if f.Format != nil && f.Format.Resolve != nil {
		return f.Format.Resolve(value)
	}
	return f.Ref, value
}

// UniqueValue is what UniqueWithin compares: the address of an
// address/prefix, else the value as text.
func (f *Field) UniqueValue(v any) string {
	s := fmt.Sprint(v)
	if f.Format == FormatIPv4CIDR {
		if addr, _, ok := strings.Cut(s, "/"); ok {
			return addr
		}
	}
	return s
}

// Kind declares one kind of object.
type Kind struct {
	Name   string
	Class  Class
	Doc    string
	Fields []*Field
	// Singleton: one object that exists from the first start, changed by
	// PATCH only (a config kind) or always there (a state-only kind). A
	// read finds it whatever key or field values (or none) it gives.
	Singleton  bool
	Discovered bool     // instances come from the backend (front-panel ports)
	StateDoc   string   // what the state form adds
	StateOnly  []*Field // operational fields of the state form, in addition to Fields
	// Answer are the fields of an action's answer beside Result
	// ("Success") and DryRun, for an action that answers more than the
	// forms every action shares (the OpenAPI document's schema of its 200).
	Answer []*Field
	// Check validates relations between fields of a complete object.
	Check func(o Object) error
	// Interface, when set, makes the kind's objects interfaces of the
	// switch, which a field of FormatIntfRef names (interfaces.go).
	Interface *Interface
	// Referable, if set, says whether other objects may refer to o as it
	// is (a port broken out into sub-ports may not carry an address).
	Referable func(o Object) error
	// Children returns the objects that exist because o has its current
	// values (breakout sub-ports of a port). The engine creates and removes
	// them as o changes.
	Children func(o Object) []Object
	// Deletable reports whether an object of a kind that is not created by
	// clients (a discovered port) may still be deleted; nil means no.
	Deletable func(o Object) bool
	// Constraints are rules over several objects that changes of this kind
	// can break (see Constraint); the engine's check phase runs them.
	Constraints []Constraint
	// UpdateHint is what the refusal of an update of a CreateOnly field
	// advises ("": delete the object and create it again).
	UpdateHint string
	// Account marks the kind whose objects are the switch's login
	// accounts (User), and says how they are treated apart (Account).
	Account *Account
	// Derived, on a state kind the service fills, derives its objects from
	// the running configuration (LLDP's state per port).
	Derived *Derivation
	// FeedPolled, on a state kind whose source tells no change by itself
	// (lldpd's neighbours, a bond's LACP partners), puts the changes of its
	// objects on the change feed as `event: state`, found by reading the
	// kind every few seconds (the service's poller).
	FeedPolled bool
	// SavesConfig marks the action that saves the running configuration
	// (the CLI's `write memory`, Ansible's swmgr_save).
	SavesConfig bool
	// RecordsCommands marks the action that takes the accounting record of
	// a command line the CLI ran (the CLI sends each one to it).
	RecordsCommands bool
	// NotLogged: runs of this action change no configuration and are not
	// written to the config log, neither succeeded nor refused (the CLI's
	// command records, which are accounting, not changes).
	NotLogged bool

	// Role is who may write objects of a config kind (zero: operators and
	// admins) or run an action (zero: admins only).
	Role Role
	// Self names the field of an action that names a User: any user may run
	// the action on itself (its own password), whatever Role says.
	Self string
	// DryRunnable says an action can be run with ?dry_run=true and then
	// reports what it would do without doing it.
	DryRunnable bool
	// Source names where a state-only kind's objects come from:
	// SourceBackend (the backend's driver of the kind), SourceService (the
	// service itself) or SourceConfigLog (the config log).
	Source string
	// Renamed maps field names used by earlier versions of swmgr to their
	// current names, so stored records and revisions written before a
	// rename still read (see DecodeStored).
	Renamed map[string]string

	// CLI says how the CLI reaches the kind; nil: the CLI has no command for it.
	CLI *CLICommand
	// Metrics, when set, exports the state fields that declare a Metric,
	// one series per object (see Metrics).
	Metrics *Metrics

	keys    []*Field
	byName  map[string]*Field // exact names and aliases
	byLower map[string]*Field // lower-case names, to suggest the right spelling
}

// Keys returns the key fields in declaration order.
func (k *Kind) Keys() []*Field { return k.keys }

// Field returns the field named name (exactly, or by an alias).
func (k *Kind) Field(name string) *Field { return k.byName[name] }

// StateName is the kind's name in its state form.
func (k *Kind) StateName() string {
	if k.Class == State {
		return k.Name
	}
	return k.Name + "State"
}

// Creatable reports whether clients may POST new objects of the kind.
func (k *Kind) Creatable() bool { return k.Class == Config && !k.Singleton && !k.Discovered }

// API is the lower-case name the config log records.
func (k *Kind) API() string { return strings.ToLower(k.Name) }

// Registry is the set of declared kinds.
type Registry struct {
	kinds       []*Kind
	constraints []Constraint
	byLower     map[Class]map[string]*Kind
	byExact     map[Class]map[string]*Kind // exact spellings, to look up without lower-casing
	secretWords map[string]bool            // see IsSecretWord
	interfaces  *interfaceSet              // the interface kinds (Kind.Interface)
	// schemaVersion and migrations, when set (WithSchema), replace
	// SchemaVersion and the declared migrations.
	schemaVersion int
	migrations    []Migration
}

// SaveAction returns the action that saves the running configuration
// (Kind.SavesConfig), or nil.
func (r *Registry) SaveAction() *Kind {
	for _, k := range r.kinds {
		if k.Class == Action && k.SavesConfig {
			return k
		}
	}
	return nil
}

// AccountKind returns the config kind whose objects are the switch's login
// accounts (Kind.Account), or nil.
func (r *Registry) AccountKind() *Kind {
	for _, k := range r.kinds {
		if k.Class == Config && k.Account != nil {
			return k
		}
	}
	return nil
}

// CommandAction returns the action that takes the accounting record of a
// CLI command line (Kind.RecordsCommands), or nil.
func (r *Registry) CommandAction() *Kind {
	for _, k := range r.kinds {
		if k.Class == Action && k.RecordsCommands {
			return k
		}
	}
	return nil
}

// Account declares a kind of login accounts: a saved configuration holds
// none of them and a restore of one leaves them as they are (their
// passwords are the operating system's, never swmgr's); a reset keeps
// those whose GroupField is the admin group, so the switch keeps an admin
// who can log in; and ShellField set to ShellValue lets a user run a shell
// from the CLI.
type Account struct {
	GroupField string
	ShellField string
	ShellValue string
}

// Derivation derives a state kind's objects from the running
// configuration: Func is given the objects of the kinds From, by kind name.
type Derivation struct {
	From []string
	Func func(cfg map[string][]Object) []Object
}

// NewRegistry indexes kinds and checks the declarations for mistakes that
// would otherwise only show up at run time.
func NewRegistry(kinds ...*Kind) (*Registry, error) {
	r := &Registry{kinds: kinds, byLower: map[Class]map[string]*Kind{Config: {}, State: {}, Action: {}}, byExact: map[Class]map[string]*Kind{Config: {}, State: {}, Action: {}}}
	for _, k := range kinds {
		if err := k.index(); err != nil {
			return nil, err
		}
		name := strings.ToLower(k.Name)
		if k.Class == State {
			// State kinds are named in paths without "State".
			name = strings.TrimSuffix(name, "state")
		}
		if _, dup := r.byLower[k.Class][name]; dup {
			return nil, errorf("kind %s declared twice", k.Name)
		}
		r.byLower[k.Class][name] = k
		exact := k.Name
		if k.Class == State {
			exact = strings.TrimSuffix(exact, "State")
		}
		r.byExact[k.Class][exact] = k
	}
	var err error
	if r.interfaces, err = newInterfaceSet(kinds); err != nil {
		return nil, err
	}
	for _, k := range kinds {
		if err := r.bindFormats(k); err != nil {
			return nil, err
		}
		for _, f := range k.Fields {
			if f.Ref != "" && r.Lookup(Config, f.Ref) == nil {
				return nil, errorf("%s.%s references unknown kind %s", k.Name, f.Name, f.Ref)
			}
			for _, s := range f.Sub {
				if s.Ref != "" && r.Lookup(Config, s.Ref) == nil {
					return nil, errorf("%s.%s.%s references unknown kind %s", k.Name, f.Name, s.Name, s.Ref)
				}
			}
		}
		if err := k.checkDeclaredAccess(); err != nil {
			return nil, err
		}
		for _, c := range k.Constraints {
			if c.Check == nil || len(c.Kinds) == 0 {
				return nil, errorf("%s: constraint %q needs Kinds and Check", k.Name, c.Name)
			}
			r.constraints = append(r.constraints, c)
		}
	}
	if err := r.checkCLI(); err != nil {
		return nil, err
	}
	r.secretWords = secretWords(kinds)
	return r, nil
}

// bindFormats puts the registry's own format in place of a declared format
// that depends on the registry (FormatIntfRef), and refuses an incomplete
// format.
func (r *Registry) bindFormats(k *Kind) error {
	var bind func(path string, fs []*Field) error
	bind = func(path string, fs []*Field) error {
		for _, f := range fs {
			if f.Format != nil {
				if f.Format.bind != nil {
					f.Format = f.Format.bind(f.Format, r)
				}
				if why := f.Format.complete(); why != "" {
					return errorf("%s%s: format %q %s", path, f.Name, f.Format.Name, why)
				}
			}
			if err := bind(path+f.Name+".", f.Sub); err != nil {
				return err
			}
		}
		return nil
	}
	return bind(k.Name+".", append(append([]*Field(nil), k.Fields...), k.StateOnly...))
}

func (k *Kind) index() error {
	k.byName = map[string]*Field{}
	k.byLower = map[string]*Field{}
	k.keys = nil
	for _, list := range [][]*Field{k.Fields, k.StateOnly} {
		for _, f := range list {
			names := append([]string{f.Name}, f.Aliases...)
			for _, n := range names {
				if _, dup := k.byName[n]; dup {
					return errorf("%s: field name %s declared twice", k.Name, n)
				}
				k.byName[n] = f
				k.byLower[strings.ToLower(n)] = f
			}
			if err := f.check(k); err != nil {
				return err
			}
		}
	}
	// State-only fields are output, never input.
	for _, f := range k.StateOnly {
		delete(k.byName, f.Name)
	}
	for _, f := range k.Fields {
		if f.Key {
			k.keys = append(k.keys, f)
		}
	}
	if k.Class == Config && len(k.keys) == 0 {
		return errorf("config kind %s has no key field", k.Name)
	}
	return nil
}

func (f *Field) check(k *Kind) error {
	if err := f.checkTextDecl(k.Name, k.Class == State || slices.Contains(k.StateOnly, f)); err != nil {
		return err
	}
	if f.Default != nil {
		if err := f.checkType(f.Default); err != nil {
			return errorf("%s.%s: default: %v", k.Name, f.Name, err)
		}
	}
	if f.Type == Document && k.Class != Action {
		return errorf("%s.%s: only an action's field may be a Document", k.Name, f.Name)
	}
	if f.Key && f.Type != String && f.Type != Int {
		return errorf("%s.%s: key fields must be strings or integers", k.Name, f.Name)
	}
	if (f.Type == Record || f.Type == RecordList) != (len(f.Sub) > 0) {
		return errorf("%s.%s: a Record or RecordList field, and only such a field, declares Sub fields", k.Name, f.Name)
	}
	for _, s := range f.Sub {
		if s.Key || s.Secret != Public {
			return errorf("%s.%s.%s: a sub-field cannot be a key or a secret", k.Name, f.Name, s.Name)
		}
		if s.Ref != "" && (s.Type != String || f.Type != RecordList) {
			return errorf("%s.%s.%s: a reference sub-field is a string of a RecordList's element", k.Name, f.Name, s.Name)
		}
		if err := s.check(k); err != nil {
			return err
		}
	}
	return nil
}

// Kinds returns every kind in declaration order.
func (r *Registry) Kinds() []*Kind { return r.kinds }

// Constraints returns every declared cross-object constraint.
func (r *Registry) Constraints() []Constraint { return r.constraints }

// Lookup finds a kind of class c by its case-insensitive path name (state kinds
// by their config name, "Port" for PortState).
func (r *Registry) Lookup(c Class, name string) *Kind {
	if k := r.byExact[c][name]; k != nil {
		return k
	}
	return r.byLower[c][strings.ToLower(name)]
}

// Named returns the kind declared as name exactly (a state kind with its
// "State": "ArpEntryState"), whatever its class; nil if there is none.
func (r *Registry) Named(name string) *Kind {
	for _, k := range r.kinds {
		if k.Name == name {
			return k
		}
	}
	return nil
}

// Resolve applies the contract's rule for path names: an exact kind name
// first; otherwise a trailing "s" names the kind for a get-all.
func (r *Registry) Resolve(c Class, name string) (k *Kind, plural bool) {
	if k := r.Lookup(c, name); k != nil {
		return k, false
	}
	if l := len(name); l > 1 && (name[l-1] == 's' || name[l-1] == 'S') {
		if k := r.Lookup(c, name[:l-1]); k != nil {
			return k, true
		}
	}
	return nil, false
}

// Names lists the kinds of class c, sorted, for error messages.
func (r *Registry) Names(c Class) []string {
	var out []string
	for _, k := range r.kinds {
		if k.Class == c {
			out = append(out, k.Name)
		} else if c == State && k.Class == Config {
			out = append(out, k.Name)
		}
	}
	sort.Strings(out)
	return out
}

// Object is one flat record: field name to string, int64, bool or []string.
type Object map[string]any

// Clone returns a copy that shares nothing mutable with o.
func (o Object) Clone() Object {
	c := make(Object, len(o))
	for k, v := range o {
		c[k] = cloneValue(v)
	}
	return c
}

// Str returns a string field, or "".
func (o Object) Str(name string) string { s, _ := o[name].(string); return s }

// Int returns an integer field, or 0.
func (o Object) Int(name string) int64 { n, _ := o[name].(int64); return n }

// Bool returns a boolean field, or false.
func (o Object) Bool(name string) bool { b, _ := o[name].(bool); return b }

// List returns a list field, or nil.
func (o Object) List(name string) []string { l, _ := o[name].([]string); return l }

// Key returns the store key of o: its key field values joined by NUL, an
// integer key in decimal.
func (k *Kind) Key(o Object) string {
	if len(k.keys) == 1 {
		return keyText(k.keys[0], o)
	}
	parts := make([]string, len(k.keys))
	for i, f := range k.keys {
		parts[i] = keyText(f, o)
	}
	return strings.Join(parts, "\x00")
}

// KeyFromText is Key for key values given as text in their canonical
// form (ParseText's, integers in decimal), by field name; ok is false
// when one is missing.
func (k *Kind) KeyFromText(vals map[string]string) (key string, ok bool) {
	if len(k.keys) == 1 {
		key, ok = vals[k.keys[0].Name]
		return key, ok
	}
	parts := make([]string, len(k.keys))
	for i, f := range k.keys {
		if parts[i], ok = vals[f.Name]; !ok {
			return "", false
		}
	}
	return strings.Join(parts, "\x00"), true
}

func keyText(f *Field, o Object) string {
	if f.Type == Int {
		return strconv.FormatInt(o.Int(f.Name), 10)
	}
	return o.Str(f.Name)
}

// KeyObject returns the key fields of a store key as an object, typed as
// declared; ok is false if key does not fit the kind's keys.
func (k *Kind) KeyObject(key string) (Object, bool) {
	parts := strings.Split(key, "\x00")
	if len(parts) != len(k.keys) {
		return nil, false
	}
	o := make(Object, len(parts))
	for i, f := range k.keys {
		if f.Type == Int {
			n, err := strconv.ParseInt(parts[i], 10, 64)
			if err != nil {
				return nil, false
			}
			o[f.Name] = n
			continue
		}
		o[f.Name] = parts[i]
	}
	return o, true
}

// DescribeKey renders a store key for messages: "Vrf=default, NeighborAddress=10.0.0.1".
// An integer key is written as is: "VlanId=100".
func (k *Kind) DescribeKey(key string) string {
	parts := strings.Split(key, "\x00")
	var b strings.Builder
	for i, f := range k.keys {
		if i > 0 {
			b.WriteString(", ")
		}
		b.WriteString(f.Name)
		b.WriteByte('=')
		if i < len(parts) {
			b.WriteString(parts[i])
		}
	}
	return b.String()
}

// Defaults returns a new object holding every field's default value.
func (k *Kind) Defaults() Object {
	o := make(Object, len(k.Fields))
	for _, f := range k.Fields {
		o[f.Name] = f.zero()
	}
	return o
}

// WithDefaults returns k's defaults with given's fields over them: an
// object as given (a body, a stored record read leniently) made whole.
func (k *Kind) WithDefaults(given Object) Object {
	o := k.Defaults()
	for n, v := range given {
		o[n] = v
	}
	return o
}

// KeptByReset reports whether putting an object back to its defaults
// leaves f as it is: its key, a field a client cannot change by update
// (read-only, create-only), a value the switch discovers (a port's speed,
// its media: its default is not what the object starts from) and a
// write-only secret.
func (f *Field) KeptByReset() bool {
	return f.Key || f.ReadOnly || f.CreateOnly || f.Discovered || f.Secret != Public
}

// Reset returns the object that puts o back to its defaults, as an update
// gives it: the default of every field a reset does not keep (KeptByReset),
// and o's value of each field it keeps, where o has one, except a secret's,
// which is left out (an update that leaves a secret out keeps it). Given
// the running object, Reset is the whole object after the reset but for its
// secrets; given only a key, it is an update that resets the object whatever
// it holds.
func (k *Kind) Reset(o Object) Object {
	out := make(Object, len(k.Fields))
	for _, f := range k.Fields {
		if !f.KeptByReset() {
			out[f.Name] = f.zero()
		} else if v, ok := o[f.Name]; ok && f.Secret == Public {
			out[f.Name] = v
		}
	}
	return out
}

func (f *Field) zero() any {
	if f.Default != nil {
		if l, ok := f.Default.([]string); ok {
			return append([]string(nil), l...)
		}
		return f.Default
	}
	switch f.Type {
	case Int:
		return int64(0)
	case Bool:
		return false
	case StringList:
		return []string{}
	case Record:
		return f.recordDefaults()
	case RecordList:
		return []Object{}
	case Document:
		return json.RawMessage(nil)
	}
	return ""
}

// Role is what a user may do, declared on kinds and actions.
type Role int

// Roles, from least to most.
const (
	RoleReader   Role = iota + 1 // any group but operator and admin
	RoleOperator                 // group operator
	RoleAdmin                    // group admin
)

func (r Role) String() string {
	switch r {
	case RoleAdmin:
		return "admin"
	case RoleOperator:
		return "operator"
	case RoleReader:
		return "read-only"
	}
	return "none"
}

// WriteRole is the least role that may write objects of a config kind or
// run an action, as declared (with the defaults Role documents).
func (k *Kind) WriteRole() Role {
	if k.Role != 0 {
		return k.Role
	}
	if k.Class == Action {
		return RoleAdmin
	}
	return RoleOperator
}
