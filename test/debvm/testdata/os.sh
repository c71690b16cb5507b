#!/bin/bash
# Runs inside the Debian 12 VM, systemd as PID 1, as root: gNOI's OS
# service upgrading swmgr and rolling back a broken version. /vmwork/a is
# the package built from the tree (version V), /vmwork/b the same at V+1,
# /vmwork/c a V+2 whose binary exits at once; /vmwork/gnoiclient drives
# OS.Install, Activate and Verify. One line per check, as vm.sh.
. /vmwork/lib.sh
export GNOICLIENT_PASSWORD=os-admin-pass-1
os() { /vmwork/gnoiclient "$@"; }

A=$(ls /vmwork/a/*.deb)
B=$(ls /vmwork/b/*.deb)
C=$(ls /vmwork/c/*.deb)
V=$(dpkg-deb --field "$A" Version)
V1=$(dpkg-deb --field "$B" Version)
V2=$(dpkg-deb --field "$C" Version)
step "systemd $(systemctl --version | head -1), $(systemctl is-system-running); versions $V, $V1, $V2 (broken)"

check "dpkg -i $(basename "$A")" dpkg -i "$A"
sed -i 's|^SWMGR_OPTS=.*|SWMGR_OPTS="--backend sim --gnmi 127.0.0.1:9339 --gnoi-activate-deadline 90s"|' /etc/default/swmgr
systemctl restart swmgr
check "active with gNMI and gNOI" waitfor 60 active
admin() { api POST /config/User '{"Name":"osadmin","Group":"admin","Password":"os-admin-pass-1"}' | grep -q '201 Created'; }
write() { api POST /config/NtpServer '{"IpAddr":"192.0.2.10"}' | grep -q '201 Created'; }
written() { api GET '/config/NtpServer?IpAddr=192.0.2.10' | grep -q '200 OK'; }
check "an admin for gNOI" admin
check "a write before the upgrade" write
check "Verify answers $V" verifies "$V"

step "OS.Install of $V (kept to put back), $V1 and $V2"
check "Install $V: kept" test "$(os install "$A" "$V")" = "$V"
check "Install $V1: kept" test "$(os install "$B" "$V1")" = "$V1"
check "Install $V1 again: Validated at once" test "$(os install /dev/null "$V1")" = "$V1"
check "Install $V2: kept" test "$(os install "$C" "$V2")" = "$V2"
ls -l /var/lib/swmgr/packages | sed 's/^/#   /'

step "OS.Activate $V1"
check "Activate $V1: ok" test "$(os activate "$V1")" = ok
check "Verify answers $V1 (swmgr restarted into it)" waitfor 240 verifies "$V1"
check "dpkg says $V1 is installed" installed "$V1"
check "the activation is recorded as activated" waitfor 30 grep -q '"state": "activated"' /var/lib/swmgr/packages/activation.json
check "the data survived the upgrade" written
check "the store's copy is gone once activated" sh -c '! ls /var/lib/swmgr/packages/.store-before-* 2>/dev/null'

step "OS.Activate $V2 (its binary exits at once)"
check "Activate $V2: ok" test "$(os activate "$V2")" = ok
check "dpkg says $V2 is installed" waitfor 120 installed "$V2"
step "$V2 installed; waiting for the rollback"
check "rolled back by itself: Verify answers $V1 and why" waitfor 400 verifies "$V1" "swmgr $V2 was not ready within 1m30s"
check "dpkg says $V1 is installed again" installed "$V1"
check "active again" waitfor 60 active
check "the activation is recorded as rolled back" grep -q '"state": "rolled-back"' /var/lib/swmgr/packages/activation.json
check "the data survived the rollback" written
check "the store's copy is gone once put back" sh -c '! ls /var/lib/swmgr/packages/.store-before-* 2>/dev/null'
check "the activation's unit logged the rollback" sh -c 'journalctl -u swmgr-activate --no-pager | grep -q "activation rolled back"'
echo "# $(os verify)"

step "done: $fails failed"
echo "# journalctl -u swmgr-activate -u swmgr (tail):"
journalctl -u swmgr-activate -u swmgr --no-pager | grep -v "msg=http" | tail -60 | sed 's/^/#   /'
cat /var/lib/swmgr/packages/activation.json | sed 's/^/#   /'
exit "$fails"
