package test

import (
	"encoding/base64"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
)

// basic is an Authorization header for user and password.
func basic(user, password string) []string {
	return []string{"Authorization", "Basic " + base64.StdEncoding.EncodeToString([]byte(user+":"+password))}
}

// flood sends n requests, 16 at a time, and fails the test unless each
// answers want.
func flood(t *testing.T, s *server, n, want int, method, path, body string, headers ...string) {
	t.Helper()
	errs := make(chan error, n)
	sem := make(chan struct{}, 16)
	var wg sync.WaitGroup
	for range n {
		wg.Add(1)
		sem <- struct{}{}
		go func() {
			defer func() { <-sem; wg.Done() }()
			r, err := s.call(method, path, body, headers...)
			if err == nil && r.code != want {
				err = fmt.Errorf("%s %s: %.300s, want %d", method, path, r, want)
			}
			if err != nil {
				errs <- err
			}
		}()
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Fatal(err)
	}
}

// TestReadOnlyFloodKeepsTheAuditTrail: 1,040
// forbidden writes by a read-only user do not push the admin's earlier
// changes out of the config log: once the log is full, failures replace
// older failures.
func TestReadOnlyFloodKeepsTheAuditTrail(t *testing.T) {
	s := startServer(t, "", "--ports", "4")
	s.expect(t, 201, "POST", "/config/User", `{"Name":"opsviewer","Group":"opsview","Password":"viewer-pass-1"}`)
	s.expect(t, 201, "POST", "/config/NtpServer", `{"IpAddr":"192.0.2.81"}`)
	s.expect(t, 200, "PATCH", "/config/SystemParam", `{"Hostname":"audit-leaf"}`)
	before := configLog(t, s)

	ro := basic("opsviewer", "viewer-pass-1")
	flood(t, s, 1040, 403, "POST", "/config/NtpServer", `{"IpAddr":"192.0.2.99"}`, ro...)

	after := configLog(t, s)
	if len(after) < len(before) || after[len(before)-1].SeqNum != before[len(before)-1].SeqNum {
		t.Fatalf("earlier entries were pushed out: %d entries before, %d after", len(before), len(after))
	}
	for i := range before {
		if after[i] != before[i] {
			t.Errorf("entry %v changed: %+v, now %+v", before[i].SeqNum, before[i], after[i])
		}
	}
	var admin, viewer int
	for _, e := range after {
		switch {
		case e.UserName == "opsviewer" && strings.HasPrefix(e.Result, "Error: "):
			viewer++
		case e.Result == "Success" && (e.API == "ntpserver" || e.API == "systemparam"):
			admin++
		}
	}
	if admin != 2 {
		t.Errorf("%d of the admin's 2 changes in the log", admin)
	}
	if viewer+len(before) != 1000 {
		t.Errorf("%d entries of the read-only user's 1040 refused writes besides %d earlier ones; want a full log of 1000", viewer, len(before))
	}
}

// TestRefusedBodiesBounded: refused writes of
// nearly 1 MiB each leave bounded entries (Data cut, its size said), their
// answers do not repeat the megabyte, the database stays small, and a page
// of the log stays about 1 MiB. (120 writes, not the probe's 300: past the
// failure budget they cost the same, and the suite stays short.)
func TestRefusedBodiesBounded(t *testing.T) {
	s := startServer(t, "", "--ports", "4")
	huge := strings.Repeat("a", 1<<20-200)
	body := `{"IpAddr":"` + huge + `"}`
	r := s.expect(t, 400, "POST", "/config/NtpServer", body)
	if len(r.raw) > 16<<10 {
		t.Errorf("the answer to a refused 1 MiB value is %d bytes", len(r.raw))
	}
	flood(t, s, 119, 400, "POST", "/config/NtpServer", body)
	// An unknown field whose name is the large part.
	s.expect(t, 400, "POST", "/config/NtpServer", `{"IpAddr":"192.0.2.5","`+huge[:200000]+`":1}`)

	log := configLog(t, s)
	cut := 0
	for _, e := range log {
		if len(e.Data) > 4096 {
			t.Fatalf("entry %v keeps %d bytes of Data", e.SeqNum, len(e.Data))
		}
		if strings.Contains(e.Data, "bytes in all)") {
			cut++
		}
	}
	if cut == 0 {
		t.Error("no entry says that its Data was cut and how long it was")
	}
	r = s.expect(t, 200, "GET", "/state/ConfigLogs?Count=1024", "")
	if len(r.raw) > 2<<20 {
		t.Errorf("a page of the config log is %d bytes", len(r.raw))
	}
	s.stop(t)
	fi, err := os.Stat(filepath.Join(s.dir, "swmgr.db"))
	if err != nil {
		t.Fatal(err)
	}
	if fi.Size() > 16<<20 {
		t.Errorf("swmgr.db is %d MiB after 120 refused 1 MiB writes", fi.Size()>>20)
	}
	t.Logf("swmgr.db: %d KiB after 120 refused writes of 1 MiB", fi.Size()>>10)
}

// TestCandidateLimits: a candidate's and a commit's
// Comment have a maximum length, and one user may hold only so many
// candidates.
func TestCandidateLimits(t *testing.T) {
	s := startServer(t, "", "--ports", "4")
	r := s.expect(t, 400, "POST", "/candidates", `{"Comment":"`+strings.Repeat("c", 1025)+`"}`)
	if !strings.Contains(string(r.raw), "at most 1024") {
		t.Errorf("too long a Comment: %s", r)
	}
	first := s.expect(t, 201, "POST", "/candidates", `{"Comment":"`+strings.Repeat("c", 1024)+`"}`).str("CandidateId")
	s.expect(t, 201, "POST", "/candidates/"+first+"/config/NtpServer", `{"IpAddr":"192.0.2.44"}`)
	// A commit's Comment (kept in the revision and the change feed) too.
	s.expect(t, 400, "POST", "/candidates/"+first+"/commit", `{"Comment":"`+strings.Repeat("c", 1025)+`"}`)
	s.expect(t, 404, "GET", "/config/NtpServer?IpAddr=192.0.2.44", "")
	for range 15 {
		s.expect(t, 201, "POST", "/candidates", `{}`)
	}
	r = s.expect(t, 429, "POST", "/candidates", `{}`)
	if !strings.Contains(string(r.raw), "commit or discard one") {
		t.Errorf("the 17th candidate of a user: %s", r)
	}
	// Another user still may.
	s.expect(t, 201, "POST", "/config/User", `{"Name":"opscand","Group":"operator","Password":"cand-pass-12"}`)
	s.expect(t, 201, "POST", "/candidates", `{}`, basic("opscand", "cand-pass-12")...)
}
