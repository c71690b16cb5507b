#!/bin/sh
# gen.sh BINARY DIR ADDR: writes a data directory DIR with the swmgr
# binary BINARY, serving on the free loopback address ADDR meanwhile.
set -eu
bin=$1 dir=$2 addr=$3
if curl -s -o /dev/null "http://$addr/"; then echo "$addr is in use" >&2; exit 1; fi
SWMGR_ADMIN_PASSWORD=fixture-admin-password "$bin" serve --data-dir "$dir" --http "$addr" --https "" --socket "" --ports 8 >"$dir.log" 2>&1 &
pid=$!
for i in $(seq 100); do
	kill -0 $pid
	curl -sf "http://$addr/public/v1/config/SystemParam" >/dev/null && break
	sleep 0.1
done
b=http://$addr/public/v1
p() { out=$(curl -sS -w " %{http_code}" -X "$1" -H "Content-Type: application/json" "$b/$2" -d "$3"); case $out in *" 20"?) ;; *) echo "$1 $2: $out" >&2; kill $pid; exit 1;; esac; }
p PATCH config/SystemParam '{"Hostname":"fixture-sw","Description":"written by an older swmgr"}'
p PATCH config/Port '{"IntfRef":"fpPort2","AdminState":"UP","Mtu":9000,"Description":"uplink"}'
p POST config/Vlan '{"VlanId":10,"IntfList":["fpPort3"],"UntagIntfList":["fpPort4"]}'
p POST config/IPv4Intf '{"IntfRef":"fpPort2","IpAddr":"10.0.0.1/24"}'
p POST config/IPv4Intf '{"IntfRef":"vlan10","IpAddr":"10.10.0.1/24"}'
p PATCH config/BGPGlobal '{"ASNum":"65001","RouterId":"10.0.0.1"}'
p POST config/BGPv4Neighbor '{"NeighborAddress":"10.0.0.2","PeerAS":"65002","IntfRef":""}'
p POST config/NtpServer '{"IpAddr":"127.0.0.1","Prefer":true}'
p POST config/ConfigArchiveServer '{"IpAddr":"127.0.0.1","Username":"arch","Password":"archive-secret-1","Interval":0}'
p POST config/User '{"Name":"bob","Password":"bob-password-1","Group":"operator"}'
p POST config/Vrf '{"Vrf":"blue"}'
p POST action/SaveConfig '{}'
kill -TERM $pid
wait $pid
