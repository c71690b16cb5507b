// Command probe holds the small helpers of bench/run.sh, each printing one
// line of key=value figures:
//
//	probe freeport                               a free TCP port on 127.0.0.1
//	probe wait -url U [-pid P] [-timeout D]      poll U every 2 ms until it answers 200 (fail early if
//	                                             process P is gone)
//	probe objectid -url U                        the ObjectId of a get-by-id or the first of a get-all answer
//	probe marker -url LIST -skip N [-page P] [-count C]
//	                                             the CurrentMarker of the page that starts after N objects,
//	                                             found by walking NextMarker with pages of P (default 1000);
//	                                             then checks that the page of C (default 100) there is full
//	probe rss -pid P                             VmRSS of a process (and its anonymous and file-backed
//	                                             parts, and its peak VmHWM), from /proc/P/status
//	probe coldstart -url U [-runs R] [-log F] -- CMD ARGS...
//	                                             R times: exec CMD, time until U answers 200 (polled every
//	                                             2 ms), read its VmRSS, stop it with SIGTERM and check that
//	                                             it exits 0
package main

import (
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"os"
	"os/exec"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"time"

	"github.com/swmgr/swmgr/internal/testport"
)

func main() {
	if len(os.Args) < 2 {
		fmt.Fprintln(os.Stderr, "usage: probe freeport|wait|objectid|marker|rss|coldstart ...")
		os.Exit(2)
	}
	var err error
	switch cmd, args := os.Args[1], os.Args[2:]; cmd {
	case "freeport":
		err = freePort()
	case "wait":
		err = waitCmd(args)
	case "objectid":
		err = objectID(args)
	case "marker":
		err = marker(args)
	case "rss":
		err = rssCmd(args)
	case "coldstart":
		err = coldstart(args)
	default:
		err = fmt.Errorf("unknown subcommand %q", cmd)
	}
	if err != nil {
		fmt.Fprintln(os.Stderr, "probe:", err)
		os.Exit(1)
	}
}

var client = &http.Client{Timeout: 10 * time.Second}

// get returns the body of a 200 answer.
func get(u string) ([]byte, error) {
	resp, err := client.Get(u)
	if err != nil {
		return nil, err
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	if err != nil {
		return nil, err
	}
	if resp.StatusCode != http.StatusOK {
		return nil, fmt.Errorf("GET %s: status %d: %.300s", u, resp.StatusCode, b)
	}
	return b, nil
}

func waitCmd(args []string) error {
	fs := flag.NewFlagSet("wait", flag.ExitOnError)
	u := fs.String("url", "", "URL")
	timeout := fs.Duration("timeout", 30*time.Second, "give up after")
	pid := fs.Int("pid", 0, "give up when this process is gone")
	fs.Parse(args)
	start := time.Now()
	var gone chan struct{}
	if *pid > 0 {
		gone = make(chan struct{})
		go func() {
			for alive(*pid) {
				time.Sleep(5 * time.Millisecond)
			}
			close(gone)
		}()
	}
	if err := poll(*u, time.Now().Add(*timeout), gone); err != nil {
		return err
	}
	fmt.Printf("up_ms=%.1f\n", ms(time.Since(start)))
	return nil
}

func freePort() error {
	p, err := testport.Free("tcp")
	if err != nil {
		return err
	}
	fmt.Println(p)
	return nil
}

// alive reports whether process pid exists and is not a zombie.
func alive(pid int) bool {
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	if err != nil {
		return false
	}
	s := string(b)
	i := strings.LastIndexByte(s, ')')
	return i < 0 || !strings.HasPrefix(s[i+1:], " Z")
}

// poll GETs u every 2 ms until it answers 200, the deadline passes or exited
// is closed.
func poll(u string, deadline time.Time, exited <-chan struct{}) error {
	c := &http.Client{Timeout: time.Second}
	for {
		resp, err := c.Get(u)
		if err == nil {
			io.Copy(io.Discard, resp.Body)
			resp.Body.Close()
			if resp.StatusCode == http.StatusOK {
				return nil
			}
		}
		if time.Now().After(deadline) {
			if err == nil {
				err = fmt.Errorf("status %d", resp.StatusCode)
			}
			return fmt.Errorf("no 200 from %s in time (last: %v)", u, err)
		}
		select {
		case <-exited:
			return errors.New("the process exited before it answered")
		case <-time.After(2 * time.Millisecond):
		}
	}
}

func objectID(args []string) error {
	fs := flag.NewFlagSet("objectid", flag.ExitOnError)
	u := fs.String("url", "", "get-by-id or get-all URL")
	fs.Parse(args)
	b, err := get(*u)
	if err != nil {
		return err
	}
	var v struct {
		ObjectId string
		Objects  []struct{ ObjectId string }
	}
	if err := json.Unmarshal(b, &v); err != nil {
		return fmt.Errorf("GET %s: %w", *u, err)
	}
	id := v.ObjectId
	if id == "" && len(v.Objects) > 0 {
		id = v.Objects[0].ObjectId
	}
	if id == "" {
		return fmt.Errorf("GET %s: no ObjectId in %.300s", *u, b)
	}
	fmt.Println(id)
	return nil
}

type page struct {
	CurrentMarker uint64
	MoreExist     bool
	NextMarker    uint64
	ObjCount      int
	Objects       []json.RawMessage
}

func marker(args []string) error {
	fs := flag.NewFlagSet("marker", flag.ExitOnError)
	list := fs.String("url", "", "get-all URL without a query")
	skip := fs.Int("skip", 0, "objects before the wanted page")
	size := fs.Int("page", 1000, "page size of the walk (max 1024)")
	count := fs.Int("count", 100, "size of the page that is checked at the marker found")
	fs.Parse(args)
	start := time.Now()
	getPage := func(marker uint64, n int) (page, error) {
		var p page
		b, err := get(*list + "?" + url.Values{"CurrentMarker": {strconv.FormatUint(marker, 10)}, "Count": {strconv.Itoa(n)}}.Encode())
		if err == nil {
			err = json.Unmarshal(b, &p)
		}
		return p, err
	}
	cur, seen, pages := uint64(0), 0, 0
	for seen < *skip {
		n := min(*size, *skip-seen)
		p, err := getPage(cur, n)
		if err != nil {
			return err
		}
		pages++
		if p.ObjCount != len(p.Objects) {
			return fmt.Errorf("page at marker %d: ObjCount %d but %d Objects", cur, p.ObjCount, len(p.Objects))
		}
		if p.ObjCount != n && p.MoreExist {
			return fmt.Errorf("page at marker %d: %d objects of Count=%d but MoreExist", cur, p.ObjCount, n)
		}
		seen += p.ObjCount
		if !p.MoreExist {
			if seen < *skip {
				return fmt.Errorf("only %d objects", seen)
			}
		} else if p.NextMarker <= cur {
			return fmt.Errorf("NextMarker %d after CurrentMarker %d", p.NextMarker, cur)
		}
		cur = p.NextMarker
	}
	walk := time.Since(start)
	p, err := getPage(cur, *count)
	if err != nil {
		return err
	}
	if p.ObjCount != *count || len(p.Objects) != *count {
		return fmt.Errorf("the page of Count=%d at marker %d holds %d objects (ObjCount %d)", *count, cur, len(p.Objects), p.ObjCount)
	}
	fmt.Printf("marker=%d skipped=%d pages=%d walk_ms=%.0f page_objs=%d more_exist=%t\n", cur, seen, pages, ms(walk), p.ObjCount, p.MoreExist)
	return nil
}

// rss returns VmRSS of pid in MiB.
func rss(pid int) (float64, error) {
	m, err := status(pid, "VmRSS")
	return m["VmRSS"], err
}

// status returns the named kB fields of /proc/pid/status, in MiB.
func status(pid int, names ...string) (map[string]float64, error) {
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/status", pid))
	if err != nil {
		return nil, err
	}
	m := map[string]float64{}
	for line := range strings.Lines(string(b)) {
		name, v, ok := strings.Cut(line, ":")
		if !ok || !slices.Contains(names, name) {
			continue
		}
		kb, err := strconv.ParseFloat(strings.TrimSuffix(strings.TrimSpace(v), " kB"), 64)
		if err != nil {
			return nil, fmt.Errorf("/proc/%d/status: %s: %w", pid, name, err)
		}
		m[name] = kb / 1024
	}
	for _, n := range names {
		if _, ok := m[n]; !ok {
			return nil, fmt.Errorf("no %s in /proc/%d/status", n, pid)
		}
	}
	return m, nil
}

func rssCmd(args []string) error {
	fs := flag.NewFlagSet("rss", flag.ExitOnError)
	pid := fs.Int("pid", 0, "process id")
	fs.Parse(args)
	m, err := status(*pid, "VmRSS", "RssAnon", "RssFile", "VmHWM")
	if err != nil {
		return err
	}
	fmt.Printf("rss_mib=%.1f anon_mib=%.1f file_mib=%.1f peak_rss_mib=%.1f\n", m["VmRSS"], m["RssAnon"], m["RssFile"], m["VmHWM"])
	return nil
}

func coldstart(args []string) error {
	fs := flag.NewFlagSet("coldstart", flag.ExitOnError)
	u := fs.String("url", "", "URL that must answer 200 (a GET by id)")
	runs := fs.Int("runs", 1, "starts")
	logFile := fs.String("log", "", "append the process's stdout and stderr to this file")
	fs.Parse(args)
	argv := fs.Args()
	if *u == "" || len(argv) == 0 {
		return errors.New("usage: probe coldstart -url U [-runs R] [-log F] -- CMD ARGS")
	}
	var out io.Writer = io.Discard
	if *logFile != "" {
		f, err := os.OpenFile(*logFile, os.O_WRONLY|os.O_APPEND|os.O_CREATE, 0o644)
		if err != nil {
			return err
		}
		defer f.Close()
		out = f
	}
	var times, rsss, stops []float64
	for range *runs {
		cmd := exec.Command(argv[0], argv[1:]...)
		cmd.Stdout, cmd.Stderr = out, out
		cmd.SysProcAttr = &syscall.SysProcAttr{Pdeathsig: syscall.SIGTERM} // not left behind if probe is killed
		start := time.Now()
		if err := cmd.Start(); err != nil {
			return err
		}
		exited := make(chan struct{})
		var waitErr error
		go func() { waitErr = cmd.Wait(); close(exited) }()
		err := poll(*u, start.Add(30*time.Second), exited)
		up := time.Since(start)
		var mb float64
		if err == nil {
			mb, err = rss(cmd.Process.Pid)
		}
		stopAt := time.Now()
		cmd.Process.Signal(syscall.SIGTERM)
		select {
		case <-exited:
		case <-time.After(15 * time.Second):
			cmd.Process.Kill()
			<-exited
			if err == nil {
				err = errors.New("no exit within 15 s of SIGTERM")
			}
		}
		if err == nil && waitErr != nil {
			err = fmt.Errorf("exit after SIGTERM: %v", waitErr)
		}
		if err != nil {
			return fmt.Errorf("start %d: %w (exit: %v)", len(times)+1, err, waitErr)
		}
		times = append(times, ms(up))
		rsss = append(rsss, mb)
		stops = append(stops, ms(time.Since(stopAt)))
	}
	fmt.Printf("median_ms=%.1f runs_ms=%s rss_mib=%s stop_ms=%s\n", median(times), join(times), join(rsss), join(stops))
	return nil
}

func ms(d time.Duration) float64 { return float64(d.Nanoseconds()) / 1e6 }

func median(v []float64) float64 {
	s := slices.Sorted(slices.Values(v))
	return s[len(s)/2]
}

func join(v []float64) string {
	s := make([]string, len(v))
	for i, x := range v {
		s[i] = strconv.FormatFloat(x, 'f', 1, 64)
	}
	return strings.Join(s, ",")
}
