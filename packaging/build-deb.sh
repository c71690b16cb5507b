#!/bin/sh
# build-deb.sh OUTDIR: builds swmgr_<version>_<arch>.deb into OUTDIR and
# prints its path.
#
# The version (docs/packaging.md, "Versions"): $SWMGR_VERSION if set; else
# the newest version in CHANGELOG.md when the commit is tagged v<version>;
# else <that version>~git<commit time>.<commit>, which sorts before the
# release it leads to. The version and the commit are linked into the
# binary, so `swmgr --version` says the package's version.
#
# $SWMGR_DEB_COMPRESSION (default xz) is dpkg-deb's -Z: the test uses gzip,
# several times faster on a busy machine.
#
# The package: /usr/bin/swmgr, the systemd unit swmgr.service (Type=notify,
# sandboxed), /etc/default/swmgr (its options, a conffile), man pages,
# bash/zsh/fish completions, the README, docs, changelog and copyright.
# See docs/packaging.md.
set -eu
out=${1:?usage: build-deb.sh OUTDIR}
here=$(cd "$(dirname "$0")" && pwd)
top=$(cd "$here/.." && pwd)
mkdir -p "$out"
out=$(cd "$out" && pwd)

commit=$(git -C "$top" rev-parse HEAD 2>/dev/null || echo unknown)
# The newest release named in CHANGELOG.md: its first "## <version>" line.
release=$(sed -n 's/^## \([0-9][0-9.]*\)\( .*\)\{0,1\}$/\1/p' "$top/CHANGELOG.md" | head -1)
[ -n "$release" ] || { echo "build-deb.sh: no '## <version>' line in CHANGELOG.md" >&2; exit 1; }
if [ -n "${SWMGR_VERSION:-}" ]; then
	version=$SWMGR_VERSION
elif [ "$commit" = unknown ]; then
	version=$release~dev
elif [ "$(git -C "$top" tag --points-at HEAD | grep -Fx "v$release")" = "v$release" ] &&
	[ -z "$(git -C "$top" status --porcelain 2>/dev/null)" ]; then
	version=$release
else
	version=$release~git$(git -C "$top" log -1 --format=%cd --date=format-local:%Y%m%d%H%M%S).$(echo "$commit" | cut -c1-12)
fi
arch=$(dpkg --print-architecture)

stage=$(mktemp -d)
trap 'rm -rf "$stage"' EXIT
root=$stage/root
install -d "$root/DEBIAN" "$root/usr/bin" "$root/lib/systemd/system" "$root/etc/default" \
	"$root/usr/share/man/man1" "$root/usr/share/doc/swmgr" \
	"$root/usr/share/bash-completion/completions" "$root/usr/share/zsh/vendor-completions" \
	"$root/usr/share/fish/vendor_completions.d" "$root/usr/share/swmgr/grafana"

# Plain `go build` shares the build cache with development and tests; set
# GOFLAGS=-trimpath and CGO_ENABLED=0 for a release build.
(cd "$top" && go build \
	-ldflags "-s -w -X main.buildVersion=$version -X main.buildCommit=$commit" \
	-o "$root/usr/bin/swmgr" ./cmd/swmgr)
bin=$root/usr/bin/swmgr

"$bin" man "$stage/man"
for page in "$stage"/man/*.1; do
	gzip -9n <"$page" >"$root/usr/share/man/man1/$(basename "$page").gz"
done
"$bin" completion bash >"$root/usr/share/bash-completion/completions/swmgr"
"$bin" completion zsh >"$root/usr/share/zsh/vendor-completions/_swmgr"
"$bin" completion fish >"$root/usr/share/fish/vendor_completions.d/swmgr.fish"

install -m 0644 "$here/deb/swmgr.service" "$root/lib/systemd/system/swmgr.service"
install -m 0600 "$here/deb/default" "$root/etc/default/swmgr"
install -m 0644 "$top/README.md" "$root/usr/share/doc/swmgr/README.md"
install -m 0644 "$here/deb/copyright" "$root/usr/share/doc/swmgr/copyright"
gzip -9n <"$top/CHANGELOG.md" >"$root/usr/share/doc/swmgr/changelog.gz"
for d in "$top"/docs/*.md "$top/docs/openapi.json"; do
	install -m 0644 "$d" "$root/usr/share/doc/swmgr/"
done
# The Grafana dashboard, to import or to point a provisioning file at.
install -m 0644 "$top/docs/grafana/swmgr-dashboard.json" "$root/usr/share/swmgr/grafana/"
install -m 0755 "$here/deb/postinst" "$here/deb/prerm" "$here/deb/postrm" "$root/DEBIAN/"
echo /etc/default/swmgr >"$root/DEBIAN/conffiles"
size=$(du -sk "$root" | cut -f1)
cat >"$root/DEBIAN/control" <<CONTROL
Package: swmgr
Version: $version
Architecture: $arch
Maintainer: swmgr developers <swmgr@localhost>
Installed-Size: $size
Depends: libc6, passwd
Recommends: systemd, bash-completion
Suggests: frr, chrony, lldpd, isc-dhcp-relay, nftables, openssh-server, git
Section: net
Priority: optional
Homepage: https://github.com/swmgr/swmgr
Description: manage a network switch through a REST interface
 swmgr serves a REST interface wire-compatible with SnapRoute FlexSwitch's
 /public/v1 paths, with candidates, confirmed commits, revisions and a change
 feed, and configures the switch (a simulated one, or this machine's Linux
 kernel, FRR and chrony) to match.
CONTROL
deb=$out/swmgr_${version}_$arch.deb
dpkg-deb --root-owner-group -Z"${SWMGR_DEB_COMPRESSION:-xz}" --build "$root" "$deb" >/dev/null
echo "$deb"
