package api

import (
	"bytes"
	"context"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"net/url"
	"slices"
	"strings"
	"testing"

	"github.com/swmgr/swmgr/internal/apierr"
	"github.com/swmgr/swmgr/internal/engine"
	"github.com/swmgr/swmgr/internal/model"
)

// FuzzParseRoute: any path either routes to a kind or is refused with a
// 404 error; a route has a kind and allows at least one method.
func FuzzParseRoute(f *testing.F) {
	for _, seed := range []string{
		"", "/", "/public/v1", "/public/v1/", "/public/v1/config", "/public/v1/config/", "/public/v1/config/Vrf",
		"/public/v1/config/vrfs", "/public/v1/config/VRFS", "/public/v1/state/ConfigLogs", "/public/v1/state/configlog",
		"/public/v1/state/SystemParamState", "/public/v1/action/SaveConfig", "/public/v1/action/SaveConfigs",
		"/public/v1/config/NtpServer/0f8fad5b-d9cb-469f-a165-70867728950e", "/public/v1/config/Ports/x",
		"//public/v1//config//Port//", "/public/v1/config/s", "/public/v1/config/S", "/public/v1/config/Vrf/a/b",
		"/public/v1/config/" + strings.Repeat("A", 65), "/public/v1/config/Ntp%20Server", "/public/v1/x/y/z/w/v",
	} {
		f.Add(seed)
	}
	reg := model.Builtin()
	f.Fuzz(func(t *testing.T, path string) {
		r, err := ParseRoute(reg, path)
		// What a write needs is decided from the same parse: a path that
		// names no kind needs an admin, one that does what its kind
		// declares; reads need any user.
		need, parsed := access(reg, http.MethodPost, path)
		if a, _ := access(reg, http.MethodGet, path); a != model.Reading {
			t.Fatalf("GET %q needs %+v", path, a)
		}
		if parsed != nil && (parsed.err != nil) != (err != nil) {
			t.Fatalf("access(%q) parsed %+v, ParseRoute %+v", path, parsed, err)
		}
		if err != nil {
			if parsed != nil && need.Role != model.RoleAdmin {
				t.Fatalf("POST %q names nothing but needs %+v", path, need)
			}
			if err.Status != http.StatusNotFound || (err.Code != apierr.CodeNotFound && err.Code != apierr.CodeUnknownKind) || err.Message == "" {
				t.Fatalf("ParseRoute(%q): %+v; want a 404 not_found or unknown_kind with a message", path, err)
			}
			return
		}
		if parsed == nil || parsed.route.Kind != r.Kind || need != r.Access(http.MethodPost) {
			t.Fatalf("access(%q) = %+v, %+v; ParseRoute %+v", path, need, parsed, r)
		}
		if r.Kind == nil {
			t.Fatalf("ParseRoute(%q) = %+v without a kind", path, r)
		}
		allowed := r.Allowed()
		if len(allowed) == 0 || !slices.Contains(allowed, http.MethodOptions) {
			t.Fatalf("ParseRoute(%q): Allowed() = %v", path, allowed)
		}
		if r.Class == model.State && slices.ContainsFunc(allowed, isWrite) {
			t.Fatalf("ParseRoute(%q): a state path allows %v", path, allowed)
		}
		if r.Class == model.Action && (r.Plural || r.ID != "") {
			t.Fatalf("ParseRoute(%q) = %+v: an action path with an id or a plural", path, r)
		}
		if r.Plural && r.ID != "" {
			t.Fatalf("ParseRoute(%q) = %+v: a plural with an id", path, r)
		}
		if r.Kind.Class != r.Class && !(r.Class == model.State && r.Kind.Class == model.Config) {
			t.Fatalf("ParseRoute(%q): %s path resolved to %s kind %s", path, r.Class, r.Kind.Class, r.Kind.Name)
		}
		base := r.Kind.Name
		if r.Kind.Class == model.State {
			base = strings.TrimSuffix(base, "State")
		}
		if r.Plural {
			base += "s"
		}
		if !strings.EqualFold(r.Name, base) {
			t.Fatalf("ParseRoute(%q): name %q resolved to kind %s (plural %v)", path, r.Name, r.Kind.Name, r.Plural)
		}
	})
}

// FuzzKeyOf: keys read from a query string and a body, as by-key requests
// give them, build a store key or are refused with a 4xx; a store key
// describes itself without panicking.
func FuzzKeyOf(f *testing.F) {
	for _, seed := range []struct{ query, body string }{
		{"IpAddr=192.0.2.1", ``},
		{"", `{"IpAddr":"192.0.2.1"}`},
		{"Vrf=red", `{"NeighborAddress":"10.0.0.2"}`},
		{"NeighborAddress=10.0.0.2&Vrf=a%00b", `{"Vrf":"x"}`},
		{"NAME=bob", `{"Name":"bob"}`},
		{"IntfRef=fpPort1&IntfRef=fpPort2", `{"IntfRef":7}`},
		{"MinPoll=6", `{"MinPoll":6}`},
		{"SeqNum=1", `{"SeqNum":"1"}`},
	} {
		f.Add(seed.query, seed.body)
	}
	reg := model.Builtin()
	f.Fuzz(func(t *testing.T, query, rawBody string) {
		q, err := url.ParseQuery(query)
		if err != nil {
			return
		}
		body, err := model.DecodeBody([]byte(rawBody))
		if err != nil {
			return
		}
		for _, k := range reg.Kinds() {
			key, err := k.ParseQuery(q)
			if err != nil {
				checkClientError(t, k.Name+".ParseQuery", err)
				continue
			}
			fields, err := k.Parse(body)
			if err != nil {
				checkClientError(t, k.Name+".Parse", err)
				continue
			}
			for _, fl := range k.Keys() {
				if v, ok := fields[fl.Name]; ok {
					key[fl.Name] = v
				}
			}
			sk, err := engine.KeyOf(k, key)
			if err != nil {
				checkClientError(t, k.Name+" KeyOf", err)
				continue
			}
			if len(k.Keys()) == 0 {
				if sk != "" {
					t.Fatalf("%s: KeyOf made key %q of a kind without keys", k.Name, sk)
				}
				continue
			}
			if d := k.DescribeKey(sk); !strings.Contains(d, "=") {
				t.Fatalf("%s: DescribeKey(%q) = %q", k.Name, sk, d)
			}
		}
	})
}

func checkClientError(t *testing.T, what string, err error) {
	t.Helper()
	ae, ok := err.(*apierr.Error)
	if !ok || ae.Status < 400 || ae.Status > 499 || ae.Code == "" || ae.Message == "" {
		t.Fatalf("%s: %#v is not a client *apierr.Error", what, err)
	}
}

// FuzzServeHTTP sends arbitrary requests straight to the handler of an
// in-process swmgr with a real store and the fixtures: no answer is a 500,
// every answer but a 204 or a HEAD is JSON, and an error body is the
// contract's with the HTTP status in it.
func FuzzServeHTTP(f *testing.F) {
	for _, seed := range []struct{ method, path, query, body string }{
		{"POST", "/public/v1/config/NtpServer", "", `{"IpAddr":"192.0.2.40"}`},
		{"POST", "/public/v1/config/User", "", `{"NAME":"carol","Password":"carol-secret-1","Group":"admin"}`},
		{"POST", "/public/v1/config/Span", "", `{"SpanSessionName":"m9","DstIntfRef":"fpPort7","SrcIntfRefList":["fpPort8"]}`},
		{"POST", "/public/v1/config/BGPv4Neighbor", "", `{"Vrf":"red","NeighborAddress":"192.0.2.9","PeerAS":"1.1"}`},
		{"POST", "/public/v1/config/IPv4Intf", "dry_run=true", `{"IntfRef":"fpPort5s4","IpAddr":"10.5.4.1/24"}`},
		{"PATCH", "/public/v1/config/Port", "", `{"IntfRef":"fpPort6","BreakOutMode":"2x50"}`},
		{"PATCH", "/public/v1/config/Port", "", `{"IntfRef":"fpPort5","BreakOutMode":"1x40"}`},
		{"PATCH", "/public/v1/config/SystemParam", "", `{"Timezone":"Asia/Tokyo","Hostname":"sw2"}`},
		{"PATCH", "/public/v1/config/ConfigArchiveServer", "", `{"IpAddr":"archive.example.net","Nonce":"n","Passphrase":"p"}`},
		{"DELETE", "/public/v1/config/Vrf", "Vrf=red", ``},
		{"DELETE", "/public/v1/config/IPv4Intf", "", `{"IntfRef":"fpPort1"}`},
		{"GET", "/public/v1/config/Ports", "Count=2&CurrentMarker=3", ``},
		{"GET", "/public/v1/state/Ports", "Count=1024", ``},
		{"GET", "/public/v1/state/configlogs", "", ``},
		{"GET", "/public/v1/state/ConfigLog", "SeqNum=1", ``},
		{"HEAD", "/public/v1/config/SystemParam", "", ``},
		{"OPTIONS", "/public/v1/config/Span", "", ``},
		{"PUT", "/public/v1/config/Vrf", "", `{"Vrf":"x"}`},
		{"POST", "/public/v1/action/UserPassword", "", `{"Name":"alice","Password":"alice-secret-9"}`},
		{"POST", "/public/v1/action/Rollback", "dry_run=1", `{"Revision":2}`},
		{"POST", "/public/v1/action/SaveConfig", "", `{"DstFileURI":"///tmp/x"}`},
		{"POST", "/public/v1/action/ClearConfigLog", "", `{}`},
		{"GET", "/public/v1/revisions", "Count=1", ``},
		{"POST", "/public/v1/candidates", "", `{"Comment":"x"}`},
		{"POST", "/public/v1/candidates/nope/commit", "", `{"Confirm":5}`},
		{"GET", "/public/v1/config/Vrf/0f8fad5b-d9cb-469f-a165-70867728950e", "", ``},
		{"GET", "/public/v1/", "", ``},
		{"BREW", "/", "", `{`},
	} {
		f.Add(seed.method, seed.path, seed.query, []byte(seed.body))
	}
	a := newAPIHarness(f)
	a.seed()
	f.Fuzz(func(t *testing.T, method, path, query string, body []byte) {
		if !validMethod(method) {
			return // net/http refuses such a request line before any handler
		}
		// The change feed streams until the client goes away.
		if p := strings.TrimRight(path, "/"); strings.EqualFold(p, eventsPath) || p == eventsPath {
			return
		}
		req := httptest.NewRequest(http.MethodGet, "http://swmgr.test/", nil)
		req.Method = method
		req.URL = &url.URL{Path: path, RawQuery: query}
		req.RequestURI = ""
		req.Body = io.NopCloser(bytes.NewReader(body))
		req.ContentLength = int64(len(body))
		ctx, cancel := context.WithCancel(req.Context())
		defer cancel()
		req = req.WithContext(ctx)
		w := httptest.NewRecorder()
		a.h.ServeHTTP(w, req)
		res := w.Result()
		out := w.Body.Bytes()
		if res.StatusCode >= 500 && res.StatusCode != http.StatusNotImplemented && res.StatusCode != http.StatusServiceUnavailable {
			t.Fatalf("%s %q ?%q %q: %d %s", method, path, query, body, res.StatusCode, out)
		}
		if res.StatusCode == http.StatusNoContent || method == http.MethodHead {
			return
		}
		if !json.Valid(out) {
			t.Fatalf("%s %q ?%q %q: %d, body is not JSON: %q", method, path, query, body, res.StatusCode, out)
		}
		if res.StatusCode >= 400 {
			e, err := decodeErrBody(out)
			if err != nil || e.Error.Status != res.StatusCode || e.Error.Code == "" || e.Result != "Error: "+e.Error.Message {
				t.Fatalf("%s %q ?%q %q: %d, not the contract's error body: %s", method, path, query, body, res.StatusCode, out)
			}
			if res.StatusCode == http.StatusMethodNotAllowed && res.Header.Get("Allow") == "" {
				t.Fatalf("%s %q: 405 without Allow", method, path)
			}
		}
	})
}

// validMethod reports whether m is an HTTP token, as net/http requires of
// a request's method.
func validMethod(m string) bool {
	if m == "" || len(m) > 32 {
		return false
	}
	for i := 0; i < len(m); i++ {
		c := m[i]
		if c <= ' ' || c >= 0x7f || strings.IndexByte(`"(),/:;<=>?@[\]{}`, c) >= 0 {
			return false
		}
	}
	return true
}
