package main

import (
	"bytes"
	"errors"
	"io"
	"net"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestCLIRefusesCredentialsInClear: --user's password is never sent over
// plain HTTP to another machine; https and loopback http are fine. No
// connection is made: cliClient only builds the client.
func TestCLIRefusesCredentialsInClear(t *testing.T) {
	for _, tt := range []struct {
		url  string
		fail bool
	}{
		{"http://192.0.2.10:8080", true},
		{"HTTP://switch1.example:8080", true},
		{"http://[2001:db8::1]:8080", true},
		{"https://192.0.2.10", false},
		{"192.0.2.10", false}, // https is assumed
		{"http://127.0.0.1:8080", false},
		{"http://[::1]:8080", false},
		{"http://localhost:8080", false},
	} {
		t.Setenv("SWMGR_PASSWORD", "secret-pw")
		_, _, err := cliClient(cliOptions{url: tt.url, user: "admin"}, "secret-pw", io.Discard)
		if got := err != nil && strings.Contains(err.Error(), "in clear"); got != tt.fail {
			t.Errorf("--url %s --user admin: err %v; want refused: %v", tt.url, err, tt.fail)
		}
	}
}

// The local CLI looks first where `swmgr serve` run by the same user
// listens by default (not root: its own data directory's socket, before
// the system's), skips a socket nothing listens on with a note, and a
// connection error names the address tried and what picks another.
func TestCLIFindsItsServer(t *testing.T) {
	o := &serveOptions{socket: defaultSocketFlag, dataDir: defaultDataDir()}
	if err := o.defaults(); err != nil {
		t.Fatal(err)
	}
	if got := localSockets()[0]; got != o.socket {
		t.Errorf("the CLI looks first at %s; serve listens by default on %s", got, o.socket)
	}
	if os.Geteuid() != 0 && localSockets()[1] != rootSocket {
		t.Errorf("not root, the system's socket comes second: %v", localSockets())
	}

	dir := t.TempDir()
	stale, live := filepath.Join(dir, "stale.sock"), filepath.Join(dir, "live.sock")
	ln, err := net.ListenUnix("unix", &net.UnixAddr{Name: stale, Net: "unix"})
	if err != nil {
		t.Fatal(err)
	}
	ln.SetUnlinkOnClose(false) // as a server killed with -9 leaves it
	ln.Close()
	ln2, err := net.Listen("unix", live)
	if err != nil {
		t.Fatal(err)
	}
	defer ln2.Close()
	var notes bytes.Buffer
	if got := liveSocket([]string{filepath.Join(dir, "missing.sock"), stale, live}, &notes); got != live {
		t.Errorf("chose %q, want the live socket", got)
	}
	if !strings.Contains(notes.String(), "skipping "+stale) {
		t.Errorf("no note of the stale socket skipped: %q", notes.String())
	}
	notes.Reset()
	if got := liveSocket([]string{stale}, &notes); got != "" {
		t.Errorf("chose the stale socket %q", got)
	}

	refused := &net.OpError{Op: "dial", Net: "unix", Err: errors.New("connect: connection refused")}
	for _, o := range []cliOptions{{socket: stale}, {}} {
		_, ep, err := cliClient(o, "", io.Discard)
		if err != nil {
			t.Fatal(err)
		}
		msg := connectHint(refused, o, ep).Error()
		for _, want := range []string{"--socket", "SWMGR_SOCKET", "tried "} {
			if !strings.Contains(msg, want) {
				t.Errorf("%+v: the connection error lacks %q: %s", o, want, msg)
			}
		}
		if o.socket != "" && !strings.Contains(msg, stale) {
			t.Errorf("the error does not name the socket tried: %s", msg)
		}
	}
}
