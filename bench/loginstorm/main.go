// Command loginstorm sends concurrent bad HTTPS logins to a loopback swmgr
// while an admin with the right password keeps reading, and reports the
// admin's latency and the server's peak RSS (VmHWM).
//
//	loginstorm -url https://127.0.0.1:PORT/public/v1 -cert DIR/tls-cert.pem -pid PID \
//	    -admin-password-file F [-c 300] [-addrs 40] [-d 20s]
//
// The attackers come from 127.0.0.2 .. 127.0.0.(1+addrs), half guessing
// the admin's password, half random user names; the admin comes from
// 127.0.0.1, where it logged in once before the storm. Only loopback
// addresses are accepted.
package main

import (
	"crypto/tls"
	"crypto/x509"
	"flag"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/url"
	"os"
	"sort"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"
)

func main() {
	base := flag.String("url", "", "https://127.0.0.1:PORT/public/v1")
	certFile := flag.String("cert", "", "the server's certificate (PEM) to trust")
	pid := flag.Int("pid", 0, "the server's pid, for its peak RSS")
	pwFile := flag.String("admin-password-file", "", "file holding the admin's password")
	conc := flag.Int("c", 300, "concurrent bad logins (at most 1000)")
	addrs := flag.Int("addrs", 40, "attacker source addresses 127.0.0.2.. (at most 200)")
	dur := flag.Duration("d", 20*time.Second, "storm duration (at most 2 min)")
	every := flag.Duration("every", 50*time.Millisecond, "pause between the admin's requests")
	flag.Parse()
	u, err := url.Parse(*base)
	if err != nil || u.Scheme != "https" || !isLoopback(u.Hostname()) || *conc < 1 || *conc > 1000 || *addrs < 1 || *addrs > 200 || *dur > 2*time.Minute {
		fail("give -url https://<loopback>:PORT/public/v1, -c 1..1000, -addrs 1..200, -d up to 2m")
	}
	pem, err := os.ReadFile(*certFile)
	if err != nil {
		fail(err.Error())
	}
	pwb, err := os.ReadFile(*pwFile)
	if err != nil {
		fail(err.Error())
	}
	password := strings.TrimSpace(string(pwb))
	pool := x509.NewCertPool()
	pool.AppendCertsFromPEM(pem)
	client := func(local string, conns int) *http.Client {
		d := &net.Dialer{Timeout: 10 * time.Second, LocalAddr: &net.TCPAddr{IP: net.ParseIP(local)}}
		return &http.Client{Timeout: 30 * time.Second, Transport: &http.Transport{DialContext: d.DialContext,
			TLSClientConfig: &tls.Config{RootCAs: pool}, MaxIdleConnsPerHost: conns}}
	}
	admin := client("127.0.0.1", 1)
	get := func(c *http.Client, user, pw string) (int, error) {
		req, _ := http.NewRequest("GET", *base+"/config/SystemParam", nil)
		req.SetBasicAuth(user, pw)
		resp, err := c.Do(req)
		if err != nil {
			return 0, err
		}
		io.Copy(io.Discard, resp.Body)
		resp.Body.Close()
		return resp.StatusCode, nil
	}
	if code, err := get(admin, "admin", password); err != nil || code != 200 {
		fail(fmt.Sprintf("the admin's first login: %d %v", code, err))
	}
	fmt.Printf("before: VmRSS=%d MiB VmHWM=%d MiB\n", status(*pid, "VmRSS")>>20, status(*pid, "VmHWM")>>20)

	stop := make(chan struct{})
	var wg sync.WaitGroup
	var codes sync.Map // status -> *atomic.Int64
	count := func(k string) {
		v, _ := codes.LoadOrStore(k, new(atomic.Int64))
		v.(*atomic.Int64).Add(1)
	}
	clients := make([]*http.Client, *addrs)
	for i := range clients {
		clients[i] = client(fmt.Sprintf("127.0.0.%d", i+2), *conc / *addrs + 1)
	}
	for i := range *conc {
		wg.Add(1)
		go func() {
			defer wg.Done()
			c := clients[i%*addrs]
			for n := 0; ; n++ {
				select {
				case <-stop:
					return
				default:
				}
				user := "admin"
				if i%2 == 1 {
					user = fmt.Sprintf("guess%d-%d", i, n)
				}
				code, err := get(c, user, fmt.Sprintf("wrong-%d-%d", i, n))
				if err != nil {
					count("error")
					time.Sleep(10 * time.Millisecond)
					continue
				}
				count(strconv.Itoa(code))
			}
		}()
	}
	var lat []time.Duration
	refused := 0
	end := time.Now().Add(*dur)
	for time.Now().Before(end) {
		t0 := time.Now()
		code, err := get(admin, "admin", password)
		if err != nil || code != 200 {
			refused++
		} else {
			lat = append(lat, time.Since(t0))
		}
		time.Sleep(*every)
	}
	close(stop)
	wg.Wait()
	sort.Slice(lat, func(i, j int) bool { return lat[i] < lat[j] })
	q := func(p float64) float64 {
		if len(lat) == 0 {
			return -1
		}
		return float64(lat[min(len(lat)-1, int(p*float64(len(lat))))].Microseconds()) / 1000
	}
	var parts []string
	codes.Range(func(k, v any) bool {
		parts = append(parts, fmt.Sprintf("%s:%d", k, v.(*atomic.Int64).Load()))
		return true
	})
	sort.Strings(parts)
	fmt.Printf("attackers: %d concurrent from %d addresses for %v; answers %s\n", *conc, *addrs, *dur, strings.Join(parts, " "))
	fmt.Printf("admin_requests=%d admin_refused=%d admin_p50_ms=%.1f admin_p99_ms=%.1f admin_max_ms=%.1f peak_rss_mib=%d\n",
		len(lat), refused, q(0.5), q(0.99), q(1), status(*pid, "VmHWM")>>20)
}

func isLoopback(h string) bool {
	ip := net.ParseIP(h)
	return ip != nil && ip.IsLoopback()
}

// status is a field of /proc/<pid>/status in bytes.
func status(pid int, field string) int64 {
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/status", pid))
	if err != nil {
		return -1
	}
	for _, l := range strings.Split(string(b), "\n") {
		if f := strings.Fields(l); len(f) >= 2 && f[0] == field+":" {
			kb, _ := strconv.ParseInt(f[1], 10, 64)
			return kb << 10
		}
	}
	return -1
}

func fail(msg string) {
	fmt.Fprintln(os.Stderr, "loginstorm:", msg)
	os.Exit(2)
}
