package test

import (
	"context"
	"crypto/rand"
	"crypto/tls"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/pem"
	"math/big"
	"os"
	"path/filepath"
	"slices"
	"testing"
	"time"

	cpb "github.com/openconfig/gnsi/certz"
	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/credentials"
)

// signClient makes a client certificate (TLS client authentication) of
// serial, signed by the CA, with its key.
func (ca *testCA) signClient(t *testing.T, serial int64) tls.Certificate {
	t.Helper()
	key, _ := newKey(t)
	tmpl := &x509.Certificate{SerialNumber: big.NewInt(serial), Subject: pkix.Name{CommonName: "operator-tool"},
		NotBefore: time.Now().Add(-time.Hour), NotAfter: time.Now().Add(time.Hour),
		KeyUsage: x509.KeyUsageDigitalSignature, ExtKeyUsage: []x509.ExtKeyUsage{x509.ExtKeyUsageClientAuth}}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, ca.cert, &key.PublicKey, ca.key)
	if err != nil {
		t.Fatal(err)
	}
	return tls.Certificate{Certificate: [][]byte{der}, PrivateKey: key}
}

// crl is the CA's revocation list of serials, as PEM.
func (ca *testCA) crl(t *testing.T, number int64, serials ...int64) []byte {
	t.Helper()
	var entries []x509.RevocationListEntry
	for _, s := range serials {
		entries = append(entries, x509.RevocationListEntry{SerialNumber: big.NewInt(s), RevocationTime: time.Now().Add(-time.Minute)})
	}
	der, err := x509.CreateRevocationList(rand.Reader, &x509.RevocationList{Number: big.NewInt(number), ThisUpdate: time.Now().Add(-time.Minute),
		NextUpdate: time.Now().Add(time.Hour), RevokedCertificateEntries: entries}, ca.cert, ca.key)
	if err != nil {
		t.Fatal(err)
	}
	return pem.EncodeToMemory(&pem.Block{Type: "X509 CRL", Bytes: der})
}

func caPEM(ca *testCA) []byte {
	return pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: ca.cert.Raw})
}

// Entities of an upload.
func trustBundleOf(cas ...*testCA) *cpb.Entity {
	var chain *cpb.CertificateChain
	for i := len(cas) - 1; i >= 0; i-- {
		chain = &cpb.CertificateChain{Parent: chain, Certificate: &cpb.Certificate{Type: cpb.CertificateType_CERTIFICATE_TYPE_X509,
			Encoding: cpb.CertificateEncoding_CERTIFICATE_ENCODING_PEM, CertificateType: &cpb.Certificate_RawCertificate{RawCertificate: caPEM(cas[i])}}}
	}
	return &cpb.Entity{Entity: &cpb.Entity_TrustBundle{TrustBundle: chain}}
}

func crlBundleOf(crls ...[]byte) *cpb.Entity {
	b := &cpb.CertificateRevocationListBundle{}
	for _, c := range crls {
		b.CertificateRevocationLists = append(b.CertificateRevocationLists, &cpb.CertificateRevocationList{Type: cpb.CertificateType_CERTIFICATE_TYPE_X509,
			Encoding: cpb.CertificateEncoding_CERTIFICATE_ENCODING_PEM, CertificateRevocationList: c})
	}
	return &cpb.Entity{Entity: &cpb.Entity_CertificateRevocationListBundle{CertificateRevocationListBundle: b}}
}

func existingOf(profile string, typ cpb.ExistingEntity_EntityType) *cpb.Entity {
	return &cpb.Entity{Entity: &cpb.Entity_ExistingEntity{ExistingEntity: &cpb.ExistingEntity{SslProfileId: profile, EntityType: typ}}}
}

func uploadTo(profile string, entities ...*cpb.Entity) *cpb.RotateCertificateRequest {
	return &cpb.RotateCertificateRequest{SslProfileId: profile, RotateRequest: &cpb.RotateCertificateRequest_Certificates{Certificates: &cpb.UploadRequest{Entities: entities}}}
}

func finalizeOf(profile string) *cpb.RotateCertificateRequest {
	return &cpb.RotateCertificateRequest{SslProfileId: profile, RotateRequest: &cpb.RotateCertificateRequest_FinalizeRotation{FinalizeRotation: &cpb.FinalizeRequest{}}}
}

// gNSI certz's trust bundle and revocation lists check the client
// certificates of both listeners, from the next handshake, with no
// restart: a client of a CA the bundle holds is let in, one of another CA
// refused, one whose serial a rotated CRL lists refused; an upload not
// finalized is rolled back; a client without a certificate still gets in
// with its credentials. Profiles: another one is made, rotated, copied
// into the default one with existing_entity, and deleted; the default
// one cannot be.
func TestCertzTrustBundleCRLAndProfiles(t *testing.T) {
	ca1, ca2 := newTestCA(t), newTestCA(t)
	httpsAddr, gnmiAddr := freeAddr(t), freeAddr(t)
	s := startServer(t, "", "--https", httpsAddr, "--gnmi", gnmiAddr)
	certz, original := certzClient(t, ca1, s.dir, gnmiAddr)
	serverPool := x509.NewCertPool()
	serverPool.AppendCertsFromPEM(original)

	alice, bob, carol := ca1.signClient(t, 101), ca1.signClient(t, 102), ca2.signClient(t, 201)
	// call makes a new connection to the gNMI listener showing cert (nil:
	// none) and asks for the profiles: what the handshake let through.
	call := func(cert *tls.Certificate) error {
		cfg := &tls.Config{RootCAs: serverPool, ServerName: "127.0.0.1"}
		if cert != nil {
			// Shown whatever CAs the server names (a client offers
			// only a certificate of those by itself).
			cfg.GetClientCertificate = func(*tls.CertificateRequestInfo) (*tls.Certificate, error) { return cert, nil }
		}
		conn, err := grpc.NewClient(gnmiAddr, grpc.WithTransportCredentials(credentials.NewTLS(cfg)))
		if err != nil {
			t.Fatal(err)
		}
		defer conn.Close()
		ctx, cancel := context.WithTimeout(asAdmin(t), 20*time.Second)
		defer cancel()
		_, err = cpb.NewCertzClient(conn).GetProfileList(ctx, &cpb.GetProfileListRequest{})
		return err
	}
	// https makes a new TLS connection to the HTTPS listener showing cert
	// and reads from it: a refused certificate ends the connection.
	https := func(cert tls.Certificate) error {
		c, err := tls.Dial("tcp", httpsAddr, &tls.Config{RootCAs: serverPool, ServerName: "127.0.0.1", GetClientCertificate: func(*tls.CertificateRequestInfo) (*tls.Certificate, error) { return &cert, nil }, NextProtos: []string{"http/1.1"}})
		if err != nil {
			return err
		}
		defer c.Close()
		c.SetDeadline(time.Now().Add(10 * time.Second))
		if _, err := c.Write([]byte("GET /public/v1/state/SystemStatus HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n")); err != nil {
			return err
		}
		_, err = c.Read(make([]byte, 1))
		return err
	}
	expect := func(what string, want map[string]bool) {
		t.Helper()
		for name, cert := range map[string]*tls.Certificate{"alice": &alice, "bob": &bob, "carol": &carol} {
			err := call(cert)
			if (err == nil) != want[name] {
				t.Errorf("%s: %s's gRPC call: %v, want let in %v", what, name, err, want[name])
			}
			if herr := https(*cert); (herr == nil) != want[name] {
				t.Errorf("%s: %s's HTTPS request: %v, want let in %v", what, name, herr, want[name])
			}
		}
		if err := call(nil); err != nil {
			t.Errorf("%s: a client without a certificate: %v", what, err)
		}
	}
	rotate := func(reqs ...*cpb.RotateCertificateRequest) error {
		t.Helper()
		ctx, cancel := context.WithTimeout(asAdmin(t), time.Minute)
		defer cancel()
		st, err := certz.Rotate(ctx)
		if err != nil {
			return err
		}
		for _, r := range reqs {
			if err := st.Send(r); err != nil {
				break
			}
			if r.GetFinalizeRotation() == nil {
				if _, err := st.Recv(); err != nil {
					return err
				}
			}
		}
		st.CloseSend()
		_, err = recvAll(st.Recv)
		return err
	}

	expect("no trust bundle: no certificate asked for", map[string]bool{"alice": true, "bob": true, "carol": true})

	if err := rotate(uploadTo("system_default_profile", trustBundleOf(ca1)), finalizeOf("system_default_profile")); err != nil {
		t.Fatalf("rotate the trust bundle: %v", err)
	}
	expect("trust bundle CA 1", map[string]bool{"alice": true, "bob": true})

	if err := rotate(uploadTo("system_default_profile", crlBundleOf(ca1.crl(t, 1, 101))), finalizeOf("system_default_profile")); err != nil {
		t.Fatalf("rotate the revocation lists: %v", err)
	}
	expect("alice revoked", map[string]bool{"bob": true})

	// Refused, nothing changed: a list signed by no CA of the bundle; a
	// bundle the profile's lists do not verify with; a bundle of a
	// certificate that is no CA.
	wantCode(t, "a list of another CA", rotate(uploadTo("system_default_profile", crlBundleOf(ca2.crl(t, 1, 201)))), codes.InvalidArgument)
	wantCode(t, "a bundle without the lists' CA", rotate(uploadTo("system_default_profile", trustBundleOf(ca2))), codes.InvalidArgument)
	notCA := &testCA{cert: mustParse(t, ca1.sign(t, &ca1.key.PublicKey, 7, time.Now().Add(time.Hour)))}
	wantCode(t, "a bundle of a certificate that is no CA", rotate(uploadTo("system_default_profile", trustBundleOf(notCA))), codes.InvalidArgument)
	expect("after the refusals", map[string]bool{"bob": true})

	// Not finalized: in effect while the stream is open, rolled back after.
	ctx, cancel := context.WithTimeout(asAdmin(t), time.Minute)
	st, err := certz.Rotate(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if err := st.Send(uploadTo("system_default_profile", trustBundleOf(ca1, ca2), crlBundleOf())); err != nil {
		t.Fatal(err)
	}
	if _, err := st.Recv(); err != nil {
		t.Fatalf("upload: %v", err)
	}
	expect("uploaded, not finalized", map[string]bool{"alice": true, "bob": true, "carol": true})
	st.CloseSend()
	_, err = recvAll(st.Recv)
	wantCode(t, "a rotation not finalized", err, codes.Aborted)
	cancel()
	expect("rolled back", map[string]bool{"bob": true})

	// Profiles: staging holds CA 2's bundle; the default profile takes it
	// (with no lists: the old ones are CA 1's).
	if _, err := certz.AddProfile(asAdmin(t), &cpb.AddProfileRequest{SslProfileId: "staging"}); err != nil {
		t.Fatalf("AddProfile: %v", err)
	}
	_, err = certz.AddProfile(asAdmin(t), &cpb.AddProfileRequest{SslProfileId: "staging"})
	wantCode(t, "AddProfile twice", err, codes.AlreadyExists)
	_, err = certz.AddProfile(asAdmin(t), &cpb.AddProfileRequest{SslProfileId: "../x"})
	wantCode(t, "AddProfile of a path", err, codes.InvalidArgument)
	_, err = certz.AddProfile(as(t, "", ""), &cpb.AddProfileRequest{SslProfileId: "other"})
	wantCode(t, "AddProfile without credentials", err, codes.Unauthenticated)
	if l, err := certz.GetProfileList(asAdmin(t), &cpb.GetProfileListRequest{}); err != nil || !slices.Equal(l.GetSslProfileIds(), []string{"system_default_profile", "staging"}) {
		t.Errorf("profiles: %v %v", l, err)
	}
	wantCode(t, "copying what staging lacks", rotate(uploadTo("system_default_profile", existingOf("staging", cpb.ExistingEntity_ENTITY_TYPE_TRUST_BUNDLE))), codes.FailedPrecondition)
	if err := rotate(uploadTo("staging", trustBundleOf(ca2)), finalizeOf("staging")); err != nil {
		t.Fatalf("rotate staging: %v", err)
	}
	expect("staging rotated: the listeners' profile unchanged", map[string]bool{"bob": true})
	if err := rotate(uploadTo("system_default_profile", existingOf("staging", cpb.ExistingEntity_ENTITY_TYPE_TRUST_BUNDLE), crlBundleOf()), finalizeOf("system_default_profile")); err != nil {
		t.Fatalf("copy staging's bundle: %v", err)
	}
	expect("staging's bundle copied", map[string]bool{"carol": true})
	_, err = certz.DeleteProfile(asAdmin(t), &cpb.DeleteProfileRequest{SslProfileId: "system_default_profile"})
	wantCode(t, "DeleteProfile of the default", err, codes.FailedPrecondition)
	if _, err := certz.DeleteProfile(asAdmin(t), &cpb.DeleteProfileRequest{SslProfileId: "staging"}); err != nil {
		t.Errorf("DeleteProfile: %v", err)
	}
	_, err = certz.DeleteProfile(asAdmin(t), &cpb.DeleteProfileRequest{SslProfileId: "staging"})
	wantCode(t, "DeleteProfile twice", err, codes.NotFound)
	if _, err := os.Stat(filepath.Join(s.dir, "certz-profiles", "staging")); !os.IsNotExist(err) {
		t.Errorf("staging's directory: %v", err)
	}
}

func mustParse(t *testing.T, certPEM []byte) *x509.Certificate {
	t.Helper()
	b, _ := pem.Decode(certPEM)
	c, err := x509.ParseCertificate(b.Bytes)
	if err != nil {
		t.Fatal(err)
	}
	return c
}
