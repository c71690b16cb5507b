package engine

import (
	"encoding/json"
	"fmt"
	"time"

	"github.com/google/uuid"

	"github.com/swmgr/swmgr/internal/model"
	"github.com/swmgr/swmgr/internal/store"
)

// decode rebuilds the full object of a record, secrets included.
func (e *Engine) decode(k *model.Kind, rec store.Record) (model.Object, error) {
	body, err := model.DecodeBody(rec.Public)
	if err != nil {
		return nil, fmt.Errorf("stored %s %q: %w", k.Name, rec.Key, err)
	}
	given, err := k.Parse(body)
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
