#!/bin/bash
# Runs inside the Debian 12 VM, systemd as PID 1, as root, once per boot
# of one disk (/vmwork/boot says which): gNOI's System.Reboot reboots the
# switch, a confirmed commit's deadline holds across it, and an OS
# activation it interrupts is resolved after it. /vmwork/a is the package
# built from the tree (version V), /vmwork/b the same at V+1;
# /vmwork/gnoiclient drives gNOI. A boot that ends in a reboot leaves its
# script running (systemd stops it) and may write /vmwork/hold-until: the
# test boots the disk again after that time (unix seconds). One line per
# check, as vm.sh.
#
#   boot 1: install V, a commit confirmed (A), a commit awaiting its
#           confirmation (B, 900 s), Reboot COLD over gNOI.
#   boot 2: the same disk; the Reboot in the config log, B still awaiting
#           with the deadline it had, A's and B's data there. B confirmed;
#           V and V+1 kept (OS.Install); a commit C awaiting for 120 s;
#           Activate V+1, and while its carrier waits for swmgr to stop
#           (held until the reboot begins), Reboot; the VM stays down past
#           C's deadline.
#   boot 3: the activation resumed and rolled back (V+1 never ran), C
#           rolled back at swmgr's start, A and B kept.
. /vmwork/lib.sh
export GNOICLIENT_PASSWORD=reboot-admin-pass-1
os() { /vmwork/gnoiclient -user rebootadmin "$@"; }
A=$(ls /vmwork/a/*.deb)
B=$(ls /vmwork/b/*.deb)
V=$(dpkg-deb --field "$A" Version)
V1=$(dpkg-deb --field "$B" Version)
boot=$(cat /vmwork/boot)
state=/vmwork/state # what a boot tells the next, on the share
step "boot $boot: $(cat /proc/sys/kernel/random/boot_id), systemd $(systemctl is-system-running)"

ntp() { api GET "/config/NtpServer?IpAddr=$1" | grep -q '200 OK'; }
no_ntp() { api GET "/config/NtpServer?IpAddr=$1" | grep -q '404 Not Found'; }
# field NAME: the value of the JSON field NAME (a string or a number) read.
field() { grep -o "\"$1\":\"\?[^,\"}]*" | sed 's/^"[^"]*":"\?//'; }
admin() { api POST /config/User '{"Name":"rebootadmin","Group":"admin","Password":"reboot-admin-pass-1"}' | grep -q '201 Created'; }
# confirmed_commit IP SECONDS: a candidate adding NtpServer IP committed
# with Confirm SECONDS; prints the revision.
confirmed_commit() {
	local id
	id=$(api POST /candidates "{\"Comment\":\"server $1\"}" | field CandidateId)
	[ -n "$id" ] || return 1
	api POST "/candidates/$id/config/NtpServer" "{\"IpAddr\":\"$1\"}" | grep -q 'HTTP/1.[01] 20[01]' || return 1
	api POST "/candidates/$id/commit" "{\"Comment\":\"server $1\",\"Confirm\":$2}" | field Revision
}
pending() { api GET /revisions/pending; }
# awaits REV [CONFIRM-BY]: revision REV awaits its confirmation (until
# CONFIRM-BY).
awaits() { test -n "$1" && pending | grep -q "\"Awaiting\":true,\"Revision\":$1,.*\"ConfirmBy\":\"${2:-[^\"]*}\""; }
none_awaits() { pending | grep -q '"Awaiting":false'; }
confirm() { api POST "/revisions/$1/confirm" | grep -q '200 OK'; }
reboot_status() { os reboot-status | grep -q "^$1 "; }
# logged MESSAGE: the config log has rebootadmin's Reboot with MESSAGE.
logged() {
	api GET '/state/ConfigLogs?Count=1000' |
		grep -o '"API":"gnoi","Operation":"Reboot","Data":"\([^"\\]\|\\.\)*","Result":"Success","UserAddr":"[^"]*","UserName":"rebootadmin"' |
		grep -qF "\\\"message\\\":\\\"$1\\\""
}
# rolled_back_here REV: this boot's swmgr rolled REV back for want of a
# confirmation.
rolled_back_here() { journalctl -b -u swmgr --no-pager | grep -q "unconfirmed commit rolled back.* revision=$1 "; }
# hold_stop: the next stop of swmgr.service waits (its ExecStop, up to
# 60 s) for the system to be stopping; /run/debvm-stopping says it began.
hold_stop() {
	cat >/usr/local/sbin/debvm-hold-stop <<-'EOF'
		#!/bin/sh
		touch /run/debvm-stopping
		for i in $(seq 60); do
			systemctl is-system-running | grep -q stopping && exit 0
			sleep 1
		done
	EOF
	chmod 755 /usr/local/sbin/debvm-hold-stop
	mkdir -p /etc/systemd/system/swmgr.service.d
	printf '[Service]\nTimeoutStopSec=90s\nExecStop=/usr/local/sbin/debvm-hold-stop\n' >/etc/systemd/system/swmgr.service.d/debvm-hold.conf
	systemctl daemon-reload
}
# recorded STATE: the last activation's record says STATE.
recorded() { grep -q "\"state\": \"$1\"" /var/lib/swmgr/packages/activation.json; }
activation() { cat /var/lib/swmgr/packages/activation.json; }
# down: waits for systemd to stop this script for the reboot.
down() {
	step "rebooting"
	sleep 300
	echo "not ok - the VM did not reboot within 300 s"
	exit 1
}

case $boot in
1)
	check "dpkg -i $(basename "$A")" dpkg -i "$A"
	sed -i 's|^SWMGR_OPTS=.*|SWMGR_OPTS="--backend sim --gnmi 127.0.0.1:9339"|' /etc/default/swmgr
	systemctl restart swmgr
	check "active with gNMI and gNOI" waitfor 60 active
	check "an admin for gNOI" admin
	revA=$(confirmed_commit 192.0.2.11 600)
	check "commit A awaiting confirmation (revision $revA)" test -n "$revA"
	check "commit A confirmed" confirm "$revA"
	revB=$(confirmed_commit 192.0.2.12 900)
	check "commit B awaiting confirmation (revision $revB)" awaits "$revB"
	pending | field ConfirmBy >"$state.confirm-by"
	echo "$revB" >"$state.rev"
	echo "# B awaits until $(cat "$state.confirm-by")"
	check "Reboot COLD over gNOI in 20 s" test "$(os reboot 20 "debvm reboot 1")" = ok
	check "RebootStatus: pending" reboot_status "active=true count=0"
	down
	;;
2)
	check "swmgr installed on the disk at boot" dpkg-query -W swmgr
	check "active after the reboot" waitfor 120 active
	step "swmgr ready after the reboot"
	check "RebootStatus: none pending, none carried out by this swmgr" reboot_status "active=false count=0"
	check "the config log has the Reboot" logged "debvm reboot 1"
	revB=$(cat "$state.rev")
	check "B still awaits, its deadline as stored ($(cat "$state.confirm-by"))" awaits "$revB" "$(cat "$state.confirm-by")"
	echo "# $(pending | tail -1)"
	check "A's data there" ntp 192.0.2.11
	check "B's data there" ntp 192.0.2.12
	check "B confirmed" confirm "$revB"
	check "Install $V: kept" test "$(os install "$A" "$V")" = "$V"
	check "Install $V1: kept" test "$(os install "$B" "$V1")" = "$V1"
	revC=$(confirmed_commit 192.0.2.13 120)
	check "commit C awaiting confirmation for 120 s (revision $revC)" awaits "$revC"
	by=$(pending | field ConfirmBy)
	echo "$revC" >"$state.rev"
	date -d "$by" +%s >/vmwork/hold-until
	echo "# C awaits until $by: the VM stays down until then"
	check "swmgr's next stop held" hold_stop
	check "Activate $V1: ok" test "$(os activate "$V1")" = ok
	check "the activation's carrier stops swmgr" waitfor 60 test -e /run/debvm-stopping
	rm /etc/systemd/system/swmgr.service.d/debvm-hold.conf # the stop under way keeps it
	check "the activation pending" recorded pending
	check "dpkg says $V is installed still" installed "$V"
	check "Reboot COLD over gNOI in 20 s" test "$(os reboot 20 "debvm reboot 2")" = ok
	check "RebootStatus: pending" reboot_status "active=true count=0"
	down
	;;
3)
	check "C's deadline passed while the VM was down" test "$(date +%s)" -gt "$(cat /vmwork/hold-until)"
	check "swmgr installed on the disk at boot" dpkg-query -W swmgr
	check "the interrupted activation resumed and rolled back" waitfor 240 recorded rolled-back
	check "active after the reboot" waitfor 120 active
	step "swmgr ready after the reboot"
	check "Verify answers $V, and why" verifies "$V" "a reboot interrupted the activation before swmgr $V1 ran"
	check "dpkg says $V is installed" installed "$V"
	check "RebootStatus: none pending, none carried out by this swmgr" reboot_status "active=false count=0"
	check "the config log has the Reboot" logged "debvm reboot 2"
	check "C rolled back by this boot's swmgr" rolled_back_here "$(cat "$state.rev")"
	check "nothing awaits confirmation" none_awaits
	check "C's data gone" no_ntp 192.0.2.13
	check "A's data there" ntp 192.0.2.11
	check "B's data there" ntp 192.0.2.12
	step "done: $fails failed"
	echo "# journalctl -u swmgr-activate -u swmgr, every boot (tail):"
	journalctl -u swmgr-activate -u swmgr --no-pager | grep -v "msg=http" | tail -60 | sed 's/^/#   /'
	activation | sed 's/^/#   /'
	exit "$fails"
	;;
esac
