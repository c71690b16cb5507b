package test

import (
	"bytes"
	"context"
	"crypto/sha256"
	"crypto/tls"
	"crypto/x509"
	"errors"
	"fmt"
	"io"
	"math/rand/v2"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	fpb "github.com/openconfig/gnoi/file"
	hpb "github.com/openconfig/gnoi/healthz"
	spb "github.com/openconfig/gnoi/system"
	"github.com/openconfig/gnoi/types"
	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/credentials"
	"google.golang.org/grpc/metadata"
	"google.golang.org/grpc/status"

	"github.com/swmgr/swmgr/internal/testneed"
)

// gnoiServer is a swmgr serving gNMI and gNOI, and a client connection.
type gnoiServer struct {
	*server
	conn *grpc.ClientConn
}

// startGNOIServer starts swmgr with --gnmi on a free address (another if
// it was taken meanwhile) and connects to it with its certificate pinned.
func startGNOIServer(t testing.TB, extra ...string) *gnoiServer {
	t.Helper()
	dir := t.TempDir()
	for attempt := 1; ; attempt++ {
		addr := freeAddr(t)
		s, err := tryStart(t, dir, append([]string{"--gnmi", addr, "--gnoi-reboot", "record"}, extra...)...)
		if err != nil {
			if attempt == 3 || !strings.Contains(s.logs.String(), "address already in use") {
				t.Fatal(err)
			}
			continue
		}
		pem, err := os.ReadFile(filepath.Join(dir, "tls-cert.pem"))
		if err != nil {
			t.Fatal(err)
		}
		pool := x509.NewCertPool()
		pool.AppendCertsFromPEM(pem)
		conn, err := grpc.NewClient(addr, grpc.WithTransportCredentials(credentials.NewTLS(&tls.Config{RootCAs: pool, ServerName: "127.0.0.1"})))
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { conn.Close() })
		return &gnoiServer{server: s, conn: conn}
	}
}

// as is a context of a user's credentials ("" none), ending with the test
// or after a minute: no RPC hangs.
func as(t testing.TB, user, password string) context.Context {
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	t.Cleanup(cancel)
	if user == "" {
		return ctx
	}
	return metadata.AppendToOutgoingContext(ctx, "username", user, "password", password)
}

func asAdmin(t testing.TB) context.Context { return as(t, "admin", blackBoxAdminPassword) }

// wantCode fails the test unless err has code.
func wantCode(t testing.TB, what string, err error, code codes.Code) {
	t.Helper()
	if status.Code(err) != code {
		t.Errorf("%s: %v, want %s", what, err, code)
	}
}

// recvAll reads a server stream to its end.
func recvAll[T any](recv func() (T, error)) ([]T, error) {
	var out []T
	for {
		m, err := recv()
		if errors.Is(err, io.EOF) {
			return out, nil
		}
		if err != nil {
			return out, err
		}
		out = append(out, m)
	}
}

// putFile puts data at p with its SHA-256 (or the hash given).
func putFile(ctx context.Context, c fpb.FileClient, p string, data []byte, sum []byte) error {
	st, err := c.Put(ctx)
	if err != nil {
		return err
	}
	if err := st.Send(&fpb.PutRequest{Request: &fpb.PutRequest_Open{Open: &fpb.PutRequest_Details{RemoteFile: p, Permissions: 0o644}}}); err != nil {
		return err
	}
	for b := data; len(b) > 0; {
		n := min(len(b), 64<<10)
		if err := st.Send(&fpb.PutRequest{Request: &fpb.PutRequest_Contents{Contents: b[:n]}}); err != nil {
			_, err = st.CloseAndRecv()
			return err
		}
		b = b[n:]
	}
	if sum == nil {
		s := sha256.Sum256(data)
		sum = s[:]
	}
	if err := st.Send(&fpb.PutRequest{Request: &fpb.PutRequest_Hash{Hash: &types.HashType{Method: types.HashType_SHA256, Hash: sum}}}); err != nil {
		_, err = st.CloseAndRecv()
		return err
	}
	_, err = st.CloseAndRecv()
	return err
}

// getFile reads p and checks the hash the server sends.
func getFile(ctx context.Context, c fpb.FileClient, p string) ([]byte, error) {
	st, err := c.Get(ctx, &fpb.GetRequest{RemoteFile: p})
	if err != nil {
		return nil, err
	}
	msgs, err := recvAll(st.Recv)
	if err != nil {
		return nil, err
	}
	var data []byte
	var sum []byte
	for _, m := range msgs {
		data = append(data, m.GetContents()...)
		if h := m.GetHash(); h != nil {
			sum = h.GetHash()
		}
	}
	if want := sha256.Sum256(data); !bytes.Equal(sum, want[:]) {
		return data, fmt.Errorf("hash %x, contents' %x", sum, want)
	}
	return data, nil
}

// Each role reaches what gNOI's declaration gives it and no more; without
// credentials nothing; refused changes are in the config log; every RPC
// has its access line.
func TestGNOIRoles(t *testing.T) {
	g := startGNOIServer(t)
	g.expect(t, 201, "POST", "/config/User", `{"Name":"viewer","Group":"users","Password":"viewer-pass-1"}`)
	g.expect(t, 201, "POST", "/config/User", `{"Name":"op1","Group":"operator","Password":"operator-pass-1"}`)
	sys, files, hz := spb.NewSystemClient(g.conn), fpb.NewFileClient(g.conn), hpb.NewHealthzClient(g.conn)

	_, err := sys.Time(as(t, "", ""), &spb.TimeRequest{})
	wantCode(t, "Time without credentials", err, codes.Unauthenticated)
	_, err = sys.Time(as(t, "viewer", "wrong-password"), &spb.TimeRequest{})
	wantCode(t, "Time with a wrong password", err, codes.Unauthenticated)
	before := time.Now()
	tr, err := sys.Time(as(t, "viewer", "viewer-pass-1"), &spb.TimeRequest{})
	if err != nil || time.Unix(0, int64(tr.GetTime())).Before(before.Add(-time.Second)) {
		t.Errorf("Time: %v %v", tr, err)
	}
	waitLine(t, g.logs, `msg=gnmi user=viewer source=127\.0\.0\.1:\d+ method=Time code=OK latency_ms=`)

	viewer, op := as(t, "viewer", "viewer-pass-1"), as(t, "op1", "operator-pass-1")
	_, err = files.Stat(viewer, &fpb.StatRequest{Path: "/uploads"})
	wantCode(t, "a reader's Stat", err, codes.OK)
	_, err = hz.Get(viewer, &hpb.GetRequest{})
	wantCode(t, "a reader's Healthz.Get", err, codes.OK)
	st, _ := files.Get(viewer, &fpb.GetRequest{RemoteFile: "/config/startup-config"})
	_, err = recvAll(st.Recv)
	wantCode(t, "a reader's File.Get", err, codes.PermissionDenied)
	art, _ := hz.Artifact(viewer, &hpb.ArtifactRequest{Id: "debug-bundle"})
	_, err = recvAll(art.Recv)
	wantCode(t, "a reader's Artifact", err, codes.PermissionDenied)
	_, err = sys.Reboot(op, &spb.RebootRequest{Method: spb.RebootMethod_COLD, Delay: uint64(time.Hour)})
	wantCode(t, "an operator's Reboot", err, codes.PermissionDenied)
	_, err = sys.KillProcess(op, &spb.KillProcessRequest{Name: "bgpd", Signal: spb.KillProcessRequest_SIGNAL_TERM, Restart: true})
	wantCode(t, "an operator's KillProcess", err, codes.PermissionDenied)
	_, err = files.Remove(viewer, &fpb.RemoveRequest{RemoteFile: "/uploads/x"})
	wantCode(t, "a reader's Remove", err, codes.PermissionDenied)
	if err := putFile(op, files, "/uploads/x", []byte("x"), nil); status.Code(err) != codes.PermissionDenied {
		t.Errorf("an operator's Put: %v", err)
	}
	waitLine(t, g.logs, `msg=gnmi user=op1 source=127\.0\.0\.1:\d+ method=Reboot code=PermissionDenied latency_ms=`)
	logs := g.expect(t, 200, "GET", "/state/ConfigLogs?Count=1000", "")
	for _, want := range []string{`"API":"gnoi","Operation":"Reboot"`, `"API":"gnoi","Operation":"KillProcess"`, `"API":"gnoi","Operation":"Put"`, `"UserName":"op1"`} {
		if !strings.Contains(string(logs.raw), want) {
			t.Errorf("the config log lacks %s:\n%s", want, logs.raw)
		}
	}

	// The admin's reboot is scheduled, shown and cancelled; with
	// --gnoi-reboot record, one at once is recorded, not carried out.
	admin := asAdmin(t)
	if _, err := sys.Reboot(admin, &spb.RebootRequest{Method: spb.RebootMethod_COLD, Delay: uint64(time.Hour), Message: "maintenance"}); err != nil {
		t.Fatal(err)
	}
	rs, err := sys.RebootStatus(admin, &spb.RebootStatusRequest{})
	if err != nil || !rs.GetActive() || rs.GetReason() != "maintenance" || rs.GetWait() == 0 {
		t.Errorf("RebootStatus of a pending reboot: %v %v", rs, err)
	}
	_, err = sys.Reboot(admin, &spb.RebootRequest{Method: spb.RebootMethod_COLD})
	wantCode(t, "a second Reboot while one is pending", err, codes.FailedPrecondition)
	if _, err := sys.CancelReboot(admin, &spb.CancelRebootRequest{Message: "not now"}); err != nil {
		t.Fatal(err)
	}
	if rs, _ := sys.RebootStatus(admin, &spb.RebootStatusRequest{}); rs.GetActive() {
		t.Errorf("a cancelled reboot is active: %v", rs)
	}
	if _, err := sys.Reboot(admin, &spb.RebootRequest{Method: spb.RebootMethod_COLD, Message: "now"}); err != nil {
		t.Fatal(err)
	}
	waitLine(t, g.logs, `reboot requested over gNOI: recorded, not carried out`)
	_, err = sys.KillProcess(admin, &spb.KillProcessRequest{Name: "bgpd", Signal: spb.KillProcessRequest_SIGNAL_TERM, Restart: true})
	wantCode(t, "KillProcess of a daemon the simulated switch does not run", err, codes.NotFound)
	sp, err := sys.SetPackage(admin)
	if err == nil {
		_, err = sp.CloseAndRecv()
	}
	wantCode(t, "SetPackage", err, codes.Unimplemented)
}

// File reaches the declared areas only: "..", a symbolic link leading out,
// swmgr's own files, a path outside and a Put past the bound are refused
// and write nothing; Put, Stat, Get and Remove work within them.
func TestGNOIFile(t *testing.T) {
	g := startGNOIServer(t)
	files := fpb.NewFileClient(g.conn)
	admin := asAdmin(t)
	data := []byte(strings.Repeat("saved configuration\n", 1000))
	if err := putFile(admin, files, "/uploads/sub/a.txt", data, nil); err != nil {
		t.Fatal(err)
	}
	got, err := getFile(admin, files, "/uploads/sub/a.txt")
	if err != nil || !bytes.Equal(got, data) {
		t.Fatalf("Get of what was Put: %d bytes, %v", len(got), err)
	}
	sr, err := files.Stat(admin, &fpb.StatRequest{Path: "/uploads/sub"})
	if err != nil || len(sr.GetStats()) != 1 || sr.GetStats()[0].GetPath() != "/uploads/sub/a.txt" || sr.GetStats()[0].GetSize() != uint64(len(data)) {
		t.Errorf("Stat: %v %v", sr, err)
	}
	// A saved configuration put under /config is one SaveConfig could have
	// written: the data directory's, readable by the REST lifecycle.
	if err := putFile(admin, files, "/config/from-gnoi", []byte(`{}`), nil); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(filepath.Join(g.dir, "from-gnoi")); err != nil {
		t.Errorf("/config/from-gnoi is not in the data directory: %v", err)
	}
	// A wrong hash writes nothing.
	err = putFile(admin, files, "/uploads/bad.txt", data, make([]byte, 32))
	wantCode(t, "a Put with a wrong hash", err, codes.DataLoss)
	if _, err := os.Stat(filepath.Join(g.dir, "uploads", "bad.txt")); !os.IsNotExist(err) {
		t.Errorf("a Put with a wrong hash left a file: %v", err)
	}
	// Out of bounds: each refused, nothing read or written.
	outside := t.TempDir()
	os.WriteFile(filepath.Join(outside, "secret"), []byte("outside"), 0o600)
	if err := os.Symlink(outside, filepath.Join(g.dir, "uploads", "link")); err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		path string
		code codes.Code
	}{
		{"/uploads/../secret.key", codes.InvalidArgument},
		{"/config/../../etc/passwd", codes.InvalidArgument},
		{"uploads/sub/a.txt", codes.InvalidArgument},
		{"/etc/passwd", codes.PermissionDenied},
		{"/config/secret.key", codes.PermissionDenied},
		{"/config/tls-key.pem", codes.PermissionDenied},
		{"/config/swmgr.db", codes.PermissionDenied},
		{"/config/accounts/shadow", codes.PermissionDenied},
		{"/uploads/link/secret", codes.PermissionDenied},
	} {
		st, err := files.Get(admin, &fpb.GetRequest{RemoteFile: c.path})
		if err == nil {
			_, err = recvAll(st.Recv)
		}
		wantCode(t, "Get "+c.path, err, c.code)
		_, err = files.Stat(admin, &fpb.StatRequest{Path: c.path})
		wantCode(t, "Stat "+c.path, err, c.code)
		err = putFile(admin, files, c.path, []byte("overwritten"), nil)
		wantCode(t, "Put "+c.path, err, c.code)
		_, err = files.Remove(admin, &fpb.RemoveRequest{RemoteFile: c.path})
		wantCode(t, "Remove "+c.path, err, c.code)
	}
	if b, _ := os.ReadFile(filepath.Join(outside, "secret")); string(b) != "outside" {
		t.Errorf("the file behind the link: %q", b)
	}
	// A Put past the bound (64 MiB) is cut at the bound and writes nothing.
	big := make([]byte, 64<<20+1)
	err = putFile(admin, files, "/uploads/big", big, nil)
	wantCode(t, "a Put of 64 MiB and a byte", err, codes.ResourceExhausted)
	if entries, _ := os.ReadDir(filepath.Join(g.dir, "uploads")); len(entries) != 2 { // sub, link
		t.Errorf("the upload area after refused Puts: %v", entries)
	}
	if _, err := files.Remove(admin, &fpb.RemoveRequest{RemoteFile: "/uploads/sub/a.txt"}); err != nil {
		t.Fatal(err)
	}
	_, err = files.Stat(admin, &fpb.StatRequest{Path: "/uploads/sub/a.txt"})
	wantCode(t, "Stat of a removed file", err, codes.NotFound)
}

// Healthz lists swmgr's components, and its debug bundle holds the
// running configuration without its secrets.
func TestGNOIHealthz(t *testing.T) {
	g := startGNOIServer(t)
	g.expect(t, 201, "POST", "/config/User", `{"Name":"op1","Group":"operator","Password":"operator-pass-1"}`)
	hz := hpb.NewHealthzClient(g.conn)
	op := as(t, "op1", "operator-pass-1")
	lr, err := hz.List(op, &hpb.ListRequest{})
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, c := range lr.GetStatuses() {
		names = append(names, c.GetPath().GetElem()[1].GetKey()["name"])
		if c.GetStatus() != hpb.Status_STATUS_HEALTHY {
			t.Errorf("component %v: %s", c.GetPath(), c.GetStatus())
		}
	}
	if strings.Join(names, ",") != "swmgr,store,dataplane-sim" {
		t.Errorf("components: %v", names)
	}
	_, err = hz.Get(op, &hpb.GetRequest{Path: &types.Path{Elem: []*types.PathElem{{Name: "components"}, {Name: "component", Key: map[string]string{"name": "nothing"}}}}})
	wantCode(t, "Healthz.Get of no component", err, codes.NotFound)
	st, err := hz.Artifact(op, &hpb.ArtifactRequest{Id: "debug-bundle"})
	if err != nil {
		t.Fatal(err)
	}
	msgs, err := recvAll(st.Recv)
	if err != nil || len(msgs) < 3 || msgs[0].GetHeader() == nil || msgs[len(msgs)-1].GetTrailer() == nil {
		t.Fatalf("Artifact: %d messages, %v", len(msgs), err)
	}
	var bundle []byte
	for _, m := range msgs {
		bundle = append(bundle, m.GetBytes()...)
	}
	if sum := sha256.Sum256(bundle); !bytes.Equal(sum[:], msgs[0].GetHeader().GetFile().GetHash().GetHash()) {
		t.Errorf("the bundle's hash differs from its header's")
	}
	cmd := exec.Command("tar", "-xzOf", "-")
	cmd.Stdin = bytes.NewReader(bundle)
	contents, err := cmd.Output()
	if err != nil {
		t.Fatalf("tar of the bundle: %v", err)
	}
	for _, want := range []string{`"IntfRef":"fpPort1"`, `"Name":"op1"`, "swmgr ", `"components"`} {
		if !bytes.Contains(contents, []byte(want)) {
			t.Errorf("the bundle lacks %s", want)
		}
	}
	if bytes.Contains(contents, []byte("operator-pass-1")) || bytes.Contains(contents, []byte(blackBoxAdminPassword)) {
		t.Errorf("a password in the debug bundle")
	}
}

// probeLab is a network namespace for the switch (swmgr's Linux
// dataplane) and one for a host two hops away through a router namespace,
// and a front-panel port of the switch, swp3, whose veth reaches the
// router too (the test puts it in a VRF).
type probeLab struct {
	sw, host, rt string
}

func newProbeLab(t *testing.T) probeLab {
	testneed.Program(t, "iputils-ping", "ping")
	testneed.Program(t, "traceroute", "traceroute")
	id := rand.IntN(1 << 20)
	l := probeLab{sw: fmt.Sprintf("gsw%x", id), host: fmt.Sprintf("ghs%x", id), rt: fmt.Sprintf("grt%x", id)}
	run := func(args ...string) {
		t.Helper()
		if out, err := exec.Command("ip", args...).CombinedOutput(); err != nil {
			t.Fatalf("ip %v: %v %s", args, err, out)
		}
	}
	for _, ns := range []string{l.sw, l.host, l.rt} {
		run("netns", "add", ns)
		t.Cleanup(func() { exec.Command("ip", "netns", "del", ns).Run() })
	}
	// the switch's one front-panel port, which the probes do not use
	run("-n", l.sw, "link", "add", "swp1", "type", "veth", "peer", "name", "swp2")
	// switch gA (10.99.1.1) - (10.99.1.2) router (10.99.2.1) - (10.99.2.2) host
	run("-n", l.sw, "link", "add", "gA", "type", "veth", "peer", "name", "gB", "netns", l.rt)
	run("-n", l.rt, "link", "add", "gC", "type", "veth", "peer", "name", "gD", "netns", l.host)
	// the switch's port swp3 (fpPort3, addressed by the test) - (10.99.3.2) router
	run("-n", l.sw, "link", "add", "swp3", "type", "veth", "peer", "name", "gW", "netns", l.rt)
	for _, a := range [][3]string{{l.sw, "gA", "10.99.1.1/24"}, {l.rt, "gB", "10.99.1.2/24"}, {l.rt, "gC", "10.99.2.1/24"}, {l.host, "gD", "10.99.2.2/24"}, {l.rt, "gW", "10.99.3.2/24"}} {
		run("-n", a[0], "addr", "add", a[2], "dev", a[1])
		run("-n", a[0], "link", "set", a[1], "up")
	}
	for _, ns := range []string{l.sw, l.host, l.rt} {
		run("-n", ns, "link", "set", "lo", "up")
	}
	exec.Command("ip", "netns", "exec", l.rt, "sysctl", "-qw", "net.ipv4.ip_forward=1").Run()
	run("-n", l.sw, "route", "add", "10.99.2.0/24", "via", "10.99.1.2")
	run("-n", l.host, "route", "add", "default", "via", "10.99.2.1")
	return l
}

// Ping and Traceroute run from the switch's namespace (and a VRF in it)
// to a host two hops away, streaming what the real programs print; a
// non-admin's flood and too many at once are refused, and nothing hangs.
func TestGNOIPingTraceroute(t *testing.T) {
	l := newProbeLab(t)
	g := startGNOIServer(t, "--backend", "linux", "--netns", l.sw, "--bgp", "sim", "--ntp", "sim", "--system", "sim")
	g.expect(t, 201, "POST", "/config/User", `{"Name":"viewer","Group":"users","Password":"viewer-pass-1"}`)
	sys := spb.NewSystemClient(g.conn)
	viewer := as(t, "viewer", "viewer-pass-1")

	ping := func(ctx context.Context, r *spb.PingRequest) ([]*spb.PingResponse, error) {
		st, err := sys.Ping(ctx, r)
		if err != nil {
			return nil, err
		}
		return recvAll(st.Recv)
	}
	rs, err := ping(viewer, &spb.PingRequest{Destination: "10.99.2.2", Count: 3, Interval: int64(200 * time.Millisecond), Size: 100})
	if err != nil || len(rs) != 4 {
		t.Fatalf("Ping: %v %v", rs, err)
	}
	for i, r := range rs[:3] {
		if r.GetSource() != "10.99.2.2" || r.GetSequence() != int32(i+1) || r.GetTtl() != 63 || r.GetBytes() != 108 || r.GetTime() <= 0 {
			t.Errorf("reply %d: %v", i, r)
		}
	}
	if sum := rs[3]; sum.GetSent() != 3 || sum.GetReceived() != 3 || sum.GetMinTime() <= 0 || sum.GetMaxTime() < sum.GetMinTime() {
		t.Errorf("summary: %v", sum)
	}
	t.Run("VRF", func(t *testing.T) {
		// The VRF as swmgr makes it: a VRF device where the kernel has
		// them, else a namespace of its own (this test machine's kernel
		// lacks CONFIG_NET_VRF), holding fpPort3.
		g.expect(t, 201, "POST", "/config/Vrf", `{"Vrf":"blue"}`)
		g.expect(t, 201, "POST", "/config/IPv4Intf", `{"IntfRef":"fpPort3","IpAddr":"10.99.3.1/24","Vrf":"blue"}`)
		g.expect(t, 200, "PATCH", "/config/Port", `{"IntfRef":"fpPort3","AdminState":"UP"}`)
		t.Logf("VRF blue is a %s", map[bool]string{true: "VRF device", false: "namespace: " + l.sw + "-vrf-blue"}[exec.Command("ip", "-n", l.sw, "link", "show", "blue").Run() == nil])
		// In the VRF: the router is reached through fpPort3 only.
		rs, err := ping(viewer, &spb.PingRequest{Destination: "10.99.3.2", Count: 1, NetworkInstance: "blue"})
		if err != nil || len(rs) != 2 || rs[1].GetReceived() != 1 {
			t.Errorf("Ping in VRF blue: %v %v", rs, err)
		}
		st, err := sys.Traceroute(viewer, &spb.TracerouteRequest{Destination: "10.99.3.2", MaxTtl: 3, NetworkInstance: "blue"})
		if err == nil {
			var trs []*spb.TracerouteResponse
			trs, err = recvAll(st.Recv)
			if err == nil && (len(trs) < 2 || trs[len(trs)-1].GetAddress() != "10.99.3.2") {
				t.Errorf("Traceroute in VRF blue: %v", trs)
			}
		}
		if err != nil {
			t.Errorf("Traceroute in VRF blue: %v", err)
		}
		// Outside it, the switch has no route to the VRF's subnet: ping
		// says the network is unreachable.
		rs, err = ping(viewer, &spb.PingRequest{Destination: "10.99.3.2", Count: 1, Wait: int64(300 * time.Millisecond)})
		if status.Code(err) != codes.InvalidArgument || !strings.Contains(err.Error(), "unreachable") {
			t.Errorf("Ping of the VRF's neighbour outside the VRF: %v %v", rs, err)
		}
	})
	// A VRF that is not there: ip says so.
	_, err = ping(viewer, &spb.PingRequest{Destination: "10.99.2.2", Count: 1, NetworkInstance: "red"})
	wantCode(t, "a ping in a VRF that is not there", err, codes.InvalidArgument)
	// Past the MTU (1500) a ping is fragmented and answered, unless it
	// may not be fragmented.
	rs, err = ping(viewer, &spb.PingRequest{Destination: "10.99.2.2", Count: 1, Size: 3000})
	if err != nil || len(rs) != 2 || rs[1].GetReceived() != 1 || rs[0].GetBytes() != 3008 {
		t.Errorf("a ping past the MTU: %v %v", rs, err)
	}
	rs, err = ping(viewer, &spb.PingRequest{Destination: "10.99.2.2", Count: 1, Size: 3000, DoNotFragment: true, Wait: int64(300 * time.Millisecond)})
	if err != nil || len(rs) != 1 || rs[0].GetReceived() != 0 {
		t.Errorf("a do-not-fragment ping past the MTU: %v %v", rs, err)
	}

	st, err := sys.Traceroute(viewer, &spb.TracerouteRequest{Destination: "10.99.2.2", MaxTtl: 5, Wait: int64(time.Second), L4Protocol: spb.TracerouteRequest_ICMP})
	if err != nil {
		t.Fatal(err)
	}
	hops, err := recvAll(st.Recv)
	if err != nil || len(hops) != 3 || hops[0].GetDestinationAddress() != "10.99.2.2" || hops[1].GetAddress() != "10.99.1.2" || hops[2].GetAddress() != "10.99.2.2" || hops[2].GetHop() != 2 {
		t.Errorf("Traceroute: %v %v", hops, err)
	}

	// Refused: a flood, too many, a name that is not a host name, a VRF
	// name that is an option.
	for _, c := range []struct {
		what string
		r    *spb.PingRequest
		code codes.Code
	}{
		{"a non-admin's 10ms interval", &spb.PingRequest{Destination: "10.99.2.2", Count: 10, Interval: int64(10 * time.Millisecond)}, codes.InvalidArgument},
		{"5000 echo requests", &spb.PingRequest{Destination: "10.99.2.2", Count: 5000}, codes.InvalidArgument},
		{"an option as destination", &spb.PingRequest{Destination: "-f"}, codes.InvalidArgument},
		{"an option as network instance", &spb.PingRequest{Destination: "10.99.2.2", NetworkInstance: "-n"}, codes.InvalidArgument},
		{"a source of another family", &spb.PingRequest{Destination: "10.99.2.2", Source: "::1"}, codes.InvalidArgument},
	} {
		_, err := ping(viewer, c.r)
		wantCode(t, c.what, err, c.code)
	}
	// An admin may send faster.
	if rs, err := ping(asAdmin(t), &spb.PingRequest{Destination: "10.99.2.2", Count: 5, Interval: int64(10 * time.Millisecond)}); err != nil || rs[len(rs)-1].GetReceived() != 5 {
		t.Errorf("an admin's fast ping: %v %v", rs, err)
	}
	// Four at once per user; the fifth is refused at once.
	ctx, cancel := context.WithCancel(viewer)
	var running []spb.System_PingClient
	for range 4 {
		st, err := sys.Ping(ctx, &spb.PingRequest{Destination: "10.99.2.2", Count: 100})
		if err != nil {
			t.Fatal(err)
		}
		if _, err := st.Recv(); err != nil { // running: its first reply came
			t.Fatal(err)
		}
		running = append(running, st)
	}
	_, err = ping(viewer, &spb.PingRequest{Destination: "10.99.2.2", Count: 1})
	wantCode(t, "a fifth ping at once", err, codes.ResourceExhausted)
	cancel()
	for _, st := range running {
		if _, err := recvAll(st.Recv); status.Code(err) != codes.Canceled {
			t.Errorf("a cancelled ping: %v", err)
		}
	}
	// Their pings ended with them: the user may ping again.
	deadline := time.Now().Add(10 * time.Second)
	for {
		_, err := ping(viewer, &spb.PingRequest{Destination: "10.99.2.2", Count: 1})
		if err == nil {
			break
		}
		if status.Code(err) != codes.ResourceExhausted || time.Now().After(deadline) {
			t.Fatalf("a ping after the cancelled ones: %v", err)
		}
		time.Sleep(50 * time.Millisecond)
	}
	if out, _ := exec.Command("pgrep", "-f", "ping -n -4 -c 100").Output(); len(out) > 0 {
		t.Errorf("pings left running: %s", out)
	}
}

// `swmgr cli`'s ping and traceroute run on the switch, over gNOI on its
// gNMI port as the CLI's user: from the switch's namespace they reach a
// host two hops away that the CLI's own namespace has no route to; the
// output has ping's and traceroute's form. Without --gnmi they say how
// to get them.
func TestCLIPingTracerouteOverGNOI(t *testing.T) {
	l := newProbeLab(t)
	httpsAddr, gnmiAddr := freeAddr(t), freeAddr(t)
	s := startServer(t, "", "--https", httpsAddr, "--gnmi", gnmiAddr, "--gnoi-reboot", "record",
		"--backend", "linux", "--netns", l.sw, "--bgp", "sim", "--ntp", "sim", "--system", "sim")
	cert := filepath.Join(s.dir, "tls-cert.pem")
	cliRun := func(commands string, extra ...string) (string, error) {
		args := append([]string{"cli", "--url", "https://" + httpsAddr, "--user", "admin", "--cacert", cert, "-c", commands}, extra...)
		cmd := exec.Command(swmgrBin, args...)
		cmd.Env = append(os.Environ(), "SWMGR_PASSWORD="+blackBoxAdminPassword)
		out, err := cmd.CombinedOutput()
		return string(out), err
	}
	out, err := cliRun("ping 10.99.2.2 count 2 interval 0.2; traceroute 10.99.2.2 max-ttl 5", "--gnmi", gnmiAddr)
	if err != nil {
		t.Fatalf("%v\n%s", err, out)
	}
	for _, want := range []string{
		"bytes from 10.99.2.2: icmp_seq=1 ttl=63 time=", "bytes from 10.99.2.2: icmp_seq=2 ttl=63 time=",
		"--- 10.99.2.2 ping statistics ---\n2 packets transmitted, 2 received, 0% packet loss",
		"rtt min/avg/max/mdev = ",
		"traceroute to 10.99.2.2 (10.99.2.2), 5 hops max", "\n 1  10.99.1.2  ", "\n 2  10.99.2.2  ",
	} {
		if !strings.Contains(out, want) {
			t.Errorf("the CLI's output lacks %q:\n%s", want, out)
		}
	}
	waitLine(t, s.logs, `msg=gnmi user=admin source=127\.0\.0\.1:\d+ method=Ping code=OK`)

	out, err = cliRun("ping 10.99.2.2 count 1")
	if err == nil || !strings.Contains(out, "ERROR: ping and traceroute run on the switch over gNOI: give swmgr cli --gnmi") {
		t.Errorf("ping without --gnmi: %v\n%s", err, out)
	}
	out, err = cliRun("ping 10.99.2.2 count 0", "--gnmi", gnmiAddr)
	if err == nil || !strings.Contains(out, "count \"0\": a number from 1 to 1000") {
		t.Errorf("ping count 0: %v\n%s", err, out)
	}
}
