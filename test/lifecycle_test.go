// The configuration lifecycle through the binary: kill -9 in the middle of
// a restore or a save leaves the old configuration or the new one, never a
// mix, and an answered one is never lost; secrets are in clear nowhere
// (files, saved files, logs, config log) yet survive a save and a restore;
// FlexSwitch's SDK and TORC request shapes work.

package test

import (
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync/atomic"
	"testing"
	"time"
)

// configFile is a saved configuration in FlexSwitch's shape (format 1):
// a hostname and n NtpServers whose addresses start with prefix.
func writeConfigFile(t *testing.T, path, hostname, prefix string, n int) {
	t.Helper()
	ntp := make([]map[string]any, n)
	for i := range ntp {
		ntp[i] = map[string]any{"IpAddr": fmt.Sprintf("%s.%d.%d", prefix, i>>8, i&255), "MinPoll": 4 + i%3}
	}
	doc := map[string]any{"ConfigData": map[string]any{
		"SystemParam": []any{map[string]any{"Vrf": "default", "Hostname": hostname}},
		"NtpServer":   ntp,
	}}
	data, err := json.MarshalIndent(doc, "", "    ")
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, data, 0o600); err != nil {
		t.Fatal(err)
	}
}

// configuration is what the test compares: the hostname and the NtpServer
// addresses (with their MinPoll).
type configuration struct {
	hostname string
	ntp      map[string]float64
}

func (s *server) configuration(t *testing.T) configuration {
	t.Helper()
	c := configuration{hostname: s.expect(t, 200, "GET", "/config/SystemParam", "").object()["Hostname"].(string), ntp: map[string]float64{}}
	for _, e := range s.listAll(t, "/config/NtpServers", 1024) {
		o := e["Object"].(map[string]any)
		c.ntp[o["IpAddr"].(string)] = o["MinPoll"].(float64)
	}
	return c
}

// is tells whether c is exactly the file's configuration.
func (c configuration) is(hostname, prefix string, n int) bool {
	if c.hostname != hostname || len(c.ntp) != n {
		return false
	}
	for i := range n {
		if c.ntp[fmt.Sprintf("%s.%d.%d", prefix, i>>8, i&255)] != float64(4+i%3) {
			return false
		}
	}
	return true
}

func TestKill9DuringRestoreAndSave(t *testing.T) {
	seed := uint64(time.Now().UnixNano())
	rng := rand.New(rand.NewPCG(seed, 0x11fe))
	t.Logf("seed %d", seed)
	dir := t.TempDir()
	files := t.TempDir()
	type config struct {
		file, hostname, prefix string
		n                      int
	}
	small := config{filepath.Join(files, "small.json"), "alpha", "192.0", 3}
	big := config{filepath.Join(files, "big.json"), "beta", "10.9", 10000}
	writeConfigFile(t, small.file, small.hostname, small.prefix, small.n)
	writeConfigFile(t, big.file, big.hostname, big.prefix, big.n)

	s := startServer(t, dir, "--ports", "4")
	restore := func(s *server, c config) (reply, error) {
		return s.call("POST", "/action/ResetConfigToFile", jsonOf(map[string]string{"SrcFileURI": "///" + strings.TrimPrefix(c.file, "/")}))
	}
	// Two restores, not killed, measure how long one takes each way: the
	// kills are spread over a little more than that, so that some land
	// before the answer and some after.
	var window time.Duration
	for _, c := range []config{big, small} {
		begin := time.Now()
		if r, err := restore(s, c); err != nil || r.code != 200 {
			t.Fatalf("restore: %v %v", r, err)
		}
		window = max(window, time.Since(begin)*4/3)
		t.Logf("a restore of %s took %v", c.file, time.Since(begin))
	}
	current := small

	// Restores: small -> big -> small ..., each killed at a random moment.
	var answeredBefore, killedBefore, applied int
	for cycle := range 6 {
		target := big
		if current == big {
			target = small
		}
		var acked atomic.Bool
		done := make(chan struct{})
		go func() {
			defer close(done)
			if r, err := restore(s, target); err == nil && r.code == 200 {
				acked.Store(true)
			} else if err == nil {
				t.Errorf("cycle %d: restore: %s", cycle, r)
			}
		}()
		time.Sleep(time.Duration(rng.Int64N(int64(window) + 1)))
		s.kill9()
		<-done
		s = startServer(t, dir, "--ports", "4")
		got := s.configuration(t)
		switch {
		case got.is(target.hostname, target.prefix, target.n):
			current = target
			applied++
		case acked.Load():
			t.Fatalf("cycle %d: the restore of %s was answered 200 but is not the configuration after kill -9 (hostname %q, %d NtpServers)", cycle, target.file, got.hostname, len(got.ntp))
		case !got.is(current.hostname, current.prefix, current.n):
			t.Fatalf("cycle %d: after kill -9 during a restore the configuration is neither the old one nor the file's (hostname %q, %d NtpServers)", cycle, got.hostname, len(got.ntp))
		}
		if acked.Load() {
			answeredBefore++
		} else {
			killedBefore++
		}
	}
	t.Logf("restores: %d answered before the kill, %d killed before the answer; %d applied", answeredBefore, killedBefore, applied)

	// Saves: the saved file is the old save or the new one, whole.
	if current != big {
		if r, err := restore(s, big); err != nil || r.code != 200 {
			t.Fatalf("restore: %v %v", r, err)
		}
	}
	saved := filepath.Join(dir, "startup-config")
	first := s.expect(t, 200, "POST", "/action/SaveConfig", "{}")
	savedRev := first.body["Revision"].(float64)
	begin := time.Now()
	s.expect(t, 200, "POST", "/action/SaveConfig", "{}")
	window = time.Since(begin) * 4 / 3
	t.Logf("a save of %d objects took %v", big.n, window)
	for cycle := range 6 {
		s.expect(t, 200, "PATCH", "/config/SystemParam", fmt.Sprintf(`{"Hostname":"save-%d"}`, cycle))
		running := s.expect(t, 200, "GET", "/state/SystemParam", "").object()["RunningRevision"].(float64)
		var acked atomic.Bool
		done := make(chan struct{})
		go func() {
			defer close(done)
			if r, err := s.call("POST", "/action/SaveConfig", "{}"); err == nil && r.code == 200 {
				acked.Store(true)
			}
		}()
		time.Sleep(time.Duration(rng.Int64N(int64(window) + 1)))
		s.kill9()
		<-done
		data, err := os.ReadFile(saved)
		if err != nil {
			t.Fatalf("cycle %d: %v", cycle, err)
		}
		var doc struct {
			Format     int
			Revision   float64
			ConfigData map[string][]map[string]any
		}
		if err := json.Unmarshal(data, &doc); err != nil {
			t.Fatalf("cycle %d: the saved file after kill -9 is not whole: %v (%d bytes)", cycle, err, len(data))
		}
		switch {
		case doc.Revision == running:
			savedRev = running
		case acked.Load():
			t.Fatalf("cycle %d: SaveConfig was answered 200 but the file holds revision %v, not %v", cycle, doc.Revision, running)
		case doc.Revision != savedRev:
			t.Fatalf("cycle %d: the file holds revision %v: neither the last save (%v) nor this one (%v)", cycle, doc.Revision, savedRev, running)
		}
		if len(doc.ConfigData["NtpServer"]) != big.n {
			t.Fatalf("cycle %d: the saved file holds %d NtpServers, want %d", cycle, len(doc.ConfigData["NtpServer"]), big.n)
		}
		s = startServer(t, dir, "--ports", "4")
		// The server knows what was saved: an answered save shows no
		// unsaved changes.
		st := s.expect(t, 200, "GET", "/state/SystemParam", "").object()
		if acked.Load() && (st["SavedRevision"].(float64) != running || st["UnsavedChanges"] != false) {
			t.Fatalf("cycle %d: after an answered save and kill -9: %v", cycle, st)
		}
		if r := s.do(t, "POST", "/action/ResetConfigToFile?dry_run=true", "{}"); r.code != 200 {
			t.Fatalf("cycle %d: the saved file does not load: %s", cycle, r)
		}
	}
}

// TestLifecycleSecretsNeverInClear: the secrets of objects and of actions
// appear in no file of the data directory, no saved file, no log line and
// no config log entry; yet a plain save keeps them (sealed with the
// switch's key), a restore brings them back, and an encrypted save carries
// them to `swmgr config decrypt`.
func TestLifecycleSecretsNeverInClear(t *testing.T) {
	const (
		bgpSecret   = "bgp-md5-Secret-71"
		archivePw   = "archive-Password-72"
		archivePass = "archive-Passphrase-73"
		savePass    = "save-Passphrase-74"
		wrongPass   = "wrong-Passphrase-75"
	)
	secrets := []string{bgpSecret, archivePw, archivePass, savePass, wrongPass}
	s := startServer(t, "", "--ports", "4", "--log-level", "debug")
	out := t.TempDir()
	// An archive server nobody listens on: its failures are logged.
	closed := freeAddr(t)
	port := closed[strings.LastIndex(closed, ":")+1:]
	s.expect(t, 201, "POST", "/config/BGPv4Neighbor", fmt.Sprintf(`{"NeighborAddress":"192.0.2.2","PeerAS":"65002","AuthPassword":%q}`, bgpSecret))
	s.expect(t, 201, "POST", "/config/ConfigArchiveServer", fmt.Sprintf(`{"IpAddr":"127.0.0.1","Port":%s,"Username":"backup","Password":%q,"Nonce":"n1","Passphrase":%q,"OnChange":true,"RetryCount":0,"Timeout":2}`, port, archivePw, archivePass))
	plain := filepath.Join(out, "plain.cfg")
	enc := filepath.Join(out, "enc.cfg")
	s.expect(t, 200, "POST", "/action/SaveConfig", fmt.Sprintf(`{"DstFileURI":"///%s"}`, strings.TrimPrefix(plain, "/")))
	s.expect(t, 200, "POST", "/action/SaveConfig", "{}")
	s.expect(t, 200, "POST", "/action/ResetConfig", "")
	if r := s.expect(t, 200, "GET", "/config/BGPv4Neighbors", ""); r.body["ObjCount"] != 0.0 {
		t.Fatalf("after a reset: %s", r)
	}
	s.expect(t, 400, "POST", "/action/ResetConfigToFile", fmt.Sprintf(`{"SrcFileURI":"///%s","Nonce":"x","Passphrase":%q}`, strings.TrimPrefix(plain, "/"), wrongPass))
	s.expect(t, 200, "POST", "/action/ResetConfigToFile", fmt.Sprintf(`{"SrcFileURI":"///%s"}`, strings.TrimPrefix(plain, "/")))
	s.expect(t, 200, "POST", "/action/SaveConfig", fmt.Sprintf(`{"DstFileURI":"///%s","Nonce":"n2","Passphrase":%q}`, strings.TrimPrefix(enc, "/"), savePass))
	s.expect(t, 400, "POST", "/action/ResetConfigToFile", fmt.Sprintf(`{"SrcFileURI":"///%s","Nonce":"n2","Passphrase":%q}`, strings.TrimPrefix(enc, "/"), wrongPass))
	// Let the archive server fail at least once, so its error is logged.
	deadline := time.Now().Add(20 * time.Second)
	for {
		st := s.expect(t, 200, "GET", "/state/ConfigArchiveServer", `{"IpAddr":"127.0.0.1"}`).object()
		if st["Failures"].(float64) > 0 {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("the archive server never failed: %v", st)
		}
		time.Sleep(50 * time.Millisecond)
	}

	// The restored secrets are the saved ones: decrypt the encrypted save.
	cmd := exec.Command(swmgrBin, "config", "decrypt", "--in", enc)
	cmd.Env = append(os.Environ(), "SWMGR_CONFIG_NONCE=n2", "SWMGR_CONFIG_PASSPHRASE="+savePass)
	plaintext, err := cmd.Output()
	if err != nil {
		t.Fatalf("swmgr config decrypt: %v", err)
	}
	for _, v := range []string{bgpSecret, archivePw, archivePass} {
		if !strings.Contains(string(plaintext), v) {
			t.Errorf("the decrypted save lacks the secret %q: the plain save or the restore lost it", v)
		}
	}
	if strings.Contains(string(plaintext), savePass) {
		t.Error("the decrypted save holds its own passphrase")
	}

	logs := s.listAll(t, "/state/configlogs", 1024)
	s.stop(t)
	var where []string
	check := func(what, text string) {
		for _, v := range secrets {
			if strings.Contains(text, v) {
				where = append(where, fmt.Sprintf("%s holds %q", what, v))
			}
		}
	}
	check("the config log", jsonOf(logs))
	check("swmgr's log", s.logs.String())
	for _, root := range []string{s.dir, out} {
		filepath.WalkDir(root, func(p string, d os.DirEntry, err error) error {
			if err != nil || d.IsDir() {
				return err
			}
			b, err := os.ReadFile(p)
			if err != nil {
				return err
			}
			check(p, string(b))
			return nil
		})
	}
	for _, w := range where {
		t.Error(w)
	}
	if !strings.Contains(s.logs.String(), "configuration archive failed") {
		t.Error("the archive failure was not logged: the log check saw nothing to check")
	}
}

// TestFlexSwitchLifecycleShapes: what FlexSwitch's SDK and the TORC client
// send. executeSaveConfig(FileName='startup-config') POSTs {"FileName":…};
// executeResetConfig() POSTs {}; TORC POSTs /action/ResetConfig with no
// body; the answers are 200 with "Result": "Success".
func TestFlexSwitchLifecycleShapes(t *testing.T) {
	s := startServer(t, "", "--ports", "4")
	s.expect(t, 200, "PATCH", "/config/SystemParam", `{"Hostname":"flex1"}`)
	for _, tc := range []struct{ path, body string }{
		{"/action/SaveConfig", `{"FileName":"startup-config"}`},
		{"/action/saveconfig", `{"FileName":"flex-backup"}`},
		{"/action/ResetConfig", `{}`},
		{"/action/ResetConfig", ``},
		{"/action/ResetConfigToFile", `{"SrcFileURI":"///` + strings.TrimPrefix(s.dir, "/") + `/flex-backup"}`},
	} {
		r := s.expect(t, 200, "POST", tc.path, tc.body, "Content-Type", "application/json")
		if r.str("Result") != "Success" {
			t.Errorf("%s %s: %s", tc.path, tc.body, r)
		}
	}
	if h := s.expect(t, 200, "GET", "/config/SystemParam", "").object()["Hostname"]; h != "flex1" {
		t.Errorf("after a reset and a restore of the 1.x save, Hostname %v, want flex1", h)
	}
	if _, err := os.Stat(filepath.Join(s.dir, "startup-config")); err != nil {
		t.Errorf("executeSaveConfig(FileName='startup-config'): %v", err)
	}
}

// A start that fails to load its startup configuration commits nothing of
// it, so the data directory is still new: once the file (or its Nonce and
// Passphrase) is fixed, the next start loads it instead of coming up with
// the factory configuration without a word.
func TestStartupConfigAfterAFailedStart(t *testing.T) {
	dir := t.TempDir()
	cfg := filepath.Join(t.TempDir(), "cfg")
	os.WriteFile(cfg, []byte(`{"ConfigData":{"NtpServer":[{"IpAddr":"192.0.2.50","MinPoll":99}]}}`), 0o600)
	if s, err := tryStart(t, dir, "--ports", "4", "--startup-config", "file://"+cfg); err == nil {
		s.stop(t)
		t.Fatal("a startup configuration with MinPoll 99 was loaded")
	}
	os.WriteFile(cfg, []byte(`{"ConfigData":{"NtpServer":[{"IpAddr":"192.0.2.50","MinPoll":7}]}}`), 0o600)
	s := startServer(t, dir, "--ports", "4", "--startup-config", "file://"+cfg)
	got := s.expect(t, 200, "GET", "/config/NtpServer?IpAddr=192.0.2.50", "").object()
	if got["MinPoll"] != float64(7) {
		t.Errorf("NtpServer after the second start: %v", got)
	}
	s.stop(t)
	// Used now: a later start never applies a startup file again.
	os.WriteFile(cfg, []byte(`{"ConfigData":{"NtpServer":[{"IpAddr":"192.0.2.51"}]}}`), 0o600)
	s = startServer(t, dir, "--ports", "4", "--startup-config", "file://"+cfg)
	s.expect(t, 404, "GET", "/config/NtpServer?IpAddr=192.0.2.51", "")
}
