package configlog

import (
	"bytes"
	"encoding/json"
	"testing"

	"github.com/swmgr/swmgr/internal/model"
)

func TestRedactBody(t *testing.T) {
	reg := model.Builtin()
	for _, tt := range []struct {
		kind, body, want string
	}{
		{"NtpServer", `{"MinPoll":6,"IpAddr":"10.0.0.1","Prefer":true}`, `{"IpAddr":"10.0.0.1","MinPoll":6,"Prefer":true}`},
		{"NtpServer", `{ "IpAddr" : "10.0.0.1" , "Bogus" : "maybe a secret" }`, `{"Bogus":"******","IpAddr":"10.0.0.1"}`},
		{"NtpServer", `{"IpAddr":"caf\u00e9","SourceIntf":"a\"b","MaxPoll":-0,"MinPoll":1e1}`, `{"IpAddr":"caf\u00e9","MaxPoll":-0,"MinPoll":1e1,"SourceIntf":"a\"b"}`},
		{"User", `{"Name":"bob","Password":"hunter22"}`, `{"Name":"bob","Password":"******"}`},
		{"Span", `{"SrcIntfRefList": [ "fpPort1", "fpPort2" ]}`, `{"SrcIntfRefList":["fpPort1","fpPort2"]}`},
		{"NtpServer", `{}`, `{}`},
	} {
		k := reg.Lookup(model.Config, tt.kind)
		if k == nil {
			t.Fatalf("no kind %s", tt.kind)
		}
		body, err := model.DecodeBody([]byte(tt.body))
		if err != nil {
			t.Fatal(err)
		}
		if got := RedactBody(k, body); got != tt.want {
			t.Errorf("RedactBody(%s %s) = %s, want %s", tt.kind, tt.body, got, tt.want)
		}
	}
}

// FuzzCompactToken: what compactToken takes as it is, json.Compact copies
// unchanged.
func FuzzCompactToken(f *testing.F) {
	for _, seed := range []string{`"a"`, `""`, `0`, `-12`, `01`, `-`, `1.5`, `true`, `nul`, `"a\"`, `"é"`, `[1]`, ` 1`} {
		f.Add([]byte(seed))
	}
	f.Fuzz(func(t *testing.T, raw []byte) {
		if !compactToken(raw) {
			return
		}
		var c bytes.Buffer
		if err := json.Compact(&c, raw); err != nil {
			t.Fatalf("compactToken(%q), but json.Compact refuses it: %v", raw, err)
		}
		if !bytes.Equal(c.Bytes(), raw) {
			t.Fatalf("compactToken(%q), but json.Compact makes it %q", raw, c.Bytes())
		}
	})
}
