package ztp

import (
	"bytes"
	"context"
	"crypto/ed25519"
	"crypto/sha256"
	"crypto/tls"
	"crypto/x509"
	"encoding/base64"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"time"
)

// Bounds of what provisioning downloads.
const (
	MaxDocument  = 16 << 20 // a configuration document
	MaxSignature = 4 << 10  // its detached signature (64 bytes, raw or base64)
	MaxScript    = 1 << 20  // a provisioning script
	maxOutput    = 64 << 10 // a script's output kept for the log
)

// SignatureSuffix names a document's detached signature: the document's
// URL with it appended.
const SignatureSuffix = ".sig"

// Fetcher downloads over HTTP or HTTPS, the certificate checked against
// the configured CAs (provisioning's, and an intent's).
type Fetcher struct {
	client *http.Client
	// Auth, if set, adds credentials to each request (an intent's bearer
	// token or basic password).
	Auth func(*http.Request)
	// TFTP fetches tftp:// URLs, SFTP sftp:// URLs (nil: refused).
	TFTP TFTPClient
	SFTP *SFTPClient
}

// NewFetcher makes a Fetcher checking HTTPS servers against roots (nil:
// the system's), each download bounded by timeout. It uses no proxy.
func NewFetcher(roots *x509.CertPool, timeout time.Duration) *Fetcher {
	tr := http.DefaultTransport.(*http.Transport).Clone()
	tr.Proxy = nil // a switch being provisioned has no proxy configuration of its own
	tr.TLSClientConfig = &tls.Config{RootCAs: roots, MinVersion: tls.VersionTLS12}
	return &Fetcher{client: &http.Client{Transport: tr, Timeout: timeout}}
}

// WithAuth is f adding credentials to each request with auth.
func (f *Fetcher) WithAuth(auth func(*http.Request)) *Fetcher {
	return &Fetcher{client: f.client, Auth: auth, TFTP: f.TFTP, SFTP: f.SFTP}
}

// Get reads the body at raw, at most max bytes (more is refused, not cut).
func (f *Fetcher) Get(ctx context.Context, raw string, max int64) ([]byte, error) {
	u, err := url.Parse(raw)
	if err != nil || u.Host == "" {
		return nil, fmt.Errorf("%q is not a URL (http, https, tftp or sftp)", raw)
	}
	switch u.Scheme {
	case "http", "https":
	case "tftp":
		return f.TFTP.Get(ctx, u, max)
	case "sftp":
		return f.SFTP.Get(ctx, u, max)
	default:
		return nil, fmt.Errorf("%q: scheme %q is not fetched (http, https, tftp or sftp)", u.Redacted(), u.Scheme)
	}
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, u.String(), nil)
	if err != nil {
		return nil, err
	}
	if f.Auth != nil {
		f.Auth(req)
	}
	resp, err := f.client.Do(req)
	if err != nil {
		return nil, fmt.Errorf("fetch %s: %w", u.Redacted(), err)
	}
	defer resp.Body.Close()
	if resp.StatusCode/100 != 2 {
		return nil, fmt.Errorf("fetch %s: %s", u.Redacted(), resp.Status)
	}
	data, err := io.ReadAll(io.LimitReader(resp.Body, max+1))
	if err != nil {
		return nil, fmt.Errorf("fetch %s: %w", u.Redacted(), err)
	}
	if int64(len(data)) > max {
		return nil, fmt.Errorf("fetch %s: larger than %d bytes", u.Redacted(), max)
	}
	return data, nil
}

// Verifier says which documents provisioning trusts: signed by Key (a
// detached ed25519 signature at the document's URL plus SignatureSuffix),
// else matching a digest the DHCP server gave, else none unless
// AllowUnsigned.
type Verifier struct {
	Key           ed25519.PublicKey
	AllowUnsigned bool
}

// Verify checks data fetched from raw with f; digest, if not nil, is the
// SHA-256 the document must have when no Key is set. It answers how it
// was verified: signature, sha256 or unsigned.
func (v Verifier) Verify(ctx context.Context, f *Fetcher, raw string, data, digest []byte) (string, error) {
	switch {
	case v.Key != nil:
		sig, err := f.Get(ctx, raw+SignatureSuffix, MaxSignature)
		if err != nil {
			return "", fmt.Errorf("signature: %w", err)
		}
		if err := VerifySignature(v.Key, data, sig); err != nil {
			return "", err
		}
		return "signature", nil
	case digest != nil:
		sum := sha256.Sum256(data)
		if !bytes.Equal(sum[:], digest) {
			return "", fmt.Errorf("the document's SHA-256 %x is not the %x DHCP option %d gave", sum, digest, OptionSHA256)
		}
		return "sha256", nil
	case v.AllowUnsigned:
		return "unsigned", nil
	}
	return "", fmt.Errorf("unsigned document refused: configure a signing key (--ztp-key), give its SHA-256 in DHCP option %d, or allow unsigned documents (--ztp-allow-unsigned)", OptionSHA256)
}

// VerifySignature checks sig (64 bytes, raw or in base64), a detached
// signature of data, against key.
func VerifySignature(key ed25519.PublicKey, data, sig []byte) error {
	sig, err := decodeSignature(sig)
	if err != nil {
		return err
	}
	if !ed25519.Verify(key, data, sig) {
		return errors.New("bad signature: the document is not signed by the configured key")
	}
	return nil
}

// decodeSignature takes a signature raw (64 bytes) or in base64.
func decodeSignature(b []byte) ([]byte, error) {
	if len(b) == ed25519.SignatureSize {
		return b, nil
	}
	s, err := base64.StdEncoding.DecodeString(string(bytes.TrimSpace(b)))
	if err != nil || len(s) != ed25519.SignatureSize {
		return nil, fmt.Errorf("signature: not %d bytes, raw or in base64", ed25519.SignatureSize)
	}
	return s, nil
}

// ScriptEnv is the whole environment a provisioning script runs with:
// nothing of swmgr's own and nothing of DHCP's but the interface name
// swmgr was given.
func scriptEnv(iface string) []string {
	return []string{"PATH=/usr/sbin:/usr/bin:/sbin:/bin", "LANG=C", "HOME=/", "SWMGR_ZTP_INTERFACE=" + iface}
}

// runScript writes script to a file of its own in dir and executes that
// file directly (no shell, no arguments: its #! line says what runs it),
// with scriptEnv, in dir, killed after timeout. Its output (at most
// maxOutput bytes) is returned for the log.
func runScript(ctx context.Context, dir string, script []byte, iface string, timeout time.Duration) (string, error) {
	f, err := os.CreateTemp(dir, "ztp-script-*")
	if err != nil {
		return "", fmt.Errorf("script: %w", err)
	}
	path := f.Name()
	defer os.Remove(path)
	_, err = f.Write(script)
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err == nil {
		err = os.Chmod(path, 0o700)
	}
	if err != nil {
		return "", fmt.Errorf("script: %w", err)
	}
	ctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	cmd := exec.CommandContext(ctx, path)
	cmd.Env, cmd.Dir = scriptEnv(iface), filepath.Dir(path)
	out := &boundedBuffer{max: maxOutput}
	cmd.Stdout, cmd.Stderr = out, out
	cmd.WaitDelay = time.Second
	err = cmd.Run()
	if ctx.Err() == context.DeadlineExceeded {
		return out.String(), fmt.Errorf("script: killed after %v", timeout)
	}
	if err != nil {
		return out.String(), fmt.Errorf("script: %w", err)
	}
	return out.String(), nil
}

// boundedBuffer keeps the first max bytes written to it.
type boundedBuffer struct {
	bytes.Buffer
	max int
}

func (b *boundedBuffer) Write(p []byte) (int, error) {
	if room := b.max - b.Len(); room > 0 {
		b.Buffer.Write(p[:min(room, len(p))])
	}
	return len(p), nil
}
