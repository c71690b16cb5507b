package ztp

import (
	"context"
	"encoding/hex"
	"fmt"
	"net"
	"strings"
	"time"

	"github.com/insomniacslk/dhcp/dhcpv4"
	"github.com/insomniacslk/dhcp/dhcpv4/nclient4"
	"github.com/vishvananda/netlink"
)

// The DHCP options provisioning reads. 67 and 239 are what SONiC, EOS and
// Cumulus read; 224 is the first of the site-specific range (RFC 3942),
// where a server that does not sign documents gives their digest.
const (
	OptionConfigURL = 67  // the configuration document's URL (bootfile name)
	OptionScriptURL = 239 // the provisioning script's URL
	OptionSHA256    = 224 // the configuration document's SHA-256, 64 hex digits
)

// Offer is what one DHCP exchange gave provisioning.
type Offer struct {
	Server    string
	Addr      *net.IPNet // the address leased
	Router    net.IP     // nil: none given
	ConfigURL string
	ScriptURL string
	SHA256    []byte // nil: none given
	At        time.Time
}

// lease runs one DHCP exchange (discover, offer, request, ack) on iface,
// asking for the options provisioning reads, and configures the address
// leased (and a default route through the router given) on iface, so
// that the URLs can be fetched.
func lease(ctx context.Context, iface string, timeout time.Duration) (*Offer, error) {
	c, err := nclient4.New(iface, nclient4.WithTimeout(timeout), nclient4.WithRetry(3))
	if err != nil {
		return nil, fmt.Errorf("DHCP client on %s: %w", iface, err)
	}
	defer c.Close()
	l, err := c.Request(ctx, dhcpv4.WithRequestedOptions(dhcpv4.GenericOptionCode(OptionConfigURL),
		dhcpv4.GenericOptionCode(OptionScriptURL), dhcpv4.GenericOptionCode(OptionSHA256)))
	if err != nil {
		return nil, fmt.Errorf("DHCP on %s: %w", iface, err)
	}
	ack := l.ACK
	o := &Offer{Server: ack.ServerIdentifier().String(), At: l.CreationTime,
		ConfigURL: printable(ack.Options.Get(dhcpv4.GenericOptionCode(OptionConfigURL))),
		ScriptURL: printable(ack.Options.Get(dhcpv4.GenericOptionCode(OptionScriptURL)))}
	if o.ConfigURL == "" && strings.Contains(ack.BootFileName, "://") {
		o.ConfigURL = printable([]byte(ack.BootFileName))
	}
	if d := strings.TrimSpace(printable(ack.Options.Get(dhcpv4.GenericOptionCode(OptionSHA256)))); d != "" {
		sum, err := hex.DecodeString(d)
		if err != nil || len(sum) != 32 {
			return o, fmt.Errorf("DHCP option %d: %q is not a SHA-256 in hex (64 digits)", OptionSHA256, d)
		}
		o.SHA256 = sum
	}
	mask := ack.SubnetMask()
	if mask == nil {
		mask = ack.YourIPAddr.DefaultMask()
	}
	o.Addr = &net.IPNet{IP: ack.YourIPAddr.To4(), Mask: mask}
	if rs := ack.Router(); len(rs) > 0 {
		o.Router = rs[0]
	}
	return o, configure(iface, o)
}

// printable is a DHCP option's text with anything but printable ASCII
// dropped: the fields go to the state, the log and URLs, never to a shell.
func printable(b []byte) string {
	var sb strings.Builder
	for _, c := range b {
		if c > ' ' && c < 0x7f {
			sb.WriteByte(c)
		}
	}
	return sb.String()
}

// configure puts the leased address on iface and a default route through
// the router, replacing what an earlier lease put there.
func configure(iface string, o *Offer) error {
	link, err := netlink.LinkByName(iface)
	if err != nil {
		return fmt.Errorf("interface %s: %w", iface, err)
	}
	if err := netlink.LinkSetUp(link); err != nil {
		return fmt.Errorf("set %s up: %w", iface, err)
	}
	if err := netlink.AddrReplace(link, &netlink.Addr{IPNet: o.Addr}); err != nil {
		return fmt.Errorf("address %s on %s: %w", o.Addr, iface, err)
	}
	if o.Router != nil {
		r := &netlink.Route{LinkIndex: link.Attrs().Index, Gw: o.Router}
		if err := netlink.RouteReplace(r); err != nil {
			return fmt.Errorf("default route through %s on %s: %w", o.Router, iface, err)
		}
	}
	return nil
}
