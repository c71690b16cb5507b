package linux

import (
	"encoding/binary"
	"errors"
	"fmt"
	"strconv"
	"strings"

	"github.com/vishvananda/netlink"
	"github.com/vishvananda/netlink/nl"
	"golang.org/x/sys/unix"
)

// ethtool's generic netlink interface (linux/ethtool_netlink.h): what a
// port's PHY can do and its speed, duplex, autonegotiation and FEC.
const (
	ethtoolMsgLinkmodesGet = 4
	ethtoolMsgLinkmodesSet = 5
	ethtoolMsgFecGet       = 29
	ethtoolMsgFecSet       = 30

	ethtoolAHeader        = 1
	ethtoolAHeaderDevName = 2

	ethtoolALinkmodesAutoneg = 2
	ethtoolALinkmodesOurs    = 3
	ethtoolALinkmodesSpeed   = 5
	ethtoolALinkmodesDuplex  = 6

	ethtoolAFecModes = 2
	ethtoolAFecAuto  = 3

	ethtoolABitsetNomask  = 1
	ethtoolABitsetBits    = 3
	ethtoolABitsetBitsBit = 1
	ethtoolABitsetBitName = 2

	duplexHalf = 0
	duplexFull = 1
)

type ethtoolFamily struct{ genlFamily }

// LinkCaps is what ethtool says about a port: its settings now and what it
// can be set to. A device without ethtool link settings (veth, most
// virtual devices) has Settable false.
type LinkCaps struct {
	Speed      int64 // Mb/s; 0 unknown
	FullDuplex bool
	Autoneg    bool
	// Speeds are the speeds of the link modes the device supports; empty
	// when it reports none (then nothing can be changed).
	Speeds   map[int64]bool
	Settable bool
	// FEC is whether the device reports forward error correction modes.
	FEC        bool
	FECEnabled bool
}

func (k *Kernel) ethtoolFam() (*ethtoolFamily, error) {
	k.mu.Lock()
	defer k.mu.Unlock()
	if k.ethtool != nil {
		return k.ethtool, nil
	}
	if !k.feat.EthtoolNetlink {
		return nil, errors.New("the kernel has no ethtool netlink interface")
	}
	f := &ethtoolFamily{}
	if err := k.openGenl("ethtool", &f.genlFamily); err != nil {
		return nil, err
	}
	k.ethtool = f
	return f, nil
}

func (f *ethtoolFamily) request(cmd uint8, dev string, flags int, attrs ...*nl.RtAttr) ([][]byte, error) {
	req := &nl.NetlinkRequest{
		NlMsghdr: unix.NlMsghdr{Len: uint32(unix.SizeofNlMsghdr), Type: f.id, Flags: unix.NLM_F_REQUEST | uint16(flags)},
		Sockets:  map[int]*nl.SocketHandle{unix.NETLINK_GENERIC: f.sh},
	}
	req.AddData(&nl.Genlmsg{Command: cmd, Version: 1})
	hdr := nl.NewRtAttr(ethtoolAHeader|unix.NLA_F_NESTED, nil)
	hdr.AddRtAttr(ethtoolAHeaderDevName, nl.ZeroTerminated(dev))
	req.AddData(hdr)
	for _, a := range attrs {
		req.AddData(a)
	}
	return req.Execute(unix.NETLINK_GENERIC, 0)
}

// Caps reads what ethtool says about a netdev in the switch namespace (or
// a VRF namespace: ethtool works by name in the switch namespace only, so
// ports moved into a VRF namespace report no capabilities).
func (k *Kernel) Caps(dev string) (LinkCaps, error) {
	var c LinkCaps
	f, err := k.ethtoolFam()
	if err != nil {
		return c, err
	}
	f.mu.Lock()
	defer f.mu.Unlock()
	msgs, err := f.request(ethtoolMsgLinkmodesGet, dev, unix.NLM_F_ACK)
	if err != nil {
		if errors.Is(err, unix.EOPNOTSUPP) || errors.Is(err, unix.ENODEV) {
			return c, nil
		}
		return c, fmt.Errorf("ethtool link modes of %s: %w", dev, err)
	}
	c.Speeds = map[int64]bool{}
	for _, m := range msgs {
		attrs, err := nl.ParseRouteAttr(m[nl.SizeofGenlmsg:])
		if err != nil {
			return c, err
		}
		for _, a := range attrs {
			switch a.Attr.Type &^ unix.NLA_F_NESTED {
			case ethtoolALinkmodesSpeed:
				if v := binary.LittleEndian.Uint32(a.Value); v != 0xffffffff {
					c.Speed = int64(v)
				}
			case ethtoolALinkmodesDuplex:
				c.FullDuplex = a.Value[0] == duplexFull
			case ethtoolALinkmodesAutoneg:
				c.Autoneg = a.Value[0] != 0
			case ethtoolALinkmodesOurs:
				for _, name := range bitsetNames(a.Value) {
					if s := modeSpeed(name); s > 0 {
						c.Speeds[s] = true
					}
				}
			}
		}
	}
	c.Settable = len(c.Speeds) > 0
	if msgs, err := f.request(ethtoolMsgFecGet, dev, unix.NLM_F_ACK); err == nil {
		for _, m := range msgs {
			attrs, _ := nl.ParseRouteAttr(m[nl.SizeofGenlmsg:])
			for _, a := range attrs {
				if a.Attr.Type&^unix.NLA_F_NESTED == ethtoolAFecModes {
					names := bitsetNames(a.Value)
					c.FEC = len(names) > 0
					for _, n := range names {
						if n != "None" && n != "Off" {
							c.FECEnabled = true
						}
					}
				}
			}
		}
	}
	return c, nil
}

// bitsetNames returns the names of the bits listed in a verbose ethtool
// bitset (the kernel lists the supported bits when a mask is sent).
func bitsetNames(b []byte) []string {
	attrs, err := nl.ParseRouteAttr(b)
	if err != nil {
		return nil
	}
	var names []string
	for _, a := range attrs {
		if a.Attr.Type&^unix.NLA_F_NESTED != ethtoolABitsetBits {
			continue
		}
		bits, _ := nl.ParseRouteAttr(a.Value)
		for _, bit := range bits {
			if bit.Attr.Type&^unix.NLA_F_NESTED != ethtoolABitsetBitsBit {
				continue
			}
			fields, _ := nl.ParseRouteAttr(bit.Value)
			for _, f := range fields {
				if f.Attr.Type&^unix.NLA_F_NESTED == ethtoolABitsetBitName {
					names = append(names, strings.TrimRight(string(f.Value), "\x00"))
				}
			}
		}
	}
	return names
}

// modeSpeed is the speed of an ethtool link mode name like
// "40000baseCR4/Full" (0 for non-speed bits like "Autoneg").
func modeSpeed(name string) int64 {
	i := strings.Index(name, "base")
	if i <= 0 {
		return 0
	}
	n, err := strconv.ParseInt(name[:i], 10, 64)
	if err != nil {
		return 0
	}
	return n
}

// setLinkModes sets speed, duplex and autoneg through ethtool netlink.
func (k *Kernel) setLinkModes(dev string, speed int64, full, autoneg bool) error {
	f, err := k.ethtoolFam()
	if err != nil {
		return err
	}
	f.mu.Lock()
	defer f.mu.Unlock()
	an := uint8(0)
	if autoneg {
		an = 1
	}
	dup := uint8(duplexHalf)
	if full {
		dup = duplexFull
	}
	_, err = f.request(ethtoolMsgLinkmodesSet, dev, unix.NLM_F_ACK,
		nl.NewRtAttr(ethtoolALinkmodesAutoneg, nl.Uint8Attr(an)),
		nl.NewRtAttr(ethtoolALinkmodesSpeed, nl.Uint32Attr(uint32(speed))),
		nl.NewRtAttr(ethtoolALinkmodesDuplex, nl.Uint8Attr(dup)))
	if err != nil {
		return fmt.Errorf("ethtool set %s speed %d duplex %v autoneg %v: %w", dev, speed, full, autoneg, err)
	}
	return nil
}

// setFEC turns FEC on (auto) or off through ethtool netlink.
func (k *Kernel) setFEC(dev string, on bool) error {
	f, err := k.ethtoolFam()
	if err != nil {
		return err
	}
	f.mu.Lock()
	defer f.mu.Unlock()
	mode := "Off"
	auto := uint8(0)
	if on {
		mode, auto = "Auto", 1
	}
	bits := nl.NewRtAttr(ethtoolAFecModes|unix.NLA_F_NESTED, nil)
	bits.AddRtAttr(ethtoolABitsetNomask, nil)
	list := bits.AddRtAttr(ethtoolABitsetBits|unix.NLA_F_NESTED, nil)
	bit := list.AddRtAttr(ethtoolABitsetBitsBit|unix.NLA_F_NESTED, nil)
	bit.AddRtAttr(ethtoolABitsetBitName, nl.ZeroTerminated(mode))
	bit.AddRtAttr(3, nil) // ETHTOOL_A_BITSET_BIT_VALUE
	_, err = f.request(ethtoolMsgFecSet, dev, unix.NLM_F_ACK, bits, nl.NewRtAttr(ethtoolAFecAuto, nl.Uint8Attr(auto)))
	if err != nil {
		return fmt.Errorf("ethtool set %s fec %s: %w", dev, mode, err)
	}
	return nil
}

var _ = netlink.FAMILY_V4
