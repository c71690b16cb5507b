package main

import (
	"crypto/rand"
	"fmt"
	mrand "math/rand/v2"
	"os"
	"os/exec"
	"strings"
	"testing"
)

// TestUsersOnEveryDataplane: a User's whole life over REST (create, login,
// update, UserPassword by an admin and by the user, delete) is the same on
// the simulated switch and on the Linux backend in a network namespace,
// with the accounts of swmgr's own files and with the host's. The accounts
// are bound to User and UserPassword whatever the dataplane is.
func TestUsersOnEveryDataplane(t *testing.T) {
	if os.Geteuid() != 0 {
		t.Skip("needs root: a network namespace for the Linux backend, useradd for the host's accounts; run it as root (CI does)")
	}
	for _, dataplane := range []string{"sim", "linux"} {
		for _, acc := range []string{"own", "host"} {
			t.Run(dataplane+"/"+acc, func(t *testing.T) {
				o := &serveOptions{dataDir: t.TempDir(), backend: dataplane, accountsFrom: acc}
				if dataplane == "linux" {
					o.netns, o.portMap = usersLab(t)
				}
				suffix := strings.ToLower(rand.Text()[:8])
				name := "swmgru" + suffix
				admin := cred{"admin", "first-admin-pass"}
				if acc == "host" {
					// The first admin would be a real account of the host:
					// the local admin works over loopback HTTP instead.
					o.noFirstAdmin = true
					t.Cleanup(func() {
						if etcEntry(t, "passwd", name) != "" {
							exec.Command("userdel", "-r", name).Run()
						}
					})
				} else {
					o.adminPasswordFile = writeFile(t, admin.password)
				}
				s := startSwmgr(t, o)
				first, second, third := "User-Pass-"+rand.Text()[:10], "User-Pass-"+rand.Text()[:10], "User-Pass-"+rand.Text()[:10]
				s.want(s.req(false, "POST", "/config/User", "", "", `{"Name":"`+name+`","Group":"operator","Password":"`+first+`"}`), 201, "create")
				u := cred{name, first}
				s.want(s.as(u, "GET", "/config/Users", ""), 200, "login")
				s.want(s.req(false, "PATCH", "/config/User", "", "", `{"Name":"`+name+`","DefaultShell":"Bash"}`), 200, "update")
				s.want(s.req(false, "POST", "/action/UserPassword", "", "", `{"Name":"`+name+`","Password":"`+second+`"}`), 200, "UserPassword by the local admin")
				s.want(s.as(u, "GET", "/config/Users", ""), 401, "login with the old password")
				u = cred{name, second}
				s.want(s.as(u, "GET", "/config/Users", ""), 200, "login with the new password")
				s.want(s.as(u, "POST", "/action/UserPassword", `{"Name":"`+name+`","Password":"`+third+`"}`), 200, "UserPassword by the user")
				u = cred{name, third}
				s.want(s.as(u, "GET", "/config/Users", ""), 200, "login with the user's own new password")
				if acc == "own" {
					s.want(s.as(admin, "POST", "/action/UserPassword", `{"Name":"`+name+`","Password":"`+first+`"}`), 200, "UserPassword by the admin over HTTPS")
					u = cred{name, first}
					s.want(s.as(u, "GET", "/config/Users", ""), 200, "login after the admin's change")
				}
				s.want(s.req(false, "POST", "/action/UserPassword", "", "", `{"Name":"nosuchuser","Password":"`+first+`"}`), 404, "UserPassword of no User")
				s.want(s.req(false, "DELETE", "/config/User?Name="+name, "", "", ""), 200, "delete")
				s.want(s.as(u, "GET", "/config/Users", ""), 401, "login after delete")
				if acc == "host" && etcEntry(t, "passwd", name) != "" {
					t.Errorf("%s is still in /etc/passwd after its User's delete", name)
				}
				for _, sec := range []string{first, second, third} {
					if strings.Contains(s.logs.String(), sec) {
						t.Errorf("the log holds a password")
					}
				}
			})
		}
	}
}

// usersLab is a namespace with two veth ports and its port map, removed
// when the test ends.
func usersLab(t *testing.T) (netns, portMap string) {
	t.Helper()
	ns := fmt.Sprintf("swusr%05d", mrand.IntN(100000))
	for _, args := range [][]string{{"netns", "add", ns}, {"-n", ns, "link", "add", "eth1", "type", "veth", "peer", "name", "eth2"}} {
		if out, err := exec.Command("ip", args...).CombinedOutput(); err != nil {
			t.Fatalf("ip %s: %v\n%s", strings.Join(args, " "), err, out)
		}
		if args[0] == "netns" {
			t.Cleanup(func() { exec.Command("ip", "netns", "del", ns).Run() })
		}
	}
	return ns, writeFile(t, "fpPort1 eth1\nfpPort2 eth2\n")
}
