package tlscert

import (
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/tls"
	"crypto/x509"
	"encoding/pem"
	"math/big"
	"net"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"
)

func TestLoadOrCreateKeepsTheCertificate(t *testing.T) {
	dir := t.TempDir()
	cert, created, err := LoadOrCreate(dir, []string{"switch1", "127.0.0.1", "::1"})
	if err != nil || !created {
		t.Fatalf("first start: %v %v", created, err)
	}
	leaf := cert.Leaf
	if _, ok := leaf.PublicKey.(*ecdsa.PublicKey); !ok {
		t.Errorf("key is %T, want ECDSA", leaf.PublicKey)
	}
	if !slices.Equal(leaf.DNSNames, []string{"switch1"}) || len(leaf.IPAddresses) != 2 {
		t.Errorf("SANs: %v %v", leaf.DNSNames, leaf.IPAddresses)
	}
	if fi, err := os.Stat(filepath.Join(dir, KeyFile)); err != nil || fi.Mode().Perm() != 0o600 {
		t.Errorf("key file: %v %v", fi.Mode(), err)
	}
	again, created, err := LoadOrCreate(dir, []string{"other"})
	if err != nil || created {
		t.Fatalf("second start: %v %v", created, err)
	}
	if Fingerprint(again) != Fingerprint(cert) || len(Fingerprint(cert)) != 95 {
		t.Errorf("fingerprint changed: %s, %s", Fingerprint(cert), Fingerprint(again))
	}
	os.Remove(filepath.Join(dir, CertFile))
	if _, _, err := LoadOrCreate(dir, nil); err == nil {
		t.Error("a key without its certificate was accepted (or replaced)")
	}
}

func TestLoadGivenFiles(t *testing.T) {
	dir := t.TempDir()
	c, k, err := SelfSigned([]string{"example.test"}, time.Now())
	if err != nil {
		t.Fatal(err)
	}
	cp, kp := filepath.Join(dir, "c.pem"), filepath.Join(dir, "k.pem")
	os.WriteFile(cp, c, 0o644)
	os.WriteFile(kp, k, 0o600)
	cert, err := Load(cp, kp)
	if err != nil || cert.Leaf.DNSNames[0] != "example.test" {
		t.Fatalf("%v %v", cert.Leaf, err)
	}
	if _, err := Load(cp, filepath.Join(dir, "missing.pem")); err == nil {
		t.Error("a missing key was accepted")
	}
}

// A client that pins the certificate (trusts exactly it) connects over TLS
// 1.2 or 1.3; a TLS 1.1 client is refused.
func TestPinnedClientAndMinVersion(t *testing.T) {
	cert, _, err := LoadOrCreate(t.TempDir(), Hosts("127.0.0.1:0"))
	if err != nil {
		t.Fatal(err)
	}
	srv := httptest.NewUnstartedServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {}))
	srv.TLS = Config(cert)
	srv.StartTLS()
	defer srv.Close()
	pool := x509.NewCertPool()
	pool.AddCert(cert.Leaf)
	for _, tc := range []struct {
		name    string
		max     uint16
		wantErr bool
	}{{"tls1.3", tls.VersionTLS13, false}, {"tls1.2", tls.VersionTLS12, false}, {"tls1.1", tls.VersionTLS11, true}} {
		t.Run(tc.name, func(t *testing.T) {
			c := &http.Client{Transport: &http.Transport{TLSClientConfig: &tls.Config{RootCAs: pool, MinVersion: tls.VersionTLS10, MaxVersion: tc.max}}}
			resp, err := c.Get(srv.URL)
			if err == nil {
				resp.Body.Close()
			}
			if (err != nil) != tc.wantErr {
				t.Errorf("err = %v, want error %v", err, tc.wantErr)
			}
		})
	}
}

func TestHosts(t *testing.T) {
	name, _ := os.Hostname()
	for _, tc := range []struct {
		listen []string
		want   []string
	}{
		{[]string{"127.0.0.1:443"}, []string{"localhost", "127.0.0.1"}},
		{[]string{"[::1]:8443", "switch.example:443"}, []string{"localhost", "::1", "switch.example"}},
		{[]string{":443"}, []string{"localhost", "127.0.0.1", "::1"}},
		{[]string{"0.0.0.0:443"}, []string{"localhost", "127.0.0.1", "::1"}},
	} {
		got := Hosts(tc.listen...)
		for _, w := range append(tc.want, name) {
			if !slices.Contains(got, w) {
				t.Errorf("Hosts(%v) = %v: no %s", tc.listen, got, w)
			}
		}
		if tc.listen[0] == "127.0.0.1:443" {
			for _, h := range got {
				if ip := net.ParseIP(h); ip != nil && !ip.IsLoopback() {
					t.Errorf("Hosts(%v) names a non-listen address %s", tc.listen, h)
				}
			}
		}
	}
}

// Check refuses what a listener should not serve: a key of another
// certificate, a certificate outside its validity, one for clients only.
func TestCheck(t *testing.T) {
	now := time.Now()
	certPEM, keyPEM, err := SelfSigned([]string{"localhost"}, now)
	if err != nil {
		t.Fatal(err)
	}
	_, otherKey, err := SelfSigned([]string{"localhost"}, now)
	if err != nil {
		t.Fatal(err)
	}
	clientOnly := func() ([]byte, []byte) {
		key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
		if err != nil {
			t.Fatal(err)
		}
		tmpl := &x509.Certificate{SerialNumber: big.NewInt(7), NotBefore: now.Add(-time.Hour), NotAfter: now.Add(time.Hour),
			ExtKeyUsage: []x509.ExtKeyUsage{x509.ExtKeyUsageClientAuth}}
		der, err := x509.CreateCertificate(rand.Reader, tmpl, tmpl, &key.PublicKey, key)
		if err != nil {
			t.Fatal(err)
		}
		kder, _ := x509.MarshalPKCS8PrivateKey(key)
		return pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: der}), pem.EncodeToMemory(&pem.Block{Type: "PRIVATE KEY", Bytes: kder})
	}
	clientCert, clientKey := clientOnly()
	for _, c := range []struct {
		name      string
		cert, key []byte
		at        time.Time
		want      string // "" valid, else in the error
	}{
		{"valid", certPEM, keyPEM, now, ""},
		{"another key", certPEM, otherKey, now, "private key does not match"},
		{"expired", certPEM, keyPEM, now.Add(Validity + time.Hour), "expired"},
		{"not yet valid", certPEM, keyPEM, now.Add(-2 * time.Hour), "not valid before"},
		{"for clients only", clientCert, clientKey, now, "extended key usage"},
		{"not PEM", []byte("junk"), keyPEM, now, "failed to find any PEM data"},
	} {
		t.Run(c.name, func(t *testing.T) {
			_, err := Check(c.cert, c.key, c.at)
			switch {
			case c.want == "" && err != nil:
				t.Errorf("refused: %v", err)
			case c.want != "" && (err == nil || !strings.Contains(err.Error(), c.want)):
				t.Errorf("%v, want an error with %q", err, c.want)
			}
		})
	}
}
