package client_test

import (
	"context"
	"errors"
	"fmt"
	"go/parser"
	"go/token"
	"net"
	"net/http"
	"net/http/httptest"
	"net/http/httputil"
	"net/url"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/swmgr/swmgr/client"
	"github.com/swmgr/swmgr/internal/apierr"
	"github.com/swmgr/swmgr/internal/testserver"
)

func adminClient(t *testing.T, opts ...client.Option) *client.Client {
	t.Helper()
	opts = append([]client.Option{client.WithBasicAuth("admin", adminPassword), client.WithCAFile(server.CertFile)}, opts...)
	c, err := client.New(server.TLSURL, opts...)
	if err != nil {
		t.Fatal(err)
	}
	return c
}

// The package stands alone: nothing it compiles imports swmgr's internals.
func TestNoInternalImports(t *testing.T) {
	files, _ := filepath.Glob("*.go")
	for _, f := range files {
		if strings.HasSuffix(f, "_test.go") {
			continue
		}
		parsed, err := parser.ParseFile(token.NewFileSet(), f, nil, parser.ImportsOnly)
		if err != nil {
			t.Fatal(err)
		}
		for _, imp := range parsed.Imports {
			if strings.Contains(imp.Path.Value, "/internal/") || strings.Contains(imp.Path.Value, "swmgr/swmgr/") {
				t.Errorf("%s imports %s", f, imp.Path.Value)
			}
		}
	}
}

// The client's code constants are the server's.
func TestCodesMatchServer(t *testing.T) {
	pairs := [][2]string{
		{client.CodeMalformedJSON, apierr.CodeMalformedJSON}, {client.CodeWrongType, apierr.CodeWrongType},
		{client.CodeUnknownField, apierr.CodeUnknownField}, {client.CodeInvalidValue, apierr.CodeInvalidValue},
		{client.CodeMissingField, apierr.CodeMissingField}, {client.CodeKeyChange, apierr.CodeKeyChange},
		{client.CodeReadOnly, apierr.CodeReadOnly}, {client.CodeCreateOnly, apierr.CodeCreateOnly},
		{client.CodeDanglingReference, apierr.CodeDanglingReference}, {client.CodeBadPaging, apierr.CodeBadPaging},
		{client.CodeUnknownKind, apierr.CodeUnknownKind}, {client.CodeNotFound, apierr.CodeNotFound},
		{client.CodeMethodNotAllowed, apierr.CodeMethodNotAllowed}, {client.CodeDuplicate, apierr.CodeDuplicate},
		{client.CodeReferenced, apierr.CodeReferenced}, {client.CodeConflict, apierr.CodeConflict},
		{client.CodePrecondition, apierr.CodePrecondition}, {client.CodeBodyTooLarge, apierr.CodeBodyTooLarge},
		{client.CodeUnauthorized, apierr.CodeUnauthorized}, {client.CodeForbidden, apierr.CodeForbidden},
		{client.CodeTooManyAttempts, apierr.CodeTooManyAttempts}, {client.CodeBackend, apierr.CodeBackend},
		{client.CodeNotReady, apierr.CodeNotReady}, {client.CodeNotImplemented, apierr.CodeNotImplemented},
		{client.CodeInternal, apierr.CodeInternal},
		{client.CodeMalformedQuery, apierr.CodeMalformedQuery}, {client.CodeStorageFull, apierr.CodeStorageFull},
		{client.CodeDamagedRecord, apierr.CodeDamagedRecord},
	}
	if len(pairs) != len(apierr.Codes()) {
		t.Errorf("the client has %d code constants, the server %d codes", len(pairs), len(apierr.Codes()))
	}
	for _, p := range pairs {
		if p[0] != p[1] {
			t.Errorf("client code %q, server code %q", p[0], p[1])
		}
	}
}

func TestErrors(t *testing.T) {
	ctx := context.Background()
	c := adminClient(t)
	wrongPW, _ := client.New(server.TLSURL, client.WithBasicAuth("admin", "not-the-password"), client.WithCAFile(server.CertFile))
	for _, tc := range []struct {
		name   string
		call   func() error
		status int
		code   string
		field  string
	}{
		{"unknown kind", func() error { _, err := c.Get(ctx, "NoSuchKind", nil); return err }, 404, client.CodeUnknownKind, ""},
		{"bad value", func() error {
			_, err := c.UpdateByKey(ctx, "Port", client.Object{"IntfRef": "fpPort1", "Mtu": 1}, client.DryRun())
			return err
		}, 400, client.CodeInvalidValue, "Mtu"},
		{"stale If-Match", func() error {
			_, err := c.UpdateByKey(ctx, "Port", client.Object{"IntfRef": "fpPort1", "Mtu": 1600}, client.IfMatch(`"424242"`))
			return err
		}, 412, client.CodePrecondition, ""},
		{"wrong password", func() error { _, err := wrongPW.Get(ctx, "SystemParam", nil); return err }, 401, client.CodeUnauthorized, ""},
		{"no candidate", func() error { _, err := c.Candidate("nope").Diff(ctx); return err }, 404, client.CodeNotFound, ""},
		{"bad kind name", func() error { _, err := c.Get(ctx, "a/b", nil); return err }, 0, "", ""},
	} {
		err := tc.call()
		if err == nil {
			t.Errorf("%s: no error", tc.name)
			continue
		}
		var e *client.Error
		if tc.status == 0 {
			if errors.As(err, &e) {
				t.Errorf("%s: %v is an API error; want a local one", tc.name, err)
			}
			continue
		}
		if !errors.As(err, &e) || e.Status != tc.status || e.Code != tc.code || e.Field != tc.field || e.Message == "" {
			t.Errorf("%s: got %#v (%v), want status %d code %s field %q", tc.name, e, err, tc.status, tc.code, tc.field)
		}
		if !errors.Is(err, &client.Error{Code: tc.code}) {
			t.Errorf("%s: errors.Is by code is false", tc.name)
		}
	}
}

func TestTLSTrust(t *testing.T) {
	ctx := context.Background()
	for _, tc := range []struct {
		name string
		opts []client.Option
		ok   bool
	}{
		{"pinned", []client.Option{client.WithFingerprint(server.Fingerprint)}, true},
		{"pinned with colons and capitals", []client.Option{client.WithFingerprint(colons(strings.ToUpper(server.Fingerprint)))}, true},
		{"wrong pin", []client.Option{client.WithFingerprint(strings.Repeat("ab", 32))}, false},
		{"CA file", []client.Option{client.WithCAFile(server.CertFile)}, true},
		{"system roots", nil, false},
	} {
		opts := append([]client.Option{client.WithBasicAuth("admin", adminPassword)}, tc.opts...)
		c, err := client.New(server.TLSURL, opts...)
		if err != nil {
			t.Fatalf("%s: %v", tc.name, err)
		}
		_, err = c.Get(ctx, "SystemParam", nil)
		if (err == nil) != tc.ok {
			t.Errorf("%s: err %v, want success %v", tc.name, err, tc.ok)
		}
	}
	if _, err := client.New(server.TLSURL, client.WithFingerprint("abc")); err == nil {
		t.Error("a short fingerprint is accepted")
	}
	if _, err := client.New(server.TLSURL, client.WithCAFile("/nonexistent")); err == nil {
		t.Error("a missing CA file is accepted")
	}
	if _, err := client.New("ftp://x"); err == nil {
		t.Error("an ftp URL is accepted")
	}
}

func colons(hex string) string {
	var parts []string
	for i := 0; i < len(hex); i += 2 {
		parts = append(parts, hex[i:i+2])
	}
	return strings.Join(parts, ":")
}

func TestUnixSocket(t *testing.T) {
	sock := filepath.Join(t.TempDir(), "swmgr.sock")
	ln, err := net.Listen("unix", sock)
	if err != nil {
		t.Fatal(err)
	}
	srv := server.Serve(ln)
	defer srv.Close()
	c, err := client.New("http://localhost", client.WithUnixSocket(sock))
	if err != nil {
		t.Fatal(err)
	}
	it, err := c.Get(context.Background(), "Port", client.Object{"IntfRef": "fpPort3"})
	if err != nil || it.Object["IntfRef"] != "fpPort3" {
		t.Fatalf("over the socket: %v %v", it, err)
	}
	os.Remove(sock)
}

// Paging visits every object once, whatever the page size.
func TestListPaging(t *testing.T) {
	ctx := context.Background()
	c := adminClient(t)
	for _, size := range []int{1, 2, 3, 7, 8, 0} {
		seen := map[string]bool{}
		for it, err := range c.List(ctx, "Port", client.PageSize(size)) {
			if err != nil {
				t.Fatal(err)
			}
			name := it.Object["IntfRef"].(string)
			if seen[name] {
				t.Fatalf("page size %d: %s twice", size, name)
			}
			seen[name] = true
		}
		if len(seen) != 8 {
			t.Errorf("page size %d: %d ports, want 8", size, len(seen))
		}
	}
	// An error ends the iteration as its last element.
	var last error
	n := 0
	for _, err := range c.List(ctx, "Port", client.PageSize(5000)) {
		last = err
		n++
	}
	if n != 1 || !errors.Is(last, &client.Error{Code: client.CodeBadPaging}) {
		t.Errorf("page size 5000: %d elements, last error %v", n, last)
	}
}

// The feed resumes after a broken connection without losing or repeating
// a commit.
func TestEventsResume(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	c := adminClient(t)
	since := runningRevision(ctx, t, c)
	const commits = 3
	// The writer opens a connection per request: closing the server's
	// connections must not fail its writes.
	writer, _ := client.New(server.URL, client.WithHTTPClient(&http.Client{Transport: &http.Transport{DisableKeepAlives: true}}))
	writing := make(chan struct{})
	defer func() { <-writing }() // the writer logs to t: it must end first
	go func() {
		defer close(writing)
		for i := range commits {
			if _, err := writer.UpdateByKey(ctx, "SystemParam", client.Object{"Description": "feed " + strconv.Itoa(i)}); err != nil {
				t.Error(err)
			}
			time.Sleep(100 * time.Millisecond)
			server.CloseClientConnections() // break the stream between commits
		}
	}()
	var got []uint64
	for ev, err := range c.Events(ctx, client.FeedOptions{Since: &since, RetryDelay: 20 * time.Millisecond}) {
		if err != nil {
			t.Fatal(err)
		}
		got = append(got, ev.Revision.Revision)
		if len(got) == commits {
			break
		}
	}
	for j, rev := range got {
		if rev != since+1+uint64(j) {
			t.Fatalf("revisions %v after %d: want each commit once, in order", got, since)
		}
	}
}

// A subscriber resuming from a revision the server no longer keeps is
// told which revisions it missed (one Event with Gap) and then gets every
// kept one, in order.
func TestEventsReportsGap(t *testing.T) {
	s, err := testserver.Start("", testserver.Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	c, err := client.New(s.TLSURL, client.WithBasicAuth("admin", testserver.AdminPassword), client.WithCAFile(s.CertFile))
	if err != nil {
		t.Fatal(err)
	}
	const kept = 1000 // the server's history.Kept
	var wg sync.WaitGroup
	for w := range 16 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := w; i < kept+5; i += 16 {
				if _, err := c.Create(ctx, "NtpServer", client.Object{"IpAddr": fmt.Sprintf("10.9.%d.%d", i/256, i%256)}); err != nil {
					t.Error(err)
					return
				}
			}
		}()
	}
	wg.Wait()
	cur := runningRevision(ctx, t, c)
	oldest := cur - kept + 1
	since := uint64(0)
	var got []client.Event
	for ev, err := range c.Events(ctx, client.FeedOptions{Since: &since}) {
		if err != nil {
			t.Fatal(err)
		}
		got = append(got, ev)
		if len(got) == 3 {
			break
		}
	}
	gap := got[0].Gap
	if gap == nil || gap.FirstMissing != 1 || gap.LastMissing != oldest-1 || gap.ContinuesWith != oldest || !strings.Contains(gap.Message, "no longer kept") {
		t.Fatalf("first event %+v (gap %+v); want the gap 1 to %d, continuing with %d", got[0], gap, oldest-1, oldest)
	}
	for i, ev := range got[1:] {
		if ev.Gap != nil || ev.Revision.Revision != oldest+uint64(i) {
			t.Fatalf("event %d: %+v; want revision %d", i+1, ev, oldest+uint64(i))
		}
	}
}

// connectSignal is a transport that says when each change-feed connection
// is up (the server has subscribed it when its headers arrive).
type connectSignal struct {
	inner     http.RoundTripper
	connected chan struct{}
}

func (c *connectSignal) RoundTrip(req *http.Request) (*http.Response, error) {
	resp, err := c.inner.RoundTrip(req)
	if err == nil && strings.HasSuffix(req.URL.Path, "/events") {
		c.connected <- struct{}{}
	}
	return resp, err
}

// A feed followed from now (no Since) that breaks before its first event
// still resumes where it joined: a commit made while it reconnects is
// delivered, not skipped.
func TestEventsFromNowResumeWithoutLoss(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	signal := &connectSignal{inner: &http.Transport{}, connected: make(chan struct{}, 4)}
	c, err := client.New(server.URL, client.WithHTTPClient(&http.Client{Transport: signal}))
	if err != nil {
		t.Fatal(err)
	}
	writer, _ := client.New(server.URL, client.WithHTTPClient(&http.Client{Transport: &http.Transport{DisableKeepAlives: true}}))
	commit := func(what string) string {
		res, err := writer.UpdateByKey(ctx, "SystemParam", client.Object{"Description": what})
		if err != nil {
			t.Error(err)
		}
		return res.ETag
	}
	writing := make(chan string, 2)
	go func() {
		<-signal.connected
		server.CloseClientConnections()         // the stream breaks before any commit
		writing <- commit("while reconnecting") // and one comes before it is back
		<-signal.connected
		writing <- commit("after reconnecting")
	}()
	var got []string
	for ev, err := range c.Events(ctx, client.FeedOptions{RetryDelay: 300 * time.Millisecond}) {
		if err != nil {
			t.Fatalf("after events %q: %v; want the commit made while reconnecting, then the next", got, err)
		}
		got = append(got, ev.Revision.Changes[0].After["Description"].(string))
		if len(got) == 2 {
			break
		}
	}
	<-writing
	<-writing
	if got[0] != "while reconnecting" || got[1] != "after reconnecting" {
		t.Fatalf("events %q; want the commit made while reconnecting, then the next", got)
	}
}

// While swmgr restarts behind a reverse proxy, or checks too many logins
// at once, the feed's reconnect is answered 502, 503 or 504: the feed
// waits and reconnects again, as after a broken connection, instead of
// ending for good.
func TestEventsRetryUnavailable(t *testing.T) {
	tests := []struct {
		name   string
		status int
		body   string
	}{
		{"proxy: bad gateway", http.StatusBadGateway, "<html>502 Bad Gateway</html>"},
		{"busy checking logins", http.StatusServiceUnavailable, `{"Result":"Error: busy","Error":{"Status":503,"Code":"not_ready","Message":"busy"}}`},
		{"proxy: gateway timeout", http.StatusGatewayTimeout, "<html>504 Gateway Time-out</html>"},
	}
	backend, _ := url.Parse(server.URL)
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
			defer cancel()
			proxy := httputil.NewSingleHostReverseProxy(backend)
			var refused atomic.Int32
			front := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
				if strings.HasSuffix(r.URL.Path, "/events") && refused.Add(1) <= 2 {
					http.Error(w, tc.body, tc.status)
					return
				}
				proxy.ServeHTTP(w, r)
			}))
			defer front.Close()
			c, err := client.New(front.URL)
			if err != nil {
				t.Fatal(err)
			}
			since := runningRevision(ctx, t, c)
			res, err := c.UpdateByKey(ctx, "SystemParam", client.Object{"Description": "after " + tc.name})
			if err != nil {
				t.Fatal(err)
			}
			for ev, err := range c.Events(ctx, client.FeedOptions{Since: &since, RetryDelay: 20 * time.Millisecond}) {
				if err != nil {
					t.Fatalf("after %d refusals: %v; want the feed to reconnect", refused.Load(), err)
				}
				if got := client.ETag(ev.Revision.Revision); got != res.ETag {
					t.Fatalf("first event is revision %s; want the commit %s", got, res.ETag)
				}
				break
			}
		})
	}
}

// runningRevision is the newest revision, as a client reads it: the first
// of the revisions listed newest first.
func runningRevision(ctx context.Context, t *testing.T, c *client.Client) uint64 {
	t.Helper()
	for r, err := range c.Revisions(ctx, client.PageSize(1)) {
		if err != nil {
			t.Fatal(err)
		}
		return r.Revision
	}
	t.Fatal("no revision listed")
	return 0
}
