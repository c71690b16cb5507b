#!/usr/bin/env bash
# The configuration lifecycle at 100,000 objects, on a real `swmgr serve`
# (the restore's figures, from outside the process):
#   SaveConfig of 100,000 objects (plus the switch's own)        target <= 2 s
#   ResetConfigToFile of that file onto a reset switch (one commit) target <= 10 s
#   peak RSS of swmgr during each step (VmHWM; each step on a     target < 300 MiB
#   freshly started swmgr on the data directory)
# and, for information, ResetConfig of the 100,000 objects (one commit) and
# the first load of a FlexSwitch-shaped (format 1) file of them.
#
# Usage: bench/lifecycle.sh  (from anywhere in the repository; ~1-2 min on
# 2 cores). Needs Go, curl, awk; root for the RSS reset (/proc/PID/clear_refs
# of another process; without it the peaks are since the start). Each step is
# timed by curl (time_total: request sent to answer read), BENCH_ROUNDS (3)
# times; the figure is the median. Exits 0 when every target is met.
set -euo pipefail
cd "$(dirname "$0")/.."

ROUNDS=${BENCH_ROUNDS:-3}
OBJECTS=100000
work=$(mktemp -d -t swmgr-lifecycle.XXXXXX)
PID=""
cleanup() {
	if [ -n "$PID" ]; then
		kill -TERM "$PID" 2>/dev/null || true
		for _ in $(seq 1 100); do kill -0 "$PID" 2>/dev/null || break; sleep 0.05; done
		kill -KILL "$PID" 2>/dev/null || true
	fi
	rm -rf "$work"
}
trap cleanup EXIT
trap 'exit 130' INT TERM

echo "== building swmgr and probe into $work"
go build -o "$work/swmgr" ./cmd/swmgr
go build -o "$work/probe" ./bench/probe
echo "machine: $(nproc) CPUs, $(uname -r), $(go version | cut -d' ' -f3); load average now: $(cut -d' ' -f1-3 /proc/loadavg)"

# A FlexSwitch-shaped file of OBJECTS NtpServers.
awk -v n="$OBJECTS" 'BEGIN {
	printf "{\n    \"ConfigData\": {\n        \"NtpServer\": [\n"
	for (i = 0; i < n; i++)
		printf "            {\"IpAddr\": \"10.%d.%d.%d\", \"MinPoll\": %d}%s\n", int(i / 65536), int(i / 256) % 256, i % 256, 4 + i % 4, (i < n - 1 ? "," : "")
	printf "        ]\n    }\n}\n"
}' >"$work/flex.json"

port=$("$work/probe" freeport)
base="http://127.0.0.1:$port/public/v1"
mkdir "$work/data"
# restart: each step runs on a freshly started swmgr, so that its peak RSS
# is its own and not the heap an earlier step grew (Go keeps it a while).
restart() {
	if [ -n "$PID" ]; then
		kill -TERM "$PID"
		wait "$PID" || { echo "swmgr exited with $? after SIGTERM" >&2; exit 1; }
	fi
	SWMGR_ADMIN_PASSWORD=bench-lifecycle-admin "$work/swmgr" serve --data-dir "$work/data" --http "127.0.0.1:$port" \
		--https "" --socket "" --ports 32 --log-format text --access-log=false >>"$work/serve.log" 2>&1 &
	PID=$!
	"$work/probe" wait -pid "$PID" -url "$base/config/SystemParam" >/dev/null
}
restart

# cpu_ticks: swmgr's user+system CPU time so far (fields 14 and 15 of
# /proc/PID/stat; the command name, field 2, has no spaces here). On a
# loaded machine the wall time of a step says little; its CPU time does.
cpu_ticks() { awk '{print $14 + $15}' "/proc/$PID/stat"; }
hwm() { awk '/^VmHWM:/ {printf "%.1f", $2 / 1024}' "/proc/$PID/status"; }
reset_hwm() { echo 5 >"/proc/$PID/clear_refs" 2>/dev/null || true; }
median() { sort -g | awk '{a[NR] = $1} END {if (NR) print a[int((NR + 1) / 2)]}'; }
# settle: wait until swmgr has been idle for 300 ms (at most ~10 s), so
# that a step's peak RSS and CPU time include the work it sets off after its
# answer (the change feed's subscribers reading a restore's event).
settle() {
	local last now
	last=$(cpu_ticks)
	for _ in $(seq 1 33); do
		sleep 0.3
		now=$(cpu_ticks)
		[ "$now" = "$last" ] && return
		last=$now
	done
}
# step NAME PATH BODY: one timed POST on a fresh swmgr; prints seconds, the
# RSS before and the peak RSS during it (up to settle); fails on a non-200.
step() {
	restart
	local before
	before=$(awk '/^VmRSS:/ {printf "%.1f", $2 / 1024}' "/proc/$PID/status")
	reset_hwm
	local out code secs cpu0
	cpu0=$(cpu_ticks)
	out=$(curl -sS -o "$work/answer" -w '%{http_code} %{time_total}' -X POST "$base$2" -d "$3")
	code=${out% *} secs=${out#* }
	if [ "$code" != 200 ]; then
		echo "$1: HTTP $code: $(head -c 300 "$work/answer")" >&2
		exit 1
	fi
	settle
	echo "$1 seconds=$secs cpu_seconds=$(awk -v a="$cpu0" -v b="$(cpu_ticks)" -v hz="$(getconf CLK_TCK)" 'BEGIN {printf "%.2f", (b - a) / hz}') rss_before_mib=$before peak_rss_mib=$(hwm) answer=$(head -c 160 "$work/answer")"
}

# Steps run in this shell (not in a pipeline's subshell): restart keeps PID.
: >"$work/load" ; : >"$work/save" ; : >"$work/restore" ; : >"$work/reset"
step "load-format1" /action/ResetConfigToFile "{\"SrcFileURI\":\"///${work#/}/flex.json\"}" >>"$work/load"
tail -1 "$work/load"
for r in $(seq 1 "$ROUNDS"); do
	echo "-- round $r"
	for s in save reset restore; do
		case $s in
		save) step save /action/SaveConfig '{}' >>"$work/save" ;;
		reset) step reset /action/ResetConfig '' >>"$work/reset" ;;
		restore) step restore /action/ResetConfigToFile '{}' >>"$work/restore" ;;
		esac
		tail -1 "$work/$s"
	done
done
field() { awk -v k="$1" '{for (i = 1; i <= NF; i++) if (index($i, k "=") == 1) print substr($i, length(k) + 2)}'; }
save_s=$(field seconds <"$work/save" | median)
restore_s=$(field seconds <"$work/restore" | median)
reset_s=$(field seconds <"$work/reset" | median)
rss=$(cat "$work/save" "$work/restore" | field peak_rss_mib | sort -g | tail -1)
reset_rss=$(field peak_rss_mib <"$work/reset" | sort -g | tail -1)
verdict() { awk -v v="$1" -v op="$2" -v t="$3" 'BEGIN {ok = (op == "<=") ? v <= t : v < t; print ok ? "PASS" : "FAIL"}'; }
v1=$(verdict "$save_s" "<=" 2) v2=$(verdict "$restore_s" "<=" 10) v3=$(verdict "$rss" "<" 300)
save_cpu=$(field cpu_seconds <"$work/save" | median)
restore_cpu=$(field cpu_seconds <"$work/restore" | median)
echo "SUMMARY: save ${save_s}s (<= 2) $v1; restore ${restore_s}s (<= 10) $v2; peak RSS save/restore ${rss} MiB (< 300) $v3; reset ${reset_s}s, ${reset_rss} MiB (information); CPU seconds: save ${save_cpu}, restore ${restore_cpu}; load average $(cut -d' ' -f1-3 /proc/loadavg)"
[ "$v1$v2$v3" = PASSPASSPASS ]
