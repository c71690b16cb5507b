package model

import (
	"strings"
	"testing"

	"github.com/swmgr/swmgr/internal/apierr"
)

// sdkBfdSessionParam is createBfdSessionParam of FlexSwitch's SDK: every
// field, at its defaults.
const sdkBfdSessionParam = `{"Name":"fast","RequiredMinRxInterval":1000,"AuthData":"snaproute","DemandEnabled":false,"AuthKeyId":1,` +
	`"AuthType":"simple","DesiredMinTxInterval":1000,"AuthenticationEnabled":false,"RequiredMinEchoRxInterval":0,"LocalMultiplier":3}`

// sdkBfdSession is createBfdSession's body.
const sdkBfdSession = `{"IpAddr":"10.0.0.2","Interface":"None","Owner":"user","PerLink":false,"ParamName":"default"}`

// TestBfdBodies: the SDK's bodies are taken as they are, and every
// interval or multiplier the BFD daemon cannot run, a name it would read
// as a command's word and what it cannot do (demand mode,
// authentication) is a 400 naming the field.
func TestBfdBodies(t *testing.T) {
	reg := Builtin()
	for kind, body := range map[string]string{"BfdSessionParam": sdkBfdSessionParam, "BfdSession": sdkBfdSession} {
		if _, err := create(reg.Lookup(Config, kind), body); err != nil {
			t.Errorf("%s %s: %v", kind, body, err)
		}
	}
	bad := []struct{ kind, body, field, code string }{
		{"BfdSessionParam", withField(sdkBfdSessionParam, "RequiredMinRxInterval", `0`), "RequiredMinRxInterval", apierr.CodeInvalidValue},
		{"BfdSessionParam", withField(sdkBfdSessionParam, "RequiredMinRxInterval", `9`), "RequiredMinRxInterval", apierr.CodeInvalidValue},
		{"BfdSessionParam", withField(sdkBfdSessionParam, "DesiredMinTxInterval", `0`), "DesiredMinTxInterval", apierr.CodeInvalidValue},
		{"BfdSessionParam", withField(sdkBfdSessionParam, "DesiredMinTxInterval", `60001`), "DesiredMinTxInterval", apierr.CodeInvalidValue},
		{"BfdSessionParam", withField(sdkBfdSessionParam, "LocalMultiplier", `1`), "LocalMultiplier", apierr.CodeInvalidValue},
		{"BfdSessionParam", withField(sdkBfdSessionParam, "LocalMultiplier", `256`), "LocalMultiplier", apierr.CodeInvalidValue},
		{"BfdSessionParam", withField(sdkBfdSessionParam, "RequiredMinEchoRxInterval", `5`), "RequiredMinEchoRxInterval", apierr.CodeInvalidValue},
		{"BfdSessionParam", withField(sdkBfdSessionParam, "DemandEnabled", `true`), "DemandEnabled", apierr.CodeInvalidValue},
		{"BfdSessionParam", withField(sdkBfdSessionParam, "AuthenticationEnabled", `true`), "AuthenticationEnabled", apierr.CodeInvalidValue},
		{"BfdSessionParam", withField(sdkBfdSessionParam, "Name", `"no"`), "Name", apierr.CodeInvalidValue},
		{"BfdSessionParam", withField(sdkBfdSessionParam, "Name", `"fast exit"`), "Name", apierr.CodeInvalidValue},
		{"BfdSession", withField(sdkBfdSession, "IpAddr", `"224.0.0.5"`), "IpAddr", apierr.CodeInvalidValue},
		{"BfdSession", withField(sdkBfdSession, "ParamName", `"shutdown"`), "ParamName", apierr.CodeInvalidValue},
		{"BfdSession", withField(sdkBfdSession, "PerLink", `true`), "PerLink", apierr.CodeInvalidValue},
	}
	for _, b := range bad {
		_, err := create(reg.Lookup(Config, b.kind), b.body)
		ae, ok := err.(*apierr.Error)
		if !ok || ae.Status != 400 || ae.Code != b.code || !strings.Contains(ae.Message, b.field) {
			t.Errorf("%s %s: got %v, want a 400 %s naming %s", b.kind, b.body, err, b.code, b.field)
		}
	}
}
