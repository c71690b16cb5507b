package test

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/swmgr/swmgr/internal/datadir"
)

// An operator's SaveConfig (and an admin's) never names one of swmgr's own
// files in the data directory: the pinned host keys written over by a
// saved configuration would stop the next start. Nor does a restore read
// one. Every file a running swmgr leaves in its data directory is one of
// the declared ones (datadir.Files) or a saved configuration.
func TestSavesNeverNameOwnFiles(t *testing.T) {
	s := startServer(t, "")
	s.expect(t, 201, "POST", "/config/User", `{"Name":"opsave","Group":"operator","Password":"save-pass-123"}`)
	op := basic("opsave", "save-pass-123")
	for _, f := range datadir.Files() {
		name := f.Name
		if name == datadir.Accounts {
			name += "/passwd"
		}
		for _, who := range []struct {
			name string
			hdr  []string
		}{{"an operator", op}, {"an admin", nil}} {
			if !strings.Contains(name, "/") {
				r := s.expect(t, 400, "POST", "/action/SaveConfig", fmt.Sprintf(`{"FileName":%q}`, name), who.hdr...)
				if !strings.Contains(string(r.raw), "one of swmgr's own files") {
					t.Errorf("%s's SaveConfig to FileName %s: %s; want a 400 that says why", who.name, name, r)
				}
			}
			uri := "///" + strings.TrimPrefix(filepath.Join(s.dir, name), "/")
			s.expect(t, 400, "POST", "/action/SaveConfig", fmt.Sprintf(`{"DstFileURI":%q}`, uri), who.hdr...)
		}
		uri := "///" + strings.TrimPrefix(filepath.Join(s.dir, name), "/")
		s.expect(t, 400, "POST", "/action/ResetConfigToFile", fmt.Sprintf(`{"SrcFileURI":%q}`, uri))
	}
	// A moved-aside copy and a temporary name are swmgr's too.
	s.expect(t, 400, "POST", "/action/SaveConfig", `{"FileName":"archive-state.json.damaged-1"}`, op...)
	s.expect(t, 400, "POST", "/action/SaveConfig", `{"DstFileURI":"///`+strings.TrimPrefix(s.dir, "/")+`/.startup-config.tmp"}`, op...)
	// A name with control characters is refused, whoever asks.
	for _, name := range []string{`evil\nname`, `evil\rname`, `evil\u0085name`, `evil\u001bname`} {
		s.expect(t, 400, "POST", "/action/SaveConfig", `{"FileName":"`+name+`"}`, op...)
	}
	s.expect(t, 200, "POST", "/action/SaveConfig", `{"FileName":"mine"}`, op...)
	s.expect(t, 200, "POST", "/action/SaveConfig", `{}`, op...)

	s.stop(t)
	s = startServer(t, s.dir)
	s.expect(t, 200, "POST", "/action/ResetConfigToFile", `{"SrcFileURI":"///`+strings.TrimPrefix(filepath.Join(s.dir, "mine"), "/")+`"}`)
	entries, err := os.ReadDir(s.dir)
	if err != nil {
		t.Fatal(err)
	}
	for _, e := range entries {
		if _, own := datadir.Own(e.Name()); !own && e.Name() != datadir.StartupConfig && e.Name() != "mine" {
			t.Errorf("the data directory holds %s, which is not declared in datadir.Files", e.Name())
		}
	}
}

// A state file of the data directory that does not parse does not stop a
// start: it is moved aside, swmgr says so in its log and starts as if it
// were missing (docs/configfile.md).
func TestDamagedStateFilesDoNotStopAStart(t *testing.T) {
	s := startServer(t, "")
	s.expect(t, 201, "POST", "/config/NtpServer", `{"IpAddr":"192.0.2.10"}`) // not a new data directory
	s.expect(t, 200, "POST", "/action/SaveConfig", `{}`)
	s.stop(t)
	damaged := []string{datadir.ArchiveKnownHosts, datadir.ArchiveState, datadir.SavedState}
	for _, name := range damaged {
		if err := os.WriteFile(filepath.Join(s.dir, name), []byte(`{"Format":2,"ConfigData":{`), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	s = startServer(t, s.dir)
	logs := s.logs.String()
	for _, name := range damaged {
		if !strings.Contains(logs, filepath.Join(s.dir, name)+" did not parse") {
			t.Errorf("the log does not say that %s was damaged:\n%s", name, tail(logs, 3000))
		}
		aside, _ := filepath.Glob(filepath.Join(s.dir, name+".damaged-*"))
		if len(aside) != 1 {
			t.Errorf("%s was not moved aside: %v", name, aside)
		}
		if data, err := os.ReadFile(filepath.Join(s.dir, name)); err == nil && !json.Valid(data) {
			t.Errorf("%s is still the damaged file", name)
		}
	}
	r := s.expect(t, 200, "GET", "/state/SystemParam", "")
	if saved, _ := r.object()["SavedRevision"].(float64); saved != 0 {
		t.Errorf("SavedRevision after its record was damaged: %v; want 0", saved)
	}
	// And a save works again.
	s.expect(t, 200, "POST", "/action/SaveConfig", `{}`)
}
