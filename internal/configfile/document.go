// Package configfile reads and writes swmgr's saved configuration: one
// versioned JSON document of every config object in FlexSwitch's
// {"ConfigData": {"<Kind>": [{...}]}} shape, optionally sealed as a whole
// with a passphrase (crypt.go). docs/configfile.md specifies both formats
// for other tools.
//
// Secrets never appear in clear in a plain file: they are sealed with the
// switch's own key (SealedSecrets) and open only on that switch. Inside an
// encrypted file they are written in clear, because the whole file is
// encrypted and the file must restore on another switch.
package configfile

import (
	"bytes"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"maps"
	"slices"
	"time"

	"github.com/swmgr/swmgr/internal/model"
)

// FormatVersion is the newest format this swmgr reads and writes. Format
// 1 is FlexSwitch's and swmgr 1.x's: a bare {"ConfigData": ...} with
// secrets in clear and no header. Format 2 has the header and sealed
// secrets; its objects are in schema version 1, or in the SchemaVersion it
// names. Format 3 is format 2 whose objects are in a schema version above
// 1 (SchemaVersion, required): a swmgr that reads formats up to 2 knows
// only version 1, and refuses it rather than misread it. A file is written
// in format 2 while the schema version is 1 (formatOf).
const FormatVersion = 3

// formatOf is the format of a document whose objects are in schema
// version schemaVersion.
func formatOf(schemaVersion int) int {
	if schemaVersion <= model.UnversionedSchema {
		return 2
	}
	return 3
}

// How secrets are kept in a document.
const (
	SecretsSealed = "sealed" // in SealedSecrets, sealed with the switch's key
	SecretsClear  = "clear"  // in the objects (only inside an encrypted file)
)

// Header describes a document.
type Header struct {
	Format int
	// SchemaVersion is the schema version (model.SchemaVersion) of the
	// objects; a file that names none (format 1, or 2 from a swmgr before
	// files held it) is of version 1 (model.UnversionedSchema). A
	// restore runs the migrations declared since over its objects.
	SchemaVersion int
	SwmgrVersion  string
	Revision      uint64 // the running revision that was saved
	SavedAt       time.Time
	Secrets       string
}

// Sealer seals a plain file's secrets with the switch's own key
// (secrets.Box).
type Sealer interface {
	Seal(plain, ad []byte) []byte
	Unseal(sealed, ad []byte) ([]byte, error)
}

// Encoder builds a document one object at a time, kinds in the order given.
type Encoder struct {
	buf      []byte
	sealer   Sealer
	kind     *model.Kind
	kinds    map[string]bool
	sealed   map[string]map[string]string
	objects  int
	finished bool
}

// NewEncoder starts a document of objects in schema version
// h.SchemaVersion (0: model.SchemaVersion). With a sealer, secrets are
// sealed with it (a plain file); without, they are written in clear and
// the caller must encrypt the whole file.
func NewEncoder(h Header, sealer Sealer) *Encoder {
	e := &Encoder{sealer: sealer, kinds: map[string]bool{}, sealed: map[string]map[string]string{}}
	secrets := SecretsClear
	if sealer != nil {
		secrets = SecretsSealed
	}
	if h.SchemaVersion == 0 {
		h.SchemaVersion = model.SchemaVersion
	}
	// SchemaVersion comes before ConfigData, where a reader needs it.
	e.buf = fmt.Appendf(e.buf, `{"Format":%d,"SchemaVersion":%d`, formatOf(h.SchemaVersion), h.SchemaVersion)
	e.buf = append(e.buf, `,"Generator":"swmgr","SwmgrVersion":`...)
	e.buf = model.AppendJSONString(e.buf, h.SwmgrVersion)
	e.buf = fmt.Appendf(e.buf, `,"Revision":%d,"SavedAt":`, h.Revision)
	e.buf = model.AppendJSONString(e.buf, h.SavedAt.UTC().Format(time.RFC3339Nano))
	e.buf = append(e.buf, `,"Secrets":`...)
	e.buf = model.AppendJSONString(e.buf, secrets)
	e.buf = append(e.buf, `,"ConfigData":{`...)
	return e
}

// Add appends one full object (every field, secrets included) of kind k.
// Objects of one kind must be added together.
func (e *Encoder) Add(k *model.Kind, o model.Object) {
	if e.kind != k {
		if e.kind != nil {
			e.buf = append(e.buf, "],"...)
		}
		if e.kinds[k.Name] {
			panic("configfile: objects of " + k.Name + " added apart")
		}
		e.kinds[k.Name] = true
		e.kind = k
		e.buf = append(e.buf, '\n')
		e.buf = model.AppendJSONString(e.buf, k.Name)
		e.buf = append(e.buf, ":["...)
	} else {
		e.buf = append(e.buf, ',')
	}
	e.buf = append(e.buf, '\n')
	if e.sealer == nil {
		e.buf = k.AppendGivenJSON(e.buf, o)
	} else {
		e.buf = k.AppendJSON(e.buf, o, false) // secrets as ""
		if plain := k.AppendSecretsJSON(nil, o); plain != nil {
			key := k.Key(o)
			m := e.sealed[k.Name]
			if m == nil {
				m = map[string]string{}
				e.sealed[k.Name] = m
			}
			m[key] = base64.StdEncoding.EncodeToString(e.sealer.Seal(plain, secretsAD(k.Name, key)))
		}
	}
	e.objects++
}

// Objects is how many objects were added.
func (e *Encoder) Objects() int { return e.objects }

// Finish ends the document and returns it.
func (e *Encoder) Finish() []byte {
	if e.finished {
		return e.buf
	}
	e.finished = true
	if e.kind != nil {
		e.buf = append(e.buf, ']')
	}
	e.buf = append(e.buf, "\n}"...)
	if len(e.sealed) > 0 {
		sealed, _ := json.Marshal(e.sealed) // maps of strings: cannot fail; keys sorted
		e.buf = append(e.buf, `,"SealedSecrets":`...)
		e.buf = append(e.buf, sealed...)
	}
	e.buf = append(e.buf, "}\n"...)
	return e.buf
}

func secretsAD(kind, key string) []byte { return []byte("swmgr-configfile\x00" + kind + "\x00" + key) }

// Document is a decoded, validated configuration file.
type Document struct {
	Header
	// Objects holds, per kind name, every object of the file: defaults
	// filled in, validated on its own, secrets in clear.
	Objects map[string][]model.Object
	// Unknown lists kind names of the file that are not config kinds here.
	Unknown []string
}

// Count is the number of objects in the document.
func (d *Document) Count() int {
	n := 0
	for _, objs := range d.Objects {
		n += len(objs)
	}
	return n
}

// ErrNewerFormat means the file was written by a newer swmgr.
var ErrNewerFormat = errors.New("the file was saved by a newer swmgr")

// Limits of a document a reader accepts: a restore holds every object at
// once, so these bound what a file (from an archive server that may be
// hostile) can make swmgr hold.
const (
	// MaxFileSize bounds the bytes of a file, encrypted or not (an
	// encrypted one is held whole: its tag is checked before any of it is
	// used).
	MaxFileSize = 64 << 20
	// MaxObjects bounds the objects of a document.
	MaxObjects = 400000
)

// ErrTooLarge refuses a file over MaxFileSize.
var ErrTooLarge = errors.New("the file is too large")

// DecodeOptions say how a document is read.
type DecodeOptions struct {
	// Sealer opens SealedSecrets; nil refuses them.
	Sealer Sealer
	// Encrypted: the document came out of an encrypted file, so its
	// secrets are in clear ("Secrets":"clear"); a plain file's must be
	// sealed ("Secrets":"sealed"), or it is FlexSwitch's format 1.
	Encrypted bool
	// Bounds; 0: MaxFileSize and MaxObjects.
	MaxSize    int64
	MaxObjects int
}

// Decode reads and checks a plain document (decrypt first) from r, one
// object at a time: the file is never held whole, and it stops at
// MaxFileSize bytes or MaxObjects objects. Every object is parsed and
// validated on its own; whether they fit together (references) is the
// commit's to check. A member given twice, at any level, is refused.
func Decode(r io.Reader, reg *model.Registry, o DecodeOptions) (*Document, error) {
	if o.MaxSize == 0 {
		o.MaxSize = MaxFileSize
	}
	if o.MaxObjects == 0 {
		o.MaxObjects = MaxObjects
	}
	lr := &limitReader{r: r, left: o.MaxSize}
	d := &decoder{dec: json.NewDecoder(lr), reg: reg, doc: &Document{Header: Header{SchemaVersion: model.UnversionedSchema}, Objects: map[string][]model.Object{}}, index: map[string]map[string]int{}, maxObjects: o.MaxObjects}
	err := d.top()
	if lr.over {
		return nil, fmt.Errorf("the file is larger than %d bytes, the most a restore reads: %w", o.MaxSize, ErrTooLarge)
	}
	if err != nil {
		return nil, err
	}
	return d.finish(o)
}

// limitReader reads at most left bytes, then fails.
type limitReader struct {
	r    io.Reader
	left int64
	over bool
}

func (l *limitReader) Read(p []byte) (int, error) {
	if l.left <= 0 {
		// At the limit: one more byte tells a file of exactly the limit
		// from a larger one.
		var one [1]byte
		for {
			m, err := l.r.Read(one[:])
			if m > 0 {
				l.over = true
				return 0, ErrTooLarge
			}
			if err != nil {
				return 0, err
			}
		}
	}
	if int64(len(p)) > l.left {
		p = p[:l.left]
	}
	n, err := l.r.Read(p)
	l.left -= int64(n)
	return n, err
}

type decoder struct {
	dec    *json.Decoder
	reg    *model.Registry
	doc    *Document
	format *int
	// schemaGiven: the document names its SchemaVersion (doc.SchemaVersion).
	schemaGiven bool
	// older holds, per kind name, the objects of a kind with migrations
	// to run (their secrets may be sealed later in the file), as given.
	older   map[string][]json.RawMessage
	secrets string
	sealed  map[string]map[string]string
	index   map[string]map[string]int // kind -> key -> index in doc.Objects
	objects int
	// maxObjects bounds objects.
	maxObjects int
	// configSeen: the document has ConfigData.
	configSeen bool
}

func (d *decoder) notJSON(err error) error {
	return fmt.Errorf("the file is not a configuration document (JSON): %w", err)
}

// open reads the '{' of an object (what names what is expected).
func (d *decoder) open(what string) error {
	tok, err := d.dec.Token()
	if err != nil {
		return d.notJSON(err)
	}
	if delim, ok := tok.(json.Delim); !ok || delim != '{' {
		return fmt.Errorf("%s must be a JSON object", what)
	}
	return nil
}

// member reads the next member's name of an object, checking it is not a
// repeat; ok is false at the object's end (its '}' read).
func (d *decoder) member(where string, seen map[string]bool) (name string, ok bool, err error) {
	if !d.dec.More() {
		if _, err := d.dec.Token(); err != nil {
			return "", false, d.notJSON(err)
		}
		return "", false, nil
	}
	tok, err := d.dec.Token()
	if err != nil {
		return "", false, d.notJSON(err)
	}
	name = tok.(string) // inside an object the decoder yields string names
	if seen[name] {
		return "", false, fmt.Errorf("%s%s is given twice", where, name)
	}
	seen[name] = true
	return name, true, nil
}

func (d *decoder) value(where string, v any) error {
	if err := d.dec.Decode(v); err != nil {
		return fmt.Errorf("%s: %w", where, err)
	}
	return nil
}

// skip reads past one value without keeping it.
func (d *decoder) skip() error {
	depth := 0
	for {
		tok, err := d.dec.Token()
		if err != nil {
			return d.notJSON(err)
		}
		switch tok {
		case json.Delim('{'), json.Delim('['):
			depth++
		case json.Delim('}'), json.Delim(']'):
			depth--
		}
		if depth == 0 {
			return nil
		}
	}
}

func (d *decoder) top() error {
	if err := d.open("the document"); err != nil {
		return err
	}
	seen := map[string]bool{}
	for {
		name, ok, err := d.member("", seen)
		if err != nil || !ok {
			if err == nil {
				if _, terr := d.dec.Token(); terr != io.EOF {
					return errors.New("the file is not a configuration document: data after the document's object")
				}
			}
			return err
		}
		switch name {
		case "Format":
			d.format = new(int)
			err = d.value(name, d.format)
		case "Secrets":
			err = d.value(name, &d.secrets)
		case "SchemaVersion":
			err = d.schemaVersion()
		case "SwmgrVersion":
			err = d.value(name, &d.doc.SwmgrVersion)
		case "Revision":
			err = d.value(name, &d.doc.Revision)
		case "SavedAt":
			var at string
			if err = d.value(name, &at); err == nil {
				d.doc.SavedAt, _ = time.Parse(time.RFC3339Nano, at)
			}
		case "ConfigData":
			err = d.configData()
		case "SealedSecrets":
			err = d.sealedSecrets()
		default: // Generator, and what other tools may add
			err = d.skip()
		}
		if err != nil {
			return err
		}
	}
}

// schemaVersion reads SchemaVersion, which must come before ConfigData: the
// objects are read as they come, in the form it names.
func (d *decoder) schemaVersion() error {
	if d.configSeen {
		return errors.New("SchemaVersion comes after ConfigData; it must come before: the objects are read in the form it names")
	}
	v := &d.doc.SchemaVersion
	if err := d.value("SchemaVersion", v); err != nil {
		return err
	}
	d.schemaGiven = true
	switch {
	case *v > d.reg.SchemaVersion():
		return fmt.Errorf("%w (its objects are of schema version %d; this one knows versions up to %d)", ErrNewerFormat, *v, d.reg.SchemaVersion())
	case *v < 0:
		return fmt.Errorf("SchemaVersion %d is not a version", *v)
	}
	*v = max(*v, model.UnversionedSchema)
	return nil
}

func (d *decoder) configData() error {
	if err := d.open("ConfigData"); err != nil {
		return err
	}
	d.configSeen = true
	seen := map[string]bool{}
	for {
		name, ok, err := d.member("ConfigData.", seen)
		if err != nil || !ok {
			return err
		}
		k := d.reg.Lookup(model.Config, name)
		if k == nil {
			d.doc.Unknown = append(d.doc.Unknown, name)
			if err := d.skip(); err != nil {
				return err
			}
			continue
		}
		if err := d.kind(k); err != nil {
			return err
		}
	}
}

// kind reads the list of objects of k, one object at a time.
func (d *decoder) kind(k *model.Kind) error {
	tok, err := d.dec.Token()
	if err != nil {
		return d.notJSON(err)
	}
	if delim, ok := tok.(json.Delim); !ok || delim != '[' {
		return fmt.Errorf("ConfigData.%s must be a list of objects", k.Name)
	}
	if steps := d.reg.MigrationsOf(k.Name, d.doc.SchemaVersion); len(steps) > 0 {
		return d.olderKind(k)
	}
	keys := d.index[k.Name]
	if keys == nil {
		keys = map[string]int{}
		d.index[k.Name] = keys
	}
	objs := d.doc.Objects[k.Name]
	var raw json.RawMessage
	for i := 0; d.dec.More(); i++ {
		if d.objects++; d.objects > d.maxObjects {
			return fmt.Errorf("the file holds more than %d objects, the most a restore takes", d.maxObjects)
		}
		raw = raw[:0]
		if err := d.dec.Decode(&raw); err != nil {
			return d.notJSON(err)
		}
		o, err := decodeObject(k, raw)
		if err != nil {
			return fmt.Errorf("ConfigData.%s[%d]: %w", k.Name, i, err)
		}
		key := k.Key(o)
		if _, dup := keys[key]; dup {
			return fmt.Errorf("ConfigData.%s[%d]: %s %s is given twice", k.Name, i, k.Name, k.DescribeKey(key))
		}
		keys[key] = len(objs)
		objs = append(objs, o)
	}
	if _, err := d.dec.Token(); err != nil { // ']'
		return d.notJSON(err)
	}
	d.doc.Objects[k.Name] = objs
	return nil
}

// olderKind reads the list of objects of k, which has migrations to run,
// keeping each as given: they are migrated and parsed once the whole
// document (their sealed secrets) is read (upgradeOlder).
func (d *decoder) olderKind(k *model.Kind) error {
	var objs []json.RawMessage
	for d.dec.More() {
		if d.objects++; d.objects > d.maxObjects {
			return fmt.Errorf("the file holds more than %d objects, the most a restore takes", d.maxObjects)
		}
		var raw json.RawMessage
		if err := d.dec.Decode(&raw); err != nil {
			return d.notJSON(err)
		}
		objs = append(objs, raw)
	}
	if _, err := d.dec.Token(); err != nil { // ']'
		return d.notJSON(err)
	}
	if d.older == nil {
		d.older = map[string][]json.RawMessage{}
	}
	d.older[k.Name] = objs
	return nil
}

// upgradeOlder migrates and parses the objects olderKind kept: each, with
// its sealed secrets opened (in memory only), goes through the migrations
// of its kind from the document's schema version, then is parsed and
// checked as an object in the current form is.
func (d *decoder) upgradeOlder(o DecodeOptions, sealedDoc bool) error {
	for _, name := range slices.Sorted(maps.Keys(d.older)) {
		k := d.reg.Lookup(model.Config, name)
		steps := d.reg.MigrationsOf(name, d.doc.SchemaVersion)
		keys := map[string]int{}
		d.index[name] = keys
		var objs []model.Object
		for i, raw := range d.older[name] {
			where := fmt.Sprintf("ConfigData.%s[%d]", name, i)
			obj, err := d.olderObject(k, raw, sealedDoc, o.Sealer)
			if err == nil {
				obj, err = model.Upgrade(obj, steps)
			}
			var parsed model.Object
			if err == nil {
				raw, err = json.Marshal(obj)
			}
			if err == nil {
				parsed, err = decodeObject(k, raw)
			}
			if err != nil {
				return fmt.Errorf("%s, migrated from schema version %d: %w", where, d.doc.SchemaVersion, err)
			}
			key := k.Key(parsed)
			if _, dup := keys[key]; dup {
				return fmt.Errorf("%s: %s %s is given twice", where, name, k.DescribeKey(key))
			}
			keys[key] = len(objs)
			objs = append(objs, parsed)
		}
		d.doc.Objects[name] = objs
	}
	return nil
}

// olderObject is one object of k as the file gives it, as JSON decodes it,
// with its sealed secrets (SealedSecrets, under the key its fields make
// before the migrations) opened into it.
func (d *decoder) olderObject(k *model.Kind, raw json.RawMessage, sealedDoc bool, sealer Sealer) (map[string]any, error) {
	if bytes.Equal(bytes.TrimSpace(raw), []byte("null")) {
		return nil, errors.New("not an object")
	}
	if _, err := model.DecodeBody(raw); err != nil { // a field given twice is refused
		return nil, err
	}
	var obj map[string]any
	if err := json.Unmarshal(raw, &obj); err != nil {
		return nil, err
	}
	if !sealedDoc {
		return obj, nil
	}
	for _, f := range k.Fields {
		if s, _ := obj[f.Name].(string); f.Secret == model.Sealed && s != "" {
			return nil, fmt.Errorf("%s is in clear in a document whose secrets are sealed; a plain file keeps secrets only in SealedSecrets", f.Name)
		}
	}
	given, err := k.DecodeStored(raw)
	if err != nil {
		return nil, err
	}
	key := k.Key(k.WithDefaults(given))
	sealed, ok := d.sealed[k.Name][key]
	if !ok {
		return obj, nil
	}
	delete(d.sealed[k.Name], key) // taken here, not again in finish
	if sealed == "" {
		return obj, nil
	}
	sec, err := unsealSecrets(k, key, sealed, sealer)
	if err != nil {
		return nil, err
	}
	for n, v := range sec {
		obj[n] = v
	}
	return obj, nil
}

// sealedSecrets reads SealedSecrets: kind -> key -> base64.
func (d *decoder) sealedSecrets() error {
	if err := d.open("SealedSecrets"); err != nil {
		return err
	}
	d.sealed = map[string]map[string]string{}
	kinds := map[string]bool{}
	for {
		kind, ok, err := d.member("SealedSecrets.", kinds)
		if err != nil || !ok {
			return err
		}
		if err := d.open("SealedSecrets." + kind); err != nil {
			return err
		}
		m := map[string]string{}
		keys := map[string]bool{}
		for {
			key, ok, err := d.member("SealedSecrets."+kind+": a key ", keys)
			if err != nil {
				return err
			}
			if !ok {
				break
			}
			var v string
			if err := d.value("SealedSecrets."+kind, &v); err != nil {
				return err
			}
			m[key] = v
		}
		d.sealed[kind] = m
	}
}

// finish checks the header and the secrets once the whole document is read
// (a hostile file may put its members in any order), opens the sealed
// secrets and validates every object.
func (d *decoder) finish(o DecodeOptions) (*Document, error) {
	doc := d.doc
	switch {
	case d.format == nil:
		doc.Format = 1
		doc.Secrets = SecretsClear
		if d.sealed != nil {
			return nil, errors.New("a format 1 document has no SealedSecrets; give the Format")
		}
	case *d.format == 2 || *d.format == 3:
		doc.Format = *d.format
		doc.Secrets = d.secrets
		if *d.format == 3 && !d.schemaGiven {
			return nil, errors.New("a format 3 document names its SchemaVersion")
		}
		switch {
		case d.secrets != SecretsClear && d.secrets != SecretsSealed:
			return nil, fmt.Errorf("the document's Secrets is %q; want %q or %q", d.secrets, SecretsSealed, SecretsClear)
		case d.secrets == SecretsClear && !o.Encrypted:
			return nil, errors.New(`"Secrets":"clear" is refused in a file that is not encrypted: swmgr writes secrets in clear only inside an encrypted file (SaveConfig with Nonce and Passphrase); a plain file's are sealed`)
		case d.secrets == SecretsSealed && o.Encrypted:
			return nil, errors.New(`"Secrets":"sealed" inside an encrypted file: swmgr writes an encrypted file's secrets in clear ("Secrets":"clear")`)
		}
	case *d.format > FormatVersion:
		return nil, fmt.Errorf("%w (format %d; this one reads formats 1 to %d)", ErrNewerFormat, *d.format, FormatVersion)
	default:
		return nil, fmt.Errorf("unknown format version %d (this swmgr reads formats 1 to %d)", *d.format, FormatVersion)
	}
	if !d.configSeen {
		return nil, errors.New("the document has no ConfigData")
	}
	sealedDoc := doc.Format >= 2 && doc.Secrets == SecretsSealed
	for _, name := range slices.Sorted(maps.Keys(doc.Objects)) {
		k := d.reg.Lookup(model.Config, name)
		for i, obj := range doc.Objects[name] {
			if sealedDoc {
				for _, f := range k.Fields {
					if f.Secret == model.Sealed && obj.Str(f.Name) != "" {
						return nil, fmt.Errorf("ConfigData.%s[%d]: %s is in clear in a document whose secrets are sealed; a plain file keeps secrets only in SealedSecrets", name, i, f.Name)
					}
				}
			}
		}
	}
	// The objects of an older form take their secrets here, before their
	// migrations run; each one's entry of SealedSecrets is then consumed.
	if err := d.upgradeOlder(o, sealedDoc); err != nil {
		return nil, err
	}
	for name, m := range d.sealed {
		k := d.reg.Lookup(model.Config, name)
		for key, sealed := range m {
			i, ok := d.index[name][key]
			if _, older := d.older[name]; k == nil || !ok || older {
				return nil, fmt.Errorf("SealedSecrets.%s has secrets of an object the file does not hold", name)
			}
			if sealed == "" {
				continue
			}
			if err := openSecrets(k, key, doc.Objects[name][i], sealed, o.Sealer); err != nil {
				return nil, fmt.Errorf("ConfigData.%s[%d]: %w", name, i, err)
			}
		}
	}
	for _, name := range slices.Sorted(maps.Keys(doc.Objects)) {
		k := d.reg.Lookup(model.Config, name)
		_, older := d.older[name]
		for i, obj := range doc.Objects[name] {
			if err := k.Validate(obj); err != nil && older {
				return nil, fmt.Errorf("ConfigData.%s[%d], migrated from schema version %d: %w", name, i, doc.SchemaVersion, err)
			} else if err != nil {
				return nil, fmt.Errorf("ConfigData.%s[%d]: %w", name, i, err)
			}
		}
	}
	return doc, nil
}

func decodeObject(k *model.Kind, raw json.RawMessage) (model.Object, error) {
	if bytes.Equal(bytes.TrimSpace(raw), []byte("null")) {
		return nil, errors.New("not an object")
	}
	body, err := model.DecodeBody(raw) // a field given twice is refused
	if err != nil {
		return nil, err
	}
	given, err := k.Parse(body)
	if err != nil {
		return nil, err
	}
	return k.WithDefaults(given), nil
}

func openSecrets(k *model.Kind, key string, o model.Object, sealed string, sealer Sealer) error {
	sec, err := unsealSecrets(k, key, sealed, sealer)
	if err != nil {
		return err
	}
	for n, v := range sec {
		f := k.Field(n)
		if f == nil || f.Secret != model.Sealed {
			return fmt.Errorf("its sealed secrets name %q, which is not a secret field of %s", n, k.Name)
		}
		o[f.Name] = v
	}
	return nil
}

// unsealSecrets opens the sealed secrets of object key of k, by field name.
func unsealSecrets(k *model.Kind, key string, sealed string, sealer Sealer) (map[string]string, error) {
	if sealer == nil {
		return nil, errors.New("its secrets are sealed with a switch's key; only that switch can restore it (save with Nonce and Passphrase to move a configuration between switches)")
	}
	raw, err := base64.StdEncoding.DecodeString(sealed)
	if err != nil {
		return nil, fmt.Errorf("its sealed secrets are not base64: %w", err)
	}
	plain, err := sealer.Unseal(raw, secretsAD(k.Name, key))
	if err != nil {
		return nil, errors.New("its secrets were sealed by another switch (or changed) and cannot be opened here; save with Nonce and Passphrase to move a configuration between switches")
	}
	var sec map[string]string
	if err := json.Unmarshal(plain, &sec); err != nil {
		return nil, fmt.Errorf("its sealed secrets: %w", err)
	}
	return sec, nil
}
