package linux

import (
	"errors"
	"fmt"

	"github.com/vishvananda/netlink"
)

// ErrNoVRF is a VRF the switch does not have.
var ErrNoVRF = errors.New("no such VRF")

// ExecIn is the command prefix that runs a program in vrf of the switch
// ("" or "default": the switch's namespace itself), however the kernel
// holds it: `ip [-n NETNS] vrf exec VRF` for a VRF device, `ip netns exec
// NS` for a VRF kept as a namespace of its own (a kernel without VRF
// devices), `ip netns exec NETNS` or nothing for the default VRF. A VRF
// the switch does not have is ErrNoVRF.
func (b *Backend) ExecIn(vrf string) ([]string, error) { return b.k.execIn(vrf) }

func (k *Kernel) execIn(vrf string) ([]string, error) {
	if isDefaultVRF(vrf) {
		if k.nsName == "" {
			return nil, nil
		}
		return []string{"ip", "netns", "exec", k.nsName}, nil
	}
	if !k.feat.VRFDevice {
		k.mu.Lock()
		v := k.vrfNS[vrf]
		k.mu.Unlock()
		if v == nil {
			return nil, fmt.Errorf("VRF %s: %w", vrf, ErrNoVRF)
		}
		return []string{"ip", "netns", "exec", v.name}, nil
	}
	l, err := k.h.LinkByName(vrf)
	if _, isVRF := l.(*netlink.Vrf); err != nil || !isVRF {
		return nil, fmt.Errorf("VRF %s: %w", vrf, ErrNoVRF)
	}
	if k.nsName == "" {
		return []string{"ip", "vrf", "exec", vrf}, nil
	}
	return []string{"ip", "-n", k.nsName, "vrf", "exec", vrf}, nil
}
