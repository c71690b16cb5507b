package linux

import (
	"errors"
	"net/netip"
	"os/exec"
	"testing"
	"time"
)

// testExecIn: a program run with ExecIn's prefix for VRF red reaches the
// host on red's port; run in the default VRF it does not; a VRF that is
// not there is ErrNoVRF.
func testExecIn(t *testing.T, opts KernelOptions, device bool) {
	l := newLab(t, 1, opts)
	k := l.k
	if device {
		needFeature(t, k, k.Features().VRFDevice, "VRF devices")
	}
	needPing(t)
	commit(t, k, func(tx *Tx) error {
		if err := tx.EnsureVRF(VRFConfig{Name: "red"}); err != nil {
			return err
		}
		if err := tx.EnsurePort(PortConfig{Port: "fpPort1", Netdev: "fpPort1", AdminUp: true, MTU: 1500}); err != nil {
			return err
		}
		return tx.EnsureAddr(AddrConfig{Netdev: "fpPort1", Prefix: netip.MustParsePrefix("10.10.0.1/24"), VRF: "red", AdminUp: true}, nil)
	})
	l.host(1, "ip", "addr", "add", "10.10.0.2/24", "dev", "eth0")
	ping := func(vrf string) error {
		prefix, err := k.execIn(vrf)
		if err != nil {
			return err
		}
		argv := append(prefix, "busybox", "ping", "-c", "1", "-W", "1", "10.10.0.2")
		out, err := exec.Command(argv[0], argv[1:]...).CombinedOutput()
		if err != nil {
			return errors.New(string(out))
		}
		return nil
	}
	if !eventually(10*time.Second, func() bool { return ping("red") == nil }) {
		t.Fatalf("VRF red (%s): the host is not reached: %v", k.Features().VRFMode(), ping("red"))
	}
	if err := ping("default"); err == nil {
		t.Error("the default VRF reaches red's host")
	}
	if _, err := k.execIn("blue"); !errors.Is(err, ErrNoVRF) {
		t.Errorf("a VRF that is not there: %v", err)
	}
}

// TestExecInVRFNetns: VRFs kept as namespaces (what a kernel without VRF
// devices has).
func TestExecInVRFNetns(t *testing.T) { testExecIn(t, KernelOptions{ForceVRFNetns: true}, false) }

// TestVMExecInVRFDevice: VRF devices (ip vrf exec), in the VM.
func TestVMExecInVRFDevice(t *testing.T) { testExecIn(t, KernelOptions{}, true) }
