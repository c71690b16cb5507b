package candidates

import (
	"bytes"
	"fmt"
	"net/http"
	"strings"
	"testing"

	"github.com/swmgr/swmgr/internal/backend"
	"github.com/swmgr/swmgr/internal/engine"
	"github.com/swmgr/swmgr/internal/engine/enginetest"
	"github.com/swmgr/swmgr/internal/model"
)

func untagged(vlan int64, ports ...string) model.Object {
	return model.Object{"VlanId": vlan, "UntagIntfList": ports}
}

// A rule across objects (a port is the untagged member of one VLAN) is
// checked at staging on the candidate's resulting configuration, so a
// candidate that breaks it is refused whatever the order of its edits,
// staged one by one or in one request; and a list whose intermediate
// steps break it but whose result does not is accepted.
func TestStagingRefusesACrossObjectViolationInAnyOrder(t *testing.T) {
	f := newFixture(t, t.TempDir())
	a := f.Edit(backend.Create, "Vlan", untagged(10, "fpPort1"))
	b := f.Edit(backend.Create, "Vlan", untagged(20, "fpPort1"))
	for _, order := range [][]engine.Edit{{a, b}, {b, a}} {
		id := f.candidate()
		f.stage(id, order[0])
		_, err := f.c.Stage(bg, id, order[1])
		if enginetest.Status(err) != http.StatusConflict || !strings.Contains(err.Error(), "untagged member") {
			t.Errorf("staging VLAN %v after VLAN %v one by one: %v; want a 409 naming the rule", order[1].Fields["VlanId"], order[0].Fields["VlanId"], err)
		}
		id = f.candidate()
		before := f.Dump()
		_, err = f.c.StageMany(bg, id, []engine.Edit{order[0], order[1]})
		if enginetest.Status(err) != http.StatusConflict || !strings.Contains(err.Error(), "untagged member") {
			t.Errorf("staging VLANs %v and %v in one request: %v; want a 409 naming the rule", order[0].Fields["VlanId"], order[1].Fields["VlanId"], err)
		}
		if !bytes.Equal(before, f.Dump()) {
			t.Errorf("a refused staging changed the store")
		}
	}
	// Through a violation to a valid result: VLAN 10 gives the port up.
	id := f.candidate()
	fix := f.Edit(backend.Update, "Vlan", untagged(10, "fpPort2"))
	if _, err := f.c.StageMany(bg, id, []engine.Edit{a, b, fix}); err != nil {
		t.Fatalf("staging a list whose result keeps the rule: %v", err)
	}
	if _, err := f.c.Commit(bg, id, engine.Request{}); err != nil {
		t.Fatalf("commit: %v", err)
	}
}

// A list with one bad edit stages nothing: the store is byte-identical, and
// the error names the edit.
func TestStagingManyIsAllOrNothing(t *testing.T) {
	f := newFixture(t, t.TempDir())
	id := f.candidate()
	f.stage(id, f.Edit(backend.Create, "NtpServer", model.Object{"IpAddr": "192.0.2.1"}))
	before := f.Dump()
	var edits []engine.Edit
	for i := range 50 {
		edits = append(edits, f.Edit(backend.Create, "NtpServer", model.Object{"IpAddr": fmt.Sprintf("198.51.100.%d", i+1)}))
	}
	for _, bad := range []struct {
		name   string
		ed     engine.Edit
		status int
		says   string
	}{
		// Found when the edit is resolved: the error names it.
		{"a duplicate of edit 3", f.Edit(backend.Create, "NtpServer", model.Object{"IpAddr": "198.51.100.4"}), http.StatusConflict, "Edits[37]"},
		// Found by the check phase on the result.
		{"a dangling reference", f.Edit(backend.Create, "IPv4Intf", model.Object{"IntfRef": "fpPort1", "IpAddr": "10.0.0.1/24", "Vrf": "nosuch"}), http.StatusBadRequest, "nosuch"},
	} {
		edits[37] = bad.ed
		_, err := f.c.StageMany(bg, id, edits)
		if enginetest.Status(err) != bad.status || !strings.Contains(err.Error(), bad.says) {
			t.Fatalf("staging a list with %s at 37: %v; want a %d saying %s", bad.name, err, bad.status, bad.says)
		}
		if !bytes.Equal(before, f.Dump()) {
			t.Fatalf("a list refused for %s changed the store", bad.name)
		}
	}
	// The candidate's kept view was not left half-changed: the good list
	// stages and commits exactly its edits.
	edits[37] = f.Edit(backend.Create, "NtpServer", model.Object{"IpAddr": "203.0.113.1"})
	if _, err := f.c.StageMany(bg, id, edits); err != nil {
		t.Fatal(err)
	}
	info, _ := f.c.Info(id)
	if info.Edits != 51 {
		t.Fatalf("candidate has %d edits; want 51", info.Edits)
	}
	out, err := f.c.Commit(bg, id, engine.Request{})
	if err != nil || out.Changes != 51 {
		t.Fatalf("commit: %v, %v changes; want 51", err, out)
	}
}

// Staging is checked outside the writer: while a staging is being checked
// (held in the middle by the hook), direct writes commit.
func TestDirectWritesAreNotHeldBehindStaging(t *testing.T) {
	f := newFixture(t, t.TempDir())
	id := f.candidate()
	var edits []engine.Edit
	for i := range 2000 {
		edits = append(edits, f.Edit(backend.Create, "NtpServer", model.Object{"IpAddr": fmt.Sprintf("10.%d.%d.1", i/250, i%250)}))
	}
	inside, release := make(chan struct{}), make(chan struct{})
	stageHook = func() { close(inside); <-release }
	defer func() { stageHook = nil }()
	staged := make(chan error, 1)
	go func() { _, err := f.c.StageMany(bg, id, edits); staged <- err }()
	<-inside
	for i := range 20 {
		f.MustApply(f.Edit(backend.Create, "NtpServer", model.Object{"IpAddr": fmt.Sprintf("192.0.2.%d", i+1)}))
	}
	close(release)
	if err := <-staged; err != nil {
		t.Fatal(err)
	}
	info, _ := f.c.Info(id)
	if info.Edits != len(edits) {
		t.Fatalf("candidate has %d edits; want %d", info.Edits, len(edits))
	}
}
