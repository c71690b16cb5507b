package linux

import (
	"context"
	"encoding/binary"
	"errors"
	"net/http"
	"strings"
	"testing"

	"github.com/vishvananda/netlink/nl"
	"golang.org/x/sys/unix"

	"github.com/swmgr/swmgr/internal/apierr"
	"github.com/swmgr/swmgr/internal/backend"
	"github.com/swmgr/swmgr/internal/engine"
	"github.com/swmgr/swmgr/internal/model"
	"github.com/swmgr/swmgr/internal/vmtest"
)

// portAnswer serializes the attributes of a DEVLINK_CMD_PORT_GET answer the
// way the kernel lays them out (nl's encoders: the same TLV format).
func portAnswer(attrs ...*nl.RtAttr) []byte {
	var b []byte
	for _, a := range attrs {
		b = append(b, a.Serialize()...)
	}
	return b
}

func u16Attr(t uint16, v uint16) *nl.RtAttr {
	b := make([]byte, 2)
	binary.LittleEndian.PutUint16(b, v)
	return nl.NewRtAttr(int(t), b)
}

func u32Attr(t int, v uint32) *nl.RtAttr { return nl.NewRtAttr(t, nl.Uint32Attr(v)) }

// TestParseDevlinkPort decodes port answers built attribute by attribute.
// It proves the decoder reads the attribute numbers and widths of
// linux/devlink.h (checked against the header when this was written); it
// does not prove a driver answers this way, which needs a device with
// devlink ports (none here, see docs/linux-backend.md).
func TestParseDevlinkPort(t *testing.T) {
	id := []*nl.RtAttr{
		nl.NewRtAttr(devlinkAttrBusName, nl.ZeroTerminated("pci")),
		nl.NewRtAttr(devlinkAttrDevName, nl.ZeroTerminated("0000:03:00.0")),
		u32Attr(devlinkAttrPortIndex, 61),
	}
	for _, tc := range []struct {
		name  string
		attrs []*nl.RtAttr
		want  DevlinkPort
		err   string
	}{
		{"physical splittable port", append(id[:3:3],
			u16Attr(4, 2), // DEVLINK_ATTR_PORT_TYPE eth: ignored
			u32Attr(devlinkAttrPortNetdevIfindex, 12),
			nl.NewRtAttr(devlinkAttrPortNetdevName, nl.ZeroTerminated("swp1")),
			u16Attr(devlinkAttrPortFlavour, devlinkPortFlavourPhysical),
			u32Attr(devlinkAttrPortNumber, 1),
			u32Attr(devlinkAttrPortLanes, 4),
			nl.NewRtAttr(devlinkAttrPortSplittable, []byte{1})),
			DevlinkPort{Bus: "pci", Dev: "0000:03:00.0", Index: 61, IfIndex: 12, Netdev: "swp1", Number: 1, Lanes: 4, Splittable: true}, ""},
		{"a sub-port of a split", append(id[:3:3],
			nl.NewRtAttr(devlinkAttrPortNetdevName, nl.ZeroTerminated("swp1s2")),
			u32Attr(devlinkAttrPortNumber, 1),
			u32Attr(devlinkAttrPortSplitGroup, 1),
			u32Attr(devlinkAttrPortSplitSubportNum, 2),
			u32Attr(devlinkAttrPortLanes, 1),
			nl.NewRtAttr(devlinkAttrPortSplittable, []byte{0})),
			DevlinkPort{Bus: "pci", Dev: "0000:03:00.0", Index: 61, Netdev: "swp1s2", Number: 1, Lanes: 1, Split: true, SplitGroup: 1, Subport: 2}, ""},
		{"a CPU port without netdev", append(id[:3:3], u16Attr(devlinkAttrPortFlavour, 1)),
			DevlinkPort{Bus: "pci", Dev: "0000:03:00.0", Index: 61, Flavour: 1}, ""},
		{"no port index", id[:2], DevlinkPort{}, "without bus name, device name or port index"},
		{"a truncated u32", append(id[:3:3], nl.NewRtAttr(devlinkAttrPortLanes, []byte{4, 0})), DevlinkPort{}, "attribute 147"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got, err := parseDevlinkPort(portAnswer(tc.attrs...))
			if tc.err != "" {
				if err == nil || !strings.Contains(err.Error(), tc.err) {
					t.Fatalf("got %+v, %v; want an error saying %q", got, err, tc.err)
				}
				return
			}
			if err != nil || got != tc.want {
				t.Fatalf("got %+v, %v\nwant %+v", got, err, tc.want)
			}
		})
	}
}

// TestDevlinkRequestBytes checks the split and unsplit requests as they go
// on the wire: netlink header, generic netlink header, then each attribute
// with its number, length and value (little-endian u32, NUL-terminated
// strings, 4-byte aligned).
func TestDevlinkRequestBytes(t *testing.T) {
	p := DevlinkPort{Bus: "pci", Dev: "0000:03:00.0", Index: 61}
	type attr struct {
		typ uint16
		val []byte
	}
	name := func(s string) []byte { return append([]byte(s), 0) }
	u32 := func(v uint32) []byte { return binary.LittleEndian.AppendUint32(nil, v) }
	for _, tc := range []struct {
		name  string
		cmd   uint8
		attrs []*nl.RtAttr
		want  []attr
	}{
		{"split into 4", devlinkCmdPortSplit, splitRequest(p, 4),
			[]attr{{1, name("pci")}, {2, name("0000:03:00.0")}, {3, u32(61)}, {9, u32(4)}}},
		{"split into 2", devlinkCmdPortSplit, splitRequest(p, 2),
			[]attr{{1, name("pci")}, {2, name("0000:03:00.0")}, {3, u32(61)}, {9, u32(2)}}},
		{"unsplit", devlinkCmdPortUnsplit, devlinkPortAttrs(p),
			[]attr{{1, name("pci")}, {2, name("0000:03:00.0")}, {3, u32(61)}}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			b := devlinkMessage(0x1d, tc.cmd, unix.NLM_F_ACK, tc.attrs).Serialize()
			if got := binary.LittleEndian.Uint32(b); int(got) != len(b) {
				t.Fatalf("nlmsg_len %d, message %d bytes", got, len(b))
			}
			if typ, flags := binary.LittleEndian.Uint16(b[4:]), binary.LittleEndian.Uint16(b[6:]); typ != 0x1d || flags != unix.NLM_F_REQUEST|unix.NLM_F_ACK {
				t.Fatalf("type %#x flags %#x", typ, flags)
			}
			g := b[unix.SizeofNlMsghdr:]
			if g[0] != tc.cmd || g[1] != 1 {
				t.Fatalf("genl command %d version %d, want %d version 1", g[0], g[1], tc.cmd)
			}
			rest := g[nl.SizeofGenlmsg:]
			for i, w := range tc.want {
				if len(rest) < 4 {
					t.Fatalf("attribute %d missing", i)
				}
				l, typ := binary.LittleEndian.Uint16(rest), binary.LittleEndian.Uint16(rest[2:])
				if typ != w.typ || int(l) != 4+len(w.val) || string(rest[4:l]) != string(w.val) {
					t.Fatalf("attribute %d: type %d len %d value %q; want type %d value %q", i, typ, l, rest[4:l], w.typ, w.val)
				}
				rest = rest[(int(l)+3)&^3:]
			}
			if len(rest) != 0 {
				t.Fatalf("%d bytes after the attributes", len(rest))
			}
		})
	}
}

// TestBreakoutCheck is the check phase's verdict on a breakout from what
// devlink reports about the port.
func TestBreakoutCheck(t *testing.T) {
	port := func(netdev string, lanes uint32, splittable bool) DevlinkPort {
		return DevlinkPort{Bus: "pci", Dev: "0000:03:00.0", Index: 61, Netdev: netdev, Lanes: lanes, Splittable: splittable}
	}
	sub := func(netdev string, n uint32) DevlinkPort {
		return DevlinkPort{Bus: "pci", Dev: "0000:03:00.0", Index: 100 + n, Netdev: netdev, Lanes: 1, Split: true, SplitGroup: 1, Subport: n}
	}
	split4 := []DevlinkPort{sub("swp1s3", 3), sub("swp1s1", 1), sub("swp10s0", 0), sub("swp1s0", 0), sub("swp1s2", 2), port("swp2", 4, true)}
	for _, tc := range []struct {
		name    string
		ports   []DevlinkPort
		devlink bool
		lanes   int
		want    string // "" allowed
	}{
		{"no devlink interface", nil, false, 4, "(netdev swp1) cannot be broken out into 4 ports: it has no devlink port to split (the kernel has no devlink interface)"},
		{"no devlink port", []DevlinkPort{port("swp2", 4, true)}, true, 4, "it has no devlink port to split"},
		{"not splittable", []DevlinkPort{port("swp1", 4, false)}, true, 2, "its devlink port pci/0000:03:00.0/61 is not splittable"},
		{"too few lanes", []DevlinkPort{port("swp1", 2, true)}, true, 4, "its devlink port pci/0000:03:00.0/61 has 2 lanes"},
		{"two of two lanes", []DevlinkPort{port("swp1", 2, true)}, true, 2, ""},
		{"lanes not reported", []DevlinkPort{port("swp1", 0, true)}, true, 4, ""},
		{"four of four lanes", []DevlinkPort{port("swp1", 4, true)}, true, 4, ""},
		{"already split as asked", split4, true, 4, ""},
		{"split otherwise", split4, true, 2, "is split into 4 ports"},
		{"unsplit a port that is not split", []DevlinkPort{port("swp1", 4, false)}, true, 1, ""},
		{"unsplit without devlink", nil, false, 1, ""},
		{"unsplit a split port", split4, true, 1, ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			s := splitCaps("swp1", tc.ports, tc.devlink)
			err := checkBreakout("fpPort1 (netdev swp1)", tc.lanes, s)
			if tc.want == "" {
				if err != nil {
					t.Fatal(err)
				}
				return
			}
			var r *Refusal
			if !errors.As(err, &r) || r.Field != "BreakOutMode" || !strings.Contains(r.Msg, tc.want) || !strings.HasPrefix(r.Msg, "fpPort1 (netdev swp1)") {
				t.Fatalf("got %v; want a BreakOutMode refusal naming fpPort1 (netdev swp1) and saying %q", err, tc.want)
			}
		})
	}
	s := splitCaps("swp1", split4, true)
	var got []string
	for _, p := range s.Subports {
		got = append(got, p.Netdev)
	}
	if strings.Join(got, " ") != "swp1s0 swp1s1 swp1s2 swp1s3" {
		t.Errorf("sub-ports of swp1: %v", got)
	}
	m := &PortMap{byPort: map[string]string{"fpPort1": "swp1", "fpPort1s4": "old"}, byNetdev: map[string]string{"swp1": "fpPort1", "old": "fpPort1s4"}}
	m.setSubports("fpPort1", s.Subports)
	if m.Netdev("fpPort1s1") != "swp1s0" || m.Netdev("fpPort1s4") != "swp1s3" || m.Port("old") != "" || m.Len() != 5 || m.splitInto("fpPort1") != 4 {
		t.Errorf("port map after the split: %v", m.byPort)
	}
	// At start, with swp1 split: swp1 is a port still, its sub-ports mapped.
	parents := splitParents([]string{"lo", "swp1s0", "swp1s1", "swp1s2", "swp1s3", "swp2", "swp10s0"}, split4)
	if len(parents) != 2 || len(parents["swp10"]) != 1 || len(parents["swp1"]) != 4 || parents["swp1"][0].Netdev != "swp1s0" || parents["swp1"][3].Netdev != "swp1s3" {
		t.Errorf("split parents %+v", parents)
	}
	if p := splitParents([]string{"swp1", "swp10"}, split4); len(p) != 0 {
		t.Errorf("split parents of netdevs that exist: %+v", p)
	}
	m.setSubports("fpPort1", nil)
	if m.Len() != 1 || m.Netdev("fpPort1") != "swp1" || m.splitInto("fpPort1") != 0 {
		t.Errorf("port map after the unsplit: %v", m.byPort)
	}
}

// TestVMDevlinkBreakoutOfVeth asks the real kernel: the devlink dump works
// (on the host kernel, which has no devlink, it answers nothing; in the VM
// Debian's kernel has devlink and must answer) and reports no port for
// the veth ports, so a 4x breakout is refused through the engine with the
// devlink reason, dry run and commit alike, and changes nothing.
func TestVMDevlinkBreakoutOfVeth(t *testing.T) {
	l := newLab(t, 2, KernelOptions{})
	ok, err := l.k.DevlinkAvailable()
	if err != nil {
		t.Fatal(err)
	}
	ports, err := l.k.DevlinkPorts()
	if err != nil {
		t.Fatalf("devlink port dump: %v", err)
	}
	t.Logf("devlink interface %v; %d devlink ports in the switch namespace", ok, len(ports))
	if vmtest.InVM() && !ok {
		t.Fatal("Debian's stock kernel has devlink, but the family was not found")
	}
	for _, p := range ports {
		if strings.HasPrefix(p.Netdev, "fpPort") {
			t.Errorf("a veth has a devlink port: %+v", p)
		}
	}
	l.k.Close()
	l.k = nil
	s := startSwitch(t, l, t.TempDir())
	before := l.dump()
	reason := "no devlink port to split"
	if !ok {
		reason += " (the kernel has no devlink interface)"
	}
	for _, mode := range []string{"4x10", "2x50"} {
		ed := s.edit(backend.Update, "Port", model.Object{"IntfRef": "fpPort1", "BreakOutMode": mode})
		rev := s.e.Revision()
		_, dryErr := s.e.Commit(context.Background(), engine.Request{Edits: []engine.Edit{ed}, DryRun: true})
		err := s.commit(ed)
		for what, err := range map[string]error{"dry run": dryErr, "commit": err} {
			var ae *apierr.Error
			if !errors.As(err, &ae) || ae.Status != http.StatusBadRequest || !strings.Contains(ae.Message, "fpPort1 (netdev fpPort1) cannot be broken out into "+mode[:1]+" ports") || !strings.Contains(ae.Message, reason) {
				t.Errorf("%s of BreakOutMode %s: %v; want a 400 naming fpPort1 and %q", what, mode, err, reason)
			}
		}
		if s.e.Revision() != rev {
			t.Errorf("the refused breakout %s made a revision", mode)
		}
	}
	// A 1x mode on a port that is not split changes no breakout.
	s.mustCommit(s.edit(backend.Update, "Port", model.Object{"IntfRef": "fpPort1", "BreakOutMode": "1x100"}))
	if d := diffLines(before, l.dump()); d != "" {
		t.Errorf("the breakout attempts changed the kernel:\n%s", d)
	}
	if _, _, err := s.e.GetByKey(context.Background(), s.reg.Lookup(model.Config, "Port"), model.Object{"IntfRef": "fpPort1s1"}, false, nil); err == nil {
		t.Error("a refused breakout left sub-port fpPort1s1 in the store")
	}
}
