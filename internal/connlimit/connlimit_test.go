package connlimit

import (
	"errors"
	"net"
	"os"
	"strconv"
	"sync/atomic"
	"testing"
	"time"

	"github.com/swmgr/swmgr/internal/peercred"
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
	me := "uid:" + strconv.Itoa(os.Getuid()) // a local client is its OS user
	if total, mine := ln.Open(me); total != 3 || mine != 3 {
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
	if total, _ := ln.Open(me); total != 3 {
		t.Errorf("open %d after a double close", total)
	}
}

// Local clients are counted per OS user, others per address; a connection
// keeps the answer of its lookup at accept, which peercred.Of returns
// without asking the kernel again.
func TestClientIsTheLocalUser(t *testing.T) {
	raw, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	answers := make(chan error, 10) // nil: uid 1000; else that error
	var lookups atomic.Int32
	ln := New(raw, Options{PerClient: 1, Cred: func(c net.Conn) (peercred.Cred, error) {
		lookups.Add(1)
		if err := <-answers; err != nil {
			return peercred.Cred{}, err
		}
		return peercred.Cred{UID: 1000}, nil
	}})
	defer ln.Close()
	accept := func(answer error) net.Conn {
		t.Helper()
		c, err := net.Dial("tcp", raw.Addr().String())
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { c.Close() })
		answers <- answer
		sc, err := ln.Accept()
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { sc.Close() })
		return sc
	}
	// uid 1000 and an unidentified client from 127.0.0.1 each hold one.
	owned := accept(nil)
	unknown := accept(peercred.ErrNotLive)
	if _, n := ln.Open("uid:1000"); n != 1 {
		t.Errorf("uid 1000 holds %d", n)
	}
	if _, n := ln.Open("127.0.0.1"); n != 1 {
		t.Errorf("the address holds %d", n)
	}
	before := lookups.Load()
	if cred, err := peercred.Of(owned); err != nil || cred.UID != 1000 {
		t.Errorf("Of the accepted connection: %+v %v", cred, err)
	}
	if _, err := peercred.Of(unknown); !errors.Is(err, peercred.ErrNotLive) {
		t.Errorf("Of the unidentified connection: %v", err)
	}
	if lookups.Load() != before {
		t.Error("Of asked again")
	}
}
