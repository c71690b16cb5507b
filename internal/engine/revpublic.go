package engine

import (
	"bytes"
	"encoding/json"
	"io"
	"slices"
)

// streamPublicRevision writes a stored revision record as clients see it
// (PublicRevision: json.Marshal of its Revision, without the StoreKeys and
// sealed secrets), one change at a time, into a buffer sized once: a
// restore's record holds 100,000 changes, and decoding them all into
// structs before encoding them again took ~100 MiB beside the record
// itself. It appends to dst (the change feed's frame head). r reads the
// stored record (size bytes), inflating it as it goes
// (store.Txn.RevisionReader). It reads the records write makes (the head's
// fields, then Changes, last); ok is false for anything else (a record of
// another shape, or one that is not valid JSON), which PublicRevision
// decodes whole as before, so that the answer is the same byte for byte.
func streamPublicRevision(dst []byte, r io.Reader, size int) (out []byte, ok bool) {
	if r == nil {
		return nil, false
	}
	dec := json.NewDecoder(r)
	if tok, err := dec.Token(); err != nil || tok != json.Delim('{') {
		return nil, false
	}
	var head Revision
	seen := map[string]bool{}
	for {
		tok, err := dec.Token()
		key, isKey := tok.(string)
		if err != nil || !isKey || seen[key] {
			return nil, false
		}
		seen[key] = true
		var field any
		switch key {
		case "Revision":
			field = &head.Revision
		case "Time":
			field = &head.Time
		case "User":
			field = &head.User
		case "Source":
			field = &head.Source
		case "Comment":
			field = &head.Comment
		case "SchemaVersion": // the stored record's only
			field = new(int)
		case "Changes":
		default:
			return nil, false
		}
		if field == nil {
			break
		}
		if err := dec.Decode(field); err != nil {
			return nil, false
		}
	}
	if tok, err := dec.Token(); err != nil || tok != json.Delim('[') {
		return nil, false
	}
	start, err := json.Marshal(head) // ends with "Changes":null}
	if err != nil || !bytes.HasSuffix(start, []byte("null}")) {
		return nil, false
	}
	out = slices.Grow(dst, size+2) // the public form is shorter; room for a frame's trailer
	out = append(out, start[:len(start)-len("null}")]...)
	out = append(out, '[')
	for n := 0; dec.More(); n++ {
		var d StoredDiff
		if err := dec.Decode(&d); err != nil {
			return nil, false
		}
		b, err := json.Marshal(d.Diff)
		if err != nil {
			return nil, false
		}
		if n > 0 {
			out = append(out, ',')
		}
		out = append(out, b...)
	}
	if tok, err := dec.Token(); err != nil || tok != json.Delim(']') {
		return nil, false
	}
	if tok, err := dec.Token(); err != nil || tok != json.Delim('}') {
		return nil, false
	}
	if _, err := dec.Token(); err != io.EOF {
		return nil, false
	}
	return append(out, "]}"...), true
}
