#!/usr/bin/env bash
# The README's first command, minus the package install and build: scripts/quickstart builds the
# stencil matrix, probes, selects and runs the selected and the portable variant, printing both
# times and the speedup. Checks the selection is this CPU's best level and both runs happened.
source "$(dirname "$0")/lib.sh"
require_tool umoci
require_tool jq
require_tool bc

flags=" $(grep -m1 '^flags' /proc/cpuinfo | cut -d: -f2) "
has() { for f in "$@"; do [[ "$flags" == *" $f "* ]] || return 1; done; }
expected=x86-64-v1
has sse4_2 popcnt ssse3 cx16 && expected=x86-64-v2
has avx avx2 bmi1 bmi2 fma movbe f16c && [ $expected = x86-64-v2 ] && expected=x86-64-v3
has avx512f avx512bw avx512cd avx512dq avx512vl && [ $expected = x86-64-v3 ] && expected=x86-64-v4

output=$(cd "$HWIMG_SOURCE_DIR" && QUICKSTART_OUT=$TEST_TMP/out STENCIL_ARGS="--size 512 --sweeps 32" \
  scripts/quickstart 2>&1) || { echo "$output"; fail "scripts/quickstart failed"; }
echo "$output"
# zen4 is chosen over x86-64-v4 only on an AMD Zen 4 host (the kernel spells the flag avx512_vbmi2).
if grep -q "AuthenticAMD" /proc/cpuinfo && has avx512_bf16 avx512_vbmi2; then expected=zen4; fi
if [ $expected = zen4 ]; then want=cpu-zen4; else want=cpu-$expected; fi
assert_contains "$output" "selected: oci:$TEST_TMP/out:1.0-$want" "selection"
assert_contains "$output" "stencil: built for ${expected/zen4/x86-64-v4} (variant $want)" "selected run"
assert_contains "$output" "stencil: built for x86-64-v1 (variant cpu-x86-64-v1)" "portable run"
grep -Eq "^selected $want: [0-9.]+ s; portable x86-64-v1: [0-9.]+ s; speedup [0-9.]+x$" <<<"$output" ||
  fail "no speedup line"
checksums=$(grep -o 'checksum [0-9.]*' <<<"$output" | sort -u | wc -l)
assert_eq 1 "$checksums" "both variants compute the same result"
echo PASS
