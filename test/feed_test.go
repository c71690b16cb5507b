package test

import (
	"context"
	"encoding/binary"
	"fmt"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	bolt "go.etcd.io/bbolt"

	swmgr "github.com/swmgr/swmgr/client"
)

// A kept revision swmgr cannot read (its store record damaged) is an error
// event naming it, and the stream goes on: the Go client passes it on as a
// Gap of that one revision, since a consumer keeping a copy of the
// configuration has missed a change, instead of dropping it unseen.
func TestEventsReportUnreadableRevision(t *testing.T) {
	dir := t.TempDir()
	s := startServer(t, dir)
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	c, err := swmgr.New("http://" + s.addr)
	if err != nil {
		t.Fatal(err)
	}
	var revs []uint64
	for i := range 3 {
		res, err := c.Create(ctx, "NtpServer", swmgr.Object{"IpAddr": fmt.Sprintf("10.11.0.%d", i+1)})
		if err != nil {
			t.Fatal(err)
		}
		rev, _ := strconv.ParseUint(strings.Trim(res.ETag, `"`), 10, 64)
		revs = append(revs, rev)
	}
	s.stop(t)
	db, err := bolt.Open(filepath.Join(dir, "swmgr.db"), 0o600, nil)
	if err != nil {
		t.Fatal(err)
	}
	err = db.Update(func(tx *bolt.Tx) error {
		return tx.Bucket([]byte("revs")).Put(binary.BigEndian.AppendUint64(nil, revs[1]), []byte("{damaged"))
	})
	db.Close()
	if err != nil {
		t.Fatal(err)
	}
	s = startServer(t, dir)
	c, _ = swmgr.New("http://" + s.addr)
	since := revs[0] - 1
	var got []swmgr.Event
	for ev, err := range c.Events(ctx, swmgr.FeedOptions{Since: &since}) {
		if err != nil {
			t.Fatalf("after %+v: %v", got, err)
		}
		got = append(got, ev)
		if ev.Gap == nil && ev.Revision.Revision == revs[2] {
			break
		}
	}
	if len(got) != 3 || got[0].Revision.Revision != revs[0] || got[1].Gap == nil ||
		got[1].Gap.FirstMissing != revs[1] || got[1].Gap.LastMissing != revs[1] || got[1].Gap.ContinuesWith != revs[2] {
		t.Fatalf("events %+v; want revision %d, a gap of revision %d, revision %d", got, revs[0], revs[1], revs[2])
	}
}
