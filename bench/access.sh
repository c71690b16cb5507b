#!/usr/bin/env bash
# Access figures (issues 8 and 13), loopback only, bounded in time (~2.5 min on 2 cores):
#   (e) GET by ObjectId over loopback HTTP without credentials, keep-alive (wrk -t1 -c16):
#       this tree (peer identity looked up once per connection, per-client connection caps,
#       body deadlines) / the tree before those changes (BENCH_BASE)        target >= 0.95 (and >= 0.9)
#       also, for information, the same with a new connection per request (Connection: close),
#       where every request pays the kernel lookup
#   (f) 300 concurrent bad HTTPS logins from 40 loopback addresses for BENCH_STORM_SECONDS:
#       the server's peak RSS (VmHWM)                                       target < 200 MiB
#       p99 latency of the admin's GET (right password, from 127.0.0.1)     target < 200 ms
#
# Usage: bench/access.sh   (from anywhere in the repository; run as root or as any user)
# Environment: BENCH_BASE (dc0436e: main before the access work) the "before" tree,
# BENCH_ROUNDS (3), BENCH_SECONDS (5), BENCH_STORM_SECONDS (20), BENCH_PIN (1).
# Needs wrk (apt-get install wrk), git, Go. Exits 0 when every target is met.
set -euo pipefail
cd "$(dirname "$0")/.."

BASE=${BENCH_BASE:-dc0436e}
ROUNDS=${BENCH_ROUNDS:-3}
SECS=${BENCH_SECONDS:-5}
STORM=${BENCH_STORM_SECONDS:-20}
command -v wrk >/dev/null || { echo "access.sh: needs wrk (apt-get install wrk)" >&2; exit 2; }

work=$(mktemp -d -t swmgr-access-bench.XXXXXX)
: >"$work/pids"
cleanup() {
	local p
	while read -r p; do kill -TERM "$p" 2>/dev/null || true; done <"$work/pids"
	sleep 0.3
	while read -r p; do kill -KILL "$p" 2>/dev/null || true; done <"$work/pids"
	rm -rf "$work"
}
trap cleanup EXIT
trap 'exit 130' INT TERM

echo "== building this tree ($(git rev-parse --short HEAD)$(git diff --quiet || echo ', with uncommitted changes')) and $BASE"
go build -o "$work/new" ./cmd/swmgr
mkdir "$work/base-src"
git archive "$BASE" | tar -x -C "$work/base-src"
(cd "$work/base-src" && go build -o "$work/old" ./cmd/swmgr)
go build -o "$work/probe" ./bench/probe
go build -o "$work/loginstorm" ./bench/loginstorm

ncpu=$(nproc)
SRV_PIN=() GEN_PIN=()
if [ "${BENCH_PIN:-1}" = 1 ] && [ "$ncpu" -ge 2 ] && command -v taskset >/dev/null; then
	SRV_PIN=(taskset -c "$((ncpu - 1))")
	GEN_PIN=(taskset -c "$([ "$ncpu" = 2 ] && echo 0 || echo "0-$((ncpu - 2))")")
fi
echo "machine: $ncpu CPUs, $(uname -r), $(go version | cut -d' ' -f3), uid $(id -u); load average: $(cut -d' ' -f1-3 /proc/loadavg)"
median() { sort -g | awk '{a[NR] = $1} END {if (NR) print a[int((NR + 1) / 2)]}'; }
ratio() { awk -v a="$1" -v b="$2" 'BEGIN {if (b > 0) printf "%.3f", a / b; else print "nan"}'; }
verdict() { awk -v v="$1" -v op="$2" -v t="$3" 'BEGIN {if (v == "" || v == "nan" || v < 0) {print "FAIL"; exit}; ok = (op == ">=") ? v >= t : v < t; print ok ? "PASS" : "FAIL"}'; }

start() { # binary dir port [extra args]: sets PID; the old tree has no --socket
	local bin=$1 dir=$2 port=$3
	shift 3
	local extra=()
	# The old tree has no --socket; nor the access log and metrics (
	# measured by bench/run.sh), which are off here so that (e) measures what
	# issues 8 and 13 added: the peer lookup, the Host check, connection caps
	# and body deadlines.
	[ "$bin" = "$work/new" ] && extra=(--socket "" --access-log=false --metrics=false)
	SWMGR_ADMIN_PASSWORD=bench-admin-password "${SRV_PIN[@]}" "$bin" serve --data-dir "$dir" --http "127.0.0.1:$port" --https "" \
		--ports 4 --log-format text "${extra[@]}" "$@" 2>>"$work/swmgr.log" &
	PID=$!
	echo "$PID" >>"$work/pids"
	"$work/probe" wait -pid "$PID" -url "http://127.0.0.1:$port/public/v1/config/NtpServers?Count=1" >/dev/null
}
stop() { kill -TERM "$1"; wait "$1" 2>/dev/null || true; }
rate() { # url [wrk args]
	local url=$1 out
	shift
	out=$("${GEN_PIN[@]}" wrk -t1 -c16 -d"${SECS}s" "$@" "$url")
	if grep -qE 'Non-2xx|Socket errors' <<<"$out"; then echo "wrk saw errors: $out" >&2; echo 0; return; fi
	awk '/Requests\/sec/ {print $2}' <<<"$out"
}

echo
echo "== (e) GET by ObjectId, loopback HTTP, no credentials: wrk -t1 -c16, $ROUNDS alternating rounds of ${SECS} s each"
declare -A KEEP CLOSE
for side in old new; do
	port=$("$work/probe" freeport)
	start "$work/$side" "$work/$side-data" "$port"
	id=$(curl -sS -X POST -H 'Content-Type: application/json' -d '{"IpAddr":"192.0.2.1"}' "http://127.0.0.1:$port/public/v1/config/NtpServer" | sed -n 's/.*"ObjectId":"\([^"]*\)".*/\1/p')
	stop "$PID"
	echo "$id" >"$work/$side.id"
done
keep_old=() keep_new=() close_old=() close_new=()
for i in $(seq 1 "$ROUNDS"); do
	for side in old new; do
		port=$("$work/probe" freeport)
		start "$work/$side" "$work/$side-data" "$port"
		url="http://127.0.0.1:$port/public/v1/config/NtpServer/$(cat "$work/$side.id")"
		"${GEN_PIN[@]}" wrk -t1 -c16 -d2s "$url" >/dev/null # warm-up
		k=$(rate "$url")
		c=$(rate "$url" -H "Connection: close")
		stop "$PID"
		echo "   round $i $side: keep-alive ${k} req/s, new connection per request ${c} req/s"
		eval "keep_$side+=(\"$k\"); close_$side+=(\"$c\")"
	done
done
ko=$(printf '%s\n' "${keep_old[@]}" | median) kn=$(printf '%s\n' "${keep_new[@]}" | median)
co=$(printf '%s\n' "${close_old[@]}" | median) cn=$(printf '%s\n' "${close_new[@]}" | median)
E=$(ratio "$kn" "$ko") EC=$(ratio "$cn" "$co")
echo "   medians: before $ko, now $kn req/s -> ratio $E (target >= 0.95, an earlier >= 0.9 too): $(verdict "$E" ">=" 0.95)"
echo "   a new connection per request (information): before $co, now $cn req/s -> ratio $EC"

echo
echo "== (f) login storm: 300 concurrent bad HTTPS logins from 127.0.0.2-41 for ${STORM} s; the admin reads from 127.0.0.1 every 50 ms"
port=$("$work/probe" freeport) sport=$("$work/probe" freeport)
echo bench-admin-password >"$work/pw"
SWMGR_ADMIN_PASSWORD=bench-admin-password "$work/new" serve --data-dir "$work/storm" --http "127.0.0.1:$port" --https "127.0.0.1:$sport" \
	--socket "" --ports 4 --log-format text 2>>"$work/storm.log" &
PID=$!
echo "$PID" >>"$work/pids"
"$work/probe" wait -pid "$PID" -url "http://127.0.0.1:$port/public/v1/config/NtpServers?Count=1" >/dev/null
out=$("$work/loginstorm" -url "https://127.0.0.1:$sport/public/v1" -cert "$work/storm/tls-cert.pem" -pid "$PID" \
	-admin-password-file "$work/pw" -c 300 -addrs 40 -d "${STORM}s")
echo "$out" | sed 's/^/   /'
stop "$PID"
rss=$(sed -n 's/.*peak_rss_mib=\([0-9-]*\).*/\1/p' <<<"$out")
p99=$(sed -n 's/.*admin_p99_ms=\([0-9.-]*\).*/\1/p' <<<"$out")
refused=$(sed -n 's/.*admin_refused=\([0-9]*\).*/\1/p' <<<"$out")
echo "   peak RSS $rss MiB (target < 200): $(verdict "$rss" "<" 200); admin p99 $p99 ms (target < 200): $(verdict "$p99" "<" 200); admin refused $refused times"

echo
s1=$(verdict "$E" ">=" 0.95) s2=$(verdict "$rss" "<" 200) s3=$(verdict "$p99" "<" 200)
echo "SUMMARY: (e) GET by id new/before=$E $s1; (f) storm peak_rss=${rss}MiB $s2, admin_p99=${p99}ms $s3, admin_refused=$refused"
[ "$s1$s2$s3" = PASSPASSPASS ] && [ "$refused" = 0 ]
