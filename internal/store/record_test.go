package store

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"strings"
	"testing"
)

// A record built in pieces reads back as the same bytes, stored as it is
// when small and deflated when large; a damaged deflated record is
// returned as stored, so its reader's JSON decoding fails.
func TestRevisionRecordsBuiltInPieces(t *testing.T) {
	piece := func(i int) []byte {
		return fmt.Appendf(nil, `{"Kind":"NtpServer","Key":"IpAddr=10.0.%d.%d"},`, i/256, i%256)
	}
	cases := []struct {
		name     string
		size     int // pieces are added while the record stays within it
		deflated bool
	}{
		{"empty", 0, false},
		{"one piece", 50, false},
		{"just under the limit", DeflateAbove, false},
		{"over the limit", 3 * DeflateAbove, true},
	}
	s := open(t, t.TempDir())
	defer s.Close()
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			var want []byte
			b := NewRecordBuilder(100)
			for i := 0; len(want)+len(piece(i)) <= tc.size; i++ {
				p := piece(i)
				want = append(want, p...)
				b.Write(p)
			}
			stored := b.Bytes()
			if got := len(stored) > 0 && stored[0] == deflatedRecord; got != tc.deflated {
				t.Fatalf("deflated = %v, want %v (%d bytes of %d)", got, tc.deflated, len(stored), len(want))
			}
			if tc.deflated && len(stored) > len(want)/4 {
				t.Errorf("deflated to %d bytes of %d", len(stored), len(want))
			}
			var rev uint64
			if err := s.Commit(context.Background(), func(tx *Tx) (func(), error) {
				rev = tx.NextRevision()
				tx.PutRevision(rev, stored)
				return nil, nil
			}); err != nil {
				t.Fatal(err)
			}
			s.View(func(tx Txn) error {
				if got := tx.GetRevision(rev); !bytes.Equal(got, want) {
					t.Errorf("GetRevision: %d bytes, want %d", len(got), len(want))
				}
				r, size := tx.RevisionReader(rev)
				if got, err := io.ReadAll(r); err != nil || !bytes.Equal(got, want) || size != len(want) {
					t.Errorf("RevisionReader: %d bytes (size %d), %v; want %d", len(got), size, err, len(want))
				}
				tx.Revisions(rev+1, 1, func(r uint64, got []byte) error {
					if r != rev || !bytes.Equal(got, want) {
						t.Errorf("Revisions: revision %d, %d bytes; want %d, %d", r, len(got), rev, len(want))
					}
					return nil
				})
				return nil
			})
		})
	}
	b := NewRecordBuilder(0)
	b.Write([]byte(strings.Repeat(`{"a":1},`, DeflateAbove)))
	damaged := bytes.Clone(b.Bytes())
	damaged[len(damaged)/2] ^= 0xff
	if got := plainRecord(damaged); !bytes.Equal(got, damaged) {
		t.Error("a damaged deflated record was not returned as stored")
	}
	// Deflate has no checksum: a damaged record may inflate to other bytes
	// (whose JSON then does not decode), never to the record.
	if r, _ := recordReader(damaged); r != nil {
		if got, err := io.ReadAll(r); err == nil && bytes.Equal(got, plainRecord(b.Bytes())) {
			t.Error("a damaged deflated record reads as the record")
		}
	}
	s.View(func(tx Txn) error {
		if r, _ := tx.RevisionReader(9999); r != nil {
			t.Error("RevisionReader of a missing revision is not nil")
		}
		return nil
	})
}

// Put points the record's Public and Sealed into the value it stored.
func TestPutSharesTheStoredBytes(t *testing.T) {
	s := open(t, t.TempDir())
	defer s.Close()
	r := &Record{Kind: "K", Key: "a", Public: []byte(`{"k":"a"}`), Sealed: []byte("sealed")}
	s.Commit(context.Background(), func(tx *Tx) (func(), error) {
		r.ModRev = tx.NextRevision()
		if err := tx.Put(r, nil, nil); err != nil {
			return nil, err
		}
		v := tx.btx.Bucket(bObj).Get(objKey("K", "a"))
		if &r.Public[0] != &v[recordHeader] || &r.Sealed[0] != &v[recordHeader+len(r.Public)] {
			t.Error("Public and Sealed are not the stored value's bytes")
		}
		return nil, nil
	})
	s.View(func(tx Txn) error {
		got, ok, err := tx.Get("K", "a")
		if !ok || err != nil || string(got.Public) != `{"k":"a"}` || string(got.Sealed) != "sealed" {
			t.Errorf("read back %+v %v %v", got, ok, err)
		}
		return nil
	})
}
