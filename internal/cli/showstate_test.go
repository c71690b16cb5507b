package cli

import (
	"bytes"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/swmgr/swmgr/client"
	"github.com/swmgr/swmgr/internal/model"
)

// TestWriteFittedFits: however wide the cells and however many columns, a
// table is no wider than its limit; cells wrap rather than being cut, and
// columns that cannot fit are left out and counted.
func TestWriteFittedFits(t *testing.T) {
	for _, cols := range []int{1, 3, 8, 20, 40} {
		header := make([]string, cols)
		row := make([]string, cols)
		for i := range header {
			header[i] = strings.Repeat("H", 5+i%7)
			row[i] = strings.Repeat("word ", 3+i*3)
		}
		var b bytes.Buffer
		dropped := writeFitted(&b, header, [][]string{row, row}, true, 120)
		for _, l := range strings.Split(b.String(), "\n") {
			if n := utf8.RuneCountInString(l); n > 120 {
				t.Errorf("%d columns: a line of %d: %q", cols, n, l)
			}
		}
		kept := cols - dropped
		if !strings.Contains(b.String(), header[kept-1]) || (cols <= 8 && dropped > 0) {
			t.Errorf("%d columns: %d dropped:\n%s", cols, dropped, b.String())
		}
	}
}

// TestValueHints: the form of a value comes from the field's type, range
// and format.
func TestValueHints(t *testing.T) {
	reg := model.Builtin()
	for _, tc := range []struct{ kind, field, want string }{
		{"BGPGlobal", "ASNum", "<1-4294967295>"},
		{"BGPGlobal", "RouterId", "<A.B.C.D>"},
		{"BGPv4Neighbor", "NeighborAddress", "<A.B.C.D>"},
		{"IPv4Intf", "IpAddr", "<A.B.C.D/M>"},
		{"Port", "Mtu", "<68-9216>"},
		{"Port", "Duplex", "<Half_Duplex|Full_Duplex>"},
		{"NtpServer", "IpAddr", "<A.B.C.D|host name>"},
	} {
		if got := valueHint(reg.Lookup(model.Config, tc.kind).Field(tc.field)); got != tc.want {
			t.Errorf("%s.%s: %q, want %q", tc.kind, tc.field, got, tc.want)
		}
	}
}

// TestNoticeNamesTouchedEntries: a commit of someone else is one line,
// naming the pending entries whose objects it changed; the session's own
// commits are none.
func TestNoticeNamesTouchedEntries(t *testing.T) {
	s := &Session{cat: newCatalog(model.Builtin(), nil), own: map[uint64]bool{7: true}}
	ntp := s.cat.reg.Lookup(model.Config, "NtpServer")
	s.pending = []*entry{{kind: ntp, op: opCreate, key: model.Object{"IpAddr": "192.0.2.20"}, cmd: "ntp server 192.0.2.20"}}
	ev := client.Event{Revision: client.Revision{Revision: 8, User: "alice", Source: "rest", Changes: []client.Change{
		{Kind: "NtpServer", Op: "create", After: map[string]any{"IpAddr": "192.0.2.20"}},
	}}}
	got := s.Notice(ev)
	want := "% Notice: revision 8 is a commit by alice (rest): 1 change; it changed what your pending ntp server 192.0.2.20 change (apply says whether they still apply)"
	if got != want {
		t.Errorf("notice:\n%s\nwant\n%s", got, want)
	}
	ev.Revision.Revision, ev.Revision.Source = 9, "confirm-timeout"
	ev.Revision.Changes[0].After = map[string]any{"IpAddr": "192.0.2.99"}
	if got := s.Notice(ev); !strings.Contains(got, "is a commit not confirmed in time, rolled back by its timer: 1 change; your pending config applies on top of it") {
		t.Errorf("timer rollback: %s", got)
	}
	ev.Revision.Revision = 7
	if got := s.Notice(ev); got != "" {
		t.Errorf("own commit: %q", got)
	}
}
