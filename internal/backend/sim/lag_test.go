package sim

import (
	"testing"

	"github.com/swmgr/swmgr/internal/model"
)

// TestLAGMembersShareTheLAGsSystemId: every member of a LAG announces the
// LAG's one LACP system id (as a bond's members carry the bond's): the
// SystemIdMac configured, else the LAG's own MAC, its first member's.
func TestLAGMembersShareTheLAGsSystemId(t *testing.T) {
	for _, tt := range []struct {
		name, systemIdMac, want string
	}{
		{"own MAC", "00-00-00-00-00-00", ""},
		{"configured", "02-00-00-00-00-07", "02:00:00:00:00:07"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			s := New(Options{Ports: 4})
			lag := model.Builtin().Lookup(model.Config, "LaPortChannel").Defaults()
			lag["IntfRef"], lag["IntfRefList"], lag["SystemIdMac"] = "PortChannel1", []string{"fpPort3", "fpPort2"}, tt.systemIdMac
			s.mu.Lock()
			s.applied["LaPortChannel"] = map[string]model.Object{"PortChannel1": lag}
			for i, p := range []string{"fpPort2", "fpPort3"} {
				s.ports[p] = &portState{ifIndex: int64(i + 2), mac: mac(i+2, 0), operUp: true}
			}
			want := tt.want
			if want == "" {
				want = mac(3, 0)
			}
			s.mu.Unlock()
			members, err := s.lagMembers(ctx)
			if err != nil {
				t.Fatal(err)
			}
			if len(members) != 2 {
				t.Fatalf("members %v", members)
			}
			for _, m := range members {
				if m["SystemId"] != want {
					t.Errorf("member %s: SystemId %v, want the LAG's %s", m["IntfRef"], m["SystemId"], want)
				}
			}
		})
	}
}
