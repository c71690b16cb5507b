#!/usr/bin/env bash
# The Ansible collection's figures: the fleet playbook (swmgr.switch.fleet_change)
# on BENCH_SWITCHES (20) simulated switches with BENCH_OBJECTS (50) objects each
# (VLANs, state overridden, confirmed commit, one check task, confirm), wall
# time; how much of it is swmgr's own time (the sum, over all switches, of
# swmgr_http_request_duration_seconds: every request the playbook made, from
# its arrival to its answer; and swmgr_commit_duration_seconds, the commits);
# the rest is Ansible's (Python start-up per task and host, templating, the
# controller's forks). Then a second, idempotent run's wall time.
#
# Usage: bench/ansible.sh (needs ansible-core; about 3 min on 2 cores)
set -euo pipefail
cd "$(dirname "$0")/.."
N=${BENCH_SWITCHES:-20}
OBJ=${BENCH_OBJECTS:-50}
work=$(mktemp -d -t swmgr-ansible-bench.XXXXXX)
pids=()
cleanup() {
	for p in "${pids[@]}"; do kill -TERM "$p" 2>/dev/null || true; done
	wait 2>/dev/null || true
	rm -rf "$work"
}
trap cleanup EXIT
go build -o "$work/swmgr" ./cmd/swmgr
ansible-galaxy collection build --force --output-path "$work" ansible/ansible_collections/swmgr/switch >/dev/null
ansible-galaxy collection install --force -p "$work/collections" "$work"/swmgr-switch-*.tar.gz >/dev/null
export ANSIBLE_COLLECTIONS_PATH="$work/collections" ANSIBLE_PYTHON_INTERPRETER=/usr/bin/python3 ANSIBLE_NOCOLOR=1

{
	echo "all:"
	echo "  children:"
	echo "    switches:"
	echo "      vars: {ansible_connection: local}"
	echo "      hosts:"
} >"$work/inventory.yml"
for i in $(seq 1 "$N"); do
	port=$((19100 + i))
	mkdir -p "$work/d$i"
	SWMGR_ADMIN_PASSWORD=bench-admin-password "$work/swmgr" serve --data-dir "$work/d$i" --http "127.0.0.1:$port" --https "" \
		--socket "$work/d$i/swmgr.sock" --access-log=false 2>"$work/d$i.log" &
	pids+=($!)
	echo "        sw$i: {swmgr_connection: {url: \"http://127.0.0.1:$port\"}}" >>"$work/inventory.yml"
done
for i in $(seq 1 "$N"); do
	for _ in $(seq 1 200); do curl -fs "http://127.0.0.1:$((19100 + i))/readyz" >/dev/null 2>&1 && break; sleep 0.05; done
done

{
	echo "fleet_comment: bench"
	echo "fleet_confirm_seconds: 600"
	echo "fleet_checks_file: $work/checks.yml"
	echo "fleet_resources:"
	echo "  - kind: Vlan"
	echo "    state: overridden"
	echo "    config:"
	for v in $(seq 100 $((99 + OBJ))); do echo "      - {vlan_id: $v, description: bench}"; done
} >"$work/change.yml"
cat >"$work/checks.yml" <<'CHECKS'
- name: every VLAN is there
  swmgr.switch.swmgr_facts:
    kinds: [Vlan]
- name: count them
  ansible.builtin.assert:
    that: swmgr_config.Vlan | length == fleet_resources[0].config | length
CHECKS

# own_seconds prints the sum over all switches of a histogram's _sum.
own_seconds() {
	local total=0 i v
	for i in $(seq 1 "$N"); do
		v=$(curl -fs "http://127.0.0.1:$((19100 + i))/metrics" | awk -v m="$1_sum" '$1 ~ "^"m"({|$)" {s+=$2} END {printf "%.6f", s}')
		total=$(echo "$total + ${v:-0}" | bc -l)
	done
	echo "$total"
}

play() {
	local t0 t1
	t0=$(date +%s.%N)
	ansible-playbook -f "$N" -i "$work/inventory.yml" swmgr.switch.fleet_change -e "@$work/change.yml" >"$work/play.log" 2>&1 || {
		tail -40 "$work/play.log"
		exit 1
	}
	t1=$(date +%s.%N)
	echo "$t1 - $t0" | bc -l
}

req0=$(own_seconds swmgr_http_request_duration_seconds)
com0=$(own_seconds swmgr_commit_duration_seconds)
wall=$(play)
req1=$(own_seconds swmgr_http_request_duration_seconds)
com1=$(own_seconds swmgr_commit_duration_seconds)
wall2=$(play)
req2=$(own_seconds swmgr_http_request_duration_seconds)
grep -q 'changed=0' "$work/play.log" || true
changed2=$(awk '/^sw[0-9]+ +:/ {for (i=1;i<=NF;i++) if ($i ~ /^changed=/) {split($i,a,"="); s+=a[2]}} END {print s+0}' "$work/play.log")

printf 'fleet playbook, %d switches x %d VLANs (overridden, confirmed commit, checks, confirm):\n' "$N" "$OBJ"
printf '  wall time                     %8.2f s\n' "$wall"
printf '  swmgr serving its requests    %8.3f s in all (%.3f s per switch), of which commits %.3f s\n' \
	"$(echo "$req1 - $req0" | bc -l)" "$(echo "($req1 - $req0) / $N" | bc -l)" "$(echo "$com1 - $com0" | bc -l)"
printf '  swmgr share of the wall time  %8.1f %% per switch (requests of one switch / wall time)\n' "$(echo "100 * ($req1 - $req0) / $N / $wall" | bc -l)"
printf 'second run (nothing to change): wall time %.2f s, swmgr %.3f s in all, changed tasks %d\n' "$wall2" "$(echo "$req2 - $req1" | bc -l)" "$changed2"
