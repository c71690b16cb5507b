package cli

import (
	"strings"
	"testing"
)

// TestClearMacAddressTable: `clear mac address-table`, an EOS habit, runs
// ClearMacTable at apply with the fields typed after it; a LAG the switch
// lacks fails the apply with the server's 404, naming it.
func TestClearMacAddressTable(t *testing.T) {
	srv := startServer(t)
	for _, c := range []struct {
		line, want string
		fails      bool
	}{
		{"clear mac address-table VlanId 10 IntfRef fpPort1", "sdk:executeClearMacTable(VlanId=10,IntfRef=fpPort1) result: SUCCESS", false},
		{"clear mac address-table", "sdk:executeClearMacTable() result: SUCCESS", false},
		{"clear mac address-table IntfRef PortChannel9", "FAILED: 404 IntfRef: PortChannel9 is no port or LAG of this switch", true},
	} {
		out, err := run(t, srv, "enable\nconfig\n"+c.line+"\napply\n")
		if (err != nil) != c.fails || !strings.Contains(out, c.want) {
			t.Errorf("%s: %v, want %q in\n%s", c.line, err, c.want, out)
		}
	}
}
