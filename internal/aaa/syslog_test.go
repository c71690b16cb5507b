package aaa

import (
	"log/slog"
	"net"
	"strings"
	"testing"
	"time"
)

// TestSyslogAttrsStayOneLine: an attribute value with a newline, an ESC or
// a line separator (a user name from a failed login) is quoted with its
// escapes in the message a collector receives, so it cannot forge a line
// of the collector's log or drive a terminal that shows it.
func TestSyslogAttrsStayOneLine(t *testing.T) {
	pc, err := net.ListenPacket("udp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer pc.Close()
	f := NewForwarder()
	defer f.Close()
	f.Configure([]Collector{{Name: "127.0.0.1", Addr: pc.LocalAddr().String(), Severity: 7}})
	log := slog.New(f.Handler(slog.DiscardHandler))
	log.Warn("login failed\n<11>1 forged", "user", "bob\n<11>1 forged", "term", "\x1b[2J", "sep", "a\u2028b", "bytes", "a\xffb")
	pc.SetReadDeadline(time.Now().Add(10 * time.Second))
	buf := make([]byte, 4096)
	n, _, err := pc.ReadFrom(buf)
	if err != nil {
		t.Fatal(err)
	}
	msg := string(buf[:n])
	if strings.ContainsAny(msg, "\n\x1b\u2028") {
		t.Errorf("raw control or separator in %q", msg)
	}
	for _, want := range []string{`- - "login failed\n<11>1 forged" `, `user="bob\n<11>1 forged"`, `term="\x1b[2J"`, `sep="a\u2028b"`, `bytes="a\xffb"`} {
		if !strings.Contains(msg, want) {
			t.Errorf("%q lacks %s", msg, want)
		}
	}
}
