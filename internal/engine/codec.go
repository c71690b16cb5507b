package engine

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/json"
	"fmt"
	"time"

	"github.com/google/uuid"

	"github.com/swmgr/swmgr/internal/model"
	"github.com/swmgr/swmgr/internal/store"
)

// decode rebuilds the full object of a record, secrets included.
func (e *Engine) decode(k *model.Kind, rec store.Record) (model.Object, error) {
	given, err := k.DecodeStored(rec.Public)
	if err != nil {
		return nil, fmt.Errorf("stored %s %q: %w", k.Name, rec.Key, err)
	}
	obj := k.Defaults() // fields added to the model since the record was written
	for n, v := range given {
		obj[n] = v
	}
	if len(rec.Sealed) > 0 {
		plain, err := e.box.Unseal(rec.Sealed, sealAD(k, rec.ID))
		if err != nil {
			return nil, fmt.Errorf("stored %s %q: cannot open its secrets (is secret.key the one they were sealed with?): %w", k.Name, rec.Key, err)
		}
		var sec map[string]string
		if err := json.Unmarshal(plain, &sec); err != nil {
			return nil, fmt.Errorf("stored %s %q: secrets: %w", k.Name, rec.Key, err)
		}
		for n, v := range sec {
			if f := k.Field(n); f != nil && f.Secret == model.Sealed {
				obj[f.Name] = v
			}
		}
	}
	return obj, nil
}

// seal encrypts the sealed fields of o for storage; nil when none is set.
func (e *Engine) seal(k *model.Kind, id uuid.UUID, o model.Object) []byte {
	plain := k.AppendSecretsJSON(nil, o)
	if plain == nil {
		return nil
	}
	return e.box.Seal(plain, sealAD(k, id))
}

func sealAD(k *model.Kind, id uuid.UUID) []byte { return append([]byte(k.Name+"\x00"), id[:]...) }

func nowString() string { return time.Now().UTC().Round(0).String() }

func parseUUID(s string) (uuid.UUID, error) {
	id, err := uuid.Parse(s)
	if err != nil {
		return uuid.Nil, fmt.Errorf("bad ObjectId %q: %w", s, err)
	}
	return id, nil
}

// metaSchema holds the schema the stored records were last written in: a
// digest of every kind's fields, so any change of the model is seen.
const metaSchema = "schema"

// schema is the digest of the model's declared kinds and fields.
func (e *Engine) schema() []byte {
	h := sha256.New()
	for _, k := range e.reg.Kinds() {
		if k.Class != model.Config {
			continue
		}
		fmt.Fprintf(h, "%s\x00", k.Name)
		for _, f := range k.Fields {
			fmt.Fprintf(h, "%s %d %v\x00", f.Name, f.Type, f.Key)
		}
	}
	return h.Sum(nil)
}

// migrate runs at start: when the model changed since the records were
// written (a field added, renamed, removed or retyped, a key field added),
// every stored object is read with the lenient decoder and written back in
// the current form and under the key it now has, keeping its ObjectId and
// creation order, in one transaction, and the new schema is recorded. Revision records and
// staged edits are left as they are: they are always read leniently.
func (e *Engine) migrate(ctx context.Context) error {
	want := e.schema()
	var have []byte
	if err := e.store.View(func(tx store.Txn) error { have = append(have, tx.Meta(metaSchema)...); return nil }); err != nil {
		return err
	}
	if bytes.Equal(have, want) {
		return nil
	}
	n := 0
	err := e.submit(ctx, &job{ctx: ctx, req: Request{DuringConfirm: true, AfterWrite: func(tx store.Txn) {
		for _, k := range e.reg.Kinds() {
			if k.Class != model.Config {
				continue
			}
			type rewrite struct {
				rec    store.Record
				oldKey string
				refs   []store.Ref
			}
			var recs []rewrite
			tx.List(k.Name, 0, int(^uint(0)>>1), func(rec store.Record) error {
				given, err := k.DecodeStored(rec.Public)
				if err != nil {
					return nil
				}
				obj := k.Defaults()
				for f, v := range given {
					obj[f] = v
				}
				pub := k.AppendJSON(nil, obj, false)
				// A key field added since (BGPv4Neighbor's IntfRef) moves
				// the object to the key its fields now make.
				key := k.Key(obj)
				if !bytes.Equal(pub, rec.Public) || key != rec.Key {
					old := rec.Key
					rec.Key, rec.Public, rec.Sealed = key, pub, append([]byte(nil), rec.Sealed...)
					recs = append(recs, rewrite{rec, old, refsOf(k, obj)})
				}
				return nil
			})
			for i := range recs {
				r := recs[i]
				if r.oldKey != r.rec.Key {
					must(tx.Rekey(k.Name, r.oldKey, r.rec.Key, r.refs))
				}
				must(tx.Put(&r.rec, r.refs, r.refs))
				n++
			}
		}
		tx.SetMeta(metaSchema, want)
	}}})
	if err == nil && n > 0 {
		e.log.Info("migrated stored records to the current model", "records", n)
	}
	return err
}

func must(err error) {
	if err != nil {
		panic(err)
	}
}
