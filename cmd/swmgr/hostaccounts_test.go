package main

import (
	"crypto/rand"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/swmgr/swmgr/internal/accounts"
)

// etcEntry returns the entry of name in /etc/<file>, or "".
func etcEntry(t *testing.T, file, name string) string {
	t.Helper()
	b, err := os.ReadFile(filepath.Join("/etc", file))
	if err != nil {
		t.Fatal(err)
	}
	for _, l := range strings.Split(string(b), "\n") {
		if strings.HasPrefix(l, name+":") {
			return l
		}
	}
	return ""
}

// The real OS accounts of this host, through REST: create a user, log in
// with it over HTTPS, change its password, delete it, and leave no trace.
func TestHostAccountsAsRoot(t *testing.T) {
	if os.Geteuid() != 0 {
		t.Skip("this test makes a real account on the host with useradd & co, which needs root; run it as root (CI does)")
	}
	suffix := strings.ToLower(rand.Text()[:8])
	name, group := "swmgrt"+suffix, "swmgrg"+suffix
	for _, f := range []string{"passwd", "group"} {
		if etcEntry(t, f, name) != "" || etcEntry(t, f, group) != "" {
			t.Fatalf("%s or %s already exists in /etc/%s", name, group, f)
		}
	}
	t.Cleanup(func() { // in case the test failed half-way
		if etcEntry(t, "passwd", name) != "" {
			exec.Command("userdel", "-r", name).Run()
		}
		if etcEntry(t, "group", group) != "" {
			exec.Command("groupdel", group).Run()
		}
	})
	// The simulated switch, with the host's accounts; no first admin (that
	// would be a real account too): the local admin works over loopback
	// HTTP without credentials.
	s := startSwmgr(t, &serveOptions{dataDir: t.TempDir(), accounts: &accounts.OS{}, noFirstAdmin: true})
	first, second := "Host-Pass-"+rand.Text()[:10], "Host-Pass-"+rand.Text()[:10]

	s.want(s.req(false, "POST", "/config/User", "", "", `{"Name":"`+name+`","Group":"`+group+`","Password":"`+first+`","DefaultShell":"Bash"}`), 201, "create")
	sh := etcEntry(t, "shadow", name)
	hash := strings.Split(sh+":", ":")[1]
	if !strings.HasPrefix(hash, "$y$") && !strings.HasPrefix(hash, "$6$") {
		t.Fatalf("/etc/shadow entry %q: want a $y$ or $6$ hash", sh)
	}
	if etcEntry(t, "group", group) == "" {
		t.Errorf("group %s is not in /etc/group", group)
	}
	if pw := etcEntry(t, "passwd", name); !strings.HasSuffix(pw, ":/home/"+name+":/bin/bash") {
		t.Errorf("/etc/passwd entry %q", pw)
	}

	u := cred{name, first}
	s.want(s.as(u, "GET", "/config/Users", ""), 200, "login over HTTPS")
	s.want(s.as(u, "POST", "/action/UserPassword", `{"Name":"`+name+`","Password":"`+second+`"}`), 200, "own password change")
	if h := strings.Split(etcEntry(t, "shadow", name)+":", ":")[1]; h == hash || !strings.HasPrefix(h, "$") {
		t.Errorf("the hash did not change: %q", h)
	}
	s.want(s.as(u, "GET", "/config/Users", ""), 401, "old password")
	s.want(s.as(cred{name, second}, "GET", "/config/Users", ""), 200, "new password")
	s.want(s.as(cred{name, second}, "DELETE", "/config/User?Name="+name, ""), 403, "a reader deleting itself")

	s.want(s.req(false, "DELETE", "/config/User?Name="+name, "", "", ""), 200, "delete")
	s.want(s.as(cred{name, second}, "GET", "/config/Users", ""), 401, "login after delete")
	// Nor in the tools' backups (shadow- would keep the hash) or the
	// subordinate id ranges useradd gave it.
	for _, f := range []string{"passwd", "shadow", "group", "gshadow", "subuid", "subgid", "passwd-", "shadow-", "group-", "gshadow-", "subuid-", "subgid-"} {
		b, _ := os.ReadFile(filepath.Join("/etc", f))
		if strings.Contains(string(b), name) || strings.Contains(string(b), group) {
			t.Errorf("/etc/%s still names %s or %s", f, name, group)
		}
	}
	for _, p := range []string{"/home/" + name, "/var/mail/" + name, "/var/spool/mail/" + name} {
		if _, err := os.Stat(p); !os.IsNotExist(err) {
			t.Errorf("%s: %v", p, err)
		}
	}
	for _, sec := range []string{first, second, hash} {
		if strings.Contains(s.logs.String(), sec) {
			t.Errorf("the log holds %q", sec)
		}
	}
}
