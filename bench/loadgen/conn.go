package main

import (
	"bufio"
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httputil"
	"net/url"
	"slices"
	"strconv"
	"sync"
	"syscall"
	"time"
)

// loadgen's own HTTP/1.1 client: one keep-alive connection per worker, the
// request written in one write from bytes prepared once, the answer read
// in place (readAnswer). net/http's client Transport costs about 80 us of CPU per
// request on the 2-core machine the benchmarks run on (two goroutines per
// connection, channels between them and the caller, a context per
// request); the generator shares those cores with the server it measures,
// so every microsecond it spends is taken from the server (bench/README.md).

// target is where the requests go.
type target struct {
	addr string // host:port to dial
	host string // the Host header
	uri  string // path and query
}

func parseTarget(raw string) (target, error) {
	u, err := url.Parse(raw)
	if err != nil {
		return target{}, fmt.Errorf("bad -url: %w", err)
	}
	if u.Scheme != "http" {
		return target{}, fmt.Errorf("-url %s: loadgen's own connections speak plain http only (give -transport for %s)", raw, u.Scheme)
	}
	addr := u.Host
	if u.Port() == "" {
		addr = net.JoinHostPort(u.Hostname(), "80")
	}
	return target{addr: addr, host: u.Host, uri: u.RequestURI()}, nil
}

// connSender sends a worker's requests on one connection, dialled again
// when the server closes it.
type connSender struct {
	cfg    config
	target target
	head   []byte // the request up to its Content-Length value (or complete, without a body)
	req    []byte // the request being sent
	answer []byte

	mu     sync.Mutex // conn against the close at the end of the run
	conn   net.Conn
	br     *bufio.Reader
	ended  bool
	cancel func() bool // stops the AfterFunc
}

func newConnSender(ctx context.Context, cfg config, t target) *connSender {
	s := &connSender{cfg: cfg, target: t}
	s.head = fmt.Appendf(nil, "%s %s HTTP/1.1\r\nHost: %s\r\nUser-Agent: swmgr-loadgen\r\n", cfg.method, t.uri, t.host)
	// A request in flight when the run ends (-d) is abandoned, as the
	// client's context would: its connection is closed under it.
	s.cancel = context.AfterFunc(ctx, func() {
		s.mu.Lock()
		defer s.mu.Unlock()
		s.ended = true
		if s.conn != nil {
			s.conn.Close()
		}
	})
	return s
}

func (s *connSender) do(ctx context.Context, body []byte) (int, []byte, error) {
	s.req = append(s.req[:0], s.head...)
	if len(body) > 0 {
		s.req = append(s.req, "Content-Type: application/json\r\nContent-Length: "...)
		s.req = strconv.AppendInt(s.req, int64(len(body)), 10)
		s.req = append(s.req, "\r\n\r\n"...)
		s.req = append(s.req, body...)
	} else {
		s.req = append(s.req, "\r\n"...)
	}
	// A kept-alive connection the server closed meanwhile fails before
	// any answer: send again on a new one, once (never a request the
	// server may have taken: that would create twice).
	for attempt := 0; ; attempt++ {
		fresh, err := s.connect(ctx)
		if err != nil {
			return 0, nil, err
		}
		status, answer, err := s.roundTrip()
		if err == nil {
			return status, answer, nil
		}
		s.drop()
		if fresh || attempt > 0 || ctx.Err() != nil || !errors.Is(err, errUnanswered) {
			return 0, nil, err
		}
	}
}

// connect dials when there is no connection; fresh says it did.
func (s *connSender) connect(ctx context.Context) (fresh bool, err error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.ended {
		return false, context.Canceled
	}
	if s.conn != nil {
		return false, nil
	}
	d := net.Dialer{Timeout: 5 * time.Second, KeepAlive: 30 * time.Second}
	c, err := d.DialContext(ctx, "tcp", s.target.addr)
	if err != nil {
		return true, err
	}
	s.conn = c
	if s.br == nil {
		s.br = bufio.NewReaderSize(c, 16<<10)
	} else {
		s.br.Reset(c)
	}
	return true, nil
}

func (s *connSender) roundTrip() (int, []byte, error) {
	if err := s.conn.SetDeadline(time.Now().Add(s.cfg.timeout)); err != nil {
		return 0, nil, err
	}
	if _, err := s.conn.Write(s.req); err != nil {
		return 0, nil, fmt.Errorf("%w: %w", errUnanswered, err)
	}
	status, answer, closing, err := readAnswer(s.br, s.cfg.method, s.answer[:0])
	s.answer = answer
	if err != nil {
		return 0, nil, err
	}
	if closing {
		s.drop() // the server closes it: the next request dials
	}
	return status, answer, nil
}

// readAnswer reads one HTTP/1.1 response to a request of method from br,
// its body into dst: the status line, the headers that frame the body
// (Content-Length, Transfer-Encoding: chunked, Connection: close) and the
// body they frame. The headers are read in place: net/http's ReadResponse
// would allocate a header map and a string per header of every answer.
func readAnswer(br *bufio.Reader, method string, dst []byte) (status int, body []byte, closing bool, err error) {
	line, err := br.ReadSlice('\n')
	if err != nil {
		if len(line) == 0 && (errors.Is(err, io.EOF) || errors.Is(err, syscall.ECONNRESET)) {
			err = fmt.Errorf("%w: %w", errUnanswered, err)
		}
		return 0, dst, false, fmt.Errorf("reading the status line: %w", err)
	}
	if len(line) < 12 || !bytes.HasPrefix(line, []byte("HTTP/1.")) || line[8] != ' ' {
		return 0, dst, false, fmt.Errorf("malformed status line %q", line)
	}
	status, err = strconv.Atoi(string(line[9:12]))
	if err != nil {
		return 0, dst, false, fmt.Errorf("malformed status line %q", line)
	}
	closing = line[7] == '0' // HTTP/1.0 closes unless told otherwise; the servers here speak 1.1
	length, chunked := int64(-1), false
	for {
		line, err = br.ReadSlice('\n')
		if err != nil {
			return status, dst, closing, fmt.Errorf("reading the headers: %w", err)
		}
		line = bytes.TrimRight(line, "\r\n")
		if len(line) == 0 {
			break
		}
		name, value, ok := bytes.Cut(line, []byte(":"))
		if !ok {
			return status, dst, closing, fmt.Errorf("malformed header line %q", line)
		}
		value = bytes.TrimSpace(value)
		switch {
		case bytes.EqualFold(name, []byte("Content-Length")):
			if length, err = strconv.ParseInt(string(value), 10, 64); err != nil || length < 0 {
				return status, dst, closing, fmt.Errorf("bad Content-Length %q", value)
			}
		case bytes.EqualFold(name, []byte("Transfer-Encoding")):
			chunked = bytes.EqualFold(value, []byte("chunked"))
		case bytes.EqualFold(name, []byte("Connection")):
			closing = bytes.EqualFold(value, []byte("close"))
		}
	}
	switch {
	case method == http.MethodHead || status/100 == 1 || status == http.StatusNoContent || status == http.StatusNotModified:
		return status, dst, closing, nil
	case chunked:
		if dst, err = appendAll(dst, httputil.NewChunkedReader(br)); err == nil {
			err = skipTrailer(br) // the chunked reader stops at the last chunk
		}
	case length >= 0:
		dst = slices.Grow(dst, int(length))[:length]
		_, err = io.ReadFull(br, dst)
	default: // the body runs to the end of the connection
		dst, err = appendAll(dst, br)
		closing = true
	}
	return status, dst, closing, err
}

// errUnanswered marks a request the server closed the connection on
// without a byte of answer: a kept-alive connection it had closed, on
// which the request can be sent again.
var errUnanswered = errors.New("the connection was closed before an answer")

// skipTrailer reads the trailer of a chunked body, up to its empty line.
func skipTrailer(br *bufio.Reader) error {
	for {
		line, err := br.ReadSlice('\n')
		if err != nil {
			return fmt.Errorf("reading the trailer: %w", err)
		}
		if len(bytes.TrimRight(line, "\r\n")) == 0 {
			return nil
		}
	}
}

// appendAll is io.ReadAll into dst's space.
func appendAll(dst []byte, r io.Reader) ([]byte, error) {
	for {
		if len(dst) == cap(dst) {
			dst = append(dst, 0)[:len(dst)]
		}
		n, err := r.Read(dst[len(dst):cap(dst)])
		dst = dst[:len(dst)+n]
		if errors.Is(err, io.EOF) {
			return dst, nil
		}
		if err != nil {
			return dst, err
		}
	}
}

func (s *connSender) drop() {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.conn != nil {
		s.conn.Close()
		s.conn = nil
	}
}

func (s *connSender) close() {
	s.cancel()
	s.drop()
}
