#!/usr/bin/env bash
# The README's first command, minus the package install and build: scripts/quickstart builds the
# stencil matrix, probes, selects and runs the selected and the portable variant, printing both
# times and the speedup. Checks the selection is this CPU's best level and both runs happened.
source "$(dirname "$0")/lib.sh"
require_tool umoci
require_tool jq
require_tool bc

# What to expect comes from the probe's own reading of this CPU (CPUID/XGETBV), not from a flag
# list written here: /proc/cpuinfo spells flags differently by kernel and vendor (avx512_vbmi2),
# and a hand-written list once expected x86-64-v4 where an AMD Zen 4 host rightly gets zen4. The
# probe itself is checked against recorded Intel and AMD CPUs in test_select_recorded_cpus.sh.
cpu=$("$HWIMG" probe --format json | jq -c .cpu)
expected=$(jq -r '.level // "x86-64-v1"' <<<"$cpu")
# The matrix names one microarchitecture, zen4, which a Zen 4 or Zen 5 host runs.
case $(jq -r '.microarch // ""' <<<"$cpu") in zen4 | zen5) expected=zen4 ;; esac

output=$(cd "$HWIMG_SOURCE_DIR" && QUICKSTART_OUT=$TEST_TMP/out STENCIL_ARGS="--size 512 --sweeps 32" \
  scripts/quickstart 2>&1) || { echo "$output"; fail "scripts/quickstart failed"; }
echo "$output"
if [ $expected = zen4 ]; then want=cpu-zen4; else want=cpu-$expected; fi
assert_contains "$output" "selected: oci:$TEST_TMP/out:1.0-$want" "selection"
assert_contains "$output" "stencil: built for ${expected/zen4/x86-64-v4} (variant $want)" "selected run"
assert_contains "$output" "stencil: built for x86-64-v1 (variant cpu-x86-64-v1)" "portable run"
grep -Eq "^selected $want: [0-9.]+ s; portable x86-64-v1: [0-9.]+ s; speedup [0-9.]+x$" <<<"$output" ||
  fail "no speedup line"
checksums=$(grep -o 'checksum [0-9.]*' <<<"$output" | sort -u | wc -l)
assert_eq 1 "$checksums" "both variants compute the same result"
echo PASS
