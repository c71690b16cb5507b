package test

import (
	"strings"
	"testing"
)

// A confirmed commit that deletes a User could never be
// rolled back (the password is not kept) and locked out every write. It is
// refused, changes nothing, and writes go on; the same deletion without
// Confirm works.
func TestConfirmedDeleteOfAUserRefused(t *testing.T) {
	s := startServer(t, "")
	s.expect(t, 201, "POST", "/config/User", `{"Name":"bobconfirm","Group":"operator","Password":"bob-pass-123"}`)
	cand := s.expect(t, 201, "POST", "/candidates", `{"Comment":"drop bob"}`).str("CandidateId")
	s.expect(t, 200, "DELETE", "/candidates/"+cand+"/config/User?Name=bobconfirm", "")
	for _, q := range []string{"", "?dry_run=true"} {
		r := s.expect(t, 400, "POST", "/candidates/"+cand+"/commit"+q, `{"Confirm":2}`)
		if !strings.Contains(string(r.raw), `"Field":"Confirm"`) || !strings.Contains(string(r.raw), "bobconfirm") {
			t.Errorf("refusal%s: %s", q, r)
		}
	}
	s.expect(t, 200, "GET", "/config/User?Name=bobconfirm", "")
	s.expect(t, 201, "POST", "/config/NtpServer", `{"IpAddr":"192.0.2.31"}`) // no confirmation pending
	s.expect(t, 200, "POST", "/candidates/"+cand+"/commit", `{}`)
	s.expect(t, 404, "GET", "/config/User?Name=bobconfirm", "")
	s.expect(t, 201, "POST", "/config/NtpServer", `{"IpAddr":"192.0.2.32"}`)
	// Other confirmed commits work as before.
	cand = s.expect(t, 201, "POST", "/candidates", `{}`).str("CandidateId")
	s.expect(t, 201, "POST", "/candidates/"+cand+"/config/NtpServer", `{"IpAddr":"192.0.2.33"}`)
	r := s.expect(t, 200, "POST", "/candidates/"+cand+"/commit", `{"Confirm":30}`)
	s.expect(t, 200, "POST", "/revisions/"+jsonOf(r.body["Revision"])+"/confirm", "")
	s.expect(t, 201, "POST", "/config/NtpServer", `{"IpAddr":"192.0.2.34"}`)
}

// The fate of a commit awaiting confirmation (confirm, cancel, a new
// deadline) is for the roles of the kinds it changed, on every front
// door: an operator reads the gNMI commit id of an admin's commit in
// /revisions/pending, yet cannot roll back (nor keep) the admin's new
// User and TACACS+ server with the gNMI commit extension, nor confirm it
// over REST. Of a commit of an operator's kinds, the operator decides.
func TestOperatorCannotDecideAnAdminsConfirmedCommit(t *testing.T) {
	dir := t.TempDir()
	httpsAddr := freeAddr(t)
	g := startGNMIServer(t, dir, "--https", httpsAddr)
	g.expect(t, 201, "POST", "/config/User", `{"Name":"op1","Group":"operator","Password":"operator-pass-1"}`)
	hc := httpsClient(t, dir, "")
	secure := "https://" + httpsAddr + "/public/v1"
	set := func(user, password, id, action, updates string) (string, bool) {
		return g.run(t, user, password, "-set", "-proto", updates+` extension:<commit:<id:"`+id+`" `+action+`>>`)
	}
	admin := func(id, action, updates string) {
		t.Helper()
		if out, ok := set("admin", blackBoxAdminPassword, id, action, updates); !ok {
			t.Fatalf("the admin's %s: %s", action, out)
		}
	}
	admin("adm", `commit:<rollback_duration:<seconds:600>>`,
		`update:<path:<origin:"swmgr" elem:<name:"config"> elem:<name:"User" key:<key:"Name" value:"bob">>> val:<json_val:"{\"Group\":\"admin\",\"Password\":\"bob-pass-123\"}">> `+
			`update:<path:<origin:"swmgr" elem:<name:"config"> elem:<name:"Tacacs" key:<key:"ServerIp" value:"192.0.2.49">>> val:<json_val:"{}">>`)
	code, pending := send(t, hc, "GET", secure+"/revisions/pending", "op1", "operator-pass-1", "")
	if code != 200 || !strings.Contains(pending, `"Comment":"gNMI commit id adm"`) {
		t.Fatalf("what the operator reads of the pending commit: %d %s", code, pending)
	}
	for _, action := range []string{`cancel:<>`, `set_rollback_duration:<rollback_duration:<seconds:1>>`, `confirm:<>`} {
		if out, ok := set("op1", "operator-pass-1", "adm", action, ""); ok || !strings.Contains(out, "code=PermissionDenied") {
			t.Errorf("the operator's %s of the admin's commit: %s", action, out)
		}
	}
	if now := g.expect(t, 200, "GET", "/revisions/pending", "").raw; !strings.Contains(string(now), `"Comment":"gNMI commit id adm"`) {
		t.Errorf("the admin's commit no longer awaits confirmation: %s", now)
	}
	for _, path := range []string{"/config/User?Name=bob", "/config/Tacacs?ServerIp=192.0.2.49"} {
		if r := g.do(t, "GET", path, ""); r.code != 200 {
			t.Errorf("GET %s after the operator's tries: %s", path, r)
		}
	}
	if out, ok := set("admin", blackBoxAdminPassword, "adm", `confirm:<>`, ""); !ok {
		t.Errorf("the admin's confirm: %s", out)
	}

	// REST: the admin's confirmed commit of a TACACS+ server.
	cand := g.expect(t, 201, "POST", "/candidates", `{}`).str("CandidateId")
	g.expect(t, 201, "POST", "/candidates/"+cand+"/config/Tacacs", `{"ServerIp":"192.0.2.50"}`)
	rev := jsonOf(g.expect(t, 200, "POST", "/candidates/"+cand+"/commit", `{"Confirm":600}`).body["Revision"])
	if code, body := send(t, hc, "POST", secure+"/revisions/"+rev+"/confirm", "op1", "operator-pass-1", ""); code != 403 || !strings.Contains(body, "only admins may change Tacacs objects") {
		t.Errorf("the operator's REST confirm of the admin's commit: %d %s", code, body)
	}
	g.expect(t, 200, "POST", "/revisions/"+rev+"/confirm", "")

	// The operator's own commit: the operator cancels it.
	if out, ok := set("op1", "operator-pass-1", "op", `commit:<rollback_duration:<seconds:600>>`, `update:<path:<origin:"swmgr" `+ntpPath+`> val:<json_val:"{}">>`); !ok {
		t.Fatalf("the operator's commit: %s", out)
	}
	if out, ok := set("op1", "operator-pass-1", "op", `cancel:<>`, ""); !ok {
		t.Fatalf("the operator's cancel of its commit: %s", out)
	}
	g.expect(t, 404, "GET", "/config/NtpServer?IpAddr=192.0.2.10", "")
}

// POST /revisions/<rev>/cancel rolls a confirmed commit back now, in a
// revision of its own written in the config log; it is held to the rule
// of confirm (an operator may not undo an admin's new User: 403, the
// commit still awaits), and a revision that awaits nothing is a 409 (one
// not made yet a 404).
func TestRESTCancelOfAConfirmedCommit(t *testing.T) {
	dir := t.TempDir()
	httpsAddr := freeAddr(t)
	s := startServer(t, dir, "--https", httpsAddr)
	s.expect(t, 201, "POST", "/config/User", `{"Name":"op2","Group":"operator","Password":"operator-pass-2"}`)
	hc := httpsClient(t, dir, "")
	secure := "https://" + httpsAddr + "/public/v1"
	commitConfirmed := func(kind, body string) string {
		t.Helper()
		cand := s.expect(t, 201, "POST", "/candidates", `{}`).str("CandidateId")
		s.expect(t, 201, "POST", "/candidates/"+cand+"/config/"+kind, body)
		return jsonOf(s.expect(t, 200, "POST", "/candidates/"+cand+"/commit", `{"Confirm":600}`).body["Revision"])
	}

	// The admin's new TACACS+ server: the operator may not cancel it.
	rev := commitConfirmed("Tacacs", `{"ServerIp":"192.0.2.51","Secret":"cancel-secret-9"}`)
	if code, body := send(t, hc, "POST", secure+"/revisions/"+rev+"/cancel", "op2", "operator-pass-2", ""); code != 403 || !strings.Contains(body, "only admins may change Tacacs objects") {
		t.Errorf("the operator's cancel of the admin's commit: %d %s", code, body)
	}
	if p := s.expect(t, 200, "GET", "/revisions/pending", "").body; jsonOf(p["Revision"]) != rev {
		t.Errorf("after the operator's cancel, pending: %v; want revision %s still awaiting", p, rev)
	}
	s.expect(t, 200, "GET", "/config/Tacacs?ServerIp=192.0.2.51", "")
	// The admin cancels it: the server is gone at once, nothing awaits.
	r := s.expect(t, 200, "POST", "/revisions/"+rev+"/cancel", "")
	back := jsonOf(r.body["RollbackRevision"])
	if jsonOf(r.body["Revision"]) != rev || back == "0" || back == rev {
		t.Errorf("cancel answered %s", r)
	}
	s.expect(t, 404, "GET", "/config/Tacacs?ServerIp=192.0.2.51", "")
	if p := s.expect(t, 200, "GET", "/revisions/pending", "").body; p["Awaiting"] != false {
		t.Errorf("pending after the cancel: %v", p)
	}
	made := s.expect(t, 200, "GET", "/revisions/"+back, "")
	if made.str("Comment") != "revision "+rev+" cancelled" || !strings.Contains(string(made.raw), `"192.0.2.51"`) {
		t.Errorf("the rollback's revision: %s", made)
	}
	if log := string(s.expect(t, 200, "GET", "/state/ConfigLogs", "").raw); !strings.Contains(log, `{\"Cancel\":`+rev+`}`) {
		t.Errorf("the config log has no cancel of %s:\n%s", rev, tail(log, 2000))
	}
	if strings.Contains(string(made.raw), "cancel-secret-9") {
		t.Errorf("the rollback's revision shows the secret: %s", made)
	}

	// Nothing awaits now: 409 for the cancelled revision, 404 for one not made.
	s.expect(t, 409, "POST", "/revisions/"+rev+"/cancel", "")
	s.expect(t, 404, "POST", "/revisions/999999/cancel", "")
	// Another revision awaits: cancelling this one is a 409, the other stays.
	other := commitConfirmed("NtpServer", `{"IpAddr":"192.0.2.35"}`)
	s.expect(t, 409, "POST", "/revisions/"+rev+"/cancel", "")
	// The operator decides a commit of an operator's kinds.
	if code, body := send(t, hc, "POST", secure+"/revisions/"+other+"/cancel", "op2", "operator-pass-2", ""); code != 200 {
		t.Errorf("the operator's cancel of an NtpServer commit: %d %s", code, body)
	}
	s.expect(t, 404, "GET", "/config/NtpServer?IpAddr=192.0.2.35", "")
	s.expect(t, 201, "POST", "/config/NtpServer", `{"IpAddr":"192.0.2.36"}`) // writes go on
}
