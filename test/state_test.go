// State reads: /public/v1/state/<Kind> by key, /state/<Kind>s and
// /state/<Kind>/<uuid> for every config kind (the uuid is the config
// object's, the state form carries the config fields and its own), PortState
// following AdminState; and the config log: an entry for every write,
// successful or failed, with its fields, SeqNum increasing across a clear
// and a restart.

package test

import (
	"encoding/json"
	"fmt"
	"os/user"
	"strings"
	"testing"
	"time"

	"github.com/swmgr/swmgr/internal/model"
)

// stateCase names one object of a kind for the state walk.
type stateCase struct {
	kind   string
	create string         // body of a create, "" when the object exists already
	key    string         // query string of its key ("" for a singleton)
	keyObj map[string]any // the key as a JSON body
	state  []string       // state-only fields the state form must have
}

func stateCases() []stateCase {
	var out []stateCase
	for _, kc := range creatableKinds() {
		if kc.kind == "IPv4Route" {
			continue // state/IPv4Route is the routing table (flexswitch_test.go), as in FlexSwitch
		}
		out = append(out, stateCase{kind: kc.kind, create: jsonOf(kc.create), key: kc.query(), keyObj: kc.key, state: kc.state})
	}
	return append(out,
		stateCase{kind: "Port", key: "IntfRef=fpPort1", keyObj: map[string]any{"IntfRef": "fpPort1"},
			state: []string{"Name", "OperState", "NumUpEvents", "NumDownEvents", "IfInOctets", "PresentInHW"}},
		stateCase{kind: "SystemParam", keyObj: map[string]any{}, state: []string{"Distro", "Kernel", "UpTime"}},
		stateCase{kind: "BGPGlobal", keyObj: map[string]any{}, state: []string{"AS", "TotalPaths"}},
	)
}

func TestStateOfEveryConfigKind(t *testing.T) {
	s := startServer(t, "", "--ports", "8")
	for _, c := range stateCases() {
		t.Run(c.kind, func(t *testing.T) {
			cfgPath := "/config/" + c.kind
			if c.create != "" {
				s.expect(t, 201, "POST", cfgPath, c.create)
			}
			cfg := s.expect(t, 200, "GET", cfgPath+"?"+c.key, "")
			id := cfg.str("ObjectId")

			path := "/state/" + c.kind
			byQuery := s.expect(t, 200, "GET", path+"?"+c.key, "")
			byBody := s.expect(t, 200, "GET", path, jsonOf(c.keyObj))
			byID := s.expect(t, 200, "GET", path+"/"+id, "")
			for what, r := range map[string]reply{"by key (query)": byQuery, "by key (body)": byBody, "by id": byID} {
				if r.str("ObjectId") != id {
					t.Errorf("state %s: ObjectId %q, the config object's is %q", what, r.str("ObjectId"), id)
				}
				// The config fields, as config reads show them (but those
				// whose state shows the value in effect)...
				checkFields(t, "state "+what, r.object(), configured(c.kind, cfg.object()))
				// ...and the state-only fields.
				for _, f := range c.state {
					if _, ok := r.object()[f]; !ok {
						t.Errorf("state %s lacks %s: %s", what, f, r.raw)
					}
				}
			}
			all := s.listAll(t, path+"s", 2)
			st := ids(all)[id]
			if st == nil {
				t.Fatalf("%ss does not list %s", path, id)
			}
			for _, f := range c.state {
				if _, ok := st[f]; !ok {
					t.Errorf("%ss entry lacks %s: %v", path, f, st)
				}
			}
			if n := len(s.listAll(t, cfgPath+"s", 1024)); n != len(all) {
				t.Errorf("%d state objects, %d config objects", len(all), n)
			}

			// State is read-only; an unknown id is a 404.
			for _, m := range []string{"POST", "PATCH", "DELETE"} {
				checkAllow(t, m+" "+path, s.do(t, m, path, jsonOf(c.keyObj)), "GET", "HEAD", "OPTIONS")
				checkAllow(t, m+" "+path+"/<id>", s.do(t, m, path+"/"+id, ""), "GET", "HEAD", "OPTIONS")
			}
			s.expect(t, 404, "GET", path+"/00000000-0000-4000-8000-000000000000", "")
		})
	}
	// The state form is named by the config kind only.
	s.expect(t, 404, "GET", "/state/SystemParamState", "")
}

func TestPortStateFollowsAdminState(t *testing.T) {
	s := startServer(t, "", "--ports", "4")
	id := s.expect(t, 200, "GET", "/config/Port?IntfRef=fpPort3", "").str("ObjectId")
	state := func() map[string]any {
		t.Helper()
		r := s.expect(t, 200, "GET", "/state/Port/"+id, "")
		if r.str("ObjectId") != id {
			t.Fatalf("state ObjectId %q, want %q", r.str("ObjectId"), id)
		}
		return r.object()
	}
	want := func(admin, oper string, ups, downs int) {
		t.Helper()
		checkFields(t, "PortState", state(), map[string]any{"IntfRef": "fpPort3", "Name": "fpPort3", "AdminState": admin, "OperState": oper, "NumUpEvents": ups, "NumDownEvents": downs})
	}
	want("DOWN", "DOWN", 0, 0)
	s.expect(t, 200, "PATCH", "/config/Port", `{"IntfRef":"fpPort3","AdminState":"UP"}`)
	want("UP", "UP", 1, 0)
	// Counters grow while the port is up.
	first := state()["IfInOctets"].(float64)
	time.Sleep(20 * time.Millisecond)
	if next := state()["IfInOctets"].(float64); next <= first {
		t.Errorf("IfInOctets did not grow while up: %v then %v", first, next)
	}
	s.expect(t, 200, "PATCH", "/config/Port/"+id, `{"AdminState":"DOWN"}`)
	want("DOWN", "DOWN", 1, 1)
	s.expect(t, 200, "PATCH", "/config/Port", `{"IntfRef":"fpPort3","AdminState":"UP"}`)
	want("UP", "UP", 2, 1)
	// The other ports are untouched.
	if o := s.expect(t, 200, "GET", "/state/Port?IntfRef=fpPort4", "").object(); o["OperState"] != "DOWN" {
		t.Errorf("fpPort4: %v", o)
	}
	// An IPv4Intf is up only when its port is.
	s.expect(t, 201, "POST", "/config/IPv4Intf", `{"IntfRef":"fpPort3","IpAddr":"10.0.3.1/24"}`)
	s.expect(t, 201, "POST", "/config/IPv4Intf", `{"IntfRef":"fpPort4","IpAddr":"10.0.4.1/24"}`)
	if o := s.expect(t, 200, "GET", "/state/IPv4Intf?IntfRef=fpPort3", "").object(); o["OperState"] != "UP" {
		t.Errorf("IPv4Intf on an up port: %v", o)
	}
	if o := s.expect(t, 200, "GET", "/state/IPv4Intf?IntfRef=fpPort4", "").object(); o["OperState"] != "DOWN" {
		t.Errorf("IPv4Intf on a down port: %v", o)
	}
}

// logEntry is one decoded ConfigLogState.
type logEntry struct {
	SeqNum    float64
	Time      string
	API       string
	Operation string
	Data      string
	Result    string
	UserAddr  string
	UserName  string
}

// configLog reads the whole config log, oldest first, a few at a time,
// and checks each entry's form.
func configLog(t *testing.T, s *server) []logEntry {
	t.Helper()
	var out []logEntry
	for _, e := range s.listAll(t, "/state/configlogs", 3) {
		if e["ObjectId"] != "" {
			t.Errorf("a config log entry has ObjectId %v, want \"\"", e["ObjectId"])
		}
		var le logEntry
		if err := json.Unmarshal([]byte(jsonOf(e["Object"])), &le); err != nil {
			t.Fatalf("config log entry %v: %v", e, err)
		}
		if _, err := time.Parse("2006-01-02 15:04:05.999999999 -0700 MST", le.Time); err != nil {
			t.Errorf("entry %v: Time %q is not Go's time.Time form: %v", le.SeqNum, le.Time, err)
		}
		if len(out) > 0 && le.SeqNum <= out[len(out)-1].SeqNum {
			t.Errorf("SeqNum %v after %v: not increasing", le.SeqNum, out[len(out)-1].SeqNum)
		}
		out = append(out, le)
	}
	return out
}

func lastSeq(log []logEntry) float64 {
	if len(log) == 0 {
		return 0
	}
	return log[len(log)-1].SeqNum
}

func TestConfigLog(t *testing.T) {
	s := startServer(t, "", "--ports", "4")
	base := lastSeq(configLog(t, s))
	start := len(configLog(t, s))

	// Each write, with the entry it must leave.
	writes := []struct {
		method, path, body string
		status             int
		api, data          string // data "" means: not checked
		result             string // "Success" or a prefix of the error
	}{
		{"POST", "/config/NtpServer", `{"IpAddr":"10.0.0.1", "MinPoll": 5}`, 201, "ntpserver", `{"IpAddr":"10.0.0.1","MinPoll":5}`, "Success"},
		{"POST", "/config/NtpServer", `{"IpAddr":"10.0.0.2","MinPoll":99}`, 400, "ntpserver", `{"IpAddr":"10.0.0.2","MinPoll":99}`, "Error: MinPoll"},
		{"POST", "/config/NtpServer", `{"IpAddr":"10.0.0.1"}`, 409, "ntpserver", `{"IpAddr":"10.0.0.1"}`, "Error: "},
		{"POST", "/config/NtpServer", `{"IpAddr":`, 400, "ntpserver", "", "Error: "},
		{"PATCH", "/config/Port", `{"IntfRef":"fpPort1","AdminState":"UP"}`, 200, "port", `{"AdminState":"UP","IntfRef":"fpPort1"}`, "Success"},
		{"PATCH", "/config/systemparam", `{"Hostname":"leaf-7"}`, 200, "systemparam", `{"Hostname":"leaf-7"}`, "Success"},
		{"PATCH", "/config/NtpServer", `{"IpAddr":"10.9.9.9","MaxPoll":12}`, 404, "ntpserver", `{"IpAddr":"10.9.9.9","MaxPoll":12}`, "Error: "},
		{"POST", "/config/SystemParam", `{}`, 405, "systemparam", "", "Error: POST is not allowed"},
		{"DELETE", "/config/NtpServer?IpAddr=10.0.0.1", "", 200, "ntpserver", "", "Success"},
		{"DELETE", "/config/NtpServer", `{"IpAddr":"10.0.0.1"}`, 404, "ntpserver", `{"IpAddr":"10.0.0.1"}`, "Error: "},
		{"POST", "/config/NoSuchKind", `{}`, 404, "nosuchkind", "", "Error: "},
	}
	var addrs []string
	for _, w := range writes {
		r := s.expect(t, w.status, w.method, w.path, w.body)
		addrs = append(addrs, r.local)
	}
	// Reads leave no entry.
	s.expect(t, 200, "GET", "/config/NtpServers", "")
	s.expect(t, 200, "GET", "/state/Port?IntfRef=fpPort1", "")

	// A request without credentials on loopback is attributed to the OS
	// user who sent it: this test's own.
	me, err := user.Current()
	if err != nil {
		t.Fatal(err)
	}
	localUser := me.Username
	log := configLog(t, s)
	if len(log) != start+len(writes) {
		t.Fatalf("%d new log entries for %d writes: %+v", len(log)-start, len(writes), log)
	}
	for i, w := range writes {
		e := log[start+i]
		what := fmt.Sprintf("entry for %s %s %s", w.method, w.path, w.body)
		if e.SeqNum != base+float64(i+1) {
			t.Errorf("%s: SeqNum %v, want %v", what, e.SeqNum, base+float64(i+1))
		}
		if e.API != w.api || e.Operation != w.method {
			t.Errorf("%s: API %q Operation %q", what, e.API, e.Operation)
		}
		if !strings.HasPrefix(e.Result, w.result) || (w.result == "Success") != (e.Result == "Success") {
			t.Errorf("%s: Result %q, want %q...", what, e.Result, w.result)
		}
		if w.data != "" && e.Data != w.data {
			t.Errorf("%s: Data %q, want %q", what, e.Data, w.data)
		}
		if e.UserAddr != addrs[i] {
			t.Errorf("%s: UserAddr %q, the request came from %q", what, e.UserAddr, addrs[i])
		}
		if e.UserName != localUser {
			t.Errorf("%s: UserName %q for a loopback request without credentials from OS user %q", what, e.UserName, localUser)
		}
	}
	// One entry by its SeqNum.
	one := s.expect(t, 200, "GET", fmt.Sprintf("/state/ConfigLog?SeqNum=%d", int64(log[start].SeqNum)), "")
	if o := one.object(); o["API"] != "ntpserver" || o["SeqNum"] != log[start].SeqNum {
		t.Errorf("entry by SeqNum: %s", one.raw)
	}

	// ClearConfigLog: the clear is the first entry of the new log.
	last := lastSeq(log)
	clr := s.expect(t, 200, "POST", "/action/ClearConfigLog", `{}`)
	if clr.str("Result") != "Success" {
		t.Errorf("ClearConfigLog: %s", clr.raw)
	}
	log = configLog(t, s)
	if len(log) != 1 || log[0].API != "clearconfiglog" || log[0].Operation != "POST" || log[0].Result != "Success" || log[0].SeqNum != last+1 || log[0].UserAddr != clr.local {
		t.Fatalf("after a clear, the log is %+v; want one clearconfiglog entry with SeqNum %v", log, last+1)
	}
	s.expect(t, 404, "GET", fmt.Sprintf("/state/ConfigLog?SeqNum=%d", int64(last)), "")
	s.expect(t, 201, "POST", "/config/NtpServer", `{"IpAddr":"10.0.0.3"}`)
	if log = configLog(t, s); len(log) != 2 || log[1].SeqNum != last+2 {
		t.Fatalf("after a clear and a write: %+v", log)
	}

	// After a restart the log is still there and SeqNum goes on.
	s.stop(t)
	s2 := startServer(t, s.dir, "--ports", "4")
	if log2 := configLog(t, s2); len(log2) != 2 || log2[0] != log[0] || log2[1] != log[1] {
		t.Fatalf("the log after a restart:\n%+v\nbefore:\n%+v", log2, log)
	}
	s2.expect(t, 400, "POST", "/config/NtpServer", `{"IpAddr":"10.0.0.4","Bogus":1}`)
	s2.expect(t, 201, "POST", "/config/NtpServer", `{"IpAddr":"10.0.0.4"}`)
	log = configLog(t, s2)
	if len(log) != 4 || log[2].SeqNum != last+3 || log[3].SeqNum != last+4 || log[2].Result == "Success" || log[3].Result != "Success" {
		t.Fatalf("after a restart: %+v; want SeqNum %v and %v next", log, last+3, last+4)
	}
	// A clear after a restart goes on counting too.
	s2.expect(t, 200, "POST", "/action/clearconfiglog", "")
	if log = configLog(t, s2); len(log) != 1 || log[0].SeqNum != last+5 {
		t.Fatalf("a clear after a restart: %+v", log)
	}
}

// TestConfigLogKeepsTheLast1000 writes more than 1000 entries: the log
// holds exactly the last 1000, in order.
func TestConfigLogKeepsTheLast1000(t *testing.T) {
	s := startServer(t, "", "--ports", "4")
	s.expect(t, 200, "POST", "/action/ClearConfigLog", "")
	first := lastSeq(configLog(t, s))
	const n = 1100
	errs := make(chan error, n)
	sem := make(chan struct{}, 16)
	for i := range n {
		sem <- struct{}{}
		go func() {
			defer func() { <-sem }()
			r, err := s.call("POST", "/config/NtpServer", fmt.Sprintf(`{"IpAddr":"10.1.%d.%d"}`, i/200, i%200+1))
			if err == nil && r.code != 201 {
				err = fmt.Errorf("POST: %s", r)
			}
			errs <- err
		}()
	}
	for range n {
		if err := <-errs; err != nil {
			t.Fatal(err)
		}
	}
	log := configLog(t, s)
	if len(log) != 1000 {
		t.Fatalf("%d entries, want the last 1000", len(log))
	}
	if log[0].SeqNum != first+n+1-1000 || log[999].SeqNum != first+n {
		t.Errorf("entries %v..%v, want %v..%v", log[0].SeqNum, log[999].SeqNum, first+n+1-1000, first+n)
	}
}

// configured is obj without the fields whose state form shows the value in
// effect (model.Field.InEffect), which may differ from the configured one.
func configured(kind string, obj map[string]any) map[string]any {
	k := model.Builtin().Lookup(model.Config, kind)
	out := map[string]any{}
	for n, v := range obj {
		if f := k.Field(n); f == nil || !f.InEffect {
			out[n] = v
		}
	}
	return out
}
