package test

// Every operation on every config kind, through the real binary: create,
// get by key (body and query), get by id, get all, update by key and by id,
// delete by key and by id; singletons and ports; breakout; state reads;
// secrets never read back; the config log.

import (
	"encoding/json"
	"net/url"
	"strings"
	"testing"
)

// kindCase describes one creatable kind for the CRUD walk.
type kindCase struct {
	kind    string
	create  string // body of the create
	key     string // query string naming the object
	update  string // fields to change (without the key)
	check   string // a field the update changes
	want    any    // its value after the update
	secrets []string
}

func creatableKinds() []kindCase {
	return []kindCase{
		{"Vrf", `{"Vrf":"blue","Name":"blue vrf"}`, "Vrf=blue", `{"Name":"customer blue"}`, "Name", "customer blue", nil},
		{"IPv4Intf", `{"IntfRef":"fpPort3","IpAddr":"10.3.0.1/24"}`, "IntfRef=fpPort3", `{"AdminState":"DOWN"}`, "AdminState", "DOWN", nil},
		{"BGPVrf", `{"Name":"default","UseMultiplePaths":true}`, "Name=default", `{"EBGPMaxPaths":4}`, "EBGPMaxPaths", 4.0, nil},
		{"BGPv4Neighbor", `{"NeighborAddress":"10.0.0.2","PeerAS":"65002","AuthPassword":"md5-secret"}`, "NeighborAddress=10.0.0.2", `{"Description":"spine 1"}`, "Description", "spine 1", []string{"md5-secret"}},
		{"Span", `{"SpanSessionName":"tap1","DstIntfRef":"fpPort4","SrcIntfRefList":["fpPort1","fpPort2"]}`, "SpanSessionName=tap1", `{"MirrorDir":"RX"}`, "MirrorDir", "RX", nil},
		{"User", `{"Name":"carol","Password":"carol-password","Group":"operator"}`, "Name=carol", `{"DefaultShell":"Bash"}`, "DefaultShell", "Bash", []string{"carol-password"}},
		{"ConfigArchiveServer", `{"IpAddr":"archive.example.com","UserName":"backup","Password":"archive-secret","Nonce":"n1","Passphrase":"pass-secret","TimeStamp":"append"}`, "IpAddr=archive.example.com", `{"Interval":60}`, "Interval", 60.0, []string{"archive-secret", "pass-secret"}},
		{"NtpServer", `{"IpAddr":"ntp1.example.com","MinPoll":4}`, "IpAddr=ntp1.example.com", `{"MaxPoll":12}`, "MaxPoll", 12.0, nil},
	}
}

func withKey(kc kindCase, body string) string {
	q, _ := url.ParseQuery(kc.key)
	var m map[string]any
	json.Unmarshal([]byte(body), &m)
	for k := range q {
		m[k] = q.Get(k)
	}
	b, _ := json.Marshal(m)
	return string(b)
}

func TestEveryOperationOnEveryKind(t *testing.T) {
	p := startSwmgr(t, "", "--ports", "8")
	for _, kc := range creatableKinds() {
		t.Run(kc.kind, func(t *testing.T) {
			p.t = t
			c := p.must(201, "POST", "/config/"+kc.kind, kc.create)
			id := c.str("ObjectId")
			if id == "" || c.str("Result") != "Success" || c.hdr.Get("Location") != "/public/v1/config/"+kc.kind+"/"+id || c.hdr.Get("ETag") == "" {
				t.Fatalf("create reply %d %s %v", c.code, c.raw, c.hdr)
			}
			if c.str("Access-Control-Max_age") != "86400" || c.hdr.Get("Access-Control-Max-Age") != "86400" {
				t.Fatalf("create reply lacks the CORS entries: %s", c.raw)
			}
			// Reads: by key in the query, by key in a GET body, by id, in the list.
			byQuery := p.must(200, "GET", "/config/"+kc.kind+"?"+kc.key, "")
			byBody := p.must(200, "GET", "/config/"+strings.ToLower(kc.kind), withKey(kc, `{}`))
			byID := p.must(200, "GET", "/config/"+kc.kind+"/"+id, "")
			if string(byQuery.raw) != string(byID.raw) || string(byBody.raw) != string(byID.raw) || byID.str("ObjectId") != id {
				t.Fatalf("reads disagree:\n%s\n%s\n%s", byQuery.raw, byBody.raw, byID.raw)
			}
			for _, secret := range kc.secrets {
				if strings.Contains(string(byID.raw), secret) {
					t.Fatalf("a read returned the secret %q: %s", secret, byID.raw)
				}
			}
			found := false
			for _, o := range p.listAll("/config/"+kc.kind+"s", 1) {
				found = found || o["ObjectId"] == id
			}
			if !found {
				t.Fatal("the object is not in the get-all listing")
			}
			// The state form, by key, by id and all.
			st := p.must(200, "GET", "/state/"+kc.kind+"?"+kc.key, "")
			if st.str("ObjectId") != id || p.must(200, "GET", "/state/"+kc.kind+"/"+id, "").str("ObjectId") != id {
				t.Fatalf("state reads: %s", st.raw)
			}
			p.must(200, "GET", "/state/"+kc.kind+"s", "")
			// Update by key, then by id back again; then a no-op update.
			u := p.must(200, "PATCH", "/config/"+kc.kind, withKey(kc, kc.update))
			if u.str("ObjectId") != id {
				t.Fatalf("update reply %s", u.raw)
			}
			if got := p.must(200, "GET", "/config/"+kc.kind+"/"+id, "").object()[kc.check]; got != kc.want {
				t.Fatalf("%s after update = %v, want %v", kc.check, got, kc.want)
			}
			p.must(200, "PATCH", "/config/"+kc.kind+"/"+id, kc.update)
			// Delete by key (query) for half the kinds, by id for the others.
			if len(kc.kind)%2 == 0 {
				p.must(200, "DELETE", "/config/"+kc.kind+"?"+kc.key, "")
			} else {
				d := p.must(200, "DELETE", "/config/"+kc.kind+"/"+id, "")
				if d.str("ObjectId") != id || d.str("Result") != "Success" {
					t.Fatalf("delete reply %s", d.raw)
				}
			}
			p.must(404, "GET", "/config/"+kc.kind+"/"+id, "")
			p.must(404, "GET", "/config/"+kc.kind+"?"+kc.key, "")
			// Created again, then deleted by a JSON body.
			p.must(201, "POST", "/config/"+strings.ToUpper(kc.kind), kc.create)
			p.must(200, "DELETE", "/config/"+kc.kind, withKey(kc, `{}`))
		})
	}
	// Secrets never reached the config log; the log saw every write.
	p.t = t
	logRaw := string(p.must(200, "GET", "/state/ConfigLogs", "").raw)
	for _, kc := range creatableKinds() {
		for _, secret := range kc.secrets {
			if strings.Contains(logRaw, secret) {
				t.Fatalf("the config log holds %q", secret)
			}
		}
	}
	if !strings.Contains(logRaw, `\"AuthPassword\":\"******\"`) {
		t.Fatal("the config log does not show redacted secrets")
	}
}

func TestSingletonsAndPorts(t *testing.T) {
	p := startSwmgr(t, "", "--ports", "6")
	for _, kind := range []string{"SystemParam", "BGPGlobal"} {
		g := p.must(200, "GET", "/config/"+kind, "")
		if g.object()["Vrf"] != "default" {
			t.Fatalf("%s: %s", kind, g.raw)
		}
		for _, m := range []string{"POST", "DELETE"} {
			r := p.must(405, m, "/config/"+kind, "{}")
			if !strings.Contains(r.hdr.Get("Allow"), "PATCH") {
				t.Fatalf("%s %s: Allow %q", m, kind, r.hdr.Get("Allow"))
			}
		}
	}
	p.must(200, "PATCH", "/config/SystemParam", `{"Hostname":"leaf1","Timezone":"Europe/Paris"}`)
	p.must(200, "PATCH", "/config/BGPGlobal", `{"ASNum":"65001","RouterId":"10.0.0.1"}`)
	if o := p.must(200, "GET", "/config/SystemParam", "").object(); o["Hostname"] != "leaf1" || o["SwVersion"] == "" {
		t.Fatalf("SystemParam: %v", o)
	}
	if o := p.must(200, "GET", "/state/SystemParam", "").object(); o["Distro"] == "" || o["Kernel"] == "" || o["UpTime"] == "" {
		t.Fatalf("SystemParamState: %v", o)
	}
	if o := p.must(200, "GET", "/state/BGPGlobal", "").object(); o["AS"] != "65001" {
		t.Fatalf("BGPGlobalState: %v", o)
	}
	// Exactly the discovered ports.
	ports := p.listAll("/config/Ports", 4)
	if len(ports) != 6 {
		t.Fatalf("%d ports with --ports 6", len(ports))
	}
	p.must(405, "POST", "/config/Port", `{"IntfRef":"fpPort7"}`)
	p.must(405, "DELETE", "/config/Port", `{"IntfRef":"fpPort1"}`)
	// OperState follows AdminState.
	if o := p.must(200, "GET", "/state/Port?IntfRef=fpPort2", "").object(); o["OperState"] != "DOWN" {
		t.Fatalf("PortState before: %v", o)
	}
	p.must(200, "PATCH", "/config/Port", `{"IntfRef":"fpPort2","AdminState":"UP","Description":"uplink","speed":10000}`)
	if o := p.must(200, "GET", "/state/Port?IntfRef=fpPort2", "").object(); o["OperState"] != "UP" || o["NumUpEvents"] != 1.0 || o["Speed"] != 10000.0 {
		t.Fatalf("PortState after: %v", o)
	}
	// Breakout makes four 10G sub-ports; 1x40 removes them, not while used.
	p.must(200, "PATCH", "/config/Port", `{"IntfRef":"fpPort5","BreakOutMode":"4x10"}`)
	for _, sub := range []string{"fpPort5s1", "fpPort5s2", "fpPort5s3", "fpPort5s4"} {
		if o := p.must(200, "GET", "/config/Port?IntfRef="+sub, "").object(); o["Speed"] != 10000.0 {
			t.Fatalf("%s: %v", sub, o)
		}
	}
	if n := len(p.listAll("/config/Ports", 1024)); n != 10 {
		t.Fatalf("%d ports after breakout; want 10", n)
	}
	p.must(201, "POST", "/config/IPv4Intf", `{"IntfRef":"fpPort5s1","IpAddr":"10.5.1.1/31"}`)
	if st := p.must(200, "GET", "/state/IPv4Intf?IntfRef=fpPort5s1", "").object(); st["OperState"] != "DOWN" {
		t.Fatalf("IPv4IntfState on a down sub-port: %v", st)
	}
	r := p.must(409, "PATCH", "/config/Port", `{"IntfRef":"fpPort5","BreakOutMode":"1x40"}`)
	if !strings.Contains(r.str("Result"), "IPv4Intf") {
		t.Fatalf("409 does not name the user: %s", r.raw)
	}
	p.must(200, "DELETE", "/config/IPv4Intf?IntfRef=fpPort5s1", "")
	p.must(200, "PATCH", "/config/Port", `{"IntfRef":"fpPort5","BreakOutMode":"1x40"}`)
	p.must(404, "GET", "/config/Port?IntfRef=fpPort5s1", "")
	if n := len(p.listAll("/config/Ports", 1024)); n != 6 {
		t.Fatalf("%d ports after 1x40; want 6", n)
	}
}

func TestConfigLog(t *testing.T) {
	p := startSwmgr(t, "")
	p.must(201, "POST", "/config/NtpServer", `{"IpAddr":"10.0.0.1"}`)
	p.must(400, "POST", "/config/NtpServer", `{"IpAddr":"10.0.0.2","MinPoll":99}`)
	p.must(200, "PATCH", "/config/Port", `{"IntfRef":"fpPort1","AdminState":"UP"}`)
	entries := p.listAll("/state/ConfigLogs", 2)
	if len(entries) != 3 {
		t.Fatalf("%d log entries, want 3", len(entries))
	}
	var last float64
	for i, e := range entries {
		o := e["Object"].(map[string]any)
		if e["ObjectId"] != "" || o["SeqNum"].(float64) <= last || !strings.HasPrefix(o["UserAddr"].(string), "127.0.0.1:") || o["Time"] == "" {
			t.Fatalf("entry %d: %v", i, e)
		}
		last = o["SeqNum"].(float64)
	}
	first, failed, patch := entries[0]["Object"].(map[string]any), entries[1]["Object"].(map[string]any), entries[2]["Object"].(map[string]any)
	if first["API"] != "ntpserver" || first["Operation"] != "POST" || first["Result"] != "Success" || first["Data"] != `{"IpAddr":"10.0.0.1"}` {
		t.Fatalf("first entry %v", first)
	}
	if !strings.HasPrefix(failed["Result"].(string), "Error: MinPoll") {
		t.Fatalf("failed entry %v", failed)
	}
	if patch["API"] != "port" || patch["Operation"] != "PATCH" {
		t.Fatalf("patch entry %v", patch)
	}
	if one := p.must(200, "GET", "/state/ConfigLog?SeqNum=1", "").object(); one["API"] != "ntpserver" {
		t.Fatalf("entry by SeqNum: %v", one)
	}
	p.must(200, "POST", "/action/ClearConfigLog", `{}`)
	after := p.listAll("/state/ConfigLogs", 10)
	if len(after) != 1 || after[0]["Object"].(map[string]any)["API"] != "clearconfiglog" || after[0]["Object"].(map[string]any)["SeqNum"].(float64) != last+1 {
		t.Fatalf("after clear: %v", after)
	}
	// SeqNum keeps counting across a restart.
	p.stop()
	q := startSwmgr(t, p.dir)
	q.must(201, "POST", "/config/NtpServer", `{"IpAddr":"10.0.0.3"}`)
	log := q.listAll("/state/ConfigLogs", 10)
	if n := log[len(log)-1]["Object"].(map[string]any)["SeqNum"].(float64); n != last+2 {
		t.Fatalf("SeqNum after restart = %v, want %v", n, last+2)
	}
}
