package tlscert

import (
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/tls"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/pem"
	"math/big"
	"os"
	"path/filepath"
	"testing"
	"time"
)

type ca struct {
	cert *x509.Certificate
	key  *ecdsa.PrivateKey
	pem  []byte
}

func newCA(t testing.TB, name string) ca {
	t.Helper()
	key, _ := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	tmpl := &x509.Certificate{SerialNumber: big.NewInt(1), Subject: pkix.Name{CommonName: name}, NotBefore: time.Now().Add(-time.Hour), NotAfter: time.Now().Add(time.Hour),
		IsCA: true, BasicConstraintsValid: true, KeyUsage: x509.KeyUsageCertSign | x509.KeyUsageCRLSign}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, tmpl, &key.PublicKey, key)
	if err != nil {
		t.Fatal(err)
	}
	c, _ := x509.ParseCertificate(der)
	return ca{c, key, pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: der})}
}

func (c ca) client(t testing.TB, serial int64, notAfter time.Time) tls.Certificate {
	t.Helper()
	key, _ := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	tmpl := &x509.Certificate{SerialNumber: big.NewInt(serial), Subject: pkix.Name{CommonName: "client"}, NotBefore: time.Now().Add(-2 * time.Hour), NotAfter: notAfter,
		KeyUsage: x509.KeyUsageDigitalSignature, ExtKeyUsage: []x509.ExtKeyUsage{x509.ExtKeyUsageClientAuth}}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, c.cert, &key.PublicKey, c.key)
	if err != nil {
		t.Fatal(err)
	}
	return tls.Certificate{Certificate: [][]byte{der}, PrivateKey: key}
}

func (c ca) crl(t testing.TB, serials ...int64) []byte {
	t.Helper()
	var entries []x509.RevocationListEntry
	for _, s := range serials {
		entries = append(entries, x509.RevocationListEntry{SerialNumber: big.NewInt(s), RevocationTime: time.Now()})
	}
	der, err := x509.CreateRevocationList(rand.Reader, &x509.RevocationList{Number: big.NewInt(1), ThisUpdate: time.Now(), NextUpdate: time.Now().Add(time.Hour), RevokedCertificateEntries: entries}, c.cert, c.key)
	if err != nil {
		t.Fatal(err)
	}
	return pem.EncodeToMemory(&pem.Block{Type: "X509 CRL", Bytes: der})
}

// A Source that trusts clients checks a client certificate given against
// the trust bundle and lists its files hold at each handshake: a
// certificate of another CA, an expired one, a revoked one are refused;
// without a certificate a client gets in unless certificates are
// required; without a bundle none is asked for (and required: every
// client is refused). Files that cannot be read as a trust keep the last
// good one.
func TestTrustClients(t *testing.T) {
	one, two := newCA(t, "one"), newCA(t, "two")
	good, revoked, expired, other := one.client(t, 10, time.Now().Add(time.Hour)), one.client(t, 11, time.Now().Add(time.Hour)),
		one.client(t, 12, time.Now().Add(-time.Hour)), two.client(t, 20, time.Now().Add(time.Hour))
	dir := t.TempDir()
	certFile, keyFile, caFile, crlFile := filepath.Join(dir, "c.pem"), filepath.Join(dir, "k.pem"), filepath.Join(dir, "ca.pem"), filepath.Join(dir, "crl.pem")
	certPEM, keyPEM, err := SelfSigned([]string{"localhost"}, time.Now())
	if err != nil {
		t.Fatal(err)
	}
	os.WriteFile(certFile, certPEM, 0o600)
	os.WriteFile(keyFile, keyPEM, 0o600)

	handshake := func(addr string, cert *tls.Certificate) error {
		cfg := &tls.Config{InsecureSkipVerify: true}
		if cert != nil {
			// Shown whatever CAs the server names (a client offers
			// only a certificate of those by itself).
			cfg.GetClientCertificate = func(*tls.CertificateRequestInfo) (*tls.Certificate, error) { return cert, nil }
		}
		c, err := tls.Dial("tcp", addr, cfg)
		if err != nil {
			return err
		}
		defer c.Close()
		c.SetDeadline(time.Now().Add(10 * time.Second))
		_, err = c.Read(make([]byte, 1))
		return err
	}
	for _, require := range []bool{false, true} {
		os.Remove(caFile)
		os.Remove(crlFile)
		src, err := Watch(certFile, keyFile, nil)
		if err != nil {
			t.Fatal(err)
		}
		if err := src.TrustClients(caFile, crlFile, require, nil); err != nil {
			t.Fatal(err)
		}
		addr := serveHandshakes(t, src.Config())
		check := func(what string, want map[string]bool) {
			t.Helper()
			for name, cert := range map[string]*tls.Certificate{"none": nil, "good": &good, "revoked": &revoked, "expired": &expired, "other": &other} {
				if err := handshake(addr, cert); (err == nil) != want[name] {
					t.Errorf("require %v, %s: %s: %v, want let in %v", require, what, name, err, want[name])
				}
			}
		}
		if require {
			check("no bundle", map[string]bool{})
		} else {
			check("no bundle", map[string]bool{"none": true, "good": true, "revoked": true, "expired": true, "other": true})
		}
		os.WriteFile(caFile, one.pem, 0o600)
		check("bundle one", map[string]bool{"none": !require, "good": true, "revoked": true})
		os.WriteFile(crlFile, one.crl(t, 11), 0o600)
		check("11 revoked", map[string]bool{"none": !require, "good": true})
		os.WriteFile(crlFile, two.crl(t), 0o600) // signed by no CA of the bundle: the last good trust stays
		check("a list of another CA", map[string]bool{"none": !require, "good": true})
		os.WriteFile(caFile, append(append([]byte{}, one.pem...), two.pem...), 0o600)
		check("bundle one and two, two's list", map[string]bool{"none": !require, "good": true, "revoked": true, "other": true})
		os.Remove(caFile)
		os.Remove(crlFile)
		if require {
			check("bundle removed", map[string]bool{})
		} else {
			check("bundle removed", map[string]bool{"none": true, "good": true, "revoked": true, "expired": true, "other": true})
		}
	}
}

func TestParseClientTrustRefusals(t *testing.T) {
	one, two := newCA(t, "one"), newCA(t, "two")
	leaf, _, _ := SelfSigned([]string{"x"}, time.Now())
	for _, c := range []struct {
		name       string
		ca, crl    []byte
		wantErr    bool
		cas, lists int
	}{
		{"empty", nil, nil, false, 0, 0},
		{"a bundle and its list", one.pem, one.crl(t, 5), false, 1, 1},
		{"not a CA", leaf, nil, true, 0, 0},
		{"not PEM", []byte("junk"), nil, true, 0, 0},
		{"a list without a bundle", nil, one.crl(t), true, 0, 0},
		{"a list of another CA", one.pem, two.crl(t), true, 0, 0},
		{"a certificate for a list", one.pem, one.pem, true, 0, 0},
	} {
		tr, err := ParseClientTrust(c.ca, c.crl)
		if (err != nil) != c.wantErr || len(tr.CAs) != c.cas || len(tr.CRLs) != c.lists {
			t.Errorf("%s: %d CAs, %d lists, %v", c.name, len(tr.CAs), len(tr.CRLs), err)
		}
	}
}

// BenchmarkHandshake is a full TLS handshake with a Source's
// configuration: without a trust bundle, and with one and a revocation
// list checking the client's certificate (the cost of TrustClients).
func BenchmarkHandshake(b *testing.B) {
	one := newCA(b, "one")
	cert := one.client(b, 10, time.Now().Add(time.Hour))
	dir := b.TempDir()
	certFile, keyFile, caFile, crlFile := filepath.Join(dir, "c.pem"), filepath.Join(dir, "k.pem"), filepath.Join(dir, "ca.pem"), filepath.Join(dir, "crl.pem")
	certPEM, keyPEM, _ := SelfSigned([]string{"localhost"}, time.Now())
	os.WriteFile(certFile, certPEM, 0o600)
	os.WriteFile(keyFile, keyPEM, 0o600)
	for _, trust := range []bool{false, true} {
		name := "no bundle"
		if trust {
			name = "bundle and list"
			os.WriteFile(caFile, one.pem, 0o600)
			os.WriteFile(crlFile, one.crl(b, 11, 12, 13), 0o600)
		}
		b.Run(name, func(b *testing.B) {
			src, _ := Watch(certFile, keyFile, nil)
			src.TrustClients(caFile, crlFile, false, nil)
			addr := serveHandshakes(b, src.Config())
			cfg := &tls.Config{InsecureSkipVerify: true, Certificates: []tls.Certificate{cert}}
			for b.Loop() {
				c, err := tls.Dial("tcp", addr, cfg)
				if err != nil {
					b.Fatal(err)
				}
				c.Read(make([]byte, 1))
				c.Close()
			}
		})
	}
}
