package model

import (
	"strings"
	"testing"

	"github.com/swmgr/swmgr/internal/apierr"
)

// sdkNeighbor is the body FlexSwitch's SDK createBGPv4Neighbor sends: every
// field, at its default unless given.
const sdkNeighbor = `{"IntfRef":"","NeighborAddress":"10.0.0.2","Description":"","Disabled":false,"PeerGroup":"",
"PeerAS":"65002","LocalAS":"","UpdateSource":"","NextHopSelf":false,"AuthPassword":"","RouteReflectorClusterId":0,
"RouteReflectorClient":false,"MultiHopEnable":false,"MultiHopTTL":0,"ConnectRetryTime":0,"HoldTime":0,"KeepaliveTime":0,
"AddPathsRx":false,"AddPathsMaxTx":0,"BfdEnable":false,"BfdSessionParam":"default","MaxPrefixes":0,
"MaxPrefixesThresholdPct":80,"MaxPrefixesDisconnect":false,"MaxPrefixesRestartTimer":0,"AdjRIBInFilter":"","AdjRIBOutFilter":""}`

// create parses and validates a create body of kind as the engine does.
func create(k *Kind, body string) (Object, error) {
	b, err := DecodeBody([]byte(body))
	if err != nil {
		return nil, err
	}
	given, err := k.Parse(b)
	if err != nil {
		return nil, err
	}
	if err := k.RequireFields(given); err != nil {
		return nil, err
	}
	o := k.Defaults()
	for n, v := range given {
		o[n] = v
	}
	return o, k.Validate(o)
}

// withField replaces (or adds) one field of a JSON object body.
func withField(body, field, value string) string {
	b, err := DecodeBody([]byte(body))
	if err != nil {
		panic(err)
	}
	var parts []string
	for _, n := range sortedNames(b) {
		if n != field {
			parts = append(parts, `"`+n+`":`+string(b[n]))
		}
	}
	parts = append(parts, `"`+field+`":`+value)
	return "{" + strings.Join(parts, ",") + "}"
}

func TestFlexSwitchBodies(t *testing.T) {
	reg := Builtin()
	nk := reg.Lookup(Config, "BGPv4Neighbor")
	gk := reg.Lookup(Config, "BGPGlobal")
	o, err := create(nk, sdkNeighbor)
	if err != nil {
		t.Fatalf("the SDK's create body is refused: %v", err)
	}
	if o.Str("IntfRef") != "" || o.Str("BfdSessionParam") != "default" || o.Int("MaxPrefixesThresholdPct") != 80 || o.Int("ConnectRetryTime") != 0 {
		t.Errorf("defaults: %v", o)
	}
	// Every field FlexSwitch declares is a field of swmgr's neighbor.
	for _, b := range []Body{mustBody(sdkNeighbor)} {
		for n := range b {
			if nk.Field(n) == nil {
				t.Errorf("no field %s", n)
			}
		}
	}
	good := []struct{ field, value string }{
		{"UpdateSource", `"Loopback1"`},
		{"UpdateSource", `"10.0.0.1"`},
		{"MultiHopEnable", `true`},
		{"AddPathsMaxTx", `255`},
		{"MaxPrefixes", `4294967295`},
		{"RouteReflectorClusterId", `4294967295`},
		{"AuthPassword", `"s3cret"`},
		{"BfdEnable", `true`},
		{"HoldTime", `9`},
		{"IntfRef", `"fpPort1"`},
		{"PeerGroup", `"SPINES"`},
		{"PeerAS", `"External"`},
	}
	for _, g := range good {
		if _, err := create(nk, withField(sdkNeighbor, g.field, g.value)); err != nil {
			t.Errorf("%s %s: %v", g.field, g.value, err)
		}
	}
	bad := []struct {
		kind, body, field, code string
	}{
		{"BGPv4Neighbor", withField(sdkNeighbor, "IntfRef", `"eth 0"`), "IntfRef", apierr.CodeInvalidValue},
		// A peer group's name that the routing daemon would read as
		// something else (a word of its commands, an address).
		{"BGPv4Neighbor", withField(sdkNeighbor, "PeerGroup", `"remote-as"`), "PeerGroup", apierr.CodeInvalidValue},
		{"BGPv4Neighbor", withField(sdkNeighbor, "PeerGroup", `"Interface"`), "PeerGroup", apierr.CodeInvalidValue},
		{"BGPv4Neighbor", withField(sdkNeighbor, "PeerGroup", `"10.0.0.1"`), "PeerGroup", apierr.CodeInvalidValue},
		{"BGPv4Neighbor", withField(sdkNeighbor, "PeerGroup", `"pg route-map x in"`), "PeerGroup", apierr.CodeInvalidValue},
		{"BGPv4Neighbor", withField(withField(sdkNeighbor, "NeighborAddress", `""`), "IntfRef", `""`), "NeighborAddress", apierr.CodeInvalidValue},
		{"BGPv4Neighbor", withField(sdkNeighbor, "PeerAS", `""`), "PeerAS", apierr.CodeInvalidValue},
		{"BGPv4Neighbor", withField(sdkNeighbor, "PeerAS", `"externals"`), "PeerAS", apierr.CodeInvalidValue},
		// A BFD parameter set's name the routing daemon would read as a
		// word of its command (neighbor X bfd profile <name>).
		{"BGPv4Neighbor", withField(sdkNeighbor, "BfdSessionParam", `"bfd"`), "BfdSessionParam", apierr.CodeInvalidValue},
		{"BGPv4Neighbor", withField(sdkNeighbor, "BfdSessionParam", `"fast profile"`), "BfdSessionParam", apierr.CodeInvalidValue},
		{"BGPv4Neighbor", withField(sdkNeighbor, "AdjRIBInFilter", `"p1 in"`), "AdjRIBInFilter", apierr.CodeInvalidValue},
		{"BGPv4Neighbor", withField(sdkNeighbor, "AdjRIBOutFilter", `"permit"`), "AdjRIBOutFilter", apierr.CodeInvalidValue},
		{"BGPv4Neighbor", withField(sdkNeighbor, "MultiHopTTL", `5`), "MultiHopTTL", apierr.CodeInvalidValue},
		{"BGPv4Neighbor", withField(sdkNeighbor, "MultiHopTTL", `256`), "MultiHopTTL", apierr.CodeInvalidValue},
		{"BGPv4Neighbor", withField(sdkNeighbor, "MultiHopTTL", `"5"`), "MultiHopTTL", apierr.CodeWrongType},
		{"BGPv4Neighbor", withField(sdkNeighbor, "MaxPrefixesThresholdPct", `101`), "MaxPrefixesThresholdPct", apierr.CodeInvalidValue},
		{"BGPv4Neighbor", withField(sdkNeighbor, "AddPathsRx", `1`), "AddPathsRx", apierr.CodeWrongType},
		{"BGPv4Neighbor", withField(sdkNeighbor, "UpdateSource", `"bad name"`), "UpdateSource", apierr.CodeInvalidValue},
		{"BGPv4Neighbor", withField(sdkNeighbor, "UpdateSource", `"224.0.0.1"`), "UpdateSource", apierr.CodeInvalidValue},
		{"BGPv4Neighbor", withField(sdkNeighbor, "AuthPassword", `"a b"`), "AuthPassword", apierr.CodeInvalidValue},
		{"BGPv4Neighbor", withField(sdkNeighbor, "ConnectRetryTime", `-1`), "ConnectRetryTime", apierr.CodeInvalidValue},
		{"BGPGlobal", `{"Redistribution":{"Sources":"CONNECTED"}}`, "Redistribution", apierr.CodeWrongType},
		{"BGPGlobal", `{"Redistribution":["CONNECTED"]}`, "Redistribution", apierr.CodeWrongType},
		{"BGPGlobal", `{"Redistribution":[{"Source":"CONNECTED"}]}`, "Redistribution", apierr.CodeUnknownField},
		{"BGPGlobal", `{"Redistribution":[{"Sources":1}]}`, "Sources", apierr.CodeWrongType},
		{"BGPGlobal", `{"Redistribution":[{"Sources":"OSPF"}]}`, "Redistribution", apierr.CodeInvalidValue},
		{"BGPGlobal", `{"Redistribution":[{"Sources":"RIP"}]}`, "Redistribution", apierr.CodeInvalidValue},
		{"BGPGlobal", `{"Redistribution":[{"Sources":"STATIC,static"}]}`, "Redistribution", apierr.CodeInvalidValue},
		{"BGPGlobal", `{"Redistribution":[{"Sources":"STATIC"},{"Sources":"CONNECTED,STATIC"}]}`, "Redistribution", apierr.CodeInvalidValue},
		{"BGPGlobal", `{"Redistribution":[{"Sources":"STATIC"},{"Sources":"static"}]}`, "Redistribution", apierr.CodeInvalidValue},
		{"BGPGlobal", `{"Redistribution":[{"Sources":"STATIC","Policy":"rm permit 10"}]}`, "Redistribution", apierr.CodeInvalidValue},
		{"BGPGlobal", `{"EBGPMaxPaths":65}`, "EBGPMaxPaths", apierr.CodeInvalidValue},
	}
	for _, b := range bad {
		k := reg.Lookup(Config, b.kind)
		_, err := create(k, b.body)
		ae, ok := err.(*apierr.Error)
		if !ok || ae.Status != 400 || ae.Code != b.code || !strings.Contains(ae.Message, b.field) {
			t.Errorf("%s %s: got %v, want a 400 %s naming %s", b.kind, b.body, err, b.code, b.field)
		}
	}
	g, err := create(gk, `{"Redistribution":[{"Sources":"connected, Static"}]}`)
	if err != nil {
		t.Fatal(err)
	}
	if got := string(gk.AppendJSON(nil, g, false)); !strings.Contains(got, `"Redistribution":[{"Sources":"CONNECTED,STATIC","Policy":""}]`) {
		t.Errorf("canonical redistribution: %s", got)
	}
	// What is encoded parses back to the same object.
	again, err := create(gk, string(gk.AppendJSON(nil, g, false)))
	if err != nil || !EqualValue(again["Redistribution"], g["Redistribution"]) {
		t.Errorf("round trip: %v, %v", again, err)
	}
	c := g.Clone()
	c.Records("Redistribution")[0]["Sources"] = "STATIC"
	if g.Records("Redistribution")[0].Str("Sources") != "CONNECTED,STATIC" {
		t.Error("Clone shares the records of a RecordList")
	}
}

func mustBody(s string) Body {
	b, err := DecodeBody([]byte(s))
	if err != nil {
		panic(err)
	}
	return b
}

// TestStateForms: the state forms carry FlexSwitch's field names, which
// its SDK printers, CLI and exporter read.
func TestStateForms(t *testing.T) {
	reg := Builtin()
	want := map[string][]string{
		"Port": {"IfInUnknownProtos", "Pvid", "IfEtherUnderSizePktCnt", "IfEtherOverSizePktCnt", "IfEtherFragments", "IfEtherCRCAlignError",
			"IfEtherJabber", "IfEtherPkts", "IfEtherMCPkts", "IfEtherBcastPkts", "IfEtherPkts64OrLessOctets", "IfEtherPkts65To127Octets",
			"IfEtherPkts128To255Octets", "IfEtherPkts256To511Octets", "IfEtherPkts512To1023Octets", "IfEtherPkts1024To1518Octets",
			"ErrDisableReason", "ConfigMode", "PRBSRxErrCnt", "PresentInHW", "LastUpEventTime"},
		"IPv4Intf":      {"LastUpEventTime", "LastDownEventTime", "NumUpEvents", "L2IntfType", "L2IntfId"},
		"BGPGlobal":     {"DefaultMED", "Defaultv4Route", "Defaultv6Route", "Totalv6Prefixes", "Disabled", "EBGPAllowMultipleAS", "Redistribution"},
		"BGPv4Neighbor": {"Messages", "Queues", "BfdNeighborState", "SessionStateDuration", "UpdateSource", "IntfRef", "PeerGroup"},
	}
	for kind, fields := range want {
		k := reg.Lookup(Config, kind)
		js := string(k.AppendJSON(nil, k.Defaults(), true))
		for _, f := range fields {
			if !strings.Contains(js, `"`+f+`":`) {
				t.Errorf("%sState lacks %s: %s", kind, f, js)
			}
		}
	}
	nk := reg.Lookup(Config, "BGPv4Neighbor")
	if js := string(nk.AppendJSON(nil, nk.Defaults(), true)); !strings.Contains(js, `"Messages":{"Sent":{"Update":0,"Notification":0},"Received":{"Update":0,"Notification":0}},"Queues":{"Input":0,"Output":0}`) {
		t.Errorf("nested state records: %s", js)
	}
	for _, name := range []string{"SystemStatus", "SystemSwVersion"} {
		if k := reg.Lookup(State, name); k == nil {
			t.Errorf("state/%s is not declared", name)
		}
	}
}
