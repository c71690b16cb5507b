// Package tlscert provides the certificate of swmgr's HTTPS listener: one
// given as PEM files, or a self-signed ECDSA P-256 certificate made on first
// start and kept in the data directory, so that clients can pin it.
package tlscert

import (
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/sha256"
	"crypto/tls"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/pem"
	"errors"
	"fmt"
	"math/big"
	"net"
	"net/netip"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"time"

	"github.com/swmgr/swmgr/internal/atomicfile"
	"github.com/swmgr/swmgr/internal/datadir"
)

// Files in the data directory.
const (
	CertFile = datadir.TLSCert
	KeyFile  = datadir.TLSKey
)

// Validity of a self-signed certificate.
const Validity = 10 * 365 * 24 * time.Hour

// CipherSuites are the TLS 1.2 suites offered: forward-secret key exchange
// and AEAD only. Go's defaults also offer CBC suites with SHA-1 MACs, which
// are weak (Lucky13-style padding oracles) and only old clients need. TLS
// 1.3 suites are not configurable and all good.
var CipherSuites = []uint16{
	tls.TLS_ECDHE_ECDSA_WITH_AES_128_GCM_SHA256,
	tls.TLS_ECDHE_ECDSA_WITH_AES_256_GCM_SHA384,
	tls.TLS_ECDHE_ECDSA_WITH_CHACHA20_POLY1305_SHA256,
	tls.TLS_ECDHE_RSA_WITH_AES_128_GCM_SHA256, // for an RSA --tls-cert
	tls.TLS_ECDHE_RSA_WITH_AES_256_GCM_SHA384,
	tls.TLS_ECDHE_RSA_WITH_CHACHA20_POLY1305_SHA256,
}

// Config returns the server TLS configuration: TLS 1.2 or later, and in
// TLS 1.2 only CipherSuites.
func Config(cert tls.Certificate) *tls.Config {
	return &tls.Config{MinVersion: tls.VersionTLS12, CipherSuites: CipherSuites, Certificates: []tls.Certificate{cert}}
}

// Load reads a certificate chain and its key from PEM files.
func Load(certFile, keyFile string) (tls.Certificate, error) {
	certPEM, err := os.ReadFile(certFile)
	if err != nil {
		return tls.Certificate{}, fmt.Errorf("load certificate: %w", err)
	}
	keyPEM, err := os.ReadFile(keyFile)
	if err != nil {
		return tls.Certificate{}, fmt.Errorf("load key: %w", err)
	}
	cert, err := parsePair(certPEM, keyPEM)
	if err != nil {
		return tls.Certificate{}, fmt.Errorf("load certificate %s and key %s: %w", certFile, keyFile, err)
	}
	return cert, nil
}

// parsePair parses a PEM certificate chain and its key, which must match,
// with the leaf parsed.
func parsePair(certPEM, keyPEM []byte) (tls.Certificate, error) {
	cert, err := tls.X509KeyPair(certPEM, keyPEM)
	if err != nil {
		return tls.Certificate{}, err
	}
	if cert.Leaf == nil {
		if cert.Leaf, err = x509.ParseCertificate(cert.Certificate[0]); err != nil {
			return tls.Certificate{}, fmt.Errorf("parse certificate: %w", err)
		}
	}
	return cert, nil
}

// Check parses a PEM certificate chain and its key as a listener would
// serve them, and refuses a pair it should not: a key that does not match
// the certificate, a certificate not valid at now (expired or not yet
// valid), or one whose extended key usages leave out TLS servers.
func Check(certPEM, keyPEM []byte, now time.Time) (tls.Certificate, error) {
	cert, err := parsePair(certPEM, keyPEM)
	if err != nil {
		return tls.Certificate{}, err
	}
	leaf := cert.Leaf
	switch {
	case now.After(leaf.NotAfter):
		return tls.Certificate{}, fmt.Errorf("the certificate expired at %s", leaf.NotAfter.UTC().Format(time.RFC3339))
	case now.Before(leaf.NotBefore):
		return tls.Certificate{}, fmt.Errorf("the certificate is not valid before %s", leaf.NotBefore.UTC().Format(time.RFC3339))
	case len(leaf.ExtKeyUsage) > 0 && !slices.Contains(leaf.ExtKeyUsage, x509.ExtKeyUsageServerAuth) && !slices.Contains(leaf.ExtKeyUsage, x509.ExtKeyUsageAny):
		return tls.Certificate{}, errors.New("the certificate's extended key usage does not include TLS server authentication")
	}
	return cert, nil
}

// LoadOrCreate loads the certificate kept in dir, or makes a self-signed one
// for hosts (names and IP addresses) and keeps it there. An existing
// certificate is used as it is, whatever hosts it names, so that a pinned
// certificate stays valid.
func LoadOrCreate(dir string, hosts []string) (cert tls.Certificate, created bool, err error) {
	certPath, keyPath := filepath.Join(dir, CertFile), filepath.Join(dir, KeyFile)
	_, cerr := os.Stat(certPath)
	_, kerr := os.Stat(keyPath)
	switch {
	case cerr == nil && kerr == nil:
		cert, err := Load(certPath, keyPath)
		return cert, false, err
	case errors.Is(cerr, os.ErrNotExist) && errors.Is(kerr, os.ErrNotExist):
	case cerr == nil || kerr == nil:
		return tls.Certificate{}, false, fmt.Errorf("%s and %s must both exist or both be missing; remove the other to make a new certificate", certPath, keyPath)
	default:
		return tls.Certificate{}, false, fmt.Errorf("certificate files in %s: %w", dir, errors.Join(cerr, kerr))
	}
	certPEM, keyPEM, err := SelfSigned(hosts, time.Now())
	if err != nil {
		return tls.Certificate{}, false, err
	}
	if err := atomicfile.Replace(keyPath, keyPEM, 0o600); err != nil {
		return tls.Certificate{}, false, err
	}
	if err := atomicfile.Replace(certPath, certPEM, 0o644); err != nil {
		os.Remove(keyPath)
		return tls.Certificate{}, false, err
	}
	cert, err = Load(certPath, keyPath)
	return cert, true, err
}

// SelfSigned makes a self-signed ECDSA P-256 server certificate for hosts,
// valid from an hour before now for Validity, as PEM.
func SelfSigned(hosts []string, now time.Time) (certPEM, keyPEM []byte, err error) {
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		return nil, nil, fmt.Errorf("make key: %w", err)
	}
	serial, err := rand.Int(rand.Reader, new(big.Int).Lsh(big.NewInt(1), 127))
	if err != nil {
		return nil, nil, err
	}
	cn := "swmgr"
	if len(hosts) > 0 {
		cn = "swmgr " + hosts[0]
	}
	tmpl := &x509.Certificate{
		SerialNumber:          serial,
		Subject:               pkix.Name{CommonName: cn, Organization: []string{"swmgr self-signed"}},
		NotBefore:             now.Add(-time.Hour),
		NotAfter:              now.Add(Validity),
		KeyUsage:              x509.KeyUsageDigitalSignature,
		ExtKeyUsage:           []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth},
		BasicConstraintsValid: true,
	}
	tmpl.DNSNames, tmpl.IPAddresses = splitNames(hosts)
	der, err := x509.CreateCertificate(rand.Reader, tmpl, tmpl, &key.PublicKey, key)
	if err != nil {
		return nil, nil, fmt.Errorf("make certificate: %w", err)
	}
	kder, err := x509.MarshalPKCS8PrivateKey(key)
	if err != nil {
		return nil, nil, err
	}
	return pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: der}),
		pem.EncodeToMemory(&pem.Block{Type: "PRIVATE KEY", Bytes: kder}), nil
}

// Hosts lists the names a self-signed certificate should carry: the host
// name, localhost, and the hosts of the listen addresses. A listen address
// on every interface (":443", "0.0.0.0:443", "[::]:443") stands for the
// loopback addresses and the address of every interface.
func Hosts(listen ...string) []string {
	var out []string
	add := func(h string) {
		if h != "" && !slices.Contains(out, h) {
			out = append(out, h)
		}
	}
	if name, err := os.Hostname(); err == nil {
		add(strings.ToLower(name))
	}
	add("localhost")
	for _, l := range listen {
		host, _, err := net.SplitHostPort(l)
		if err != nil {
			host = l
		}
		ip, err := netip.ParseAddr(host)
		if host != "" && (err != nil || !ip.IsUnspecified()) {
			if err == nil {
				host = ip.Unmap().String()
			}
			add(host)
			continue
		}
		add("127.0.0.1")
		add("::1")
		addrs, _ := net.InterfaceAddrs()
		for _, a := range addrs {
			if p, err := netip.ParsePrefix(a.String()); err == nil && !p.Addr().IsLinkLocalUnicast() {
				add(p.Addr().String())
			}
		}
	}
	return out
}

// Fingerprint is the SHA-256 of the certificate, as colon-separated hex
// (what `openssl x509 -fingerprint -sha256` prints), for pinning.
func Fingerprint(cert tls.Certificate) string {
	if len(cert.Certificate) == 0 {
		return ""
	}
	sum := sha256.Sum256(cert.Certificate[0])
	var b strings.Builder
	for i, c := range sum {
		if i > 0 {
			b.WriteByte(':')
		}
		fmt.Fprintf(&b, "%02X", c)
	}
	return b.String()
}

// Request makes an ECDSA P-256 key and a certificate signing request for
// it, naming cn and sans (DNS names and IP addresses), as PEM: what a
// fleet CA signs into the certificate --tls-cert names.
func Request(cn string, sans []string) (keyPEM, csrPEM []byte, err error) {
	if strings.TrimSpace(cn) == "" {
		return nil, nil, errors.New("a certificate request needs a common name (--cn)")
	}
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		return nil, nil, fmt.Errorf("make key: %w", err)
	}
	tmpl := &x509.CertificateRequest{Subject: pkix.Name{CommonName: cn}}
	tmpl.DNSNames, tmpl.IPAddresses = splitNames(sans)
	der, err := x509.CreateCertificateRequest(rand.Reader, tmpl, key)
	if err != nil {
		return nil, nil, fmt.Errorf("make certificate request: %w", err)
	}
	kder, err := x509.MarshalPKCS8PrivateKey(key)
	if err != nil {
		return nil, nil, err
	}
	return pem.EncodeToMemory(&pem.Block{Type: "PRIVATE KEY", Bytes: kder}),
		pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE REQUEST", Bytes: der}), nil
}

// splitNames sorts subject alternative names into DNS names and IP
// addresses.
func splitNames(names []string) (dns []string, ips []net.IP) {
	for _, h := range names {
		if ip, err := netip.ParseAddr(h); err == nil {
			ips = append(ips, ip.AsSlice())
		} else if h != "" {
			dns = append(dns, h)
		}
	}
	return dns, ips
}
