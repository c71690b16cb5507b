package api

import (
	"strconv"
	"strings"
	"testing"

	"github.com/swmgr/swmgr/internal/model"
)

// withoutOverlapCheck is the builtin model as a swmgr without the
// overlapping-subnet constraint had it: a store it wrote may hold
// revisions with overlapping subnets.
func withoutOverlapCheck(t *testing.T) *model.Registry {
	kinds := model.Builtin().Kinds()
	for _, k := range kinds {
		if k.Name == "IPv4Intf" {
			k.Constraints = nil
		}
	}
	reg, err := model.NewRegistry(kinds...)
	if err != nil {
		t.Fatal(err)
	}
	return reg
}

// TestOverlappingSubnetsRefused: an IPv4 interface whose subnet overlaps
// another's in the same VRF is a 409 naming both, on every path that
// changes configuration (a write, its dry run, a staged edit, a candidate
// commit, a rollback and its dry run), and the store is byte-identical
// after each; AllowOverlap on one of them, or another VRF, lets it be.
func TestOverlappingSubnetsRefused(t *testing.T) {
	dir := t.TempDir()
	// A store written before the check: revision R held 10.0.0.1/31 on
	// fpPort3 and 10.0.0.0/31 on fpPort6; then fpPort6's was deleted.
	old := newAPIHarnessWith(t, dir, withoutOverlapCheck(t))
	ts := &txnServer{t: t, url: old.base, client: old.client, st: old.st, eng: old.eng}
	for _, body := range []string{`{"IntfRef":"fpPort3","IpAddr":"10.0.0.1/31"}`, `{"IntfRef":"fpPort6","IpAddr":"10.0.0.0/31"}`} {
		if code, b, _ := ts.do("POST", "/config/IPv4Intf", body); code != 201 {
			t.Fatalf("seed %s: %d %v", body, code, b)
		}
	}
	overlapRev := old.eng.Revision()
	if code, b, _ := ts.do("DELETE", "/config/IPv4Intf?IntfRef=fpPort6", ``); code != 200 {
		t.Fatalf("seed delete: %d %v", code, b)
	}
	old.srv.Close()
	old.eng.Close()
	old.st.Close()

	h := newAPIHarnessWith(t, dir, model.Builtin())
	s := &txnServer{t: t, url: h.base, client: h.client, st: h.st, eng: h.eng}
	// A candidate whose staged edit was fine when staged, and overlaps by
	// the time it is committed.
	code, body, _ := s.do("POST", "/candidates", `{}`)
	if code != 201 {
		t.Fatalf("candidate: %d %v", code, body)
	}
	cand := body["CandidateId"].(string)
	if code, b, _ := s.do("POST", "/candidates/"+cand+"/config/IPv4Intf", `{"IntfRef":"fpPort7","IpAddr":"10.7.0.1/24"}`); code != 201 {
		t.Fatalf("stage: %d %v", code, b)
	}
	if code, b, _ := s.do("POST", "/config/IPv4Intf", `{"IntfRef":"fpPort8","IpAddr":"10.7.0.130/25"}`); code != 201 {
		t.Fatalf("direct: %d %v", code, b)
	}
	code, body, _ = s.do("POST", "/candidates", `{}`)
	if code != 201 {
		t.Fatalf("candidate 2: %d %v", code, body)
	}
	cand2 := body["CandidateId"].(string)

	rev := strconv.FormatUint(overlapRev, 10)
	rows := []struct{ name, method, path, body, names string }{
		{"write", "POST", "/config/IPv4Intf", `{"IntfRef":"fpPort6","IpAddr":"10.0.0.0/31"}`, "10.0.0.0/31 on fpPort6 overlaps 10.0.0.1/31 on fpPort3"},
		{"write of a wider subnet", "POST", "/config/IPv4Intf", `{"IntfRef":"fpPort6","IpAddr":"10.0.0.9/16"}`, "10.0.0.9/16 on fpPort6 overlaps 10.0.0.1/31 on fpPort3"},
		{"update into an overlap", "PATCH", "/config/IPv4Intf", `{"IntfRef":"fpPort8","IpAddr":"10.0.0.5/29"}`, "10.0.0.5/29 on fpPort8 overlaps 10.0.0.1/31 on fpPort3"},
		{"dry run", "POST", "/config/IPv4Intf?dry_run=true", `{"IntfRef":"fpPort6","IpAddr":"10.0.0.0/31"}`, "overlaps 10.0.0.1/31 on fpPort3"},
		{"staged edit", "POST", "/candidates/" + cand2 + "/config/IPv4Intf", `{"IntfRef":"fpPort6","IpAddr":"10.0.0.0/31"}`, "overlaps 10.0.0.1/31 on fpPort3"},
		{"candidate commit", "POST", "/candidates/" + cand + "/commit", `{}`, "10.7.0.1/24 on fpPort7 overlaps 10.7.0.130/25 on fpPort8"},
		{"candidate commit dry run", "POST", "/candidates/" + cand + "/commit?dry_run=true", `{}`, "10.7.0.1/24 on fpPort7 overlaps 10.7.0.130/25 on fpPort8"},
		{"rollback", "POST", "/action/Rollback", `{"Revision":` + rev + `}`, "on fpPort6 overlaps 10.0.0.1/31 on fpPort3"},
		{"rollback dry run", "POST", "/action/Rollback?dry_run=true", `{"Revision":` + rev + `}`, "on fpPort6 overlaps 10.0.0.1/31 on fpPort3"},
	}
	for _, r := range rows {
		before := s.dump()
		code, body, _ := s.do(r.method, r.path, r.body)
		msg, _ := body["Result"].(string)
		if code != 409 || !strings.Contains(msg, r.names) || !strings.Contains(msg, "AllowOverlap") {
			t.Errorf("%s: %d %q, want 409 naming %q and AllowOverlap", r.name, code, msg, r.names)
		}
		if after := s.dump(); string(after) != string(before) {
			t.Errorf("%s: the store changed", r.name)
		}
	}
	// Where the operator means it, or in another VRF, it is allowed.
	for _, body := range []string{
		`{"IntfRef":"fpPort6","IpAddr":"10.0.0.0/31","AllowOverlap":true}`,
	} {
		if code, b, _ := s.do("POST", "/config/IPv4Intf", body); code != 201 {
			t.Errorf("%s: %d %v", body, code, b)
		}
	}
	if code, b, _ := s.do("POST", "/config/Vrf", `{"Vrf":"red"}`); code != 201 {
		t.Fatalf("vrf: %d %v", code, b)
	}
	if code, b, _ := s.do("POST", "/config/IPv4Intf", `{"IntfRef":"fpPort5","IpAddr":"10.7.0.2/24","Vrf":"red"}`); code != 201 {
		t.Errorf("another VRF: %d %v", code, b)
	}
}
