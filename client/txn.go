package client

import (
	"bufio"
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"iter"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"time"
)

// Candidate is a private draft of the configuration: writes through its
// embedded Objects are staged, not applied, until Commit.
type Candidate struct {
	Objects
	ID string
}

// CandidateInfo describes a candidate.
type CandidateInfo struct {
	CandidateId  string
	BaseRevision uint64 // the running revision when it was made
	Comment      string
	User         string
	Created      time.Time
	LastUsed     time.Time
	Edits        int // staged writes
}

// NewCandidate makes a candidate based on the running configuration.
func (c *Client) NewCandidate(ctx context.Context, comment string) (*Candidate, error) {
	var out struct{ CandidateId string }
	if _, err := c.call(ctx, request{method: http.MethodPost, path: "/candidates", body: Object{"Comment": comment}}, &out); err != nil {
		return nil, err
	}
	return c.Candidate(out.CandidateId), nil
}

// Candidate returns the candidate with the given id (made earlier, by this
// or another client of the same user); it is not checked until used.
func (c *Client) Candidate(id string) *Candidate {
	return &Candidate{Objects: Objects{c: c, prefix: "/candidates/" + url.PathEscape(id)}, ID: id}
}

// Candidates lists the caller's candidates.
func (c *Client) Candidates(ctx context.Context) ([]CandidateInfo, error) {
	var out struct{ Candidates []CandidateInfo }
	if _, err := c.call(ctx, request{method: http.MethodGet, path: "/candidates"}, &out); err != nil {
		return nil, err
	}
	return out.Candidates, nil
}

// Info describes the candidate.
func (cd *Candidate) Info(ctx context.Context) (*CandidateInfo, error) {
	var out CandidateInfo
	if _, err := cd.c.call(ctx, request{method: http.MethodGet, path: cd.prefix}, &out); err != nil {
		return nil, err
	}
	return &out, nil
}

// Diff lists what committing the candidate would change.
func (cd *Candidate) Diff(ctx context.Context) ([]Change, error) {
	var out struct{ Changes []Change }
	if _, err := cd.c.call(ctx, request{method: http.MethodGet, path: cd.prefix + "/diff"}, &out); err != nil {
		return nil, err
	}
	return out.Changes, nil
}

// Discard drops the candidate.
func (cd *Candidate) Discard(ctx context.Context) error {
	_, err := cd.c.do(ctx, request{method: http.MethodDelete, path: cd.prefix})
	return err
}

// CommitOptions modify a candidate commit.
type CommitOptions struct {
	Comment string
	// Confirm, when not 0, rolls the commit back after this long (whole
	// seconds, up to 24 h) unless it is confirmed with Client.Confirm.
	Confirm time.Duration
	// Force commits even if objects the candidate changes were changed by
	// others since it was made.
	Force bool
	// DryRun reports what the commit would change, changing nothing.
	DryRun bool
	// IfRevision, when not 0, makes the commit fail with 412 unless the
	// running configuration is at this revision.
	IfRevision uint64
}

// CommitResult is what a commit or a rollback did.
type CommitResult struct {
	Revision  uint64 // the new revision; 0 when nothing changed or a dry run
	Changes   []Change
	DryRun    bool
	ConfirmBy time.Time // with Confirm: when the commit is rolled back unless confirmed
	Message   string    // why nothing was committed, if so
}

// Commit applies the candidate's edits to the running configuration as one
// revision. The candidate is gone afterwards, unless DryRun.
func (cd *Candidate) Commit(ctx context.Context, opts CommitOptions) (*CommitResult, error) {
	body := Object{}
	if opts.Comment != "" {
		body["Comment"] = opts.Comment
	}
	if opts.Confirm > 0 {
		secs := int64((opts.Confirm + time.Second - 1) / time.Second)
		body["Confirm"] = secs
	}
	if opts.Force {
		body["Force"] = true
	}
	r := request{method: http.MethodPost, path: cd.prefix + "/commit", body: body}
	if opts.DryRun {
		r.query = url.Values{"dry_run": {"true"}}
	}
	if opts.IfRevision != 0 {
		r.header = http.Header{"If-Match": {ETag(opts.IfRevision)}}
	}
	var out CommitResult
	if _, err := cd.c.call(ctx, r, &out); err != nil {
		return nil, err
	}
	return &out, nil
}

// Confirm confirms revision rev, committed with CommitOptions.Confirm, so
// that it is kept.
func (c *Client) Confirm(ctx context.Context, rev uint64) error {
	_, err := c.do(ctx, request{method: http.MethodPost, path: "/revisions/" + strconv.FormatUint(rev, 10) + "/confirm"})
	return err
}

// Cancel rolls back now revision rev, committed with
// CommitOptions.Confirm and still awaiting confirmation, as its timer
// would; it returns the revision the rollback made.
func (c *Client) Cancel(ctx context.Context, rev uint64) (uint64, error) {
	var out struct{ RollbackRevision uint64 }
	if _, err := c.call(ctx, request{method: http.MethodPost, path: "/revisions/" + strconv.FormatUint(rev, 10) + "/cancel"}, &out); err != nil {
		return 0, err
	}
	return out.RollbackRevision, nil
}

// PendingCommit is the commit awaiting confirmation: made with
// CommitOptions.Confirm, rolled back at ConfirmBy unless confirmed.
type PendingCommit struct {
	Revision    uint64
	User        string
	Comment     string
	ConfirmBy   time.Time
	SecondsLeft int64 // 0 once ConfirmBy passed and the rollback is being retried
}

// PendingConfirmation returns the commit awaiting confirmation, or nil
// when none does.
func (c *Client) PendingConfirmation(ctx context.Context) (*PendingCommit, error) {
	var out struct {
		Awaiting bool
		PendingCommit
	}
	if _, err := c.call(ctx, request{method: http.MethodGet, path: "/revisions/pending"}, &out); err != nil {
		return nil, err
	}
	if !out.Awaiting {
		return nil, nil
	}
	return &out.PendingCommit, nil
}

// Revision is one commit of the configuration.
type Revision struct {
	Revision uint64
	Time     time.Time
	User     string
	Source   string // rest, cli, rollback, confirm-timeout, system, reset, restore, startup
	Comment  string
	Changes  []Change
}

// Revision reads revision rev.
func (c *Client) Revision(ctx context.Context, rev uint64) (*Revision, error) {
	var out Revision
	if _, err := c.call(ctx, request{method: http.MethodGet, path: "/revisions/" + strconv.FormatUint(rev, 10)}, &out); err != nil {
		return nil, err
	}
	return &out, nil
}

// Revisions iterates over the kept revisions, newest first.
func (c *Client) Revisions(ctx context.Context, opts ...ListOption) iter.Seq2[Revision, error] {
	var lo listOptions
	for _, f := range opts {
		f(&lo)
	}
	return func(yield func(Revision, error) bool) {
		var marker uint64
		for {
			q := url.Values{"CurrentMarker": {strconv.FormatUint(marker, 10)}}
			if lo.pageSize > 0 {
				q.Set("Count", strconv.Itoa(lo.pageSize))
			}
			var page struct {
				NextMarker uint64
				MoreExist  bool
				Objects    []struct{ Object Revision }
			}
			if _, err := c.call(ctx, request{method: http.MethodGet, path: "/revisions", query: q}, &page); err != nil {
				yield(Revision{}, err)
				return
			}
			for _, r := range page.Objects {
				if !yield(r.Object, nil) {
					return
				}
			}
			if !page.MoreExist || page.NextMarker == marker {
				return
			}
			marker = page.NextMarker
		}
	}
}

// Event is one commit on the change feed.
type Event struct {
	Revision Revision
	// Gap, when not nil, says that the revisions it names could not be
	// sent (the server no longer keeps them: a subscriber resumed from
	// too far back; or it could not read one); Revision is then empty, and the feed goes on with
	// Gap.ContinuesWith. A consumer keeping a copy of the configuration
	// must read it whole again.
	Gap *FeedGap
}

// FeedGap is a range of revisions the change feed skipped.
type FeedGap struct {
	FirstMissing, LastMissing uint64
	ContinuesWith             uint64
	Message                   string
}

// FeedOptions modify Events.
type FeedOptions struct {
	// Since, when not nil, starts after that revision (the kept revisions
	// after it are sent first); nil starts with the next commit.
	Since *uint64
	// Heartbeat asks the server for a comment line this often when idle
	// (whole seconds, 1..300; 0: the server's default of 15 s).
	Heartbeat time.Duration
	// RetryDelay is the wait before reconnecting after the stream broke
	// (default 1 s).
	RetryDelay time.Duration
}

// Events follows the change feed: one Event per commit, in order. When the
// connection breaks (the server restarts, the network drops), it
// reconnects after RetryDelay and resumes after the last event received,
// so no commit is missed or repeated while the server keeps it. It ends
// when ctx is done (yielding ctx's error) or the loop breaks; a refusal by
// the server (an *Error) is yielded and ends it, but for 502, 503 and 504
// (a proxy in front of a restarting server, a server too busy for now),
// which are retried like a broken connection.
func (c *Client) Events(ctx context.Context, opts FeedOptions) iter.Seq2[Event, error] {
	return func(yield func(Event, error) bool) {
		var last *uint64
		if opts.Since != nil {
			v := *opts.Since
			last = &v
		}
		retry := opts.RetryDelay
		if retry <= 0 {
			retry = time.Second
		}
		for {
			stop, err := c.stream(ctx, last, opts.Heartbeat, func(joined uint64) {
				if last == nil {
					last = &joined
				}
			}, func(ev Event) bool {
				if ev.Gap == nil {
					rev := ev.Revision.Revision
					last = &rev
				}
				return yield(ev, nil)
			})
			if stop {
				return
			}
			var apiErr *Error
			if errors.As(err, &apiErr) && !unavailable(apiErr.Status) {
				yield(Event{}, err)
				return
			}
			select {
			case <-ctx.Done():
				yield(Event{}, ctx.Err())
				return
			case <-time.After(retry):
			}
		}
	}
}

// unavailable reports whether a refusal of the feed's connection is
// passing (a proxy in front of a restarting swmgr, swmgr busy checking
// logins): the feed then reconnects instead of ending.
func unavailable(status int) bool {
	return status == http.StatusBadGateway || status == http.StatusServiceUnavailable || status == http.StatusGatewayTimeout
}

// stream reads one connection of the feed; stop is true when the consumer
// is done. joined gets the revision the server's stream is current with
// (its ETag), so that a feed followed from now resumes from where it
// joined, not from whenever it reconnects.
func (c *Client) stream(ctx context.Context, since *uint64, beat time.Duration, joined func(uint64), emit func(Event) bool) (stop bool, err error) {
	r := request{method: http.MethodGet, path: "/events", header: http.Header{"Accept": {"text/event-stream"}}}
	if since != nil {
		r.header.Set("Last-Event-ID", strconv.FormatUint(*since, 10))
	}
	if beat > 0 {
		r.query = url.Values{"heartbeat": {strconv.Itoa(int(beat / time.Second))}}
	}
	req, err := c.newRequest(ctx, r)
	if err != nil {
		return true, err
	}
	req.Header.Set("Accept", "text/event-stream")
	hc := c.hc
	if hc.Timeout != 0 {
		copied := *hc
		copied.Timeout = 0
		hc = &copied
	}
	resp, err := hc.Do(req)
	if err != nil {
		return false, err
	}
	defer resp.Body.Close()
	if resp.StatusCode >= 400 {
		body, _ := io.ReadAll(io.LimitReader(resp.Body, 1<<20))
		return false, errorFrom(resp.StatusCode, body)
	}
	if rev, err := strconv.ParseUint(strings.Trim(resp.Header.Get("ETag"), `"`), 10, 64); err == nil {
		joined(rev)
	}
	sc := bufio.NewScanner(resp.Body)
	sc.Buffer(make([]byte, 0, 64<<10), 64<<20)
	var kind string
	var data bytes.Buffer
	for sc.Scan() {
		line := sc.Text()
		switch {
		case line == "":
			if kind == "commit" || kind == "" && data.Len() > 0 {
				var ev Event
				if err := decodeJSON(data.Bytes(), &ev.Revision); err != nil {
					return false, fmt.Errorf("change feed: %w", err)
				}
				if !emit(ev) {
					return true, nil
				}
			}
			// An error event naming LastEventId (this subscriber fell
			// behind and was dropped) ends the connection: the reconnect
			// resumes after the last event received. One naming a gap
			// (revisions no longer kept) is passed on; the stream goes on.
			if kind == "error" && strings.Contains(data.String(), `"LastEventId"`) {
				return false, fmt.Errorf("change feed: %s", strings.TrimSpace(data.String()))
			}
			if kind == "error" && strings.Contains(data.String(), `"ContinuesWith"`) {
				var gap FeedGap
				if err := decodeJSON(data.Bytes(), &gap); err != nil {
					return false, fmt.Errorf("change feed: %w", err)
				}
				if !emit(Event{Gap: &gap}) {
					return true, nil
				}
			} else if kind == "error" && strings.Contains(data.String(), `"Revision"`) {
				// A kept revision the server could not read: missed all
				// the same, so a gap of one.
				var unread struct {
					Revision uint64
					Message  string
				}
				if err := decodeJSON(data.Bytes(), &unread); err != nil {
					return false, fmt.Errorf("change feed: %w", err)
				}
				gap := FeedGap{FirstMissing: unread.Revision, LastMissing: unread.Revision, ContinuesWith: unread.Revision + 1, Message: unread.Message}
				if !emit(Event{Gap: &gap}) {
					return true, nil
				}
			}
			kind = ""
			data.Reset()
		case strings.HasPrefix(line, ":"):
		case strings.HasPrefix(line, "event:"):
			kind = strings.TrimSpace(line[len("event:"):])
		case strings.HasPrefix(line, "data:"):
			if data.Len() > 0 {
				data.WriteByte('\n')
			}
			data.WriteString(strings.TrimPrefix(line[len("data:"):], " "))
		}
	}
	if err := sc.Err(); err != nil {
		return false, fmt.Errorf("change feed: %w", err)
	}
	if ctx.Err() != nil {
		return false, ctx.Err()
	}
	return false, errors.New("change feed: the server closed the stream")
}
