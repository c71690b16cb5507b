// Package client is the Go client of swmgr's REST interface.
//
// It speaks the FlexSwitch-compatible paths under /public/v1/ and swmgr's own
// transaction paths (candidates, revisions, the change feed). Objects are
// handled generically: an Object is the JSON object of a kind (field name to
// value) and a kind is named by its name in the model ("Vrf", "Port"), so the
// client works with every kind the server declares, including kinds added
// after it was built.
//
// Failures the server reports come back as *Error, carrying the HTTP status
// and the API's stable error code (see the Code constants); use errors.As:
//
//	var apiErr *client.Error
//	if errors.As(err, &apiErr) && apiErr.Code == client.CodeNotFound { ... }
//
// The package has no dependency on swmgr's internal packages.
package client

import (
	"bytes"
	"context"
	"crypto/sha256"
	"crypto/subtle"
	"crypto/tls"
	"crypto/x509"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/url"
	"os"
	"strconv"
	"strings"
	"time"
)

// APIPrefix is the path below which every API call is made.
const APIPrefix = "/public/v1"

// Client calls one swmgr server. It is safe for concurrent use.
type Client struct {
	// Objects is the running configuration: Create, Get, List, Update,
	// Delete act on it directly.
	Objects

	base       *url.URL // scheme://host, without a path
	hc         *http.Client
	user, pass string
	userAgent  string
	tls        *tls.Config // of an https:// server: its CA or pin
}

type settings struct {
	user, pass  string
	caFile      string
	fingerprint []byte
	socket      string
	hc          *http.Client
	timeout     time.Duration
	userAgent   string
}

// Option configures New.
type Option func(*settings) error

// WithBasicAuth sends HTTP Basic credentials with every request (required on
// HTTPS and on any non-loopback listener).
func WithBasicAuth(user, password string) Option {
	return func(s *settings) error { s.user, s.pass = user, password; return nil }
}

// WithCAFile trusts the PEM certificates in path (the server's self-signed
// certificate, or the CA that signed it) instead of the system roots.
func WithCAFile(path string) Option {
	return func(s *settings) error { s.caFile = path; return nil }
}

// WithFingerprint accepts the server's certificate only if the SHA-256 of
// its DER encoding is fingerprint (hex, colons and case ignored), as swmgr
// logs it at start (cert_sha256). The certificate chain is then not checked
// against any CA: the pin is the trust.
func WithFingerprint(fingerprint string) Option {
	return func(s *settings) error {
		clean := strings.ToLower(strings.ReplaceAll(fingerprint, ":", ""))
		b, err := hex.DecodeString(clean)
		if err != nil || len(b) != sha256.Size {
			return fmt.Errorf("fingerprint %q: want the 64 hex digits of a SHA-256", fingerprint)
		}
		s.fingerprint = b
		return nil
	}
}

// WithUnixSocket connects to the server's Unix socket at path instead of the
// URL's host; the URL still gives the scheme ("http://localhost" is usual).
func WithUnixSocket(path string) Option {
	return func(s *settings) error { s.socket = path; return nil }
}

// WithHTTPClient uses hc for every request; WithCAFile, WithFingerprint,
// WithUnixSocket and WithTimeout then do not apply.
func WithHTTPClient(hc *http.Client) Option {
	return func(s *settings) error { s.hc = hc; return nil }
}

// WithTimeout bounds each request (default: none beyond the context's; the
// change feed is never bounded by it).
func WithTimeout(d time.Duration) Option {
	return func(s *settings) error { s.timeout = d; return nil }
}

// WithUserAgent sets the User-Agent header.
func WithUserAgent(ua string) Option {
	return func(s *settings) error { s.userAgent = ua; return nil }
}

// New makes a client of the server at baseURL ("https://switch1",
// "http://127.0.0.1:8080"); a path in baseURL is ignored.
func New(baseURL string, opts ...Option) (*Client, error) {
	u, err := url.Parse(baseURL)
	if err != nil {
		return nil, fmt.Errorf("server URL %q: %w", baseURL, err)
	}
	if u.Scheme != "http" && u.Scheme != "https" || u.Host == "" {
		return nil, fmt.Errorf("server URL %q: want http://host[:port] or https://host[:port]", baseURL)
	}
	var s settings
	for _, o := range opts {
		if err := o(&s); err != nil {
			return nil, err
		}
	}
	c := &Client{base: &url.URL{Scheme: u.Scheme, Host: u.Host}, user: s.user, pass: s.pass, userAgent: s.userAgent}
	c.Objects = Objects{c: c}
	if c.userAgent == "" {
		c.userAgent = "swmgr-go-client"
	}
	if s.hc != nil {
		c.hc = s.hc
		return c, nil
	}
	tr := http.DefaultTransport.(*http.Transport).Clone()
	tr.MaxIdleConnsPerHost = 16
	if s.socket != "" {
		path := s.socket
		tr.DialContext = func(ctx context.Context, _, _ string) (net.Conn, error) {
			var d net.Dialer
			return d.DialContext(ctx, "unix", path)
		}
		tr.Proxy = nil
	}
	if u.Scheme == "https" {
		cfg := &tls.Config{MinVersion: tls.VersionTLS12}
		if s.caFile != "" {
			pem, err := os.ReadFile(s.caFile)
			if err != nil {
				return nil, fmt.Errorf("CA file: %w", err)
			}
			pool := x509.NewCertPool()
			if !pool.AppendCertsFromPEM(pem) {
				return nil, fmt.Errorf("CA file %s holds no PEM certificate", s.caFile)
			}
			cfg.RootCAs = pool
		}
		if s.fingerprint != nil {
			want := s.fingerprint
			cfg.InsecureSkipVerify = true // replaced by the pin below
			cfg.VerifyConnection = func(cs tls.ConnectionState) error {
				if len(cs.PeerCertificates) == 0 {
					return errors.New("the server sent no certificate")
				}
				got := sha256.Sum256(cs.PeerCertificates[0].Raw)
				if subtle.ConstantTimeCompare(got[:], want) != 1 {
					return fmt.Errorf("the server's certificate has SHA-256 %x, not the pinned %x", got, want)
				}
				return nil
			}
		}
		tr.TLSClientConfig = cfg
		c.tls = cfg
	}
	c.hc = &http.Client{Transport: tr, Timeout: s.timeout}
	return c, nil
}

// TLSConfig is a copy of how the client checks an https:// server's
// certificate (WithCAFile, WithFingerprint), for another connection to
// the same server (its gNMI port serves the same certificate); nil for
// http://.
func (c *Client) TLSConfig() *tls.Config {
	if c.tls == nil {
		return nil
	}
	return c.tls.Clone()
}

// Object is one object of a kind: field name to value. Objects read from
// the server hold string, json.Number (integers stay exact), bool and []any
// values; objects sent may hold any value encoding/json accepts.
type Object map[string]any

// request is one call's inputs.
type request struct {
	method string
	path   string // below APIPrefix, starting with "/"
	query  url.Values
	body   any // marshalled to JSON; nil for none
	header http.Header
}

// response is a call's result with its body read.
type response struct {
	status int
	header http.Header
	body   []byte
}

func (c *Client) newRequest(ctx context.Context, r request) (*http.Request, error) {
	u := *c.base
	u.Path = APIPrefix + r.path
	if len(r.query) > 0 {
		u.RawQuery = r.query.Encode()
	}
	var rd io.Reader
	if r.body != nil {
		b, err := json.Marshal(r.body)
		if err != nil {
			return nil, fmt.Errorf("%s %s: encode the body: %w", r.method, r.path, err)
		}
		rd = bytes.NewReader(b)
	}
	req, err := http.NewRequestWithContext(ctx, r.method, u.String(), rd)
	if err != nil {
		return nil, err
	}
	if r.body != nil {
		req.Header.Set("Content-Type", "application/json")
	}
	req.Header.Set("Accept", "application/json")
	req.Header.Set("User-Agent", c.userAgent)
	for k, v := range r.header {
		req.Header[k] = v
	}
	if c.user != "" || c.pass != "" {
		req.SetBasicAuth(c.user, c.pass)
	}
	return req, nil
}

// do sends r and reads the whole response; a status of 400 or more is
// returned as *Error.
func (c *Client) do(ctx context.Context, r request) (*response, error) {
	req, err := c.newRequest(ctx, r)
	if err != nil {
		return nil, err
	}
	resp, err := c.hc.Do(req)
	if err != nil {
		return nil, fmt.Errorf("%s %s: %w", r.method, req.URL.Path, err)
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(io.LimitReader(resp.Body, 64<<20))
	if err != nil {
		return nil, fmt.Errorf("%s %s: read the response: %w", r.method, req.URL.Path, err)
	}
	if resp.StatusCode >= 400 {
		return nil, errorFrom(resp.StatusCode, body)
	}
	return &response{status: resp.StatusCode, header: resp.Header, body: body}, nil
}

// call is do that decodes the JSON body into out (unless out is nil).
func (c *Client) call(ctx context.Context, r request, out any) (*response, error) {
	resp, err := c.do(ctx, r)
	if err != nil {
		return nil, err
	}
	if out != nil {
		if err := decodeJSON(resp.body, out); err != nil {
			return nil, fmt.Errorf("%s %s: %w", r.method, r.path, err)
		}
	}
	return resp, nil
}

func decodeJSON(data []byte, out any) error {
	d := json.NewDecoder(bytes.NewReader(data))
	d.UseNumber()
	if err := d.Decode(out); err != nil {
		return fmt.Errorf("decode the response %.200q: %w", data, err)
	}
	return nil
}

// ETag renders a revision as the ETag value If-Match takes.
func ETag(revision uint64) string { return `"` + strconv.FormatUint(revision, 10) + `"` }
