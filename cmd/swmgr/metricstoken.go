package main

import (
	"crypto/sha256"
	"crypto/subtle"
	"errors"
	"fmt"
	"log/slog"
	"net/http"
	"strconv"
	"strings"

	"github.com/spf13/pflag"

	"github.com/swmgr/swmgr/internal/apierr"
	"github.com/swmgr/swmgr/internal/reloadfile"
)

// minMetricsToken is the shortest metrics token accepted: 128 bits in hex.
const minMetricsToken = 32

// metricsTokenScheme is how a scraper sends the token (RFC 6750), as
// Prometheus's authorization (type Bearer, credentials_file) and
// bearer_token_file send it.
const metricsTokenScheme = "Bearer "

// addMetricsFlags declares the flags of the metrics' own credential.
func addMetricsFlags(f *pflag.FlagSet, o *serveOptions) {
	f.StringVar(&o.metricsTokenFile, "metrics-token-file", "", "file holding a bearer token that reads /metrics and nothing else (Prometheus: authorization credentials_file); checked by swmgr alone, never by central AAA or the login throttle; read again when the file changes")
}

// metricsToken is the token of --metrics-token-file, followed as the file
// changes (rotation without a restart).
type metricsToken struct {
	file *reloadfile.File[[32]byte] // the token's SHA-256: compared in constant time
	log  *slog.Logger
}

// openMetricsToken reads --metrics-token-file; nil if none is given.
func openMetricsToken(o *serveOptions, log *slog.Logger) (*metricsToken, error) {
	if o.metricsTokenFile == "" {
		return nil, nil
	}
	if !o.metrics {
		return nil, errors.New("--metrics-token-file is for /metrics: drop it, or --metrics=false")
	}
	parseToken := reloadfile.Token(minMetricsToken)
	parse := func(contents [][]byte) ([32]byte, error) {
		t, err := parseToken(contents)
		if err != nil {
			return [32]byte{}, fmt.Errorf("--metrics-token-file %s: %w", o.metricsTokenFile, err)
		}
		return sha256.Sum256(t), nil
	}
	file, err := reloadfile.Open(parse, func(_ [32]byte, err error) {
		if err != nil {
			log.Warn("metrics token file changed but cannot be used; the previous token still reads /metrics", "err", err)
			return
		}
		log.Info("metrics token reloaded", "file", o.metricsTokenFile)
	}, o.metricsTokenFile)
	if err != nil {
		return nil, fmt.Errorf("--metrics-token-file: %w", err)
	}
	return &metricsToken{file: file, log: log}, nil
}

// sent reports whether r carries a bearer token (whatever its value).
func (m *metricsToken) sent(r *http.Request) bool {
	return m != nil && r.URL.Path == "/metrics" && strings.HasPrefix(r.Header.Get("Authorization"), metricsTokenScheme)
}

// serve answers a request that sent a bearer token for /metrics: the
// metrics if the token is right, 401 if not. No user name is involved, so
// a wrong or stale token locks nobody out, and central AAA is not asked.
func (m *metricsToken) serve(w http.ResponseWriter, r *http.Request, metrics http.Handler) {
	got := sha256.Sum256([]byte(strings.TrimSpace(strings.TrimPrefix(r.Header.Get("Authorization"), metricsTokenScheme))))
	want := m.file.Get()
	if subtle.ConstantTimeCompare(got[:], want[:]) == 1 {
		metrics.ServeHTTP(w, r)
		return
	}
	m.log.Warn("metrics token refused", "addr", r.RemoteAddr)
	body := apierr.New(http.StatusUnauthorized, apierr.CodeUnauthorized, "", "", "wrong metrics token: send the contents of --metrics-token-file as a Bearer token").Body()
	h := w.Header()
	h.Set("WWW-Authenticate", `Bearer realm="swmgr"`)
	h.Set("Content-Type", "application/json; charset=UTF-8")
	h.Set("Content-Length", strconv.Itoa(len(body)+1))
	w.WriteHeader(http.StatusUnauthorized)
	w.Write(append(body, '\n'))
}
