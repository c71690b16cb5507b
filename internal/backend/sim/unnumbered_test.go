package sim

import (
	"testing"

	"github.com/swmgr/swmgr/internal/model"
)

// An unnumbered interface's address is its loopback's: in its state and
// as the source address of connections that name it.
func TestUnnumberedBorrowsTheLoopbackAddress(t *testing.T) {
	s := New(Options{Ports: 2})
	s.mu.Lock()
	s.applied["IPv4Intf"] = map[string]model.Object{"Loopback1": {"IntfRef": "Loopback1", "IpAddr": "10.255.0.1/32"}}
	s.applied["IPv4Unnumbered"] = map[string]model.Object{"fpPort1": {"IntfRef": "fpPort1", "Interface": "Loopback1"}}
	s.mu.Unlock()
	if a, err := s.SourceAddr(ctx, "fpPort1"); err != nil || a.String() != "10.255.0.1" {
		t.Errorf("fpPort1's source address %v %v, want 10.255.0.1", a, err)
	}
	if a, _ := s.SourceAddr(ctx, "fpPort2"); a.IsValid() {
		t.Errorf("fpPort2, with no address, has source address %v", a)
	}
	st, err := s.Dataplane()["IPv4Unnumbered"].State(ctx, model.Object{"IntfRef": "fpPort1", "Interface": "Loopback1"})
	if err != nil || st["IpAddr"] != "10.255.0.1/32" {
		t.Errorf("the state %v %v, want IpAddr 10.255.0.1/32", st, err)
	}
}
