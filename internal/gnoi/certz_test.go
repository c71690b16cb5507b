package gnoi

import (
	"bytes"
	"context"
	"io"
	"log/slog"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	cpb "github.com/openconfig/gnsi/certz"
	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"

	"github.com/swmgr/swmgr/internal/engine/enginetest"
	"github.com/swmgr/swmgr/internal/tlscert"
)

// A rotation that a restart interrupted (the previous pair still kept
// beside the files) was not finalized: the previous pair is put back when
// swmgr starts, and the kept copies are gone.
func TestPutBackUnfinishedRotation(t *testing.T) {
	dir := t.TempDir()
	files := CertFiles{Cert: filepath.Join(dir, "tls-cert.pem"), Key: filepath.Join(dir, "tls-key.pem")}
	write := func(path string, b []byte) {
		if err := os.WriteFile(path, b, 0o600); err != nil {
			t.Fatal(err)
		}
	}
	oldCert, oldKey, err := tlscert.SelfSigned([]string{"localhost"}, time.Now())
	if err != nil {
		t.Fatal(err)
	}
	newCert, newKey, err := tlscert.SelfSigned([]string{"localhost"}, time.Now())
	if err != nil {
		t.Fatal(err)
	}
	write(files.Cert, newCert)
	write(files.Key, newKey)
	write(previous(files.Cert), oldCert)
	write(previous(files.Key), oldKey)
	write(rotating(files), nil)
	if was, err := PutBackUnfinishedRotation(files); err != nil || !was {
		t.Fatalf("%v %v", was, err)
	}
	for path, want := range map[string][]byte{files.Cert: oldCert, files.Key: oldKey} {
		if got, _ := os.ReadFile(path); !bytes.Equal(got, want) {
			t.Errorf("%s is not the previous pair's", path)
		}
		if _, err := os.Stat(previous(path)); !os.IsNotExist(err) {
			t.Errorf("%s is still there: %v", previous(path), err)
		}
	}
	if _, err := os.Stat(rotating(files)); !os.IsNotExist(err) {
		t.Errorf("the rotation's mark is still there: %v", err)
	}
	// A finalize cut short after its mark went: the new files stay, the
	// previous ones are dropped.
	write(previous(files.Cert), newCert)
	write(previous(files.Key), newKey)
	if was, err := PutBackUnfinishedRotation(files); err != nil || was {
		t.Fatalf("after a finalize: %v %v", was, err)
	}
	if got, _ := os.ReadFile(files.Cert); !bytes.Equal(got, oldCert) {
		t.Error("a finalized rotation was put back")
	}
	if _, err := os.Stat(previous(files.Cert)); !os.IsNotExist(err) {
		t.Errorf("a finalize's leftover is still there: %v", err)
	}
}

// An upload is refused with InvalidArgument or Unimplemented, by what it
// holds, before any file is touched.
func TestUploadedRefusals(t *testing.T) {
	certPEM, keyPEM, err := tlscert.SelfSigned([]string{"localhost"}, time.Now())
	if err != nil {
		t.Fatal(err)
	}
	leaf := func(key []byte) *cpb.Certificate {
		c := &cpb.Certificate{Type: cpb.CertificateType_CERTIFICATE_TYPE_X509, Encoding: cpb.CertificateEncoding_CERTIFICATE_ENCODING_PEM,
			CertificateType: &cpb.Certificate_RawCertificate{RawCertificate: certPEM}}
		if key != nil {
			c.PrivateKeyType = &cpb.Certificate_RawPrivateKey{RawPrivateKey: key}
		} else {
			c.PrivateKeyType = &cpb.Certificate_KeySource_{KeySource: cpb.Certificate_KEY_SOURCE_GENERATED}
		}
		return c
	}
	chain := func(c *cpb.Certificate) *cpb.Entity {
		return &cpb.Entity{Entity: &cpb.Entity_CertificateChain{CertificateChain: &cpb.CertificateChain{Certificate: c}}}
	}
	twoInOne := leaf(keyPEM)
	twoInOne.CertificateType = &cpb.Certificate_RawCertificate{RawCertificate: append(append([]byte{}, certPEM...), certPEM...)}
	for _, c := range []struct {
		name     string
		entities []*cpb.Entity
		want     codes.Code
	}{
		{"a chain with its key", []*cpb.Entity{chain(leaf(keyPEM))}, codes.OK},
		{"nothing", nil, codes.InvalidArgument},
		{"two chains", []*cpb.Entity{chain(leaf(keyPEM)), chain(leaf(keyPEM))}, codes.InvalidArgument},
		{"a generated key never generated", []*cpb.Entity{chain(leaf(nil))}, codes.InvalidArgument},
		{"two certificates in one", []*cpb.Entity{chain(twoInOne)}, codes.InvalidArgument},
		{"a PKCS#7 trust bundle", []*cpb.Entity{chain(leaf(keyPEM)), {Entity: &cpb.Entity_TrustBundlePkcs7{TrustBundlePkcs7: &cpb.TrustBundle{}}}}, codes.Unimplemented},
		{"an authentication policy", []*cpb.Entity{{Entity: &cpb.Entity_AuthenticationPolicy{AuthenticationPolicy: &cpb.AuthenticationPolicy{}}}}, codes.Unimplemented},
		{"a profile that is not there", []*cpb.Entity{{Entity: &cpb.Entity_ExistingEntity{ExistingEntity: &cpb.ExistingEntity{SslProfileId: "x"}}}}, codes.NotFound},
	} {
		t.Run(c.name, func(t *testing.T) {
			up, err := (&certzServer{profiles: t.TempDir()}).parseUpload(&cpb.UploadRequest{Entities: c.entities}, &rotation{})
			if status.Code(err) != c.want {
				t.Fatalf("%v, want %s", err, c.want)
			}
			if c.want == codes.OK && (!bytes.Equal(up.certPEM, certPEM) || !bytes.Equal(up.keyPEM, keyPEM)) {
				t.Errorf("the pair is not the one uploaded")
			}
		})
	}
}

// fakeRotate is a Rotate stream of reqs, then the client's end.
type fakeRotate struct {
	grpc.ServerStream
	reqs []*cpb.RotateCertificateRequest
}

func (f *fakeRotate) Context() context.Context                  { return context.Background() }
func (f *fakeRotate) Send(*cpb.RotateCertificateResponse) error { return nil }
func (f *fakeRotate) Recv() (*cpb.RotateCertificateRequest, error) {
	if len(f.reqs) == 0 {
		return nil, io.EOF
	}
	r := f.reqs[0]
	f.reqs = f.reqs[1:]
	return r, nil
}

// lockProbe is a log handler that, at each certz line saying how a
// rotation ended, tries to start another certz change.
type lockProbe struct {
	c       **certzServer
	lines   []string
	blocked []string
}

func (h *lockProbe) Enabled(context.Context, slog.Level) bool { return true }
func (h *lockProbe) WithAttrs([]slog.Attr) slog.Handler       { return h }
func (h *lockProbe) WithGroup(string) slog.Handler            { return h }
func (h *lockProbe) Handle(_ context.Context, r slog.Record) error {
	if strings.HasPrefix(r.Message, "certz: rotated") || strings.HasPrefix(r.Message, "certz: rotation not finalized") {
		h.lines = append(h.lines, r.Message)
		if (*h.c).mu.TryLock() {
			(*h.c).mu.Unlock()
		} else {
			h.blocked = append(h.blocked, r.Message)
		}
	}
	return nil
}

// The line that says how a rotation ended is logged once another certz
// change may start: a client that reads it and rotates again is not
// refused as Unavailable.
func TestRotationEndLoggedAfterItsLock(t *testing.T) {
	dir := t.TempDir()
	files := CertFiles{Cert: filepath.Join(dir, "c.pem"), Key: filepath.Join(dir, "k.pem"), CA: filepath.Join(dir, "ca.pem"), CRL: filepath.Join(dir, "crl.pem")}
	certPEM, keyPEM, _ := tlscert.SelfSigned([]string{"localhost"}, time.Now())
	os.WriteFile(files.Cert, certPEM, 0o600)
	os.WriteFile(files.Key, keyPEM, 0o600)
	newCert, newKey, _ := tlscert.SelfSigned([]string{"localhost"}, time.Now())
	var c *certzServer
	probe := &lockProbe{c: &c}
	s, err := New(Options{Engine: enginetest.New(t, t.TempDir()).E, Cert: &files, Log: slog.New(probe)})
	if err != nil {
		t.Fatal(err)
	}
	c = s.certz
	upload := &cpb.RotateCertificateRequest{SslProfileId: Profile, RotateRequest: &cpb.RotateCertificateRequest_Certificates{Certificates: &cpb.UploadRequest{Entities: []*cpb.Entity{{
		Entity: &cpb.Entity_CertificateChain{CertificateChain: &cpb.CertificateChain{Certificate: &cpb.Certificate{
			CertificateType: &cpb.Certificate_RawCertificate{RawCertificate: newCert}, PrivateKeyType: &cpb.Certificate_RawPrivateKey{RawPrivateKey: newKey}}}}}}}}}
	finalize := &cpb.RotateCertificateRequest{SslProfileId: Profile, RotateRequest: &cpb.RotateCertificateRequest_FinalizeRotation{FinalizeRotation: &cpb.FinalizeRequest{}}}
	if err := c.Rotate(&fakeRotate{reqs: []*cpb.RotateCertificateRequest{upload}}); status.Code(err) != codes.Aborted {
		t.Fatalf("not finalized: %v", err)
	}
	if err := c.Rotate(&fakeRotate{reqs: []*cpb.RotateCertificateRequest{upload, finalize}}); err != nil {
		t.Fatalf("finalized: %v", err)
	}
	if len(probe.lines) != 2 || len(probe.blocked) != 0 {
		t.Errorf("lines %q; logged while the rotation held its lock: %q", probe.lines, probe.blocked)
	}
}
