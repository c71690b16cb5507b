package api

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/swmgr/swmgr/internal/accounts"
	"github.com/swmgr/swmgr/internal/backend/sim"
	"github.com/swmgr/swmgr/internal/bind"
	"github.com/swmgr/swmgr/internal/engine"
	"github.com/swmgr/swmgr/internal/engine/candidates"
	"github.com/swmgr/swmgr/internal/engine/enginetest"
	"github.com/swmgr/swmgr/internal/engine/history"
	"github.com/swmgr/swmgr/internal/engine/users"
	"github.com/swmgr/swmgr/internal/model"
	"github.com/swmgr/swmgr/internal/openapi/openapitest"
	"github.com/swmgr/swmgr/internal/store"
)

// apiHarness is swmgr in-process, wired as cmd/swmgr/serve.go wires it: a
// real bbolt store and secrets box in a temporary directory, the simulated
// switch with 8 ports, the engine and this package's handler, behind an
// httptest server.
type apiHarness struct {
	t      testing.TB
	srv    *httptest.Server
	base   string // srv.URL + "/public/v1"
	st     *store.Store
	eng    *engine.Engine
	h      http.Handler
	client *http.Client      // checks every response against the OpenAPI document
	accDir string            // the simulated switch's account files
	ids    map[string]string // fixture name -> ObjectId
	etags  map[string]string // fixture name -> ETag of its last write
}

func newAPIHarness(t testing.TB) *apiHarness {
	t.Helper()
	return newAPIHarnessWith(t, t.TempDir(), model.Builtin())
}

// newAPIHarnessWith serves the data directory dir with the kinds of reg.
func newAPIHarnessWith(t testing.TB, dir string, reg *model.Registry) *apiHarness {
	t.Helper()
	// The simulated switch keeps its user accounts in files of its own, as
	// swmgr serve does.
	d := enginetest.OpenDataDir(t, dir)
	st, box, acc := d.St, d.Box, d.Acc
	log := slog.New(slog.NewTextHandler(io.Discard, nil))
	be := sim.New(sim.Options{Ports: 8, Version: "harness", Accounts: acc, OwnAccounts: true, CLIShell: "/usr/local/bin/swmgr"})
	eng := engine.New(reg, st, be, box, log)
	if err := eng.Start(context.Background()); err != nil {
		t.Fatal(err)
	}
	hist, cands := startParts(t, eng)
	h := newServer(t, eng, hist, cands, acc, log)
	srv := httptest.NewServer(h)
	t.Cleanup(func() {
		srv.CloseClientConnections()
		srv.Close()
	})
	validator, err := openapitest.Builtin()
	if err != nil {
		t.Fatal(err)
	}
	return &apiHarness{t: t, srv: srv, base: srv.URL + "/public/v1", st: st, eng: eng, h: h, client: validator.Wrap(srv.Client()), accDir: acc.Dir(), ids: map[string]string{}, etags: map[string]string{}}
}

// send makes one request to a path under /public/v1 and returns the
// response (body closed) and its body.
func (a *apiHarness) send(method, path string, hdr map[string]string, body string) (*http.Response, []byte) {
	a.t.Helper()
	var rd io.Reader
	if body != "" {
		rd = strings.NewReader(body)
	}
	req, err := http.NewRequest(method, a.base+path, rd)
	if err != nil {
		a.t.Fatal(err)
	}
	for k, v := range hdr {
		req.Header.Set(k, v)
	}
	resp, err := a.client.Do(req)
	if err != nil {
		a.t.Fatalf("%s %s: %v", method, path, err)
	}
	data, err := io.ReadAll(resp.Body)
	resp.Body.Close()
	if err != nil {
		a.t.Fatalf("%s %s: reading the response: %v", method, path, err)
	}
	return resp, data
}

func (a *apiHarness) dump() []byte {
	a.t.Helper()
	var b bytes.Buffer
	if err := a.st.Dump(&b); err != nil {
		a.t.Fatal(err)
	}
	return b.Bytes()
}

// accountFiles returns the simulated switch's account files: the part of
// "the system" a failed request must not change either.
func (a *apiHarness) accountFiles() []byte {
	a.t.Helper()
	var b bytes.Buffer
	for _, name := range []string{"passwd", "shadow", "group", "gshadow"} {
		data, err := os.ReadFile(filepath.Join(a.accDir, name))
		if err != nil {
			a.t.Fatal(err)
		}
		fmt.Fprintf(&b, "== %s\n%s", name, data)
	}
	return b.Bytes()
}

// seed creates the fixtures the bad inputs collide with and refer to, all
// through the API, and records their ObjectIds and ETags.
func (a *apiHarness) seed() {
	a.t.Helper()
	for _, f := range []struct{ name, method, path, body string }{
		{"vrf", "POST", "/config/Vrf", `{"Vrf":"red"}`},
		{"intf", "POST", "/config/IPv4Intf", `{"IntfRef":"fpPort1","IpAddr":"10.1.0.1/24","Vrf":"red"}`},
		{"span", "POST", "/config/Span", `{"SpanSessionName":"mon1","DstIntfRef":"fpPort2","SrcIntfRefList":["fpPort3"]}`},
		{"ntp", "POST", "/config/NtpServer", `{"IpAddr":"192.0.2.10","MinPoll":6,"MaxPoll":10}`},
		{"user", "POST", "/config/User", `{"Name":"alice","Password":"alice-secret-1","Group":"operator"}`},
		{"cas", "POST", "/config/ConfigArchiveServer", `{"IpAddr":"archive.example.net","UserName":"arch","Password":"cas-secret-1"}`},
		{"bgp", "PATCH", "/config/BGPGlobal", `{"ASNum":"65010","RouterId":"192.0.2.1"}`},
		{"nbr", "POST", "/config/BGPv4Neighbor", `{"NeighborAddress":"192.0.2.2","PeerAS":"65020"}`},
		{"breakout", "PATCH", "/config/Port", `{"IntfRef":"fpPort5","BreakOutMode":"4x10"}`},
		{"subintf", "POST", "/config/IPv4Intf", `{"IntfRef":"fpPort5s2","IpAddr":"10.5.2.1/24"}`},
	} {
		resp, body := a.send(f.method, f.path, nil, f.body)
		if resp.StatusCode != http.StatusCreated && resp.StatusCode != http.StatusOK {
			a.t.Fatalf("fixture %s: %s %s: %d %s", f.name, f.method, f.path, resp.StatusCode, body)
		}
		var ok struct{ ObjectId, Result string }
		if err := json.Unmarshal(body, &ok); err != nil || ok.Result != "Success" || ok.ObjectId == "" {
			a.t.Fatalf("fixture %s: body %s", f.name, body)
		}
		a.ids[f.name] = ok.ObjectId
		a.etags[f.name] = resp.Header.Get("ETag")
	}
	// Discovered objects: their ObjectIds come from reads.
	for name, path := range map[string]string{"port1": "/config/Port?IntfRef=fpPort1", "sysparam": "/config/SystemParam"} {
		resp, body := a.send("GET", path, nil, "")
		var got struct{ ObjectId string }
		if resp.StatusCode != 200 || json.Unmarshal(body, &got) != nil || got.ObjectId == "" {
			a.t.Fatalf("read %s: %d %s", path, resp.StatusCode, body)
		}
		a.ids[name] = got.ObjectId
		a.etags[name] = resp.Header.Get("ETag")
	}
}

// errBody is the contract's error body; decoding refuses any other field.
type errBody struct {
	Result string
	Error  struct {
		Status  int
		Code    string
		Message string
		Object  string
		Field   string
	}
	ObjectId string
}

func decodeErrBody(data []byte) (errBody, error) {
	var e errBody
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&e); err != nil {
		return e, err
	}
	if dec.More() {
		return e, io.ErrUnexpectedEOF
	}
	return e, nil
}

// lastLogEntry returns the newest config log entry.
func (a *apiHarness) lastLogEntry() map[string]any {
	a.t.Helper()
	resp, body := a.send("GET", "/state/ConfigLogs?Count=1024", nil, "")
	var page struct {
		ObjCount int
		Objects  []struct{ Object map[string]any }
	}
	if resp.StatusCode != 200 || json.Unmarshal(body, &page) != nil || len(page.Objects) == 0 {
		a.t.Fatalf("config log: %d %s", resp.StatusCode, body)
	}
	return page.Objects[len(page.Objects)-1].Object
}

// apiBadRow is one bad input: the request and the refusal it must get.
type apiBadRow struct {
	name       string
	method     string
	path       string // under /public/v1
	headers    map[string]string
	body       string
	wantStatus int
	wantCode   string
	wantMsg    string // a substring of the message, if set
	wantField  string // the Error.Field, if set
	wantID     string // fixture whose ObjectId the body names (duplicates)
}

func apiBadRows(a *apiHarness) []apiBadRow {
	id := func(name string) string {
		if a.ids[name] == "" {
			a.t.Fatalf("no fixture %s", name)
		}
		return a.ids[name]
	}
	huge := `{"IpAddr":"192.0.2.99","Pad":"` + strings.Repeat("a", MaxBody) + `"}`
	deep := strings.Repeat("[", 20000) + strings.Repeat("]", 20000)
	ifMatch := func(v string) map[string]string { return map[string]string{"If-Match": v} }
	return []apiBadRow{
		// Malformed JSON.
		{name: "truncated object", method: "POST", path: "/config/NtpServer", body: `{"IpAddr":"192.0.2.20"`, wantStatus: 400, wantCode: "malformed_json"},
		{name: "truncated inside a string", method: "POST", path: "/config/NtpServer", body: `{"IpAddr":"192.0`, wantStatus: 400, wantCode: "malformed_json"},
		{name: "trailing garbage", method: "POST", path: "/config/NtpServer", body: `{"IpAddr":"192.0.2.20"}x`, wantStatus: 400, wantCode: "malformed_json"},
		{name: "two objects", method: "PATCH", path: "/config/NtpServer", body: `{"IpAddr":"192.0.2.10"}{"MinPoll":5}`, wantStatus: 400, wantCode: "malformed_json"},
		{name: "array body", method: "POST", path: "/config/Vrf", body: `[{"Vrf":"green"}]`, wantStatus: 400, wantCode: "malformed_json", wantMsg: "JSON object"},
		{name: "string body", method: "POST", path: "/config/Vrf", body: `"green"`, wantStatus: 400, wantCode: "malformed_json"},
		{name: "null body", method: "POST", path: "/config/Vrf", body: `null`, wantStatus: 400, wantCode: "malformed_json"},
		{name: "boolean body", method: "DELETE", path: "/config/Vrf", body: `true`, wantStatus: 400, wantCode: "malformed_json"},
		{name: "form-encoded body", method: "POST", path: "/config/Vrf", body: `Vrf=green`, wantStatus: 400, wantCode: "malformed_json"},
		{name: "byte order mark", method: "POST", path: "/config/Vrf", body: "\xef\xbb\xbf{\"Vrf\":\"green\"}", wantStatus: 400, wantCode: "malformed_json"},
		{name: "duplicate field", method: "POST", path: "/config/Vrf", body: `{"Vrf":"green","Vrf":"green"}`, wantStatus: 400, wantCode: "malformed_json", wantMsg: "twice"},
		{name: "leading zeros", method: "PATCH", path: "/config/NtpServer", body: `{"IpAddr":"192.0.2.10","MinPoll":007}`, wantStatus: 400, wantCode: "malformed_json"},
		{name: "single quotes", method: "POST", path: "/config/Vrf", body: `{'Vrf':'green'}`, wantStatus: 400, wantCode: "malformed_json"},
		{name: "unquoted name", method: "POST", path: "/config/Vrf", body: `{Vrf:"green"}`, wantStatus: 400, wantCode: "malformed_json"},
		{name: "trailing comma", method: "POST", path: "/config/Vrf", body: `{"Vrf":"green",}`, wantStatus: 400, wantCode: "malformed_json"},
		{name: "deeply nested value", method: "POST", path: "/config/Vrf", body: `{"Vrf":"green","Name":` + deep + `}`, wantStatus: 400, wantCode: "malformed_json"},
		{name: "malformed body on GET", method: "GET", path: "/config/Vrf", body: `{"Vrf":`, wantStatus: 400, wantCode: "malformed_json"},
		// Aliases given together with the name (or each other).
		{name: "User Name and NAME", method: "POST", path: "/config/User", body: `{"Name":"bob","NAME":"bob","Password":"bob-secret-1"}`, wantStatus: 400, wantCode: "malformed_json", wantField: "Name"},
		{name: "Username and UserName", method: "PATCH", path: "/config/ConfigArchiveServer", body: `{"IpAddr":"archive.example.net","Username":"a","UserName":"a"}`, wantStatus: 400, wantCode: "malformed_json", wantField: "Username"},
		{name: "Timestamp and TimeStamp", method: "PATCH", path: "/config/ConfigArchiveServer", body: `{"IpAddr":"archive.example.net","Timestamp":"append","TimeStamp":"append"}`, wantStatus: 400, wantCode: "malformed_json"},
		{name: "Speed and speed", method: "PATCH", path: "/config/Port", body: `{"IntfRef":"fpPort1","Speed":10000,"speed":10000}`, wantStatus: 400, wantCode: "malformed_json"},
		// Wrong types.
		{name: "string for int", method: "PATCH", path: "/config/NtpServer", body: `{"IpAddr":"192.0.2.10","MinPoll":"5"}`, wantStatus: 400, wantCode: "wrong_type", wantField: "MinPoll"},
		{name: "int for string", method: "POST", path: "/config/NtpServer", body: `{"IpAddr":3221225994}`, wantStatus: 400, wantCode: "wrong_type", wantField: "IpAddr"},
		{name: "bool as string", method: "PATCH", path: "/config/ConfigArchiveServer", body: `{"IpAddr":"archive.example.net","OnChange":"true"}`, wantStatus: 400, wantCode: "wrong_type", wantField: "OnChange"},
		{name: "int for bool", method: "PATCH", path: "/config/Port", body: `{"IntfRef":"fpPort1","EnableFEC":1}`, wantStatus: 400, wantCode: "wrong_type"},
		{name: "list as string", method: "PATCH", path: "/config/Span", body: `{"SpanSessionName":"mon1","SrcIntfRefList":"fpPort4"}`, wantStatus: 400, wantCode: "wrong_type", wantField: "SrcIntfRefList"},
		{name: "list of objects", method: "PATCH", path: "/config/Span", body: `{"SpanSessionName":"mon1","SrcIntfRefList":[{"IntfRef":"fpPort4"}]}`, wantStatus: 400, wantCode: "wrong_type"},
		{name: "null for string", method: "POST", path: "/config/Vrf", body: `{"Vrf":null}`, wantStatus: 400, wantCode: "wrong_type"},
		{name: "null for int", method: "PATCH", path: "/config/Port", body: `{"IntfRef":"fpPort1","Mtu":null}`, wantStatus: 400, wantCode: "wrong_type"},
		{name: "fractional int", method: "PATCH", path: "/config/Port", body: `{"IntfRef":"fpPort1","Mtu":1500.25}`, wantStatus: 400, wantCode: "wrong_type"},
		{name: "int beyond float precision", method: "PATCH", path: "/config/Port", body: `{"IntfRef":"fpPort1","Mtu":1e300}`, wantStatus: 400, wantCode: "wrong_type"},
		{name: "object for string", method: "PATCH", path: "/config/SystemParam", body: `{"Description":{"text":"x"}}`, wantStatus: 400, wantCode: "wrong_type"},
		{name: "query int not a number", method: "GET", path: "/config/NtpServer?IpAddr=192.0.2.10&MinPoll=six", wantStatus: 400, wantCode: "wrong_type"},
		// Unknown fields.
		{name: "unknown field with suggestion", method: "POST", path: "/config/NtpServer", body: `{"IpAdr":"192.0.2.20"}`, wantStatus: 400, wantCode: "unknown_field", wantField: "IpAdr", wantMsg: `did you mean "IpAddr"`},
		{name: "wrong letter case", method: "PATCH", path: "/config/Port", body: `{"IntfRef":"fpPort1","adminstate":"UP"}`, wantStatus: 400, wantCode: "unknown_field", wantMsg: `did you mean "AdminState"`},
		{name: "unknown field without suggestion", method: "POST", path: "/config/Vrf", body: `{"Vrf":"green","Colour":"green"}`, wantStatus: 400, wantCode: "unknown_field", wantMsg: "its fields are"},
		{name: "state-only field", method: "PATCH", path: "/config/NtpServer", body: `{"IpAddr":"192.0.2.10","Stratum":2}`, wantStatus: 400, wantCode: "unknown_field"},
		{name: "ObjectId in the body", method: "PATCH", path: "/config/NtpServer", body: `{"IpAddr":"192.0.2.10","ObjectId":"` + id("ntp") + `"}`, wantStatus: 400, wantCode: "unknown_field"},
		{name: "unknown query field", method: "GET", path: "/config/NtpServer?Address=192.0.2.10", wantStatus: 400, wantCode: "unknown_field"},
		{name: "non-key query field", method: "DELETE", path: "/config/NtpServer?IpAddr=192.0.2.10&MinPoll=6", wantStatus: 400, wantCode: "unknown_field"},
		{name: "unknown action field", method: "POST", path: "/action/UserPassword", body: `{"Name":"alice","Pasword":"alice-secret-2"}`, wantStatus: 400, wantCode: "unknown_field", wantMsg: "did you mean"},
		// Invalid values.
		{name: "bad IPv4", method: "PATCH", path: "/config/BGPGlobal", body: `{"RouterId":"192.0.2.256"}`, wantStatus: 400, wantCode: "invalid_value", wantField: "RouterId"},
		{name: "IPv4 with three parts", method: "POST", path: "/config/BGPv4Neighbor", body: `{"NeighborAddress":"192.0.2","PeerAS":"65020"}`, wantStatus: 400, wantCode: "invalid_value"},
		{name: "bad CIDR", method: "POST", path: "/config/IPv4Intf", body: `{"IntfRef":"fpPort6","IpAddr":"10.6.0.1/33"}`, wantStatus: 400, wantCode: "invalid_value", wantField: "IpAddr"},
		{name: "CIDR without prefix", method: "POST", path: "/config/IPv4Intf", body: `{"IntfRef":"fpPort6","IpAddr":"10.6.0.1"}`, wantStatus: 400, wantCode: "invalid_value"},
		{name: "network address", method: "POST", path: "/config/IPv4Intf", body: `{"IntfRef":"fpPort6","IpAddr":"10.6.0.0/24"}`, wantStatus: 400, wantCode: "invalid_value", wantMsg: "network address"},
		{name: "broadcast address", method: "POST", path: "/config/IPv4Intf", body: `{"IntfRef":"fpPort6","IpAddr":"10.6.0.255/24"}`, wantStatus: 400, wantCode: "invalid_value", wantMsg: "broadcast address"},
		{name: "multicast interface address", method: "POST", path: "/config/IPv4Intf", body: `{"IntfRef":"fpPort6","IpAddr":"224.0.0.5/24"}`, wantStatus: 400, wantCode: "invalid_value"},
		{name: "bad FQDN", method: "POST", path: "/config/NtpServer", body: `{"IpAddr":"ntp..example.com"}`, wantStatus: 400, wantCode: "invalid_value"},
		{name: "FQDN with underscore", method: "POST", path: "/config/ConfigArchiveServer", body: `{"IpAddr":"arch_ive.example.net"}`, wantStatus: 400, wantCode: "invalid_value"},
		{name: "IPv6 with zone", method: "POST", path: "/config/NtpServer", body: `{"IpAddr":"fe80::1%eth0"}`, wantStatus: 400, wantCode: "invalid_value"},
		{name: "empty key", method: "POST", path: "/config/Vrf", body: `{"Vrf":""}`, wantStatus: 400, wantCode: "invalid_value"},
		{name: "AS number 0", method: "PATCH", path: "/config/BGPGlobal", body: `{"ASNum":"0"}`, wantStatus: 400, wantCode: "invalid_value", wantField: "ASNum"},
		{name: "AS number too large", method: "PATCH", path: "/config/BGPGlobal", body: `{"ASNum":"4294967296"}`, wantStatus: 400, wantCode: "invalid_value"},
		{name: "AS number asdot too large", method: "POST", path: "/config/BGPv4Neighbor", body: `{"NeighborAddress":"192.0.2.3","PeerAS":"65536.1"}`, wantStatus: 400, wantCode: "invalid_value", wantField: "PeerAS"},
		{name: "AS number asdot 0.0", method: "POST", path: "/config/BGPv4Neighbor", body: `{"NeighborAddress":"192.0.2.3","PeerAS":"0.0"}`, wantStatus: 400, wantCode: "invalid_value"},
		{name: "AS number with leading zero", method: "PATCH", path: "/config/BGPv4Neighbor", body: `{"NeighborAddress":"192.0.2.2","LocalAS":"065010"}`, wantStatus: 400, wantCode: "invalid_value"},
		{name: "bad port name", method: "POST", path: "/config/IPv4Intf", body: `{"IntfRef":"fpPort0","IpAddr":"10.6.0.1/24"}`, wantStatus: 400, wantCode: "invalid_value", wantField: "IntfRef"},
		{name: "interface that is no LogicalIntf", method: "POST", path: "/config/IPv4Intf", body: `{"IntfRef":"eth0","IpAddr":"10.6.0.1/24"}`, wantStatus: 400, wantCode: "dangling_reference", wantField: "IntfRef"},
		{name: "VLAN interface of a missing VLAN", method: "POST", path: "/config/IPv4Intf", body: `{"IntfRef":"vlan10","IpAddr":"10.6.0.1/24"}`, wantStatus: 400, wantCode: "dangling_reference", wantField: "IntfRef"},
		{name: "VLAN interface out of range", method: "POST", path: "/config/IPv4Intf", body: `{"IntfRef":"vlan4095","IpAddr":"10.6.0.1/24"}`, wantStatus: 400, wantCode: "invalid_value", wantField: "IntfRef"},
		{name: "neighbor by no interface", method: "POST", path: "/config/BGPv4Neighbor", body: `{"IntfRef":"eth 0","PeerAS":"65002"}`, wantStatus: 400, wantCode: "invalid_value", wantField: "IntfRef"},
		{name: "peer group named as a command word", method: "POST", path: "/config/BGPv4Neighbor", body: `{"NeighborAddress":"192.0.2.9","PeerAS":"65002","PeerGroup":"remote-as"}`, wantStatus: 400, wantCode: "invalid_value", wantField: "PeerGroup", wantMsg: "routing daemon"},
		{name: "redistribution not a list", method: "PATCH", path: "/config/BGPGlobal", body: `{"Redistribution":{"Sources":"STATIC"}}`, wantStatus: 400, wantCode: "wrong_type", wantField: "Redistribution"},
		{name: "redistribution unknown source", method: "PATCH", path: "/config/BGPGlobal", body: `{"Redistribution":[{"Sources":"RIP"}]}`, wantStatus: 400, wantCode: "invalid_value", wantField: "Redistribution"},
		{name: "redistribution source twice", method: "PATCH", path: "/config/BGPGlobal", body: `{"Redistribution":[{"Sources":"STATIC"},{"Sources":"STATIC"}]}`, wantStatus: 400, wantCode: "invalid_value", wantField: "Redistribution"},
		{name: "redistribution in the query", method: "PATCH", path: "/config/BGPGlobal?Redistribution=x", body: `{}`, wantStatus: 400, wantCode: "invalid_value", wantField: "Redistribution"},
		{name: "loopback named like a port", method: "POST", path: "/config/LogicalIntf", body: `{"Name":"fpPort77"}`, wantStatus: 400, wantCode: "invalid_value", wantField: "Name"},
		{name: "loopback of another type", method: "POST", path: "/config/LogicalIntf", body: `{"Name":"Loopback7","Type":"Tunnel"}`, wantStatus: 400, wantCode: "invalid_value", wantField: "Type"},
		{name: "LLDP interval out of range", method: "PATCH", path: "/config/LLDPGlobal", body: `{"TranmitInterval":0}`, wantStatus: 400, wantCode: "invalid_value", wantField: "TranmitInterval"},
		{name: "LLDP snoop not supported", method: "PATCH", path: "/config/LLDPGlobal", body: `{"SnoopAndDrop":true}`, wantStatus: 400, wantCode: "invalid_value", wantField: "SnoopAndDrop", wantMsg: "not supported yet"},
		{name: "bad port name in a list", method: "PATCH", path: "/config/Span", body: `{"SpanSessionName":"mon1","SrcIntfRefList":["fpPort3","fpport4"]}`, wantStatus: 400, wantCode: "invalid_value"},
		{name: "enum not allowed", method: "PATCH", path: "/config/Port", body: `{"IntfRef":"fpPort1","AdminState":"OFF"}`, wantStatus: 400, wantCode: "invalid_value", wantMsg: "UP, DOWN"},
		{name: "breakout mode not allowed", method: "PATCH", path: "/config/Port", body: `{"IntfRef":"fpPort6","BreakOutMode":"8x10"}`, wantStatus: 400, wantCode: "invalid_value"},
		{name: "timestamp not allowed", method: "PATCH", path: "/config/ConfigArchiveServer", body: `{"IpAddr":"archive.example.net","TimeStamp":"hourly"}`, wantStatus: 400, wantCode: "invalid_value"},
		{name: "user access not allowed", method: "PATCH", path: "/config/User", body: `{"Name":"alice","Access":"Telnet"}`, wantStatus: 400, wantCode: "invalid_value"},
		{name: "MinPoll below range", method: "PATCH", path: "/config/NtpServer", body: `{"IpAddr":"192.0.2.10","MinPoll":3}`, wantStatus: 400, wantCode: "invalid_value", wantField: "MinPoll"},
		{name: "MaxPoll above range", method: "POST", path: "/config/NtpServer", body: `{"IpAddr":"192.0.2.20","MaxPoll":18}`, wantStatus: 400, wantCode: "invalid_value", wantField: "MaxPoll"},
		{name: "MinPoll greater than MaxPoll", method: "PATCH", path: "/config/NtpServer", body: `{"IpAddr":"192.0.2.10","MinPoll":11}`, wantStatus: 400, wantCode: "invalid_value", wantMsg: "greater than MaxPoll"},
		{name: "Interval out of range", method: "PATCH", path: "/config/ConfigArchiveServer", body: `{"IpAddr":"archive.example.net","Interval":44641}`, wantStatus: 400, wantCode: "invalid_value"},
		{name: "RetryCount negative", method: "PATCH", path: "/config/ConfigArchiveServer", body: `{"IpAddr":"archive.example.net","RetryCount":-1}`, wantStatus: 400, wantCode: "invalid_value"},
		{name: "Timeout zero", method: "POST", path: "/config/ConfigArchiveServer", body: `{"IpAddr":"192.0.2.30","Timeout":0}`, wantStatus: 400, wantCode: "invalid_value"},
		{name: "Mtu too small", method: "PATCH", path: "/config/Port", body: `{"IntfRef":"fpPort1","Mtu":67}`, wantStatus: 400, wantCode: "invalid_value"},
		{name: "Mtu too large", method: "PATCH", path: "/config/Port", body: `{"IntfRef":"fpPort1","Mtu":9217}`, wantStatus: 400, wantCode: "invalid_value"},
		{name: "Speed out of range", method: "PATCH", path: "/config/Port", body: `{"IntfRef":"fpPort1","speed":100001}`, wantStatus: 400, wantCode: "invalid_value", wantField: "Speed"},
		{name: "Nonce without Passphrase", method: "PATCH", path: "/config/ConfigArchiveServer", body: `{"IpAddr":"archive.example.net","Nonce":"n1"}`, wantStatus: 400, wantCode: "invalid_value"},
		{name: "Passphrase without Nonce", method: "POST", path: "/config/ConfigArchiveServer", body: `{"IpAddr":"192.0.2.30","Passphrase":"pp-secret-1"}`, wantStatus: 400, wantCode: "invalid_value"},
		{name: "relative DstFile", method: "PATCH", path: "/config/ConfigArchiveServer", body: `{"IpAddr":"archive.example.net","DstFile":"startup-config"}`, wantStatus: 400, wantCode: "invalid_value"},
		{name: "short user password", method: "POST", path: "/config/User", body: `{"Name":"bob","Password":"short"}`, wantStatus: 400, wantCode: "invalid_value", wantField: "Password"},
		{name: "password with a newline", method: "POST", path: "/config/User", body: `{"Name":"bob","Password":"bob-secret\nroot::0:0"}`, wantStatus: 400, wantCode: "invalid_value"},
		{name: "bad user name", method: "POST", path: "/config/User", body: `{"Name":"Bob","Password":"bob-secret-1"}`, wantStatus: 400, wantCode: "invalid_value", wantField: "Name"},
		{name: "user name with a colon", method: "POST", path: "/config/User", body: `{"NAME":"bob:x","Password":"bob-secret-1"}`, wantStatus: 400, wantCode: "invalid_value"},
		{name: "bad timezone", method: "PATCH", path: "/config/SystemParam", body: `{"Timezone":"Europe/Atlantis"}`, wantStatus: 400, wantCode: "invalid_value", wantField: "Timezone"},
		{name: "timezone path traversal", method: "PATCH", path: "/config/SystemParam", body: `{"Timezone":"../../etc/passwd"}`, wantStatus: 400, wantCode: "invalid_value"},
		{name: "timezone Local", method: "PATCH", path: "/config/SystemParam", body: `{"Timezone":"Local"}`, wantStatus: 400, wantCode: "invalid_value"},
		{name: "bad hostname", method: "PATCH", path: "/config/SystemParam", body: `{"Hostname":"-switch"}`, wantStatus: 400, wantCode: "invalid_value"},
		{name: "HoldTime 1", method: "POST", path: "/config/BGPv4Neighbor", body: `{"NeighborAddress":"192.0.2.3","PeerAS":"65020","HoldTime":1}`, wantStatus: 400, wantCode: "invalid_value", wantField: "HoldTime"},
		{name: "keepalive over a third of hold", method: "PATCH", path: "/config/BGPv4Neighbor", body: `{"NeighborAddress":"192.0.2.2","HoldTime":9,"KeepaliveTime":4}`, wantStatus: 400, wantCode: "invalid_value"},
		{name: "Span dst in src list", method: "PATCH", path: "/config/Span", body: `{"SpanSessionName":"mon1","SrcIntfRefList":["fpPort3","fpPort2"]}`, wantStatus: 400, wantCode: "invalid_value", wantField: "SrcIntfRefList"},
		{name: "Span source listed twice", method: "POST", path: "/config/Span", body: `{"SpanSessionName":"mon2","DstIntfRef":"fpPort6","SrcIntfRefList":["fpPort7","fpPort7"]}`, wantStatus: 400, wantCode: "invalid_value"},
		{name: "Span without sources", method: "POST", path: "/config/Span", body: `{"SpanSessionName":"mon2","DstIntfRef":"fpPort6","SrcIntfRefList":[]}`, wantStatus: 400, wantCode: "invalid_value"},
		{name: "description too long", method: "PATCH", path: "/config/Port", body: `{"IntfRef":"fpPort1","Description":"` + strings.Repeat("p", 65) + `"}`, wantStatus: 400, wantCode: "invalid_value"},
		{name: "sub-port broken out again", method: "PATCH", path: "/config/Port", body: `{"IntfRef":"fpPort5s3","BreakOutMode":"1x100"}`, wantStatus: 400, wantCode: "invalid_value"},
		{name: "sub-port given its own breakout (switch)", method: "PATCH", path: "/config/Port", body: `{"IntfRef":"fpPort5s3","BreakOutMode":"2x50"}`, wantStatus: 400, wantCode: "backend_failed"},
		{name: "sub-port faster than its lane (switch)", method: "PATCH", path: "/config/Port", body: `{"IntfRef":"fpPort5s1","Speed":40000}`, wantStatus: 400, wantCode: "backend_failed"},
		{name: "unspecified NTP address", method: "POST", path: "/config/NtpServer", body: `{"IpAddr":"::"}`, wantStatus: 400, wantCode: "invalid_value"},
		{name: "address with a leading space", method: "POST", path: "/config/NtpServer", body: `{"IpAddr":" 192.0.2.20"}`, wantStatus: 400, wantCode: "invalid_value"},
		{name: "action: revision beyond 2^53", method: "POST", path: "/action/Rollback", body: `{"Revision":9007199254740993}`, wantStatus: 400, wantCode: "invalid_value"},
		{name: "config log entry without SeqNum", method: "GET", path: "/state/ConfigLog?SeqNum=0", wantStatus: 400, wantCode: "missing_field"},
		{name: "config log SeqNum not a number", method: "GET", path: "/state/ConfigLog", body: `{"SeqNum":"7"}`, wantStatus: 400, wantCode: "wrong_type"},
		{name: "unsupported speed (switch)", method: "PATCH", path: "/config/Port", body: `{"IntfRef":"fpPort1","Speed":20000}`, wantStatus: 400, wantCode: "backend_failed"},
		{name: "bad dry_run", method: "PATCH", path: "/config/NtpServer?dry_run=maybe", body: `{"IpAddr":"192.0.2.10","MinPoll":5}`, wantStatus: 400, wantCode: "invalid_value"},
		{name: "query key disagrees with body", method: "PATCH", path: "/config/NtpServer?IpAddr=192.0.2.10", body: `{"IpAddr":"192.0.2.11","MinPoll":5}`, wantStatus: 400, wantCode: "invalid_value"},
		{name: "query key given twice", method: "PATCH", path: "/config/Port?IntfRef=fpPort1&IntfRef=fpPort2", body: `{"AdminState":"UP"}`, wantStatus: 400, wantCode: "malformed_query", wantField: "IntfRef"},
		{name: "query key and its alias", method: "DELETE", path: "/config/User?Name=alice&NAME=bob", wantStatus: 400, wantCode: "invalid_value", wantField: "Name"},
		{name: "action: bad file URI", method: "POST", path: "/action/SaveConfig", body: `{"DstFileURI":"ftp://host/x"}`, wantStatus: 400, wantCode: "invalid_value"},
		{name: "action: Nonce without Passphrase", method: "POST", path: "/action/ResetConfigToFile", body: `{"Nonce":"n"}`, wantStatus: 400, wantCode: "invalid_value"},
		{name: "action: short password", method: "POST", path: "/action/UserPassword", body: `{"Name":"alice","Password":"short"}`, wantStatus: 400, wantCode: "invalid_value"},
		{name: "action: rollback to revision 0", method: "POST", path: "/action/Rollback", body: `{"Revision":0}`, wantStatus: 400, wantCode: "invalid_value"},
		// Missing required fields.
		{name: "missing key", method: "POST", path: "/config/NtpServer", body: `{"MinPoll":6}`, wantStatus: 400, wantCode: "missing_field", wantField: "IpAddr"},
		{name: "missing required field", method: "POST", path: "/config/IPv4Intf", body: `{"IntfRef":"fpPort6"}`, wantStatus: 400, wantCode: "missing_field", wantField: "IpAddr"},
		{name: "missing Span destination", method: "POST", path: "/config/Span", body: `{"SpanSessionName":"mon2","SrcIntfRefList":["fpPort7"]}`, wantStatus: 400, wantCode: "missing_field", wantField: "DstIntfRef"},
		{name: "missing user password", method: "POST", path: "/config/User", body: `{"Name":"bob"}`, wantStatus: 400, wantCode: "missing_field", wantField: "Password"},
		{name: "empty user password", method: "POST", path: "/config/User", body: `{"Name":"bob","Password":""}`, wantStatus: 400, wantCode: "missing_field"},
		{name: "create with no body", method: "POST", path: "/config/Vrf", wantStatus: 400, wantCode: "missing_field"},
		{name: "update without key", method: "PATCH", path: "/config/NtpServer", body: `{"MinPoll":5}`, wantStatus: 400, wantCode: "missing_field"},
		{name: "delete without key", method: "DELETE", path: "/config/Vrf", wantStatus: 400, wantCode: "missing_field"},
		{name: "action: missing field", method: "POST", path: "/action/UserPassword", body: `{"Name":"alice"}`, wantStatus: 400, wantCode: "missing_field", wantField: "Password"},
		// Keys, create-only and read-only fields.
		{name: "key change by id", method: "PATCH", path: "/config/NtpServer/" + id("ntp"), body: `{"IpAddr":"192.0.2.11"}`, wantStatus: 400, wantCode: "key_change", wantField: "IpAddr"},
		{name: "key change by id through an alias", method: "PATCH", path: "/config/User/" + id("user"), body: `{"NAME":"mallory"}`, wantStatus: 400, wantCode: "key_change"},
		{name: "second key change by id", method: "PATCH", path: "/config/BGPv4Neighbor/" + id("nbr"), body: `{"Vrf":"red"}`, wantStatus: 400, wantCode: "key_change", wantField: "Vrf"},
		{name: "port key change by id", method: "PATCH", path: "/config/Port/" + id("port1"), body: `{"IntfRef":"fpPort2"}`, wantStatus: 400, wantCode: "key_change"},
		{name: "User Group update", method: "PATCH", path: "/config/User", body: `{"Name":"alice","Group":"admin"}`, wantStatus: 400, wantCode: "create_only_field", wantField: "Group"},
		{name: "User Password update", method: "PATCH", path: "/config/User/" + id("user"), body: `{"Password":"alice-secret-2"}`, wantStatus: 400, wantCode: "create_only_field", wantField: "Password"},
		{name: "Port IfIndex change", method: "PATCH", path: "/config/Port", body: `{"IntfRef":"fpPort1","IfIndex":4242}`, wantStatus: 400, wantCode: "read_only_field", wantField: "IfIndex"},
		{name: "Port MacAddr change", method: "PATCH", path: "/config/Port/" + id("port1"), body: `{"MacAddr":"02:00:00:00:00:01"}`, wantStatus: 400, wantCode: "read_only_field"},
		{name: "SystemParam SwVersion change", method: "PATCH", path: "/config/SystemParam", body: `{"SwVersion":"9.9"}`, wantStatus: 400, wantCode: "read_only_field"},
		// Unknown kinds, keys and ids.
		{name: "unknown kind", method: "POST", path: "/config/Widget", body: `{"WidgetId":10}`, wantStatus: 404, wantCode: "unknown_kind", wantMsg: "NtpServer"},
		{name: "unknown kind plural", method: "GET", path: "/config/Widgets", wantStatus: 404, wantCode: "unknown_kind"},
		{name: "state kind name in a config path", method: "GET", path: "/config/PortState", wantStatus: 404, wantCode: "unknown_kind"},
		{name: "unknown state kind", method: "GET", path: "/state/Lldps", wantStatus: 404, wantCode: "unknown_kind"},
		{name: "punctuation in kind", method: "GET", path: "/config/Ntp.Server", wantStatus: 404, wantCode: "unknown_kind"},
		{name: "unknown action", method: "POST", path: "/action/Reboot", body: `{}`, wantStatus: 404, wantCode: "unknown_kind"},
		{name: "plural action", method: "POST", path: "/action/SaveConfigs", body: `{}`, wantStatus: 404, wantCode: "unknown_kind"},
		{name: "unknown class", method: "GET", path: "/settings/Vrf", wantStatus: 404, wantCode: "not_found"},
		{name: "path without a kind", method: "GET", path: "/config/", wantStatus: 404, wantCode: "not_found"},
		{name: "path too long", method: "GET", path: "/config/Vrf/" + id("vrf") + "/extra", wantStatus: 404, wantCode: "not_found"},
		{name: "id after a plural", method: "GET", path: "/config/Vrfs/" + id("vrf"), wantStatus: 404, wantCode: "not_found"},
		{name: "unknown key", method: "GET", path: "/config/Vrf?Vrf=blue", wantStatus: 404, wantCode: "not_found"},
		{name: "unknown key in body", method: "PATCH", path: "/config/NtpServer", body: `{"IpAddr":"192.0.2.99","MinPoll":5}`, wantStatus: 404, wantCode: "not_found"},
		{name: "unknown port", method: "PATCH", path: "/config/Port", body: `{"IntfRef":"fpPort99","AdminState":"UP"}`, wantStatus: 404, wantCode: "not_found"},
		{name: "singleton of another VRF", method: "PATCH", path: "/config/BGPGlobal", body: `{"Vrf":"red","ASNum":"65011"}`, wantStatus: 400, wantCode: "invalid_value", wantField: "Vrf"},
		{name: "unknown key delete", method: "DELETE", path: "/config/Vrf", body: `{"Vrf":"blue"}`, wantStatus: 404, wantCode: "not_found"},
		{name: "unknown uuid", method: "GET", path: "/config/NtpServer/6ba7b810-9dad-41d1-80b4-00c04fd430c8", wantStatus: 404, wantCode: "not_found"},
		{name: "nil uuid", method: "DELETE", path: "/config/NtpServer/00000000-0000-0000-0000-000000000000", wantStatus: 404, wantCode: "not_found"},
		{name: "malformed uuid", method: "PATCH", path: "/config/NtpServer/not-a-uuid", body: `{"MinPoll":5}`, wantStatus: 404, wantCode: "not_found"},
		{name: "uuid without dashes", method: "GET", path: "/config/NtpServer/" + strings.ReplaceAll(id("ntp"), "-", ""), wantStatus: 404, wantCode: "not_found"},
		{name: "uuid in braces", method: "GET", path: "/config/NtpServer/%7B" + id("ntp") + "%7D", wantStatus: 404, wantCode: "not_found"},
		{name: "wrong-kind uuid get", method: "GET", path: "/config/Vrf/" + id("ntp"), wantStatus: 404, wantCode: "not_found"},
		{name: "wrong-kind uuid update", method: "PATCH", path: "/config/Span/" + id("vrf"), body: `{"AdminState":"DOWN"}`, wantStatus: 404, wantCode: "not_found"},
		{name: "wrong-kind uuid delete", method: "DELETE", path: "/config/NtpServer/" + id("cas"), wantStatus: 404, wantCode: "not_found"},
		{name: "wrong-kind uuid state", method: "GET", path: "/state/Vrf/" + id("port1"), wantStatus: 404, wantCode: "not_found"},
		{name: "config log entry by uuid", method: "GET", path: "/state/ConfigLog/" + id("vrf"), wantStatus: 404, wantCode: "not_found"},
		{name: "config log entry that is gone", method: "GET", path: "/state/ConfigLog?SeqNum=99999", wantStatus: 404, wantCode: "not_found"},
		{name: "password of an unknown user", method: "POST", path: "/action/UserPassword", body: `{"Name":"nobody","Password":"nobody-secret-1"}`, wantStatus: 404, wantCode: "not_found"},
		{name: "rollback to an unknown revision", method: "POST", path: "/action/Rollback", body: `{"Revision":999999}`, wantStatus: 404, wantCode: "not_found"},
		// Duplicates.
		{name: "duplicate create", method: "POST", path: "/config/NtpServer", body: `{"IpAddr":"192.0.2.10"}`, wantStatus: 409, wantCode: "duplicate", wantID: "ntp"},
		{name: "duplicate through an alias", method: "POST", path: "/config/User", body: `{"NAME":"alice","Password":"alice-secret-2"}`, wantStatus: 409, wantCode: "duplicate", wantID: "user"},
		{name: "duplicate with a defaulted key", method: "POST", path: "/config/BGPv4Neighbor", body: `{"Vrf":"default","NeighborAddress":"192.0.2.2","PeerAS":"65021"}`, wantStatus: 409, wantCode: "duplicate", wantID: "nbr"},
		{name: "duplicate interface address owner", method: "POST", path: "/config/IPv4Intf", body: `{"IntfRef":"fpPort1","IpAddr":"10.9.0.1/24"}`, wantStatus: 409, wantCode: "duplicate", wantID: "intf"},
		{name: "VRF default", method: "POST", path: "/config/Vrf", body: `{"Vrf":"default"}`, wantStatus: 409, wantCode: "duplicate"},
		// Dangling references.
		{name: "IPv4Intf on fpPort99", method: "POST", path: "/config/IPv4Intf", body: `{"IntfRef":"fpPort99","IpAddr":"10.99.0.1/24"}`, wantStatus: 400, wantCode: "dangling_reference", wantField: "IntfRef"},
		{name: "IPv4Intf on a sub-port not broken out", method: "POST", path: "/config/IPv4Intf", body: `{"IntfRef":"fpPort6s1","IpAddr":"10.6.0.1/24"}`, wantStatus: 400, wantCode: "dangling_reference"},
		{name: "Vrf blue unknown", method: "POST", path: "/config/IPv4Intf", body: `{"IntfRef":"fpPort6","IpAddr":"10.6.0.1/24","Vrf":"blue"}`, wantStatus: 400, wantCode: "dangling_reference", wantField: "Vrf"},
		{name: "Vrf in another case", method: "PATCH", path: "/config/IPv4Intf", body: `{"IntfRef":"fpPort1","Vrf":"RED"}`, wantStatus: 400, wantCode: "dangling_reference"},
		{name: "neighbor in an unknown VRF", method: "POST", path: "/config/BGPv4Neighbor", body: `{"Vrf":"blue","NeighborAddress":"192.0.2.3","PeerAS":"65020"}`, wantStatus: 400, wantCode: "dangling_reference"},
		{name: "BGPVrf of an unknown VRF", method: "POST", path: "/config/BGPVrf", body: `{"Name":"blue"}`, wantStatus: 400, wantCode: "dangling_reference"},
		{name: "Span to an unknown port", method: "PATCH", path: "/config/Span", body: `{"SpanSessionName":"mon1","DstIntfRef":"fpPort9"}`, wantStatus: 400, wantCode: "dangling_reference"},
		// Referenced objects.
		{name: "delete referenced Vrf red", method: "DELETE", path: "/config/Vrf", body: `{"Vrf":"red"}`, wantStatus: 409, wantCode: "referenced", wantMsg: "IPv4Intf"},
		{name: "delete referenced Vrf by query", method: "DELETE", path: "/config/Vrf?Vrf=red", wantStatus: 409, wantCode: "referenced"},
		{name: "delete referenced Vrf by id", method: "DELETE", path: "/config/Vrf/" + id("vrf"), wantStatus: 409, wantCode: "referenced"},
		{name: "breakout back to 1x40 with a sub-port used", method: "PATCH", path: "/config/Port", body: `{"IntfRef":"fpPort5","BreakOutMode":"1x40"}`, wantStatus: 409, wantCode: "referenced", wantMsg: "fpPort5s2"},
		{name: "breakout to 1x100 with a sub-port used", method: "PATCH", path: "/config/Port", body: `{"IntfRef":"fpPort5","BreakOutMode":"1x100","Speed":100000}`, wantStatus: 409, wantCode: "referenced"},
		{name: "breakout to 4x25 with a sub-port used", method: "PATCH", path: "/config/Port", body: `{"IntfRef":"fpPort5","BreakOutMode":"4x25"}`, wantStatus: 409, wantCode: "referenced"},
		// Methods.
		{name: "create a singleton", method: "POST", path: "/config/SystemParam", body: `{}`, wantStatus: 405, wantCode: "method_not_allowed"},
		{name: "create BGPGlobal", method: "POST", path: "/config/BGPGlobal", body: `{"ASNum":"65011"}`, wantStatus: 405, wantCode: "method_not_allowed"},
		{name: "delete a singleton", method: "DELETE", path: "/config/SystemParam", wantStatus: 405, wantCode: "method_not_allowed"},
		{name: "delete a singleton by id", method: "DELETE", path: "/config/SystemParam/" + id("sysparam"), wantStatus: 405, wantCode: "method_not_allowed"},
		{name: "create a port", method: "POST", path: "/config/Port", body: `{"IntfRef":"fpPort9"}`, wantStatus: 405, wantCode: "method_not_allowed"},
		{name: "delete a port", method: "DELETE", path: "/config/Port", body: `{"IntfRef":"fpPort1"}`, wantStatus: 405, wantCode: "method_not_allowed"},
		{name: "delete a port by id", method: "DELETE", path: "/config/Port/" + id("port1"), wantStatus: 405, wantCode: "method_not_allowed"},
		{name: "delete a sub-port", method: "DELETE", path: "/config/Port?IntfRef=fpPort5s1", wantStatus: 405, wantCode: "method_not_allowed"},
		{name: "PUT", method: "PUT", path: "/config/NtpServer", body: `{"IpAddr":"192.0.2.10"}`, wantStatus: 405, wantCode: "method_not_allowed"},
		{name: "PUT by id", method: "PUT", path: "/config/NtpServer/" + id("ntp"), body: `{"MinPoll":5}`, wantStatus: 405, wantCode: "method_not_allowed"},
		{name: "POST by id", method: "POST", path: "/config/Vrf/" + id("vrf"), body: `{}`, wantStatus: 405, wantCode: "method_not_allowed"},
		{name: "POST to a list", method: "POST", path: "/config/Vrfs", body: `{"Vrf":"green"}`, wantStatus: 405, wantCode: "method_not_allowed"},
		{name: "DELETE a list", method: "DELETE", path: "/config/NtpServers", wantStatus: 405, wantCode: "method_not_allowed"},
		{name: "state path with POST", method: "POST", path: "/state/Port", body: `{"IntfRef":"fpPort1"}`, wantStatus: 405, wantCode: "method_not_allowed"},
		{name: "state path with PATCH", method: "PATCH", path: "/state/NtpServer/" + id("ntp"), body: `{"MinPoll":5}`, wantStatus: 405, wantCode: "method_not_allowed"},
		{name: "state path with DELETE", method: "DELETE", path: "/state/ConfigLogs", wantStatus: 405, wantCode: "method_not_allowed"},
		{name: "GET an action", method: "GET", path: "/action/SaveConfig", wantStatus: 405, wantCode: "method_not_allowed"},
		{name: "made-up method", method: "BREW", path: "/config/Vrf", body: `{"Vrf":"red"}`, wantStatus: 405, wantCode: "method_not_allowed"},
		// Paging.
		{name: "Count=0", method: "GET", path: "/config/NtpServers?Count=0", wantStatus: 400, wantCode: "bad_paging", wantField: "Count"},
		{name: "Count=-1", method: "GET", path: "/config/NtpServers?Count=-1", wantStatus: 400, wantCode: "bad_paging"},
		{name: "Count=abc", method: "GET", path: "/config/Ports?Count=abc", wantStatus: 400, wantCode: "bad_paging"},
		{name: "Count=1025", method: "GET", path: "/config/Ports?Count=1025", wantStatus: 400, wantCode: "bad_paging", wantMsg: "1..1024"},
		{name: "Count empty", method: "GET", path: "/config/Ports?Count=", wantStatus: 400, wantCode: "bad_paging"},
		{name: "CurrentMarker=-1", method: "GET", path: "/config/Ports?CurrentMarker=-1", wantStatus: 400, wantCode: "bad_paging", wantField: "CurrentMarker"},
		{name: "CurrentMarker overflows", method: "GET", path: "/state/Ports?CurrentMarker=18446744073709551616", wantStatus: 400, wantCode: "bad_paging"},
		{name: "unknown query parameter", method: "GET", path: "/config/Ports?Offset=3", wantStatus: 400, wantCode: "bad_paging"},
		{name: "key as list parameter", method: "GET", path: "/config/Ports?IntfRef=fpPort1", wantStatus: 400, wantCode: "bad_paging"},
		{name: "bad paging on the config log", method: "GET", path: "/state/ConfigLogs?Count=0", wantStatus: 400, wantCode: "bad_paging"},
		// Size.
		{name: "oversize body", method: "POST", path: "/config/NtpServer", body: huge, wantStatus: 413, wantCode: "body_too_large"},
		{name: "oversize body on an action", method: "POST", path: "/action/UserPassword", body: huge, wantStatus: 413, wantCode: "body_too_large"},
		// Preconditions.
		{name: "If-Match mismatch on update", method: "PATCH", path: "/config/NtpServer", headers: ifMatch(`"1"`), body: `{"IpAddr":"192.0.2.10","MinPoll":5}`, wantStatus: 412, wantCode: "precondition_failed"},
		{name: "If-Match mismatch on a no-op update", method: "PATCH", path: "/config/NtpServer/" + id("ntp"), headers: ifMatch(`"1"`), body: `{"MinPoll":6}`, wantStatus: 412, wantCode: "precondition_failed"},
		{name: "If-Match mismatch on delete", method: "DELETE", path: "/config/NtpServer/" + id("ntp"), headers: ifMatch(`"99999"`), wantStatus: 412, wantCode: "precondition_failed"},
		{name: "weak If-Match", method: "DELETE", path: "/config/Span?SpanSessionName=mon1", headers: ifMatch(`W/` + a.etags["span"]), wantStatus: 412, wantCode: "precondition_failed"},
	}
}

// TestAPIBadInputs sends each bad input to a server holding the fixtures:
// each gets its status and the contract's error body, and the store is
// byte-identical before and after.
func TestAPIBadInputs(t *testing.T) {
	a := newAPIHarness(t)
	a.seed()
	rows := apiBadRows(a)
	if len(rows) < 60 {
		t.Fatalf("%d rows; want at least 60", len(rows))
	}
	seen := map[string]bool{}
	for _, row := range rows {
		if seen[row.name] {
			t.Fatalf("two rows are named %q", row.name)
		}
		seen[row.name] = true
		t.Run(row.name, func(t *testing.T) {
			a.t = t
			before, beforeAcc := a.dump(), a.accountFiles()
			resp, data := a.send(row.method, row.path, row.headers, row.body)
			if resp.StatusCode != row.wantStatus {
				t.Errorf("status %d, want %d: %.300s", resp.StatusCode, row.wantStatus, data)
			}
			if ct := resp.Header.Get("Content-Type"); !strings.HasPrefix(ct, "application/json") {
				t.Errorf("Content-Type %q", ct)
			}
			e, err := decodeErrBody(data)
			switch {
			case err != nil:
				t.Errorf("not the contract's error body (%v): %.300s", err, data)
			case e.Error.Status != resp.StatusCode:
				t.Errorf("Error.Status %d, HTTP status %d", e.Error.Status, resp.StatusCode)
			case e.Error.Code != row.wantCode:
				t.Errorf("Error.Code %q, want %q: %s", e.Error.Code, row.wantCode, e.Error.Message)
			case e.Error.Message == "" || e.Result != "Error: "+e.Error.Message:
				t.Errorf("Result %q, Message %q; want Result \"Error: <Message>\"", e.Result, e.Error.Message)
			case row.wantMsg != "" && !strings.Contains(e.Error.Message, row.wantMsg):
				t.Errorf("message %q does not say %q", e.Error.Message, row.wantMsg)
			case row.wantField != "" && e.Error.Field != row.wantField:
				t.Errorf("Error.Field %q, want %q (%s)", e.Error.Field, row.wantField, e.Error.Message)
			case row.wantID != "" && e.ObjectId != a.ids[row.wantID]:
				t.Errorf("ObjectId %q, want the existing %s %s", e.ObjectId, row.wantID, a.ids[row.wantID])
			case row.wantID == "" && e.ObjectId != "":
				t.Errorf("ObjectId %q in a refusal that is not a duplicate", e.ObjectId)
			}
			if resp.StatusCode == http.StatusMethodNotAllowed {
				allow := resp.Header.Get("Allow")
				if allow == "" || strings.Contains(allow, row.method) {
					t.Errorf("405 with Allow %q", allow)
				}
			}
			if after := a.dump(); !bytes.Equal(before, after) {
				t.Errorf("the store changed:\n%s", dumpDiff(before, after))
			}
			if after := a.accountFiles(); !bytes.Equal(beforeAcc, after) {
				t.Errorf("the account files changed:\n%s", dumpDiff(beforeAcc, after))
			}
			// A refused write is in the config log with its error, and the
			// log does not hold the secrets it carried.
			if isWrite(row.method) && !strings.Contains(row.path, "dry_run") && err == nil {
				entry := a.lastLogEntry()
				if entry["Operation"] != row.method || entry["Result"] != e.Result {
					t.Errorf("last config log entry %v; want %s with Result %q", entry, row.method, e.Result)
				}
				for _, secret := range []string{"bob-secret", "alice-secret-2", "nobody-secret-1", "pp-secret-1"} {
					if s, _ := entry["Data"].(string); strings.Contains(s, secret) {
						t.Errorf("the config log holds %q: %s", secret, s)
					}
				}
			}
		})
	}
	a.t = t
}

// dumpDiff lists the lines only one of two dumps has.
func dumpDiff(before, after []byte) string {
	in := func(lines []string) map[string]bool {
		m := map[string]bool{}
		for _, l := range lines {
			m[l] = true
		}
		return m
	}
	b, a := strings.Split(string(before), "\n"), strings.Split(string(after), "\n")
	bm, am := in(b), in(a)
	var out strings.Builder
	for _, l := range b {
		if !am[l] {
			out.WriteString("- " + l + "\n")
		}
	}
	for _, l := range a {
		if !bm[l] {
			out.WriteString("+ " + l + "\n")
		}
	}
	return out.String()
}

// TestAPIHarmlessRequests is the positive twin of the bad-input table:
// reads, no-op updates, dry runs and preflights succeed and change nothing
// in the store (an update that changes nothing makes no revision).
func TestAPIHarmlessRequests(t *testing.T) {
	a := newAPIHarness(t)
	a.seed()
	rows := []struct {
		name, method, path string
		headers            map[string]string
		body               string
		wantStatus         int
		wantID             string // fixture the body's ObjectId must name
	}{
		{"no-op PATCH by key", "PATCH", "/config/NtpServer", nil, `{"IpAddr":"192.0.2.10","MinPoll":6}`, 200, "ntp"},
		{"no-op PATCH by id", "PATCH", "/config/NtpServer/" + a.ids["ntp"], nil, `{"MaxPoll":10,"SourceIntf":"ma1"}`, 200, "ntp"},
		{"no-op PATCH with a float", "PATCH", "/config/NtpServer", nil, `{"IpAddr":"192.0.2.10","MinPoll":6.0}`, 200, "ntp"},
		{"no-op PATCH by query key", "PATCH", "/config/NtpServer?IpAddr=192.0.2.10", nil, `{"MinPoll":6}`, 200, "ntp"},
		{"no-op PATCH with matching If-Match", "PATCH", "/config/NtpServer", map[string]string{"If-Match": a.etags["ntp"]}, `{"IpAddr":"192.0.2.10"}`, 200, "ntp"},
		{"no-op PATCH with If-Match *", "PATCH", "/config/Vrf", map[string]string{"If-Match": "*"}, `{"Vrf":"red"}`, 200, "vrf"},
		{"no-op PATCH of a port", "PATCH", "/config/Port", nil, `{"IntfRef":"fpPort1","AdminState":"DOWN","Mtu":1500}`, 200, "port1"},
		{"no-op PATCH repeating a read-only value", "PATCH", "/config/SystemParam", nil, `{"SwVersion":"harness"}`, 200, "sysparam"},
		{"no-op PATCH of a singleton, empty body", "PATCH", "/config/SystemParam", nil, `{}`, 200, "sysparam"},
		{"no-op PATCH keeping a sealed secret", "PATCH", "/config/ConfigArchiveServer", nil, `{"IpAddr":"archive.example.net","Password":"","Username":"arch"}`, 200, "cas"},
		{"no-op PATCH of a user with empty password", "PATCH", "/config/User", nil, `{"NAME":"alice","Password":"","Group":"operator","Access":"CLI"}`, 200, "user"},
		{"no-op PATCH with an enum in another case", "PATCH", "/config/Span", nil, `{"SpanSessionName":"mon1","MirrorDir":"both"}`, 200, "span"},
		{"no-op PATCH with the current breakout", "PATCH", "/config/Port", nil, `{"IntfRef":"fpPort5","BreakOutMode":"4x10"}`, 200, "breakout"},
		{"no-op PATCH of the neighbor with the default VRF", "PATCH", "/config/BGPv4Neighbor", nil, `{"Vrf":"default","NeighborAddress":"192.0.2.2","PeerAS":"65020"}`, 200, "nbr"},
		{"dry-run create", "POST", "/config/NtpServer?dry_run=true", nil, `{"IpAddr":"192.0.2.20"}`, 200, ""},
		{"dry-run delete", "DELETE", "/config/NtpServer?dry_run=1", nil, `{"IpAddr":"192.0.2.10"}`, 200, ""},
		{"GET by key", "GET", "/config/Vrf", nil, `{"Vrf":"red"}`, 200, "vrf"},
		{"GET by id, upper-case uuid", "GET", "/config/NtpServer/" + strings.ToUpper(a.ids["ntp"]), nil, ``, 200, "ntp"},
		{"GET all, lower case", "GET", "/config/ntpservers?Count=1&NextMarker=7", nil, ``, 200, ""},
		{"GET state by id", "GET", "/state/IPv4Intf/" + a.ids["intf"], nil, ``, 200, "intf"},
		{"GET config log", "GET", "/state/configlogs?CurrentMarker=0&Count=5", nil, ``, 200, ""},
		{"HEAD by key", "HEAD", "/config/Port?IntfRef=fpPort1", nil, ``, 200, ""},
		{"OPTIONS preflight", "OPTIONS", "/config/Span", nil, ``, 204, ""},
	}
	for _, row := range rows {
		t.Run(row.name, func(t *testing.T) {
			a.t = t
			before := a.dump()
			resp, data := a.send(row.method, row.path, row.headers, row.body)
			if resp.StatusCode != row.wantStatus {
				t.Fatalf("status %d, want %d: %.300s", resp.StatusCode, row.wantStatus, data)
			}
			if row.method != "HEAD" && row.wantStatus != 204 {
				var got struct{ ObjectId string }
				if err := json.Unmarshal(data, &got); err != nil {
					t.Fatalf("body is not a JSON object: %.300s", data)
				}
				if row.wantID != "" && !strings.EqualFold(got.ObjectId, a.ids[row.wantID]) {
					t.Errorf("ObjectId %q, want %s %s", got.ObjectId, row.wantID, a.ids[row.wantID])
				}
			}
			if row.method == "PATCH" && resp.Header.Get("ETag") != a.etags[row.wantID] && a.etags[row.wantID] != "" {
				t.Errorf("ETag %q after a no-op update; the object's is %q", resp.Header.Get("ETag"), a.etags[row.wantID])
			}
			if after := a.dump(); !bytes.Equal(before, after) {
				t.Errorf("the store changed:\n%s", dumpDiff(before, after))
			}
		})
	}
	a.t = t
}

// startParts starts the history and the candidates of a started engine, as
// swmgr serve does.
// newServer is a REST server of eng with the actions of the engine's own
// providers (the history's rollback, the config log's clearing) and the
// accounts' (UserPassword over acc), and extra.
func newServer(t testing.TB, eng *engine.Engine, hist *history.History, cands *candidates.Staging, acc accounts.Accounts, log *slog.Logger, extra ...bind.Provider) *Server {
	t.Helper()
	table, err := bind.Partial(eng.Registry(), append([]bind.Provider{hist, eng.ConfigLog(), users.Actions(eng, acc)}, extra...)...)
	if err != nil {
		t.Fatal(err)
	}
	return New(Options{Engine: eng, History: hist, Candidates: cands, Table: table, Log: log})
}

func startParts(t testing.TB, eng *engine.Engine) (*history.History, *candidates.Staging) {
	t.Helper()
	hist, cands := history.New(eng), candidates.New(eng)
	if err := cands.Start(context.Background()); err != nil {
		t.Fatal(err)
	}
	if err := hist.Start(context.Background()); err != nil {
		t.Fatal(err)
	}
	return hist, cands
}
