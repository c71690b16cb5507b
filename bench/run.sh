#!/usr/bin/env bash
# The core benchmarks of swmgr, in one go on this machine (see bench/README.md):
#   (a) GET by ObjectId req/s: swmgr vs a bare net/http handler returning the same bytes   target >= 0.8
#   (b) durable creates/s, 64 clients: swmgr vs raw bbolt db.Batch puts, 64 goroutines   target >= 0.5
#   (c) get-all page (Count=100) at the 99,000th of 100,000 objects vs at marker 0      target <= 1.5 (time)
#   (d) RSS with 100,000 objects < 150 MiB; cold start to first answer < 1 s
# Usage: bench/run.sh [rounds]   (default 3 alternating rounds per ratio)
set -euo pipefail
cd "$(dirname "$0")/.."
rounds=${1:-3}
work=$(mktemp -d)
pids=()
cleanup() {
	for p in "${pids[@]}"; do kill "$p" 2>/dev/null || true; done
	wait 2>/dev/null || true
	rm -rf "$work"
}
trap cleanup EXIT

go build -o "$work/swmgr" ./cmd/swmgr
go build -o "$work/tools" ./bench/tools
T="$work/tools"
if ! command -v wrk >/dev/null; then
	echo "wrk not found; installing it (apt-get install wrk)" >&2
	apt-get install -y -qq wrk >/dev/null 2>&1 || (apt-get update -qq && apt-get install -y -qq wrk >/dev/null)
fi

port() { python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1]); s.close()'; }
wait_up() { for _ in $(seq 1 3000); do curl -sf -o /dev/null "$1" && return 0; sleep 0.01; done; echo "no answer from $1" >&2; return 1; }
median() { sort -g | awk '{a[NR]=$1} END {print a[int((NR+1)/2)]}'; }
ratio() { awk -v a="$1" -v b="$2" 'BEGIN {printf "%.3f", a/b}'; }
verdict() { awk -v r="$1" -v t="$2" -v op="$3" 'BEGIN {ok = (op == ">=") ? (r >= t) : (r < t); print ok ? "PASS" : "FAIL"}'; }
wrk_rps() { wrk -t1 -c16 -d4s "$1" | awk '/Requests\/sec/ {print $2}'; }
start_swmgr() { # dir port; sets $spid (not in a subshell: a $(...) would wait for swmgr to exit)
	"$work/swmgr" serve --data-dir "$1" --http "127.0.0.1:$2" --https "" --log-level warn >>"$work/swmgr.log" 2>&1 &
	spid=$!
	pids+=("$spid")
}

echo "== (a) GET by ObjectId: swmgr vs bare net/http (wrk, 1 thread, 16 connections, 4 s x $rounds rounds)"
pa=$(port); start_swmgr "$work/a" "$pa"; sa=$spid
wait_up "http://127.0.0.1:$pa/public/v1/config/SystemParam"
id=$(curl -s -X POST "http://127.0.0.1:$pa/public/v1/config/NtpServer" -d '{"IpAddr":"192.0.2.1"}' | python3 -c 'import json,sys; print(json.load(sys.stdin)["ObjectId"])')
url_a="http://127.0.0.1:$pa/public/v1/config/NtpServer/$id"
curl -s "$url_a" >"$work/body.json"
pb=$(port); "$T" bare -addr "127.0.0.1:$pb" -file "$work/body.json" >/dev/null 2>&1 & pids+=($!)
wait_up "http://127.0.0.1:$pb/x"
url_b="http://127.0.0.1:$pb/public/v1/config/NtpServer/$id"
sw=(); bw=()
for _ in $(seq 1 "$rounds"); do sw+=("$(wrk_rps "$url_a")"); bw+=("$(wrk_rps "$url_b")"); done
a_sw=$(printf '%s\n' "${sw[@]}" | median); a_bare=$(printf '%s\n' "${bw[@]}" | median)
a_ratio=$(ratio "$a_sw" "$a_bare")
echo "swmgr ${sw[*]} req/s; bare ${bw[*]} req/s; median ratio $a_ratio ($(verdict "$a_ratio" 0.8 '>='))"
kill "$sa"

echo "== (b) durable creates/s, 64 clients: swmgr vs raw bbolt db.Batch (5 s x $rounds rounds)"
sw=(); rw=()
for i in $(seq 1 "$rounds"); do
	p=$(port); start_swmgr "$work/b$i" "$p"; s=$spid
	wait_up "http://127.0.0.1:$p/public/v1/config/SystemParam"
	sw+=("$("$T" load -method POST -url "http://127.0.0.1:$p/public/v1/config/NtpServer" -body '{"IpAddr":"{n}"}' -c 64 -d 5s | awk '{print $1}')")
	kill "$s"
	rw+=("$("$T" rawbolt -c 64 -d 5s -size 330 | awk '{print $1}')")
done
b_sw=$(printf '%s\n' "${sw[@]}" | median); b_raw=$(printf '%s\n' "${rw[@]}" | median)
b_ratio=$(ratio "$b_sw" "$b_raw")
echo "swmgr ${sw[*]} creates/s; raw bbolt ${rw[*]} puts/s; median ratio $b_ratio ($(verdict "$b_ratio" 0.5 '>='))"

echo "== (c) page of 100 at the 99,000th of 100,000 objects vs at marker 0"
pc=$(port); start_swmgr "$work/c" "$pc"; sc=$spid
base="http://127.0.0.1:$pc/public/v1"
wait_up "$base/config/SystemParam"
"$T" load -method POST -url "$base/config/NtpServer" -body '{"IpAddr":"{n}"}' -c 64 -n 100000 | sed 's/^/loaded 100,000 objects: /'
m0=$("$T" marker -url "$base/config/NtpServers" -index 0)
m99=$("$T" marker -url "$base/config/NtpServers" -index 99000)
z=(); f=()
for _ in $(seq 1 "$rounds"); do
	z+=("$(wrk -t1 -c1 -d3s "$base/config/NtpServers?CurrentMarker=$m0&Count=100" | awk '/Requests\/sec/ {print $2}')")
	f+=("$(wrk -t1 -c1 -d3s "$base/config/NtpServers?CurrentMarker=$m99&Count=100" | awk '/Requests\/sec/ {print $2}')")
done
c0=$(printf '%s\n' "${z[@]}" | median); c99=$(printf '%s\n' "${f[@]}" | median)
c_ratio=$(ratio "$c0" "$c99") # time ratio = rate at 0 / rate at 99,000
echo "marker 0: ${z[*]} pages/s; marker $m99: ${f[*]} pages/s; time ratio $c_ratio ($(verdict "$c_ratio" 1.5 '<'))"

echo "== (d) RSS with 100,000 objects; cold start"
rss=$("$T" rss -pid "$sc")
echo "RSS after loading and paging: $rss MiB ($(verdict "$rss" 150 '<'))"
kill -TERM "$sc"; wait "$sc" 2>/dev/null || true
read -r cold pid < <("$T" coldstart -bin "$work/swmgr" -dir "$work/c" -addr "127.0.0.1:$pc" -url "$base/config/SystemParam" | paste -sd' ')
pids+=("$pid")
rss2=$("$T" rss -pid "$pid")
echo "cold start with 100,000 objects: $cold ms to the first answer ($(verdict "$cold" 1000 '<')); RSS right after: $rss2 MiB"

echo
echo "SUMMARY (a) GET-by-id ratio $a_ratio [>=0.8] | (b) creates ratio $b_ratio [>=0.5] | (c) page-time ratio $c_ratio [<=1.5] | (d) RSS $rss MiB [<150], cold start $cold ms [<1000]"
fails=0
[ "$(verdict "$a_ratio" 0.8 '>=')" = PASS ] || fails=$((fails + 1))
[ "$(verdict "$b_ratio" 0.5 '>=')" = PASS ] || fails=$((fails + 1))
[ "$(verdict "$c_ratio" 1.5 '<')" = PASS ] || fails=$((fails + 1))
[ "$(verdict "$rss" 150 '<')" = PASS ] || fails=$((fails + 1))
[ "$(verdict "$cold" 1000 '<')" = PASS ] || fails=$((fails + 1))
exit "$fails"
