// Every operation on every creatable config kind (Vrf, IPv4Intf, BGPVrf,
// BGPv4Neighbor, IPv4Route, Vlan, Span, User, ConfigArchiveServer, NtpServer): create, get
// by key (JSON body and query string), get by id, get all, update by key and
// by id, delete by key and by id, and 404 after delete. Also: object names
// in paths are case-insensitive, and secrets never come back on a read nor
// appear in the config log.

package test

import (
	"encoding/json"
	"fmt"
	"net/url"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"testing"
)

// kindCase is one config kind and the bodies the table walks it with.
type kindCase struct {
	kind    string
	create  map[string]any // body of the create, key fields included
	key     map[string]any // the key fields, as sent by key
	update  map[string]any // PATCH by key (the key is added)
	update2 map[string]any // PATCH by id
	secrets []string       // write-only fields; create sets each of them
	state   []string       // fields only the state form has
}

// query renders the key as a query string.
func (kc kindCase) query() string {
	v := url.Values{}
	for k, x := range kc.key {
		v.Set(k, fmt.Sprint(x))
	}
	return v.Encode()
}

// public drops the secret fields of m.
func (kc kindCase) public(m map[string]any) map[string]any {
	out := merge(m)
	for _, s := range kc.secrets {
		delete(out, s)
	}
	return out
}

// creatableKinds are the kinds POST creates and DELETE deletes. They need
// at least four front-panel ports (IPv4Intf and Span use fpPort1..4).
func creatableKinds() []kindCase {
	return []kindCase{
		{
			kind:    "Vrf",
			create:  map[string]any{"Vrf": "blue", "Name": "blue vrf"},
			key:     map[string]any{"Vrf": "blue"},
			update:  map[string]any{"Name": "customer blue"},
			update2: map[string]any{"Name": "customer blue, 2"},
		},
		{
			kind:    "IPv4Intf",
			create:  map[string]any{"IntfRef": "fpPort3", "IpAddr": "10.3.0.1/24", "Vrf": "default"},
			key:     map[string]any{"IntfRef": "fpPort3"},
			update:  map[string]any{"AdminState": "DOWN"},
			update2: map[string]any{"IpAddr": "10.3.0.2/31"},
			state:   []string{"OperState", "IfIndex", "L2IntfType"},
		},
		{
			kind:    "BGPVrf",
			create:  map[string]any{"Name": "default", "UseMultiplePaths": true, "EBGPMaxPaths": 2},
			key:     map[string]any{"Name": "default"},
			update:  map[string]any{"EBGPMaxPaths": 4},
			update2: map[string]any{"IBGPMaxPaths": 8, "UseMultiplePaths": false},
		},
		{
			kind:    "BGPv4Neighbor",
			create:  map[string]any{"Vrf": "default", "NeighborAddress": "10.0.0.2", "PeerAS": "65002", "LocalAS": "65001", "AuthPassword": "md5-secret-create"},
			key:     map[string]any{"Vrf": "default", "NeighborAddress": "10.0.0.2"},
			update:  map[string]any{"Description": "spine 1", "AuthPassword": "md5-secret-update"},
			update2: map[string]any{"HoldTime": 90, "KeepaliveTime": 30},
			secrets: []string{"AuthPassword"},
			state:   []string{"SessionState", "PeerType"},
		},
		{
			kind:    "IPv4Route",
			create:  map[string]any{"DestinationNw": "192.168.4.0", "NetworkMask": "255.255.255.0", "NextHop": []map[string]any{{"NextHopIp": "10.3.0.9", "NextHopIntRef": "", "Weight": 0}}},
			key:     map[string]any{"DestinationNw": "192.168.4.0", "NetworkMask": "255.255.255.0"},
			update:  map[string]any{"NextHop": []map[string]any{{"NextHopIp": "10.3.0.9", "NextHopIntRef": "", "Weight": 0}, {"NextHopIp": "10.3.0.10", "NextHopIntRef": "", "Weight": 3}}},
			update2: map[string]any{"Cost": 5, "NullRoute": true, "NextHop": []map[string]any{}},
		},
		{
			kind:    "Vlan",
			create:  map[string]any{"VlanId": 30, "IntfList": []string{"fpPort1"}, "UntagIntfList": []string{"fpPort2"}, "Description": "servers"},
			key:     map[string]any{"VlanId": 30},
			update:  map[string]any{"Description": "web servers"},
			update2: map[string]any{"UntagIntfList": []string{}, "AutoState": "DOWN"},
			state:   []string{"VlanName", "OperState", "IfIndex", "SysInternalDescription"},
		},
		{
			kind:    "Span",
			create:  map[string]any{"SpanSessionName": "tap1", "DstIntfRef": "fpPort4", "SrcIntfRefList": []string{"fpPort1", "fpPort2"}, "MirrorDir": "BOTH", "AdminState": "UP"},
			key:     map[string]any{"SpanSessionName": "tap1"},
			update:  map[string]any{"MirrorDir": "RX"},
			update2: map[string]any{"SrcIntfRefList": []string{"fpPort1"}, "AdminState": "DOWN"},
		},
		{
			kind:    "User",
			create:  map[string]any{"Name": "carol", "Password": "carol-secret-create", "Group": "operator", "Access": "CLI", "DefaultShell": "CLI"},
			key:     map[string]any{"Name": "carol"},
			update:  map[string]any{"DefaultShell": "Bash"},
			update2: map[string]any{"Access": "Bash"},
			secrets: []string{"Password"},
		},
		{
			kind:    "ConfigArchiveServer",
			create:  map[string]any{"IpAddr": "archive.example.com", "Username": "backup", "Password": "archive-secret-create", "Nonce": "nonce-1", "Passphrase": "phrase-secret-create", "Timestamp": "append", "Interval": 60},
			key:     map[string]any{"IpAddr": "archive.example.com"},
			update:  map[string]any{"Interval": 120, "Password": "archive-secret-update"},
			update2: map[string]any{"RetryCount": 5, "Nonce": "nonce-2", "Passphrase": "phrase-secret-update"},
			secrets: []string{"Password", "Passphrase"},
		},
		{
			kind:    "NtpServer",
			create:  map[string]any{"IpAddr": "ntp1.example.com", "MinPoll": 4, "MaxPoll": 8, "SourceIntf": "ma1", "Prefer": true},
			key:     map[string]any{"IpAddr": "ntp1.example.com"},
			update:  map[string]any{"MaxPoll": 12},
			update2: map[string]any{"MinPoll": 5, "Prefer": false},
			state:   []string{"Status", "Stratum"},
		},
	}
}

// secretValues are every secret value the table sends.
func secretValues() map[string]string {
	out := map[string]string{}
	for _, kc := range creatableKinds() {
		for _, body := range []map[string]any{kc.create, kc.update, kc.update2} {
			for _, f := range kc.secrets {
				if v, ok := body[f].(string); ok {
					out[v] = kc.kind + "." + f
				}
			}
		}
	}
	return out
}

// checkRead fails the test unless a get-one reply is the object id with
// the fields want and every secret read as "".
func checkRead(t *testing.T, what string, r reply, kc kindCase, id string, want map[string]any) {
	t.Helper()
	if r.code != 200 || r.str("ObjectId") != id || r.object() == nil {
		t.Fatalf("%s: got %s, want 200 with ObjectId %s", what, r, id)
	}
	checkFields(t, what, r.object(), kc.public(want))
	for _, f := range kc.secrets {
		if v, ok := r.object()[f]; !ok || v != "" {
			t.Errorf("%s: secret %s reads %#v, want \"\"", what, f, v)
		}
	}
	if r.hdr.Get("ETag") == "" {
		t.Errorf("%s: no ETag header", what)
	}
}

func TestEveryOperationOnEveryCreatableKind(t *testing.T) {
	s := startServer(t, "", "--ports", "8")
	for _, kc := range creatableKinds() {
		t.Run(kc.kind, func(t *testing.T) {
			path := "/config/" + kc.kind
			keyBody := jsonOf(kc.key)

			// Create: 201, ObjectId, Location, ETag.
			c := s.expect(t, 201, "POST", path, jsonOf(kc.create))
			id := checkSuccess(t, "create", c, "")
			if loc := c.hdr.Get("Location"); loc != "/public/v1/config/"+kc.kind+"/"+id {
				t.Errorf("create: Location %q", loc)
			}
			etag := c.hdr.Get("ETag")
			if etag == "" {
				t.Fatalf("create: no ETag: %v", c.hdr)
			}
			// A second create of the same key: 409 naming the existing object.
			if d := s.expect(t, 409, "POST", path, jsonOf(kc.create)); d.str("ObjectId") != id {
				t.Errorf("duplicate create: %s; want the ObjectId of the existing object", d)
			}

			// Get by key (JSON body, as the SDK sends it; query string), by id.
			want := merge(kc.create)
			byBody := s.do(t, "GET", path, keyBody)
			checkRead(t, "get by key (body)", byBody, kc, id, want)
			byQuery := s.do(t, "GET", path+"?"+kc.query(), "")
			checkRead(t, "get by key (query)", byQuery, kc, id, want)
			byID := s.do(t, "GET", path+"/"+id, "")
			checkRead(t, "get by id", byID, kc, id, want)
			if string(byBody.raw) != string(byID.raw) || string(byQuery.raw) != string(byID.raw) {
				t.Errorf("the three reads disagree:\n%s\n%s\n%s", byBody.raw, byQuery.raw, byID.raw)
			}
			if byID.hdr.Get("ETag") != etag {
				t.Errorf("get ETag %q, create said %q", byID.hdr.Get("ETag"), etag)
			}

			// Get all: the paging fields, and the object in it.
			all := s.do(t, "GET", path+"s", "")
			pg, err := getPage(all, 0, 1024)
			if err != nil {
				t.Fatal(err)
			}
			if pg.more {
				t.Errorf("get all: MoreExist on a short list: %s", all.raw)
			}
			listed := ids(pg.objects)
			if listed[id] == nil {
				t.Fatalf("get all: %s is not listed: %s", id, all.raw)
			}
			checkFields(t, "get all", listed[id], kc.public(want))
			if got := ids(s.listAll(t, path+"s", 1)); len(got) != len(listed) || got[id] == nil {
				t.Errorf("get all one at a time: %d objects, all at once: %d", len(got), len(listed))
			}

			// Update by key: the key in the JSON body with the changes.
			u := s.expect(t, 200, "PATCH", path, jsonOf(merge(kc.key, kc.update)))
			checkSuccess(t, "update by key", u, id)
			etag2 := u.hdr.Get("ETag")
			if etag2 == "" || etag2 == etag {
				t.Errorf("update by key: ETag %q (was %q); want a new one", etag2, etag)
			}
			want = merge(want, kc.update)
			g := s.do(t, "GET", path+"/"+id, "")
			checkRead(t, "get after update by key", g, kc, id, want)
			if g.hdr.Get("ETag") != etag2 {
				t.Errorf("get after update: ETag %q, update said %q", g.hdr.Get("ETag"), etag2)
			}

			// Update by id.
			u2 := s.expect(t, 200, "PATCH", path+"/"+id, jsonOf(kc.update2))
			checkSuccess(t, "update by id", u2, id)
			want = merge(want, kc.update2)
			g = s.do(t, "GET", path+"?"+kc.query(), "")
			checkRead(t, "get after update by id", g, kc, id, want)
			etag3 := g.hdr.Get("ETag")

			// An update that changes nothing: 200, and the ETag stays.
			n := s.expect(t, 200, "PATCH", path+"/"+id, jsonOf(kc.public(kc.update2)))
			checkSuccess(t, "no-op update", n, id)
			if n.hdr.Get("ETag") != etag3 {
				t.Errorf("no-op update: ETag %q, want %q unchanged", n.hdr.Get("ETag"), etag3)
			}

			// Delete by key (JSON body): 200 {ObjectId, Result}; then gone.
			d := s.expect(t, 200, "DELETE", path, keyBody)
			checkSuccess(t, "delete by key", d, id)
			checkGone(t, s, kc, id)

			// Created again: a new ObjectId; deleted by id.
			c = s.expect(t, 201, "POST", path, jsonOf(kc.create))
			id2 := checkSuccess(t, "create again", c, "")
			if id2 == id {
				t.Errorf("a new object got the ObjectId of a deleted one: %s", id)
			}
			d = s.expect(t, 200, "DELETE", path+"/"+id2, "")
			checkSuccess(t, "delete by id", d, id2)
			checkGone(t, s, kc, id2)

			// And once more, deleted by key in the query string.
			id3 := checkSuccess(t, "create a third time", s.expect(t, 201, "POST", path, jsonOf(kc.create)), "")
			checkSuccess(t, "delete by key (query)", s.expect(t, 200, "DELETE", path+"?"+kc.query(), ""), id3)
			checkGone(t, s, kc, id3)
		})
	}
}

// checkGone fails the test unless the object id of kc is gone in every
// way it can be named.
func checkGone(t *testing.T, s *server, kc kindCase, id string) {
	t.Helper()
	path := "/config/" + kc.kind
	for _, c := range []struct{ method, path, body string }{
		{"GET", path + "/" + id, ""},
		{"GET", path + "?" + kc.query(), ""},
		{"GET", path, jsonOf(kc.key)},
		{"GET", "/state/" + kc.kind + "/" + id, ""},
		{"GET", "/state/" + kc.kind + "?" + kc.query(), ""},
		{"PATCH", path + "/" + id, jsonOf(kc.public(kc.update2))},
		{"PATCH", path, jsonOf(merge(kc.key, kc.public(kc.update)))},
		{"DELETE", path + "/" + id, ""},
		{"DELETE", path, jsonOf(kc.key)},
	} {
		r := s.do(t, c.method, c.path, c.body)
		if r.code != 404 || !strings.HasPrefix(r.str("Result"), "Error: ") {
			t.Errorf("after delete, %s %s %s: got %s, want 404", c.method, c.path, c.body, r)
		}
	}
	if ids(s.listAll(t, path+"s", 1024))[id] != nil {
		t.Errorf("after delete, %s is still listed", id)
	}
}

func TestObjectNamesAreCaseInsensitive(t *testing.T) {
	s := startServer(t, "", "--ports", "4")
	steps := []struct {
		method, path, body string
		want               int
	}{
		{"POST", "/config/ntpserver", `{"IpAddr":"10.0.0.1"}`, 201},
		{"POST", "/config/NTPSERVER", `{"IpAddr":"10.0.0.2"}`, 201},
		{"POST", "/config/nTpSeRvEr", `{"IpAddr":"10.0.0.3"}`, 201},
		{"GET", "/config/ntpserver?IpAddr=10.0.0.2", "", 200},
		{"GET", "/config/NTPSERVER", `{"IpAddr":"10.0.0.1"}`, 200},
		{"PATCH", "/config/NTPSERVER", `{"IpAddr":"10.0.0.1","MaxPoll":11}`, 200},
		{"PATCH", "/config/ntpserver", `{"IpAddr":"10.0.0.3","MinPoll":5}`, 200},
		{"GET", "/state/ntpserver?IpAddr=10.0.0.1", "", 200},
		{"GET", "/state/NTPSERVER?IpAddr=10.0.0.1", "", 200},
		{"GET", "/config/systemparam", "", 200},
		{"GET", "/config/SYSTEMPARAM", "", 200},
		{"GET", "/config/port?IntfRef=fpPort1", "", 200},
		{"GET", "/config/PORT?IntfRef=fpPort1", "", 200},
		{"GET", "/state/configlogs", "", 200},
		{"GET", "/state/CONFIGLOGS", "", 200},
		{"DELETE", "/config/NTPSERVER", `{"IpAddr":"10.0.0.3"}`, 200},
		{"GET", "/config/NtpServer?IpAddr=10.0.0.3", "", 404},
		{"GET", "/config/ntpserverx", "", 404},
	}
	for _, st := range steps {
		s.expect(t, st.want, st.method, st.path, st.body)
	}
	// Get-all and the by-id paths in any case name the same objects.
	id := s.expect(t, 200, "GET", "/config/NtpServer?IpAddr=10.0.0.1", "").str("ObjectId")
	for _, p := range []string{"/config/ntpserver/", "/config/NTPSERVER/", "/state/ntpserver/"} {
		if r := s.expect(t, 200, "GET", p+id, ""); r.object()["MaxPoll"] != 11.0 {
			t.Errorf("GET %s%s: %s", p, id, r.raw)
		}
	}
	for _, p := range []string{"/config/ntpservers", "/config/NTPSERVERS", "/config/NtpServers", "/state/ntpservers", "/state/NTPSERVERS"} {
		if got := s.listAll(t, p, 1024); len(got) != 2 {
			t.Errorf("GET %s: %d objects, want 2", p, len(got))
		}
	}
	s.expect(t, 200, "DELETE", "/config/ntpserver/"+id, "")
	s.expect(t, 404, "GET", "/config/NTPSERVER/"+id, "")
}

// TestSecretsNeverReadBack writes every secret field and checks that no
// read, no listing, no state read and no config log entry holds a secret
// value, that the log shows "******" in its place, and that the data
// directory holds none of them in clear.
func TestSecretsNeverReadBack(t *testing.T) {
	s := startServer(t, "", "--ports", "8")
	secrets := secretValues()
	for _, kc := range creatableKinds() {
		if len(kc.secrets) == 0 {
			continue
		}
		path := "/config/" + kc.kind
		id := checkSuccess(t, kc.kind+" create", s.expect(t, 201, "POST", path, jsonOf(kc.create)), "")
		s.expect(t, 200, "PATCH", path, jsonOf(merge(kc.key, kc.update)))
		s.expect(t, 200, "PATCH", path+"/"+id, jsonOf(kc.update2))
		reads := []reply{
			s.do(t, "GET", path+"/"+id, ""),
			s.do(t, "GET", path+"?"+kc.query(), ""),
			s.do(t, "GET", path, jsonOf(kc.key)),
			s.do(t, "GET", "/state/"+kc.kind+"/"+id, ""),
		}
		for _, r := range reads {
			checkRead(t, kc.kind+" read", r, kc, id, merge(kc.create, kc.update, kc.update2))
		}
		for _, p := range []string{path + "s", "/state/" + kc.kind + "s"} {
			obj := ids(s.listAll(t, p, 1024))[id]
			for _, f := range kc.secrets {
				if v, ok := obj[f]; !ok || v != "" {
					t.Errorf("%s: secret %s lists as %#v, want \"\"", p, f, v)
				}
			}
		}
	}
	// A secret in a body that fails is not logged either.
	s.expect(t, 400, "POST", "/config/User", `{"Name":"dave","Password":"failed-secret-1","Group":"operator","Access":"nonsense"}`)
	secrets["failed-secret-1"] = "User.Password (failed create)"
	s.expect(t, 200, "POST", "/action/UserPassword", `{"Name":"carol","Password":"action-secret-1"}`)
	secrets["action-secret-1"] = "UserPassword.Password"

	// No read anywhere returns a secret value.
	var everything strings.Builder
	for _, kc := range creatableKinds() {
		for _, r := range s.listAll(t, "/config/"+kc.kind+"s", 1024) {
			everything.WriteString(jsonOf(r))
		}
	}
	logs := s.listAll(t, "/state/configlogs", 1024)
	everything.WriteString(jsonOf(logs))
	for v, what := range secrets {
		if strings.Contains(everything.String(), v) {
			t.Errorf("the secret %s (%q) was read back", what, v)
		}
	}

	// The log shows each secret field that was sent as "******".
	secretFields := map[string][]string{}
	for _, kc := range creatableKinds() {
		secretFields[strings.ToLower(kc.kind)] = kc.secrets
	}
	secretFields["userpassword"] = []string{"Password"}
	masked := map[string]bool{}
	for _, e := range logs {
		o := e["Object"].(map[string]any)
		data, _ := o["Data"].(string)
		if data == "" {
			continue
		}
		var fields map[string]any
		if err := json.Unmarshal([]byte(data), &fields); err != nil {
			t.Errorf("log entry %v: Data is not JSON: %v", o["SeqNum"], err)
			continue
		}
		api, _ := o["API"].(string)
		for _, f := range secretFields[api] {
			if v, ok := fields[f]; ok {
				if v != "******" {
					t.Errorf("log entry %v (%s %s): %s is %#v, want \"******\"", o["SeqNum"], o["Operation"], api, f, v)
				}
				masked[api+"."+f+"."+o["Operation"].(string)] = true
			}
		}
	}
	var wantMasked []string
	for _, kc := range creatableKinds() {
		for _, f := range kc.secrets {
			wantMasked = append(wantMasked, strings.ToLower(kc.kind)+"."+f+".POST")
		}
	}
	wantMasked = append(wantMasked, "bgpv4neighbor.AuthPassword.PATCH", "configarchiveserver.Password.PATCH",
		"configarchiveserver.Passphrase.PATCH", "userpassword.Password.POST")
	sort.Strings(wantMasked)
	for _, m := range wantMasked {
		if !masked[m] {
			t.Errorf("no config log entry shows %s as \"******\"", m)
		}
	}

	// Nothing in the data directory holds a secret in clear.
	s.stop(t)
	filepath.WalkDir(s.dir, func(p string, d os.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		b, err := os.ReadFile(p)
		if err != nil {
			return err
		}
		for v, what := range secrets {
			if strings.Contains(string(b), v) {
				t.Errorf("%s holds the secret %s in clear", p, what)
			}
		}
		return nil
	})
}
