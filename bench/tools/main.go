// Command tools is the benchmark kit of bench/run.sh: a load generator, a
// bare net/http server, a raw bbolt writer, and helpers to find a page
// marker and time a cold start. Each subcommand prints one result line.
//
//	tools load  -url U [-method GET|POST] [-body T] [-c N] [-d D] [-n N]   requests/s ({n} in T: a counter)
//	tools bare  -addr A -file F                                           serve F's bytes for any path
//	tools rawbolt -c N -d D -size B                                       durable db.Batch puts/s
//	tools marker -url U -index I                                          the CurrentMarker of the I-th object
//	tools coldstart -bin B -dir D -addr A -url U                          ms from exec to the first 200 of U
//	tools rss -pid P                                                      VmRSS in MiB
package main

import (
	"bytes"
	"crypto/rand"
	"encoding/binary"
	"encoding/json"
	"flag"
	"fmt"
	"io"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	bolt "go.etcd.io/bbolt"
)

func main() {
	if len(os.Args) < 2 {
		fmt.Fprintln(os.Stderr, "usage: tools load|bare|rawbolt|marker|coldstart|rss ...")
		os.Exit(2)
	}
	cmd, args := os.Args[1], os.Args[2:]
	var err error
	switch cmd {
	case "load":
		err = load(args)
	case "bare":
		err = bare(args)
	case "rawbolt":
		err = rawbolt(args)
	case "marker":
		err = marker(args)
	case "coldstart":
		err = coldstart(args)
	case "rss":
		err = rss(args)
	default:
		err = fmt.Errorf("unknown subcommand %q", cmd)
	}
	if err != nil {
		fmt.Fprintln(os.Stderr, "tools:", err)
		os.Exit(1)
	}
}

// load sends requests from c keep-alive connections for d (or until n
// requests) and prints requests/s.
func load(args []string) error {
	fs := flag.NewFlagSet("load", flag.ExitOnError)
	url := fs.String("url", "", "target URL")
	method := fs.String("method", "GET", "GET or POST")
	body := fs.String("body", "", "request body; {n} is replaced by a counter")
	conns := fs.Int("c", 16, "connections")
	dur := fs.Duration("d", 5*time.Second, "duration")
	total := fs.Int64("n", 0, "stop after this many requests (0: run for -d)")
	want := fs.Int("status", 0, "expected status (0: 200 for GET, 201 for POST)")
	fs.Parse(args)
	if *want == 0 {
		*want = 200
		if *method == "POST" {
			*want = 201
		}
	}
	client := &http.Client{Transport: &http.Transport{MaxIdleConnsPerHost: *conns, MaxConnsPerHost: *conns}}
	var count, bad, counter atomic.Int64
	deadline := time.Now().Add(*dur)
	start := time.Now()
	var wg sync.WaitGroup
	for range *conns {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for {
				if *total > 0 {
					if counter.Load() >= *total {
						return
					}
				} else if time.Now().After(deadline) {
					return
				}
				n := counter.Add(1) - 1
				if *total > 0 && n >= *total {
					return
				}
				var rd io.Reader
				if *body != "" {
					rd = strings.NewReader(strings.ReplaceAll(*body, "{n}", ipFor(n)))
				}
				req, _ := http.NewRequest(*method, *url, rd)
				resp, err := client.Do(req)
				if err != nil {
					bad.Add(1)
					continue
				}
				io.Copy(io.Discard, resp.Body)
				resp.Body.Close()
				if resp.StatusCode != *want {
					bad.Add(1)
				}
				count.Add(1)
			}
		}()
	}
	wg.Wait()
	secs := time.Since(start).Seconds()
	fmt.Printf("%.0f req/s (%d requests, %d unexpected, %.1fs)\n", float64(count.Load())/secs, count.Load(), bad.Load(), secs)
	if bad.Load() > 0 {
		return fmt.Errorf("%d requests failed or had an unexpected status", bad.Load())
	}
	return nil
}

// ipFor makes the n-th unique IPv4 address 10.x.y.z.
func ipFor(n int64) string {
	n++
	return fmt.Sprintf("10.%d.%d.%d", (n>>16)&255, (n>>8)&255, n&255)
}

func bare(args []string) error {
	fs := flag.NewFlagSet("bare", flag.ExitOnError)
	addr := fs.String("addr", "127.0.0.1:0", "listen address")
	file := fs.String("file", "", "response body")
	fs.Parse(args)
	body, err := os.ReadFile(*file)
	if err != nil {
		return err
	}
	length := strconv.Itoa(len(body))
	return http.ListenAndServe(*addr, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/json; charset=UTF-8")
		w.Header().Set("Content-Length", length)
		w.Write(body)
	}))
}

// rawbolt does durable bbolt puts with db.Batch from c goroutines.
func rawbolt(args []string) error {
	fs := flag.NewFlagSet("rawbolt", flag.ExitOnError)
	conns := fs.Int("c", 64, "goroutines")
	dur := fs.Duration("d", 5*time.Second, "duration")
	size := fs.Int("size", 330, "value bytes")
	fs.Parse(args)
	dir, err := os.MkdirTemp("", "rawbolt")
	if err != nil {
		return err
	}
	defer os.RemoveAll(dir)
	db, err := bolt.Open(filepath.Join(dir, "raw.db"), 0o600, nil)
	if err != nil {
		return err
	}
	defer db.Close()
	if err := db.Update(func(tx *bolt.Tx) error { _, err := tx.CreateBucket([]byte("b")); return err }); err != nil {
		return err
	}
	val := make([]byte, *size)
	rand.Read(val)
	var count atomic.Int64
	deadline := time.Now().Add(*dur)
	start := time.Now()
	var wg sync.WaitGroup
	var ferr atomic.Value
	for range *conns {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for time.Now().Before(deadline) {
				key := make([]byte, 16)
				rand.Read(key[8:])
				binary.BigEndian.PutUint64(key, uint64(count.Load()))
				if err := db.Batch(func(tx *bolt.Tx) error { return tx.Bucket([]byte("b")).Put(key, val) }); err != nil {
					ferr.Store(err)
					return
				}
				count.Add(1)
			}
		}()
	}
	wg.Wait()
	if e, ok := ferr.Load().(error); ok {
		return e
	}
	secs := time.Since(start).Seconds()
	fmt.Printf("%.0f puts/s (%d puts, %.1fs)\n", float64(count.Load())/secs, count.Load(), secs)
	return nil
}

// marker walks a get-all listing and prints the marker of the index-th
// object (0-based).
func marker(args []string) error {
	fs := flag.NewFlagSet("marker", flag.ExitOnError)
	url := fs.String("url", "", "get-all URL without query")
	index := fs.Int("index", 0, "object index")
	fs.Parse(args)
	cur, seen := uint64(0), 0
	for {
		var page struct {
			MoreExist  bool
			NextMarker uint64
			ObjCount   int
		}
		count := min(1000, *index-seen)
		if count == 0 {
			fmt.Println(cur)
			return nil
		}
		resp, err := http.Get(fmt.Sprintf("%s?CurrentMarker=%d&Count=%d", *url, cur, count))
		if err != nil {
			return err
		}
		err = json.NewDecoder(resp.Body).Decode(&page)
		resp.Body.Close()
		if err != nil {
			return err
		}
		seen += page.ObjCount
		cur = page.NextMarker
		if !page.MoreExist && seen < *index {
			return fmt.Errorf("only %d objects", seen)
		}
	}
}

// coldstart starts swmgr and prints the milliseconds until url answers 200;
// the process is left running (its pid on the second line).
func coldstart(args []string) error {
	fs := flag.NewFlagSet("coldstart", flag.ExitOnError)
	bin := fs.String("bin", "", "swmgr binary")
	dir := fs.String("dir", "", "data directory")
	addr := fs.String("addr", "", "listen address")
	url := fs.String("url", "", "URL that must answer 200")
	fs.Parse(args)
	start := time.Now()
	cmd := exec.Command(*bin, "serve", "--data-dir", *dir, "--http", *addr, "--https", "")
	if err := cmd.Start(); err != nil {
		return err
	}
	client := &http.Client{Timeout: time.Second}
	for time.Since(start) < 30*time.Second {
		resp, err := client.Get(*url)
		if err == nil {
			ok := resp.StatusCode == 200
			resp.Body.Close()
			if ok {
				fmt.Printf("%.1f\n%d\n", float64(time.Since(start).Microseconds())/1000, cmd.Process.Pid)
				return nil
			}
		}
		time.Sleep(2 * time.Millisecond)
	}
	cmd.Process.Kill()
	return fmt.Errorf("no answer within 30 s")
}

func rss(args []string) error {
	fs := flag.NewFlagSet("rss", flag.ExitOnError)
	pid := fs.Int("pid", 0, "process id")
	fs.Parse(args)
	status, err := os.ReadFile(fmt.Sprintf("/proc/%d/status", *pid))
	if err != nil {
		return err
	}
	for _, line := range bytes.Split(status, []byte("\n")) {
		if v, ok := bytes.CutPrefix(line, []byte("VmRSS:")); ok {
			kb, _ := strconv.Atoi(strings.TrimSpace(strings.TrimSuffix(strings.TrimSpace(string(v)), "kB")))
			fmt.Printf("%.1f\n", float64(kb)/1024)
			return nil
		}
	}
	return fmt.Errorf("no VmRSS for pid %d", *pid)
}
