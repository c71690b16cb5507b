package archive

import (
	"bytes"
	"context"
	"errors"
	"net"
	"os"
	"path/filepath"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/swmgr/swmgr/internal/archive/sshdtest"
)

func newSFTP(t *testing.T) *SFTP {
	pins, _, err := OpenHostKeys(filepath.Join(t.TempDir(), "pins.json"))
	if err != nil {
		t.Fatal(err)
	}
	return &SFTP{Pins: pins}
}

func remoteOf(s *sshdtest.Server) Remote {
	return Remote{Host: "127.0.0.1", Port: s.Port, User: s.User, Password: s.Password}
}

var quick = Attempts{Retries: 0, Timeout: 10 * time.Second, Backoff: 50 * time.Millisecond}

// TestSFTPRealServer runs uploads and downloads against OpenSSH's sshd.
func TestSFTPRealServer(t *testing.T) {
	srv := sshdtest.Start(t)
	c := newSFTP(t)
	ctx := context.Background()
	r := remoteOf(srv)
	dst := srv.Home + "/archive/sub/startup-config"
	data := bytes.Repeat([]byte("config line\n"), 10000)

	t.Run("upload makes directories and a 0600 file, download reads it", func(t *testing.T) {
		if err := c.Upload(ctx, r, dst, data, quick); err != nil {
			t.Fatalf("upload: %v\n%s", err, srv.Log())
		}
		got, err := os.ReadFile(dst)
		if err != nil || !bytes.Equal(got, data) {
			t.Fatalf("server file: %v, %d bytes, want %d", err, len(got), len(data))
		}
		fi, _ := os.Stat(dst)
		if fi.Mode().Perm() != 0o600 {
			t.Errorf("mode %v, want 0600", fi.Mode().Perm())
		}
		entries, _ := os.ReadDir(filepath.Dir(dst))
		if len(entries) != 1 {
			t.Errorf("the directory holds %d entries, want just the file (no temporary left)", len(entries))
		}
		back, err := c.Download(ctx, r, dst, quick)
		if err != nil || !bytes.Equal(back, data) {
			t.Fatalf("download: %v, %d bytes", err, len(back))
		}
		if _, ok := c.Pins.Get(Endpoint("127.0.0.1", srv.Port)); !ok {
			t.Error("the host key was not pinned on first use")
		}
	})

	t.Run("an upload never replaces a directory, and a path that names none is refused unsent", func(t *testing.T) {
		dir := srv.Home + "/archive/adir"
		if err := os.MkdirAll(dir+"/inside", 0o755); err != nil {
			t.Fatal(err)
		}
		err := c.Upload(ctx, r, dir, data, Attempts{Retries: 2, Timeout: 10 * time.Second, Backoff: 10 * time.Millisecond})
		if err == nil || !IsPermanent(err) || !strings.Contains(err.Error(), "is a directory") {
			t.Fatalf("upload over a directory: %v; want a permanent refusal", err)
		}
		if fi, err := os.Stat(dir + "/inside"); err != nil || !fi.IsDir() {
			t.Fatalf("the directory was replaced: %v", err)
		}
		entries, _ := os.ReadDir(srv.Home + "/archive")
		for _, e := range entries {
			if strings.HasSuffix(e.Name(), ".tmp") {
				t.Errorf("a temporary file was left: %s", e.Name())
			}
		}
		for _, p := range []string{"/", srv.Home + "/archive/", srv.Home + "//x", srv.Home + "/x\ny", srv.Home + "/x?y", "relative"} {
			if err := c.Upload(ctx, Remote{Host: "127.0.0.1", Port: 1, User: "x"}, p, data, quick); err == nil || !IsPermanent(err) {
				t.Errorf("upload to %q: %v; want a permanent refusal before any connection", p, err)
			}
		}
	})

	t.Run("wrong password is refused at once, without retries", func(t *testing.T) {
		bad := r
		bad.Password = "not-the-password"
		retries := 0
		err := c.Upload(ctx, bad, dst, data, Attempts{Retries: 3, Timeout: 10 * time.Second, Backoff: 2 * time.Second,
			OnRetry: func(int, error) { retries++ }})
		if !errors.Is(err, ErrAuth) || !IsPermanent(err) {
			t.Fatalf("err %v, want ErrAuth", err)
		}
		if retries != 0 {
			t.Errorf("a refused password was retried %d times", retries)
		}
	})

	t.Run("missing file", func(t *testing.T) {
		if _, err := c.Download(ctx, r, srv.Home+"/nope", quick); err == nil || !strings.Contains(err.Error(), "nope") {
			t.Fatalf("err %v", err)
		}
	})

	t.Run("changed host key refused until the pin is forgotten", func(t *testing.T) {
		srv.NewHostKey()
		srv.Restart()
		err := c.Upload(ctx, r, dst, data, Attempts{Retries: 2, Timeout: 10 * time.Second, Backoff: time.Second})
		if !errors.Is(err, ErrHostKeyChanged) {
			t.Fatalf("err %v, want ErrHostKeyChanged", err)
		}
		if err := c.Pins.Forget(Endpoint("127.0.0.1", srv.Port)); err != nil {
			t.Fatal(err)
		}
		if err := c.Upload(ctx, r, dst, data, quick); err != nil {
			t.Fatalf("after forgetting the pin: %v", err)
		}
	})

	t.Run("sshd killed mid-upload then back: retried", func(t *testing.T) {
		big := bytes.Repeat([]byte("0123456789abcdef"), 8<<20/16) // 8 MiB
		// The kill must land while the file is being written: on a loaded
		// machine the upload can finish between seeing its temporary file
		// and the kill. Such a round proves nothing, and a new upload
		// tries again; three rounds that all miss fail the test.
		for round := 1; ; round++ {
			errc := make(chan error, 1)
			var failed []error
			go func() {
				errc <- c.Upload(ctx, r, dst, big, Attempts{Retries: 5, Timeout: 20 * time.Second, Backoff: 300 * time.Millisecond,
					OnRetry: func(_ int, err error) { failed = append(failed, err) }})
			}()
			// Wait for the upload to start writing, then kill the server.
			deadline := time.Now().Add(10 * time.Second)
			for !tempExists(filepath.Dir(dst)) && time.Now().Before(deadline) {
				time.Sleep(time.Millisecond)
			}
			srv.Stop()
			time.Sleep(200 * time.Millisecond)
			srv.Restart()
			if err := <-errc; err != nil {
				t.Fatalf("upload after the restart: %v", err)
			}
			got, _ := os.ReadFile(dst)
			if !bytes.Equal(got, big) {
				t.Fatalf("the server holds %d bytes, want %d", len(got), len(big))
			}
			if len(failed) > 0 {
				t.Logf("round %d: failed attempts before the success: %v", round, failed)
				return
			}
			if round == 3 {
				t.Fatal("no attempt failed in 3 rounds: sshd was never killed during the upload")
			}
			t.Logf("round %d: the upload finished before sshd was killed; again", round)
			os.Remove(dst)
		}
	})

	t.Run("a server that accepts and hangs is cut at Timeout", func(t *testing.T) {
		port := sshdtest.HangingServer(t)
		// Without the Timeout the upload would wait forever: the guard
		// below catches a hang (it is not a performance figure).
		done := make(chan error, 1)
		go func() {
			done <- c.Upload(ctx, Remote{Host: "127.0.0.1", Port: port, User: "x", Password: "y"}, "/x", data, Attempts{Retries: 1, Timeout: 500 * time.Millisecond, Backoff: 100 * time.Millisecond})
		}()
		var err error
		select {
		case err = <-done:
		case <-time.After(2 * time.Minute):
			t.Fatal("an upload to a hanging server was not cut by its Timeout")
		}
		if err == nil {
			t.Fatal("upload to a hanging server succeeded")
		}
		if !strings.Contains(err.Error(), "2 attempts") {
			t.Errorf("err %v does not say it retried", err)
		}
	})

	t.Run("unreachable port", func(t *testing.T) {
		err := c.Upload(ctx, Remote{Host: "127.0.0.1", Port: 1, User: "x", Password: "y"}, "/x", data, quick)
		if err == nil || !strings.Contains(err.Error(), "connect") {
			t.Fatalf("err %v", err)
		}
	})
}

func tempExists(dir string) bool {
	entries, _ := os.ReadDir(dir)
	for _, e := range entries {
		if strings.HasSuffix(e.Name(), ".tmp") {
			return true
		}
	}
	return false
}

// TestSFTPWithoutUserDoesNotConnect: an archive server whose Username is
// empty is not tried at all (every attempt would fail at the server and
// count against the switch there); the error says what to set, and is
// permanent (no retries).
func TestSFTPWithoutUserDoesNotConnect(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	var accepted atomic.Int32
	go func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			accepted.Add(1)
			c.Close()
		}
	}()
	port := ln.Addr().(*net.TCPAddr).Port
	s := newSFTP(t)
	r := Remote{Host: "127.0.0.1", Port: port, Password: "a-password"}
	a := Attempts{Retries: 3, Timeout: 5 * time.Second, Backoff: 10 * time.Millisecond}
	uerr := s.Upload(context.Background(), r, "/tmp/x", []byte("data"), a)
	_, derr := s.Download(context.Background(), r, "/tmp/x", a)
	for _, err := range []error{uerr, derr} {
		if err == nil || !strings.Contains(err.Error(), "Username") || !IsPermanent(err) {
			t.Errorf("with no user: %v (permanent %v); want a permanent error naming Username", err, IsPermanent(err))
		}
	}
	time.Sleep(50 * time.Millisecond)
	if n := accepted.Load(); n != 0 {
		t.Errorf("%d connection(s) made with no user to log in as", n)
	}
}
