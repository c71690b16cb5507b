package gnmi

import (
	"context"
	"encoding/json"
	"os"
	"strconv"
	"strings"
	"testing"
	"time"

	gpb "github.com/openconfig/gnmi/proto/gnmi"

	"github.com/swmgr/swmgr/internal/model"
)

// ocGet is the leaves a Get of an OpenConfig path answers, path -> JSON_IETF value.
func ocGet(t *testing.T, fx *fixture, path string) map[string]string {
	t.Helper()
	return ocGetOf(t, fx, path, "STATE")
}

// ocGetOf is ocGet of one data type (CONFIG, STATE, ALL).
func ocGetOf(t *testing.T, fx *fixture, path, typ string) map[string]string {
	t.Helper()
	r, err := fx.c.Get(context.Background(), &gpb.GetRequest{Path: []*gpb.Path{ocp(path)}, Encoding: gpb.Encoding_JSON_IETF, Type: gpb.GetRequest_DataType(gpb.GetRequest_DataType_value[typ])})
	if err != nil {
		t.Fatalf("get %s: %v", path, err)
	}
	out := map[string]string{}
	for _, n := range r.GetNotification() {
		for _, u := range n.GetUpdate() {
			out[strings.TrimPrefix(pathString(u.GetPath()), "openconfig:")] = string(u.GetVal().GetJsonIetfVal())
		}
	}
	return out
}

// The host's /system state, CPUs, memory, processes and the simulated
// switch's sensors are read from /proc as OpenConfig names them; the
// dataplane's routing table and LLDP neighbours (the service's state
// kinds) become afts and lldp neighbours; a BGP neighbour's received
// prefixes its afi-safi's.
func TestOpenConfigHostAndStateLeaves(t *testing.T) {
	fx := start(t, Options{Version: "9.9.9-test", SimulatedSensors: true, State: func(_ context.Context, k *model.Kind) ([]model.Object, error) {
		switch k.Name {
		case "IPv4RouteState":
			return []model.Object{{"DestinationNw": "10.1.1.0/30", "Protocol": "CONNECTED"}, {"DestinationNw": "10.2.0.0/16", "Protocol": "STATIC"}}, nil
		case "LLDPIntfState":
			return []model.Object{
				{"IntfRef": "fpPort1", "Enable": true, "ReceivedFrames": int64(7), "PeerMac": "52:54:00:00:00:01", "PeerPort": "Ethernet4", "PeerHostName": "leaf2"},
				{"IntfRef": "fpPort2", "Enable": true},
			}, nil
		}
		return nil, nil
	}})
	sys := ocGet(t, fx, "/system/state")
	if sys["/system/state/software-version"] != `"9.9.9-test"` {
		t.Errorf("software-version: %v", sys)
	}
	boot, _ := strconv.ParseInt(strings.Trim(sys["/system/state/boot-time"], `"`), 10, 64)
	up, _ := strconv.ParseInt(strings.Trim(sys["/system/state/up-time"], `"`), 10, 64)
	if d := time.Since(time.Unix(0, boot)) - time.Duration(up); boot == 0 || up == 0 || d < -time.Minute || d > time.Minute {
		t.Errorf("boot-time %d and up-time %d do not agree with the clock", boot, up)
	}
	if _, err := time.Parse(time.RFC3339, strings.Trim(sys["/system/state/current-datetime"], `"`)); err != nil {
		t.Errorf("current-datetime: %v", err)
	}
	if _, ok := sys["/system/state/hostname"]; !ok {
		t.Errorf("/system/state lost the hostname: %v", sys)
	}

	cpus := ocGet(t, fx, "/system/cpus/cpu[index=ALL]/state")
	total, ok := cpus["/system/cpus/cpu[index=ALL]/state/total/instant"]
	if n, err := strconv.Atoi(total); !ok || err != nil || n < 0 || n > 100 {
		t.Errorf("cpu ALL total %q: %v", total, cpus)
	}
	if cpus["/system/cpus/cpu[index=ALL]/state/index"] != `"ALL"` {
		t.Errorf("cpu ALL index: %v", cpus)
	}
	if all := ocGet(t, fx, "/system/cpus/cpu/state/index"); len(all) < 2 || all["/system/cpus/cpu[index=0]/state/index"] != "0" {
		t.Errorf("cpus: %v", all)
	}

	mem := ocGet(t, fx, "/system/memory/state")
	phys, _ := strconv.ParseInt(strings.Trim(mem["/system/memory/state/physical"], `"`), 10, 64)
	free, _ := strconv.ParseInt(strings.Trim(mem["/system/memory/state/free"], `"`), 10, 64)
	if phys <= 0 || free <= 0 || free > phys {
		t.Errorf("memory: %v", mem)
	}

	me := strconv.Itoa(os.Getpid())
	procs := ocGet(t, fx, "/system/processes/process[pid="+me+"]/state")
	prefix := "/system/processes/process[pid=" + me + "]/state/"
	if procs[prefix+"pid"] != `"`+me+`"` || procs[prefix+"name"] == "" || procs[prefix+"memory-usage"] == `"0"` {
		t.Errorf("this process: %v", procs)
	}
	var args []string
	if json.Unmarshal([]byte(procs[prefix+"args"]), &args) != nil || len(args) == 0 || args[0] != os.Args[0] {
		t.Errorf("args %s, want %q first", procs[prefix+"args"], os.Args[0])
	}

	comps := ocGet(t, fx, "/components")
	if comps["/components/component[name=CPU0]/state/temperature/instant"] != `"45.0"` || comps["/components/component[name=CPU0]/state/type"] != `"CPU"` {
		t.Errorf("components: %v", comps)
	}

	afts := ocGet(t, fx, "/network-instances/network-instance[name=DEFAULT]/afts")
	if afts["/network-instances/network-instance[name=default]/afts/ipv4-unicast/ipv4-entry[prefix=10.1.1.0/30]/state/origin-protocol"] != `"DIRECTLY_CONNECTED"` ||
		afts["/network-instances/network-instance[name=default]/afts/ipv4-unicast/ipv4-entry[prefix=10.2.0.0/16]/state/prefix"] != `"10.2.0.0/16"` {
		t.Errorf("afts: %v", afts)
	}

	lldp := ocGet(t, fx, "/lldp/interfaces")
	nb := "/lldp/interfaces/interface[name=fpPort1]/neighbors/neighbor[id=52:54:00:00:00:01]/state/"
	if lldp[nb+"system-name"] != `"leaf2"` || lldp[nb+"port-id"] != `"Ethernet4"` || lldp["/lldp/interfaces/interface[name=fpPort1]/state/counters/frame-in"] != `"7"` {
		t.Errorf("lldp: %v", lldp)
	}
	for p := range lldp {
		if strings.Contains(p, "fpPort2]/neighbors") {
			t.Errorf("a port without a neighbour has a neighbour entry: %s", p)
		}
	}
}

// A SAMPLE subscription to the host's CPU and the Telegraf sample's
// counters sends them at each interval through the state polls.
func TestOpenConfigHostSample(t *testing.T) {
	fx := start(t, Options{})
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	st, err := fx.c.Subscribe(ctx)
	if err != nil {
		t.Fatal(err)
	}
	sub := func(origin, path string) *gpb.Subscription {
		return &gpb.Subscription{Path: p(origin, path), Mode: gpb.SubscriptionMode_SAMPLE, SampleInterval: uint64(200 * time.Millisecond)}
	}
	if err := st.Send(&gpb.SubscribeRequest{Request: &gpb.SubscribeRequest_Subscribe{Subscribe: &gpb.SubscriptionList{
		Mode: gpb.SubscriptionList_STREAM, Encoding: gpb.Encoding_JSON,
		Subscription: []*gpb.Subscription{
			sub("openconfig-system", "/system/cpus/cpu[index=ALL]/state/total/instant"),
			sub("openconfig-interfaces", "/interfaces/interface[name=fpPort1]/state/counters/in-octets"),
		}}}}); err != nil {
		t.Fatal(err)
	}
	cpu, octets := 0, 0
	for cpu < 3 || octets < 3 {
		r, err := st.Recv()
		if err != nil {
			t.Fatalf("after %d cpu and %d counter samples: %v", cpu, octets, err)
		}
		for _, u := range r.GetUpdate().GetUpdate() {
			switch ps := pathString(u.GetPath()); ps {
			case "openconfig-system:/system/cpus/cpu[index=ALL]/state/total/instant":
				cpu++
			case "openconfig-interfaces:/interfaces/interface[name=fpPort1]/state/counters/in-octets":
				octets++
			default:
				t.Errorf("unexpected %s", ps)
			}
		}
	}
}

// An ACL's rules and their counters are openconfig-acl's entries: the set
// named <AclName>:<Direction> with its type, each entry's sequence-id its
// place and its counters (0: the simulated switch counts nothing); the two
// directions of one name are two sets.
func TestOpenConfigACLCounters(t *testing.T) {
	fx := start(t, Options{})
	fx.f.MustApply(
		fx.f.Edit(model.Create, "AclRule", model.Object{"RuleName": "deny-ssh", "Proto": "TCP", "L4DstPort": int64(22), "Action": "Deny"}),
		fx.f.Edit(model.Create, "AclRule", model.Object{"RuleName": "permit"}),
		fx.f.Edit(model.Create, "AclRule", model.Object{"RuleName": "v6", "DestIp": "2001:db8::", "DestMask": "32", "Action": "Deny"}),
		fx.f.Edit(model.Create, "Acl", model.Object{"AclName": "edge", "Direction": "IN", "IntfList": []string{"fpPort1"}, "RuleNameList": []string{"deny-ssh", "permit"}}),
		fx.f.Edit(model.Create, "Acl", model.Object{"AclName": "edge", "Direction": "OUT", "AclType": "IPv6", "IntfList": []string{"fpPort1"}, "RuleNameList": []string{"v6"}}))
	got := ocGet(t, fx, "/acl/acl-sets")
	const in, out = "/acl/acl-sets/acl-set[name=edge:IN][type=ACL_IPV4]/acl-entries/acl-entry", "/acl/acl-sets/acl-set[name=edge:OUT][type=ACL_IPV6]/acl-entries/acl-entry"
	want := map[string]string{
		in + "[sequence-id=1]/state/matched-packets": `"0"`,
		in + "[sequence-id=1]/state/matched-octets":  `"0"`,
		in + "[sequence-id=1]/state/description":     `"deny-ssh"`,
		in + "[sequence-id=1]/state/sequence-id":     `1`,
		in + "[sequence-id=2]/state/description":     `"permit"`,
		out + "[sequence-id=1]/state/description":    `"v6"`,
	}
	for path, w := range want {
		if got[path] != w {
			t.Errorf("%s = %s, want %s (all: %v)", path, got[path], w, got)
		}
	}
	if len(got) != 12 {
		t.Errorf("%d leaves, want 12 (4 per rule): %v", len(got), got)
	}
}

// NTP's state in OpenConfig's names and units: enabled while an
// NtpServer is configured; a server's poll interval in seconds, its
// offset, root delay and dispersion in milliseconds (the simulated
// switch's server is unreachable: polled at MinPoll, no sample).
func TestOpenConfigNTPState(t *testing.T) {
	fx := start(t, Options{})
	if got := ocGet(t, fx, "/system/ntp/state"); got["/system/ntp/state/enabled"] != "false" {
		t.Errorf("/system/ntp/state with no NtpServer: %v; want enabled false", got)
	}
	const server = "/system/ntp/servers/server[address=192.0.2.7]"
	if _, err := fx.c.Set(context.Background(), &gpb.SetRequest{Update: []*gpb.Update{{Path: ocp(server + "/config/address"), Val: jv(`"192.0.2.7"`)}}}); err != nil {
		t.Fatal(err)
	}
	if got := ocGet(t, fx, "/system/ntp/state/enabled"); got["/system/ntp/state/enabled"] != "true" {
		t.Errorf("enabled with an NtpServer: %v; want true", got)
	}
	got := ocGet(t, fx, server+"/state")
	for leaf, want := range map[string]string{
		"poll-interval":   "64", // 2^MinPoll, MinPoll's default 6
		"offset":          `"0"`,
		"root-delay":      "0",
		"root-dispersion": `"0"`,
		"stratum":         "16",
	} {
		if v := got[server+"/state/"+leaf]; v != want {
			t.Errorf("%s/state/%s = %s; want %s (all: %v)", server, leaf, v, want, got)
		}
	}
}

// NtpServer's microseconds become OpenConfig's unsigned milliseconds,
// rounded: the offset's magnitude (either side of the reference), a
// uint64 leaf a string in JSON_IETF; no leaf for what does not fit.
func TestUsecToMillis(t *testing.T) {
	for _, c := range []struct {
		conv      string
		us        string
		ietf      bool
		want      string
		wantEmpty bool
	}{
		{"absusecms64", "-1500", true, `"2"`, false},
		{"absusecms64", "1499", true, `"1"`, false},
		{"absusecms64", "-1499", false, "1", false},
		{"usecms64", "750", true, `"1"`, false},
		{"usecms64", "-750", true, "", true},
		{"usecms", "8463", true, "8", false},
		{"usecms", "4294967295500", false, "", true}, // past uint32
		{"usecms", "x", false, "", true},
	} {
		v, ok := ocConvs[c.conv].to(json.RawMessage(c.us), c.ietf)
		if ok == c.wantEmpty || ok && string(v) != c.want {
			t.Errorf("%s of %s (ietf %v) = %s, %v; want %s", c.conv, c.us, c.ietf, v, ok, c.want)
		}
	}
}
