#!/usr/bin/env bash
# Test images made from Debian's own packages, packed by hwimg itself, cached under the build tree.
#
#   tests/integration/make_debian_images.sh NAME...     prints one line per NAME: its OCI layout
#                                                        directory (tag "bookworm"; read-only, shared)
#   NAME: runtime       bookworm minbase (mmdebstrap --variant=minbase): /bin/sh, libc, coreutils
#         builder       runtime's packages plus gcc, g++ and make; /etc/hwimg-test-builder marks it
#         big:MIB       the runtime plus one layer of MIB MiB of incompressible (seeded) data
#
# Env: HWIMG (the hwimg binary, required), HWIMG_BUILD_DIR (the cache goes to
# $HWIMG_BUILD_DIR/test-images; HWIMG_TEST_IMAGES overrides the whole path), HWIMG_DEBIAN_MIRROR
# (default: the bookworm mirror of this machine's apt sources, else http://deb.debian.org/debian).
#
# Each rootfs is downloaded once: mmdebstrap's tarball is kept under rootfs/, keyed by a hash of
# what defines it (suite, variant, package list, hooks). mmdebstrap honours SOURCE_DATE_EPOCH, so
# the same archive content gives the same tarball byte for byte. The rootfs is unpacked without
# the contents of /dev (no device nodes in any layer; /dev stays an empty directory) and packed
# with `hwimg build` (base: scratch, one layer from the rootfs to /); the layout is cached under
# layouts/, keyed by the rootfs and the hwimg binary. Exit 77 with a message when the archive
# cannot be reached and nothing is cached: whoever calls this skips, never passes.
set -euo pipefail

readonly SUITE=bookworm
readonly EPOCH=1700000000          # every mtime and `created` in these images
readonly SPEC_VERSION=1            # bump when the way images are made changes
here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
die() { echo "make_debian_images: $*" >&2; exit 1; }
skip() { echo "make_debian_images: $*" >&2; exit 77; }

: "${HWIMG:?set HWIMG to the hwimg binary}"
if [ -n "${HWIMG_TEST_IMAGES:-}" ]; then
  cache=$HWIMG_TEST_IMAGES
elif [ -n "${HWIMG_BUILD_DIR:-}" ]; then
  cache=$HWIMG_BUILD_DIR/test-images
else
  die "set HWIMG_BUILD_DIR (ctest does) or HWIMG_TEST_IMAGES"
fi
[ $# -gt 0 ] || die "usage: $0 runtime|builder|big:MIB..."
mkdir -p "$cache/rootfs" "$cache/layouts"
cache=$(cd "$cache" && pwd)

# The mirror this machine's apt uses for the suite (deb822 sources, then one-line sources).
debian_mirror() {
  [ -n "${HWIMG_DEBIAN_MIRROR:-}" ] && { echo "${HWIMG_DEBIAN_MIRROR%/}"; return; }
  local file uri=""
  for file in /etc/apt/sources.list.d/*.sources; do
    [ -f "$file" ] || continue
    uri=$(awk -v suite="$SUITE" '
      BEGIN { RS = ""; FS = "\n" }
      { uris = ""; ok = 0
        for (i = 1; i <= NF; i++) {
          if ($i ~ /^URIs:/) { sub(/^URIs:[ \t]*/, "", $i); split($i, u, /[ \t]+/); uris = u[1] }
          if ($i ~ /^Suites:/) { n = split($i, s, /[ \t]+/); for (j = 2; j <= n; j++) if (s[j] == suite) ok = 1 }
        }
        if (ok && uris != "") { print uris; exit } }' "$file")
    [ -n "$uri" ] && break
  done
  if [ -z "$uri" ] && [ -f /etc/apt/sources.list ]; then
    uri=$(awk -v suite="$SUITE" '$1 == "deb" { i = 2; if ($i ~ /^\[/) while ($i !~ /\]$/) i++; if ($i ~ /^\[/) i++;
      if ($(i + 1) == suite) { print $i; exit } }' /etc/apt/sources.list)
  fi
  echo "${uri:-http://deb.debian.org/debian}" | sed 's|/*$||'
}

# rootfs_spec NAME: the mmdebstrap arguments that define the rootfs (hashed into its cache key).
rootfs_spec() {
  local hooks=(--customize-hook='echo hwimg-test > "$1/etc/hostname"'
    --customize-hook=': > "$1/etc/resolv.conf"')
  case $1 in
    runtime) printf '%s\n' --variant=minbase "${hooks[@]}" ;;
    # /etc/hwimg-test-builder lets a build step prove it runs inside this image, not on the host.
    builder) printf '%s\n' --variant=minbase --include=gcc,g++,make "${hooks[@]}" \
      --customize-hook='echo "hwimg test builder: Debian bookworm, gcc g++ make" > "$1/etc/hwimg-test-builder"' ;;
    *) die "unknown rootfs $1" ;;
  esac
}

# rootfs_tar NAME: the cached mmdebstrap tarball of NAME, made once; prints its path.
rootfs_tar() {
  local name=$1 spec key tar
  spec=$(rootfs_spec "$name")
  key=$(printf 'v%s %s %s\n%s\n' "$SPEC_VERSION" "$SUITE" "$EPOCH" "$spec" | sha256sum | cut -c1-16)
  tar=$cache/rootfs/$name-$SUITE-$key.tar
  if [ ! -s "$tar" ]; then
    command -v mmdebstrap >/dev/null || skip "mmdebstrap is not installed (scripts/setup installs it) and $tar is not cached"
    local mirror mode=()
    mirror=$(debian_mirror)
    if ! curl -sf --max-time 20 -o /dev/null "$mirror/dists/$SUITE/Release"; then
      skip "the Debian archive $mirror cannot be reached (no $mirror/dists/$SUITE/Release within 20 s) and $tar is not cached"
    fi
    if [ "$(id -u)" != 0 ]; then
      unshare --user --map-root-user true 2>/dev/null || skip "mmdebstrap needs root or user namespaces"
      mode=(--mode=unshare)
    fi
    echo "make_debian_images: mmdebstrap $SUITE ($name) from $mirror into $tar" >&2
    local args=()
    mapfile -t args <<<"$spec"
    local status=0
    SOURCE_DATE_EPOCH=$EPOCH timeout 900 mmdebstrap --quiet --format=tar "${mode[@]}" "${args[@]}" "$SUITE" "$tar.tmp.$$" "$mirror" \
      >"$cache/rootfs/$name.log" 2>&1 || status=$?
    if [ "$status" != 0 ]; then
      rm -f "$tar.tmp.$$"
      [ "$status" = 124 ] && skip "mmdebstrap did not finish within 900 s from $mirror (see $cache/rootfs/$name.log)"
      die "mmdebstrap failed ($status): $(tail -5 "$cache/rootfs/$name.log")"
    fi
    mv "$tar.tmp.$$" "$tar"
    prune "$cache/rootfs/$name-*.tar" "$tar"
  fi
  echo "$tar"
}

# random_file FILE MIB: MIB MiB of incompressible bytes, the same every time (AES-CTR of zeros).
random_file() {
  openssl enc -aes-128-ctr -nosalt -K 000102030405060708090a0b0c0d0e0f -iv 00000000000000000000000000000000 \
    -in /dev/zero 2>/dev/null | head -c $(($2 << 20)) >"$1" || true   # openssl ends on SIGPIPE
  [ "$(stat -c %s "$1")" = $(($2 << 20)) ] || die "could not write $2 MiB of random data"
}

hwimg_key=$(sha256sum <"$HWIMG" | cut -c1-12)

# prune PATTERN KEEP: removes what PATTERN matches except KEEP (older package lists, older hwimg).
prune() {
  local path
  for path in $1; do [ "$path" = "$2" ] || rm -rf "$path"; done
}

# layout NAME: the cached layout of NAME (tag bookworm), packed by this hwimg; prints its path.
layout() {
  local name=$1 key work dir recipe
  case $name in
    runtime | builder)
      local tar
      tar=$(rootfs_tar "$name")
      key=$(basename "$tar" .tar)-$hwimg_key
      ;;
    big:*)
      local mib=${name#big:}
      [[ $mib =~ ^[0-9]+$ ]] || die "big:MIB needs a number, got $name"
      local runtime
      runtime=$(layout runtime)
      key=big-$mib-$(basename "$runtime")
      ;;
    *) die "unknown image $name (runtime, builder, big:MIB)" ;;
  esac
  dir=$cache/layouts/$key
  if [ -f "$dir/index.json" ]; then echo "$dir"; return; fi
  work=$(mktemp -d "$cache/layouts/.work-${name%%:*}.XXXXXX")
  recipe=$work/recipe.yaml
  case $name in
    runtime | builder)
      # Only root keeps the rootfs's owners and modes; hwimg writes 0:0 whatever they are.
      mkdir "$work/rootfs"
      tar -xf "$tar" -C "$work/rootfs" --numeric-owner --exclude='./dev/*' ||
        die "could not unpack $tar"
      if find "$work/rootfs" \( -type b -o -type c -o -type p \) -print -quit | grep -q .; then
        die "device nodes in the $name rootfs"
      fi
      [ -x "$work/rootfs/bin/sh" ] || die "no /bin/sh in the $name rootfs"
      cat >"$recipe" <<EOF
name: debian-$name
base: scratch
layers:
  - {from: $work/rootfs, to: /}
config:
  cmd: [/bin/sh]
  env: {PATH: "/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin"}
  labels: {org.opencontainers.image.title: "debian-$name", org.opencontainers.image.version: "$SUITE"}
annotations:
  org.opencontainers.image.title: debian-$name
EOF
      ;;
    big:*)
      mkdir "$work/data"
      random_file "$work/data/random.bin" "$mib"
      cat >"$recipe" <<EOF
name: debian-big
base: oci:$runtime:$SUITE
layers:
  - {from: $work/data, to: /opt/big}
config:
  labels: {org.opencontainers.image.title: "debian-big-$mib"}
EOF
      ;;
  esac
  SOURCE_DATE_EPOCH=$EPOCH "$HWIMG" build "$recipe" -o "$work/layout" --tag "$SUITE" --compression-level 1 >/dev/null ||
    die "hwimg build of the $name image failed"
  rm -rf "$work/layout/.hwimg"
  # Another run may have made it meanwhile: both are the same bytes, keep the first.
  mv -T "$work/layout" "$dir" 2>/dev/null || true
  rm -rf "$work"
  [ -f "$dir/index.json" ] || die "could not store $dir"
  case $name in
    big:*) prune "$cache/layouts/big-$mib-*" "$dir" ;;
    *) prune "$cache/layouts/$name-*" "$dir" ;;
  esac
  echo "$dir"
}

exec 9>"$cache/.lock"
flock 9
rm -rf "$cache"/layouts/.work-* "$cache"/rootfs/*.tar.tmp.*   # left by a run that was killed
for name in "$@"; do layout "$name"; done
