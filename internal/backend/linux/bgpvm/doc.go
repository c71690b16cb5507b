// Package bgpvm holds the test of a BGP session in a VRF through the Linux
// backend, run in a VM booting Debian's stock kernel (the host kernel has
// no VRF devices). It is a package of its own so that its VM run has its
// own test binary and time budget, apart from the linux package's.
package bgpvm
