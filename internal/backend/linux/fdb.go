package linux

import (
	"context"
	"fmt"
	"sort"

	"golang.org/x/sys/unix"

	"github.com/vishvananda/netlink"

	"github.com/swmgr/swmgr/internal/model"
)

// userHZ is the unit of the kernel's neighbour cache times (clock_t,
// USER_HZ, 100 on every Linux architecture).
const userHZ = 100

// MacTable lists the bridge's forwarding database in MacTableEntryState's
// form: each address the bridge forwards to one of its ports (a front-panel
// port, a LAG's bond, another device), learned or static. The bridge's and
// the ports' own addresses (permanent entries) and multicast entries are
// left out; without a bridge the table is empty.
func (b *Backend) MacTable(ctx context.Context) ([]model.Object, error) {
	h := b.k.h
	br, err := h.LinkByName(BridgeName)
	if err != nil {
		if _, ok := err.(netlink.LinkNotFoundError); ok {
			return []model.Object{}, nil
		}
		return nil, fmt.Errorf("find the bridge %s: %w", BridgeName, err)
	}
	links, err := h.LinkList()
	if err != nil {
		return nil, fmt.Errorf("list links: %w", err)
	}
	names := map[int]string{}
	for _, l := range links {
		names[l.Attrs().Index] = l.Attrs().Name
	}
	fdb, err := h.NeighList(0, unix.AF_BRIDGE)
	if err != nil {
		return nil, fmt.Errorf("list the bridge's forwarding database: %w", err)
	}
	out := []model.Object{}
	for _, e := range fdb {
		if e.MasterIndex != br.Attrs().Index || e.LinkIndex == br.Attrs().Index {
			continue // a device's own list (not the bridge's), or the bridge's own address
		}
		if e.State&netlink.NUD_PERMANENT != 0 || len(e.HardwareAddr) != 6 || e.HardwareAddr[0]&1 != 0 {
			continue // a port's own address, or multicast
		}
		port := names[e.LinkIndex]
		if p := b.ports.Port(port); p != "" {
			port = p
		}
		typ := "learned"
		if e.State&netlink.NUD_NOARP != 0 {
			typ = "static"
		}
		out = append(out, model.Object{"MacAddr": e.HardwareAddr.String(), "VlanId": int64(e.Vlan), "Port": port,
			"IfIndex": int64(e.LinkIndex), "Type": typ, "Age": int64(e.Updated / userHZ)})
	}
	sort.Slice(out, func(i, j int) bool {
		if out[i].Int("VlanId") != out[j].Int("VlanId") {
			return out[i].Int("VlanId") < out[j].Int("VlanId")
		}
		return out[i].Str("MacAddr") < out[j].Str("MacAddr")
	})
	return out, nil
}
