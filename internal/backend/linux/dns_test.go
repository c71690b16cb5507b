package linux

import (
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/swmgr/swmgr/internal/backend"
	"github.com/swmgr/swmgr/internal/backend/sim"
	"github.com/swmgr/swmgr/internal/model"
	"github.com/swmgr/swmgr/internal/syncbuf"
)

// TestDNSOnLinux: DNSServer and DNSGlobal write <EtcDir>/resolv.conf (the
// servers in creation order, the domain as search), once per commit; a
// commit that fails after it puts the previous file back; the state shows
// the file and which servers are in use.
func TestDNSOnLinux(t *testing.T) {
	l := newLabNamed(t, "dns", 1, KernelOptions{})
	etc := t.TempDir()
	before := "# the distribution's\nnameserver 192.0.2.1\n"
	resolv := filepath.Join(etc, "resolv.conf")
	if err := os.WriteFile(resolv, []byte(before), 0o644); err != nil {
		t.Fatal(err)
	}
	fail := false
	s := startSwitch(t, l, t.TempDir(), func(o *switchOptions) {
		o.System = &SystemOptions{EtcDir: etc, UTSNamespace: newUTS(t)}
		o.Simulated = sim.Options{Ports: 1, Fault: func(c backend.Change) error {
			if c.Kind.Name == "NtpServer" && fail {
				return errors.New("injected failure after resolv.conf was written")
			}
			return nil
		}}
	})
	read := func() string { b, _ := os.ReadFile(resolv); return string(b) }
	if got := read(); got != before {
		t.Fatalf("resolv.conf changed without DNS objects: %q", got)
	}
	s.mustCommit(
		s.edit(backend.Create, "DNSServer", model.Object{"IPAddr": "10.0.0.254"}),
		s.edit(backend.Create, "DNSServer", model.Object{"IPAddr": "2001:db8::53"}),
		s.edit(backend.Update, "DNSGlobal", model.Object{"Domain": "dockerlab.local"}),
	)
	want := "# written by swmgr from DNSServer and DNSGlobal; changes here are overwritten\nsearch dockerlab.local\nnameserver 10.0.0.254\nnameserver 2001:db8::53\n"
	if got := read(); got != want {
		t.Fatalf("resolv.conf:\n%s\nwant:\n%s", got, want)
	}
	if st := s.stateOf("DNSGlobal", model.Object{"Vrf": "default"}); st["ResolvConf"] != want {
		t.Errorf("DNSGlobal state: %v", st)
	}
	if st := s.stateOf("DNSServer", model.Object{"IPAddr": "10.0.0.254"}); st["InUse"] != true {
		t.Errorf("DNSServer state: %v", st)
	}
	fail = true
	if err := s.commit(
		s.edit(backend.Delete, "DNSServer", model.Object{"IPAddr": "10.0.0.254"}),
		s.edit(backend.Create, "NtpServer", model.Object{"IpAddr": "192.0.2.123"}),
	); err == nil {
		t.Fatal("the injected failure did not fail the commit")
	}
	if got := read(); got != want {
		t.Errorf("after a failed commit resolv.conf is\n%s\nwant it as before:\n%s", got, want)
	}
	fail = false
	s.mustCommit(s.edit(backend.Delete, "DNSServer", model.Object{"IPAddr": "10.0.0.254"}))
	if got, want := read(), "# written by swmgr from DNSServer and DNSGlobal; changes here are overwritten\nsearch dockerlab.local\nnameserver 2001:db8::53\n"; got != want {
		t.Errorf("after the delete:\n%s\nwant:\n%s", got, want)
	}
}

// TestDNSResolvesThroughDnsmasq: the resolv.conf the backend writes is the
// one the switch's resolver uses: glibc's getent, in a mount namespace
// whose /etc/resolv.conf is the file written, resolves a short name
// through the search domain at a dnsmasq on loopback.
func TestDNSResolvesThroughDnsmasq(t *testing.T) {
	needProgram(t, "dnsmasq-base", "/usr/sbin/dnsmasq")
	needProgram(t, "util-linux", "/usr/bin/unshare")
	l := newLabNamed(t, "dnm", 1, KernelOptions{})
	const server = "127.0.0.77"
	dnsmasq := exec.Command("/usr/sbin/dnsmasq", "--keep-in-foreground", "--conf-file=/dev/null", "--no-resolv", "--no-hosts",
		"--listen-address="+server, "--bind-interfaces", "--port=53", "--user=nobody", "--pid-file=",
		"--address=/sw1.lab.example/192.0.2.99")
	var out syncbuf.Buffer
	dnsmasq.Stdout, dnsmasq.Stderr = &out, &out
	if err := dnsmasq.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { dnsmasq.Process.Kill(); dnsmasq.Wait() })
	etc := t.TempDir()
	s := startSwitch(t, l, t.TempDir(), func(o *switchOptions) {
		o.System = &SystemOptions{EtcDir: etc, UTSNamespace: newUTS(t)}
	})
	s.mustCommit(
		s.edit(backend.Create, "DNSServer", model.Object{"IPAddr": server}),
		s.edit(backend.Update, "DNSGlobal", model.Object{"Domain": "lab.example"}),
	)
	resolv := filepath.Join(etc, "resolv.conf")
	var got []byte
	for i := 0; i < 50; i++ {
		cmd := exec.Command("unshare", "--mount", "--propagation", "private", "sh", "-c", `mount --bind "$1" /etc/resolv.conf && exec getent ahostsv4 sw1`, "sh", resolv)
		got, _ = cmd.CombinedOutput()
		if strings.Contains(string(got), "192.0.2.99") {
			return
		}
		time.Sleep(100 * time.Millisecond) // dnsmasq still starting
	}
	t.Errorf("getent through the written resolv.conf: %q; dnsmasq: %s", got, out.String())
}
