package gnmi

import (
	"bytes"
	"context"
	"encoding/json"
	"slices"
	"strings"
	"testing"

	gpb "github.com/openconfig/gnmi/proto/gnmi"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"

	"github.com/swmgr/swmgr/internal/model"
)

// makeVlans creates VLANs of these ids, with no members.
func makeVlans(fx *fixture, ids ...int64) {
	for _, id := range ids {
		fx.f.MustApply(fx.f.Edit(model.Create, "Vlan", model.Object{"VlanId": id}))
	}
}

// ocp parses an OpenConfig path written as /a/b[k=v]/c.
func ocp(s string) *gpb.Path { return p("openconfig", s) }

// ocStep is one SetRequest of OpenConfig paths, the answer it gets, and
// then the leaves a Get of a path answers ("path=value", the path without
// the step's trim prefix; none for a path to nothing).
type ocStep struct {
	name     string
	del      []string
	rep, upd [][2]string // path, JSON value
	code     codes.Code
	msg      string // in the error
	get      string
	want     []string
}

func runOCSteps(t *testing.T, fx *fixture, trim string, steps []ocStep) {
	t.Helper()
	ctx := context.Background()
	for _, st := range steps {
		before := fx.f.Dump()
		req := &gpb.SetRequest{}
		for _, d := range st.del {
			req.Delete = append(req.Delete, ocp(d))
		}
		for _, u := range st.rep {
			req.Replace = append(req.Replace, &gpb.Update{Path: ocp(u[0]), Val: jv(u[1])})
		}
		for _, u := range st.upd {
			req.Update = append(req.Update, &gpb.Update{Path: ocp(u[0]), Val: jv(u[1])})
		}
		if len(req.Delete)+len(req.Replace)+len(req.Update) > 0 {
			_, err := fx.c.Set(ctx, req)
			if status.Code(err) != st.code || st.msg != "" && !strings.Contains(status.Convert(err).Message(), st.msg) {
				t.Errorf("%s: got %v, want %v %q", st.name, err, st.code, st.msg)
			}
			if st.code != codes.OK && !bytes.Equal(before, fx.f.Dump()) {
				t.Errorf("%s: a refused SetRequest changed the store", st.name)
			}
		}
		if st.get == "" {
			continue
		}
		var got []string
		typ := gpb.GetRequest_CONFIG
		if strings.Contains(st.get, "/state") {
			typ = gpb.GetRequest_STATE
		}
		r, err := fx.c.Get(ctx, &gpb.GetRequest{Path: []*gpb.Path{ocp(st.get)}, Encoding: gpb.Encoding_JSON, Type: typ})
		switch {
		case status.Code(err) == codes.NotFound:
		case err != nil:
			t.Errorf("%s: get %s: %v", st.name, st.get, err)
			continue
		default:
			for _, n := range r.GetNotification() {
				for _, u := range n.GetUpdate() {
					var b bytes.Buffer
					json.Compact(&b, u.GetVal().GetJsonVal())
					got = append(got, strings.TrimPrefix(strings.TrimPrefix(pathString(u.GetPath()), "openconfig:"), trim)+"="+b.String())
				}
			}
		}
		slices.Sort(got)
		want := slices.Clone(st.want)
		slices.Sort(want)
		if !slices.Equal(got, want) {
			t.Errorf("%s: get %s:\n got %q\nwant %q", st.name, st.get, got, want)
		}
	}
}

// VLAN membership on the port's switched-vlan, from and to the Vlans'
// IntfList (tagged) and UntagIntfList (untagged).
func TestOpenConfigSwitchedVlan(t *testing.T) {
	fx := start(t, Options{})
	for _, id := range []int64{10, 20, 30} {
		fx.f.MustApply(fx.f.Edit(model.Create, "Vlan", model.Object{"VlanId": id}))
	}
	const sv1 = "/interfaces/interface[name=fpPort1]/ethernet/switched-vlan"
	const sv2 = "/interfaces/interface[name=fpPort2]/ethernet/switched-vlan"
	runOCSteps(t, fx, "/interfaces/interface", []ocStep{
		{name: "access port", upd: [][2]string{{sv1 + "/config", `{"interface-mode":"ACCESS","openconfig-vlan:access-vlan":10}`}},
			get: "/interfaces/interface[name=*]/ethernet/switched-vlan/config", want: []string{
				"[name=fpPort1]/ethernet/switched-vlan/config/interface-mode=\"ACCESS\"",
				"[name=fpPort1]/ethernet/switched-vlan/config/access-vlan=10",
			}},
		{name: "trunk with a native VLAN", upd: [][2]string{{sv1 + "/config", `{"interface-mode":"openconfig-vlan-types:TRUNK","native-vlan":10,"trunk-vlans":[30,"20..20"]}`}},
			get: sv1 + "/config", want: []string{
				"[name=fpPort1]/ethernet/switched-vlan/config/interface-mode=\"TRUNK\"",
				"[name=fpPort1]/ethernet/switched-vlan/config/native-vlan=10",
				"[name=fpPort1]/ethernet/switched-vlan/config/trunk-vlans=[20,30]",
			}},
		{name: "the state too", get: sv1 + "/state/trunk-vlans", want: []string{"[name=fpPort1]/ethernet/switched-vlan/state/trunk-vlans=[20,30]"}},
		{name: "a VLAN that does not exist", upd: [][2]string{{sv1 + "/config/trunk-vlans", `["20..21"]`}}, code: codes.InvalidArgument, msg: "no Vlan with VlanId 21"},
		{name: "a trunk without tagged VLANs", upd: [][2]string{{sv2 + "/config/interface-mode", `"TRUNK"`}}, code: codes.InvalidArgument, msg: "tagged member"},
		{name: "an access port with trunk VLANs", upd: [][2]string{{sv2 + "/config", `{"interface-mode":"ACCESS","trunk-vlans":[20]}`}}, code: codes.InvalidArgument, msg: "would read"},
		{name: "a bad VLAN id", upd: [][2]string{{sv2 + "/config/access-vlan", `5000`}}, code: codes.InvalidArgument, msg: "not a VLAN id"},
		{name: "a bad mode", upd: [][2]string{{sv2 + "/config/interface-mode", `"HYBRID"`}}, code: codes.InvalidArgument, msg: "ACCESS or TRUNK"},
		{name: "tagged and untagged in one VLAN (the model's check)", upd: [][2]string{{sv1 + "/config/native-vlan", `20`}}, code: codes.InvalidArgument, msg: "also in IntfList"},
		{name: "one bad value refuses the whole request", upd: [][2]string{
			{"/interfaces/interface[name=fpPort2]/config/mtu", `9000`},
			{sv2 + "/config/access-vlan", `99`},
		}, code: codes.InvalidArgument, get: "/interfaces/interface[name=fpPort2]/config/mtu", want: []string{"[name=fpPort2]/config/mtu=1500"}},
		{name: "a replace sets what it gives, the rest goes", rep: [][2]string{{sv1 + "/config", `{"interface-mode":"ACCESS","access-vlan":20}`}},
			get: sv1, want: []string{
				"[name=fpPort1]/ethernet/switched-vlan/config/interface-mode=\"ACCESS\"",
				"[name=fpPort1]/ethernet/switched-vlan/config/access-vlan=20",
			}},
		{name: "a VLAN made in the same request", upd: [][2]string{
			{"/network-instances/network-instance[name=default]/vlans/vlan[vlan-id=40]/config", `{"vlan-id":40,"name":"new"}`},
			{sv2 + "/config", `{"interface-mode":"TRUNK","trunk-vlans":[40,10],"native-vlan":30}`},
		}, get: sv2 + "/config", want: []string{
			"[name=fpPort2]/ethernet/switched-vlan/config/interface-mode=\"TRUNK\"",
			"[name=fpPort2]/ethernet/switched-vlan/config/native-vlan=30",
			"[name=fpPort2]/ethernet/switched-vlan/config/trunk-vlans=[10,40]",
		}},
		{name: "delete trunk-vlans: an access port of the native VLAN", del: []string{sv2 + "/config/trunk-vlans"},
			get: sv2 + "/config", want: []string{
				"[name=fpPort2]/ethernet/switched-vlan/config/interface-mode=\"ACCESS\"",
				"[name=fpPort2]/ethernet/switched-vlan/config/access-vlan=30",
			}},
		{name: "delete the access VLAN", del: []string{sv2 + "/config/access-vlan"}, get: sv2 + "/config"},
		{name: "a replace of nothing", upd: [][2]string{{sv2 + "/config/access-vlan", `30`}}, rep: [][2]string{{sv2 + "/config", `{}`}}, get: sv2 + "/config",
			want: []string{"[name=fpPort2]/ethernet/switched-vlan/config/interface-mode=\"ACCESS\"", "[name=fpPort2]/ethernet/switched-vlan/config/access-vlan=30"}},
		{name: "a replace of nothing empties it", rep: [][2]string{{sv2 + "/config", `{}`}}, get: sv2 + "/config"},
		{name: "delete the container", del: []string{sv1}, get: "/interfaces/interface[name=*]/ethernet/switched-vlan/config"},
		{name: "a leaf that does not map", upd: [][2]string{{sv1 + "/config/dot1q-tunnel", `true`}}, code: codes.Unimplemented, msg: "dot1q-tunnel"},
	})
	for _, id := range []string{"10", "20", "30", "40"} {
		o := fx.f.Object("Vlan", id)
		if len(o.List("IntfList"))+len(o.List("UntagIntfList")) != 0 {
			t.Errorf("Vlan %s keeps members: %v", id, o)
		}
	}
}

// Static routes: IPv4Route's prefix (DestinationNw and NetworkMask), its
// NextHop records (one next-hop each, its address the index) and Cost
// (the metric of each of its next hops).
func TestOpenConfigStaticRoutes(t *testing.T) {
	fx := start(t, Options{})
	const st = "/network-instances/network-instance[name=default]/protocols/protocol[identifier=STATIC][name=STATIC]/static-routes/static"
	const r1 = st + "[prefix=10.2.0.0/16]"
	runOCSteps(t, fx, st, []ocStep{
		{name: "a route with one next hop", upd: [][2]string{{r1 + "/next-hops/next-hop[index=10.1.1.2]/config", `{"index":"10.1.1.2","next-hop":"10.1.1.2","metric":5}`}},
			get: r1 + "/next-hops", want: []string{
				"[prefix=10.2.0.0/16]/next-hops/next-hop[index=10.1.1.2]/config/index=\"10.1.1.2\"",
				"[prefix=10.2.0.0/16]/next-hops/next-hop[index=10.1.1.2]/config/next-hop=\"10.1.1.2\"",
				"[prefix=10.2.0.0/16]/next-hops/next-hop[index=10.1.1.2]/config/metric=5",
			}},
		{name: "a second next hop, through an interface", upd: [][2]string{
			{r1 + "/next-hops/next-hop[index=10.1.1.3]/config/next-hop", `"10.1.1.3"`},
			{r1 + "/next-hops/next-hop[index=10.1.1.3]/interface-ref/config/interface", `"fpPort5"`},
		}, get: st + "[prefix=*]/next-hops/next-hop[index=*]/interface-ref/config/interface", want: []string{
			"[prefix=10.2.0.0/16]/next-hops/next-hop[index=10.1.1.3]/interface-ref/config/interface=\"fpPort5\"",
		}},
		{name: "the prefix, in the state too", get: st + "[prefix=*]/state/prefix", want: []string{"[prefix=10.2.0.0/16]/state/prefix=\"10.2.0.0/16\""}},
		{name: "an index that is not the next hop", upd: [][2]string{{r1 + "/next-hops/next-hop[index=10.1.1.4]/config/next-hop", `"10.1.1.5"`}}, code: codes.InvalidArgument, msg: "given twice"},
		{name: "two metrics for one route", upd: [][2]string{
			{r1 + "/next-hops/next-hop[index=10.1.1.2]/config/metric", `7`},
			{r1 + "/next-hops/next-hop[index=10.1.1.3]/config/metric", `8`},
		}, code: codes.InvalidArgument, msg: "Cost is given twice"},
		{name: "host bits in the prefix", upd: [][2]string{{st + "[prefix=10.2.0.1/16]/next-hops/next-hop[index=10.1.1.2]/config/next-hop", `"10.1.1.2"`}}, code: codes.InvalidArgument, msg: "host bits"},
		{name: "not a prefix", upd: [][2]string{{st + "[prefix=banana]/next-hops/next-hop[index=10.1.1.2]/config/next-hop", `"10.1.1.2"`}}, code: codes.InvalidArgument, msg: "not an IPv4 prefix"},
		{name: "a metric out of range", upd: [][2]string{{r1 + "/next-hops/next-hop[index=10.1.1.2]/config/metric", `300`}}, code: codes.InvalidArgument, msg: "Cost"},
		{name: "delete a next hop", del: []string{r1 + "/next-hops/next-hop[index=10.1.1.2]"},
			get: r1 + "/next-hops/next-hop[index=*]/config/next-hop", want: []string{"[prefix=10.2.0.0/16]/next-hops/next-hop[index=10.1.1.3]/config/next-hop=\"10.1.1.3\""}},
		{name: "the last next hop stays (the model's check)", del: []string{r1 + "/next-hops/next-hop[index=10.1.1.3]"}, code: codes.InvalidArgument, msg: "at least one next hop"},
		{name: "one next hop replaced by another, in one request", del: []string{r1 + "/next-hops/next-hop[index=10.1.1.3]"},
			upd: [][2]string{{r1 + "/next-hops/next-hop[index=10.1.1.4]/config/next-hop", `"10.1.1.4"`}},
			get: r1 + "/next-hops/next-hop[index=*]/config/next-hop", want: []string{"[prefix=10.2.0.0/16]/next-hops/next-hop[index=10.1.1.4]/config/next-hop=\"10.1.1.4\""}},
		{name: "delete the route", del: []string{r1}, get: st + "[prefix=*]/config/prefix"},
		{name: "another protocol", upd: [][2]string{{"/network-instances/network-instance[name=default]/protocols/protocol[identifier=OSPF][name=OSPF]/static-routes/static[prefix=10.3.0.0/16]/config/prefix", `"10.3.0.0/16"`}}, code: codes.Unimplemented},
	})
}

// The interfaces of a network instance: the IPv4Intfs of its VRF.
func TestOpenConfigNetworkInstanceInterfaces(t *testing.T) {
	fx := start(t, Options{})
	fx.f.MustApply(
		fx.f.Edit(model.Create, "Vrf", model.Object{"Vrf": "red"}),
		fx.f.Edit(model.Create, "IPv4Intf", model.Object{"IntfRef": "fpPort6", "IpAddr": "10.6.0.1/24"}),
	)
	const ni = "/network-instances/network-instance"
	runOCSteps(t, fx, ni, []ocStep{
		{name: "the default instance's", get: ni + "[name=DEFAULT]/interfaces/interface[id=*]/config", want: []string{
			"[name=default]/interfaces/interface[id=fpPort6]/config/id=\"fpPort6\"",
			"[name=default]/interfaces/interface[id=fpPort6]/config/interface=\"fpPort6\"",
			"[name=default]/interfaces/interface[id=fpPort6]/config/subinterface=0",
		}},
		{name: "into VRF red", upd: [][2]string{{ni + "[name=red]/interfaces/interface[id=fpPort6]/config", `{"id":"fpPort6","interface":"fpPort6","subinterface":0}`}},
			get: ni + "[name=*]/interfaces/interface[id=*]/config/interface", want: []string{"[name=red]/interfaces/interface[id=fpPort6]/config/interface=\"fpPort6\""}},
		{name: "a subinterface swmgr has not", upd: [][2]string{{ni + "[name=red]/interfaces/interface[id=fpPort6]/config/subinterface", `1`}}, code: codes.InvalidArgument, msg: "subinterface 0"},
		{name: "an id that is not the interface", upd: [][2]string{{ni + "[name=red]/interfaces/interface[id=fpPort6]/config/interface", `"fpPort7"`}}, code: codes.InvalidArgument, msg: "fpPort7"},
		{name: "a VRF that does not exist", upd: [][2]string{{ni + "[name=blue]/interfaces/interface[id=fpPort6]/config/id", `"fpPort6"`}}, code: codes.InvalidArgument, msg: "blue"},
		{name: "an interface without an address", upd: [][2]string{{ni + "[name=red]/interfaces/interface[id=fpPort8]/config/id", `"fpPort8"`}}, code: codes.InvalidArgument, msg: "IpAddr"},
		{name: "leaving another VRF is nothing", del: []string{ni + "[name=default]/interfaces/interface[id=fpPort6]"},
			get: ni + "[name=red]/interfaces/interface[id=*]/state/id", want: []string{"[name=red]/interfaces/interface[id=fpPort6]/state/id=\"fpPort6\""}},
		{name: "leaving VRF red: back in the default instance", del: []string{ni + "[name=red]/interfaces/interface[id=fpPort6]"},
			get: ni + "[name=*]/interfaces/interface[id=*]/config/id", want: []string{"[name=default]/interfaces/interface[id=fpPort6]/config/id=\"fpPort6\""}},
	})
	if o := fx.f.Object("IPv4Intf", "fpPort6"); o.Str("IpAddr") != "10.6.0.1/24" {
		t.Errorf("the address changed: %v", o)
	}
}

// IPv4 addresses are written over OpenConfig too: IPv4Intf's IpAddr is
// the address and prefix length of the interface's one address.
func TestOpenConfigIPv4Addresses(t *testing.T) {
	fx := start(t, Options{})
	const a = "/interfaces/interface[name=fpPort3]/subinterfaces/subinterface[index=0]/ipv4/addresses/address"
	runOCSteps(t, fx, a, []ocStep{
		{name: "create", upd: [][2]string{{a + "[ip=10.3.0.1]/config", `{"ip":"10.3.0.1","prefix-length":24}`}},
			get: a + "[ip=*]/config", want: []string{"[ip=10.3.0.1]/config/ip=\"10.3.0.1\"", "[ip=10.3.0.1]/config/prefix-length=24"}},
		{name: "a new prefix length", upd: [][2]string{{a + "[ip=10.3.0.1]/config/prefix-length", `25`}},
			get: a + "[ip=10.3.0.1]/config/prefix-length", want: []string{"[ip=10.3.0.1]/config/prefix-length=25"}},
		{name: "a second address", upd: [][2]string{{a + "[ip=10.3.0.2]/config/prefix-length", `24`}}, code: codes.InvalidArgument, msg: "holds one"},
		{name: "an ip that is not the key", upd: [][2]string{{a + "[ip=10.3.0.1]/config/ip", `"10.3.0.3"`}}, code: codes.InvalidArgument, msg: "given twice"},
		{name: "a bad prefix length", upd: [][2]string{{a + "[ip=10.3.0.1]/config/prefix-length", `33`}}, code: codes.InvalidArgument, msg: "prefix length"},
		{name: "a bad address", upd: [][2]string{{a + "[ip=10.3.0.300]/config/prefix-length", `24`}}, code: codes.InvalidArgument},
		{name: "no prefix length", upd: [][2]string{{"/interfaces/interface[name=fpPort4]/subinterfaces/subinterface[index=0]/ipv4/addresses/address[ip=10.4.0.1]/config/ip", `"10.4.0.1"`}}, code: codes.InvalidArgument, msg: "IpAddr"},
		{name: "the prefix length alone is not deleted", del: []string{a + "[ip=10.3.0.1]/config/prefix-length"}, code: codes.InvalidArgument, msg: "delete the entry"},
		{name: "deleting another address is nothing", del: []string{a + "[ip=10.3.0.2]"}, get: a + "[ip=*]/config/ip", want: []string{"[ip=10.3.0.1]/config/ip=\"10.3.0.1\""}},
		{name: "another address, in one request", del: []string{a + "[ip=10.3.0.1]"}, upd: [][2]string{{a + "[ip=10.3.0.2]/config", `{"ip":"10.3.0.2","prefix-length":24}`}},
			get: a + "[ip=*]/state/prefix-length", want: []string{"[ip=10.3.0.2]/state/prefix-length=24"}},
		{name: "delete it", del: []string{a + "[ip=10.3.0.2]"}, get: a},
	})
	if fx.f.Exists("IPv4Intf", "fpPort3") {
		t.Error("the address is still there")
	}
}

// ON_CHANGE of leaves many objects make (a port's VLANs) and of records
// (a route's next hops), from commits made by another front end.
func TestOpenConfigSubscribeMembersAndRecords(t *testing.T) {
	fx := start(t, Options{})
	makeVlans(fx, 10, 20)
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	s, err := fx.c.Subscribe(ctx)
	if err != nil {
		t.Fatal(err)
	}
	err = s.Send(&gpb.SubscribeRequest{Request: &gpb.SubscribeRequest_Subscribe{Subscribe: &gpb.SubscriptionList{
		Mode: gpb.SubscriptionList_STREAM, UpdatesOnly: true,
		Subscription: []*gpb.Subscription{
			{Path: ocp("/interfaces/interface[name=fpPort1]/ethernet/switched-vlan/config"), Mode: gpb.SubscriptionMode_ON_CHANGE},
			{Path: ocp("/network-instances/network-instance[name=default]/protocols/protocol[identifier=STATIC][name=STATIC]/static-routes/static[prefix=*]/next-hops/next-hop[index=*]/config/next-hop"), Mode: gpb.SubscriptionMode_ON_CHANGE},
		},
	}}})
	if err != nil {
		t.Fatal(err)
	}
	recv(t, s, "the sync", isSync)
	fx.f.MustApply(fx.f.Edit(model.Update, "Vlan", model.Object{"VlanId": int64(10), "UntagIntfList": []string{"fpPort1", "fpPort2"}}))
	recv(t, s, "access-vlan 10", func(r *gpb.SubscribeResponse) bool {
		return hasUpdate(r, "[name=fpPort1]/ethernet/switched-vlan/config/access-vlan", "10") && hasUpdate(r, "interface-mode", `"ACCESS"`)
	})
	fx.f.MustApply(fx.f.Edit(model.Update, "Vlan", model.Object{"VlanId": int64(20), "IntfList": []string{"fpPort1"}}))
	recv(t, s, "a trunk", func(r *gpb.SubscribeResponse) bool {
		deleted := len(r.GetUpdate().GetDelete()) == 1 && strings.HasSuffix(pathString(r.GetUpdate().GetDelete()[0]), "/access-vlan")
		return deleted && hasUpdate(r, "interface-mode", `"TRUNK"`) && hasUpdate(r, "native-vlan", "10") && hasUpdate(r, "trunk-vlans", "[20]")
	})
	fx.f.MustApply(fx.f.Edit(model.Update, "Vlan", model.Object{"VlanId": int64(10), "UntagIntfList": []string{"fpPort2"}}))
	recv(t, s, "the native VLAN gone", func(r *gpb.SubscribeResponse) bool {
		for _, u := range r.GetUpdate().GetUpdate() {
			if strings.Contains(pathString(u.GetPath()), "fpPort2") || strings.Contains(pathString(u.GetPath()), "interface-mode") {
				return false // unchanged, or another port's
			}
		}
		return len(r.GetUpdate().GetDelete()) == 1 && strings.HasSuffix(pathString(r.GetUpdate().GetDelete()[0]), "/native-vlan")
	})

	route := model.Object{"DestinationNw": "10.2.0.0", "NetworkMask": "255.255.0.0", "NextHop": []model.Object{{"NextHopIp": "10.1.1.2"}, {"NextHopIp": "10.1.1.3"}}}
	fx.f.MustApply(fx.f.Edit(model.Create, "IPv4Route", route))
	recv(t, s, "two next hops", func(r *gpb.SubscribeResponse) bool {
		return hasUpdate(r, "[prefix=10.2.0.0/16]/next-hops/next-hop[index=10.1.1.2]", `"10.1.1.2"`) && hasUpdate(r, "next-hop[index=10.1.1.3]", `"10.1.1.3"`)
	})
	fx.f.MustApply(fx.f.Edit(model.Update, "IPv4Route", model.Object{"DestinationNw": "10.2.0.0", "NetworkMask": "255.255.0.0", "NextHop": []model.Object{{"NextHopIp": "10.1.1.3"}}}))
	recv(t, s, "one next hop gone", func(r *gpb.SubscribeResponse) bool {
		return len(r.GetUpdate().GetUpdate()) == 0 && len(r.GetUpdate().GetDelete()) == 1 && strings.Contains(pathString(r.GetUpdate().GetDelete()[0]), "next-hop[index=10.1.1.2]")
	})
}

// TestMembershipReadOnce: the objects a membership leaf gathers
// (a port's VLANs) are read once, when the first group of subscriptions
// starts, not for each commit, however many groups need them and however
// many of them a commit changes.
func TestMembershipReadOnce(t *testing.T) {
	fx := start(t, Options{})
	makeVlans(fx, 10, 20)
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	var streams []gpb.GNMI_SubscribeClient
	for _, port := range []string{"fpPort1", "fpPort2", "*"} {
		for _, enc := range []gpb.Encoding{gpb.Encoding_JSON, gpb.Encoding_JSON_IETF} {
			s, err := fx.c.Subscribe(ctx)
			if err != nil {
				t.Fatal(err)
			}
			s.Send(&gpb.SubscribeRequest{Request: &gpb.SubscribeRequest_Subscribe{Subscribe: &gpb.SubscriptionList{
				Mode: gpb.SubscriptionList_STREAM, UpdatesOnly: true, Encoding: enc,
				Subscription: []*gpb.Subscription{{Path: ocp("/interfaces/interface[name=" + port + "]/ethernet/switched-vlan/config"), Mode: gpb.SubscriptionMode_ON_CHANGE}},
			}}})
			recv(t, s, "the sync", isSync)
			streams = append(streams, s)
		}
	}
	has := func(r *gpb.SubscribeResponse, leaf, val string) bool {
		for _, u := range r.GetUpdate().GetUpdate() {
			v := u.GetVal().GetJsonVal()
			if v == nil {
				v = u.GetVal().GetJsonIetfVal()
			}
			if strings.HasSuffix(pathString(u.GetPath()), leaf) && strings.Contains(string(v), val) {
				return true
			}
		}
		return false
	}
	reads0 := fx.srv.memberReads.Load()
	fx.f.MustApply(fx.f.Edit(model.Update, "Vlan", model.Object{"VlanId": int64(10), "UntagIntfList": []string{"fpPort1", "fpPort2"}}))
	for _, s := range streams {
		recv(t, s, "access-vlan 10", func(r *gpb.SubscribeResponse) bool { return has(r, "switched-vlan/config/access-vlan", "10") })
	}
	// One commit changing two VLANs.
	fx.f.MustApply(
		fx.f.Edit(model.Update, "Vlan", model.Object{"VlanId": int64(10), "UntagIntfList": []string{"fpPort2"}}),
		fx.f.Edit(model.Update, "Vlan", model.Object{"VlanId": int64(20), "IntfList": []string{"fpPort1", "fpPort2"}}),
	)
	for _, s := range streams {
		recv(t, s, "trunk-vlans [20]", func(r *gpb.SubscribeResponse) bool { return has(r, "switched-vlan/config/trunk-vlans", "20") })
	}
	if n := fx.srv.memberReads.Load() - reads0; n != 0 {
		t.Errorf("%d groups, 2 commits (of 1 and 2 VLANs): the VLANs were read %d times; want none (read when the first group started)", len(streams), n)
	}
	if reads0 != 1 {
		t.Errorf("%d groups started: the VLANs were read %d times; want once", len(streams), reads0)
	}
}

// A LAG in OpenConfig: an interface with its aggregation (type, MinLinks,
// members) and a LACP interface whose settings are written there; a bad
// value is refused naming what it accepts.
func TestOpenConfigLAG(t *testing.T) {
	fx := start(t, Options{})
	fx.f.MustApply(fx.f.Edit(model.Create, "LaPortChannel", model.Object{"IntfRef": "PortChannel1", "IntfRefList": []string{"fpPort1", "fpPort2"}}))
	const agg = "/interfaces/interface[name=PortChannel1]/aggregation"
	const lacp = "/lacp/interfaces/interface[name=PortChannel1]"
	runOCSteps(t, fx, "", []ocStep{
		{name: "the LAG's aggregation", get: agg + "/config", want: []string{
			"/interfaces/interface[name=PortChannel1]/aggregation/config/lag-type=\"LACP\"",
			"/interfaces/interface[name=PortChannel1]/aggregation/config/min-links=1",
		}},
		{name: "its members in state", get: agg + "/state/member", want: []string{
			"/interfaces/interface[name=PortChannel1]/aggregation/state/member=[\"fpPort1\",\"fpPort2\"]",
		}},
		{name: "LACP fast, MinLinks 2", upd: [][2]string{{lacp + "/config/interval", `"FAST"`}, {agg + "/config/min-links", `2`}},
			get: lacp + "/config", want: []string{
				"/lacp/interfaces/interface[name=PortChannel1]/config/interval=\"FAST\"",
				"/lacp/interfaces/interface[name=PortChannel1]/config/lacp-mode=\"ACTIVE\"",
				"/lacp/interfaces/interface[name=PortChannel1]/config/name=\"PortChannel1\"",
				"/lacp/interfaces/interface[name=PortChannel1]/config/system-priority=32768",
			}},
		{name: "a mode that is not one", upd: [][2]string{{lacp + "/config/lacp-mode", `"SOMETIMES"`}}, code: codes.InvalidArgument, msg: "SOMETIMES"},
		{name: "MinLinks above the members (the model's check)", upd: [][2]string{{agg + "/config/min-links", `3`}}, code: codes.InvalidArgument, msg: "MinLinks 3"},
	})
	// The members' LACP state, the simulated switch's: its ports are
	// down, so out of sync; the short timeout of the interval just set.
	members := ocGet(t, fx, lacp+"/members")
	m1 := lacp + "/members/member[interface=fpPort1]/state/"
	if members[m1+"interface"] != `"fpPort1"` || members[m1+"synchronization"] != `"OUT_SYNC"` || members[m1+"collecting"] != "false" ||
		members[m1+"timeout"] != `"SHORT"` || members[m1+"activity"] != `"ACTIVE"` {
		t.Errorf("the members' LACP state: %v", members)
	}
	o := fx.f.Object("LaPortChannel", "PortChannel1")
	if o.Int("Interval") != 0 || o.Int("MinLinks") != 2 {
		t.Errorf("the LAG after the OpenConfig writes: %v", o)
	}
}
