package store

import (
	bolterr "go.etcd.io/bbolt/errors"
)

// Candidates are kept in cands/<id>: "m" holds the candidate's metadata and
// each staged edit is stored under its sequence number, so staging one more
// edit writes one key, not the whole list.

var kCandMeta = []byte("m")

// PutCandidate writes a candidate's metadata, creating it if new.
func (tx *Tx) PutCandidate(id string, meta []byte) {
	tx.mustWrite()
	b, err := tx.btx.Bucket(bCands).CreateBucketIfNotExists([]byte(id))
	must(err)
	must(b.Put(kCandMeta, meta))
}

// Candidate returns a candidate's metadata, or nil.
func (tx *Tx) Candidate(id string) []byte {
	b := tx.btx.Bucket(bCands).Bucket([]byte(id))
	if b == nil {
		return nil
	}
	return b.Get(kCandMeta)
}

// AppendCandidateEdit stores the next staged edit of a candidate.
func (tx *Tx) AppendCandidateEdit(id string, edit []byte) {
	tx.mustWrite()
	b := tx.btx.Bucket(bCands).Bucket([]byte(id))
	seq, err := b.NextSequence()
	must(err)
	must(b.Put(be(seq), edit))
}

// CandidateEditCount is how many edits a candidate has: edits are only
// ever appended, so the bucket's sequence counts them.
func (tx *Tx) CandidateEditCount(id string) int {
	b := tx.btx.Bucket(bCands).Bucket([]byte(id))
	if b == nil {
		return 0
	}
	return int(b.Sequence())
}

// CandidateEdits calls fn for each staged edit of a candidate, in order.
func (tx *Tx) CandidateEdits(id string, fn func(edit []byte) error) error {
	b := tx.btx.Bucket(bCands).Bucket([]byte(id))
	if b == nil {
		return nil
	}
	c := b.Cursor()
	for k, v := c.First(); k != nil; k, v = c.Next() {
		if len(k) == 8 {
			if err := fn(v); err != nil {
				return err
			}
		}
	}
	return nil
}

// DeleteCandidate removes a candidate and its edits.
func (tx *Tx) DeleteCandidate(id string) {
	tx.mustWrite()
	if err := tx.btx.Bucket(bCands).DeleteBucket([]byte(id)); err != nil && err != bolterr.ErrBucketNotFound {
		must(err)
	}
}

// Candidates calls fn with the id and metadata of every candidate.
func (tx *Tx) Candidates(fn func(id string, meta []byte) error) error {
	return tx.btx.Bucket(bCands).ForEachBucket(func(k []byte) error {
		return fn(string(k), tx.btx.Bucket(bCands).Bucket(k).Get(kCandMeta))
	})
}
