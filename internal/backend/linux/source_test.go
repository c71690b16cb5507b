package linux

import (
	"context"
	"testing"
	"time"

	"github.com/swmgr/swmgr/internal/aaa"
	"github.com/swmgr/swmgr/internal/aaa/aaatest"
	"github.com/swmgr/swmgr/internal/backend"
	"github.com/swmgr/swmgr/internal/model"
)

// TestTacacsSourceIntfOnLinux: the source address of a Tacacs server's
// SourceIntf is the kernel's address of that interface in the switch's
// namespace (a port through the port map, the management interface ma1
// by its name, its primary address), and a TACACS+ server that serves
// only that address (tacquito, in the switch's namespace) answers a login
// made there.
func TestTacacsSourceIntfOnLinux(t *testing.T) {
	l := newLab(t, 1, KernelOptions{})
	l.k.Close()
	l.k = nil
	s := startSwitch(t, l, t.TempDir())
	// ma1, the management interface, outside the port map (a veth: the
	// test kernels may have no dummy driver).
	run(t, "ip", "-n", l.sw, "link", "add", "ma1", "type", "veth", "peer", "name", "ma1peer")
	run(t, "ip", "-n", l.sw, "link", "set", "ma1peer", "up")
	run(t, "ip", "-n", l.sw, "addr", "add", "198.51.100.3/24", "dev", "ma1")
	run(t, "ip", "-n", l.sw, "addr", "add", "198.51.100.4/24", "dev", "ma1") // secondary
	run(t, "ip", "-n", l.sw, "link", "set", "ma1", "up")
	s.mustCommit(
		s.edit(backend.Update, "Port", model.Object{"IntfRef": "fpPort1", "AdminState": "UP"}),
		s.edit(backend.Create, "IPv4Intf", model.Object{"IntfRef": "fpPort1", "IpAddr": "192.0.2.130/25"}),
	)
	ctx := context.Background()
	for intf, want := range map[string]string{"fpPort1": "192.0.2.130", "ma1": "198.51.100.3", "eth9": "invalid IP"} {
		if got, err := s.be.SourceAddr(ctx, intf); err != nil || got.String() != want {
			t.Errorf("SourceAddr(%s) = %v, %v; want %s", intf, got, err, want)
		}
	}

	tac := aaatest.StartTacacsWith(t, "linux-tacacs-key", []aaatest.User{{Name: "netadmin", Password: "remote-admin-pass", PrivLvl: 15}},
		aaatest.TacacsOptions{Clients: []string{"192.0.2.130/32"}, Netns: l.sw})
	svc := aaa.New(aaa.Options{Source: s.e, Log: quiet(), SourceAddr: s.be.SourceAddr})
	if err := svc.Start(ctx); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(svc.Close)
	s.mustCommit(
		s.edit(backend.Update, "AAAGlobal", model.Object{"Accounting": false}),
		s.edit(backend.Update, "TacacsGlobal", model.Object{"Enable": "true", "Timeout": int64(2)}),
		s.edit(backend.Create, "Tacacs", model.Object{"ServerIp": tac.Host, "Port": int64(tac.Port), "Secret": "linux-tacacs-key", "AuthService": "login", "SourceIntf": "fpPort1"}),
	)
	if !eventually(10*time.Second, svc.Configured) {
		t.Fatal("the AAA service did not read the Tacacs server")
	}
	var r aaa.Result
	var err error
	aaatest.InNetns(t, l.sw, func() { r, err = svc.Login(ctx, "netadmin", "remote-admin-pass", "") })
	if err != nil || !r.Answered || !r.OK || r.Group != aaa.RoleAdmin {
		t.Errorf("login from fpPort1's 192.0.2.130: %+v %v; the server said:\n%s", r, err, tac.Output())
	}
}
