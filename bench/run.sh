#!/usr/bin/env bash
# The four core figures of swmgr, measured in one go on this machine; see
# bench/README.md for what each means.
#   (a) GET by ObjectId req/s: swmgr / a bare net/http handler serving the same bytes   target >= 0.9
#   (b) durable creates/s, 64 clients: swmgr / raw bbolt db.Batch puts, 64 goroutines   target >= 0.5
#       and / the same with MaxBatchSize=64                                  target >= 0.5
#   (c) median latency of a get-all page (Count=100) at the 99,000th of 100,000
#       objects / at marker 0                                                            target <= 1.5
#   (d) VmRSS of swmgr holding 100,000 objects (after (c))                               target < 150 MiB
#       cold start on that data directory: exec to the first 200 of a GET by id          target < 1 s
#
# Usage: bench/run.sh  (from anywhere in the repository; about 2 min on 2 cores)
# Environment: BENCH_ROUNDS (3) alternating rounds per ratio, BENCH_SECONDS (5) per
# throughput round, BENCH_VALUE_SIZE (300) bytes per raw bbolt value, BENCH_GEN
# (wrk if installed, else loadgen) generator of (a), BENCH_PIN (1) pin server and
# generator of (a) to separate CPUs with taskset, BENCH_SECTIONS (all) which
# sections run ("load a": only the loading and (a)), BENCH_OBJECTS (100000)
# objects loaded (fewer for a quick look at (a); (c) needs 100000).
# Exits 0 when every target is met, 1 when one is missed or could not be measured.
set -euo pipefail
cd "$(dirname "$0")/.."

ROUNDS=${BENCH_ROUNDS:-3}
SECS=${BENCH_SECONDS:-5}
VALUE_SIZE=${BENCH_VALUE_SIZE:-300}
OBJECTS=${BENCH_OBJECTS:-100000}
CLIENTS=64
CREATE_BODY='{"IpAddr":"{ip}","MinPoll":6,"MaxPoll":10}'

work=$(mktemp -d -t swmgr-bench.XXXXXX)
: >"$work/pids"
SECTION="" # process group of the running section (see the end)
cleanup() {
	local p i
	if [ -n "$SECTION" ]; then
		kill -TERM -- "-$SECTION" 2>/dev/null || true
		for i in $(seq 1 100); do kill -0 -- "-$SECTION" 2>/dev/null || break; sleep 0.05; done
		kill -KILL -- "-$SECTION" 2>/dev/null || true
	fi
	while read -r p; do kill -TERM "$p" 2>/dev/null || true; done <"$work/pids"
	sleep 0.2
	while read -r p; do kill -KILL "$p" 2>/dev/null || true; done <"$work/pids"
	rm -rf "$work"
}
trap cleanup EXIT
trap 'exit 130' INT TERM

T0=$(date +%s)
echo "== building swmgr and the bench tools into $work"
go build -o "$work/swmgr" ./cmd/swmgr
for t in loadgen bareserver rawbolt probe; do go build -o "$work/$t" "./bench/$t"; done
LOADGEN=$work/loadgen PROBE=$work/probe

# Where (a) runs: the server on the last CPU, the generator on the others.
ncpu=$(nproc)
SRV_PIN=() GEN_PIN=() PIN_DESC="not pinned"
if [ "${BENCH_PIN:-1}" = 1 ] && [ "$ncpu" -ge 2 ] && command -v taskset >/dev/null; then
	SRV_PIN=(taskset -c "$((ncpu - 1))")
	GEN_PIN=(taskset -c "$([ "$ncpu" = 2 ] && echo 0 || echo "0-$((ncpu - 2))")")
	PIN_DESC="servers pinned with ${SRV_PIN[*]}, generator with ${GEN_PIN[*]}"
fi
GEN=${BENCH_GEN:-}
if [ -z "$GEN" ]; then
	if command -v wrk >/dev/null; then GEN=wrk; else GEN=loadgen; fi
fi
echo "machine: $ncpu CPUs, $(uname -r), $(go version | cut -d' ' -f3); load average now: $(cut -d' ' -f1-3 /proc/loadavg)"

# ---- helpers ---------------------------------------------------------------

kv() { # key line: the value of key=value in line
	awk -v k="$1" '{for (i = 1; i <= NF; i++) if (index($i, k "=") == 1) {print substr($i, length(k) + 2); exit}}' <<<"$2"
}
median() { sort -g | awk '{a[NR] = $1} END {if (NR) print a[int((NR + 1) / 2)]}'; }
ratio() { awk -v a="$1" -v b="$2" 'BEGIN {if (b > 0) printf "%.3f", a / b; else print "nan"}'; }
verdict() { # value op target -> PASS|FAIL
	awk -v v="$1" -v op="$2" -v t="$3" 'BEGIN {
		if (v == "" || v == "nan") {print "FAIL"; exit}
		ok = (op == ">=") ? v >= t : (op == "<=") ? v <= t : v < t
		print ok ? "PASS" : "FAIL"}'
}
swmgr_args() { # data-dir port: sets SW_ARGS
	SW_ARGS=(serve --data-dir "$1" --http "127.0.0.1:$2" --https "" --socket "" --ports 32 --log-format text)
}
start_swmgr() { # data-dir port [pin command...]; sets SW_PID, waits until it answers
	local dir=$1 port=$2
	shift 2
	swmgr_args "$dir" "$port"
	"$@" "$work/swmgr" "${SW_ARGS[@]}" 2>>"$work/swmgr.log" &
	SW_PID=$!
	echo "$SW_PID" >>"$work/pids"
	"$PROBE" wait -pid "$SW_PID" -url "http://127.0.0.1:$port/public/v1/config/NtpServers?Count=1" >/dev/null ||
		{ echo "swmgr did not come up; its log:" >&2; tail -20 "$work/swmgr.log" >&2; return 1; }
}
stop_proc() { # pid: SIGTERM, wait up to 15 s; sets STOP_RC to its exit status (call it directly, not in $(...): only the shell that started pid can wait for it)
	local pid=$1 i rc=0
	kill -TERM "$pid" 2>/dev/null || true
	for i in $(seq 1 300); do kill -0 "$pid" 2>/dev/null || break; sleep 0.05; done
	if kill -0 "$pid" 2>/dev/null; then
		echo "pid $pid still running 15 s after SIGTERM; killing it" >&2
		kill -KILL "$pid" 2>/dev/null || true
	fi
	wait "$pid" 2>/dev/null || rc=$?
	sed -i "/^$pid\$/d" "$work/pids" # gone: cleanup must not signal a reused pid
	STOP_RC=$rc
}
gen_get() { # url connections seconds -> req/s, with the generator of (a)
	local out
	if [ "$GEN" = wrk ]; then
		out=$("${GEN_PIN[@]}" wrk -t1 -c"$2" -d"$3s" "$1")
		if grep -qE 'Non-2xx|Socket errors' <<<"$out"; then
			echo "wrk saw errors against $1:" >&2
			echo "$out" >&2
			return 1
		fi
		awk '/Requests\/sec/ {print $2}' <<<"$out"
	else
		out=$("${GEN_PIN[@]}" "$LOADGEN" -url "$1" -c "$2" -d "$3s")
		kv rps "$out"
	fi
}
result() { # figure key value: record a result for the summary
	echo "$3" >"$work/res_$1_$2"
}
res() { cat "$work/res_$1_$2" 2>/dev/null || echo ""; }

# ---- (b) durable creates ---------------------------------------------------

section_b() {
	echo
	echo "== (b) durable creates/s, $CLIENTS concurrent clients: swmgr vs raw bbolt db.Batch from $CLIENTS goroutines ($ROUNDS alternating rounds of ${SECS} s)"
	echo "   swmgr: POST /public/v1/config/NtpServer $CREATE_BODY ({ip} unique per request), loadgen -c $CLIENTS, fresh data dir per round"
	echo "   raw:   bbolt v1.5.0 defaults (fsync per commit), db.Batch, unique random 16-byte keys, $VALUE_SIZE-byte values, fresh file per round"
	local i port out t0 sw=() swc=() raw=() tuned=() tck
	tck=$(getconf CLK_TCK)
	for i in $(seq 1 "$ROUNDS"); do
		port=$("$PROBE" freeport)
		start_swmgr "$work/b$i" "$port"
		t0=$(cpu_ticks "$SW_PID")
		out=$("$LOADGEN" -method POST -url "http://127.0.0.1:$port/public/v1/config/NtpServer" -body-template "$CREATE_BODY" -c "$CLIENTS" -d "${SECS}s")
		# The server's CPU time per create (user + system over the round):
		# moves far less with the machine's load than creates/s.
		swc+=("$(awk -v t="$(($(cpu_ticks "$SW_PID") - t0))" -v k="$tck" -v n="$(kv requests "$out")" 'BEGIN {if (n > 0) printf "%.0f", t / k * 1e6 / n; else print "nan"}')")
		echo "   round $i swmgr:      $out cpu_us_per_create=${swc[-1]}"
		sw+=("$(kv rps "$out")")
		stop_proc "$SW_PID"
		[ "$STOP_RC" = 0 ] || echo "   note: swmgr exited with status $STOP_RC on SIGTERM, not 0"
		out=$("$work/rawbolt" -db "$work/raw$i.db" -c "$CLIENTS" -d "${SECS}s" -size "$VALUE_SIZE")
		echo "   round $i raw bbolt:  $out"
		raw+=("$(kv puts_per_s "$out")")
		out=$("$work/rawbolt" -db "$work/rawt$i.db" -c "$CLIENTS" -d "${SECS}s" -size "$VALUE_SIZE" -max-batch-size "$CLIENTS")
		echo "   round $i raw bbolt, MaxBatchSize=$CLIENTS (info): $out"
		tuned+=("$(kv puts_per_s "$out")")
	done
	local s r t
	s=$(printf '%s\n' "${sw[@]}" | median)
	r=$(printf '%s\n' "${raw[@]}" | median)
	t=$(printf '%s\n' "${tuned[@]}" | median)
	# What swmgr stored per create, from its dump of the last round's store.
	if out=$("$work/swmgr" dump --data-dir "$work/b$ROUNDS" 2>/dev/null); then
		awk '$1 == "obj" && index($2, "4e747053657276657200") == 1 {n++; ob += length($3) / 2; ok += length($2) / 2}
			$1 == "revs" {r++; rb += length($3) / 2}
			END {if (n && r) printf "   swmgr stored per create (from swmgr dump): object %.0f-byte key + %.0f-byte value, revision record %.0f bytes, plus index entries\n", ok / n, ob / n, rb / r}' <<<"$out"
	fi
	local rt rtt
	rt=$(ratio "$s" "$r")
	rtt=$(ratio "$s" "$t")
	echo "   swmgr creates/s: ${sw[*]} -> median $s; server CPU per create: ${swc[*]} us -> median $(printf '%s\n' "${swc[@]}" | median) us"
	echo "   raw bbolt puts/s: ${raw[*]} -> median $r"
	echo "   raw bbolt with MaxBatchSize=$CLIENTS puts/s (commits as soon as all $CLIENTS writers are in, no 10 ms MaxBatchDelay wait): ${tuned[*]} -> median $t"
	echo "   (b) swmgr/raw = $s / $r = $rt  target >= 0.5  $(verdict "$rt" '>=' 0.5)"
	echo "   (b) swmgr/raw MaxBatchSize=$CLIENTS = $s / $t = $rtt  target >= 0.5  $(verdict "$rtt" '>=' 0.5)"
	result b ratio "$rt"
	result b tuned "$rtt"
}

# ---- loading 100,000 objects, (c), (d) --------------------------------------

section_load_c_d() {
	local dir=$work/big port base list out
	port=$("$PROBE" freeport)
	base="http://127.0.0.1:$port/public/v1/config"
	list="$base/NtpServers"
	echo
	echo "== loading $OBJECTS NtpServers into a fresh swmgr (loadgen -c $CLIENTS, unique 10.x.y.z)"
	start_swmgr "$dir" "$port"
	echo "$SW_PID" >"$work/big.pid"
	echo "$port" >"$work/big.port"
	out=$("$LOADGEN" -method POST -url "$base/NtpServer" -body-template "$CREATE_BODY" -c "$CLIENTS" -n "$OBJECTS")
	echo "   $out"
	"$PROBE" objectid -url "$list?Count=1" >"$work/big.id"

	echo
	echo "== (c) get-all page of Count=100 at the 99,000th object vs at marker 0 (1 connection, $((ROUNDS + 2)) alternating rounds of 1000 requests, median of the per-round medians)"
	out=$("$PROBE" marker -url "$list" -skip 98999 -page 1000 -count 100)
	echo "   walk with NextMarker (Count=1000) past 98,999 objects: $out"
	local m99 m0=0 i r z=() f=()
	m99=$(kv marker "$out")
	"$LOADGEN" -url "$list?CurrentMarker=$m0&Count=100" -c 1 -n 300 >/dev/null # warm up
	"$LOADGEN" -url "$list?CurrentMarker=$m99&Count=100" -c 1 -n 300 >/dev/null
	for i in $(seq 1 $((ROUNDS + 2))); do
		out=$("$LOADGEN" -url "$list?CurrentMarker=$m0&Count=100" -c 1 -n 1000)
		echo "   round $i marker 0:      $out"
		z+=("$(kv p50_ms "$out")")
		out=$("$LOADGEN" -url "$list?CurrentMarker=$m99&Count=100" -c 1 -n 1000)
		echo "   round $i marker $m99: $out"
		f+=("$(kv p50_ms "$out")")
	done
	local c0 c99 rt
	c0=$(printf '%s\n' "${z[@]}" | median)
	c99=$(printf '%s\n' "${f[@]}" | median)
	rt=$(ratio "$c99" "$c0")
	echo "   median latency at marker 0: ${z[*]} ms -> $c0 ms"
	echo "   median latency at the 99,000th object: ${f[*]} ms -> $c99 ms"
	echo "   (c) 99,000th/first = $c99 / $c0 = $rt  target <= 1.5  $(verdict "$rt" '<=' 1.5)"
	result c ratio "$rt"

	echo
	echo "== (d) RSS with $OBJECTS objects, then cold start on that data directory"
	out=$("$PROBE" rss -pid "$SW_PID")
	local rss
	rss=$(kv rss_mib "$out")
	echo "   VmRSS of swmgr (pid $SW_PID) after loading and serving (c): $rss MiB  target < 150  $(verdict "$rss" '<' 150)"
	echo "   of which anonymous (Go heap, stacks) $(kv anon_mib "$out") MiB, file-backed (the mmap'd bbolt file, the binary) $(kv file_mib "$out") MiB; peak VmHWM $(kv peak_rss_mib "$out") MiB"
	echo "   data directory: $(du -sh "$dir" | cut -f1)"
	result d rss "$rss"
	local t0
	t0=$(date +%s%N)
	stop_proc "$SW_PID"
	echo "   SIGTERM: exited with status $STOP_RC after $((($(date +%s%N) - t0) / 1000000)) ms$([ "$STOP_RC" = 0 ] || echo " (note: not 0)")"
	local id
	id=$(cat "$work/big.id")
	swmgr_args "$dir" "$port"
	out=$("$PROBE" coldstart -runs 3 -log "$work/swmgr.log" -url "$base/NtpServer/$id" -- "$work/swmgr" "${SW_ARGS[@]}")
	echo "   3 starts, exec to the first 200 of GET $base/NtpServer/$id (polled every 2 ms):"
	echo "   $out"
	local cold
	cold=$(kv median_ms "$out")
	echo "   cold start median: $cold ms  target < 1000  $(verdict "$cold" '<' 1000)"
	result d cold "$cold"
}

# section_load is the loading alone (for BENCH_SECTIONS="load a").
section_load() {
	local dir=$work/big port base out
	port=$("$PROBE" freeport)
	base="http://127.0.0.1:$port/public/v1/config"
	echo
	echo "== loading $OBJECTS NtpServers into a fresh swmgr (loadgen -c $CLIENTS, unique 10.x.y.z)"
	start_swmgr "$dir" "$port"
	out=$("$LOADGEN" -method POST -url "$base/NtpServer" -body-template "$CREATE_BODY" -c "$CLIENTS" -n "$OBJECTS")
	echo "   $out"
	"$PROBE" objectid -url "$base/NtpServers?Count=1" >"$work/big.id"
	stop_proc "$SW_PID"
}

# cpu_ticks pid: user+system clock ticks the process has used.
cpu_ticks() { awk '{print $14 + $15}' "/proc/$1/stat"; }

# ---- (a) GET by id ---------------------------------------------------------

section_a() {
	local dir=$work/big port bport id sw_url bare_url out
	port=$("$PROBE" freeport)
	bport=$("$PROBE" freeport)
	id=$(cat "$work/big.id")
	echo
	echo "== (a) GET by ObjectId req/s: swmgr (holding $OBJECTS objects) vs bare net/http serving the same bytes"
	echo "   generator: $GEN, 1 thread, 16 connections, ${SECS} s per round, $ROUNDS alternating rounds; $PIN_DESC"
	start_swmgr "$dir" "$port" "${SRV_PIN[@]}"
	sw_url="http://127.0.0.1:$port/public/v1/config/NtpServer/$id"
	"${SRV_PIN[@]}" "$work/bareserver" -addr "127.0.0.1:$bport" -copy-from "$sw_url" 2>>"$work/bare.log" &
	local bpid=$!
	echo "$bpid" >>"$work/pids"
	bare_url="http://127.0.0.1:$bport/public/v1/config/NtpServer/$id"
	"$PROBE" wait -pid "$bpid" -url "$bare_url" >/dev/null
	curl -sS -D "$work/a.sw.h" -o "$work/a.sw.b" "$sw_url"
	curl -sS -D "$work/a.bare.h" -o "$work/a.bare.b" "$bare_url"
	if cmp -s "$work/a.sw.b" "$work/a.bare.b" &&
		diff <(grep -iv '^date:' "$work/a.sw.h") <(grep -iv '^date:' "$work/a.bare.h") >/dev/null; then
		echo "   both answer the same $(wc -c <"$work/a.sw.b")-byte body with the same headers (apart from Date):"
		grep -iv '^date:\|^http/\|^\s*$' "$work/a.sw.h" | tr -d '\r' | sed 's/^/     /'
	else
		echo "   note: the bare server's answer differs from swmgr's" >&2
		diff <(cat "$work/a.sw.h" "$work/a.sw.b") <(cat "$work/a.bare.h" "$work/a.bare.b") >&2 || true
	fi
	# For information, a second swmgr on a copy of the data directory with
	# the access log and the metrics off (their own
	# figure is BenchmarkGetByID in internal/obs): what they cost here.
	local qport qpid q_url
	qport=$("$PROBE" freeport)
	cp -a "$dir" "$dir.q"
	swmgr_args "$dir.q" "$qport"
	"${SRV_PIN[@]}" "$work/swmgr" "${SW_ARGS[@]}" --access-log=false --metrics=false 2>>"$work/swmgr-q.log" &
	qpid=$!
	echo "$qpid" >>"$work/pids"
	q_url="http://127.0.0.1:$qport/public/v1/config/NtpServer/$id"
	"$PROBE" wait -pid "$qpid" -url "$q_url" >/dev/null
	gen_get "$sw_url" 16 2 >/dev/null # warm up all three
	gen_get "$q_url" 16 2 >/dev/null
	gen_get "$bare_url" 16 2 >/dev/null
	local i s b q t0 sc bc sw=() bw=() qw=() swc=() bwc=() tck
	tck=$(getconf CLK_TCK)
	# CPU per request (user + system time of the server over the round /
	# its requests): moves far less with the machine's load than req/s.
	per_req() { awk -v t="$1" -v k="$tck" -v r="$2" -v d="$SECS" 'BEGIN {if (r > 0) printf "%.1f", t / k * 1e6 / (r * d); else print "nan"}'; }
	for i in $(seq 1 "$ROUNDS"); do
		t0=$(cpu_ticks "$SW_PID")
		s=$(gen_get "$sw_url" 16 "$SECS")
		sc=$(per_req $(($(cpu_ticks "$SW_PID") - t0)) "$s")
		q=$(gen_get "$q_url" 16 "$SECS")
		t0=$(cpu_ticks "$bpid")
		b=$(gen_get "$bare_url" 16 "$SECS")
		bc=$(per_req $(($(cpu_ticks "$bpid") - t0)) "$b")
		echo "   round $i: swmgr $s req/s ($sc us CPU per request), bare $b req/s ($bc us CPU per request); swmgr without access log and metrics $q req/s"
		sw+=("$s")
		bw+=("$b")
		qw+=("$q")
		swc+=("$sc")
		bwc+=("$bc")
	done
	local mc mb
	mc=$(printf '%s\n' "${swc[@]}" | median)
	mb=$(printf '%s\n' "${bwc[@]}" | median)
	echo "   CPU per request, medians: swmgr $mc us, bare $mb us -> bare/swmgr $(ratio "$mb" "$mc") (information: moves less with the load than req/s)"
	s=$(printf '%s\n' "${sw[@]}" | median)
	b=$(printf '%s\n' "${bw[@]}" | median)
	local rt
	rt=$(ratio "$s" "$b")
	echo "   (a) swmgr/bare = $s / $b = $rt  target >= 0.9  $(verdict "$rt" '>=' 0.9)"
	result a ratio "$rt"
	q=$(printf '%s\n' "${qw[@]}" | median)
	echo "   information: swmgr without access log and metrics / bare = $q / $b = $(ratio "$q" "$b"); swmgr / swmgr without them = $(ratio "$s" "$q")"
	stop_proc "$qpid"
	rm -rf "$dir.q"
	stop_proc "$bpid"
	stop_proc "$SW_PID"
	[ "$STOP_RC" = 0 ] || echo "   note: swmgr exited with status $STOP_RC on SIGTERM, not 0"
}

# stop_leftovers stops what a failed section left running (not children of
# this shell: poll, then SIGKILL).
stop_leftovers() {
	local p i
	while read -r p; do
		kill -TERM "$p" 2>/dev/null || continue
		for i in $(seq 1 300); do kill -0 "$p" 2>/dev/null || break; sleep 0.05; done
		kill -KILL "$p" 2>/dev/null || true
	done <"$work/pids"
	: >"$work/pids"
}

# Each section runs in a subshell with errexit, so that a failure in one
# (a server that does not answer, a request that fails) is reported and the
# others still run. The subshell is a background job in a process group of
# its own (set -m), so that this shell can take a signal while it runs and
# stop it, and everything it started, at once.
set +e
# BENCH_SECTIONS (default "b load_c_d a") runs only some sections; the
# others are reported as missing.
for s in ${BENCH_SECTIONS:-b load_c_d a}; do
	s=section_$s
	set -m
	(set -e; "$s") 2>&1 &
	SECTION=$!
	set +m
	wait "$SECTION"
	rc=$?
	SECTION=""
	if [ "$rc" != 0 ]; then
		echo "!! $s failed (status $rc); the figures it did not reach are reported as missing"
		stop_leftovers
	fi
done
set -e

a=$(res a ratio) b=$(res b ratio) bt=$(res b tuned) c=$(res c ratio) rss=$(res d rss) cold=$(res d cold)
va=$(verdict "$a" '>=' 0.9) vb=$(verdict "$b" '>=' 0.5) vbt=$(verdict "$bt" '>=' 0.5) vc=$(verdict "$c" '<=' 1.5)
vr=$(verdict "$rss" '<' 150) vs=$(verdict "$cold" '<' 1000)
all=PASS
for v in "$va" "$vb" "$vbt" "$vc" "$vr" "$vs"; do [ "$v" = PASS ] || all=FAIL; done
echo
echo "SUMMARY: (a) GET-by-id swmgr/bare ${a:-missing} (>=0.9 $va) | (b) creates swmgr/raw ${b:-missing} (>=0.5 $vb), /raw MaxBatchSize=64 ${bt:-missing} (>=0.5 $vbt) | (c) page time 99k/0 ${c:-missing} (<=1.5 $vc) | (d) RSS ${rss:-missing} MiB (<150 $vr), cold start ${cold:-missing} ms (<1000 $vs) => $all in $(($(date +%s) - T0)) s"
[ "$all" = PASS ]
