package linux

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/http"

	"github.com/vishvananda/netlink"
	"golang.org/x/sys/unix"

	"github.com/swmgr/swmgr/internal/apierr"
	"github.com/swmgr/swmgr/internal/bind"
	"github.com/swmgr/swmgr/internal/model"
)

// clearMacTable deletes the bridge's learned entries of a VLAN (VlanId, 0:
// all) reached through a port or LAG (IntfRef, "": all), as `bridge fdb
// del ... master` does one by one; static entries stay. An entry that
// ages out meanwhile is not an error.
func (b *Backend) clearMacTable(ctx context.Context, c bind.Call) (bind.Result, error) {
	vlan, intf := c.Fields.Int("VlanId"), c.Fields.Str("IntfRef")
	ifindex := 0
	if intf != "" {
		dev, _, err := b.netdevOf(intf)
		var l netlink.Link
		if err == nil {
			l, err = b.k.h.LinkByName(dev)
		}
		if err != nil {
			return bind.Result{}, apierr.New(http.StatusNotFound, apierr.CodeNotFound, c.Kind.Name, "IntfRef", "IntfRef: %s is no port or LAG of this switch", intf)
		}
		ifindex = l.Attrs().Index
	}
	entries, err := b.MacTable(ctx)
	if err != nil {
		return bind.Result{}, err
	}
	flush := []model.Object{}
	for _, e := range entries {
		if e.Str("Type") == "learned" && (vlan == 0 || e.Int("VlanId") == vlan) && (ifindex == 0 || int(e.Int("IfIndex")) == ifindex) {
			flush = append(flush, e)
		}
	}
	if c.DryRun {
		return bind.Result{DryRun: true, Value: map[string]any{"Result": "Success", "DryRun": true, "Cleared": len(flush), "Entries": flush}}, nil
	}
	cleared := []model.Object{}
	for _, e := range flush {
		mac, err := net.ParseMAC(e.Str("MacAddr"))
		if err != nil {
			return bind.Result{}, fmt.Errorf("MAC table entry %v: %w", e, err)
		}
		n := &netlink.Neigh{LinkIndex: int(e.Int("IfIndex")), Family: unix.AF_BRIDGE, HardwareAddr: mac, Vlan: int(e.Int("VlanId")), Flags: netlink.NTF_MASTER}
		if err := b.k.h.NeighDel(n); err != nil {
			if errors.Is(err, unix.ENOENT) {
				continue
			}
			return bind.Result{}, fmt.Errorf("flush %s from the MAC table (%d flushed before it): %w", e.Str("MacAddr"), len(cleared), err)
		}
		cleared = append(cleared, e)
	}
	return bind.Result{Value: map[string]any{"Result": "Success", "Cleared": len(cleared), "Entries": cleared}}, nil
}
