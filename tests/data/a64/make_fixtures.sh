#!/usr/bin/env bash
# Rebuilds the A64 scan's fixtures from sve.s with Debian's binutils-aarch64-linux-gnu, so the unit
# tests need no cross tools: sve.so keeps its symbol table (functions and $x/$d mapping symbols),
# sve-stripped.so only .dynsym, as a distribution's libraries ship.
set -euo pipefail
cd "$(dirname "$0")"
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
aarch64-linux-gnu-as -march=armv8.2-a+sve -o "$tmp/sve.o" sve.s
aarch64-linux-gnu-ld -shared --hash-style=gnu --build-id=none -z max-page-size=16 -z common-page-size=16 -o sve.so "$tmp/sve.o"
aarch64-linux-gnu-strip --strip-all -o sve-stripped.so sve.so
