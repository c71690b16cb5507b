package gnoi

import (
	"bytes"
	"context"
	"crypto/tls"
	"encoding/pem"
	"errors"
	"fmt"
	"io"
	"net/netip"
	"os"
	"path/filepath"
	"sync"
	"time"

	cpb "github.com/openconfig/gnsi/certz"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"

	"github.com/swmgr/swmgr/internal/atomicfile"
	"github.com/swmgr/swmgr/internal/tlscert"
)

// Profile is the one SSL profile swmgr has: the certificate of its HTTPS
// and gRPC listeners. swmgr has no IDevID, so the default profile is the
// listeners' own and Rotate may replace it.
const Profile = "system_default_profile"

// CertFiles are the PEM files the running listeners serve their
// certificate from (tlscert.Watch reads them again when they change).
type CertFiles struct {
	Cert, Key string
}

// previous is where a file's contents before a rotation are kept (a hard
// link to them) until the rotation is finalized or rolled back.
func previous(path string) string { return path + ".previous" }

// csrSuite is the one key and signature a generated CSR has: what
// tlscert.Request makes.
const csrSuite = cpb.CSRSuite_CSRSUITE_X509_KEY_TYPE_ECDSA_PRIME256V1_SIGNATURE_ALGORITHM_SHA_2_256

// certzServer serves gNSI certz: Rotate of the listeners' certificate, one
// rotation at a time.
type certzServer struct {
	cpb.UnimplementedCertzServer
	s     *Server
	files CertFiles
	mu    sync.Mutex // held by the rotation in progress
}

// newCertz serves Rotate on files.
func newCertz(s *Server, files CertFiles) *certzServer {
	return &certzServer{s: s, files: files}
}

// PutBackUnfinishedRotation puts back the previous pair of a rotation that
// a stop of swmgr interrupted (both files' previous contents still kept
// beside them): it was not finalized. It says whether there was one. Run
// it before the listeners read the files.
func PutBackUnfinishedRotation(files CertFiles) (bool, error) {
	_, cerr := os.Stat(previous(files.Cert))
	_, kerr := os.Stat(previous(files.Key))
	if cerr != nil || kerr != nil {
		return false, nil
	}
	if err := (&certzServer{files: files}).rollback(); err != nil {
		return true, fmt.Errorf("put back the certificate of a rotation not finalized: %w", err)
	}
	return true, nil
}

// rotation is what one Rotate stream has done so far.
type rotation struct {
	generatedKey []byte // PEM, of the stream's GenerateCSR
	uploaded     *tls.Certificate
}

// Rotate replaces the listeners' certificate and key: an UploadRequest
// with the chain and its key (or the key of the stream's GenerateCSR) is
// checked, written over the files (the previous pair kept), and served
// from the next handshake on; a FinalizeRequest keeps it; a stream that
// ends otherwise puts the previous pair back.
func (c *certzServer) Rotate(st cpb.Certz_RotateServer) error {
	ctx := st.Context()
	if !c.mu.TryLock() {
		return status.Error(codes.Unavailable, "another certificate rotation is in progress; try again when it ends")
	}
	defer c.mu.Unlock()
	var r rotation
	for {
		req, err := st.Recv()
		if err != nil {
			if r.uploaded == nil {
				if errors.Is(err, io.EOF) {
					return nil
				}
				return err
			}
			return c.abandon(ctx, r, err)
		}
		if err := c.step(ctx, st, &r, req); err != nil {
			if r.uploaded != nil {
				return c.abandon(ctx, r, err)
			}
			return err
		}
		if req.GetFinalizeRotation() != nil {
			if lerr := c.finalize(); lerr != nil {
				return c.abandon(ctx, r, status.Errorf(codes.Internal, "finalize: %v", lerr))
			}
			c.s.record(ctx, "Rotate", rotateInfo(r.uploaded, "finalized"), nil)
			c.s.o.Log.Info("certz: certificate rotated", "file", c.files.Cert, "cert_sha256", tlscert.Fingerprint(*r.uploaded), "not_after", r.uploaded.Leaf.NotAfter)
			return nil
		}
	}
}

// step carries out one request of a Rotate stream.
func (c *certzServer) step(ctx context.Context, st cpb.Certz_RotateServer, r *rotation, req *cpb.RotateCertificateRequest) error {
	switch id := req.GetSslProfileId(); id {
	case "":
		return invalid("ssl_profile_id is required; swmgr's profile is %q", Profile)
	case Profile:
	default:
		return status.Errorf(codes.NotFound, "SSL profile %q: swmgr has one, %q", id, Profile)
	}
	switch {
	case req.GetGenerateCsr() != nil:
		if r.uploaded != nil {
			return status.Error(codes.FailedPrecondition, "a certificate is already uploaded in this stream")
		}
		keyPEM, csrPEM, err := generateCSR(req.GetGenerateCsr())
		if err != nil {
			return err
		}
		r.generatedKey = keyPEM
		return st.Send(&cpb.RotateCertificateResponse{RotateResponse: &cpb.RotateCertificateResponse_GeneratedCsr{GeneratedCsr: &cpb.GenerateCSRResponse{
			CertificateSigningRequest: &cpb.CertificateSigningRequest{Type: cpb.CertificateType_CERTIFICATE_TYPE_X509, Encoding: cpb.CertificateEncoding_CERTIFICATE_ENCODING_PEM, CertificateSigningRequest: csrPEM},
		}}})
	case req.GetCertificates() != nil:
		if r.uploaded != nil {
			return status.Error(codes.FailedPrecondition, "a certificate is already uploaded in this stream; finalize it or end the stream")
		}
		certPEM, keyPEM, err := uploaded(req.GetCertificates(), r.generatedKey)
		if err != nil {
			return err
		}
		cert, err := tlscert.Check(certPEM, keyPEM, time.Now())
		if err != nil {
			return invalid("the certificate and key: %v", err)
		}
		if err := c.install(certPEM, keyPEM); err != nil {
			c.s.record(ctx, "Rotate", rotateInfo(&cert, "upload"), err)
			return status.Errorf(codes.Internal, "install the certificate: %v", err)
		}
		r.uploaded = &cert
		c.s.o.Log.Info("certz: certificate uploaded; the previous one comes back unless the rotation is finalized", "file", c.files.Cert, "cert_sha256", tlscert.Fingerprint(cert))
		return st.Send(&cpb.RotateCertificateResponse{RotateResponse: &cpb.RotateCertificateResponse_Certificates{Certificates: &cpb.UploadResponse{}}})
	case req.GetFinalizeRotation() != nil:
		if r.uploaded == nil {
			return status.Error(codes.FailedPrecondition, "nothing to finalize: no certificate was uploaded in this stream")
		}
		return nil
	default:
		return invalid("a Rotate request needs generate_csr, certificates or finalize_rotation")
	}
}

// abandon puts the previous pair back after a stream that ended without
// finalizing its upload (why), and records it.
func (c *certzServer) abandon(ctx context.Context, r rotation, why error) error {
	if errors.Is(why, io.EOF) {
		why = status.Error(codes.Aborted, "the stream ended without finalize_rotation: the previous certificate is back")
	}
	if err := c.rollback(); err != nil {
		c.s.o.Log.Error("certz: cannot put the previous certificate back", "file", c.files.Cert, "err", err)
		why = status.Errorf(codes.Internal, "put the previous certificate back: %v", err)
	} else {
		c.s.o.Log.Warn("certz: rotation not finalized; the previous certificate is back", "file", c.files.Cert, "err", why)
	}
	// The stream's context may be over; the config log entry is still due.
	c.s.record(context.WithoutCancel(ctx), "Rotate", rotateInfo(r.uploaded, "rolled back"), why)
	return why
}

// install writes the new pair over the files, each file's contents before
// kept as a hard link beside it; the key goes first, and the listeners
// keep the previous pair until both files match.
func (c *certzServer) install(certPEM, keyPEM []byte) error {
	for _, f := range []string{c.files.Key, c.files.Cert} {
		os.Remove(previous(f))
		if err := os.Link(f, previous(f)); err != nil {
			c.dropPrevious()
			return fmt.Errorf("keep the previous %s: %w", f, err)
		}
	}
	if err := atomicfile.ReplaceKeepingOwner(c.files.Key, keyPEM); err != nil {
		return errors.Join(err, c.rollback())
	}
	if err := atomicfile.ReplaceKeepingOwner(c.files.Cert, certPEM); err != nil {
		return errors.Join(err, c.rollback())
	}
	return nil
}

// rollback renames the kept previous pair back over the files.
func (c *certzServer) rollback() error {
	var errs []error
	for _, f := range []string{c.files.Cert, c.files.Key} {
		if err := os.Rename(previous(f), f); err != nil {
			errs = append(errs, err)
		}
	}
	errs = append(errs, atomicfile.SyncDir(filepath.Dir(c.files.Cert)), atomicfile.SyncDir(filepath.Dir(c.files.Key)))
	return errors.Join(errs...)
}

// finalize drops the kept previous pair: the new one stays, restarts too.
func (c *certzServer) finalize() error {
	if err := c.dropPrevious(); err != nil {
		return err
	}
	return errors.Join(atomicfile.SyncDir(filepath.Dir(c.files.Cert)), atomicfile.SyncDir(filepath.Dir(c.files.Key)))
}

func (c *certzServer) dropPrevious() error {
	var errs []error
	for _, f := range []string{c.files.Cert, c.files.Key} {
		if err := os.Remove(previous(f)); err != nil && !errors.Is(err, os.ErrNotExist) {
			errs = append(errs, err)
		}
	}
	return errors.Join(errs...)
}

// rotateInfo is the config log's data of a rotation: the certificate's
// fingerprint, subject and end (never its key).
func rotateInfo(cert *tls.Certificate, step string) map[string]any {
	m := map[string]any{"profile": Profile, "step": step}
	if cert != nil {
		m["cert_sha256"] = tlscert.Fingerprint(*cert)
		m["subject"] = cert.Leaf.Subject.String()
		m["not_after"] = cert.Leaf.NotAfter.UTC().Format(time.RFC3339)
	}
	return m
}

// uploaded is the PEM chain (leaf first) and key of an UploadRequest: one
// certificate_chain entity; its leaf's key given, or the stream's
// generated one.
func uploaded(u *cpb.UploadRequest, generatedKey []byte) (certPEM, keyPEM []byte, err error) {
	var chain *cpb.CertificateChain
	for _, e := range u.GetEntities() {
		switch {
		case e.GetCertificateChain() != nil:
			if chain != nil {
				return nil, nil, invalid("more than one certificate_chain")
			}
			chain = e.GetCertificateChain()
		case e.GetTrustBundle() != nil, e.GetTrustBundlePkcs7() != nil, e.GetTrustBundlePcks7() != nil,
			e.GetCertificateRevocationListBundle() != nil, e.GetAuthenticationPolicy() != nil:
			return nil, nil, status.Error(codes.Unimplemented, "swmgr does not authenticate clients by certificate: only a certificate_chain can be uploaded")
		case e.GetExistingEntity() != nil:
			return nil, nil, status.Error(codes.Unimplemented, "swmgr has one SSL profile: there is no other to copy from")
		default:
			return nil, nil, invalid("an entity without contents")
		}
	}
	if chain == nil {
		return nil, nil, invalid("the upload has no certificate_chain")
	}
	for link, depth := chain, 0; link != nil; link, depth = link.GetParent(), depth+1 {
		if depth == 10 {
			return nil, nil, invalid("the certificate chain is longer than 10")
		}
		b, err := certificatePEM(link.GetCertificate())
		if err != nil {
			return nil, nil, invalid("certificate %d of the chain: %v", depth, err)
		}
		certPEM = append(certPEM, b...)
	}
	leaf := chain.GetCertificate()
	switch {
	case len(leaf.GetRawPrivateKey()) > 0:
		keyPEM = leaf.GetRawPrivateKey()
	case len(leaf.GetPrivateKey()) > 0: //nolint:staticcheck // the deprecated field, still sent by older clients
		keyPEM = leaf.GetPrivateKey() //nolint:staticcheck
	case leaf.GetKeySource() == cpb.Certificate_KEY_SOURCE_GENERATED:
		if generatedKey == nil {
			return nil, nil, invalid("key_source GENERATED, but no CSR was generated in this stream")
		}
		keyPEM = generatedKey
	default:
		return nil, nil, invalid("the certificate needs its private key (raw_private_key, or key_source GENERATED after generate_csr)")
	}
	return certPEM, keyPEM, nil
}

// certificatePEM is one X.509 certificate of a chain as PEM.
func certificatePEM(c *cpb.Certificate) ([]byte, error) {
	if t := c.GetType(); t != cpb.CertificateType_CERTIFICATE_TYPE_X509 && t != cpb.CertificateType_CERTIFICATE_TYPE_UNSPECIFIED {
		return nil, fmt.Errorf("type %s: only X.509", t)
	}
	raw := c.GetRawCertificate()
	if len(raw) == 0 {
		raw = c.GetCertificate() //nolint:staticcheck // the deprecated field, still sent by older clients
	}
	if len(raw) == 0 {
		return nil, errors.New("no raw_certificate")
	}
	switch c.GetEncoding() {
	case cpb.CertificateEncoding_CERTIFICATE_ENCODING_DER:
		return pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: raw}), nil
	case cpb.CertificateEncoding_CERTIFICATE_ENCODING_PEM, cpb.CertificateEncoding_CERTIFICATE_ENCODING_UNSPECIFIED, cpb.CertificateEncoding_CERTIFICATE_ENCODING_CRT:
		block, rest := pem.Decode(raw)
		if block == nil || block.Type != "CERTIFICATE" {
			return nil, errors.New("not a PEM certificate")
		}
		if len(bytes.TrimSpace(rest)) > 0 {
			return nil, errors.New("more than one certificate: give the chain's others as parents")
		}
		return pem.EncodeToMemory(block), nil
	default:
		return nil, fmt.Errorf("encoding %s", c.GetEncoding())
	}
}

// generateCSR makes a key and a CSR for the request's names: the suite
// tlscert.Request makes (ECDSA P-256, SHA-256) only.
func generateCSR(g *cpb.GenerateCSRRequest) (keyPEM, csrPEM []byte, err error) {
	p := g.GetParams()
	if s := p.GetCsrSuite(); s != csrSuite {
		return nil, nil, invalid("csr_suite %s: swmgr generates %s only", s, csrSuite)
	}
	if len(g.GetIntegrities()) > 0 {
		return nil, nil, status.Error(codes.Unimplemented, "swmgr has no root of trust to attest a CSR with")
	}
	sans := append([]string{}, p.GetSan().GetDns()...)
	for _, ip := range append(p.GetSan().GetIps(), p.GetIpAddress()) {
		if ip == "" {
			continue
		}
		if _, err := netip.ParseAddr(ip); err != nil {
			return nil, nil, invalid("IP address %q: %v", ip, err)
		}
		sans = append(sans, ip)
	}
	keyPEM, csrPEM, err = tlscert.Request(p.GetCommonName(), sans)
	if err != nil {
		return nil, nil, invalid("%v", err)
	}
	return keyPEM, csrPEM, nil
}

// CanGenerateCSR says whether GenerateCSR would make a CSR of params.
func (c *certzServer) CanGenerateCSR(_ context.Context, req *cpb.CanGenerateCSRRequest) (*cpb.CanGenerateCSRResponse, error) {
	return &cpb.CanGenerateCSRResponse{CanGenerate: req.GetParams().GetCsrSuite() == csrSuite}, nil
}

// GetProfileList lists swmgr's one profile.
func (c *certzServer) GetProfileList(context.Context, *cpb.GetProfileListRequest) (*cpb.GetProfileListResponse, error) {
	return &cpb.GetProfileListResponse{SslProfileIds: []string{Profile}}, nil
}
