# The helpers of the VM's check scripts (vm.sh, os.sh, reboot.sh), sourced
# by them: check prints one line per check, "ok - ..." or "not ok - ...",
# and counts the failures in $fails, the scripts' exit status.
set -u
export PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin
fails=0
t0=$(date +%s)
step() { echo "# $(($(date +%s) - t0))s: $*"; }
check() {
	local what=$1
	shift
	if "$@"; then echo "ok - $what"; else
		echo "not ok - $what"
		fails=$((fails + 1))
	fi
}
# waitfor N cmd...: cmd succeeds within N seconds.
waitfor() {
	local n=$1
	shift
	for _ in $(seq "$n"); do
		"$@" >/dev/null 2>&1 && return 0
		sleep 1
	done
	return 1
}
# http METHOD PATH [BODY]: swmgr's HTTP on loopback (root: admin, no
# credentials), HTTP/1.0 through bash's /dev/tcp; prints the response.
http() {
	local body=${3:-}
	exec 3<>/dev/tcp/127.0.0.1/8080 || return 1
	printf '%s %s HTTP/1.0\r\nHost: 127.0.0.1:8080\r\nContent-Type: application/json\r\nContent-Length: %d\r\n\r\n%s' "$1" "$2" "${#body}" "$body" >&3
	cat <&3
	exec 3<&-
}
api() { http "$1" "/public/v1$2" "${3:-}"; }
ready() { http GET /readyz | grep -q '"Ready":true'; }
has() { api GET "$1" | grep -q "$2"; }
active() { systemctl is-active -q swmgr && ready; }
# verifies V [MESSAGE]: gNOI's OS.Verify (the function os: gnoiclient as
# an admin) answers version V (and a failure message holding MESSAGE, else
# none).
verifies() {
	local out
	out=$(os verify 2>/dev/null) || return 1
	if [ -n "${2:-}" ]; then
		grep -qF "version=$1 fail=" <<<"$out" && grep -qF "$2" <<<"$out"
	else
		test "$out" = "version=$1 fail="
	fi
}
installed() { test "$(dpkg-query -W -f '${Version}' swmgr)" = "$1"; }
