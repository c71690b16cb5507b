package store

import (
	"bytes"
	"compress/flate"
	"encoding/binary"
	"io"
)

// A revision record is JSON. The record of a commit of many changes (a
// restore of 100,000 objects writes ~37 MiB of it) is stored deflated
// behind a marker byte JSON never starts with, followed by its plain
// length: neither the record being built nor bbolt's pages of it then hold
// the whole text (it shrinks ~10x). GetRevision and Revisions inflate it,
// so readers only ever see JSON.

// deflatedRecord is the first byte of a deflated record ('{' for JSON).
const deflatedRecord = 0x00

// deflatedHead is the marker and the plain length (big-endian uint64), so
// that a read allocates the record once.
const deflatedHead = 1 + 8

// DeflateAbove is the size past which a record is stored deflated: a
// commit of a few objects is written as it always was.
const DeflateAbove = 1 << 20

// RecordBuilder builds a revision record piece by piece (Write), deflating
// it once it grows past DeflateAbove.
type RecordBuilder struct {
	plain []byte
	out   bytes.Buffer
	zw    *flate.Writer
	n     int // plain bytes written
}

// NewRecordBuilder starts a record expected to be about sizeHint bytes.
func NewRecordBuilder(sizeHint int) *RecordBuilder {
	return &RecordBuilder{plain: make([]byte, 0, min(max(sizeHint, 0), DeflateAbove))}
}

// Write appends p to the record.
func (b *RecordBuilder) Write(p []byte) {
	b.n += len(p)
	if b.zw == nil {
		if len(b.plain)+len(p) <= DeflateAbove {
			b.plain = append(b.plain, p...)
			return
		}
		b.out.Write(make([]byte, deflatedHead))            // marker and length, set by Bytes
		b.zw, _ = flate.NewWriter(&b.out, flate.BestSpeed) // the level is valid: no error
		b.zw.Write(b.plain)                                // into a bytes.Buffer: cannot fail
		b.plain = nil
	}
	b.zw.Write(p)
}

// Bytes ends the record and returns what PutRevision stores.
func (b *RecordBuilder) Bytes() []byte {
	if b.zw == nil {
		return b.plain
	}
	b.zw.Close()
	data := b.out.Bytes()
	data[0] = deflatedRecord
	binary.BigEndian.PutUint64(data[1:deflatedHead], uint64(b.n))
	return data
}

// recordReader reads a stored record as JSON, inflating it as it goes; size
// is its plain length. A deflated record that does not inflate makes the
// reader fail.
func recordReader(data []byte) (r io.Reader, size int) {
	if len(data) < deflatedHead || data[0] != deflatedRecord {
		return bytes.NewReader(data), len(data)
	}
	return flate.NewReader(bytes.NewReader(data[deflatedHead:])), int(min(binary.BigEndian.Uint64(data[1:deflatedHead]), 1<<34))
}

// plainRecord returns a stored record as JSON: data itself, or inflated.
// A deflated record that does not inflate is returned as stored, so that
// its reader fails on JSON that is not JSON, naming the record.
func plainRecord(data []byte) []byte {
	if len(data) == 0 || data[0] != deflatedRecord {
		return data
	}
	if len(data) < deflatedHead {
		return data
	}
	n := binary.BigEndian.Uint64(data[1:deflatedHead])
	if n > 1<<34 {
		return data
	}
	out := bytes.NewBuffer(make([]byte, 0, int(n)))
	if _, err := io.Copy(out, flate.NewReader(bytes.NewReader(data[deflatedHead:]))); err != nil || uint64(out.Len()) != n {
		return data
	}
	return out.Bytes()
}
