package tlscert

import (
	"crypto"
	"crypto/tls"
	"crypto/x509"
	"encoding/pem"
	"net"
	"path/filepath"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/swmgr/swmgr/internal/atomicfile"
)

// A certificate replaced in its files is served from the next handshake
// on; while the key is replaced before the certificate (a pair that does
// not match), the old pair is served: no handshake fails meanwhile.
func TestWatchServesTheReplacedCertificate(t *testing.T) {
	dir := t.TempDir()
	certFile, keyFile := filepath.Join(dir, "cert.pem"), filepath.Join(dir, "key.pem")
	write := func(certPEM, keyPEM []byte) {
		t.Helper()
		if keyPEM != nil {
			if err := atomicfile.Replace(keyFile, keyPEM, 0o600); err != nil {
				t.Fatal(err)
			}
		}
		if certPEM != nil {
			if err := atomicfile.Replace(certFile, certPEM, 0o644); err != nil {
				t.Fatal(err)
			}
		}
	}
	oldCert, oldKey, err := SelfSigned([]string{"old.example"}, time.Now())
	if err != nil {
		t.Fatal(err)
	}
	newCert, newKey, err := SelfSigned([]string{"new.example"}, time.Now())
	if err != nil {
		t.Fatal(err)
	}
	write(oldCert, oldKey)
	var reloads, refused int
	src, err := Watch(certFile, keyFile, func(_ tls.Certificate, err error) {
		if err != nil {
			refused++
		} else {
			reloads++
		}
	})
	if err != nil {
		t.Fatal(err)
	}
	addr := serveHandshakes(t, src.Config())
	served := func() (string, error) {
		c, err := tls.Dial("tcp", addr, &tls.Config{InsecureSkipVerify: true})
		if err != nil {
			return "", err
		}
		defer c.Close()
		return c.ConnectionState().PeerCertificates[0].DNSNames[0], nil
	}
	if name, err := served(); err != nil || name != "old.example" {
		t.Fatalf("before: %q %v", name, err)
	}

	// Clients keep connecting while the files are replaced.
	stop := make(chan struct{})
	var wg sync.WaitGroup
	var mu sync.Mutex
	var failures []error
	handshakes := 0
	wg.Add(1)
	go func() {
		defer wg.Done()
		for {
			select {
			case <-stop:
				return
			default:
			}
			_, err := served()
			mu.Lock()
			handshakes++
			if err != nil {
				failures = append(failures, err)
			}
			mu.Unlock()
		}
	}()
	write(nil, newKey) // the key first: the pair does not match yet
	if name, err := served(); err != nil || name != "old.example" {
		t.Errorf("with the new key and the old certificate: %q %v; want the old pair served", name, err)
	}
	write(newCert, nil)
	name, err := served()
	close(stop)
	wg.Wait()
	if err != nil || name != "new.example" {
		t.Errorf("after the replacement: %q %v; want new.example", name, err)
	}
	if len(failures) > 0 {
		t.Errorf("%d of %d handshakes failed during the replacement: %v", len(failures), handshakes, failures[0])
	}
	if refused != 1 || reloads != 1 {
		t.Errorf("%d readings refused (the mismatched pair), %d taken; want 1 and 1", refused, reloads)
	}
	if got := src.Certificate().Leaf.DNSNames; !slices.Equal(got, []string{"new.example"}) {
		t.Errorf("Certificate: %v", got)
	}
}

// The request swmgr makes parses, is signed by its key, and names what it
// was asked to.
func TestRequest(t *testing.T) {
	keyPEM, csrPEM, err := Request("sw1.example.net", []string{"sw1.example.net", "192.0.2.11", "2001:db8::11"})
	if err != nil {
		t.Fatal(err)
	}
	block, _ := pem.Decode(csrPEM)
	if block == nil || block.Type != "CERTIFICATE REQUEST" {
		t.Fatalf("not a CSR: %q", csrPEM)
	}
	csr, err := x509.ParseCertificateRequest(block.Bytes)
	if err != nil {
		t.Fatal(err)
	}
	if err := csr.CheckSignature(); err != nil {
		t.Errorf("signature: %v", err)
	}
	if csr.Subject.CommonName != "sw1.example.net" || !slices.Equal(csr.DNSNames, []string{"sw1.example.net"}) || len(csr.IPAddresses) != 2 || !csr.IPAddresses[1].Equal(net.ParseIP("2001:db8::11")) {
		t.Errorf("names: %q %v %v", csr.Subject.CommonName, csr.DNSNames, csr.IPAddresses)
	}
	kb, _ := pem.Decode(keyPEM)
	key, err := x509.ParsePKCS8PrivateKey(kb.Bytes)
	if err != nil {
		t.Fatal(err)
	}
	pub, err := x509.MarshalPKIXPublicKey(key.(crypto.Signer).Public())
	want, _ := x509.MarshalPKIXPublicKey(csr.PublicKey)
	if err != nil || string(pub) != string(want) {
		t.Error("the request is not for the key")
	}
	if _, _, err := Request(" ", nil); err == nil {
		t.Error("a request without a common name")
	}
}

// serveHandshakes serves TLS with cfg on a loopback port until the test
// ends: each connection's handshake, then a byte (which a client reads
// once the server took its certificate), then the end.
func serveHandshakes(tb testing.TB, cfg *tls.Config) string {
	tb.Helper()
	ln, err := tls.Listen("tcp", "127.0.0.1:0", cfg)
	if err != nil {
		tb.Fatal(err)
	}
	tb.Cleanup(func() { ln.Close() })
	go func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			go func() {
				if c.(*tls.Conn).Handshake() == nil {
					c.Write([]byte("x"))
				}
				c.Close()
			}()
		}
	}()
	return ln.Addr().String()
}
