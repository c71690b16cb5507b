package gnoi

import (
	"context"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	fpb "github.com/openconfig/gnoi/file"
	hpb "github.com/openconfig/gnoi/healthz"
	ospb "github.com/openconfig/gnoi/os"
	spb "github.com/openconfig/gnoi/system"
	cpb "github.com/openconfig/gnsi/certz"
	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"
)

// Every method of the services swmgr registers has its declared need, and
// the declaration names no method the services lack: a method added to
// gNOI's protos cannot be served without saying who may call it.
func TestEveryMethodDeclared(t *testing.T) {
	declared := map[string]bool{}
	for _, r := range RPCs() {
		if declared[r.FullMethod()] {
			t.Errorf("%s declared twice", r.FullMethod())
		}
		declared[r.FullMethod()] = true
	}
	for _, d := range []grpc.ServiceDesc{spb.System_ServiceDesc, fpb.File_ServiceDesc, hpb.Healthz_ServiceDesc, cpb.Certz_ServiceDesc, ospb.OS_ServiceDesc} {
		var names []string
		for _, m := range d.Methods {
			names = append(names, m.MethodName)
		}
		for _, s := range d.Streams {
			names = append(names, s.StreamName)
		}
		for _, n := range names {
			full := "/" + d.ServiceName + "/" + n
			if !declared[full] {
				t.Errorf("%s has no declared need", full)
			}
			delete(declared, full)
		}
	}
	for m := range declared {
		t.Errorf("%s is declared but not served", m)
	}
}

// The command lines built from requests: the destination parsed and after
// "--", the namespace or VRF as ip's arguments, the bounds refused with
// InvalidArgument before anything runs.
func TestProbeArgs(t *testing.T) {
	l := ProbeLimits{}.withDefaults()
	ctx := context.Background()
	for _, c := range []struct {
		r     *spb.PingRequest
		admin bool
		netns string
		want  string // the command line, or the error's text
		code  codes.Code
	}{
		{r: &spb.PingRequest{Destination: "192.0.2.1"}, want: "ping -n -4 -c 5 -i 1.000 -W 2.000 -- 192.0.2.1"},
		{r: &spb.PingRequest{Destination: "2001:db8::1", Count: 3, Size: 100, DoNotFragment: true, Source: "2001:db8::2", NetworkInstance: "blue"}, netns: "sw",
			want: "ip -n sw vrf exec blue ping -n -6 -c 3 -i 1.000 -W 2.000 -s 100 -M do -I 2001:db8::2 -- 2001:db8::1"},
		{r: &spb.PingRequest{Destination: "::ffff:192.0.2.1", NetworkInstance: "default"}, netns: "sw", want: "ip netns exec sw ping -n -4 -c 5 -i 1.000 -W 2.000 -- 192.0.2.1"},
		{r: &spb.PingRequest{Destination: "192.0.2.1", Interval: int64(10 * time.Millisecond)}, admin: true, want: "ping -n -4 -c 5 -i 0.010 -W 2.000 -- 192.0.2.1"},
		{r: &spb.PingRequest{Destination: "192.0.2.1", Interval: int64(10 * time.Millisecond)}, code: codes.InvalidArgument, want: "is for admins"},
		{r: &spb.PingRequest{Destination: "192.0.2.1", Count: 1001}, code: codes.InvalidArgument, want: "count 1001"},
		{r: &spb.PingRequest{Destination: "192.0.2.1", Count: -1}, code: codes.InvalidArgument, want: "count -1"},
		{r: &spb.PingRequest{Destination: "192.0.2.1", Count: 1000, Interval: int64(time.Second)}, code: codes.InvalidArgument, want: "lasts more than"},
		{r: &spb.PingRequest{Destination: "192.0.2.1", Size: 70000}, code: codes.InvalidArgument, want: "size 70000"},
		{r: &spb.PingRequest{Destination: "-f"}, code: codes.InvalidArgument, want: "neither an IP address nor a host name"},
		{r: &spb.PingRequest{Destination: "a b"}, code: codes.InvalidArgument, want: "neither"},
		{r: &spb.PingRequest{Destination: "fe80::1%eth0"}, code: codes.InvalidArgument, want: "zone"},
		{r: &spb.PingRequest{Destination: "192.0.2.1", NetworkInstance: "-n"}, code: codes.InvalidArgument, want: "not a VRF's name"},
		{r: &spb.PingRequest{Destination: "192.0.2.1", Source: "-I"}, code: codes.InvalidArgument, want: "not an IP address"},
		{r: &spb.PingRequest{Destination: "192.0.2.1", L3Protocol: 2}, code: codes.InvalidArgument, want: "not an IPV6 address"},
		{r: &spb.PingRequest{}, code: codes.InvalidArgument, want: "destination is required"},
	} {
		p, err := PingArgs(ctx, c.r, l, c.admin, NetnsExec(c.netns))
		if c.code != codes.OK {
			if status.Code(err) != c.code || !strings.Contains(err.Error(), c.want) {
				t.Errorf("%v: %v, want %s %q", c.r, err, c.code, c.want)
			}
			continue
		}
		if err != nil || strings.Join(p.Argv, " ") != c.want {
			t.Errorf("%v: %v %v, want %s", c.r, p, err, c.want)
		}
	}
	p, err := TracerouteArgs(ctx, &spb.TracerouteRequest{Destination: "192.0.2.1", MaxTtl: 5, L4Protocol: spb.TracerouteRequest_TCP, DoNotFragment: true}, l, NetnsExec("sw"))
	if want := "ip netns exec sw traceroute -n -4 -q 1 -f 1 -m 5 -w 2.000 -T -F -- 192.0.2.1"; err != nil || strings.Join(p.Argv, " ") != want {
		t.Errorf("traceroute: %v %v, want %s", p, err, want)
	}
	if _, err := TracerouteArgs(ctx, &spb.TracerouteRequest{Destination: "192.0.2.1", InitialTtl: 9, MaxTtl: 5}, l, NetnsExec("")); status.Code(err) != codes.InvalidArgument {
		t.Errorf("initial ttl past max: %v", err)
	}
}

// ping's and traceroute's output (iputils 20221126, traceroute 2.1.2)
// read into gNOI's responses.
func TestParseOutput(t *testing.T) {
	var p PingParser
	var got []*spb.PingResponse
	for _, l := range strings.Split(`PING 10.99.2.2 (10.99.2.2) 100(128) bytes of data.
108 bytes from 10.99.2.2: icmp_seq=1 ttl=63 time=0.061 ms
108 bytes from 10.99.2.2: icmp_seq=2 ttl=63 time=1.25 ms

--- 10.99.2.2 ping statistics ---
2 packets transmitted, 2 received, 0% packet loss, time 1001ms
rtt min/avg/max/mdev = 0.061/0.655/1.250/0.594 ms`, "\n") {
		if r := p.Line(l); r != nil {
			got = append(got, r)
		}
	}
	if len(got) != 2 || got[1].GetSequence() != 2 || got[1].GetTime() != 1250000 || got[1].GetTtl() != 63 || got[1].GetBytes() != 108 || got[1].GetSource() != "10.99.2.2" {
		t.Errorf("replies: %v", got)
	}
	s := p.Summary()
	if s.GetSent() != 2 || s.GetReceived() != 2 || s.GetMinTime() != 61000 || s.GetAvgTime() != 655000 || s.GetMaxTime() != 1250000 || s.GetStdDev() != 594000 || s.GetTime() != 1001000000 || s.GetSource() != "10.99.2.2" {
		t.Errorf("summary: %v", s)
	}
	var none PingParser
	for _, l := range []string{"PING 10.99.3.2 (10.99.3.2) 56(84) bytes of data.", "", "--- 10.99.3.2 ping statistics ---", "1 packets transmitted, 0 received, 100% packet loss, time 0ms"} {
		none.Line(l)
	}
	if s := none.Summary(); s.GetSent() != 1 || s.GetReceived() != 0 {
		t.Errorf("no reply: %v", s)
	}

	var hops []*spb.TracerouteResponse
	for _, l := range strings.Split(`traceroute to 10.99.2.2 (10.99.2.2), 5 hops max, 60 byte packets
 1  10.99.1.2  0.052 ms
 2  *
 3  10.99.2.2  0.131 ms !H
 4  10.99.2.3  0.2 ms !X`, "\n") {
		if r := TraceLine(l); r != nil {
			hops = append(hops, r)
		}
	}
	want := []string{"10.99.2.2 10.99.2.2 5 60", "1 10.99.1.2 52000 DEFAULT", "2  0 NONE", "3 10.99.2.2 131000 HOST_UNREACHABLE", "4 10.99.2.3 200000 PROHIBITED"}
	var gotHops []string
	for i, h := range hops {
		if i == 0 {
			gotHops = append(gotHops, strings.Join([]string{h.GetDestinationName(), h.GetDestinationAddress(), itoa(h.GetHops()), itoa(h.GetPacketSize())}, " "))
			continue
		}
		gotHops = append(gotHops, strings.Join([]string{itoa(h.GetHop()), h.GetAddress(), itoa64(h.GetRtt()), h.GetState().String()}, " "))
	}
	if !slices.Equal(gotHops, want) {
		t.Errorf("traceroute:\n%q\nwant\n%q", gotHops, want)
	}
}

func itoa(n int32) string   { return strconv.Itoa(int(n)) }
func itoa64(n int64) string { return strconv.FormatInt(n, 10) }
