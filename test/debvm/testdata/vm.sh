#!/bin/bash
# Runs inside the Debian 12 VM, systemd as PID 1, as root: the package's
# life on the OS it ships for. /vmwork/a/*.deb is the package built from
# the tree, /vmwork/b/*.deb the same with a newer version. One line per
# check, "ok - ..." or "not ok - ..."; the exit status is the number of
# failed checks.
. /vmwork/lib.sh
mainpid() { systemctl show -p MainPID --value swmgr; }
established() { api GET /state/BGPv4Neighbors | grep -q '"SessionState":6'; }
chrony_running() { pgrep -f 'chronyd.*/run/swmgr/chrony' >/dev/null; }

A=$(ls /vmwork/a/*.deb)
B=$(ls /vmwork/b/*.deb)
step "systemd $(systemctl --version | head -1), $(systemctl is-system-running)"
systemctl list-jobs --no-pager | sed 's/^/#   /' 
# This machine's own FRR and chronyd would compete with swmgr's (same
# namespace, the same NTP port): an operator disables them the same way
# (docs/quickstart-linux.md).
systemctl disable --now frr.service chrony.service >/dev/null 2>&1

step "install $(basename "$A")"
check "dpkg -i" dpkg -i "$A"
check "swmgr.service is active (Type=notify: active means ready) and /readyz says ready" active
check "the unit's type is notify" test "$(systemctl show -p Type --value swmgr)" = notify
check "swmgr --version is the package's version" grep -qF "swmgr $(dpkg-query -W -f '${Version}' swmgr) " <(swmgr --version)
check "journalctl -u swmgr shows the start line" waitfor 10 sh -c 'journalctl -u swmgr --no-pager | grep -q "swmgr serving"'
check "the data directory is the package's" test -e /var/lib/swmgr/.made-by-package
write() { api POST /config/NtpServer '{"IpAddr":"192.0.2.10"}' | grep -q '201 Created'; }
check "a write" write

step "systemctl restart"
systemctl restart swmgr
check "active again after systemctl restart" active
check "the write survived the restart" has '/config/NtpServer?IpAddr=192.0.2.10' '200 OK'
pid=$(mainpid)
step "kill -9 $pid"
kill -9 "$pid"
check "restarted by systemd after kill -9 (Restart=on-failure)" waitfor 60 sh -c "test \"\$(systemctl show -p MainPID --value swmgr)\" != $pid && test \"\$(systemctl show -p MainPID --value swmgr)\" != 0"
check "active after kill -9" waitfor 60 active
check "the write survived kill -9" has '/config/NtpServer?IpAddr=192.0.2.10' '200 OK'

step "--backend linux: a port over a veth to a peer running chronyd and FRR"
ip link add vsw1 type veth peer name vpeer1
ip netns add peer
ip link set vpeer1 netns peer
ip -n peer link set lo up
ip -n peer addr add 10.0.1.2/24 dev vpeer1
ip -n peer link set vpeer1 up
mkdir -p /run/peer && chown _chrony /run/peer
cat >/run/peer/chrony.conf <<'CONF'
local stratum 8
allow all
cmdport 0
pidfile /run/peer/chronyd.pid
CONF
ip netns exec peer chronyd -x -f /run/peer/chrony.conf
usermod -aG frrvty root
mkdir -p /run/frr/peer /etc/frr/peer && chown -R frr:frr /run/frr
: >/etc/frr/peer/zebra.conf
cat >/etc/frr/peer/bgpd.conf <<'CONF'
router bgp 65002
 bgp router-id 10.0.1.2
 no bgp ebgp-requires-policy
 neighbor 10.0.1.1 remote-as 65001
 neighbor 10.0.1.1 timers 3 9
 neighbor 10.0.1.1 timers connect 1
CONF
ip netns exec peer /usr/lib/frr/zebra -N peer -d -f /etc/frr/peer/zebra.conf
ip netns exec peer /usr/lib/frr/bgpd -N peer -d -f /etc/frr/peer/bgpd.conf
mkdir -p /etc/swmgr
echo "fpPort1 vsw1" >/etc/swmgr/ports.conf
systemctl stop swmgr
# A new switch: start from an empty data directory (the package's mark kept).
find /var/lib/swmgr -mindepth 1 ! -name .made-by-package -delete
sed -i 's|^SWMGR_OPTS=.*|SWMGR_OPTS="--backend linux --port-map /etc/swmgr/ports.conf"|' /etc/default/swmgr
systemctl start swmgr
check "active on the linux backend" active
api PATCH /config/Port '{"IntfRef":"fpPort1","AdminState":"UP"}' | grep -q '200 OK' &&
	api POST /config/IPv4Intf '{"IntfRef":"fpPort1","IpAddr":"10.0.1.1/24"}' | grep -q '201 Created' &&
	api PATCH /config/BGPGlobal '{"Vrf":"default","ASNum":"65001","RouterId":"10.0.1.1"}' | grep -q '200 OK' &&
	api POST /config/BGPv4Neighbor '{"NeighborAddress":"10.0.1.2","PeerAS":"65002","HoldTime":9,"KeepaliveTime":3,"ConnectRetryTime":1}' | grep -q '201 Created' &&
	api POST /config/NtpServer '{"IpAddr":"10.0.1.2","MinPoll":4,"MaxPoll":4}' | grep -q '201 Created'
check "the linux backend takes a port, an address, BGP and NTP" test $? = 0
check "the BGP session to the peer is Established" waitfor 120 established
check "swmgr's chronyd runs (it may set the clock: CAP_SYS_TIME, @clock)" waitfor 30 chrony_running
sleep 10
check "swmgr's chronyd still runs 10 s later" chrony_running
check "chronyd reached the peer" waitfor 60 sh -c 'chronyc -h /run/swmgr/chrony/run/chronyd.sock -n sources | grep -q "10.0.1.2"'
chronyc -h /run/swmgr/chrony/run/chronyd.sock -n sources 2>&1 | sed 's/^/#   /'
check "no clock permission error in the journal" sh -c '! journalctl -u swmgr --no-pager | grep -q "Operation not permitted"'

step "linux backend: systemctl restart"
systemctl restart swmgr
check "active after restart" active
check "Established after restart" waitfor 120 established
check "chronyd runs after restart" waitfor 30 chrony_running
pid=$(mainpid)
step "linux backend: kill -9 $pid"
kill -9 "$pid"
check "restarted after kill -9" waitfor 60 sh -c "test \"\$(systemctl show -p MainPID --value swmgr)\" != $pid && systemctl is-active -q swmgr"
check "active after kill -9" waitfor 60 active
check "Established after kill -9" waitfor 120 established
check "chronyd runs after kill -9" waitfor 30 chrony_running

step "upgrade to $(basename "$B")"
check "dpkg -i of the newer package" dpkg -i "$B"
check "active after the upgrade" waitfor 60 active
check "swmgr --version is the new version" grep -qF "swmgr $(dpkg-query -W -f '${Version}' swmgr) " <(swmgr --version)
check "the upgrade kept the options" grep -q -- '--backend linux' /etc/default/swmgr
check "the upgrade kept the data" has '/config/BGPv4Neighbor?NeighborAddress=10.0.1.2' '200 OK'
check "Established after the upgrade" waitfor 120 established

step "the CLI as a login shell over su -"
useradd -m -s /usr/bin/swmgr ops
out=$(su - ops -c 'show run' 2>&1)
echo "$out" | sed 's/^/#   /' | head -20
check "su - ops -c runs a CLI command (show run)" grep -q '10.0.1.2' <<<"$out"
out=$(printf 'enable\nshow run\n' | su - ops 2>&1)
check "su - ops with piped input runs the CLI" grep -q '10.0.1.2' <<<"$out"

step "dpkg -r"
check "dpkg -r" dpkg -r swmgr
check "the service is gone" sh -c '! systemctl is-active -q swmgr'
check "dpkg -r kept the data" test -s /var/lib/swmgr/swmgr.db
check "dpkg -r kept the options" test -e /etc/default/swmgr
step "dpkg -P"
check "dpkg -P" dpkg -P swmgr
check "dpkg -P removed the data directory the package made" test ! -e /var/lib/swmgr
check "dpkg -P removed the options" test ! -e /etc/default/swmgr

step "done: $fails failed"
if [ "$fails" != 0 ]; then
	echo "# journalctl -u swmgr (tail):"
	journalctl -u swmgr --no-pager | tail -40 | sed 's/^/#   /'
fi
exit "$fails"
