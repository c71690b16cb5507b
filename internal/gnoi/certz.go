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

// Profile is the default SSL profile: the certificate of swmgr's HTTPS
// and gRPC listeners, and the trust bundle and revocation lists their
// client certificates are checked against. swmgr has no IDevID, so the
// default profile is the listeners' own and Rotate may replace it.
const Profile = "system_default_profile"

// CertFiles are the PEM files of a profile: for the default profile, the
// files the running listeners serve their certificate from and check
// client certificates with (tlscert.Watch and TrustClients read them
// again when they change).
type CertFiles struct {
	Cert, Key string
	// CA is the trust bundle (CA certificates) and CRL the revocation
	// lists client certificates are checked against; "": a Rotate of
	// either is Unimplemented.
	CA, CRL string
}

// list is the profile's files in the order a rotation writes them: the
// key before its certificate (the listeners keep the previous pair until
// both match), the bundle before the lists it signs.
func (f CertFiles) list() []string {
	out := []string{f.Key, f.Cert}
	for _, p := range []string{f.CA, f.CRL} {
		if p != "" {
			out = append(out, p)
		}
	}
	return out
}

// previous is where a file's contents before a rotation are kept (a hard
// link to them) until the rotation is finalized or rolled back.
func previous(path string) string { return path + ".previous" }

// rotating marks a rotation of files in progress: made before any file is
// written, removed first by a finalize (after it, the kept previous files
// are leftovers) and last by a rollback. A start that finds it puts the
// previous files back.
func rotating(f CertFiles) string { return f.Cert + ".rotating" }

// csrSuite is the one key and signature a generated CSR has: what
// tlscert.Request makes.
const csrSuite = cpb.CSRSuite_CSRSUITE_X509_KEY_TYPE_ECDSA_PRIME256V1_SIGNATURE_ALGORITHM_SHA_2_256

// certzServer serves gNSI certz: Rotate of a profile's certificate, trust
// bundle and revocation lists, and the profiles; one RPC that changes
// something at a time.
type certzServer struct {
	cpb.UnimplementedCertzServer
	s     *Server
	files CertFiles
	// profiles keeps the other profiles, one directory each; "": there
	// are none (AddProfile is Unimplemented).
	profiles string
	mu       sync.Mutex // held by the rotation or profile change in progress
}

// newCertz serves Rotate on files, and the other profiles in profiles.
// A rotation of another profile that a stop of swmgr interrupted is put
// back now (the default profile's is put back before the listeners
// start: PutBackUnfinishedRotation).
func newCertz(s *Server, files CertFiles, profiles string) *certzServer {
	c := &certzServer{s: s, files: files, profiles: profiles}
	if list, err := c.GetProfileList(context.Background(), nil); err == nil {
		for _, id := range list.GetSslProfileIds()[1:] {
			pf, _ := c.profileFiles(id)
			if was, err := PutBackUnfinishedRotation(pf); was {
				s.o.Log.Warn("certz: a rotation not finalized before swmgr stopped was put back", "profile", id, "err", err)
			}
		}
	}
	return c
}

// PutBackUnfinishedRotation puts back the previous files of a rotation
// that a stop of swmgr interrupted: it was not finalized. It says whether
// there was one. Run it before the listeners read the files.
func PutBackUnfinishedRotation(files CertFiles) (bool, error) {
	if _, err := os.Stat(rotating(files)); err != nil {
		// No rotation in progress; what a finalize cut short left goes.
		dropPrevious(files)
		return false, nil
	}
	if err := rollback(files); err != nil {
		return true, fmt.Errorf("put back the certificate of a rotation not finalized: %w", err)
	}
	return true, nil
}

// rotation is what one Rotate stream has done so far.
type rotation struct {
	profile      string
	files        CertFiles
	generatedKey []byte // PEM, of the stream's GenerateCSR
	uploaded     *upload
	told         func() // logs how the rotation ended, once mu is released
}

// Rotate replaces a profile's certificate and key, trust bundle or
// revocation lists: an UploadRequest is checked, written over the files
// (the previous ones kept), and in effect from the next handshake on; a
// FinalizeRequest keeps it; a stream that ends otherwise puts the
// previous files back.
func (c *certzServer) Rotate(st cpb.Certz_RotateServer) error {
	if !c.mu.TryLock() {
		return status.Error(codes.Unavailable, "another certz change is in progress; try again when it ends")
	}
	var r rotation
	err := c.rotate(st, &r)
	c.mu.Unlock()
	// Logged once the next change may start: whoever reads the line can
	// rotate again.
	if r.told != nil {
		r.told()
	}
	return err
}

// rotate serves a Rotate stream, holding mu.
func (c *certzServer) rotate(st cpb.Certz_RotateServer, r *rotation) error {
	ctx := st.Context()
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
		if err := c.step(ctx, st, r, req); err != nil {
			if r.uploaded != nil {
				return c.abandon(ctx, r, err)
			}
			return err
		}
		if req.GetFinalizeRotation() != nil {
			if lerr := finalize(r.files); lerr != nil {
				return c.abandon(ctx, r, status.Errorf(codes.Internal, "finalize: %v", lerr))
			}
			c.s.record(ctx, "Rotate", r.uploaded.info(r.profile, "finalized"), nil)
			r.told = func() {
				c.s.o.Log.Info("certz: rotated", append([]any{"profile", r.profile}, r.uploaded.logAttrs()...)...)
			}
			return nil
		}
	}
}

// step carries out one request of a Rotate stream.
func (c *certzServer) step(ctx context.Context, st cpb.Certz_RotateServer, r *rotation, req *cpb.RotateCertificateRequest) error {
	id := req.GetSslProfileId()
	if r.profile != "" && id != r.profile {
		return invalid("ssl_profile_id %q: this stream rotates %q", id, r.profile)
	}
	if r.profile == "" {
		files, err := c.profileFiles(id)
		if err != nil {
			return err
		}
		r.profile, r.files = id, files
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
			return status.Error(codes.FailedPrecondition, "an upload is already in place in this stream; finalize it or end the stream")
		}
		u, err := c.parseUpload(req.GetCertificates(), r)
		if err != nil {
			return err
		}
		if err := u.check(r.files, time.Now()); err != nil {
			return err
		}
		if err := install(r.files, u.writes(r.files)); err != nil {
			c.s.record(ctx, "Rotate", u.info(r.profile, "upload"), err)
			return status.Errorf(codes.Internal, "install the upload: %v", err)
		}
		r.uploaded = u
		c.s.o.Log.Info("certz: uploaded; the previous files come back unless the rotation is finalized", append([]any{"profile", r.profile}, u.logAttrs()...)...)
		return st.Send(&cpb.RotateCertificateResponse{RotateResponse: &cpb.RotateCertificateResponse_Certificates{Certificates: &cpb.UploadResponse{}}})
	case req.GetFinalizeRotation() != nil:
		if r.uploaded == nil {
			return status.Error(codes.FailedPrecondition, "nothing to finalize: nothing was uploaded in this stream")
		}
		return nil
	default:
		return invalid("a Rotate request needs generate_csr, certificates or finalize_rotation")
	}
}

// abandon puts the previous files back after a stream that ended without
// finalizing its upload (why), and records it; its log line is told once
// mu is released.
func (c *certzServer) abandon(ctx context.Context, r *rotation, why error) error {
	if errors.Is(why, io.EOF) {
		why = status.Error(codes.Aborted, "the stream ended without finalize_rotation: the previous certificate, bundle and lists are back")
	}
	if err := rollback(r.files); err != nil {
		c.s.o.Log.Error("certz: cannot put the previous files back", "profile", r.profile, "err", err)
		why = status.Errorf(codes.Internal, "put the previous files back: %v", err)
	} else {
		told := why
		r.told = func() {
			c.s.o.Log.Warn("certz: rotation not finalized; the previous files are back", "profile", r.profile, "err", told)
		}
	}
	// The stream's context may be over; the config log entry is still due.
	c.s.record(context.WithoutCancel(ctx), "Rotate", r.uploaded.info(r.profile, "rolled back"), why)
	return why
}

// install writes contents over their files, in files' order, each file's
// contents before kept as a hard link beside it (a file not there before
// is made empty first: an empty bundle or list is none), after marking
// the rotation in progress.
func install(files CertFiles, contents map[string][]byte) error {
	if err := atomicfile.Replace(rotating(files), nil, 0o600); err != nil {
		return fmt.Errorf("mark the rotation: %w", err)
	}
	for _, f := range files.list() {
		if _, ok := contents[f]; !ok {
			continue
		}
		if _, err := os.Stat(f); errors.Is(err, os.ErrNotExist) {
			if err := atomicfile.Replace(f, nil, 0o644); err != nil {
				return errors.Join(err, rollback(files))
			}
		}
		os.Remove(previous(f))
		if err := os.Link(f, previous(f)); err != nil {
			return errors.Join(fmt.Errorf("keep the previous %s: %w", f, err), rollback(files))
		}
	}
	for _, f := range files.list() {
		b, ok := contents[f]
		if !ok {
			continue
		}
		if err := atomicfile.ReplaceKeepingOwner(f, b); err != nil {
			return errors.Join(err, rollback(files))
		}
	}
	return nil
}

// rollback renames the kept previous files back over the files, then
// drops the rotation's mark.
func rollback(files CertFiles) error {
	var errs []error
	for _, f := range files.list() {
		if err := os.Rename(previous(f), f); err != nil && !errors.Is(err, os.ErrNotExist) {
			errs = append(errs, err)
		}
	}
	errs = append(errs, syncDirs(files))
	if len(errs) == 1 && errs[0] == nil {
		errs = append(errs, os.Remove(rotating(files)))
	}
	return errors.Join(errs...)
}

// finalize keeps the new files: the rotation's mark goes first (from then
// on a restart keeps them too), then the previous files.
func finalize(files CertFiles) error {
	if err := os.Remove(rotating(files)); err != nil {
		return err
	}
	if err := syncDirs(files); err != nil {
		return err
	}
	return dropPrevious(files)
}

func dropPrevious(files CertFiles) error {
	var errs []error
	for _, f := range files.list() {
		if err := os.Remove(previous(f)); err != nil && !errors.Is(err, os.ErrNotExist) {
			errs = append(errs, err)
		}
	}
	return errors.Join(errs...)
}

// syncDirs syncs the directories of the profile's files.
func syncDirs(files CertFiles) error {
	dirs := map[string]bool{}
	var errs []error
	for _, f := range files.list() {
		if d := filepath.Dir(f); !dirs[d] {
			dirs[d] = true
			errs = append(errs, atomicfile.SyncDir(d))
		}
	}
	return errors.Join(errs...)
}

// upload is what an UploadRequest gives: any of the certificate and its
// key, the trust bundle and the revocation lists (PEM).
type upload struct {
	certPEM, keyPEM []byte
	caPEM, crlPEM   []byte
	hasCert         bool
	hasCA, hasCRL   bool
	cert            *tls.Certificate // checked
	cas             int
	crls            int
}

// writes is what the upload writes, by file.
func (u *upload) writes(files CertFiles) map[string][]byte {
	out := map[string][]byte{}
	if u.hasCert {
		out[files.Cert], out[files.Key] = u.certPEM, u.keyPEM
	}
	if u.hasCA {
		out[files.CA] = u.caPEM
	}
	if u.hasCRL {
		out[files.CRL] = u.crlPEM
	}
	return out
}

// check refuses an upload the profile should not take (InvalidArgument,
// nothing written): a certificate tlscert.Check refuses, a bundle with
// anything but CA certificates, revocation lists signed by no CA of the
// bundle they will be checked with (the one uploaded, or the profile's).
func (u *upload) check(files CertFiles, now time.Time) error {
	if u.hasCert {
		cert, err := tlscert.Check(u.certPEM, u.keyPEM, now)
		if err != nil {
			return invalid("the certificate and key: %v", err)
		}
		u.cert = &cert
	}
	if !u.hasCA && !u.hasCRL {
		return nil
	}
	if files.CA == "" {
		return status.Error(codes.Unimplemented, "this profile checks no client certificates: no trust bundle or revocation lists")
	}
	caPEM, crlPEM := u.caPEM, u.crlPEM
	if !u.hasCA {
		caPEM = readOrEmpty(files.CA)
	}
	if !u.hasCRL {
		crlPEM = readOrEmpty(files.CRL)
	}
	trust, err := tlscert.ParseClientTrust(caPEM, crlPEM)
	switch {
	case err != nil && !u.hasCRL:
		return invalid("the trust bundle with the profile's revocation lists: %v (upload lists it signs with it)", err)
	case err != nil:
		return invalid("%v", err)
	case u.hasCA && trust.Empty():
		return invalid("the trust bundle holds no certificate")
	}
	u.cas, u.crls = len(trust.CAs), len(trust.CRLs)
	return nil
}

func readOrEmpty(path string) []byte {
	b, _ := os.ReadFile(path)
	return b
}

// info is the config log's data of a rotation: the certificate's
// fingerprint, subject and end (never its key), how many CAs and lists.
func (u *upload) info(profile, step string) map[string]any {
	m := map[string]any{"profile": profile, "step": step}
	if u == nil {
		return m
	}
	if u.cert != nil {
		m["cert_sha256"] = tlscert.Fingerprint(*u.cert)
		m["subject"] = u.cert.Leaf.Subject.String()
		m["not_after"] = u.cert.Leaf.NotAfter.UTC().Format(time.RFC3339)
	}
	if u.hasCA {
		m["trust_bundle_cas"] = u.cas
	}
	if u.hasCRL {
		m["revocation_lists"] = u.crls
	}
	return m
}

// logAttrs are info's, for swmgr's log.
func (u *upload) logAttrs() []any {
	var out []any
	if u.cert != nil {
		out = append(out, "cert_sha256", tlscert.Fingerprint(*u.cert), "not_after", u.cert.Leaf.NotAfter)
	}
	if u.hasCA {
		out = append(out, "trust_bundle_cas", u.cas)
	}
	if u.hasCRL {
		out = append(out, "revocation_lists", u.crls)
	}
	return out
}

// parseUpload reads an UploadRequest: at most one of each entity (a
// certificate_chain with its leaf's key given or generated in the
// stream, a trust_bundle, a certificate_revocation_list_bundle), or that
// entity copied from another profile (existing_entity).
func (c *certzServer) parseUpload(u *cpb.UploadRequest, r *rotation) (*upload, error) {
	var up upload
	once := func(seen *bool, what string) error {
		if *seen {
			return invalid("more than one %s", what)
		}
		*seen = true
		return nil
	}
	for _, e := range u.GetEntities() {
		switch {
		case e.GetCertificateChain() != nil:
			if err := once(&up.hasCert, "certificate_chain"); err != nil {
				return nil, err
			}
			var err error
			if up.certPEM, up.keyPEM, err = chainAndKey(e.GetCertificateChain(), r.generatedKey); err != nil {
				return nil, err
			}
		case e.GetTrustBundle() != nil:
			if err := once(&up.hasCA, "trust bundle"); err != nil {
				return nil, err
			}
			var err error
			if up.caPEM, err = chainPEM(e.GetTrustBundle()); err != nil {
				return nil, err
			}
		case e.GetCertificateRevocationListBundle() != nil:
			if err := once(&up.hasCRL, "certificate_revocation_list_bundle"); err != nil {
				return nil, err
			}
			var err error
			if up.crlPEM, err = crlBundlePEM(e.GetCertificateRevocationListBundle()); err != nil {
				return nil, err
			}
		case e.GetTrustBundlePkcs7() != nil, e.GetTrustBundlePcks7() != nil: //nolint:staticcheck // the deprecated field, refused alike
			return nil, status.Error(codes.Unimplemented, "PKCS#7 trust bundles: send the CA certificates as trust_bundle (a certificate chain)")
		case e.GetAuthenticationPolicy() != nil:
			return nil, status.Error(codes.Unimplemented, "authentication policies: swmgr checks a client certificate against the trust bundle and revocation lists only")
		case e.GetExistingEntity() != nil:
			if err := c.copyEntity(e.GetExistingEntity(), &up, once); err != nil {
				return nil, err
			}
		default:
			return nil, invalid("an entity without contents")
		}
	}
	if !up.hasCert && !up.hasCA && !up.hasCRL {
		return nil, invalid("the upload has no certificate_chain, trust_bundle nor certificate_revocation_list_bundle")
	}
	return &up, nil
}

// chainAndKey is a certificate_chain's PEM (leaf first) and its leaf's
// key: given, or the stream's generated one.
func chainAndKey(chain *cpb.CertificateChain, generatedKey []byte) (certPEM, keyPEM []byte, err error) {
	if certPEM, err = chainPEM(chain); err != nil {
		return nil, nil, err
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

// chainPEM is a chain's certificates as PEM, first to last (at most 10:
// a certificate and its issuers, or a trust bundle's CAs).
func chainPEM(chain *cpb.CertificateChain) ([]byte, error) {
	var out []byte
	for link, depth := chain, 0; link != nil; link, depth = link.GetParent(), depth+1 {
		if depth == 10 {
			return nil, invalid("the certificate chain is longer than 10")
		}
		b, err := certificatePEM(link.GetCertificate())
		if err != nil {
			return nil, invalid("certificate %d of the chain: %v", depth, err)
		}
		out = append(out, b...)
	}
	return out, nil
}

// crlBundlePEM is a bundle's revocation lists as PEM (X509 CRL blocks).
func crlBundlePEM(b *cpb.CertificateRevocationListBundle) ([]byte, error) {
	var out []byte
	for i, l := range b.GetCertificateRevocationLists() {
		if t := l.GetType(); t != cpb.CertificateType_CERTIFICATE_TYPE_X509 && t != cpb.CertificateType_CERTIFICATE_TYPE_UNSPECIFIED {
			return nil, invalid("revocation list %d: type %s: only X.509", i, t)
		}
		raw := l.GetCertificateRevocationList()
		switch l.GetEncoding() {
		case cpb.CertificateEncoding_CERTIFICATE_ENCODING_DER:
			out = append(out, pem.EncodeToMemory(&pem.Block{Type: "X509 CRL", Bytes: raw})...)
		case cpb.CertificateEncoding_CERTIFICATE_ENCODING_PEM, cpb.CertificateEncoding_CERTIFICATE_ENCODING_UNSPECIFIED:
			block, rest := pem.Decode(raw)
			if block == nil || block.Type != "X509 CRL" || len(bytes.TrimSpace(rest)) > 0 {
				return nil, invalid("revocation list %d: not one PEM X509 CRL", i)
			}
			out = append(out, pem.EncodeToMemory(block)...)
		default:
			return nil, invalid("revocation list %d: encoding %s", i, l.GetEncoding())
		}
	}
	return out, nil
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
