// Command bareserver is the baseline of figure (a) of bench/run.sh: a bare
// net/http server that answers every request, whatever its method and path,
// with one fixed response.
//
// With -copy-from URL it fetches that URL once at start and then serves the
// same status, headers and body bytes (net/http adds Date itself, as it does
// for swmgr). With -body FILE it serves the file's bytes as
// application/json. It listens on -addr until killed.
package main

import (
	"flag"
	"fmt"
	"io"
	"log"
	"net/http"
	"os"
	"strconv"
	"time"
)

func main() {
	addr := flag.String("addr", "127.0.0.1:8081", "listen address")
	copyFrom := flag.String("copy-from", "", "serve the status, headers and body this URL answers now")
	bodyFile := flag.String("body", "", "serve this file's bytes as application/json (instead of -copy-from)")
	flag.Parse()

	status, header, body, err := response(*copyFrom, *bodyFile)
	if err != nil {
		log.Fatalf("bareserver: %v", err)
	}
	header.Set("Content-Length", strconv.Itoa(len(body)))
	srv := &http.Server{
		Addr:              *addr,
		ReadHeaderTimeout: 10 * time.Second,
		IdleTimeout:       2 * time.Minute,
		Handler: http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
			h := w.Header()
			for k, v := range header {
				h[k] = v
			}
			w.WriteHeader(status)
			w.Write(body)
		}),
	}
	log.Fatal(srv.ListenAndServe())
}

// response returns what to serve.
func response(url, file string) (int, http.Header, []byte, error) {
	switch {
	case url != "" && file != "":
		return 0, nil, nil, fmt.Errorf("give -copy-from or -body, not both")
	case file != "":
		b, err := os.ReadFile(file)
		h := http.Header{}
		h.Set("Content-Type", "application/json; charset=UTF-8")
		return http.StatusOK, h, b, err
	case url != "":
		resp, err := http.Get(url)
		if err != nil {
			return 0, nil, nil, err
		}
		defer resp.Body.Close()
		b, err := io.ReadAll(resp.Body)
		if err != nil {
			return 0, nil, nil, err
		}
		h := resp.Header.Clone()
		h.Del("Date")
		h.Del("Content-Length")
		h.Del("Connection")
		h.Del("Keep-Alive")
		return resp.StatusCode, h, b, nil
	}
	return 0, nil, nil, fmt.Errorf("give -copy-from URL or -body FILE")
}
