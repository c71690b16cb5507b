package connlimit

import (
	"net"
	"sync/atomic"
	"testing"
	"time"
)

// Connections over the per-client cap are closed at once; closing one
// makes room again.
func TestPerClientCap(t *testing.T) {
	raw, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	var refused atomic.Int32
	ln := New(raw, Options{PerClient: 3, Total: 100, Refused: func(string, bool) { refused.Add(1) }})
	defer ln.Close()
	accepted := make(chan net.Conn, 10)
	go func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			accepted <- c
		}
	}()
	var clients []net.Conn
	for range 5 {
		c, err := net.Dial("tcp", raw.Addr().String())
		if err != nil {
			t.Fatal(err)
		}
		defer c.Close()
		clients = append(clients, c)
	}
	var server []net.Conn
	for range 3 {
		server = append(server, <-accepted)
	}
	// The two others are closed by the listener: the client reads EOF.
	closed := 0
	for _, c := range clients[3:] {
		c.SetReadDeadline(time.Now().Add(5 * time.Second))
		if _, err := c.Read(make([]byte, 1)); err != nil {
			closed++
		}
	}
	// Refused is told after the close the clients saw: give it a moment.
	for wait := time.Now().Add(5 * time.Second); refused.Load() < 2 && time.Now().Before(wait); {
		time.Sleep(time.Millisecond)
	}
	if closed != 2 || refused.Load() != 2 {
		t.Fatalf("%d closed, %d refused; want 2", closed, refused.Load())
	}
	if total, mine := ln.Open("127.0.0.1"); total != 3 || mine != 3 {
		t.Errorf("open %d, for the client %d", total, mine)
	}
	server[0].Close()
	server[0].Close() // twice frees one place only
	c, err := net.Dial("tcp", raw.Addr().String())
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	select {
	case <-accepted:
	case <-time.After(5 * time.Second):
		t.Fatal("no room after a close")
	}
	if total, _ := ln.Open("127.0.0.1"); total != 3 {
		t.Errorf("open %d after a double close", total)
	}
}
