package ztp

import (
	"bytes"
	"context"
	"crypto/rand"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/swmgr/swmgr/internal/aaa/aaatest"
	"github.com/swmgr/swmgr/internal/testneed"
)

// tftpServer runs Debian's dnsmasq as a TFTP server only (no DNS, no
// DHCP) on the loopback of a network namespace of its own (TFTP's port
// 69 is then the test's), serving the files of root.
func tftpServer(t *testing.T) (ns, root string) {
	t.Helper()
	testneed.Root(t, "network namespaces")
	testneed.Program(t, "iproute2", "ip")
	testneed.Program(t, "dnsmasq-base", "dnsmasq", "/usr/sbin/dnsmasq")
	ns = fmt.Sprintf("ztptftp%d", os.Getpid())
	if out, err := exec.Command("ip", "netns", "add", ns).CombinedOutput(); err != nil {
		t.Fatalf("ip netns add: %v %s", err, out)
	}
	t.Cleanup(func() { exec.Command("ip", "netns", "del", ns).Run() })
	if out, err := exec.Command("ip", "-n", ns, "link", "set", "lo", "up").CombinedOutput(); err != nil {
		t.Fatalf("ip link set lo up: %v %s", err, out)
	}
	dir := t.TempDir()
	root = filepath.Join(dir, "tftp")
	os.Mkdir(root, 0o755)
	os.Chmod(dir, 0o755)
	cmd := exec.Command("ip", "netns", "exec", ns, "dnsmasq", "--no-daemon", "--conf-file=/dev/null", "--port=0",
		"--user=root", "--listen-address=127.0.0.1", "--bind-interfaces", "--enable-tftp", "--tftp-root="+root,
		"--pid-file="+filepath.Join(dir, "pid"), "--log-facility=-")
	out := &bytes.Buffer{}
	cmd.Stdout, cmd.Stderr = out, out
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		cmd.Process.Kill()
		cmd.Wait()
		if t.Failed() {
			t.Logf("dnsmasq:\n%s", out.String())
		}
	})
	return ns, root
}

// TestTFTPFetchFromDnsmasq fetches tftp:// URLs from dnsmasq's TFTP
// server: files of one block, of many (the blksize option agreed), of an
// exact multiple of the block (the last block empty); a missing file and a
// file over the bound are refused with the reason.
func TestTFTPFetchFromDnsmasq(t *testing.T) {
	ns, root := tftpServer(t)
	random := func(n int) []byte { b := make([]byte, n); rand.Read(b); return b }
	files := map[string][]byte{
		"small.json":    []byte(`{"SchemaVersion":1}`),
		"large.bin":     random(200_000),
		"multiple.bin":  random(3 * tftpBlockSize),
		"dir/nested.js": []byte("nested"),
		"big.bin":       random(100_000),
	}
	for name, data := range files {
		os.MkdirAll(filepath.Dir(filepath.Join(root, name)), 0o755)
		if err := os.WriteFile(filepath.Join(root, name), data, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	// The fetcher's socket is in the server's namespace, as a lease's on
	// a front-panel port of a dataplane in a namespace of its own.
	f := NewFetcher(nil, 30*time.Second).InNetns(ns)
	for _, tc := range []struct {
		name, url string
		max       int64
		want      []byte
		err       string
	}{
		{"one block", "tftp://127.0.0.1/small.json", MaxDocument, files["small.json"], ""},
		{"many blocks", "tftp://127.0.0.1/large.bin", MaxDocument, files["large.bin"], ""},
		{"a multiple of the block", "tftp://127.0.0.1/multiple.bin", MaxDocument, files["multiple.bin"], ""},
		{"in a directory", "tftp://127.0.0.1/dir/nested.js", MaxDocument, files["dir/nested.js"], ""},
		{"missing file", "tftp://127.0.0.1/missing.json", MaxDocument, nil, "the server answered error 1"},
		{"over the bound", "tftp://127.0.0.1/big.bin", 64 << 10, nil, "larger than 65536"},
		{"no file named", "tftp://127.0.0.1/", MaxDocument, nil, "names no file"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var got []byte
			var err error
			got, err = f.Get(context.Background(), tc.url, tc.max)
			if tc.err != "" {
				if err == nil || !strings.Contains(err.Error(), tc.err) {
					t.Fatalf("Get %s: %v, want an error saying %q", tc.url, err, tc.err)
				}
				return
			}
			if err != nil {
				t.Fatalf("Get %s: %v", tc.url, err)
			}
			if !bytes.Equal(got, tc.want) {
				t.Fatalf("Get %s: %d bytes, not the file's %d", tc.url, len(got), len(tc.want))
			}
		})
	}
}

// TestTFTPNoServerTimesOut: a TFTP server that never answers fails the
// fetch after the retries, saying so.
func TestTFTPNoServerTimesOut(t *testing.T) {
	ns, _ := tftpServer(t)
	f := NewFetcher(nil, 30*time.Second)
	f.TFTP = TFTPClient{Timeout: 100 * time.Millisecond, Retries: 2}
	var err error
	aaatest.InNetns(t, ns, func() { _, err = f.Get(context.Background(), "tftp://127.0.0.2:6969/x", MaxDocument) })
	if err == nil || !strings.Contains(err.Error(), "no answer from 127.0.0.2:6969 after 3 tries") {
		t.Fatalf("Get: %v, want no answer after 3 tries", err)
	}
}
