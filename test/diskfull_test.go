package test

import (
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
)

// smallFS mounts a tmpfs of size bytes for the test (root only), unmounted
// at the end even if the test fails.
func smallFS(t *testing.T, size string) string {
	t.Helper()
	if os.Geteuid() != 0 {
		t.Skip("mounting a small tmpfs to fill needs root; run as root (CI does)")
	}
	dir := t.TempDir()
	if out, err := exec.Command("mount", "-t", "tmpfs", "-o", "size="+size+",mode=0700", "swmgr-diskfull", dir).CombinedOutput(); err != nil {
		t.Fatalf("mount tmpfs: %v\n%s", err, out)
	}
	t.Cleanup(func() {
		if out, err := exec.Command("umount", "-l", dir).CombinedOutput(); err != nil {
			t.Errorf("umount %s: %v\n%s", dir, err, out)
		}
	})
	return dir
}

// fill writes a file until the file system is full.
func fill(t *testing.T, path string) {
	t.Helper()
	f, err := os.Create(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	buf := make([]byte, 4096)
	for {
		if _, err := f.Write(buf); err != nil {
			if !errors.Is(err, syscall.ENOSPC) {
				t.Fatal(err)
			}
			return
		}
	}
}

// A write on a full disk is a 507 that says so (not a
// 500), changes nothing, and the service keeps answering; once space is
// freed, writes work again.
func TestFullDiskIs507(t *testing.T) {
	fs := smallFS(t, "8m")
	dir := filepath.Join(fs, "data")
	s := startServer(t, dir)
	s.expect(t, 201, "POST", "/config/NtpServer", `{"IpAddr":"192.0.2.1"}`)
	filler := filepath.Join(fs, "filler")
	fill(t, filler)
	refused := ""
	for i := 2; i < 200 && refused == ""; i++ {
		addr := fmt.Sprintf("192.0.2.%d", i)
		r := s.do(t, "POST", "/config/NtpServer", `{"IpAddr":"`+addr+`"}`)
		switch r.code {
		case 201: // a page freed earlier took it
		case 507:
			if !strings.Contains(string(r.raw), `"Code":"storage_full"`) || !strings.Contains(string(r.raw), "free space") {
				t.Fatalf("507 body: %s", r)
			}
			refused = addr
		default:
			t.Fatalf("create on a full disk: %s", r)
		}
	}
	if refused == "" {
		t.Fatal("200 creates on a full file system all succeeded")
	}
	s.expect(t, 404, "GET", "/config/NtpServer?IpAddr="+refused, "")
	s.expect(t, 200, "GET", "/config/NtpServer?IpAddr=192.0.2.1", "")
	if err := os.Remove(filler); err != nil {
		t.Fatal(err)
	}
	s.expect(t, 201, "POST", "/config/NtpServer", `{"IpAddr":"`+refused+`"}`)
	s.stop(t)
	s = startServer(t, dir)
	s.expect(t, 200, "GET", "/config/NtpServer?IpAddr="+refused, "")
}
