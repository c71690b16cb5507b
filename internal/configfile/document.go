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
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"sort"
	"time"

	"github.com/swmgr/swmgr/internal/model"
)

// FormatVersion is the version of the documents this swmgr writes. Format
// 1 is FlexSwitch's and swmgr 1.x's: a bare {"ConfigData": ...} with
// secrets in clear and no header; it is still read.
const FormatVersion = 2

// How secrets are kept in a document.
const (
	SecretsSealed = "sealed" // in SealedSecrets, sealed with the switch's key
	SecretsClear  = "clear"  // in the objects (only inside an encrypted file)
)

// Header describes a document.
type Header struct {
	Format       int
	SwmgrVersion string
	Revision     uint64 // the running revision that was saved
	SavedAt      time.Time
	Secrets      string
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

// NewEncoder starts a document. With a sealer, secrets are sealed with it
// (a plain file); without, they are written in clear and the caller must
// encrypt the whole file.
func NewEncoder(h Header, sealer Sealer) *Encoder {
	e := &Encoder{sealer: sealer, kinds: map[string]bool{}, sealed: map[string]map[string]string{}}
	secrets := SecretsClear
	if sealer != nil {
		secrets = SecretsSealed
	}
	e.buf = append(e.buf, `{"Format":`...)
	e.buf = fmt.Appendf(e.buf, "%d", FormatVersion)
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

// fileV2 is every format's top level; format 1 has only ConfigData.
type fileV2 struct {
	Format        *int
	Generator     string
	SwmgrVersion  string
	Revision      uint64
	SavedAt       string
	Secrets       string
	ConfigData    map[string][]model.Body
	SealedSecrets map[string]map[string]string
}

// Decode parses and checks a plain document (decrypt first). Every object
// is parsed and validated on its own; whether they fit together (references)
// is the commit's to check. sealer opens SealedSecrets; nil refuses them.
func Decode(data []byte, reg *model.Registry, sealer Sealer) (*Document, error) {
	var f fileV2
	if err := json.Unmarshal(data, &f); err != nil {
		return nil, fmt.Errorf("the file is not a configuration document (JSON): %w", err)
	}
	doc := &Document{Objects: map[string][]model.Object{}}
	switch {
	case f.Format == nil:
		doc.Format = 1
		doc.Secrets = SecretsClear
		if f.SealedSecrets != nil {
			return nil, errors.New("a format 1 document has no SealedSecrets; give the Format")
		}
	case *f.Format == 2:
		doc.Format = 2
		doc.SwmgrVersion, doc.Revision, doc.Secrets = f.SwmgrVersion, f.Revision, f.Secrets
		if t, err := time.Parse(time.RFC3339Nano, f.SavedAt); err == nil {
			doc.SavedAt = t
		}
		if f.Secrets != SecretsClear && f.Secrets != SecretsSealed {
			return nil, fmt.Errorf("Secrets is %q; want %q or %q", f.Secrets, SecretsSealed, SecretsClear)
		}
	case *f.Format > FormatVersion:
		return nil, fmt.Errorf("%w (format %d; this one reads formats 1 to %d)", ErrNewerFormat, *f.Format, FormatVersion)
	default:
		return nil, fmt.Errorf("unknown format version %d (this swmgr reads formats 1 to %d)", *f.Format, FormatVersion)
	}
	if f.ConfigData == nil {
		return nil, errors.New("the document has no ConfigData")
	}
	names := make([]string, 0, len(f.ConfigData))
	for name := range f.ConfigData {
		names = append(names, name)
	}
	sort.Strings(names)
	for _, name := range names {
		k := reg.Lookup(model.Config, name)
		if k == nil {
			doc.Unknown = append(doc.Unknown, name)
			continue
		}
		raws := f.ConfigData[name]
		objs := make([]model.Object, 0, len(raws))
		seen := make(map[string]bool, len(raws))
		for i, raw := range raws {
			if raw == nil {
				return nil, fmt.Errorf("ConfigData.%s[%d]: not an object", name, i)
			}
			raws[i] = nil // 100,000 objects: keep one form at a time
			o, err := decodeObject(k, raw)
			if err != nil {
				return nil, fmt.Errorf("ConfigData.%s[%d]: %w", name, i, err)
			}
			key := k.Key(o)
			if seen[key] {
				return nil, fmt.Errorf("ConfigData.%s[%d]: %s %s is given twice", name, i, name, k.DescribeKey(key))
			}
			seen[key] = true
			if sealed := f.SealedSecrets[name][key]; sealed != "" {
				if err := openSecrets(k, key, o, sealed, sealer); err != nil {
					return nil, fmt.Errorf("ConfigData.%s[%d]: %w", name, i, err)
				}
			}
			if err := k.Validate(o); err != nil {
				return nil, fmt.Errorf("ConfigData.%s[%d]: %w", name, i, err)
			}
			objs = append(objs, o)
		}
		doc.Objects[k.Name] = objs
	}
	for name, m := range f.SealedSecrets {
		k := reg.Lookup(model.Config, name)
		for key := range m {
			if k == nil || !containsKey(k, doc.Objects[name], key) {
				return nil, fmt.Errorf("SealedSecrets.%s has secrets of an object the file does not hold", name)
			}
		}
	}
	return doc, nil
}

func containsKey(k *model.Kind, objs []model.Object, key string) bool {
	for _, o := range objs {
		if k.Key(o) == key {
			return true
		}
	}
	return false
}

func decodeObject(k *model.Kind, body model.Body) (model.Object, error) {
	given, err := k.Parse(body)
	if err != nil {
		return nil, err
	}
	o := k.Defaults()
	for n, v := range given {
		o[n] = v
	}
	return o, nil
}

func openSecrets(k *model.Kind, key string, o model.Object, sealed string, sealer Sealer) error {
	if sealer == nil {
		return errors.New("its secrets are sealed with a switch's key; only that switch can restore it (save with Nonce and Passphrase to move a configuration between switches)")
	}
	raw, err := base64.StdEncoding.DecodeString(sealed)
	if err != nil {
		return fmt.Errorf("its sealed secrets are not base64: %w", err)
	}
	plain, err := sealer.Unseal(raw, secretsAD(k.Name, key))
	if err != nil {
		return errors.New("its secrets were sealed by another switch (or changed) and cannot be opened here; save with Nonce and Passphrase to move a configuration between switches")
	}
	var sec map[string]string
	if err := json.Unmarshal(plain, &sec); err != nil {
		return fmt.Errorf("its sealed secrets: %w", err)
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
