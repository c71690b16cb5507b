package ztp

import (
	"bytes"
	"context"
	"encoding/hex"
	"errors"
	"fmt"
	"net"
	"net/url"
	"regexp"
	"runtime"
	"slices"
	"strings"
	"time"

	"github.com/insomniacslk/dhcp/dhcpv4"
	"github.com/insomniacslk/dhcp/dhcpv4/nclient4"
	"github.com/vishvananda/netlink"
	"github.com/vishvananda/netns"
	"golang.org/x/sys/unix"
)

// The DHCP options provisioning reads. 67 and 239 are what SONiC, EOS and
// Cumulus read; 224 is the first of the site-specific range (RFC 3942),
// where a server that does not sign documents gives their digest.
const (
	OptionConfigURL = 67  // the configuration document's URL (bootfile name)
	OptionScriptURL = 239 // the provisioning script's URL
	OptionSHA256    = 224 // the configuration document's SHA-256, 64 hex digits
)

// OptionTFTPServer names the TFTP server of a bare file name in option 67
// (or in the BOOTP file field), as ISC dhcpd's and dnsmasq's
// configurations give it; without it, the BOOTP next-server (siaddr).
const OptionTFTPServer = 66

// Offer is what one DHCP exchange gave provisioning.
type Offer struct {
	Interface string // the interface the lease is on
	Netns     string // its network namespace ("": swmgr's own)
	Server    string
	Addr      *net.IPNet // the address leased
	Router    net.IP     // nil: none given
	ConfigURL string
	ScriptURL string
	SHA256    []byte // nil: none given
	At        time.Time
}

// InBand says where the front-panel ports are: DHCP runs on each of them
// that is up and has link at the start of an attempt, beside the
// management interface.
type InBand struct {
	// Netns is the dataplane's network namespace ("": swmgr's own).
	Netns string
	// Netdevs lists the front-panel ports' netdevs (the port map's).
	Netdevs func() []string
}

// dhcpLink is an interface DHCP runs on: the management interface (in
// swmgr's namespace) or a front-panel port's netdev (in the dataplane's).
type dhcpLink struct {
	name, netns string
}

// links are the interfaces an attempt runs DHCP on: the management
// interface (also when the ports cannot be looked at: the error says
// why), and each front-panel netdev that is administratively up and
// has carrier now (IFF_UP and IFF_LOWER_UP). Provisioning does not bring
// ports up itself: their admin state is configuration, which the factory
// configuration (a startup configuration) sets, and the dataplane puts
// back whatever else changes it.
func (b InBand) links(mgmt string) ([]dhcpLink, error) {
	links := []dhcpLink{{name: mgmt}}
	if b.Netdevs == nil {
		return links, nil
	}
	devs := b.Netdevs()
	err := inNetns(b.Netns, func() error {
		for _, dev := range devs {
			if dev == mgmt && b.Netns == "" {
				continue
			}
			l, err := netlink.LinkByName(dev)
			if err == nil && l.Attrs().Flags&net.FlagUp != 0 && l.Attrs().RawFlags&unix.IFF_LOWER_UP != 0 {
				links = append(links, dhcpLink{name: dev, netns: b.Netns})
			}
		}
		return nil
	})
	return links, err
}

// inNetns runs fn in the network namespace ns ("": the caller's), on a
// thread of its own that goes back to swmgr's namespace after (a thread
// that cannot is never unlocked: it ends with its goroutine). A socket
// fn opens stays in ns.
func inNetns(ns string, fn func() error) error {
	if ns == "" {
		return fn()
	}
	errc := make(chan error, 1)
	go func() {
		runtime.LockOSThread()
		orig, err := netns.Get()
		if err != nil {
			errc <- fmt.Errorf("network namespace: %w", err)
			return
		}
		defer orig.Close()
		h, err := netns.GetFromName(ns)
		if err != nil {
			errc <- fmt.Errorf("network namespace %s: %w", ns, err)
			return
		}
		defer h.Close()
		if err := netns.Set(h); err != nil {
			errc <- fmt.Errorf("enter network namespace %s: %w", ns, err)
			return
		}
		ferr := fn()
		if err := netns.Set(orig); err != nil {
			errc <- fmt.Errorf("return from network namespace %s: %w", ns, err)
			return
		}
		runtime.UnlockOSThread()
		errc <- ferr
	}()
	return <-errc
}

// dhcpAnswer is one link's exchange: a lease whose options are valid, or
// why there is none.
type dhcpAnswer struct {
	link   dhcpLink
	client *nclient4.Client
	lease  *nclient4.Lease
	offer  *Offer
	err    error
}

// leaseFirst runs DHCP on every link at once; the first lease whose
// options are valid wins: the other exchanges are stopped (a lease they
// got meanwhile is released), and the winner's address (and default
// route) is configured on its interface, so that the URLs can be fetched.
// With no valid lease, the error says what each link got.
func leaseFirst(ctx context.Context, links []dhcpLink, timeout time.Duration) (*Offer, error) {
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	answers := make(chan dhcpAnswer, len(links))
	for _, l := range links {
		go func() { answers <- leaseOn(ctx, l, timeout) }()
	}
	var win *dhcpAnswer
	var errs []string
	var refused *Offer // a lease refused for its options: its server and address for the state
	for range links {
		a := <-answers
		switch {
		case a.err != nil:
			errs = append(errs, a.err.Error())
			if a.offer != nil && refused == nil {
				refused = a.offer
			}
		case win == nil:
			win = &a
			cancel()
		default:
			a.client.Release(a.lease)
			a.client.Close()
		}
	}
	if win == nil {
		return refused, errors.New(strings.Join(errs, "; "))
	}
	win.client.Close()
	return win.offer, inNetns(win.link.netns, func() error { return configure(win.link.name, win.offer) })
}

// leaseOn runs one DHCP exchange (discover, offer, request, ack) on the
// link, asking for the options provisioning reads, and reads them; an
// answer whose options are not valid is released and refused.
func leaseOn(ctx context.Context, link dhcpLink, timeout time.Duration) dhcpAnswer {
	a := dhcpAnswer{link: link}
	a.err = inNetns(link.netns, func() error {
		var err error
		a.client, err = nclient4.New(link.name, nclient4.WithTimeout(timeout), nclient4.WithRetry(3))
		return err
	})
	if a.err != nil {
		a.err = fmt.Errorf("DHCP client on %s: %w", link.name, a.err)
		return a
	}
	a.lease, a.err = a.client.Request(ctx, dhcpv4.WithRequestedOptions(dhcpv4.GenericOptionCode(OptionConfigURL),
		dhcpv4.GenericOptionCode(OptionScriptURL), dhcpv4.GenericOptionCode(OptionSHA256), dhcpv4.OptionTFTPServerName))
	if a.err != nil {
		a.client.Close()
		a.err = fmt.Errorf("DHCP on %s: %w", link.name, a.err)
		return a
	}
	a.offer, a.err = readOffer(a.lease.ACK)
	a.offer.Interface, a.offer.Netns, a.offer.At = link.name, link.netns, a.lease.CreationTime
	if a.err != nil {
		a.client.Release(a.lease)
		a.client.Close()
		a.err = fmt.Errorf("DHCP on %s: the answer of %s refused: %w", link.name, a.offer.Server, a.err)
	}
	return a
}

// readOffer reads what provisioning needs from an ACK. Every field is
// checked before it is used, the DHCP server being as untrusted as the
// network: text must be printable ASCII without spaces, a URL one of the
// schemes fetched, with a host, no password and nothing that reads as a
// command-line option; else the answer is refused with the reason (the
// offer still says who gave it).
func readOffer(ack *dhcpv4.DHCPv4) (*Offer, error) {
	o := &Offer{Server: ack.ServerIdentifier().String()}
	mask := ack.SubnetMask()
	if mask == nil {
		mask = ack.YourIPAddr.DefaultMask()
	}
	o.Addr = &net.IPNet{IP: ack.YourIPAddr.To4(), Mask: mask}
	if rs := ack.Router(); len(rs) > 0 {
		o.Router = rs[0]
	}
	text := func(what string, b []byte) (string, error) {
		s, err := optionText(b)
		if err != nil {
			return "", fmt.Errorf("%s: %w", what, err)
		}
		return s, nil
	}
	opt := func(code int) []byte { return ack.Options.Get(dhcpv4.GenericOptionCode(code)) }
	config, err := text(fmt.Sprintf("option %d", OptionConfigURL), opt(OptionConfigURL))
	if err != nil {
		return o, err
	}
	if config == "" {
		if config, err = text("the BOOTP file field", []byte(ack.BootFileName)); err != nil {
			return o, err
		}
	}
	if config != "" && !strings.Contains(config, "://") {
		// A bare file name, on a TFTP server option 66 or next-server names.
		server, err := text(fmt.Sprintf("option %d", OptionTFTPServer), opt(OptionTFTPServer))
		if err != nil {
			return o, err
		}
		if server == "" && ack.ServerIPAddr != nil && !ack.ServerIPAddr.IsUnspecified() {
			server = ack.ServerIPAddr.String()
		}
		if server == "" {
			return o, fmt.Errorf("option %d names the file %q but no TFTP server (option %d or the next-server address)", OptionConfigURL, config, OptionTFTPServer)
		}
		if !hostRE.MatchString(server) {
			return o, fmt.Errorf("option %d: %q is not a host name or address", OptionTFTPServer, server)
		}
		config = "tftp://" + server + "/" + strings.TrimPrefix(config, "/")
	}
	if o.ConfigURL, err = checkURL(fmt.Sprintf("option %d", OptionConfigURL), config); err != nil {
		return o, err
	}
	script, err := text(fmt.Sprintf("option %d", OptionScriptURL), opt(OptionScriptURL))
	if err != nil {
		return o, err
	}
	if o.ScriptURL, err = checkURL(fmt.Sprintf("option %d", OptionScriptURL), script); err != nil {
		return o, err
	}
	d, err := text(fmt.Sprintf("option %d", OptionSHA256), opt(OptionSHA256))
	if err != nil {
		return o, err
	}
	if d != "" {
		sum, err := hex.DecodeString(d)
		if err != nil || len(sum) != 32 {
			return o, fmt.Errorf("option %d: %q is not a SHA-256 in hex (64 digits)", OptionSHA256, d)
		}
		o.SHA256 = sum
	}
	return o, nil
}

// hostRE is a host name or an IPv4 address, as a TFTP server option gives it.
var hostRE = regexp.MustCompile(`^[A-Za-z0-9]([A-Za-z0-9.-]{0,252}[A-Za-z0-9])?$`)

// optionText is a DHCP option's text: printable ASCII without spaces
// (NULs that end it, as some servers send, are dropped). Anything else is
// refused, said by its position: such a field is hostile or broken, and
// dropping the bytes could make another URL of it.
func optionText(b []byte) (string, error) {
	b = bytes.TrimRight(b, "\x00")
	for i, c := range b {
		if c <= ' ' || c >= 0x7f {
			return "", fmt.Errorf("byte %d is 0x%02x, not printable ASCII: refused", i, c)
		}
	}
	return string(b), nil
}

// checkURL checks a URL a DHCP option gave: "" (none), or http, https,
// tftp or sftp with a host, no password, nothing starting with '-' (read
// as a command-line option by a tool it might reach) and no "..".
func checkURL(what, raw string) (string, error) {
	if raw == "" {
		return "", nil
	}
	u, err := url.Parse(raw)
	if err != nil {
		return "", fmt.Errorf("%s: %q is not a URL: %v", what, raw, err)
	}
	switch {
	case u.Scheme != "http" && u.Scheme != "https" && u.Scheme != "tftp" && u.Scheme != "sftp":
		return "", fmt.Errorf("%s: %q: scheme %q is not fetched (http, https, tftp or sftp)", what, raw, u.Scheme)
	case u.Host == "" || strings.HasPrefix(u.Host, "-") || strings.HasPrefix(u.User.Username(), "-"):
		return "", fmt.Errorf("%s: %q: no host, or one starting with '-'", what, raw)
	case u.User != nil && func() bool { _, set := u.User.Password(); return set }():
		return "", fmt.Errorf("%s: a password in the URL: refused (credentials are configured on the switch)", what)
	case slices.Contains(strings.Split(u.Path, "/"), ".."):
		return "", fmt.Errorf("%s: %q: a path with \"..\" refused", what, raw)
	}
	for _, part := range strings.Split(u.Path, "/") {
		if strings.HasPrefix(part, "-") {
			return "", fmt.Errorf("%s: %q: a path part starting with '-' refused", what, raw)
		}
	}
	return raw, nil
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
