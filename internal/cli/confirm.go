package cli

import (
	"fmt"
	"strconv"
	"time"
)

// confirmStatus is a commit awaiting confirmation.
type confirmStatus struct {
	revision uint64
	user     string
	comment  string
	by       time.Time // rolled back then unless confirmed
}

// awaitingConfirm asks the server for the commit that awaits confirmation,
// if any.
func (s *Session) awaitingConfirm() (*confirmStatus, error) {
	ctx, cancel := s.rctx()
	defer cancel()
	p, err := s.api.PendingConfirmation(ctx)
	if err != nil || p == nil {
		return nil, err
	}
	return &confirmStatus{revision: p.Revision, user: p.User, comment: p.Comment, by: p.ConfirmBy}, nil
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
	left := max(time.Until(st.by).Round(time.Second), 0) // past it, the rollback is being retried
	writeTable(s.out, []string{"Revision", "User", "Comment", "Rolled back at", "Time left"},
		[][]string{{strconv.FormatUint(st.revision, 10), st.user, st.comment, st.by.Local().Format(time.ANSIC), fmt.Sprintf("%d:%02d", int(left.Minutes()), int(left.Seconds())%60)}}, true)
	s.printf("Enter 'confirm' (or 'confirm %d') to keep it\n", st.revision)
	return nil
}
