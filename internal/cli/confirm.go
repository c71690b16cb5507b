package cli

import (
	"fmt"
	"strconv"
	"time"

	"github.com/swmgr/swmgr/client"
)

// awaitingConfirm asks the server for the commit that awaits confirmation,
// if any (nil).
func (s *Session) awaitingConfirm() (*client.PendingCommit, error) {
	ctx, cancel := s.rctx()
	defer cancel()
	return s.api.PendingConfirmation(ctx)
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
		return s.printJSON(map[string]any{"Awaiting": true, "Revision": st.Revision, "User": st.User, "Comment": st.Comment, "ConfirmBy": st.ConfirmBy.UTC(), "SecondsLeft": int64(time.Until(st.ConfirmBy).Seconds())})
	}
	s.printf("Applying Show:\n")
	if st == nil {
		s.printf("No commit awaits confirmation\n")
		return nil
	}
	left := max(time.Until(st.ConfirmBy).Round(time.Second), 0) // past it, the rollback is being retried
	writeTable(terminal{s}, []string{"Revision", "User", "Comment", "Rolled back at", "Time left"},
		[][]string{{strconv.FormatUint(st.Revision, 10), st.User, st.Comment, st.ConfirmBy.Local().Format(time.ANSIC), fmt.Sprintf("%d:%02d", int(left.Minutes()), int(left.Seconds())%60)}}, true)
	s.printf("Enter 'confirm' (or 'confirm %d') to keep it, 'cancel' to roll it back now\n", st.Revision)
	return nil
}
