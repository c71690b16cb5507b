package cli

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"net/http"
	"strings"
	"sync"
	"time"

	"github.com/swmgr/swmgr/client"
	"github.com/swmgr/swmgr/internal/model"
)

// Command accounting: every line the session runs (config-mode commands,
// shows, exec actions; blank lines aside) is sent, secret values masked,
// to the server's action that takes command records (model:
// RecordsCommands), which queues it for the TACACS+ and RADIUS
// accounting servers under the session's user. It is best effort: the
// records go in order from a goroutine of their own, so a slow or failing
// server never holds a command; a failure is told once per session (the
// server counts what it drops).

const (
	// recordsWaiting bounds the records waiting to be sent.
	recordsWaiting = 256
	// recordsDrain bounds how long the end of a session waits for the
	// records still waiting.
	recordsDrain     = 5 * time.Second
	maxRecordLine    = 1024
	maxRecordContext = 512
)

// commandRecords sends a session's command records.
type commandRecords struct {
	api     *client.Client
	action  string
	session string
	timeout time.Duration
	ctx     context.Context
	cancel  context.CancelFunc
	ch      chan client.Object
	done    chan struct{}
	seq     int64
	closed  bool

	mu    sync.Mutex
	first error
	told  bool
}

func newCommandRecords(ctx context.Context, api *client.Client, action string, timeout time.Duration) *commandRecords {
	var id [8]byte
	rand.Read(id[:])
	c := &commandRecords{api: api, action: action, session: hex.EncodeToString(id[:]), timeout: timeout,
		ch: make(chan client.Object, recordsWaiting), done: make(chan struct{})}
	c.ctx, c.cancel = context.WithCancel(ctx)
	go c.send()
	return c
}

func (c *commandRecords) send() {
	defer close(c.done)
	unknown := false
	for rec := range c.ch {
		if unknown {
			continue
		}
		ctx, cancel := context.WithTimeout(c.ctx, c.timeout)
		_, err := c.api.Action(ctx, c.action, rec)
		cancel()
		switch {
		case errStatus(err) == http.StatusNotFound:
			// A server older than command accounting: it takes none, which
			// is no failure.
			unknown = true
		case err != nil:
			c.fail(err)
		}
	}
}

func (c *commandRecords) fail(err error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.first == nil {
		c.first = err
	}
}

// add queues the record of line, run in context where.
func (c *commandRecords) add(reg *model.Registry, line, where string) {
	if c == nil || c.closed {
		return
	}
	c.seq++
	rec := client.Object{
		"Command": freeText(MaskSecrets(reg, line), maxRecordLine),
		"Context": freeText(MaskSecrets(reg, where), maxRecordContext),
		"Session": c.session, "Seq": c.seq,
	}
	select {
	case c.ch <- rec:
	default:
		c.fail(errors.New("too many records waiting for the server"))
	}
}

// note is the first failure, once per session ("" otherwise).
func (c *commandRecords) note() string {
	if c == nil {
		return ""
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.first == nil || c.told {
		return ""
	}
	c.told = true
	return "command accounting: a record of this session's commands was not taken (" + errText(c.first) + "); the commands ran, and further failures are not shown"
}

// close sends what waits (for at most recordsDrain) and stops.
func (c *commandRecords) close() {
	if c == nil || c.closed {
		return
	}
	c.closed = true
	close(c.ch)
	select {
	case <-c.done:
	case <-time.After(recordsDrain):
		c.cancel()
		<-c.done
	}
	c.cancel()
}

// freeText is a line as a record's free text: one line of printable
// text (tabs as blanks, other control characters as escapes), at most n
// bytes, cut at a character's start.
func freeText(s string, n int) string {
	return model.Truncate(escapeText(strings.TrimSpace(strings.ReplaceAll(s, "\t", " "))), n)
}
