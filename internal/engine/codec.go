package engine

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"strconv"

	"github.com/google/uuid"

	"github.com/swmgr/swmgr/internal/model"
	"github.com/swmgr/swmgr/internal/store"
)

// decode rebuilds the full object of a record, secrets included.
func (e *Engine) decode(k *model.Kind, rec store.Record) (model.Object, error) {
	sec, err := e.openSecrets(k, rec.ID, rec.Sealed)
	if err != nil {
		return nil, fmt.Errorf("stored %s %q: %w", k.Name, rec.Key, err)
	}
	given, err := upgrade(k, rec.Public, sec, false, nil)
	if err != nil {
		return nil, fmt.Errorf("stored %s %q: %w", k.Name, rec.Key, err)
	}
	return k.WithDefaults(given), nil
}

// openSecrets opens the sealed fields of object id of kind k (a stored
// record's or a revision record's), by field name; nil when none is sealed.
func (e *Engine) openSecrets(k *model.Kind, id uuid.UUID, sealed []byte) (map[string]string, error) {
	if len(sealed) == 0 {
		return nil, nil
	}
	plain, err := e.box.Unseal(sealed, sealAD(k, id))
	if err != nil {
		return nil, fmt.Errorf("cannot open its secrets (is secret.key the one they were sealed with?): %w", err)
	}
	var sec map[string]string
	if err := json.Unmarshal(plain, &sec); err != nil {
		return nil, fmt.Errorf("secrets: %w", err)
	}
	return sec, nil
}

// upgrade reads an object of k from its public JSON and its sealed
// fields' values (secrets, opened in memory only) in the current form: the
// migrations steps (model.Registry.MigrationsOf the version it was written
// in) run over the object as JSON decodes it, secrets in clear, and the
// result is read with the lenient decoder, secrets included, without k's
// defaults. redacted: public is a revision record's diff, whose set
// secrets read "******"; those are dropped before the migrations run,
// which see only the sealed values.
func upgrade(k *model.Kind, public []byte, secrets map[string]string, redacted bool, steps []model.Migration) (model.Object, error) {
	if len(steps) > 0 {
		var obj map[string]any
		if err := json.Unmarshal(public, &obj); err != nil {
			return nil, err
		}
		if obj == nil {
			return nil, errors.New("not an object")
		}
		if redacted {
			for _, f := range k.Fields {
				if f.Secret != model.Public {
					delete(obj, f.Name)
				}
			}
		}
		for n, v := range secrets {
			obj[n] = v
		}
		obj, err := model.Upgrade(obj, steps)
		if err != nil {
			return nil, err
		}
		if public, err = json.Marshal(obj); err != nil {
			return nil, err
		}
		secrets, redacted = nil, false
	}
	given, err := k.DecodeStored(public)
	if err != nil {
		return nil, err
	}
	if redacted {
		for n := range given {
			if f := k.Field(n); f != nil && f.Secret != model.Public {
				delete(given, n) // "******"; the real value is sealed
			}
		}
	}
	for n, v := range secrets {
		if f := k.Field(n); f != nil && f.Secret == model.Sealed {
			given[f.Name] = v
		}
	}
	return given, nil
}

// eachRecord calls fn with every stored record of kind in tx, in creation
// order; fn's error stops the walk and is returned.
func eachRecord(tx store.Txn, kind string, fn func(rec store.Record) error) error {
	_, _, err := tx.List(kind, 0, math.MaxInt, fn)
	return err
}

// eachStored calls fn with every stored object of config kind k in tx, in
// creation order, with its record, decoded (secrets included); a record
// that does not decode, or fn's error, stops the walk and is returned.
func (e *Engine) eachStored(tx store.Txn, k *model.Kind, fn func(rec store.Record, o model.Object) error) error {
	return eachRecord(tx, k.Name, func(rec store.Record) error {
		o, err := e.decode(k, rec)
		if err != nil {
			return err
		}
		return fn(rec, o)
	})
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

func parseUUID(s string) (uuid.UUID, error) {
	id, err := uuid.Parse(s)
	if err != nil {
		return uuid.Nil, fmt.Errorf("bad ObjectId %q: %w", s, err)
	}
	return id, nil
}

// metaSchema holds the schema the stored records were last written in: a
// digest of every kind's fields, so any change of the model is seen.
// metaSchemaVersion holds the schema version (model.SchemaVersion) they are
// in, as decimal text; absent, they are version 0.
const (
	metaSchema        = "schema"
	metaSchemaVersion = "schema-version"
)

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

// storedVersion reads the schema version of the stored records.
func storedVersion(tx store.Txn) (int, error) {
	raw := tx.Meta(metaSchemaVersion)
	if raw == nil {
		return 0, nil
	}
	v, err := strconv.Atoi(string(raw))
	if err != nil || v < 0 {
		return 0, fmt.Errorf("the stored schema version %q is not a version", raw)
	}
	return v, nil
}

// migrate runs at start: when the model changed since the records were
// written (a field added, renamed, removed or retyped, a key field added,
// the schema version raised), every stored object is read, the declared
// migrations from its version on are run over it, it is decoded with the
// lenient decoder and written back in the current form and under the key
// it now has, keeping its ObjectId and creation order, in one transaction,
// and the new schema and version are recorded. A record that does not
// decode stops the start, naming its kind, key and ObjectId: nothing is
// dropped. A migration that changes a sealed field sees its value in
// clear (opened in memory) and the record is sealed again. Revision
// records keep the version they were written in and are migrated when a
// rollback reads them (RevisionObject); staged edits are left as they
// are, read leniently.
func (e *Engine) migrate(ctx context.Context) error {
	want, wantVersion := e.schema(), e.reg.SchemaVersion()
	var have []byte
	var haveVersion int
	if err := e.store.View(func(tx store.Txn) error {
		have = append(have, tx.Meta(metaSchema)...)
		var err error
		haveVersion, err = storedVersion(tx)
		return err
	}); err != nil {
		return err
	}
	if haveVersion > wantVersion {
		return fmt.Errorf("the stored records are of schema version %d, and this swmgr knows versions up to %d: run a swmgr at least as new as the one that wrote them", haveVersion, wantVersion)
	}
	if bytes.Equal(have, want) && haveVersion == wantVersion {
		return nil
	}
	type rewrite struct {
		k      *model.Kind
		rec    store.Record
		oldKey string
		refs   []store.Ref
	}
	var recs []rewrite
	err := e.store.View(func(tx store.Txn) error {
		for _, k := range e.reg.Kinds() {
			if k.Class != model.Config {
				continue
			}
			steps := e.reg.MigrationsOf(k.Name, haveVersion)
			err := eachRecord(tx, k.Name, func(rec store.Record) error {
				obj, sealed, err := e.migrateRecord(k, rec, steps)
				if err != nil {
					return fmt.Errorf("stored %s %q (ObjectId %s) does not read in schema version %d: %w; restore the data directory from a backup, or start the swmgr that wrote it and delete the object", k.Name, rec.Key, rec.ID, wantVersion, err)
				}
				pub := k.AppendJSON(nil, obj, false)
				// A key field added since (BGPv4Neighbor's IntfRef) moves
				// the object to the key its fields now make.
				key := k.Key(obj)
				if !bytes.Equal(pub, rec.Public) || key != rec.Key || !bytes.Equal(sealed, rec.Sealed) {
					old := rec.Key
					rec.Key, rec.Public, rec.Sealed = key, pub, append([]byte(nil), sealed...)
					recs = append(recs, rewrite{k, rec, old, refsOf(k, obj)})
				}
				return nil
			})
			if err != nil {
				return err
			}
		}
		return nil
	})
	if err != nil {
		return err
	}
	err = e.submit(ctx, &job{ctx: ctx, req: Request{DuringConfirm: true, AfterWrite: func(tx store.Txn) {
		for i := range recs {
			r := recs[i]
			if r.oldKey != r.rec.Key {
				must(tx.Rekey(r.k.Name, r.oldKey, r.rec.Key, r.refs))
			}
			must(tx.Put(&r.rec, r.refs, r.refs))
		}
		tx.SetMeta(metaSchema, want)
		tx.SetMeta(metaSchemaVersion, []byte(strconv.Itoa(wantVersion)))
	}}})
	if err == nil && (len(recs) > 0 || haveVersion != wantVersion) {
		e.log.Info("migrated stored records to the current model", "records", len(recs), "from_version", haveVersion, "to_version", wantVersion)
	}
	return err
}

// checkStored runs at start, after migrate (which reads the records only
// when the model changed): every stored record's header is read and its
// body must be a JSON object, so that a record damaged on disk stops the
// start naming its kind, key and ObjectId and how to recover, rather than
// being served as data. It checks the syntax only (a scan of the bytes,
// no decoding: a start on 100,000 objects stays well under a second); a
// record whose fields no longer read is refused when it is read
// (damagedRecord), as migrate refuses it when the model changes.
func (e *Engine) checkStored() error {
	return e.store.View(func(tx store.Txn) error {
		for _, k := range e.reg.Kinds() {
			if k.Class != model.Config {
				continue
			}
			err := eachRecord(tx, k.Name, func(rec store.Record) error {
				if !isObject(rec.Public) {
					return fmt.Errorf("%w: the stored %s %q (ObjectId %s) does not read: it is not a JSON object; swmgr has changed nothing. To recover: %s", store.ErrDamaged, k.Name, rec.Key, rec.ID, store.RecoverHint)
				}
				return nil
			})
			if damaged := (*store.DamagedError)(nil); errors.As(err, &damaged) {
				return fmt.Errorf("%w: %v; swmgr has changed nothing. To recover: %s", store.ErrDamaged, err, store.RecoverHint)
			}
			if err != nil {
				return err
			}
		}
		return nil
	})
}

// keyFieldsRead checks that a stored object's key fields were read: the
// lenient decoder leaves out a value whose type no longer fits, which for a
// key field would move the object to another key.
func keyFieldsRead(k *model.Kind, given model.Object) error {
	for _, f := range k.Fields {
		if _, ok := given[f.Name]; f.Key && !ok && f.Default == nil {
			return fmt.Errorf("its key field %s does not read as %s", f.Name, f.Type)
		}
	}
	return nil
}

// migrateRecord reads a stored record of k in the current form, running
// steps over it (its sealed fields opened for them, in memory only), and
// returns the object (defaults filled in) and its sealed fields as they
// are to be stored: the record's own bytes unless a migration changed a
// secret, sealed again then.
func (e *Engine) migrateRecord(k *model.Kind, rec store.Record, steps []model.Migration) (model.Object, []byte, error) {
	var sec map[string]string
	if len(steps) > 0 {
		var err error
		if sec, err = e.openSecrets(k, rec.ID, rec.Sealed); err != nil {
			return nil, nil, err
		}
	}
	given, err := upgrade(k, rec.Public, sec, false, steps)
	if err == nil {
		err = keyFieldsRead(k, given)
	}
	if err != nil {
		return nil, nil, err
	}
	obj := k.WithDefaults(given)
	sealed := rec.Sealed
	for _, f := range k.Fields {
		if f.Secret == model.Sealed && obj.Str(f.Name) != sec[f.Name] && len(steps) > 0 {
			sealed = e.seal(k, rec.ID, obj)
			break
		}
	}
	return obj, sealed, nil
}

func must(err error) {
	if err != nil {
		panic(err)
	}
}
