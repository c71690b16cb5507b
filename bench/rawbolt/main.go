// Command rawbolt is the baseline of figure (b) of bench/run.sh: -c
// goroutines each put one value after the other into a bbolt database with
// db.Batch, with bbolt's defaults (every commit is fsync'd), for -d. Each put
// has a unique random 16-byte key (like an ObjectId) and a -size byte value.
// db.Batch runs with bbolt's default MaxBatchSize (1000) and MaxBatchDelay
// (10 ms) unless -max-batch-size or -max-batch-delay say otherwise.
// It prints one line of key=value figures:
//
//	puts=N seconds=S puts_per_s=R commits=C p50_ms=.. p99_ms=..
package main

import (
	"crypto/rand"
	"flag"
	"fmt"
	"log"
	"os"
	"slices"
	"sync"
	"sync/atomic"
	"time"

	bolt "go.etcd.io/bbolt"
)

func main() {
	conns := flag.Int("c", 64, "concurrent writers (goroutines)")
	dur := flag.Duration("d", 5*time.Second, "duration")
	size := flag.Int("size", 300, "value bytes")
	path := flag.String("db", "", "database file (created; must not exist)")
	keep := flag.Bool("keep", false, "keep the database file afterwards")
	maxSize := flag.Int("max-batch-size", 0, "DB.MaxBatchSize (0: bbolt's default, 1000)")
	maxDelay := flag.Duration("max-batch-delay", 0, "DB.MaxBatchDelay (0: bbolt's default, 10ms)")
	flag.Parse()
	if *path == "" || *conns < 1 || *size < 0 {
		flag.Usage()
		os.Exit(2)
	}
	if _, err := os.Stat(*path); err == nil {
		log.Fatalf("rawbolt: %s exists", *path)
	}
	db, err := bolt.Open(*path, 0o600, nil) // defaults: NoSync false, fdatasync on every commit
	if err != nil {
		log.Fatalf("rawbolt: %v", err)
	}
	if *maxSize > 0 {
		db.MaxBatchSize = *maxSize
	}
	if *maxDelay > 0 {
		db.MaxBatchDelay = *maxDelay
	}
	if !*keep {
		defer os.Remove(*path)
	}
	defer db.Close()
	bucket := []byte("objects")
	if err := db.Update(func(tx *bolt.Tx) error { _, err := tx.CreateBucket(bucket); return err }); err != nil {
		log.Fatalf("rawbolt: %v", err)
	}
	firstTx := lastTxID(db)

	var (
		puts    atomic.Int64
		failed  atomic.Value
		wg      sync.WaitGroup
		lats    = make([][]time.Duration, *conns)
		stop    = time.Now().Add(*dur)
		started = time.Now()
	)
	for w := range *conns {
		wg.Add(1)
		go func() {
			defer wg.Done()
			val := make([]byte, *size)
			rand.Read(val)
			var mine []time.Duration
			for time.Now().Before(stop) {
				key := make([]byte, 16)
				rand.Read(key)
				t0 := time.Now()
				err := db.Batch(func(tx *bolt.Tx) error { return tx.Bucket(bucket).Put(key, val) })
				if err != nil {
					failed.Store(err)
					break
				}
				mine = append(mine, time.Since(t0))
				puts.Add(1)
			}
			lats[w] = mine
		}()
	}
	wg.Wait()
	elapsed := time.Since(started)
	if err, ok := failed.Load().(error); ok {
		log.Fatalf("rawbolt: put: %v", err)
	}
	var all []time.Duration
	for _, l := range lats {
		all = append(all, l...)
	}
	slices.Sort(all)
	pct := func(p float64) float64 {
		if len(all) == 0 {
			return 0
		}
		return float64(all[int(p*float64(len(all)-1))].Nanoseconds()) / 1e6
	}
	commits := lastTxID(db) - firstTx
	n := puts.Load()
	fmt.Printf("puts=%d seconds=%.3f puts_per_s=%.1f commits=%d p50_ms=%.3f p99_ms=%.3f\n",
		n, elapsed.Seconds(), float64(n)/elapsed.Seconds(), commits, pct(0.5), pct(0.99))
}

// lastTxID returns the id of the last committed write transaction.
func lastTxID(db *bolt.DB) int {
	var id int
	db.View(func(tx *bolt.Tx) error { id = tx.ID(); return nil })
	return id
}
