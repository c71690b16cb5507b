package engine

import (
	"fmt"
	"runtime"
	"testing"

	"github.com/swmgr/swmgr/internal/backend"
	"github.com/swmgr/swmgr/internal/model"
	"github.com/swmgr/swmgr/internal/store"
)

// TestReplaceEditsSmall: the edits of a replace of n objects are computed
// in little memory (a restore's 300,000): one sorted list of the objects
// by key, no map of the running and of the wanted objects, and the edits
// handed over one at a time, never held together. The
// edits are those of the maps: creates of the wanted objects not running,
// updates of those that differ, deletes of the others, in key order.
func TestReplaceEditsSmall(t *testing.T) {
	const n = 20000
	f := newFixture(t, t.TempDir())
	k := f.kind("NtpServer")
	ip := func(i int) string { return fmt.Sprintf("10.%d.%d.%d", i>>16, i>>8&255, i&255) }
	for _, i := range []int{1, 2, n + 5} { // kept, changed, deleted
		f.mustApply(f.edit(backend.Create, "NtpServer", model.Object{"IpAddr": ip(i)}))
	}
	wanted := make([]model.Object, 0, n)
	for i := range n {
		o := k.Defaults()
		o["IpAddr"] = ip(i)
		if i == 2 {
			o["MinPoll"] = int64(5)
		}
		wanted = append(wanted, o)
	}
	var creates, updates, deletes int
	count := func(ed Edit) error {
		if ed.Kind != k {
			return nil
		}
		switch ed.Op {
		case model.Create:
			creates++
		case model.Update:
			updates++
			if ed.Target.Key["IpAddr"] != ip(2) {
				t.Errorf("update of %v", ed.Target.Key)
			}
		case model.Delete:
			deletes++
			if ed.Target.Key["IpAddr"] != ip(n+5) {
				t.Errorf("delete of %v", ed.Target.Key)
			}
		}
		return nil
	}
	var before, after runtime.MemStats
	err := f.st.View(func(tx store.Txn) error {
		v := newView(f.e, tx)
		runtime.ReadMemStats(&before)
		err := f.e.replaceEdits(v, Replacement{Objects: map[string][]model.Object{"NtpServer": wanted}}, count)
		runtime.ReadMemStats(&after)
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
	if creates != n-2 || updates != 1 || deletes != 1 {
		t.Fatalf("%d creates, %d updates, %d deletes; want %d, 1, 1", creates, updates, deletes, n-2)
	}
	// The edits are handed over one at a time: what is allocated is the
	// kind's list of objects by key (~60 bytes an object), not an Edit
	// (~110 bytes) per object, nor maps by key (~5 times that).
	if per := (after.TotalAlloc - before.TotalAlloc) / n; per > 100 {
		t.Fatalf("replaceEdits allocated %d bytes per object", per)
	}
}

// TestReplaceKeepsDiscoveredFieldsOfAbsentPorts: a replace that does not
// list a port puts its settings back to the model's defaults, but not what
// the switch reports of it (its media, its speed), which the model's
// defaults do not know.
func TestReplaceKeepsDiscoveredFieldsOfAbsentPorts(t *testing.T) {
	f := newFixture(t, t.TempDir())
	f.mustApply(f.edit(backend.Update, "Port", model.Object{"IntfRef": "fpPort1", "Mtu": int64(9000), "Speed": int64(10000), "MediaType": "SFP+ DAC"}))
	var edits []Edit
	err := f.st.View(func(tx store.Txn) error {
		return f.e.replaceEdits(newView(f.e, tx), Replacement{Objects: map[string][]model.Object{}}, func(ed Edit) error {
			edits = append(edits, ed)
			return nil
		})
	})
	if err != nil {
		t.Fatal(err)
	}
	var port *Edit
	for i, ed := range edits {
		if ed.Kind.Name == "Port" && ed.Target.Key["IntfRef"] == "fpPort1" {
			port = &edits[i]
		}
	}
	if port == nil {
		t.Fatalf("no edit of fpPort1 in %d edits", len(edits))
	}
	for field, want := range map[string]any{"Mtu": f.kind("Port").Field("Mtu").Default, "Speed": int64(10000), "MediaType": "SFP+ DAC"} {
		if got := port.Fields[field]; got != want {
			t.Errorf("fpPort1 %s after the replace = %v, want %v", field, got, want)
		}
	}
}
