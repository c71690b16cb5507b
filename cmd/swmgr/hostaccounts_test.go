package main

import (
	"crypto/rand"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"

	"github.com/swmgr/swmgr/internal/accounts"
	"github.com/swmgr/swmgr/internal/model"
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
	dataDir := t.TempDir()
	// The test's own group, fresh, joins the allowed role groups, to see
	// it made and removed with its User.
	hostAccounts := &accounts.OS{Groups: append(model.RoleGroups(), group)}
	s := startSwmgr(t, &serveOptions{dataDir: dataDir, accountsFrom: "host", accounts: hostAccounts, noFirstAdmin: true})
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
	// The comment says swmgr made it, and which swmgr: its data
	// directory's tag.
	pw := strings.Split(etcEntry(t, "passwd", name), ":")
	if len(pw) != 7 || !regexp.MustCompile(`^`+accounts.Marker+` [0-9a-f]{16}$`).MatchString(pw[4]) || pw[5] != "/home/"+name || pw[6] != "/bin/bash" {
		t.Fatalf("/etc/passwd entry %q: want the comment %q and a tag, home and shell", pw, accounts.Marker)
	}
	comment := pw[4]

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

	// A start reconciles the accounts this swmgr made with the stored
	// Users: one that no User has (a crash between useradd and the store's
	// write leaves one) is removed; a User whose account is gone gets it
	// back, locked. A host account swmgr did not make is never touched,
	// nor one that another swmgr on the host made (another data
	// directory's, with another tag).
	kept, leftover, foreign, others := "swmgrtk"+suffix, "swmgrtl"+suffix, "swmgrto"+suffix, "swmgrta"+suffix
	t.Cleanup(func() {
		for _, n := range []string{kept, leftover, foreign, others} {
			if etcEntry(t, "passwd", n) != "" {
				exec.Command("userdel", "-r", n).Run()
			}
		}
	})
	s.want(s.req(false, "POST", "/config/User", "", "", `{"Name":"`+kept+`","Group":"users","Password":"`+first+`"}`), 201, "create")
	s.stop()
	for _, c := range [][]string{
		{"userdel", "-r", kept},
		{"useradd", "-m", "-c", comment, "-g", "users", leftover},
		{"useradd", "-m", "-c", "made by hand", "-g", "users", foreign},
		{"useradd", "-m", "-c", accounts.Marker + " 0123456789abcdef", "-g", "users", others},
	} {
		if out, err := exec.Command(c[0], c[1:]...).CombinedOutput(); err != nil {
			t.Fatalf("%v: %v %s", c, err, out)
		}
	}
	s = startSwmgr(t, &serveOptions{dataDir: dataDir, accountsFrom: "host", accounts: hostAccounts, noFirstAdmin: true})
	if etcEntry(t, "passwd", leftover) != "" {
		t.Errorf("%s, made by swmgr (by its comment) and no User's, survived the start", leftover)
	}
	if etcEntry(t, "passwd", foreign) == "" {
		t.Errorf("%s, a host account swmgr did not make, was removed", foreign)
	}
	if etcEntry(t, "passwd", others) == "" {
		t.Errorf("%s, an account another swmgr made, was removed", others)
	}
	if sh := etcEntry(t, "shadow", kept); !strings.HasPrefix(strings.Split(sh+":", ":")[1], "!") {
		t.Errorf("the account of User %s, removed by hand, came back as %q; want it made again, locked", kept, sh)
	}
	if !strings.Contains(s.logs.String(), "made account "+kept+" with a locked password") {
		t.Errorf("the repairs are not in the log:\n%s", s.logs)
	}
	s.want(s.as(cred{kept, first}, "GET", "/config/Users", ""), 401, "login to a re-made, locked account")
	s.want(s.req(false, "DELETE", "/config/User?Name="+kept, "", "", ""), 200, "delete")
	if etcEntry(t, "passwd", kept) != "" {
		t.Errorf("%s is still in /etc/passwd after its User's delete", kept)
	}
}

// TestAccountsFlag: --accounts picks whose accounts Users are; host needs
// root and is the host's own tools (accounts.OS).
func TestAccountsFlag(t *testing.T) {
	root := os.Geteuid() == 0
	for _, tc := range []struct {
		value   string
		wantErr string // "" : accepted
		host    bool   // the accounts are the host's
	}{
		{value: ""},
		{value: "own"},
		{value: "host", host: root, wantErr: map[bool]string{true: "", false: "need root"}[root]},
		{value: "HOST", wantErr: `--accounts "HOST": use own or host`},
		{value: "ldap", wantErr: `--accounts "ldap": use own or host`},
	} {
		o := &serveOptions{accountsFrom: tc.value, dataDir: t.TempDir()}
		err := o.defaults()
		if tc.wantErr == "" && err != nil || tc.wantErr != "" && (err == nil || !strings.Contains(err.Error(), tc.wantErr)) {
			t.Errorf("--accounts %q: %v, want error %q", tc.value, err, tc.wantErr)
			continue
		}
		if _, isOS := o.accounts.(*accounts.OS); err == nil && isOS != tc.host {
			t.Errorf("--accounts %q: the host's accounts %v, want %v", tc.value, isOS, tc.host)
		}
	}
}

// With --accounts host a User's group is one of swmgr's role groups (admin,
// operator, users) and nothing else: any other group of the host may carry
// privileges of its own (ssl-cert reads the host's TLS private keys, video
// the frame buffer, frr the routing daemons' sockets) or be another user's
// private group. Each is a 400 that makes no account and no group.
func TestHostAccountsGroupAllowlist(t *testing.T) {
	if os.Geteuid() != 0 {
		t.Skip("this test makes real accounts on the host with useradd & co, which needs root; run it as root (CI does)")
	}
	suffix := strings.ToLower(rand.Text()[:8])
	victim := makeOSUser(t, "swmgrv"+suffix) // its private group has its name
	fresh := "swmgrf" + suffix               // no such group yet
	s := startSwmgr(t, &serveOptions{dataDir: t.TempDir(), https: "-", accountsFrom: "host", noFirstAdmin: true})
	groups := []string{victim.name, fresh, "video"}
	for _, g := range []string{"ssl-cert", "frr", "frrvty", "sasl", "postgres", "plugdev", "audio"} {
		if etcEntry(t, "group", g) != "" {
			groups = append(groups, g)
		}
	}
	for i, g := range groups {
		name := "swmgra" + strconv.Itoa(i) + suffix
		t.Cleanup(func() {
			if etcEntry(t, "passwd", name) != "" {
				exec.Command("userdel", "-r", name).Run()
			}
		})
		r := s.req(false, "POST", "/config/User", "", "", `{"Name":"`+name+`","Group":"`+g+`","Password":"Host-Pass-123"}`)
		if r.status != 400 || !strings.Contains(r.raw, "admin, operator, users") {
			t.Errorf("a User in group %s: %d %s", g, r.status, r.raw)
		}
		if etcEntry(t, "passwd", name) != "" {
			t.Errorf("group %s: the account %s was made", g, name)
		}
	}
	if etcEntry(t, "group", fresh) != "" {
		exec.Command("groupdel", fresh).Run()
		t.Errorf("group %s was made", fresh)
	}
	// A role group is fine.
	name := "swmgru" + suffix
	t.Cleanup(func() {
		if etcEntry(t, "passwd", name) != "" {
			exec.Command("userdel", "-r", name).Run()
		}
	})
	s.want(s.req(false, "POST", "/config/User", "", "", `{"Name":"`+name+`","Group":"users","Password":"Host-Pass-123"}`), 201, "a User of group users")
	s.want(s.req(false, "DELETE", "/config/User?Name="+name, "", "", ""), 200, "delete")
}
