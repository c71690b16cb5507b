package gnmi

import (
	"context"
	"fmt"
	"strconv"
	"sync"
	"sync/atomic"
	"testing"

	gpb "github.com/openconfig/gnmi/proto/gnmi"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"

	"github.com/swmgr/swmgr/internal/model"
)

// getValue is the JSON of the one update a Get of path answers ("" if
// none), or the status code of its error.
func getValue(t *testing.T, c gpb.GNMIClient, path string) (string, codes.Code) {
	t.Helper()
	r, err := c.Get(context.Background(), &gpb.GetRequest{Encoding: gpb.Encoding_JSON_IETF, Path: []*gpb.Path{p("swmgr", path)}})
	if err != nil {
		return "", status.Code(err)
	}
	var out string
	for _, n := range r.GetNotification() {
		for _, u := range n.GetUpdate() {
			out += string(u.GetVal().GetJsonIetfVal())
		}
	}
	return out, codes.OK
}

// Every commit is seen by the next Get of a path a Get read before.
func TestGetCacheSeesEveryCommit(t *testing.T) {
	fx := start(t, Options{})
	ntp := func(op model.Op, poll int64) {
		fields := model.Object{"IpAddr": "10.0.0.1"}
		if op != model.Delete {
			fields["MinPoll"] = poll
		}
		fx.f.MustApply(fx.f.Edit(op, "NtpServer", fields))
	}
	ntp(model.Create, 5)
	leaf, wild := "/config/NtpServer[IpAddr=10.0.0.1]/MinPoll", "/config/NtpServer[IpAddr=*]/MinPoll"
	want := func(path, value string, code codes.Code) {
		t.Helper()
		for range 2 { // the read, then the cache
			if v, c := getValue(t, fx.c, path); v != value || c != code {
				t.Fatalf("Get %s = %q %v, want %q %v", path, v, c, value, code)
			}
		}
	}
	want(leaf, "5", codes.OK)
	want(wild, "5", codes.OK)
	ntp(model.Update, 7)
	want(leaf, "7", codes.OK)
	want(wild, "7", codes.OK)
	ntp(model.Delete, 0)
	want(leaf, "", codes.NotFound)
	want(wild, "", codes.OK)
	ntp(model.Create, 9)
	want(leaf, "9", codes.OK)
	want(wild, "9", codes.OK)
	// Another object's commit: what was kept is read again, and right.
	fx.f.MustApply(fx.f.Edit(model.Create, "NtpServer", model.Object{"IpAddr": "10.0.0.2", "MinPoll": int64(4)}))
	want(leaf, "9", codes.OK)
	want(wild, "94", codes.OK)
	// Another kind's commit leaves what was kept of NtpServers in use;
	// a wildcard over every kind is read again.
	kept := func(path string) bool {
		key, kind, _ := getCacheKey(nil, p("swmgr", path), dataType{true, true}, gpb.Encoding_JSON_IETF)
		_, ok := fx.srv.gets.get(key, fx.srv.lastCommitOf(kind))
		return ok
	}
	every := "/config/*/MinPoll"
	want(every, "94", codes.OK)
	if !kept(leaf) || !kept(wild) || !kept(every) {
		t.Fatal("a Get read twice is not kept")
	}
	fx.f.MustApply(fx.f.Edit(model.Create, "Vlan", model.Object{"VlanId": int64(10)}))
	if !kept(leaf) || !kept(wild) {
		t.Error("a commit of a Vlan dropped what was kept of NtpServers")
	}
	if kept(every) {
		t.Error("a commit of a Vlan left a Get of every kind in use")
	}
	want(leaf, "9", codes.OK)
	want(every, "94", codes.OK)
}

// A Get that starts after a commit was answered sees it, however many
// Gets of the same path run meanwhile (filling the cache with what they
// read before it).
func TestGetCacheNeverBehindAnAnsweredCommit(t *testing.T) {
	fx := start(t, Options{})
	fx.f.MustApply(fx.f.Edit(model.Create, "NtpServer", model.Object{"IpAddr": "10.0.0.1", "MinPoll": int64(4)}))
	const leaf = "/config/NtpServer[IpAddr=10.0.0.1]/MinPoll"
	var stop atomic.Bool
	var wg sync.WaitGroup
	for range 4 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for !stop.Load() {
				getValue(t, fx.c, leaf)
			}
		}()
	}
	defer func() { stop.Store(true); wg.Wait() }()
	for i := range 200 {
		poll := int64(4 + i%7)
		fx.f.MustApply(fx.f.Edit(model.Update, "NtpServer", model.Object{"IpAddr": "10.0.0.1", "MinPoll": poll}))
		if v, c := getValue(t, fx.c, leaf); v != strconv.FormatInt(poll, 10) || c != codes.OK {
			t.Fatalf("commit %d: Get = %q %v after MinPoll %d was answered", i, v, c, poll)
		}
	}
}

// Two different Gets never share a cache key; the Gets that read state
// or another origin are not kept.
func TestGetCacheKey(t *testing.T) {
	all := dataType{config: true, state: true}
	path := func(origin string, elems ...*gpb.PathElem) *gpb.Path {
		return &gpb.Path{Origin: origin, Elem: elems}
	}
	el := func(name string, kv ...string) *gpb.PathElem {
		e := &gpb.PathElem{Name: name}
		for i := 0; i < len(kv); i += 2 {
			if e.Key == nil {
				e.Key = map[string]string{}
			}
			e.Key[kv[i]] = kv[i+1]
		}
		return e
	}
	cfg := el("config")
	distinct := []struct {
		p   *gpb.Path
		dt  dataType
		enc gpb.Encoding
	}{
		{path("swmgr", cfg, el("NtpServer", "IpAddr", "10.0.0.1"), el("MinPoll")), all, gpb.Encoding_JSON_IETF},
		{path("", cfg, el("NtpServer", "IpAddr", "10.0.0.1"), el("MinPoll")), all, gpb.Encoding_JSON_IETF},
		{path("swmgr", cfg, el("NtpServer", "IpAddr", "10.0.0.1"), el("MinPoll")), all, gpb.Encoding_JSON},
		{path("swmgr", cfg, el("NtpServer", "IpAddr", "10.0.0.1"), el("MinPoll")), dataType{config: true}, gpb.Encoding_JSON_IETF},
		{path("swmgr", cfg, el("NtpServer", "IpAddr", "10.0.0.1"), el("MaxPoll")), all, gpb.Encoding_JSON_IETF},
		{path("swmgr", cfg, el("NtpServer", "IpAddr", "10.0.0.1")), all, gpb.Encoding_JSON_IETF},
		{path("swmgr", cfg, el("NtpServer", "IpAddr", "10.0.0.1\x00\x01MinPoll")), all, gpb.Encoding_JSON_IETF},
		{path("swmgr", cfg, el("NtpServer", "IpAddr", "*"), el("MinPoll")), all, gpb.Encoding_JSON_IETF},
		{path("swmgr", cfg, el("NtpServer"), el("MinPoll")), all, gpb.Encoding_JSON_IETF},
		{path("swmgr", cfg, el("Vlan", "VlanId", "10", "Vrf", "a")), all, gpb.Encoding_JSON_IETF},
		{path("swmgr", cfg, el("Vlan", "VlanId", "10a", "Vrf", "")), all, gpb.Encoding_JSON_IETF},
		{path("swmgr", cfg, el("Vlan", "VlanId", "10", "Vrfa", "")), all, gpb.Encoding_JSON_IETF},
	}
	seen := map[string]int{}
	for i, c := range distinct {
		key, _, ok := getCacheKey(nil, c.p, c.dt, c.enc)
		if !ok {
			t.Errorf("%d: %s is not kept", i, pathString(c.p))
		}
		if j, dup := seen[string(key)]; dup {
			t.Errorf("%d and %d have one key %q", j, i, key)
		}
		seen[string(key)] = i
	}
	// Map order does not change a key.
	a, kind, _ := getCacheKey(nil, path("swmgr", cfg, el("Vlan", "VlanId", "10", "Vrf", "a")), all, 0)
	if kind != "Vlan" {
		t.Errorf("kind %q, want Vlan", kind)
	}
	for range 20 {
		if b, _, _ := getCacheKey(nil, path("swmgr", cfg, el("Vlan", "Vrf", "a", "VlanId", "10")), all, 0); string(a) != string(b) {
			t.Fatalf("one path, two keys: %q %q", a, b)
		}
	}
	for i, c := range []struct {
		p  *gpb.Path
		dt dataType
	}{
		{path("swmgr", el("state"), el("Port", "IntfRef", "fpPort1")), all},
		{path("swmgr", el("*"), el("Port", "IntfRef", "fpPort1")), all},
		{path("openconfig", el("interfaces"), el("interface", "name", "fpPort1")), all},
		{path("swmgr", cfg, el("NtpServer", "IpAddr", "10.0.0.1")), dataType{state: true}},
		{path("swmgr", cfg), all},
	} {
		if _, _, ok := getCacheKey(nil, c.p, c.dt, 0); ok {
			t.Errorf("%d: %s is kept", i, pathString(c.p))
		}
	}
}

// The cache is bounded: by the bytes of one answer, and in entries.
func TestGetCacheBounds(t *testing.T) {
	var c getCache
	val := func(n int) []byte { return make([]byte, n) }
	c.put([]byte("big"), 1, val(maxCachedAnswer+1))
	if _, ok := c.get([]byte("big"), 1); ok {
		t.Error("an answer over maxCachedValue was kept")
	}
	for i := range maxCachedGets + 10 {
		c.put(fmt.Appendf(nil, "k%d", i), 1, val(10))
	}
	if len(c.entries) > maxCachedGets {
		t.Errorf("%d entries kept, more than %d", len(c.entries), maxCachedGets)
	}
	// An entry is used only for the revision it was read at; one read
	// earlier does not replace one read later.
	c.put([]byte("k1"), 2, val(1))
	if _, ok := c.get([]byte("k1"), 1); ok {
		t.Error("an answer was used for another revision than its own")
	}
	c.put([]byte("k1"), 1, val(1))
	if _, ok := c.get([]byte("k1"), 2); !ok {
		t.Error("an answer read earlier replaced one read later")
	}
	c.put([]byte("new"), 2, val(1))
	if _, ok := c.get([]byte("new"), 2); !ok {
		t.Error("the last answer was not kept")
	}
}
