package test

import (
	"net"
	"os"
	"os/exec"
	"testing"
	"time"
)

// One client (an OS user on loopback) cannot hold more than
// --max-conns-per-client connections (the excess is closed at once, others
// are served), and connections that send no complete headers are closed by
// --header-timeout, so descriptors cannot be exhausted by slow clients.
func TestConnectionCapAndHeaderDeadline(t *testing.T) {
	s := startServer(t, "", "--max-conns-per-client", "8", "--header-timeout", "2s")
	_, port, _ := net.SplitHostPort(s.addr)
	d := net.Dialer{LocalAddr: &net.TCPAddr{IP: net.ParseIP("127.0.0.2")}, Timeout: 5 * time.Second}
	var held []net.Conn
	defer func() {
		for _, c := range held {
			c.Close()
		}
	}()
	for range 8 {
		c, err := d.Dial("tcp", "127.0.0.1:"+port)
		if err != nil {
			t.Fatal(err)
		}
		c.Write([]byte("GET /public/v1/config/NtpServers HTTP/1.1\r\n")) // headers never finished
		held = append(held, c)
	}
	time.Sleep(200 * time.Millisecond) // the server has accepted them
	extra, err := d.Dial("tcp", "127.0.0.1:"+port)
	if err != nil {
		t.Fatal(err)
	}
	defer extra.Close()
	extra.SetReadDeadline(time.Now().Add(1500 * time.Millisecond))
	if _, err := extra.Read(make([]byte, 1)); err == nil || isTimeout(err) {
		t.Errorf("the 9th connection from one address was not closed at once: %v", err)
	}
	// Another client is served meanwhile: on loopback a client is an OS
	// user (all of this test's connections are its own user's), so another
	// user's.
	if os.Geteuid() == 0 {
		out, err := exec.Command("setpriv", "--reuid=65534", "--regid=65534", "--clear-groups", "--",
			"curl", "-sS", "-o", "/dev/null", "-w", "%{http_code}", s.base+"/config/NtpServers").CombinedOutput()
		if err != nil || string(out) != "200" {
			t.Errorf("another OS user (nobody) while this one is at its cap: %v %s", err, out)
		}
	} else if os.Getenv("CI") != "" {
		t.Error("checking that another OS user is served needs root (setpriv); CI runs as root")
	}
	// The unfinished headers are cut by the deadline.
	start := time.Now()
	for _, c := range held {
		c.SetReadDeadline(time.Now().Add(10 * time.Second))
		buf := make([]byte, 512)
		for {
			if _, err := c.Read(buf); err != nil {
				if isTimeout(err) {
					t.Fatalf("a connection with unfinished headers is still open after %v with --header-timeout 2s", time.Since(start))
				}
				break
			}
		}
	}
	// Their slots are free again.
	c, err := d.Dial("tcp", "127.0.0.1:"+port)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	c.Write([]byte("GET /public/v1/config/NtpServers HTTP/1.1\r\nHost: 127.0.0.1\r\nConnection: close\r\n\r\n"))
	c.SetReadDeadline(time.Now().Add(10 * time.Second))
	buf := make([]byte, 12)
	if n, err := c.Read(buf); err != nil || string(buf[:n]) != "HTTP/1.1 200" {
		t.Errorf("after the deadline, a new connection from the address: %q %v", buf[:n], err)
	}
}

func isTimeout(err error) bool {
	ne, ok := err.(net.Error)
	return ok && ne.Timeout()
}
