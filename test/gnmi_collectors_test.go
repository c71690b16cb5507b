package test

import (
	"strings"
	"testing"
	"time"
)

// ifMtu is fpPort1's OpenConfig mtu under the interfaces' first element
// (as gnmi_cli's text proto).
func ifMtu(first string) string {
	return `elem:<name:"` + first + `"> elem:<name:"interface" key:<key:"name" value:"fpPort1">> elem:<name:"state"> elem:<name:"mtu">`
}

// gnmi_cli, a client that is not swmgr's, reaches the OpenConfig leaves
// with each origin form a collector sends: Telegraf's module-named origin,
// gnmic's and pygnmi's module-qualified element, the origin in the prefix,
// and none; and the Telegraf sample's SAMPLE subscription of the
// interfaces' counters (origin openconfig-interfaces) and the host's
// /system leaves are answered at each interval.
func TestGNMICollectorOrigins(t *testing.T) {
	g := startGNMIServer(t, "")
	for _, c := range []struct{ name, req, wantOrigin string }{
		{"module origin", `path:<origin:"openconfig-interfaces" ` + ifMtu("interfaces") + `> type:STATE encoding:JSON_IETF`, `origin:"openconfig-interfaces"`},
		{"qualified element", `path:<` + ifMtu("openconfig-interfaces:interfaces") + `> type:STATE encoding:JSON_IETF`, ``},
		{"origin in the prefix", `prefix:<origin:"openconfig-interfaces"> path:<` + ifMtu("interfaces") + `> type:STATE encoding:JSON_IETF`, `origin:"openconfig-interfaces"`},
		{"no origin", `path:<` + ifMtu("interfaces") + `> type:STATE encoding:JSON_IETF`, ``},
	} {
		out, ok := g.run(t, "admin", blackBoxAdminPassword, "-get", "-proto", c.req)
		if !ok || !strings.Contains(out, `json_ietf_val:"1500"`) || !strings.Contains(out, `elem:{name:"interfaces"}`) || !strings.Contains(out, c.wantOrigin) {
			t.Errorf("%s: %s", c.name, out)
		}
	}

	// The Telegraf sample's subscription, at 1 s instead of its 10 s,
	// beside /system leaves in openconfig-system.
	out, done := g.background(t, "-dt", "p", "-sd", "30s", "-proto", `subscribe:<prefix:<> mode:STREAM encoding:JSON_IETF
subscription:<path:<origin:"openconfig-interfaces" elem:<name:"interfaces"> elem:<name:"interface"> elem:<name:"state"> elem:<name:"counters">> mode:SAMPLE sample_interval:1000000000>
subscription:<path:<origin:"openconfig-system" elem:<name:"system"> elem:<name:"state">> mode:SAMPLE sample_interval:1000000000>
subscription:<path:<origin:"openconfig-system" elem:<name:"system"> elem:<name:"memory"> elem:<name:"state">> mode:SAMPLE sample_interval:1000000000>>`)
	waitFor(t, out, "sync_response:true")
	deadline := time.Now().Add(20 * time.Second)
	for {
		o := strings.Join(strings.Fields(out.String()), "")
		if strings.Count(o, `elem:{name:"in-octets"}`) >= 2*64 && strings.Count(o, `elem:{name:"boot-time"}`) >= 2 && strings.Count(o, `elem:{name:"physical"}`) >= 2 {
			mustContain(t, o, `origin:"openconfig-interfaces"`, `origin:"openconfig-system"`, `elem:{name:"software-version"}`, `elem:{name:"out-errors"}`)
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("two samples of every port's counters and of /system did not come:\n%s", out.String())
		}
		time.Sleep(100 * time.Millisecond)
	}
	select {
	case err := <-done:
		t.Fatalf("the stream ended early: %v", err)
	default:
	}
}
