#!/usr/bin/env bash
# Peak RSS of a whole `swmgr serve` process restoring a large file:
#   ResetConfigToFile of a 7 MB FlexSwitch-shaped file of 300,000 NtpServers
#   (one commit), on a freshly started swmgr: VmHWM of the process from its
#   start to the end of the restore and the work it sets off   target <= 300 MiB
# and, for information, its RSS before and the restore's time.
#
# Usage: bench/restorerss.sh  (from anywhere in the repository; ~1-2 min on 2
# cores). Needs Go, curl, awk. Exits 0 when the target is met.
set -euo pipefail
cd "$(dirname "$0")/.."

OBJECTS=${OBJECTS:-300000}
work=$(mktemp -d -t swmgr-restorerss.XXXXXX)
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

go build -o "$work/swmgr" ./cmd/swmgr
go build -o "$work/probe" ./bench/probe
echo "machine: $(nproc) CPUs, $(uname -r), $(go version | cut -d' ' -f3); load average now: $(cut -d' ' -f1-3 /proc/loadavg)"

# The smallest objects FlexSwitch's shape allows: the file is ~24 bytes an
# object, so the decoded objects, not the bytes, are what costs.
awk -v n="$OBJECTS" 'BEGIN {
	printf "{\"ConfigData\":{\"NtpServer\":[\n"
	for (i = 0; i < n; i++)
		printf "{\"IpAddr\":\"10.%d.%d.%d\"}%s\n", int(i / 65536), int(i / 256) % 256, i % 256, (i < n - 1 ? "," : "")
	printf "]}}\n"
}' >"$work/flex.json"
echo "file: $(wc -c <"$work/flex.json") bytes, $OBJECTS objects"

port=$("$work/probe" freeport)
base="http://127.0.0.1:$port/public/v1"
mkdir "$work/data"
SWMGR_ADMIN_PASSWORD=bench-restorerss-admin "$work/swmgr" serve --data-dir "$work/data" --http "127.0.0.1:$port" \
	--https "" --socket "" --ports 32 --log-format text --access-log=false >>"$work/serve.log" 2>&1 &
PID=$!
"$work/probe" wait -pid "$PID" -url "$base/config/SystemParam" >/dev/null
cpu_ticks() { awk '{print $14 + $15}' "/proc/$PID/stat"; }
rss() { awk -v k="$1:" '$1 == k {printf "%.1f", $2 / 1024}' "/proc/$PID/status"; }
before=$(rss VmRSS)
out=$(curl -sS -o "$work/answer" -w '%{http_code} %{time_total}' -X POST "$base/action/ResetConfigToFile" -d "{\"SrcFileURI\":\"///${work#/}/flex.json\"}")
code=${out% *} secs=${out#* }
# Settle: the work the restore sets off after its answer (feed subscribers).
last=$(cpu_ticks)
for _ in $(seq 1 33); do sleep 0.3; now=$(cpu_ticks); [ "$now" = "$last" ] && break; last=$now; done
peak=$(rss VmHWM)
echo "restore: HTTP $code in ${secs}s: $(head -c 200 "$work/answer")"
[ "$code" = 200 ] || { tail -20 "$work/serve.log"; exit 1; }
verdict=$(awk -v v="$peak" 'BEGIN {print (v <= 300) ? "PASS" : "FAIL"}')
echo "SUMMARY: restore of $OBJECTS objects: peak RSS of the process ${peak} MiB (<= 300) $verdict; RSS before ${before} MiB; ${secs}s"
[ "$verdict" = PASS ]
