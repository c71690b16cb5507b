package tlscert

import (
	"bytes"
	"crypto/tls"
	"crypto/x509"
	"encoding/pem"
	"errors"
	"fmt"
	"time"

	"github.com/swmgr/swmgr/internal/reloadfile"
)

// ClientTrust is what client certificates are checked against: a trust
// bundle (the CA certificates that may sign them) and the certificate
// revocation lists of those CAs. The zero ClientTrust has no bundle: no
// client certificate is asked for.
type ClientTrust struct {
	CAs  []*x509.Certificate
	CRLs []*x509.RevocationList
	pool *x509.CertPool
	// revoked holds, per issuer (its raw subject), the serial numbers
	// its CRLs revoke.
	revoked map[string]map[string]bool
}

// Empty says whether there is no trust bundle.
func (t ClientTrust) Empty() bool { return len(t.CAs) == 0 }

// eachPEM calls fn with the DER of each PEM block of data, which must
// all be of typ; what names them in errors.
func eachPEM(data []byte, typ, what string, fn func(n int, der []byte) error) error {
	for n, rest := 1, data; ; n++ {
		var block *pem.Block
		block, rest = pem.Decode(rest)
		if block == nil {
			if len(bytes.TrimSpace(rest)) > 0 {
				return fmt.Errorf("%s: not PEM", what)
			}
			return nil
		}
		if block.Type != typ {
			return fmt.Errorf("%s: a PEM %s, not %s", what, block.Type, typ)
		}
		if err := fn(n, block.Bytes); err != nil {
			return err
		}
	}
}

// ParseCAs reads PEM CA certificates: each must be a CA (basic
// constraints).
func ParseCAs(caPEM []byte) ([]*x509.Certificate, error) {
	var cas []*x509.Certificate
	err := eachPEM(caPEM, "CERTIFICATE", "trust bundle", func(n int, der []byte) error {
		c, err := x509.ParseCertificate(der)
		if err != nil {
			return fmt.Errorf("trust bundle: certificate %d: %w", n, err)
		}
		if !c.IsCA {
			return fmt.Errorf("trust bundle: %s is not a CA certificate", c.Subject)
		}
		cas = append(cas, c)
		return nil
	})
	return cas, err
}

// ParseCRLs reads PEM certificate revocation lists ("X509 CRL") and
// checks that each is signed by one of cas.
func ParseCRLs(crlPEM []byte, cas []*x509.Certificate) ([]*x509.RevocationList, error) {
	var crls []*x509.RevocationList
	err := eachPEM(crlPEM, "X509 CRL", "revocation lists", func(n int, der []byte) error {
		crl, err := x509.ParseRevocationList(der)
		if err != nil {
			return fmt.Errorf("revocation list %d: %w", n, err)
		}
		if issuerOf(crl, cas) == nil {
			return fmt.Errorf("revocation list %d (issuer %s): signed by no CA of the trust bundle", n, crl.Issuer)
		}
		crls = append(crls, crl)
		return nil
	})
	return crls, err
}

// issuerOf is the CA of cas that signed crl, or nil.
func issuerOf(crl *x509.RevocationList, cas []*x509.Certificate) *x509.Certificate {
	for _, ca := range cas {
		if bytes.Equal(ca.RawSubject, crl.RawIssuer) && crl.CheckSignatureFrom(ca) == nil {
			return ca
		}
	}
	return nil
}

// ParseClientTrust reads a trust bundle and revocation lists (PEM; empty:
// none). Revocation lists without a bundle are refused.
func ParseClientTrust(caPEM, crlPEM []byte) (ClientTrust, error) {
	cas, err := ParseCAs(caPEM)
	if err != nil {
		return ClientTrust{}, err
	}
	crls, err := ParseCRLs(crlPEM, cas)
	if err != nil {
		return ClientTrust{}, err
	}
	t := ClientTrust{CAs: cas, CRLs: crls, pool: x509.NewCertPool(), revoked: map[string]map[string]bool{}}
	for _, ca := range cas {
		t.pool.AddCert(ca)
	}
	for _, crl := range crls {
		set := t.revoked[string(crl.RawIssuer)]
		if set == nil {
			set = map[string]bool{}
			t.revoked[string(crl.RawIssuer)] = set
		}
		for _, e := range crl.RevokedCertificateEntries {
			set[e.SerialNumber.String()] = true
		}
	}
	return t, nil
}

// Revoked says whether a CRL of c's issuer lists c.
func (t ClientTrust) Revoked(c *x509.Certificate) bool {
	return t.revoked[string(c.RawIssuer)][c.SerialNumber.String()]
}

// Verify checks a client's certificates (leaf first) against the bundle
// at now: a chain to one of its CAs for client authentication, no
// certificate of which a CRL revokes.
func (t ClientTrust) Verify(certs []*x509.Certificate, now time.Time) error {
	if len(certs) == 0 {
		return nil
	}
	inter := x509.NewCertPool()
	for _, c := range certs[1:] {
		inter.AddCert(c)
	}
	chains, err := certs[0].Verify(x509.VerifyOptions{Roots: t.pool, Intermediates: inter, CurrentTime: now, KeyUsages: []x509.ExtKeyUsage{x509.ExtKeyUsageClientAuth}})
	if err != nil {
		return fmt.Errorf("client certificate: %w", err)
	}
	for _, chain := range chains {
		for _, c := range chain {
			if t.Revoked(c) {
				return fmt.Errorf("client certificate: %s (serial %s) is revoked", c.Subject, c.SerialNumber)
			}
		}
	}
	return nil
}

// TrustClients makes the Source's configuration ask TLS clients for a
// certificate and check one given against the trust bundle in caFile and
// the revocation lists in crlFile, both read again when they change (a
// missing file is empty: without a bundle no certificate is asked for).
// A client that gives none is let through, to authenticate as it does
// without (require: refused). onReload (may be nil) is told of each later
// reading.
func (s *Source) TrustClients(caFile, crlFile string, require bool, onReload func(t ClientTrust, err error)) error {
	parse := func(contents [][]byte) (ClientTrust, error) {
		t, err := ParseClientTrust(contents[0], contents[1])
		if err != nil {
			return ClientTrust{}, fmt.Errorf("client trust %s, %s: %w", caFile, crlFile, err)
		}
		return t, nil
	}
	f, err := reloadfile.OpenOptional(parse, onReload, caFile, crlFile)
	if err != nil {
		return err
	}
	s.trust, s.requireClient = f, require
	return nil
}

// ClientTrust is the trust bundle and revocation lists as their files
// hold them now (the zero ClientTrust when TrustClients was not called).
func (s *Source) ClientTrust() ClientTrust {
	if s.trust == nil {
		return ClientTrust{}
	}
	return s.trust.Get()
}

// clientConfig is the configuration of one handshake: base, and when
// there is a trust bundle, a client certificate asked for and verified
// against it (the bundle and lists of this moment: a rotation applies
// from the next handshake).
func (s *Source) clientConfig(base *tls.Config) func(*tls.ClientHelloInfo) (*tls.Config, error) {
	return func(*tls.ClientHelloInfo) (*tls.Config, error) {
		t := s.ClientTrust()
		if t.Empty() {
			if s.requireClient {
				return nil, errors.New("client certificates are required, and there is no trust bundle to check them against")
			}
			return nil, nil // base, asking for no certificate
		}
		c := base.Clone()
		c.GetConfigForClient = nil
		c.ClientAuth, c.ClientCAs = tls.RequestClientCert, t.pool
		if s.requireClient {
			c.ClientAuth = tls.RequireAnyClientCert
		}
		c.VerifyPeerCertificate = func(raw [][]byte, _ [][]*x509.Certificate) error {
			certs := make([]*x509.Certificate, 0, len(raw))
			for _, r := range raw {
				cert, err := x509.ParseCertificate(r)
				if err != nil {
					return fmt.Errorf("client certificate: %w", err)
				}
				certs = append(certs, cert)
			}
			return t.Verify(certs, time.Now())
		}
		return c, nil
	}
}
