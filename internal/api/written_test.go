package api

import (
	"io"
	"net/http"
	"net/http/httptest"
	"strconv"
	"strings"
	"testing"
	"testing/iotest"
)

// headerCounter records how many header entries the handler had set when
// it wrote the header.
type headerCounter struct {
	*httptest.ResponseRecorder
	atWrite int
}

func (h *headerCounter) WriteHeader(code int) {
	h.atWrite = len(h.Header())
	h.ResponseRecorder.WriteHeader(code)
}

// A write's answer: a complete body with its newline and the Content-Length
// net/http sets for it, and no more than the eight header entries a Go map
// holds before it grows into a table (sendWritten).
func TestWriteAnswers(t *testing.T) {
	a := newAPIHarness(t)
	steps := []struct {
		method, path, body string
		status             int
		location, etag     bool
	}{
		{"POST", "/config/NtpServer", `{"IpAddr":"10.9.9.9","MinPoll":6}`, http.StatusCreated, true, true},
		{"PATCH", "/config/NtpServer", `{"IpAddr":"10.9.9.9","MinPoll":7}`, http.StatusOK, false, true},
		{"PATCH", "/config/NtpServer/{id}", `{"MaxPoll":11}`, http.StatusOK, false, true},
		{"DELETE", "/config/NtpServer/{id}", ``, http.StatusOK, false, false},
	}
	id := ""
	for _, st := range steps {
		path := strings.ReplaceAll(st.path, "{id}", id)
		resp, body := a.send(st.method, path, nil, st.body)
		if resp.StatusCode != st.status {
			t.Fatalf("%s %s: %d %s", st.method, path, resp.StatusCode, body)
		}
		if !strings.HasPrefix(string(body), "{") || !strings.HasSuffix(string(body), "\"Result\":\"Success\"}\n") {
			t.Errorf("%s %s: body %q", st.method, path, body)
		}
		if cl := resp.Header.Get("Content-Length"); cl != strconv.Itoa(len(body)) || resp.ContentLength != int64(len(body)) {
			t.Errorf("%s %s: Content-Length %q for a %d-byte body", st.method, path, cl, len(body))
		}
		if got := resp.Header.Get("Location") != ""; got != st.location {
			t.Errorf("%s %s: Location %q", st.method, path, resp.Header.Get("Location"))
		}
		if got := resp.Header.Get("ETag") != ""; got != st.etag {
			t.Errorf("%s %s: ETag %q", st.method, path, resp.Header.Get("ETag"))
		}
		if ct := resp.Header.Get("Content-Type"); ct != "application/json; charset=UTF-8" {
			t.Errorf("%s %s: Content-Type %q", st.method, path, ct)
		}
		if st.location {
			loc := resp.Header.Get("Location")
			id = loc[strings.LastIndexByte(loc, '/')+1:]
			if !strings.Contains(string(body), `"ObjectId":"`+id+`"`) {
				t.Errorf("Location %s is not the ObjectId of %s", loc, body)
			}
		}
	}

	rec := &headerCounter{ResponseRecorder: httptest.NewRecorder()}
	req := httptest.NewRequest("POST", "/public/v1/config/NtpServer", strings.NewReader(`{"IpAddr":"10.9.9.10"}`))
	a.h.ServeHTTP(rec, req)
	if rec.Code != http.StatusCreated {
		t.Fatalf("create: %d %s", rec.Code, rec.Body)
	}
	if rec.atWrite > 8 {
		t.Errorf("a create's answer had %d header entries at WriteHeader (%v); more than 8 make Go grow the map into a table", rec.atWrite, rec.Header())
	}
}

func TestReadBodyBytes(t *testing.T) {
	long := strings.Repeat("x", 5000)
	for _, tt := range []struct {
		body     string
		declared int64
	}{
		{`{"IpAddr":"10.0.0.1"}`, 21},
		{`{"IpAddr":"10.0.0.1"}`, -1}, // unknown (chunked)
		{`{"IpAddr":"10.0.0.1"}`, 5},  // less than sent: all of it is read
		{`{}`, 100},
		{long, -1},
		{long, int64(len(long))},
		{"", 0},
	} {
		got, err := readBodyBytes(iotest.OneByteReader(strings.NewReader(tt.body)), tt.declared)
		if err != nil || string(got) != tt.body {
			t.Errorf("readBodyBytes(%d bytes, declared %d) = %d bytes, %v", len(tt.body), tt.declared, len(got), err)
		}
	}
	if _, err := readBodyBytes(iotest.ErrReader(io.ErrUnexpectedEOF), 10); err != io.ErrUnexpectedEOF {
		t.Errorf("a failing body: %v", err)
	}
}
