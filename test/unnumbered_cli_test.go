package test

import "testing"

// TestCLIUnnumbered: in a port's context `ip unnumbered Loopback1` makes
// the port borrow the loopback's address (IOS's and NX-OS's words), show
// run prints it under the port, show ip unnumbered lists it with the
// address borrowed, a loopback with no address is refused, and `no ip
// unnumbered Loopback1` removes it, on the simulated switch.
func TestCLIUnnumbered(t *testing.T) {
	s := startServer(t, "")
	s.expect(t, 201, "POST", "/config/LogicalIntf", `{"Name":"Loopback1"}`)
	s.expect(t, 201, "POST", "/config/IPv4Intf", `{"IntfRef":"Loopback1","IpAddr":"10.255.0.1/32"}`)
	s.expect(t, 201, "POST", "/config/LogicalIntf", `{"Name":"Loopback2"}`)
	out, code := runCLI(t, s, "enable\nconfig\ninterface fpPort 2\nip unnumbered Loopback1\nexit\nexit\napply\nexit\nshow run\nshow ip unnumbered\n")
	if code != 0 {
		t.Fatalf("exit %d\n%s", code, out)
	}
	mustContain(t, out, "sdk:createIPv4Unnumbered(fpPort2,Loopback1) result: SUCCESS", "interface fpPort 2\n  ip unnumbered Loopback1\n",
		" fpPort2    Loopback1    10.255.0.1/32    default")

	out, _ = runCLI(t, s, "enable\nconfig\ninterface fpPort 3\nip unnumbered Loopback2\n")
	mustContain(t, out, "ERROR: 400", "Loopback2 has no IPv4 address")
	s.expect(t, 404, "GET", "/config/IPv4Unnumbered?IntfRef=fpPort3", "")

	out, code = runCLI(t, s, "enable\nconfig\ninterface fpPort 2\nno ip unnumbered Loopback1\nexit\napply\n")
	if code != 0 {
		t.Fatalf("exit %d\n%s", code, out)
	}
	s.expect(t, 404, "GET", "/config/IPv4Unnumbered?IntfRef=fpPort2", "")
}
