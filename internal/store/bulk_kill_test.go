package store

import (
	"bufio"
	"bytes"
	"fmt"
	"math/rand/v2"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	bolt "go.etcd.io/bbolt"
)

// The child of TestBulkSurvivesKill9: a bulk write of
// SWMGR_BULK_KILL_N objects onto the seeded store in SWMGR_BULK_KILL_DIR.
// It says on stdout where it is: "chunk K" once the K-th transaction of
// its objects is committed, "final" in the final transaction, "done"
// after it; with SWMGR_BULK_KILL_STOP it stops there (and waits for its
// kill -9).
func TestBulkKill9Child(t *testing.T) {
	dir := os.Getenv("SWMGR_BULK_KILL_DIR")
	if dir == "" {
		t.Skip("the child of TestBulkSurvivesKill9")
	}
	n, _ := strconv.Atoi(os.Getenv("SWMGR_BULK_KILL_N"))
	stop := os.Getenv("SWMGR_BULK_KILL_STOP")
	say := func(what string) {
		fmt.Println(what)
		if what == stop {
			select {} // until the kill
		}
	}
	s, err := Open(dir)
	if err != nil {
		t.Fatal(err)
	}
	objects, rest := bulkOps(n, seqID)
	puts := 0
	counted := func(tx Txn) error {
		return objects(&countingTxn{Txn: tx, put: func() {
			// The transaction of the puts before this one is committed.
			if puts++; puts > 1 && (puts-1)%BulkChunk == 0 {
				say(fmt.Sprintf("chunk %d", (puts-1)/BulkChunk))
			}
		}})
	}
	say("begin")
	err = s.Bulk(counted, func(tx Txn) error { say("final"); return rest(tx) })
	if err != nil {
		t.Fatal(err)
	}
	say("done")
	select {}
}

// countingTxn calls put after each Put.
type countingTxn struct {
	Txn
	put func()
}

func (c *countingTxn) Put(r *Record, oldRefs, newRefs []Ref) error {
	if err := c.Txn.Put(r, oldRefs, newRefs); err != nil {
		return err
	}
	c.put()
	return nil
}

// A bulk write killed (SIGKILL) at any point leaves the old store or the
// new one, never a mix: killed while its objects are staged (after the
// first, the third transaction), in its final transaction, after it, and
// at random moments; each time the store opens, holds no staging area, and
// dumps exactly as before the write or as after it.
func TestBulkSurvivesKill9(t *testing.T) {
	if testing.Short() {
		t.Skip("starts children")
	}
	n := 4*BulkChunk + 100
	seed := func(dir string) {
		s, err := Open(dir)
		if err != nil {
			t.Fatal(err)
		}
		seedInto(t, s)
		s.Close()
	}
	old, neu := t.TempDir(), t.TempDir()
	seed(old)
	seed(neu)
	so := open(t, old)
	oldDump := dump(t, so)
	so.Close()
	sn := open(t, neu)
	objects, rest := bulkOps(n, seqID)
	if err := sn.Bulk(objects, rest); err != nil {
		t.Fatal(err)
	}
	newDump := dump(t, sn)
	sn.Close()

	type try struct {
		stop  string        // a point the child stops at
		delay time.Duration // or a time after "begin"
	}
	tries := []try{{stop: "chunk 1"}, {stop: "chunk 3"}, {stop: "final"}, {stop: "done"}}
	for range 4 {
		tries = append(tries, try{delay: time.Duration(rand.IntN(600)) * time.Millisecond})
	}
	var olds, news int
	for _, tr := range tries {
		dir := t.TempDir()
		seed(dir)
		cmd := exec.Command(os.Args[0], "-test.run=^TestBulkKill9Child$", "-test.count=1")
		cmd.Env = append(os.Environ(), "SWMGR_BULK_KILL_DIR="+dir, "SWMGR_BULK_KILL_N="+strconv.Itoa(n), "SWMGR_BULK_KILL_STOP="+tr.stop)
		out, err := cmd.StdoutPipe()
		if err != nil {
			t.Fatal(err)
		}
		cmd.Stderr = os.Stderr
		if err := cmd.Start(); err != nil {
			t.Fatal(err)
		}
		lines := bufio.NewScanner(out)
		var seen []string
		wait := tr.stop
		if wait == "" {
			wait = "begin"
		}
		for lines.Scan() {
			seen = append(seen, lines.Text())
			if lines.Text() == wait {
				break
			}
		}
		if len(seen) == 0 || seen[len(seen)-1] != wait {
			cmd.Process.Kill()
			cmd.Wait()
			t.Fatalf("the child said %q, never %q", seen, wait)
		}
		time.Sleep(tr.delay)
		cmd.Process.Signal(syscall.SIGKILL)
		cmd.Wait()

		staged := false
		db, err := bolt.Open(dir+"/swmgr.db", 0o600, &bolt.Options{ReadOnly: true, Timeout: time.Second})
		if err != nil {
			t.Fatal(err)
		}
		db.View(func(btx *bolt.Tx) error { staged = btx.Bucket(bStage) != nil; return nil })
		db.Close()
		s, err := Open(dir)
		if err != nil {
			t.Fatalf("killed at %q +%v: Open: %v", tr.stop, tr.delay, err)
		}
		got := dump(t, s)
		s.db.View(func(btx *bolt.Tx) error {
			if btx.Bucket(bStage) != nil {
				t.Errorf("killed at %q +%v: the staging area is still there after Open", tr.stop, tr.delay)
			}
			return nil
		})
		s.Close()
		switch {
		case bytes.Equal(got, oldDump):
			olds++
		case bytes.Equal(got, newDump):
			news++
		default:
			t.Fatalf("killed at %q +%v (staging area: %v): the store is neither the old one nor the new one", tr.stop, tr.delay, staged)
		}
		t.Logf("killed at %q +%v: staging area %v, the store is the %s one", tr.stop, tr.delay, staged, map[bool]string{true: "new", false: "old"}[bytes.Equal(got, newDump)])
		if strings.HasPrefix(tr.stop, "chunk") && !staged {
			t.Errorf("killed at %q: no staging area, so the kill was not mid-write", tr.stop)
		}
		if (tr.stop != "" && tr.stop != "done") && !bytes.Equal(got, oldDump) {
			t.Errorf("killed at %q, before the final commit: the store is not the old one", tr.stop)
		}
		if tr.stop == "done" && !bytes.Equal(got, newDump) {
			t.Errorf("killed after the write returned: the store is not the new one")
		}
	}
	if olds == 0 || news == 0 {
		t.Errorf("%d old, %d new: want both", olds, news)
	}
}
