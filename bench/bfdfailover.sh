#!/usr/bin/env bash
# BFD failover of a real `swmgr serve --backend linux --bgp frr` (zebra, bfdd
# and bgpd in a network namespace) peering BGP with BFD (100 ms x 3, hold
# time 90 s) with a second FRR over a veth: RUNS times (default 10), every
# packet in the peer's namespace is dropped (nftables; the link stays up)
# and the test measures from the drop the time BGP leaves Established (read
# from the switch's bgpd) and the time the BfdSessionState change to down
# arrives on swmgr's change feed (/public/v1/events, `event: state`);
# prints each run and the minimum, median and maximum. Information: the
# physical floor is BFD's detection time, 3 x 100 ms after the last packet
# received (so 200-300 ms after the drop).
#
# Usage: sudo bench/bfdfailover.sh [RUNS]  (root: namespaces; FRR installed;
# ~10 s + 3 s a run on 2 cores).
set -euo pipefail
cd "$(dirname "$0")/.."
RUNS=${1:-${RUNS:-10}}
echo "machine: $(nproc) CPUs, $(uname -r), $(go version | cut -d' ' -f3), FRR $(/usr/lib/frr/bgpd --version 2>/dev/null | head -1 | awk '{print $3}'); load average now: $(cut -d' ' -f1-3 /proc/loadavg)"
SWMGR_BFD_RUNS=$RUNS go test -count=1 -timeout 20m -run '^TestBFDFailoverOnLinux$' -v ./test/ | grep -E 'run [0-9]+:|runs, BFD|^(--- |ok|FAIL)'
