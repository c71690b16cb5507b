package main

import (
	"bufio"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync/atomic"
	"testing"
	"time"
)

func TestReadAnswer(t *testing.T) {
	tests := []struct {
		name, method, raw string
		status            int
		body              string
		closing, bad      bool
	}{
		{name: "content length", method: "POST", raw: "HTTP/1.1 201 Created\r\nContent-Type: application/json\r\nContent-Length: 5\r\n\r\n{\"a\"}NEXT", status: 201, body: `{"a"}`},
		{name: "header names in any case", method: "GET", raw: "HTTP/1.1 200 OK\r\ncontent-length:  2 \r\n\r\nok", status: 200, body: "ok"},
		{name: "chunked", method: "GET", raw: "HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n3\r\nabc\r\n2\r\nde\r\n0\r\n\r\n", status: 200, body: "abcde"},
		{name: "connection close", method: "GET", raw: "HTTP/1.1 503 Service Unavailable\r\nConnection: close\r\nContent-Length: 2\r\n\r\nno", status: 503, body: "no", closing: true},
		{name: "body to the end", method: "GET", raw: "HTTP/1.1 200 OK\r\n\r\nall of it", status: 200, body: "all of it", closing: true},
		{name: "no content", method: "DELETE", raw: "HTTP/1.1 204 No Content\r\n\r\n", status: 204},
		{name: "head", method: "HEAD", raw: "HTTP/1.1 200 OK\r\nContent-Length: 10\r\n\r\n", status: 200},
		{name: "not http", method: "GET", raw: "SSH-2.0-OpenSSH\r\n\r\n", bad: true},
		{name: "bad length", method: "GET", raw: "HTTP/1.1 200 OK\r\nContent-Length: x\r\n\r\n", bad: true},
		{name: "short body", method: "GET", raw: "HTTP/1.1 200 OK\r\nContent-Length: 10\r\n\r\nabc", bad: true},
		{name: "cut in the headers", method: "GET", raw: "HTTP/1.1 200 OK\r\nContent-Le", bad: true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			status, body, closing, err := readAnswer(bufio.NewReader(strings.NewReader(tt.raw)), tt.method, nil)
			if tt.bad {
				if err == nil {
					t.Fatalf("no error; status %d body %q", status, body)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if status != tt.status || string(body) != tt.body || closing != tt.closing {
				t.Fatalf("got %d %q closing=%v, want %d %q closing=%v", status, body, closing, tt.status, tt.body, tt.closing)
			}
		})
	}
}

// TestRunAgainstServer runs both senders against a real net/http server:
// every request arrives with its own body, answers with the wrong status
// count as errors, and a server that closes connections is followed.
func TestRunAgainstServer(t *testing.T) {
	var seen atomic.Int64
	var bodies [64]atomic.Int64
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		b, _ := io.ReadAll(r.Body)
		var n int
		if _, err := fmt.Sscanf(string(b), `{"n":%d}`, &n); err != nil || r.Header.Get("Content-Type") != "application/json" {
			http.Error(w, "bad body "+string(b), http.StatusBadRequest)
			return
		}
		bodies[n%64].Add(1)
		i := seen.Add(1)
		if i%7 == 0 {
			w.Header().Set("Connection", "close")
		}
		if i%5 == 0 { // a large answer: chunked
			w.WriteHeader(http.StatusCreated)
			w.Write([]byte(strings.Repeat("x", 5000)))
			return
		}
		w.WriteHeader(http.StatusCreated)
		w.Write([]byte(`{"Result":"Success"}`))
	}))
	defer srv.Close()
	for _, transport := range []bool{false, true} {
		seen.Store(0)
		for i := range bodies {
			bodies[i].Store(0)
		}
		res := run(config{url: srv.URL + "/x", method: http.MethodPost, conns: 4, total: 640, tmpl: `{"n":{n}}`, expect: http.StatusCreated, timeout: 5 * time.Second, transport: transport})
		if res.errors != 0 || res.requests != 640 || seen.Load() != 640 {
			t.Fatalf("transport=%v: %d requests, %d errors (first %v), server saw %d; want 640, 0, 640", transport, res.requests, res.errors, res.firstErr, seen.Load())
		}
		for i := range bodies {
			if got := bodies[i].Load(); got != 10 {
				t.Fatalf("transport=%v: counter values ending in %d mod 64: %d requests, want 10 (each counter value once)", transport, i, got)
			}
		}
		res = run(config{url: srv.URL + "/x", method: http.MethodPost, conns: 2, total: 10, tmpl: `{"n":{n}}`, expect: http.StatusOK, timeout: 5 * time.Second, transport: transport})
		if res.errors != 10 {
			t.Fatalf("transport=%v: answers 201 where 200 is expected: %d errors, want 10", transport, res.errors)
		}
	}
	// A run for a duration ends on time, the requests in flight not counted.
	res := run(config{url: srv.URL + "/x", method: http.MethodPost, conns: 4, dur: 300 * time.Millisecond, tmpl: `{"n":{n}}`, expect: http.StatusCreated, timeout: 5 * time.Second})
	if res.errors != 0 || res.requests == 0 || res.elapsed > 3*time.Second {
		t.Fatalf("-d run: %d requests, %d errors (%v), %v", res.requests, res.errors, res.firstErr, res.elapsed)
	}
}
