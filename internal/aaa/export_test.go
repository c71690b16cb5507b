package aaa

import "time"

// SetAccountingRetryWait sets how long a record no server answered waits
// before it is sent again; set it before the first record is queued.
func SetAccountingRetryWait(s *Service, d time.Duration) { s.acct.retryWait = d }
