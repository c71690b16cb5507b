#!/bin/sh
# Authenticated HTTPS GET by ObjectId against unauthenticated plain-HTTP GET
# by ObjectId, measured in one run (internal/auth BenchmarkAuthGetByID).
# Fails unless the ratio is at least 0.85 (its figure when the target was set).
#
#   bench/auth.sh [rounds]      (default 9 rounds of 4000 requests each)
set -eu
cd "$(dirname "$0")/.."
rounds=${1:-9}
out=$(go test -run '^$' -bench '^BenchmarkAuthGetByID$' -benchtime "${rounds}x" -count 1 ./internal/auth/)
echo "$out"
echo "$out" | awk '
/^BenchmarkAuthGetByID/ {
	for (i = 2; i < NF; i++) if ($(i+1) ~ /^ratio/) r = $i
}
END {
	if (r == "") { print "auth.sh: no ratio in the output" > "/dev/stderr"; exit 2 }
	if (r + 0 < 0.85) { printf "auth.sh: FAIL: HTTPS+auth / plain HTTP = %s < 0.85\n", r; exit 1 }
	printf "auth.sh: ok: HTTPS+auth / plain HTTP = %s (target >= 0.85)\n", r
}'
