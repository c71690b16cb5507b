package archive

import (
	"errors"
	"os"
	"path/filepath"
	"testing"
)

// TestWriteLocalReplacesOnlySavedConfigurations: SaveConfig runs as root
// and an operator may aim it at any name in the data directory, so an
// existing file is replaced only if it is a saved configuration.
func TestWriteLocalReplacesOnlySavedConfigurations(t *testing.T) {
	dir := t.TempDir()
	link := filepath.Join(dir, "link")
	if err := os.Symlink(filepath.Join(dir, "elsewhere"), link); err != nil {
		t.Fatal(err)
	}
	cases := []struct {
		name     string
		existing string // "" : no file
		replaced bool
	}{
		{"new file", "", true},
		{"empty file", "\x00empty", true},
		{"swmgr format 2", `{"Format":2,"Generator":"swmgr","ConfigData":{}}`, true},
		{"FlexSwitch format 1, indented", "{\n    \"ConfigData\": {\n        \"Port\": []\n    }\n}", true},
		{"encrypted", "SWMGRENC\x01\x01rest", true},
		{"the saved-revision record", `{"Revision":3,"At":"2026-11-23T15:00:00Z","To":"x"}`, false},
		{"the archive host keys", "{\n  \"127.0.0.1:22\": {\"Key\": \"ssh-ed25519 AAAA\"}\n}", false},
		{"a JSON list", `[{"Format":2}]`, false},
		{"a key", "\x8f\x02\x11binary", false},
		{"a shell script", "#!/bin/sh\nexit 0\n", false},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			p := filepath.Join(t.TempDir(), "target")
			switch tc.existing {
			case "":
			case "\x00empty":
				tc.existing = ""
				if err := os.WriteFile(p, nil, 0o600); err != nil {
					t.Fatal(err)
				}
			default:
				if err := os.WriteFile(p, []byte(tc.existing), 0o600); err != nil {
					t.Fatal(err)
				}
			}
			err := WriteLocal(p, []byte(`{"Format":2}`))
			got, _ := os.ReadFile(p)
			if tc.replaced {
				if err != nil || string(got) != `{"Format":2}` {
					t.Fatalf("WriteLocal: %v, content %q; want it replaced", err, got)
				}
				if fi, _ := os.Stat(p); fi.Mode().Perm() != 0o600 {
					t.Fatalf("mode %v, want 0600", fi.Mode())
				}
				return
			}
			if !errors.Is(err, ErrNotConfigFile) || string(got) != tc.existing {
				t.Fatalf("WriteLocal: %v, content %q; want ErrNotConfigFile and the file unchanged", err, got)
			}
		})
	}
	for _, p := range []string{link, "/proc/self/environ", "/dev/null", dir} {
		if err := WriteLocal(p, []byte(`{"Format":2}`)); !errors.Is(err, ErrNotConfigFile) {
			t.Errorf("WriteLocal(%s): %v, want ErrNotConfigFile", p, err)
		}
	}
	if _, err := os.Lstat(filepath.Join(dir, "elsewhere")); !os.IsNotExist(err) {
		t.Errorf("the link was followed: %v", err)
	}
	if err := WriteLocal(filepath.Join(dir, "missing", "x"), []byte(`{}`)); err == nil {
		t.Error("WriteLocal into a missing directory succeeded")
	}
}
