package test

import (
	"context"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/sha256"
	"crypto/tls"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/hex"
	"encoding/pem"
	"errors"
	"io"
	"math/big"
	"net"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	cpb "github.com/openconfig/gnsi/certz"
	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/credentials"
)

// testCA signs server certificates for 127.0.0.1 and localhost.
type testCA struct {
	cert *x509.Certificate
	key  *ecdsa.PrivateKey
	pool *x509.CertPool
}

func newTestCA(t *testing.T) *testCA {
	t.Helper()
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	tmpl := &x509.Certificate{SerialNumber: big.NewInt(1), Subject: pkix.Name{CommonName: "certz test CA"},
		NotBefore: time.Now().Add(-time.Hour), NotAfter: time.Now().Add(24 * time.Hour),
		IsCA: true, BasicConstraintsValid: true, KeyUsage: x509.KeyUsageCertSign | x509.KeyUsageCRLSign}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, tmpl, &key.PublicKey, key)
	if err != nil {
		t.Fatal(err)
	}
	cert, _ := x509.ParseCertificate(der)
	pool := x509.NewCertPool()
	pool.AddCert(cert)
	return &testCA{cert: cert, key: key, pool: pool}
}

// sign makes a server certificate for pub, as PEM.
func (ca *testCA) sign(t *testing.T, pub any, serial int64, notAfter time.Time) []byte {
	t.Helper()
	tmpl := &x509.Certificate{SerialNumber: big.NewInt(serial), Subject: pkix.Name{CommonName: "switch1"},
		NotBefore: time.Now().Add(-2 * time.Hour), NotAfter: notAfter,
		DNSNames: []string{"localhost"}, IPAddresses: []net.IP{net.ParseIP("127.0.0.1")},
		KeyUsage: x509.KeyUsageDigitalSignature, ExtKeyUsage: []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth}}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, ca.cert, pub, ca.key)
	if err != nil {
		t.Fatal(err)
	}
	return pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: der})
}

// newKey is an ECDSA key and its PEM.
func newKey(t *testing.T) (*ecdsa.PrivateKey, []byte) {
	t.Helper()
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	der, _ := x509.MarshalPKCS8PrivateKey(key)
	return key, pem.EncodeToMemory(&pem.Block{Type: "PRIVATE KEY", Bytes: der})
}

// uploadOf is a Rotate request uploading certPEM with keyPEM (nil: the
// key the stream generated).
func uploadOf(certPEM, keyPEM []byte) *cpb.RotateCertificateRequest {
	c := &cpb.Certificate{Type: cpb.CertificateType_CERTIFICATE_TYPE_X509, Encoding: cpb.CertificateEncoding_CERTIFICATE_ENCODING_PEM,
		CertificateType: &cpb.Certificate_RawCertificate{RawCertificate: certPEM}}
	if keyPEM != nil {
		c.PrivateKeyType = &cpb.Certificate_RawPrivateKey{RawPrivateKey: keyPEM}
	} else {
		c.PrivateKeyType = &cpb.Certificate_KeySource_{KeySource: cpb.Certificate_KEY_SOURCE_GENERATED}
	}
	return &cpb.RotateCertificateRequest{SslProfileId: "system_default_profile", RotateRequest: &cpb.RotateCertificateRequest_Certificates{
		Certificates: &cpb.UploadRequest{Entities: []*cpb.Entity{{Version: "v1", CreatedOn: uint64(time.Now().Unix()),
			Entity: &cpb.Entity_CertificateChain{CertificateChain: &cpb.CertificateChain{Certificate: c}}}}}}}
}

var finalizeRequest = &cpb.RotateCertificateRequest{SslProfileId: "system_default_profile", RotateRequest: &cpb.RotateCertificateRequest_FinalizeRotation{FinalizeRotation: &cpb.FinalizeRequest{}}}

// fingerprintOf is the SHA-256 of a PEM certificate, as servedFingerprint
// gives it.
func fingerprintOf(t *testing.T, certPEM []byte) string {
	t.Helper()
	b, _ := pem.Decode(certPEM)
	sum := sha256.Sum256(b.Bytes)
	return hex.EncodeToString(sum[:])
}

// certzClient is a gNSI certz client of the gNMI listener at addr that
// trusts the CA and the certificate the switch made in dir (which it
// also returns), closed when the test ends.
func certzClient(t *testing.T, ca *testCA, dir, addr string) (cpb.CertzClient, []byte) {
	t.Helper()
	original, err := os.ReadFile(filepath.Join(dir, "tls-cert.pem"))
	if err != nil {
		t.Fatal(err)
	}
	pool := ca.pool.Clone()
	pool.AppendCertsFromPEM(original)
	conn, err := grpc.NewClient(addr, grpc.WithTransportCredentials(credentials.NewTLS(&tls.Config{RootCAs: pool, ServerName: "127.0.0.1"})))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { conn.Close() })
	return cpb.NewCertzClient(conn), original
}

// servedFingerprint is the SHA-256 of the certificate a new TLS connection
// to addr is shown.
func servedFingerprint(addr string) (string, error) {
	c, err := tls.Dial("tcp", addr, &tls.Config{InsecureSkipVerify: true, NextProtos: []string{"h2", "http/1.1"}})
	if err != nil {
		return "", err
	}
	defer c.Close()
	sum := sha256.Sum256(c.ConnectionState().PeerCertificates[0].Raw)
	return hex.EncodeToString(sum[:]), nil
}

// gNSI certz Rotate replaces the certificate of the HTTPS and gNMI
// listeners without a restart: an upload is served from the next
// handshake on, rolled back when the stream ends without finalize, kept
// when finalized (a CSR the switch generated, signed by the CA); a
// non-admin, a key that does not match and an expired certificate are
// refused and change nothing; no handshake fails meanwhile.
func TestCertzRotate(t *testing.T) {
	ca := newTestCA(t)
	httpsAddr, gnmiAddr := freeAddr(t), freeAddr(t)
	s := startServer(t, "", "--https", httpsAddr, "--gnmi", gnmiAddr)
	s.expect(t, 201, "POST", "/config/User", `{"Name":"op1","Group":"operator","Password":"operator-pass-1"}`)
	certz, original := certzClient(t, ca, s.dir, gnmiAddr)
	addrs := []string{httpsAddr, gnmiAddr}
	wantServed := func(what, fp string) {
		t.Helper()
		for _, addr := range addrs {
			if got, err := servedFingerprint(addr); err != nil || got != fp {
				t.Errorf("%s: %s serves %s (%v), want %s", what, addr, got, err, fp)
			}
		}
	}
	wantServed("at start", fingerprintOf(t, original))

	// Handshakes on both ports all along.
	hs := startHandshakes(addrs, func(addr string) error { _, err := servedFingerprint(addr); return err })

	// rotate sends reqs on a new Rotate stream, reading a reply after each
	// upload or CSR request, and returns the replies and the first error.
	rotate := func(ctx context.Context, reqs ...*cpb.RotateCertificateRequest) (cpb.Certz_RotateClient, []*cpb.RotateCertificateResponse, error) {
		st, err := certz.Rotate(ctx)
		if err != nil {
			return nil, nil, err
		}
		var replies []*cpb.RotateCertificateResponse
		for _, r := range reqs {
			if err := st.Send(r); err != nil {
				_, err = st.Recv()
				return st, replies, err
			}
			if r.GetFinalizeRotation() != nil {
				continue
			}
			m, err := st.Recv()
			if err != nil {
				return st, replies, err
			}
			replies = append(replies, m)
		}
		return st, replies, nil
	}

	key, keyPEM := newKey(t)
	first := ca.sign(t, &key.PublicKey, 10, time.Now().Add(24*time.Hour))
	_, err := rotateAll(rotate(as(t, "op1", "operator-pass-1"), uploadOf(first, keyPEM), finalizeRequest))
	wantCode(t, "an operator's Rotate", err, codes.PermissionDenied)
	_, otherKeyPEM := newKey(t)
	_, err = rotateAll(rotate(asAdmin(t), uploadOf(first, otherKeyPEM), finalizeRequest))
	wantCode(t, "Rotate with a key that does not match", err, codes.InvalidArgument)
	expired := ca.sign(t, &key.PublicKey, 11, time.Now().Add(-time.Hour))
	_, err = rotateAll(rotate(asAdmin(t), uploadOf(expired, keyPEM), finalizeRequest))
	wantCode(t, "Rotate with an expired certificate", err, codes.InvalidArgument)
	noProfile := uploadOf(first, keyPEM)
	noProfile.SslProfileId = ""
	_, err = rotateAll(rotate(asAdmin(t), noProfile))
	wantCode(t, "Rotate without a profile", err, codes.InvalidArgument)
	wantServed("after the refused rotations", fingerprintOf(t, original))

	// An upload not finalized: served while the stream is open, rolled
	// back when it ends.
	st, _, err := rotate(asAdmin(t), uploadOf(first, keyPEM))
	if err != nil {
		t.Fatal(err)
	}
	wantServed("uploaded, not yet finalized", fingerprintOf(t, first))
	if _, err := servedVerified(gnmiAddr, ca.pool); err != nil {
		t.Errorf("a client trusting the CA, before finalize: %v", err)
	}
	st.CloseSend()
	_, err = st.Recv()
	wantCode(t, "a stream ended without finalize", err, codes.Aborted)
	wantServed("after a rotation not finalized", fingerprintOf(t, original))

	// An upload whose client goes away (its stream cancelled) is rolled
	// back too, when swmgr sees the stream end.
	ctx, cancel := context.WithCancel(asAdmin(t))
	if _, _, err := rotate(ctx, uploadOf(first, keyPEM)); err != nil {
		t.Fatal(err)
	}
	wantServed("uploaded by a client about to go away", fingerprintOf(t, first))
	cancel()
	waitLine(t, s.logs, `certz: rotation not finalized; the previous files are back`+".*"+`context canceled`)
	wantServed("after a cancelled rotation", fingerprintOf(t, original))

	// Finalized, with a CSR the switch generated.
	st, replies, err := rotate(asAdmin(t), &cpb.RotateCertificateRequest{SslProfileId: "system_default_profile", RotateRequest: &cpb.RotateCertificateRequest_GenerateCsr{GenerateCsr: &cpb.GenerateCSRRequest{
		Params: &cpb.CSRParams{CsrSuite: cpb.CSRSuite_CSRSUITE_X509_KEY_TYPE_ECDSA_PRIME256V1_SIGNATURE_ALGORITHM_SHA_2_256, CommonName: "switch1", San: &cpb.V3ExtensionSAN{Dns: []string{"localhost"}, Ips: []string{"127.0.0.1"}}},
	}}})
	if err != nil {
		t.Fatal(err)
	}
	block, _ := pem.Decode(replies[0].GetGeneratedCsr().GetCertificateSigningRequest().GetCertificateSigningRequest())
	if block == nil {
		t.Fatalf("no CSR: %v", replies[0])
	}
	csr, err := x509.ParseCertificateRequest(block.Bytes)
	if err != nil || csr.CheckSignature() != nil || csr.Subject.CommonName != "switch1" {
		t.Fatalf("the CSR: %v %v", csr, err)
	}
	second := ca.sign(t, csr.PublicKey, 12, time.Now().Add(24*time.Hour))
	if err := st.Send(uploadOf(second, nil)); err != nil {
		t.Fatal(err)
	}
	if m, err := st.Recv(); err != nil || m.GetCertificates() == nil {
		t.Fatalf("upload of the signed CSR: %v %v", m, err)
	}
	if err := st.Send(finalizeRequest); err != nil {
		t.Fatal(err)
	}
	if _, err := st.Recv(); !errors.Is(err, io.EOF) {
		t.Fatalf("after finalize: %v, want the stream's end", err)
	}
	wantServed("after the finalized rotation", fingerprintOf(t, second))
	if serial, err := servedVerified(httpsAddr, ca.pool); err != nil || serial != "12" {
		t.Errorf("HTTPS to a client trusting the CA: serial %s, %v", serial, err)
	}
	if got, _ := os.ReadFile(filepath.Join(s.dir, "tls-cert.pem")); string(got) != string(second) {
		t.Errorf("the certificate file is not the rotated one")
	}
	if left, _ := filepath.Glob(filepath.Join(s.dir, "*.previous")); len(left) > 0 {
		t.Errorf("the previous pair is still kept after finalize: %v", left)
	}

	failures, handshakes := hs.stop()
	if len(failures) > 0 {
		t.Errorf("%d of %d handshakes failed during the rotations, first: %s", len(failures), handshakes, failures[0])
	}
	if handshakes == 0 {
		t.Error("no handshake was made during the rotations")
	}
	logs := s.expect(t, 200, "GET", "/state/ConfigLogs?Count=1000", "")
	for _, want := range []string{`"Operation":"Rotate"`, `rolled back`, `finalized`, `"UserName":"op1"`} {
		if !strings.Contains(string(logs.raw), want) {
			t.Errorf("the config log lacks %s", want)
		}
	}
	if strings.Contains(string(logs.raw), "PRIVATE KEY") || strings.Contains(s.logs.String(), "PRIVATE KEY") {
		t.Error("a private key is in the config log or swmgr's log")
	}
}

// rotateAll reads a Rotate stream to its end after its requests.
func rotateAll(st cpb.Certz_RotateClient, replies []*cpb.RotateCertificateResponse, err error) ([]*cpb.RotateCertificateResponse, error) {
	if err != nil || st == nil {
		return replies, err
	}
	st.CloseSend()
	rest, err := recvAll(st.Recv)
	return append(replies, rest...), err
}

// servedVerified is the serial of the certificate a client trusting pool
// is shown at addr as 127.0.0.1.
func servedVerified(addr string, pool *x509.CertPool) (string, error) {
	c, err := tls.Dial("tcp", addr, &tls.Config{RootCAs: pool, ServerName: "127.0.0.1", NextProtos: []string{"h2", "http/1.1"}})
	if err != nil {
		return "", err
	}
	defer c.Close()
	return c.ConnectionState().PeerCertificates[0].SerialNumber.String(), nil
}

// A rotation that swmgr's stop interrupts (killed with the upload not
// finalized) is rolled back at the next start, with or without gNMI: the
// previous certificate is served again.
func TestCertzRotationInterruptedByAStop(t *testing.T) {
	ca := newTestCA(t)
	dir := t.TempDir()
	httpsAddr, gnmiAddr := freeAddr(t), freeAddr(t)
	s := startServer(t, dir, "--https", httpsAddr, "--gnmi", gnmiAddr)
	certz, original := certzClient(t, ca, dir, gnmiAddr)
	st, err := certz.Rotate(asAdmin(t))
	if err != nil {
		t.Fatal(err)
	}
	key, keyPEM := newKey(t)
	if err := st.Send(uploadOf(ca.sign(t, &key.PublicKey, 20, time.Now().Add(time.Hour)), keyPEM)); err != nil {
		t.Fatal(err)
	}
	if m, err := st.Recv(); err != nil || m.GetCertificates() == nil {
		t.Fatalf("upload: %v %v", m, err)
	}
	if serial, err := servedVerified(httpsAddr, ca.pool); err != nil || serial != "20" {
		t.Fatalf("the upload is not served: %s %v", serial, err)
	}
	s.kill9()

	s = startServer(t, dir, "--https", httpsAddr)
	if got, err := servedFingerprint(httpsAddr); err != nil || got != fingerprintOf(t, original) {
		t.Errorf("after the restart HTTPS serves %s (%v), want the certificate before the rotation", got, err)
	}
	if left, _ := filepath.Glob(filepath.Join(dir, "*.previous")); len(left) > 0 {
		t.Errorf("the previous pair is still kept: %v", left)
	}
	waitLine(t, s.logs, `a certificate rotation \(gNSI certz\) was not finalized before swmgr stopped`)
}
