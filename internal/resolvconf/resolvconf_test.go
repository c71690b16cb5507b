package resolvconf

import "testing"

// TestConfig: servers keep their creation order, a removed one leaves the
// others in theirs, only the first MaxServers are written and in use.
func TestConfig(t *testing.T) {
	var c Config
	for _, s := range []string{"192.0.2.1", "192.0.2.2", "192.0.2.3", "192.0.2.4", "192.0.2.2"} {
		c.SetServer(s, true)
	}
	c.SetServer("192.0.2.1", false)
	c.SetServer("192.0.2.9", false)
	c.Domain = "example.net"
	want := Header + "search example.net\nnameserver 192.0.2.2\nnameserver 192.0.2.3\nnameserver 192.0.2.4\n"
	if got := string(c.Render()); got != want {
		t.Errorf("got\n%s\nwant\n%s", got, want)
	}
	c.SetServer("192.0.2.5", true)
	if !c.InUse("192.0.2.4") || c.InUse("192.0.2.5") || c.InUse("192.0.2.1") {
		t.Errorf("InUse: %v", c.Servers)
	}
	if got := string(Render(nil, "")); got != Header {
		t.Errorf("empty: %q", got)
	}
}
