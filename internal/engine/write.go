package engine

import (
	"encoding/base64"
	"runtime"
	"time"

	"github.com/swmgr/swmgr/internal/engine/feed"
	"github.com/swmgr/swmgr/internal/model"
	"github.com/swmgr/swmgr/internal/store"
)

// write stores the changes as revision rev and returns what the change
// feed's event is made of, the diff of each change (the same values the
// record holds, secrets redacted) and the revision record to store
// (Txn.PutRevision). With omitDiffs, a commit whose event
// is too large for the feed's ring keeps no diffs (nil): its caller does
// not answer with them, and subscribers read the event from the store.
//
// A commit can hold 100,000 changes (a restore), so the record is written
// by hand, one change at a time, into a store.RecordBuilder (which
// deflates a large one as it goes), from diffs made once: building it as
// structs and encoding them with encoding/json held three copies of the
// commit at the peak (550-760 MiB for a restore).
func (e *Engine) write(tx store.Txn, rev uint64, changes []*change, meta Meta, omitDiffs bool) (*revisionEvent, []Diff, []byte, error) {
	// The stored public JSON of each change, for the object cache; a bulk
	// commit's need not live until it is published: the cache, which takes
	// only its last changes (objCache.commit), encodes those again.
	var publics [][]byte
	if len(changes) < bulkFrom {
		publics = make([][]byte, len(changes))
	}
	diffs := make([]Diff, 0, len(changes))
	if omitDiffs {
		diffs = make([]Diff, 0, min(len(changes), 1024)) // dropped once past feed.MaxRingEvent
	}
	head := Revision{Revision: rev, Time: time.Now().UTC().Format(time.RFC3339Nano), User: meta.User, Source: meta.Source, Comment: meta.Comment}
	publicSize := 256 + len(meta.User) + len(meta.Comment)
	// The record goes out in chunks of 64 KiB; one that fits in a chunk (a
	// commit of a few objects) is stored as it is.
	const chunkSize = 64 << 10
	var record *store.RecordBuilder
	chunk := appendRevisionHead(make([]byte, 0, min(publicSize+640*len(changes), chunkSize+8<<10)), &head, e.reg.SchemaVersion())
	for i, c := range changes {
		if i > 0 && i%bulkCollectEvery == 0 {
			runtime.GC()
		}
		k := c.Kind
		d := Diff{Kind: k.Name, Key: k.DescribeKey(c.Key), ObjectId: c.id.String(), Op: c.Op.String()}
		var sealed [2][]byte // before, after
		if c.Before != nil {
			d.Before = k.AppendRedactedJSON(nil, c.Before)
			sealed[0] = e.seal(k, c.id, c.Before)
		}
		switch c.Op {
		case model.Delete:
			rec := store.Record{Kind: k.Name, Key: c.Key}
			if err := tx.Delete(rec, refsOf(k, c.Before)); err != nil {
				return nil, nil, nil, err
			}
		default:
			rec := &store.Record{Kind: k.Name, Key: c.Key, ID: c.id, ModRev: rev}
			rec.Public = k.AppendJSON(nil, c.After, false)
			rec.Sealed = e.seal(k, c.id, c.After)
			if err := tx.Put(rec, refsOf(k, c.Before), refsOf(k, c.After)); err != nil {
				return nil, nil, nil, err
			}
			sealed[1] = rec.Sealed
			if publics != nil {
				publics[i] = rec.Public
			}
			if hasSecrets(k) {
				d.After = k.AppendRedactedJSON(nil, c.After)
			} else {
				d.After = rec.Public // the same bytes: one copy for the store, the diff and the cache
			}
		}
		publicSize += 128 + len(d.Kind) + len(d.Key) + len(d.Before) + len(d.After)
		if diffs != nil {
			diffs = append(diffs, d)
			if omitDiffs && publicSize > feed.MaxRingEvent {
				diffs = nil
			}
		}
		if i > 0 {
			chunk = append(chunk, ',')
		}
		chunk = appendDiff(chunk, &d)
		chunk = append(chunk[:len(chunk)-1], `,"StoreKey":`...)
		chunk = model.AppendJSONString(chunk, c.Key)
		for n, b := range sealed {
			if b != nil {
				chunk = append(chunk, [2]string{`,"BeforeSealed":"`, `,"AfterSealed":"`}[n]...)
				chunk = base64.StdEncoding.AppendEncode(chunk, b)
				chunk = append(chunk, '"')
			}
		}
		chunk = append(chunk, '}')
		if len(chunk) >= chunkSize {
			if record == nil {
				record = store.NewRecordBuilder(640 * len(changes))
			}
			record.Write(chunk)
			chunk = chunk[:0]
		}
	}
	chunk = append(chunk, "]}"...)
	if len(changes) >= collectAfter {
		runtime.GC()
	}
	ev := &revisionEvent{head: head, size: publicSize, publics: publics}
	if record == nil {
		return ev, diffs, chunk, nil
	}
	record.Write(chunk)
	return ev, diffs, record.Bytes(), nil
}

// bulkCollectEvery is how many changes of a bulk commit write writes between
// two forced collections, and it collects once more before bbolt's commit
// allocates its pages. The write's garbage (each change's diff, key and
// record encodings) would otherwise let the heap grow to twice what is
// live (the commit's objects and bbolt's pending writes, ~400 MiB for a
// restore of 300,000 objects) before the pacer collects: a collection every
// 75,000 changes costs about 4 collections of a 30 s restore and keeps the
// heap near what is live (bench/restorerss.sh: 605 -> 529 MiB).
const bulkCollectEvery = 75000

// hasSecrets reports whether k has a field that diffs redact.
func hasSecrets(k *model.Kind) bool {
	for _, f := range k.Fields {
		if f.Secret != model.Public {
			return true
		}
	}
	return false
}
