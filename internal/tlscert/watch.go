package tlscert

import (
	"crypto/tls"
	"fmt"

	"github.com/swmgr/swmgr/internal/reloadfile"
)

// Source is a certificate and key kept in PEM files and read again when
// either changes (package reloadfile): a certificate renewed by a fleet CA
// is served from the next TLS handshake on, without a restart, and a pair
// that does not match yet (the key replaced before its certificate) keeps
// the last good one in service.
type Source struct {
	files *reloadfile.File[tls.Certificate]
	// trust, when set (TrustClients), checks client certificates.
	trust         *reloadfile.File[ClientTrust]
	requireClient bool
}

// Watch loads certFile and keyFile, which must match; onReload (may be
// nil) is told of each later reading, the certificate or why it was
// refused.
func Watch(certFile, keyFile string, onReload func(cert tls.Certificate, err error)) (*Source, error) {
	parse := func(contents [][]byte) (tls.Certificate, error) {
		cert, err := parsePair(contents[0], contents[1])
		if err != nil {
			return tls.Certificate{}, fmt.Errorf("certificate %s and key %s: %w", certFile, keyFile, err)
		}
		return cert, nil
	}
	files, err := reloadfile.Open(parse, onReload, certFile, keyFile)
	if err != nil {
		return nil, err
	}
	return &Source{files: files}, nil
}

// Certificate is the certificate as the files hold it now (the last good
// one if they cannot be read as they are).
func (s *Source) Certificate() tls.Certificate { return s.files.Get() }

// Config is Config's server configuration with the certificate taken from
// the files at each handshake and, after TrustClients, client
// certificates checked against the trust bundle of that moment.
func (s *Source) Config() *tls.Config {
	c := Config(tls.Certificate{})
	c.Certificates = nil
	c.GetCertificate = func(*tls.ClientHelloInfo) (*tls.Certificate, error) {
		cert := s.files.Get()
		return &cert, nil
	}
	if s.trust != nil {
		// The configuration of a handshake replaces this one, ALPN
		// included, whatever a server adds to its copy of this one: so
		// it names the protocols of both listeners (gRPC's h2, HTTPS's).
		c.NextProtos = []string{"h2", "http/1.1"}
		c.GetConfigForClient = s.clientConfig(c)
	}
	return c
}
