package lifecycle

import (
	"fmt"
	"net/http"
	"os"
	"runtime"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/swmgr/swmgr/internal/archive/sshdtest"
)

func waitUntil(t *testing.T, what string, limit time.Duration, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(limit)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("timed out after %v waiting for %s", limit, what)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// archiveState reads state/ConfigArchiveServer of 127.0.0.1.
func (s *switchHarness) archiveState() map[string]any {
	s.t.Helper()
	var st struct{ Object map[string]any }
	s.must("GET", "/state/ConfigArchiveServer?IpAddr=127.0.0.1", "", &st)
	return st.Object
}

// TestArchiveOverRealSSHD runs SaveConfig, ResetConfigToFile and a
// ConfigArchiveServer against OpenSSH's sshd on a loopback port (the
// object's Port field), as a throwaway account.
func TestArchiveOverRealSSHD(t *testing.T) {
	srv := sshdtest.Start(t)
	s := newSwitch(t, harnessOptions{})
	seedAll(s)
	dir := srv.Home + "/backups"
	cas := fmt.Sprintf(`{"IpAddr":"127.0.0.1","Port":%d,"Username":"%s","Password":"%s","DstFile":"%s/onchange","Interval":0,"OnChange":true,"Nonce":"arch-n","Passphrase":"arch pass","RetryCount":0,"Timeout":10}`,
		srv.Port, srv.User, srv.Password, dir)
	s.must("POST", "/config/ConfigArchiveServer", cas, nil)

	t.Run("a new server archives at once; state shows it and the pinned key", func(t *testing.T) {
		waitUntil(t, "the first archive", 20*time.Second, func() bool { return s.archiveState()["Uploads"] == float64(1) })
		st := s.archiveState()
		if st["LastError"] != "" || !strings.HasPrefix(st["HostKey"].(string), "SHA256:") || st["LastFile"] != dir+"/onchange" || st["LastRevision"] != float64(s.revision()) {
			t.Fatalf("state %v", st)
		}
		for _, secret := range []string{srv.Password, "arch pass"} {
			if strings.Contains(fmt.Sprint(st), secret) {
				t.Fatal("the state shows a secret")
			}
		}
		data, _ := os.ReadFile(dir + "/onchange")
		if len(data) < 8 || string(data[:8]) != "SWMGRENC" {
			t.Fatal("the archive is not encrypted")
		}
	})

	t.Run("OnChange: one commit is archived within seconds; a burst of 100 makes a handful", func(t *testing.T) {
		start := time.Now()
		s.must("PATCH", "/config/SystemParam", `{"Description":"one change"}`, nil)
		rev := s.revision()
		waitUntil(t, "the change archived", 10*time.Second, func() bool { return s.archiveState()["LastRevision"] == float64(rev) })
		t.Logf("revision %d archived %v after its commit", rev, time.Since(start))
		before := s.archiveState()["Uploads"].(float64)
		for i := range 100 {
			s.must("PATCH", "/config/SystemParam", fmt.Sprintf(`{"Description":"burst %d"}`, i), nil)
		}
		rev = s.revision()
		waitUntil(t, "the burst archived", 20*time.Second, func() bool { return s.archiveState()["LastRevision"] == float64(rev) })
		time.Sleep(time.Second)
		n := s.archiveState()["Uploads"].(float64) - before
		t.Logf("100 commits made %v uploads", n)
		if n < 1 || n > 5 {
			t.Fatalf("100 commits made %v uploads, want 1..5", n)
		}
	})

	t.Run("SaveConfig and ResetConfigToFile over sftp:// use the server's credentials", func(t *testing.T) {
		_, want := s.snapshot()
		var res SaveResult
		uri := fmt.Sprintf("sftp://127.0.0.1:%d%s/manual", srv.Port, dir)
		s.must("POST", "/action/SaveConfig", `{"DstFileURI":"`+uri+`","Timestamp":"append","Nonce":"m","Passphrase":"manual pass"}`, &res)
		if !strings.HasPrefix(res.File, uri+"-") {
			t.Fatalf("saved to %s", res.File)
		}
		s.must("DELETE", "/config/NtpServer", `{"IpAddr":"192.0.2.10"}`, nil)
		rev := s.revision()
		code, body := s.do("POST", "/action/ResetConfigToFile", `{"SrcFileURI":"`+res.File+`","Nonce":"m","Passphrase":"wrong"}`)
		if code != http.StatusBadRequest || s.revision() != rev {
			t.Fatalf("wrong passphrase over sftp: %d %s", code, body)
		}
		s.must("POST", "/action/ResetConfigToFile", `{"SrcFileURI":"`+res.File+`","Nonce":"m","Passphrase":"manual pass"}`, nil)
		_, got := s.snapshot()
		compare(t, "restored over sftp", want, got, false)
	})

	t.Run("a changed host key is refused until the object is updated", func(t *testing.T) {
		pinned := s.archiveState()["HostKey"]
		srv.NewHostKey()
		srv.Restart()
		failures := s.archiveState()["Failures"].(float64)
		s.must("PATCH", "/config/SystemParam", `{"Description":"after the key change"}`, nil)
		waitUntil(t, "the refusal", 20*time.Second, func() bool { return s.archiveState()["Failures"].(float64) > failures })
		st := s.archiveState()
		if !strings.Contains(st["LastError"].(string), "host key changed") || st["HostKey"] != pinned {
			t.Fatalf("state %v", st)
		}
		uri := fmt.Sprintf("sftp://127.0.0.1:%d%s/refused", srv.Port, dir)
		if code, body := s.do("POST", "/action/SaveConfig", `{"DstFileURI":"`+uri+`"}`); code != http.StatusBadRequest || !strings.Contains(string(body), "host key changed") {
			t.Fatalf("SaveConfig to a changed key: %d %s", code, body)
		}
		// Updating the object accepts the new key.
		s.must("PATCH", "/config/ConfigArchiveServer", `{"IpAddr":"127.0.0.1","Timeout":11}`, nil)
		waitUntil(t, "the archive with the new key", 20*time.Second, func() bool {
			st := s.archiveState()
			return st["LastError"] == "" && st["HostKey"] != pinned && st["HostKey"] != ""
		})
	})

	t.Run("sshd down: state shows the error; back: the success", func(t *testing.T) {
		srv.Stop()
		failures := s.archiveState()["Failures"].(float64)
		s.must("PATCH", "/config/SystemParam", `{"Description":"while down"}`, nil)
		waitUntil(t, "the failure", 20*time.Second, func() bool { return s.archiveState()["Failures"].(float64) > failures })
		if st := s.archiveState(); !strings.Contains(st["LastError"].(string), "connect") {
			t.Fatalf("state %v", st)
		}
		srv.Restart()
		s.must("PATCH", "/config/SystemParam", `{"Description":"back"}`, nil)
		rev := s.revision()
		waitUntil(t, "the success", 20*time.Second, func() bool {
			st := s.archiveState()
			return st["LastError"] == "" && st["LastRevision"] == float64(rev)
		})
	})

	t.Run("wrong password", func(t *testing.T) {
		s.must("PATCH", "/config/ConfigArchiveServer", `{"IpAddr":"127.0.0.1","Password":"not-the-password"}`, nil)
		waitUntil(t, "the refusal", 20*time.Second, func() bool {
			e, _ := s.archiveState()["LastError"].(string)
			return strings.Contains(e, "refused the user name or password")
		})
	})

	t.Run("deleting the server stops its uploads", func(t *testing.T) {
		s.must("PATCH", "/config/ConfigArchiveServer", `{"IpAddr":"127.0.0.1","Password":"`+srv.Password+`"}`, nil)
		waitUntil(t, "an archive", 20*time.Second, func() bool { return s.archiveState()["LastError"] == "" })
		s.must("DELETE", "/config/ConfigArchiveServer", `{"IpAddr":"127.0.0.1"}`, nil)
		entries := func() int { e, _ := os.ReadDir(dir); return len(e) }
		time.Sleep(300 * time.Millisecond)
		n := entries()
		mod := modTime(dir + "/onchange")
		for i := range 5 {
			s.must("PATCH", "/config/SystemParam", fmt.Sprintf(`{"Description":"after delete %d"}`, i), nil)
		}
		time.Sleep(2 * time.Second)
		if entries() != n || !modTime(dir+"/onchange").Equal(mod) {
			t.Fatal("a deleted server was still archived to")
		}
	})
}

func modTime(p string) time.Time {
	fi, err := os.Stat(p)
	if err != nil {
		return time.Time{}
	}
	return fi.ModTime()
}

// A restore from an archive server that serves what is not a saved
// configuration of a sane size is refused with a 400 at once and without
// reading it into memory: a file of 1 GiB (the server reports its size), a
// FIFO (which would never end), and a document with a member given twice.
func TestRestoreFromHostileSFTPServer(t *testing.T) {
	srv := sshdtest.Start(t)
	s := newSwitch(t, harnessOptions{tune: func(o *Options) { o.NoScheduler = true }})
	s.must("POST", "/config/ConfigArchiveServer", fmt.Sprintf(`{"IpAddr":"127.0.0.1","Port":%d,"Username":"%s","Password":"%s","RetryCount":2,"Timeout":10}`,
		srv.Port, srv.User, srv.Password), nil)
	huge := srv.Home + "/huge"
	if err := os.WriteFile(huge, []byte(`{"ConfigData":{"NtpServer":[{"IpAddr":"`), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.Truncate(huge, 1<<30); err != nil {
		t.Fatal(err)
	}
	fifo := srv.Home + "/fifo"
	if err := syscall.Mkfifo(fifo, 0o644); err != nil {
		t.Fatal(err)
	}
	twice := srv.Home + "/twice"
	os.WriteFile(twice, []byte(`{"ConfigData":{},"ConfigData":{"NtpServer":[{"IpAddr":"192.0.2.1"}]}}`), 0o644)
	rev := s.revision()
	for _, c := range []struct{ name, path, says string }{
		{"a file of 1 GiB", huge, "larger than"},
		{"a FIFO", fifo, "not a regular file"},
		{"a member given twice", twice, "ConfigData is given twice"},
	} {
		var before, after runtime.MemStats
		runtime.ReadMemStats(&before)
		code, body := s.do("POST", "/action/ResetConfigToFile", `{"SrcFileURI":"sftp://127.0.0.1`+c.path+`"}`)
		runtime.ReadMemStats(&after)
		if code != http.StatusBadRequest || !strings.Contains(string(body), c.says) {
			t.Errorf("%s: %d %s; want a 400 saying %q", c.name, code, body, c.says)
		}
		if alloc := after.TotalAlloc - before.TotalAlloc; alloc > 32<<20 {
			t.Errorf("%s: the refused restore allocated %d MiB", c.name, alloc>>20)
		}
	}
	if s.revision() != rev {
		t.Errorf("a refused restore changed the configuration")
	}
}
