// Package configlog owns the config log: the shape of an entry, what it may
// show of a request (secrets redacted, sizes bounded), writing it inside the
// writer's transaction, and reading it back in pages bounded in count and
// bytes.
//
// Every create, update, delete and action is an entry, successful or not;
// failures are kept apart in the store's retention, so that a flood of
// refused writes cannot push the successful changes out of the log. The
// Data of an entry is at most MaxData bytes (a longer body is cut and
// its size said), so that refused large bodies cannot fill the log.
package configlog

import (
	"bytes"
	"encoding/json"
	"fmt"
	"sort"
	"strconv"
	"time"
	"unicode/utf8"

	"github.com/swmgr/swmgr/internal/apierr"
	"github.com/swmgr/swmgr/internal/bind"
	"github.com/swmgr/swmgr/internal/model"
	"github.com/swmgr/swmgr/internal/store"
)

// Limits.
const (
	// MaxData is the most bytes of a request an entry keeps.
	MaxData = 2048
	// MaxPageBytes bounds the entries of one page of the log.
	MaxPageBytes = 1 << 20
)

// Info is what an entry records about a request besides its result.
type Info = bind.LogInfo

// Log writes and reads the config log.
type Log struct {
	kind *model.Kind
	// direct: the kind has exactly entryFields, in that order, none of
	// them secret, so an entry is written straight into its buffer (it is
	// written for every create, inside the writer) rather than through an
	// Object and the model's encoder; the bytes are the same.
	direct bool
}

// entryFields are the fields of an entry, in the order ConfigLogState
// declares them.
var entryFields = []struct {
	name string
	typ  model.Type
}{
	{"SeqNum", model.Int}, {"Time", model.String}, {"API", model.String}, {"Operation", model.String},
	{"Data", model.String}, {"Result", model.String}, {"UserAddr", model.String}, {"UserName", model.String},
}

// New returns the config log whose entries have the fields of kind
// (ConfigLogState).
func New(kind *model.Kind) *Log {
	direct := len(kind.Fields) == len(entryFields)
	for i, f := range kind.Fields {
		direct = direct && f.Name == entryFields[i].name && f.Type == entryFields[i].typ && f.Secret == model.Public
	}
	return &Log{kind: kind, direct: direct}
}

// Append adds an entry inside the writer's transaction. An entry whose
// result is not "Success" is kept as a failure: once the log is full,
// failures past store.MaxLogFailures replace older failures, not the
// successful changes.
func (l *Log) Append(tx store.Txn, user, addr string, info *Info, result string) {
	now := time.Now().UTC().Round(0).String()
	data := Bound(info.Data)
	values := entryValues{now, info.API, info.Operation, data, Bound(result), addr, user}
	build := func(seq uint64) []byte { return l.entry(seq, &values, l.direct) }
	if result == "Success" {
		tx.AppendLog(build)
	} else {
		tx.AppendFailedLog(build)
	}
}

// entryValues are the values of an entry's fields after SeqNum, in the
// order of entryFields.
type entryValues [7]string

// entry encodes an entry: directly, or through an Object and the model.
func (l *Log) entry(seq uint64, values *entryValues, direct bool) []byte {
	if !direct {
		o := model.Object{"SeqNum": int64(seq)}
		for i, v := range values {
			o[entryFields[i+1].name] = v
		}
		return l.kind.AppendJSON(nil, o, false)
	}
	n := 16 * len(entryFields)
	for _, v := range values {
		n += len(v) + 2
	}
	b := make([]byte, 0, n)
	b = append(b, `{"SeqNum":`...)
	b = strconv.AppendInt(b, int64(seq), 10)
	for i, v := range values {
		b = append(b, ',')
		b = model.AppendJSONString(b, entryFields[i+1].name)
		b = append(b, ':')
		b = model.AppendJSONString(b, v)
	}
	return append(b, '}')
}

var errFull = fmt.Errorf("page full")

// List appends one page of the log, oldest first, in the get-all form:
// at most count entries and, past the first, about MaxPageBytes.
func (l *Log) List(tx store.Txn, marker uint64, count int, dst []byte) ([]byte, error) {
	var items []byte
	n := 0
	next, more, err := tx.Log(marker, count, func(seq uint64, stored []byte) error {
		if n > 0 && len(items)+len(stored) > MaxPageBytes {
			return errFull
		}
		if n > 0 {
			items = append(items, ',')
		}
		items = appendItem(items, stored)
		n++
		return nil
	})
	if err == errFull {
		err, more = nil, true
	}
	if err != nil {
		return dst, err
	}
	return model.AppendPage(dst, marker, next, more, n, items), nil
}

// Get appends one entry by SeqNum.
func (l *Log) Get(tx store.Txn, seq uint64, dst []byte) ([]byte, error) {
	stored := tx.LogEntry(seq)
	if stored == nil {
		return dst, apierr.NotFound(apierr.CodeNotFound, l.kind.Name, "no config log entry with SeqNum %d (the log keeps the last %d)", seq, store.MaxLogEntries)
	}
	return appendItem(dst, stored), nil
}

// appendItem wraps an entry as a get-all item; entries have no ObjectId
// of their own (FlexSwitch's neither).
func appendItem(dst, entry []byte) []byte {
	dst = append(dst, `{"Object":`...)
	dst = append(dst, entry...)
	return append(dst, `,"ObjectId":""}`...)
}

// Bound cuts s to MaxData bytes (on a character boundary), saying how long
// it was.
func Bound(s string) string {
	if len(s) <= MaxData {
		return s
	}
	cut := MaxData
	for cut > 0 && !utf8.RuneStart(s[cut]) {
		cut--
	}
	return s[:cut] + fmt.Sprintf("...(cut: %d bytes in all)", len(s))
}

// RedactBody renders a body for the log: compact JSON with sorted names,
// each secret and each value of an unknown field (it may be a misspelt
// secret) as "******". Info.Data is bounded to MaxData when written.
func RedactBody(k *model.Kind, body model.Body) string {
	return sortedObject(body, func(b []byte, name string, raw json.RawMessage) []byte {
		f := k.Field(name)
		if f == nil || f.Secret != model.Public {
			return append(b, `"******"`...)
		}
		if compactToken(raw) {
			return append(b, raw...)
		}
		var c bytes.Buffer
		if err := json.Compact(&c, raw); err != nil {
			return append(b, `"******"`...)
		}
		return append(b, c.Bytes()...)
	})
}

// compactToken reports whether raw is one JSON token that json.Compact
// would copy as it is: a string without escapes, control characters or
// non-ASCII text, a whole number, true, false or null (most values of a
// body are).
func compactToken(raw []byte) bool {
	if len(raw) == 0 {
		return false
	}
	switch string(raw) {
	case "true", "false", "null":
		return true
	}
	if raw[0] == '"' {
		return model.IsPlainJSONString(raw)
	}
	digits := raw
	if digits[0] == '-' {
		digits = digits[1:]
	}
	if len(digits) == 0 || len(digits) > 1 && digits[0] == '0' {
		return false
	}
	for _, c := range digits {
		if c < '0' || c > '9' {
			return false
		}
	}
	return true
}

// sortedObject writes fields as one compact JSON object, names sorted,
// each value as appendValue appends it.
func sortedObject(fields map[string]json.RawMessage, appendValue func(b []byte, name string, raw json.RawMessage) []byte) string {
	names := make([]string, 0, len(fields))
	size := 2
	for n, raw := range fields {
		names = append(names, n)
		size += len(n) + len(raw) + 4
	}
	sort.Strings(names)
	b := make([]byte, 0, size)
	b = append(b, '{')
	for i, n := range names {
		if i > 0 {
			b = append(b, ',')
		}
		b = model.AppendJSONString(b, n)
		b = append(b, ':')
		b = appendValue(b, n, fields[n])
	}
	return string(append(b, '}'))
}

// NameObject adds the key fields and the ObjectId of the object a write
// changed to data (a redacted body), so that an entry of a write by
// ObjectId or query string says which object it was. Given fields win over
// key.
func NameObject(k *model.Kind, data string, key model.Object, objectID string) string {
	fields := map[string]json.RawMessage{}
	if data != "" {
		if err := json.Unmarshal([]byte(data), &fields); err != nil {
			return data
		}
	}
	for _, f := range k.Keys() {
		if _, given := fields[f.Name]; given {
			continue
		}
		if v, ok := key[f.Name]; ok {
			raw, _ := json.Marshal(v)
			fields[f.Name] = raw
		}
	}
	if _, given := fields["ObjectId"]; !given && objectID != "" {
		fields["ObjectId"], _ = json.Marshal(objectID)
	}
	return sortedObject(fields, func(b []byte, _ string, raw json.RawMessage) []byte { return append(b, raw...) })
}
