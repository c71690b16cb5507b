#!/usr/bin/env bash
# The cost of one durable create inside swmgr, measured so that the
# machine's load moves it little: the server process's CPU time (utime +
# stime from /proc/PID/stat) over a fixed number of creates, and how many
# creates each fsync carried (swmgr_store_batch_size from /metrics).
# Throughput (rps) is printed too, but it moves with everything else running.
#
# Usage: bench/createcpu.sh [BINARY...]
#   With no BINARY it builds ./cmd/swmgr of this tree. With several (say a
#   build of main and one of a branch) it alternates them, BENCH_ROUNDS
#   times, each on a fresh data directory.
# Environment: BENCH_ROUNDS (3), BENCH_CREATES (30000) measured creates per
# round (after 2000 to warm up), BENCH_CLIENTS (64) loadgen connections.
# Each create is POST /public/v1/config/NtpServer {"IpAddr":"10.x.y.z",
# "MinPoll":6,"MaxPoll":10}, as in bench/run.sh (b).
set -euo pipefail
cd "$(dirname "$0")/.."

ROUNDS=${BENCH_ROUNDS:-3}
CREATES=${BENCH_CREATES:-30000}
CLIENTS=${BENCH_CLIENTS:-64}
BODY='{"IpAddr":"{ip}","MinPoll":6,"MaxPoll":10}'

work=$(mktemp -d -t swmgr-createcpu.XXXXXX)
PID=""
cleanup() {
	if [ -n "$PID" ]; then kill -TERM "$PID" 2>/dev/null || true; wait "$PID" 2>/dev/null || true; fi
	rm -rf "$work"
}
trap cleanup EXIT
trap 'exit 130' INT TERM

for t in loadgen probe; do go build -o "$work/$t" "./bench/$t"; done
bins=("$@")
if [ ${#bins[@]} = 0 ]; then
	go build -o "$work/swmgr" ./cmd/swmgr
	bins=("$work/swmgr")
fi
tck=$(getconf CLK_TCK)
cpu() { awk '{print $14 + $15}' "/proc/$1/stat"; }

echo "machine: $(nproc) CPUs; $CREATES creates per round from loadgen -c $CLIENTS"
for r in $(seq 1 "$ROUNDS"); do
	for b in "${bins[@]}"; do
		dir=$(mktemp -d -p "$work")
		port=$("$work/probe" freeport)
		url="http://127.0.0.1:$port/public/v1/config/NtpServer"
		"$b" serve --data-dir "$dir" --http "127.0.0.1:$port" --https "" --socket "" --ports 32 --log-format text 2>"$dir/log" &
		PID=$!
		"$work/probe" wait -pid "$PID" -url "$url"s"?Count=1" >/dev/null
		"$work/loadgen" -method POST -url "$url" -body-template "$BODY" -c "$CLIENTS" -n 2000 -start 1000000 >/dev/null
		m0=$(curl -s "http://127.0.0.1:$port/metrics" | awk '/^swmgr_store_batch_size_(sum|count)/ {printf "%s ", $2}')
		c0=$(cpu "$PID")
		out=$("$work/loadgen" -method POST -url "$url" -body-template "$BODY" -c "$CLIENTS" -n "$CREATES")
		c1=$(cpu "$PID")
		m1=$(curl -s "http://127.0.0.1:$port/metrics" | awk '/^swmgr_store_batch_size_(sum|count)/ {printf "%s ", $2}')
		kill -TERM "$PID"
		wait "$PID" || true
		PID=""
		rm -rf "$dir"
		awk -v b="$b" -v c0="$c0" -v c1="$c1" -v n="$CREATES" -v t="$tck" -v m0="$m0" -v m1="$m1" -v out="$out" -v load="$(cut -d' ' -f1 /proc/loadavg)" 'BEGIN {
			split(m0, a); split(m1, z)
			rps = out; sub(/.*rps=/, "", rps); sub(/ .*/, "", rps)
			p50 = out; sub(/.*p50_ms=/, "", p50); sub(/ .*/, "", p50)
			printf "round %d %s: cpu_us_per_create=%.0f creates_per_fsync=%.1f rps=%s p50_ms=%s load=%s\n", '"$r"', b, (c1 - c0) / t * 1e6 / n, (z[1] - a[1]) / (z[2] - a[2]), rps, p50, load
		}'
	done
done
