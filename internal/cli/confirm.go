package cli

import (
	"encoding/json"
	"fmt"
	"strconv"
	"time"

	"github.com/swmgr/swmgr/client"
	"github.com/swmgr/swmgr/internal/model"
)

// confirmStatus is a commit awaiting confirmation.
type confirmStatus struct {
	revision uint64
	user     string
	comment  string
	by       time.Time // rolled back then unless confirmed
}

// logTime is how the config log writes times (Go's time.String form).
const logTime = "2006-01-02 15:04:05.999999999 -0700 MST"

// awaitingConfirm finds the commit that awaits confirmation, if any, from
// what the API shows any client: the config log (the commit with its
// Confirm seconds, confirmations) and the revisions. The server keeps the
// exact state, but no read exposes it; while a commit waits, no other
// commit can happen, so the commit awaits confirmation exactly when it is
// still the newest revision, was not confirmed, and its time is not up.
// When this session made the commit, its deadline is the one the server
// answered.
func (s *Session) awaitingConfirm() (*confirmStatus, error) {
	logKind := s.cat.logKind
	if logKind == nil {
		return nil, fmt.Errorf("this server has no config log to read confirmations from")
	}
	entries, err := s.listState(logKind)
	if err != nil {
		return nil, err
	}
	confirmed := map[uint64]bool{}
	var commit model.Object
	var seconds int64
	for i := len(entries) - 1; i >= 0 && commit == nil; i-- {
		e := entries[i]
		if e.Str("Result") != "Success" {
			continue
		}
		var data struct {
			Confirm json.Number
			Comment string
		}
		if json.Unmarshal([]byte(e.Str("Data")), &data) != nil {
			continue
		}
		n, _ := data.Confirm.Int64()
		switch e.Str("API") {
		case "revision": // POST /revisions/<n>/confirm logs {"Confirm": <n>}
			confirmed[uint64(n)] = true
		case "candidate": // a commit logs {"Confirm": <seconds>, ...}
			if n > 0 {
				commit, seconds = e, n
			}
		}
	}
	if commit == nil {
		return nil, nil
	}
	at, err := time.Parse(logTime, commit.Str("Time"))
	if err != nil {
		return nil, fmt.Errorf("config log time %q: %w", commit.Str("Time"), err)
	}
	ctx, cancel := s.rctx()
	defer cancel()
	var newest *client.Revision
	for r, err := range s.api.Revisions(ctx, client.PageSize(1)) {
		if err != nil {
			return nil, err
		}
		newest = &r
		break
	}
	// The commit is the newest revision, made by the same user no later
	// than the log entry that reports it.
	if newest == nil || newest.User != commit.Str("UserName") || newest.Time.After(at) || at.Sub(newest.Time) > 10*time.Second || confirmed[newest.Revision] {
		return nil, nil
	}
	st := &confirmStatus{revision: newest.Revision, user: newest.User, comment: newest.Comment, by: at.Add(time.Duration(seconds) * time.Second)}
	if newest.Revision == s.confirm && !s.confirmBy.IsZero() {
		st.by = s.confirmBy
	}
	if !st.by.After(time.Now()) {
		return nil, nil // rolled back, or being rolled back
	}
	return st, nil
}

// showConfirmStatus is `show config confirm-status`: the commit awaiting
// confirmation, who made it and the time left.
func (s *Session) showConfirmStatus() error {
	st, err := s.awaitingConfirm()
	if err != nil {
		s.printf("ERROR: %s\n", errText(err))
		return errFailed
	}
	if s.json {
		if st == nil {
			return s.printJSON(map[string]any{"Awaiting": false})
		}
		return s.printJSON(map[string]any{"Awaiting": true, "Revision": st.revision, "User": st.user, "Comment": st.comment, "ConfirmBy": st.by.UTC(), "SecondsLeft": int64(time.Until(st.by).Seconds())})
	}
	s.printf("Applying Show:\n")
	if st == nil {
		s.printf("No commit awaits confirmation\n")
		return nil
	}
	left := time.Until(st.by).Round(time.Second)
	writeTable(s.out, []string{"Revision", "User", "Comment", "Rolled back at", "Time left"},
		[][]string{{strconv.FormatUint(st.revision, 10), st.user, st.comment, st.by.Local().Format(time.ANSIC), fmt.Sprintf("%d:%02d", int(left.Minutes()), int(left.Seconds())%60)}}, true)
	s.printf("Enter 'confirm' (or 'confirm %d') to keep it\n", st.revision)
	return nil
}
