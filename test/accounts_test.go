// The simulated switch's accounts are written behind the store: a User the
// server answered can log in after a kill -9, and at start the account
// files are made to match the stored Users again.

package test

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// editAccountFile rewrites one of the data directory's account files:
// drop removes the lines of those accounts, add appends lines.
func editAccountFile(t *testing.T, dir, name string, drop []string, add ...string) {
	t.Helper()
	path := filepath.Join(dir, "accounts", name)
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	var kept []string
	for _, l := range strings.Split(strings.TrimRight(string(b), "\n"), "\n") {
		name, _, _ := strings.Cut(l, ":")
		if !containsString(drop, name) {
			kept = append(kept, l)
		}
	}
	kept = append(kept, add...)
	if err := os.WriteFile(path, []byte(strings.Join(kept, "\n")+"\n"), 0o600); err != nil {
		t.Fatal(err)
	}
}

func containsString(list []string, s string) bool {
	for _, x := range list {
		if x == s {
			return true
		}
	}
	return false
}

func TestUserAccountsSurviveKill9AndAreReconciled(t *testing.T) {
	dir := t.TempDir()
	httpsAddr := freeAddr(t)
	secure := "https://" + httpsAddr + "/public/v1"
	s := startServer(t, dir, "--https", httpsAddr)
	s.expect(t, 201, "POST", "/config/User", `{"Name":"acctalice","Group":"operator","Password":"alice-password-1","DefaultShell":"Bash"}`)
	s.expect(t, 201, "POST", "/config/User", `{"Name":"acctbob","Group":"operator","Password":"bob-password-1"}`)
	s.kill9() // at once after the answers: they must be on disk

	s = startServer(t, dir, "--https", httpsAddr)
	hc := httpsClient(t, dir, "")
	for _, u := range [][2]string{{"acctalice", "alice-password-1"}, {"acctbob", "bob-password-1"}} {
		if code, body := send(t, hc, "GET", secure+"/config/Users", u[0], u[1], ""); code != 200 {
			t.Fatalf("%s after a kill -9: %d %s", u[0], code, body)
		}
	}
	s.kill9()

	// bob's account is lost from the files, mallory's appears, alice's
	// shell is changed: what a power loss or a hand can leave.
	editAccountFile(t, dir, "passwd", []string{"acctbob"}, "acctmallory:x:1500:100::/home/acctmallory:/bin/bash")
	passwd, err := os.ReadFile(filepath.Join(dir, "accounts", "passwd"))
	if err != nil {
		t.Fatal(err)
	}
	changed := strings.Replace(string(passwd), "/home/acctalice:/bin/bash\n", "/home/acctalice:/bin/sh\n", 1)
	if changed == string(passwd) {
		t.Fatalf("acctalice's login shell is not /bin/bash:\n%s", passwd)
	}
	if err := os.WriteFile(filepath.Join(dir, "accounts", "passwd"), []byte(changed), 0o644); err != nil {
		t.Fatal(err)
	}
	editAccountFile(t, dir, "shadow", []string{"acctbob"}, "acctmallory:!:20000:0:99999:7:::")

	s = startServer(t, dir, "--https", httpsAddr)
	if !strings.Contains(s.logs.String(), "repaired") {
		t.Errorf("the start logged no repair:\n%s", tail(s.logs.String(), 3000))
	}
	passwd, err = os.ReadFile(filepath.Join(dir, "accounts", "passwd"))
	if err != nil {
		t.Fatal(err)
	}
	if strings.Contains(string(passwd), "acctmallory") {
		t.Errorf("an account no User has survived the start:\n%s", passwd)
	}
	if !strings.Contains(string(passwd), "/home/acctalice:/bin/bash\n") {
		t.Errorf("acctalice's shell was not put back:\n%s", passwd)
	}
	if code, body := send(t, hc, "GET", secure+"/config/Users", "acctalice", "alice-password-1", ""); code != 200 {
		t.Errorf("acctalice after the repair: %d %s", code, body)
	}
	// bob's account is back, locked until an admin sets its password.
	if code, _ := send(t, hc, "GET", secure+"/config/Users", "acctbob", "bob-password-1", ""); code != 401 {
		t.Errorf("acctbob with the old password after the repair: %d, want 401", code)
	}
	s.expect(t, 200, "POST", "/action/UserPassword", `{"Name":"acctbob","Password":"bob-password-2"}`)
	if code, body := send(t, hc, "GET", secure+"/config/Users", "acctbob", "bob-password-2", ""); code != 200 {
		t.Errorf("acctbob with the password set after the repair: %d %s", code, body)
	}
	s.expect(t, 200, "DELETE", "/config/User", `{"Name":"acctbob"}`)
	s.kill9()
	passwd, err = os.ReadFile(filepath.Join(dir, "accounts", "passwd"))
	if err != nil {
		t.Fatal(err)
	}
	if strings.Contains(string(passwd), "acctbob") {
		t.Errorf("a delete answered before the kill -9 left the account on disk:\n%s", passwd)
	}
}
