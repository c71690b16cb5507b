package test

import (
	"crypto/tls"
	"crypto/x509"
	"encoding/pem"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/swmgr/swmgr/internal/testneed"
)

// fleetCA is a CA made with openssl, as a fleet's would be.
type fleetCA struct {
	dir, cert, key string
}

func newFleetCA(t *testing.T) *fleetCA {
	t.Helper()
	testneed.Program(t, "openssl", "openssl")
	dir := t.TempDir()
	ca := &fleetCA{dir: dir, cert: filepath.Join(dir, "ca.pem"), key: filepath.Join(dir, "ca.key")}
	run(t, "openssl", "req", "-x509", "-newkey", "ec", "-pkeyopt", "ec_paramgen_curve:P-256", "-nodes",
		"-keyout", ca.key, "-out", ca.cert, "-subj", "/CN=fleet CA", "-days", "2")
	return ca
}

// enrol makes a key and request with `swmgr cert request` into dir, has the
// CA sign it (keeping the request's names), and returns the files.
func (ca *fleetCA) enrol(t *testing.T, dir, name string, sans ...string) (certFile, keyFile string) {
	t.Helper()
	keyFile, csr, certFile := filepath.Join(dir, name+".key"), filepath.Join(dir, name+".csr"), filepath.Join(dir, name+".pem")
	args := []string{"cert", "request", "--cn", sans[0], "--key", keyFile, "--csr", csr}
	for _, s := range sans {
		args = append(args, "--san", s)
	}
	run(t, swmgrBin, args...)
	if fi, err := os.Stat(keyFile); err != nil || fi.Mode().Perm() != 0o600 {
		t.Fatalf("key file %s: %v %v; want mode 0600", keyFile, fi.Mode(), err)
	}
	out := run(t, "openssl", "req", "-in", csr, "-noout", "-verify", "-text")
	for _, s := range sans {
		if !strings.Contains(out, s) {
			t.Errorf("the request does not name %s:\n%s", s, out)
		}
	}
	run(t, "openssl", "x509", "-req", "-in", csr, "-CA", ca.cert, "-CAkey", ca.key, "-CAcreateserial",
		"-copy_extensions", "copy", "-days", "1", "-out", certFile)
	return certFile, keyFile
}

func serialOf(t *testing.T, certFile string) string {
	t.Helper()
	b, err := os.ReadFile(certFile)
	if err != nil {
		t.Fatal(err)
	}
	block, _ := pem.Decode(b)
	c, err := x509.ParseCertificate(block.Bytes)
	if err != nil {
		t.Fatal(err)
	}
	return c.SerialNumber.String()
}

// install copies src over dst by a rename, as a deployment tool does.
func install(t *testing.T, src, dst string) {
	t.Helper()
	b, err := os.ReadFile(src)
	if err != nil {
		t.Fatal(err)
	}
	tmp := dst + ".new"
	if err := os.WriteFile(tmp, b, 0o600); err != nil {
		t.Fatal(err)
	}
	if err := os.Rename(tmp, dst); err != nil {
		t.Fatal(err)
	}
}

// A switch enrolled with a fleet CA (`swmgr cert request`, signed with
// openssl) serves the CA's certificate on HTTPS and gNMI; a renewed
// certificate and key installed over --tls-cert and --tls-key are served
// from the next handshake on, without a restart, and no handshake fails
// while they are replaced (the key first: a pair that does not match yet).
func TestFleetCertificateEnrolmentAndRenewal(t *testing.T) {
	ca := newFleetCA(t)
	dir := t.TempDir()
	issued, issuedKey := ca.enrol(t, dir, "first", "localhost", "127.0.0.1")
	live, liveKey := filepath.Join(dir, "tls.pem"), filepath.Join(dir, "tls.key")
	install(t, issued, live)
	install(t, issuedKey, liveKey)

	httpsAddr, gnmiAddr := freeAddr(t), freeAddr(t)
	s := startServer(t, "", "--https", httpsAddr, "--gnmi", gnmiAddr, "--tls-cert", live, "--tls-key", liveKey)

	caPEM, err := os.ReadFile(ca.cert)
	if err != nil {
		t.Fatal(err)
	}
	pool := x509.NewCertPool()
	pool.AppendCertsFromPEM(caPEM)
	// served is the serial of the certificate a new connection to addr is
	// shown, verified against the CA.
	served := func(addr string) (string, error) {
		c, err := tls.Dial("tcp", addr, &tls.Config{RootCAs: pool, ServerName: "localhost", NextProtos: []string{"h2", "http/1.1"}})
		if err != nil {
			return "", err
		}
		defer c.Close()
		return c.ConnectionState().PeerCertificates[0].SerialNumber.String(), nil
	}
	for _, addr := range []string{httpsAddr, gnmiAddr} {
		if got, err := served(addr); err != nil || got != serialOf(t, issued) {
			t.Fatalf("%s serves %s (%v); want the CA's first certificate %s", addr, got, err, serialOf(t, issued))
		}
	}
	hc := &http.Client{Transport: &http.Transport{TLSClientConfig: &tls.Config{RootCAs: pool}}}
	if code, body := send(t, hc, "GET", "https://localhost"+httpsAddr[strings.LastIndex(httpsAddr, ":"):]+"/public/v1/config/SystemParam", "admin", blackBoxAdminPassword, ""); code != 200 {
		t.Fatalf("a client trusting the fleet CA: %d %s", code, body)
	}

	// Renewal, while clients keep connecting.
	renewed, renewedKey := ca.enrol(t, dir, "second", "localhost", "127.0.0.1")
	hs := startHandshakes([]string{httpsAddr, gnmiAddr}, func(addr string) error { _, err := served(addr); return err })
	install(t, renewedKey, liveKey)
	// Some handshakes with the key replaced and the certificate not yet.
	for from := hs.count(); hs.count() < from+20; {
		time.Sleep(time.Millisecond)
	}
	install(t, renewed, live)
	got := map[string]string{}
	for _, addr := range []string{httpsAddr, gnmiAddr} {
		got[addr], err = served(addr)
		if err != nil {
			t.Errorf("%s after the renewal: %v", addr, err)
		}
	}
	failures, handshakes := hs.stop()
	for addr, serial := range got {
		if serial != serialOf(t, renewed) {
			t.Errorf("%s serves %s after the renewal; want the renewed certificate %s", addr, serial, serialOf(t, renewed))
		}
	}
	if len(failures) > 0 {
		t.Errorf("%d of %d handshakes failed during the renewal, first: %s", len(failures), handshakes, failures[0])
	}
	if logs := s.logs.String(); !strings.Contains(logs, "certificate reloaded") {
		t.Errorf("the reload is not logged:\n%s", tail(logs, 2000))
	}
}

// handshakes are new TLS connections made to addrs, one after the other
// on each, until stop; each that fails is kept.
type handshakes struct {
	done     chan struct{}
	wg       sync.WaitGroup
	mu       sync.Mutex
	n        int
	failures []string
}

func startHandshakes(addrs []string, handshake func(addr string) error) *handshakes {
	h := &handshakes{done: make(chan struct{})}
	for _, addr := range addrs {
		h.wg.Add(1)
		go func() {
			defer h.wg.Done()
			for {
				select {
				case <-h.done:
					return
				default:
				}
				err := handshake(addr)
				h.mu.Lock()
				h.n++
				if err != nil {
					h.failures = append(h.failures, addr+": "+err.Error())
				}
				h.mu.Unlock()
			}
		}()
	}
	return h
}

// count is the number of handshakes made so far.
func (h *handshakes) count() int {
	h.mu.Lock()
	defer h.mu.Unlock()
	return h.n
}

// stop ends the handshakes and says which failed, of how many.
func (h *handshakes) stop() (failures []string, n int) {
	close(h.done)
	h.wg.Wait()
	return h.failures, h.n
}
