package daemon

import (
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"syscall"
	"testing"
)

// TestMakeDirReachable makes a daemon's directory under parents of every
// shape and checks, as the daemon's user itself (setpriv), that it can
// make a file there, or that MakeDir names the directory in the way.
func TestMakeDirReachable(t *testing.T) {
	if os.Geteuid() != 0 {
		t.Skip("needs root: chown and setpriv to another user")
	}
	nobody, err := LookupAccount("nobody")
	if err != nil {
		t.Skipf("no user nobody: %v", err)
	}
	// swmgr under systemd runs with UMask=0077: what it makes must not
	// depend on the umask.
	old := syscall.Umask(0o077)
	defer syscall.Umask(old)
	tests := []struct {
		name    string
		setup   func(root string) (dir string) // returns the daemon directory
		wantErr string                         // "" when the daemon must reach it
	}{
		{"all parents missing", func(root string) string { return filepath.Join(root, "run", "swmgr", "frr") }, ""},
		{"runtime directory 0750 root", func(root string) string {
			mkdir(t, filepath.Join(root, "swmgr"), 0o750)
			return filepath.Join(root, "swmgr", "frr")
		}, ""},
		{"runtime directory 0700 and the daemon directory 0700 from an earlier start", func(root string) string {
			mkdir(t, filepath.Join(root, "swmgr"), 0o700)
			mkdir(t, filepath.Join(root, "swmgr", "frr"), 0o700)
			return filepath.Join(root, "swmgr", "frr")
		}, ""},
		{"a closed directory further up is not swmgr's", func(root string) string {
			mkdir(t, filepath.Join(root, "home"), 0o700)
			mkdir(t, filepath.Join(root, "home", "swmgr"), 0o755)
			return filepath.Join(root, "home", "swmgr", "frr")
		}, "home is mode 0700, owner 0:0; make it traversable (chmod o+x"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			// Not t.TempDir: its parent is 0700.
			root, err := os.MkdirTemp("", "swmgr-daemon-dirs")
			if err != nil {
				t.Fatal(err)
			}
			t.Cleanup(func() { os.RemoveAll(root) })
			if err := os.Chmod(root, 0o755); err != nil {
				t.Fatal(err)
			}
			dir := tc.setup(root)
			err = MakeDir(dir, 0o750, nobody.UID, nobody.GIDs[0], nobody)
			if tc.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tc.wantErr) || !strings.Contains(err.Error(), "user nobody") {
					t.Fatalf("MakeDir: %v, want an error containing %q", err, tc.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatalf("MakeDir: %v", err)
			}
			if fi, err := os.Stat(dir); err != nil || fi.Mode().Perm() != 0o750 || fi.Sys().(*syscall.Stat_t).Uid != uint32(nobody.UID) {
				t.Fatalf("%s: %v %v, want 0750 owned by nobody", dir, fi.Mode(), err)
			}
			out, err := exec.Command("setpriv", "--reuid=nobody", "--regid=nogroup", "--clear-groups",
				"touch", filepath.Join(dir, "daemon.pid")).CombinedOutput()
			if err != nil {
				t.Fatalf("nobody cannot make a file in %s: %v %s", dir, err, out)
			}
		})
	}
}

func mkdir(t *testing.T, p string, mode os.FileMode) {
	t.Helper()
	if err := os.Mkdir(p, mode); err != nil {
		t.Fatal(err)
	}
	if err := os.Chmod(p, mode); err != nil {
		t.Fatal(err)
	}
}

// TestMakeDirReachableInTheDirectorysGroup: a set-user-id program run by
// swmgr (lldpcli, set-user-id _lldpd, run by root) passes a directory
// with swmgr's groups; when one of them is the directory's group, the
// group's x bit decides, not the others': MakeDir sets that one.
func TestMakeDirReachableInTheDirectorysGroup(t *testing.T) {
	if os.Geteuid() != 0 || os.Getegid() != 0 {
		t.Skip("needs root: chown and setpriv to another user")
	}
	nobody, err := LookupAccount("nobody")
	if err != nil {
		t.Skipf("no user nobody: %v", err)
	}
	cli := SetUIDAccount(nobody)
	if !slices.Contains(cli.GIDs, 0) {
		t.Fatalf("SetUIDAccount(nobody).GIDs = %v, want swmgr's own group 0 among them", cli.GIDs)
	}
	root, err := os.MkdirTemp("", "swmgr-daemon-dirs")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.RemoveAll(root) })
	if err := os.Chmod(root, 0o755); err != nil {
		t.Fatal(err)
	}
	mkdir(t, filepath.Join(root, "swmgr"), 0o700) // root:root, like t.TempDir's parents
	dir := filepath.Join(root, "swmgr", "lldpd")
	if err := MakeDir(dir, 0o755, 0, 0, cli); err != nil {
		t.Fatalf("MakeDir: %v", err)
	}
	if fi, _ := os.Stat(filepath.Join(root, "swmgr")); fi.Mode().Perm()&0o010 == 0 {
		t.Errorf("%s is %v: the group's x bit, which decides for a member of group 0, is not set", filepath.Join(root, "swmgr"), fi.Mode())
	}
	out, err := exec.Command("setpriv", "--reuid=nobody", "--regid=0", "--clear-groups", "ls", dir).CombinedOutput()
	if err != nil {
		t.Fatalf("user nobody with group 0 cannot pass to %s: %v %s", dir, err, out)
	}
}
