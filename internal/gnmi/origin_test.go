package gnmi

import (
	"context"
	"strings"
	"testing"

	gpb "github.com/openconfig/gnmi/proto/gnmi"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"
)

// The origin forms collectors send all reach the OpenConfig leaves:
// Telegraf's module-named origin, gnmic's and pygnmi's module-qualified
// first element, the origin in the prefix, and no origin at all. Each
// answers with the path's origin as the client gave it.
func TestCollectorOriginForms(t *testing.T) {
	fx := start(t, Options{})
	ctx := context.Background()
	mtu := func(first string) []*gpb.PathElem {
		return []*gpb.PathElem{{Name: first}, {Name: "interface", Key: map[string]string{"name": "fpPort1"}}, {Name: "config"}, {Name: "mtu"}}
	}
	cases := []struct {
		name         string
		prefix, path *gpb.Path
		wantOrigin   string
	}{
		{"openconfig", nil, &gpb.Path{Origin: "openconfig", Elem: mtu("interfaces")}, "openconfig"},
		{"module origin (Telegraf)", nil, &gpb.Path{Origin: "openconfig-interfaces", Elem: mtu("interfaces")}, "openconfig-interfaces"},
		{"qualified element (gnmic, pygnmi)", nil, &gpb.Path{Elem: mtu("openconfig-interfaces:interfaces")}, ""},
		{"module origin and qualified element", nil, &gpb.Path{Origin: "openconfig-interfaces", Elem: mtu("openconfig-interfaces:interfaces")}, "openconfig-interfaces"},
		{"origin in the prefix", &gpb.Path{Origin: "openconfig-interfaces", Elem: mtu("interfaces")[:1]}, &gpb.Path{Elem: mtu("interfaces")[1:]}, "openconfig-interfaces"},
		{"module in the prefix, openconfig in the path", &gpb.Path{Origin: "openconfig-interfaces"}, &gpb.Path{Origin: "openconfig", Elem: mtu("interfaces")}, "openconfig"},
		{"no origin", nil, &gpb.Path{Elem: mtu("interfaces")}, ""},
	}
	for _, c := range cases {
		r, err := fx.c.Get(ctx, &gpb.GetRequest{Prefix: c.prefix, Path: []*gpb.Path{c.path}, Encoding: gpb.Encoding_JSON_IETF})
		if err != nil {
			t.Errorf("%s: %v", c.name, err)
			continue
		}
		ups := r.GetNotification()[0].GetUpdate()
		if len(ups) != 1 || string(ups[0].GetVal().GetJsonIetfVal()) != "1500" {
			t.Errorf("%s: got %v, want the mtu 1500", c.name, ups)
			continue
		}
		full, _ := joinPath(r.GetNotification()[0].GetPrefix(), ups[0].GetPath())
		if got := pathString(full); got != strings.TrimPrefix(c.wantOrigin+":", ":")+"/interfaces/interface[name=fpPort1]/config/mtu" {
			t.Errorf("%s: answered %s", c.name, got)
		}
	}
	// An origin that is no model's is still refused, naming the forms served.
	_, err := fx.c.Get(ctx, &gpb.GetRequest{Path: []*gpb.Path{{Origin: "ietf-interfaces", Elem: mtu("interfaces")}}})
	if status.Code(err) != codes.Unimplemented || !strings.Contains(status.Convert(err).Message(), "openconfig-interfaces") {
		t.Errorf("origin ietf-interfaces: %v", err)
	}
}
