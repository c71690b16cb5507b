package lifecycle

import (
	"encoding/json"
	"fmt"
	"net/http"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"syscall"
	"testing"

	"github.com/swmgr/swmgr/internal/apierr"
	"github.com/swmgr/swmgr/internal/bind"
	"github.com/swmgr/swmgr/internal/model"
)

func dirNames(dir string) []string {
	entries, _ := os.ReadDir(dir)
	var names []string
	for _, e := range entries {
		if !strings.HasSuffix(e.Name(), ".tmp") { // a state file being replaced
			names = append(names, e.Name())
		}
	}
	sort.Strings(names)
	return names
}

// TestBadInputs sends every bad field of the three actions and of
// ConfigArchiveServer: each is a clear 4xx JSON error and changes nothing
// (no revision, no file written).
func TestBadInputs(t *testing.T) {
	s := newSwitch(t, harnessOptions{})
	seedAll(s)
	tmp := t.TempDir()
	plainFile := filepath.Join(tmp, "plain")
	s.must("POST", "/action/SaveConfig", `{"DstFileURI":"file://`+plainFile+`"}`, nil)
	notConfig := filepath.Join(tmp, "notes.txt")
	os.WriteFile(notConfig, []byte("operator notes\n"), 0o600)
	os.WriteFile(filepath.Join(tmp, "broken"), []byte(`{"ConfigData":{"NtpServer":[{"IpAddr":"192.0.2.1","MinPoll":99}]}}`), 0o600)
	os.WriteFile(filepath.Join(tmp, "dangling"), []byte(`{"ConfigData":{"IPv4Intf":[{"IntfRef":"fpPort1","IpAddr":"10.9.0.1/24","Vrf":"blue"}]}}`), 0o600)
	os.WriteFile(filepath.Join(tmp, "bigger-switch"), []byte(`{"ConfigData":{"Port":[{"IntfRef":"fpPort99","AdminState":"UP"}]}}`), 0o600)
	os.WriteFile(filepath.Join(tmp, "unknown-kind"), []byte(`{"ConfigData":{"Widget":[{"WidgetId":10}]}}`), 0o600)
	os.WriteFile(filepath.Join(tmp, "twice"), []byte(`{"ConfigData":{"NtpServer":[{"IpAddr":"192.0.2.1","MinPoll":4,"MinPoll":6}]}}`), 0o600)
	os.WriteFile(filepath.Join(tmp, "clear"), []byte(`{"Format":2,"Secrets":"clear","ConfigData":{"ConfigArchiveServer":[{"IpAddr":"192.0.2.9","Username":"u","Password":"pw"}]}}`), 0o600)
	if err := syscall.Mkfifo(filepath.Join(tmp, "fifo"), 0o600); err != nil {
		t.Fatal(err)
	}
	// A ConfigArchiveServer for the unreachable-host rows: nothing listens on port 1.
	s.must("POST", "/config/ConfigArchiveServer", `{"IpAddr":"127.0.0.2","Port":1,"Username":"x","Password":"y","RetryCount":0,"Timeout":2}`, nil)

	tests := []struct {
		name, path, body string
		status           int
		field, want      string
	}{
		// SaveConfig
		{"save: ftp scheme", "/action/SaveConfig", `{"DstFileURI":"ftp://host/x"}`, 400, "DstFileURI", "file URI"},
		{"save: http scheme", "/action/SaveConfig", `{"DstFileURI":"http://127.0.0.1/x"}`, 400, "DstFileURI", "file URI"},
		{"save: relative path", "/action/SaveConfig", `{"DstFileURI":"startup-config"}`, 400, "DstFileURI", "file URI"},
		{"save: ..", "/action/SaveConfig", `{"DstFileURI":"///tmp/../etc/x"}`, 400, "DstFileURI", "file URI"},
		{"save: . segment", "/action/SaveConfig", `{"DstFileURI":"///tmp/./x"}`, 400, "DstFileURI", "."},
		{"save: a directory", "/action/SaveConfig", `{"DstFileURI":"///tmp/"}`, 400, "DstFileURI", "name a file"},
		{"save: password in the URI", "/action/SaveConfig", `{"DstFileURI":"sftp://u:pw@127.0.0.1/x"}`, 400, "DstFileURI", "password"},
		{"save: sftp host without a server object", "/action/SaveConfig", `{"DstFileURI":"sftp://127.0.0.9/x"}`, 400, "DstFileURI", "no ConfigArchiveServer"},
		{"save: unreachable host", "/action/SaveConfig", `{"DstFileURI":"sftp://127.0.0.2/tmp/x","RetryCount":0,"Timeout":2}`, 400, "DstFileURI", "connect"},
		{"save: Nonce without Passphrase", "/action/SaveConfig", `{"Nonce":"n"}`, 400, "Passphrase", "together"},
		{"save: Passphrase without Nonce", "/action/SaveConfig", `{"Passphrase":"p"}`, 400, "Passphrase", "together"},
		{"save: Timeout 0", "/action/SaveConfig", `{"Timeout":0}`, 400, "Timeout", "Timeout"},
		{"save: RetryCount 11", "/action/SaveConfig", `{"RetryCount":11}`, 400, "RetryCount", "RetryCount"},
		{"save: Timestamp", "/action/SaveConfig", `{"Timestamp":"sometimes"}`, 400, "Timestamp", "Timestamp"},
		{"save: FileName with a slash", "/action/SaveConfig", `{"FileName":"../x"}`, 400, "FileName", "plain file name"},
		{"save: FileName and DstFileURI", "/action/SaveConfig", `{"FileName":"x","DstFileURI":"///tmp/x"}`, 400, "FileName", "not both"},
		{"save: unknown field", "/action/SaveConfig", `{"DstFile":"///tmp/x"}`, 400, "", "DstFile"},
		{"save: wrong type", "/action/SaveConfig", `{"RetryCount":"3"}`, 400, "RetryCount", ""},
		{"save: over a file that is not a configuration", "/action/SaveConfig", `{"DstFileURI":"file://` + notConfig + `"}`, 409, "DstFileURI", "not a saved swmgr configuration"},
		{"save: over swmgr's own record in the data directory", "/action/SaveConfig", `{"DstFileURI":"file://` + filepath.Join(s.dir, savedFile) + `"}`, 400, "DstFileURI", "one of swmgr's own files"},
		{"save: 1.x FileName naming swmgr's own record", "/action/SaveConfig", `{"FileName":"` + savedFile + `"}`, 400, "FileName", "one of swmgr's own files"},
		{"save: 1.x FileName with a newline", "/action/SaveConfig", `{"FileName":"a\nb"}`, 400, "FileName", "control characters"},
		{"save: into /proc", "/action/SaveConfig", `{"DstFileURI":"///proc/sys/kernel/hostname"}`, 409, "DstFileURI", "not a saved"},
		// ResetConfigToFile
		{"restore: ftp scheme", "/action/ResetConfigToFile", `{"SrcFileURI":"ftp://host/x"}`, 400, "SrcFileURI", "file URI"},
		{"restore: relative path", "/action/ResetConfigToFile", `{"SrcFileURI":"x"}`, 400, "SrcFileURI", "file URI"},
		{"restore: ..", "/action/ResetConfigToFile", `{"SrcFileURI":"///tmp/../x"}`, 400, "SrcFileURI", "file URI"},
		{"restore: missing file", "/action/ResetConfigToFile", `{"SrcFileURI":"///nonexistent/x"}`, 400, "SrcFileURI", "cannot read"},
		{"restore: a directory", "/action/ResetConfigToFile", `{"SrcFileURI":"file://` + tmp + `/sub"}`, 400, "SrcFileURI", "cannot read"},
		{"restore: not a configuration", "/action/ResetConfigToFile", `{"SrcFileURI":"file://` + notConfig + `"}`, 400, "SrcFileURI", "not a configuration document"},
		{"restore: an invalid object", "/action/ResetConfigToFile", `{"SrcFileURI":"file://` + tmp + `/broken"}`, 400, "SrcFileURI", "MinPoll: 99 is out of range"},
		{"restore: a dangling reference", "/action/ResetConfigToFile", `{"SrcFileURI":"file://` + tmp + `/dangling"}`, 400, "", "blue"},
		{"restore: a port this switch lacks", "/action/ResetConfigToFile", `{"SrcFileURI":"file://` + tmp + `/bigger-switch"}`, 400, "SrcFileURI", "does not fit this switch"},
		{"restore: a FIFO (answered at once)", "/action/ResetConfigToFile", `{"SrcFileURI":"file://` + tmp + `/fifo"}`, 400, "SrcFileURI", "not a regular file (a FIFO)"},
		{"restore: a field given twice", "/action/ResetConfigToFile", `{"SrcFileURI":"file://` + tmp + `/twice"}`, 400, "SrcFileURI", "twice"},
		{"restore: secrets in clear in a plain file", "/action/ResetConfigToFile", `{"SrcFileURI":"file://` + tmp + `/clear"}`, 400, "SrcFileURI", `"Secrets":"clear" is refused`},
		{"restore: an unknown kind", "/action/ResetConfigToFile", `{"SrcFileURI":"file://` + tmp + `/unknown-kind"}`, 400, "SrcFileURI", "Widget"},
		{"restore: unreachable host", "/action/ResetConfigToFile", `{"SrcFileURI":"sftp://127.0.0.2/x","RetryCount":0,"Timeout":2}`, 400, "SrcFileURI", "connect"},
		{"restore: Nonce without Passphrase", "/action/ResetConfigToFile", `{"Nonce":"n"}`, 400, "Passphrase", "together"},
		{"restore: a Passphrase for a plain file", "/action/ResetConfigToFile", `{"SrcFileURI":"file://` + plainFile + `","Nonce":"n","Passphrase":"p"}`, 400, "Passphrase", "not encrypted"},
		{"restore: Timeout 4000", "/action/ResetConfigToFile", `{"Timeout":4000}`, 400, "Timeout", ""},
		{"restore: RetryCount -1", "/action/ResetConfigToFile", `{"RetryCount":-1}`, 400, "RetryCount", ""},
		{"restore: unknown field", "/action/ResetConfigToFile", `{"DstFileURI":"///x"}`, 400, "", "DstFileURI"},
		// ResetConfig
		{"reset: any field", "/action/ResetConfig", `{"Force":true}`, 400, "", "Force"},
		// ConfigArchiveServer
		{"server: Port 0", "/config/ConfigArchiveServer", `{"IpAddr":"192.0.2.70","Port":0}`, 400, "Port", ""},
		{"server: Port 70000", "/config/ConfigArchiveServer", `{"IpAddr":"192.0.2.70","Port":70000}`, 400, "Port", ""},
		{"server: IpAddr", "/config/ConfigArchiveServer", `{"IpAddr":"not a host!"}`, 400, "IpAddr", ""},
		{"server: Interval -1", "/config/ConfigArchiveServer", `{"IpAddr":"192.0.2.70","Interval":-1}`, 400, "Interval", ""},
		{"server: Timeout 0", "/config/ConfigArchiveServer", `{"IpAddr":"192.0.2.70","Timeout":0}`, 400, "Timeout", ""},
		// DstFile: the rules of an sftp:// URI's path (model.CheckFilePath).
		{"server: DstFile /", "/config/ConfigArchiveServer", `{"IpAddr":"192.0.2.70","DstFile":"/"}`, 400, "DstFile", "name a file"},
		{"server: DstFile a directory", "/config/ConfigArchiveServer", `{"IpAddr":"192.0.2.70","DstFile":"/backups/"}`, 400, "DstFile", "name a file"},
		{"server: DstFile empty segment", "/config/ConfigArchiveServer", `{"IpAddr":"192.0.2.70","DstFile":"/backups//x"}`, 400, "DstFile", "name a file"},
		{"server: DstFile .", "/config/ConfigArchiveServer", `{"IpAddr":"192.0.2.70","DstFile":"/backups/./x"}`, 400, "DstFile", "segment"},
		{"server: DstFile newline", "/config/ConfigArchiveServer", `{"IpAddr":"192.0.2.70","DstFile":"/backups/x\ny"}`, 400, "DstFile", "control"},
		{"server: DstFile ?", "/config/ConfigArchiveServer", `{"IpAddr":"192.0.2.70","DstFile":"/backups/x?y"}`, 400, "DstFile", "? or #"},
		{"server: DstFile #", "/config/ConfigArchiveServer", `{"IpAddr":"192.0.2.70","DstFile":"/backups/x#y"}`, 400, "DstFile", "? or #"},
		{"server: DstFile relative", "/config/ConfigArchiveServer", `{"IpAddr":"192.0.2.70","DstFile":"backups/x"}`, 400, "DstFile", "absolute"},
		{"server: RetryCount 11", "/config/ConfigArchiveServer", `{"IpAddr":"192.0.2.70","RetryCount":11}`, 400, "RetryCount", ""},
		{"server: Timestamp", "/config/ConfigArchiveServer", `{"IpAddr":"192.0.2.70","Timestamp":"never"}`, 400, "Timestamp", ""},
		{"server: relative DstFile", "/config/ConfigArchiveServer", `{"IpAddr":"192.0.2.70","DstFile":"cfg"}`, 400, "DstFile", ""},
		{"server: DstFile with ..", "/config/ConfigArchiveServer", `{"IpAddr":"192.0.2.70","DstFile":"/srv/../etc/x"}`, 400, "DstFile", ""},
		{"server: Nonce without Passphrase", "/config/ConfigArchiveServer", `{"IpAddr":"192.0.2.70","Nonce":"n"}`, 400, "Passphrase", "together"},
		{"server: duplicate", "/config/ConfigArchiveServer", `{"IpAddr":"192.0.2.99"}`, 409, "", "already exists"},
	}
	rev := s.revision()
	files := dirNames(s.dir)
	record, _ := os.ReadFile(filepath.Join(s.dir, savedFile))
	tmpFiles := dirNames(tmp)
	for _, tc := range tests {
		code, body := s.do("POST", tc.path, tc.body)
		var e struct {
			Result string
			Error  struct {
				Status  int
				Code    string
				Message string
				Field   string
			}
		}
		if err := json.Unmarshal(body, &e); err != nil {
			t.Errorf("%s: body is not JSON: %s", tc.name, body)
			continue
		}
		if code != tc.status || e.Error.Status != code || !strings.HasPrefix(e.Result, "Error: ") {
			t.Errorf("%s: %d %s, want %d", tc.name, code, body, tc.status)
			continue
		}
		if tc.field != "" && e.Error.Field != tc.field {
			t.Errorf("%s: Field %q, want %q (%s)", tc.name, e.Error.Field, tc.field, e.Error.Message)
		}
		if !strings.Contains(e.Error.Message, tc.want) {
			t.Errorf("%s: message %q lacks %q", tc.name, e.Error.Message, tc.want)
		}
		if s.revision() != rev {
			t.Fatalf("%s changed the configuration (revision %d -> %d)", tc.name, rev, s.revision())
		}
	}
	if got := dirNames(s.dir); strings.Join(got, ",") != strings.Join(files, ",") {
		t.Errorf("the data directory changed: %v -> %v", files, got)
	}
	if got := dirNames(tmp); strings.Join(got, ",") != strings.Join(tmpFiles, ",") {
		t.Errorf("files appeared: %v -> %v", tmpFiles, got)
	}
	if b, _ := os.ReadFile(filepath.Join(s.dir, savedFile)); string(b) != string(record) || len(record) == 0 {
		t.Errorf("%s changed: %q -> %q", savedFile, record, b)
	}
	if b, _ := os.ReadFile(notConfig); string(b) != "operator notes\n" {
		t.Error("a file that is not a configuration was overwritten")
	}
}

// TestOperatorSavesOnlyIntoTheDataDirectory: the service writes as root,
// so an operator may not pick any path on the switch.
func TestOperatorSavesOnlyIntoTheDataDirectory(t *testing.T) {
	s := newSwitch(t, harnessOptions{})
	op := bind.Caller{Name: "bob", Role: model.RoleOperator}
	outside := filepath.Join(t.TempDir(), "cfg")
	err := s.save(op, model.Object{"DstFileURI": "file://" + outside, "Timestamp": "disabled", "RetryCount": int64(0), "Timeout": int64(5)})
	if ae := apierr.From(err); ae.Status != 403 {
		t.Fatalf("operator outside the data directory: %v", err)
	}
	if _, err := os.Stat(outside); err == nil {
		t.Fatal("the file was written")
	}
	// An absolute FileName (FlexSwitch's config monitor) follows the same rule.
	err = s.save(op, model.Object{"FileName": outside, "Timestamp": "disabled", "RetryCount": int64(0), "Timeout": int64(5)})
	if ae := apierr.From(err); ae.Status != 403 || ae.Field != "FileName" {
		t.Fatalf("operator, absolute FileName outside the data directory: %v", err)
	}
	for _, fields := range []model.Object{
		{"DstFileURI": "file://" + filepath.Join(s.dir, "op-copy")},
		{"FileName": "op-copy-2"},
		{"FileName": filepath.Join(s.dir, "op-copy-3")},
		{},
	} {
		fields["Timestamp"], fields["RetryCount"], fields["Timeout"] = "disabled", int64(0), int64(5)
		if err := s.save(op, fields); err != nil {
			t.Fatalf("operator inside the data directory %v: %v", fields, err)
		}
	}
	admin := bind.Caller{Name: "root", Role: model.RoleAdmin}
	if err := s.save(admin, model.Object{"DstFileURI": "file://" + outside, "Timestamp": "disabled", "RetryCount": int64(0), "Timeout": int64(5)}); err != nil {
		t.Fatalf("admin outside the data directory: %v", err)
	}
	if err := s.save(admin, model.Object{"FileName": outside + "-2", "Timestamp": "disabled", "RetryCount": int64(0), "Timeout": int64(5)}); err != nil {
		t.Fatalf("admin, absolute FileName outside the data directory: %v", err)
	}
}

// TestSaveDryRunChecksTheDestination: a dry run of SaveConfig refuses what
// the save itself would refuse, with the same status, so that the CLI's
// apply (which dry-runs its queued actions before committing) does not
// commit the configuration and then fail to save it.
func TestSaveDryRunChecksTheDestination(t *testing.T) {
	s := newSwitch(t, harnessOptions{})
	tmp := t.TempDir()
	notConfig := filepath.Join(tmp, "notes.txt")
	os.WriteFile(notConfig, []byte("operator notes\n"), 0o600)
	os.Mkdir(filepath.Join(tmp, "sub"), 0o700)
	for _, tc := range []struct {
		name, uri string
		status    int
	}{
		{"a directory that does not exist", "file://" + tmp + "/nodir/cfg", 400},
		{"a parent that is a file", "file://" + notConfig + "/cfg", 400},
		{"a directory", "file://" + tmp + "/sub", 409},
		{"a file that is not a configuration", "file://" + notConfig, 409},
		{"into /proc", "///proc/sys/kernel/hostname", 409},
	} {
		body := `{"DstFileURI":"` + tc.uri + `"}`
		dry, dryBody := s.do("POST", "/action/SaveConfig?dry_run=true", body)
		real, realBody := s.do("POST", "/action/SaveConfig", body)
		if dry != tc.status || real != tc.status {
			t.Errorf("%s: dry run %d %s, save %d %s; want %d for both", tc.name, dry, dryBody, real, realBody, tc.status)
		}
	}
	if b, _ := os.ReadFile(notConfig); string(b) != "operator notes\n" {
		t.Error("a file that is not a configuration was overwritten")
	}
}

// TestArchiveEncryptionCannotBeClearedByPatch: a stored Passphrase is kept
// by a PATCH that sends "" (reads return "" for it), so clearing Nonce and
// Passphrase is refused; the error must say how to stop encrypting rather
// than ask for "both or neither", which the client just sent.
func TestArchiveEncryptionCannotBeClearedByPatch(t *testing.T) {
	s := newSwitch(t, harnessOptions{})
	s.must("POST", "/config/ConfigArchiveServer", `{"IpAddr":"192.0.2.71","Nonce":"n1","Passphrase":"p1"}`, nil)
	rev := s.revision()
	for _, body := range []string{
		`{"IpAddr":"192.0.2.71","Nonce":"","Passphrase":""}`,
		`{"IpAddr":"192.0.2.71","Nonce":""}`,
	} {
		code, out := s.do("PATCH", "/config/ConfigArchiveServer", body)
		if code != 400 || !strings.Contains(string(out), "delete and re-create") {
			t.Errorf("%s: %d %s; want 400 saying how to stop encrypting", body, code, out)
		}
	}
	if s.revision() != rev {
		t.Error("the refused PATCH changed the configuration")
	}
}

// TestSaveRefusedWhileACommitAwaitsConfirmation: SaveConfig (and its dry
// run) is a 409 while a confirmed commit is not confirmed yet, and writes
// nothing: the saved file is what the switch starts from, and must not
// bring back a change that rolls back for want of a confirmation. Once
// confirmed, the same save works.
func TestSaveRefusedWhileACommitAwaitsConfirmation(t *testing.T) {
	s := newSwitch(t, harnessOptions{})
	var cand struct{ CandidateId string }
	s.must("POST", "/candidates", `{}`, &cand)
	s.must("POST", "/candidates/"+cand.CandidateId+"/config/NtpServer", `{"IpAddr":"192.0.2.77"}`, nil)
	var commit struct{ Revision uint64 }
	s.must("POST", "/candidates/"+cand.CandidateId+"/commit", `{"Confirm":300}`, &commit)
	file := filepath.Join(s.dir, "while-unconfirmed")
	for _, path := range []string{"/action/SaveConfig?dry_run=true", "/action/SaveConfig"} {
		code, body := s.do("POST", path, `{"FileName":"while-unconfirmed"}`)
		if code != http.StatusConflict || !strings.Contains(string(body), "awaits confirmation") || !strings.Contains(string(body), fmt.Sprintf("revisions/%d/confirm", commit.Revision)) {
			t.Errorf("POST %s while revision %d awaits confirmation: %d %s; want 409 saying to confirm it first", path, commit.Revision, code, body)
		}
	}
	if _, err := os.Stat(file); !os.IsNotExist(err) {
		t.Fatalf("a refused save left %s: %v", file, err)
	}
	s.must("POST", fmt.Sprintf("/revisions/%d/confirm", commit.Revision), `{}`, nil)
	var saved SaveResult
	s.must("POST", "/action/SaveConfig", `{"FileName":"while-unconfirmed"}`, &saved)
	if saved.Revision != commit.Revision {
		t.Errorf("saved revision %d, want the confirmed %d", saved.Revision, commit.Revision)
	}
	if b, err := os.ReadFile(file); err != nil || !strings.Contains(string(b), "192.0.2.77") {
		t.Errorf("the save after the confirmation: %v; want the confirmed NtpServer in it", err)
	}
}
