package accounts

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// Damaged account files are refused, never read as "no accounts" nor
// replaced by new ones, and are left as they are.
func TestOpenFilesRefusesDamagedFiles(t *testing.T) {
	for _, tc := range []struct {
		what   string
		damage func(dir string)
		want   string
	}{
		{"garbage passwd", func(dir string) { os.WriteFile(filepath.Join(dir, passwdFile), []byte("\x00\x01garbage\n"), 0o600) }, "not an account entry"},
		{"short shadow line", func(dir string) { os.WriteFile(filepath.Join(dir, shadowFile), []byte("root:*:1\n"), 0o600) }, "shadow line 1"},
		{"no root", func(dir string) {
			os.WriteFile(filepath.Join(dir, passwdFile), []byte("bob:x:1000:1000::/home/bob:/bin/sh\n"), 0o600)
		}, "no root entry"},
		{"passwd missing", func(dir string) { os.Remove(filepath.Join(dir, passwdFile)) }, "passwd is missing but shadow is there"},
	} {
		t.Run(tc.what, func(t *testing.T) {
			dir := t.TempDir()
			if _, err := OpenFiles(dir, FilesOptions{Scheme: SHA512}); err != nil {
				t.Fatal(err)
			}
			tc.damage(dir)
			before := dirText(t, dir)
			if _, err := OpenFiles(dir, FilesOptions{Scheme: SHA512}); err == nil || !strings.Contains(err.Error(), tc.want) || !strings.Contains(err.Error(), "restore") {
				t.Fatalf("error %v; want one with %q", err, tc.want)
			}
			if after := dirText(t, dir); after != before {
				t.Errorf("the files changed:\n%s\n---\n%s", before, after)
			}
		})
	}
}

func dirText(t *testing.T, dir string) string {
	t.Helper()
	var b strings.Builder
	entries, _ := os.ReadDir(dir)
	for _, e := range entries {
		data, _ := os.ReadFile(filepath.Join(dir, e.Name()))
		b.WriteString(e.Name() + "=" + string(data) + "\n")
	}
	return b.String()
}
