#!/bin/bash
# Builds the stock-Debian-kernel test VM in $V: the kernel (downloaded and
# unpacked, never installed), its modules, and a busybox initramfs.
# Needs root, apt, busybox-static, kmod, cpio, xz-utils (see .ci/run).
set -euo pipefail
V=${V:?}; mkdir -p "$V"; cd "$V"
rm -rf kpkg vmlinux initrd.cpio
PKG=$(apt-cache depends linux-image-amd64 | awk '/Depends: linux-image-/{print $2; exit}')
[ -n "$PKG" ] || { echo "no linux-image-amd64 in apt (run apt-get update)" >&2; exit 1; }
rm -f ./*.deb
apt-get download -qq "$PKG"
mkdir -p kpkg && dpkg-deb -x ${PKG}_*.deb kpkg && rm -f ${PKG}_*.deb
KV=$(ls kpkg/lib/modules); depmod -b "$V/kpkg" "$KV"
# The uncompressed ELF boots through PVH, about 3 s faster than bzImage under TCG.
B=kpkg/boot/vmlinuz-$KV; off=$(grep -abo $'\xfd7zXZ\x00' "$B" | head -1 | cut -d: -f1)
tail -c+$((off+1)) "$B" | xz -dc 2>/dev/null > vmlinux || true
[ -s vmlinux ] || { echo "could not extract vmlinux from $B" >&2; exit 1; }
T=$(mktemp -d); trap 'rm -rf "$T"' EXIT
mkdir -p "$T"/{bin,mod,proc,sys,dev,newroot}
cp /bin/busybox "$T/bin/busybox"; ln -s busybox "$T/bin/sh"
cp "$INIT" "$T/init"; chmod +x "$T/init"; cp "$STAGE2" "$T/stage2.sh"
for m in virtio_pci 9pnet_virtio 9p overlay; do
  modprobe -d "$V/kpkg" -S "$KV" --show-depends $m | awk '/^insmod/{print $2}'
done | awk '!seen[$0]++' | while read -r f; do cp "$f" "$T/mod/"; basename "$f" .ko >> "$T/modules.order"; done
(cd "$T" && find . | cpio -o -H newc --quiet) > initrd.cpio
echo "$KV" > kernel-version
