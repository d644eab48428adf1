#!/usr/bin/env bash
# Selection on every recorded CPU (tests/data/probe/cpuid, Intel and AMD), whatever this machine is:
# HWIMG_CPUID_FILE makes the probe decode a recorded CPU's CPUID values instead of this one's, so a
# mistake that only shows on AMD (or only on Intel) fails here on any host. Each recorded CPU has
# its expected variant below; a new recording without one fails until it is added.
source "$(dirname "$0")/lib.sh"
require_tool jq

declare -A expected=(
  [broadwell-windows]=cpu-x86-64-v3
  [cascadelake-8260m]=cpu-x86-64-v4
  [dev-vm-turin-oxide]=cpu-x86-64-v4               # a Zen 5 VM hiding pku, rdseed, FSGSBASE: not zen4
  [dev-vm-xeon-model207]=cpu-x86-64-v4
  [h100-host-xeon-model207-amx]=cpu-x86-64-v4
  [haswell-e5-2680v3]=cpu-x86-64-v3
  [icelake-i7-1185g7-windows]=cpu-x86-64-v4
  [sapphirerapids-8480]=cpu-x86-64-v4
  [skylake-sp-gold6132-avx512-off]=cpu-x86-64-v3   # AVX-512 disabled by the OS (XCR0): not v4
  [skylake-sp-gold6132]=cpu-x86-64-v4
  [zen2-epyc7742]=cpu-x86-64-v3
  [zen3-ryzen5950x]=cpu-x86-64-v3
  [zen4-epyc9654]=cpu-zen4
  [zen5-ryzen9950x]=cpu-zen4                       # Zen 5 has every feature -march=znver4 uses
)

step "the CPU-level matrix (x86-64-v1...v4, zen4) as a layout"
"$HWIMG" build "$HWIMG_SOURCE_DIR/tests/data/recipes/hello/data-only.yaml" \
  --matrix "$HWIMG_SOURCE_DIR/matrix/cpu-levels.yaml" -o "$TEST_TMP/out" --tag 1.0 >/dev/null

step "each recorded CPU gets its variant, and the probe says it read the recording"
count=0
for file in "$HWIMG_SOURCE_DIR"/tests/data/probe/cpuid/*.txt; do
  name=$(basename "$file" .txt)
  want=${expected[$name]:-}
  [ -n "$want" ] || fail "tests/data/probe/cpuid/$name.txt has no expected variant in $0"
  got=$(HWIMG_CPUID_FILE=$file "$HWIMG" select "oci:$TEST_TMP/out:1.0")
  assert_eq "oci:$TEST_TMP/out:1.0-$want" "$got" "the variant for $name"
  overrides=$(HWIMG_CPUID_FILE=$file "$HWIMG" probe --format text | grep '^Overrides:')
  assert_eq "Overrides: HWIMG_CPUID_FILE=\"$file\"" "$overrides" "the probe's overrides for $name"
  count=$((count + 1))
done
[ "$count" -ge 14 ] || fail "only $count recorded CPUs"
vendors=$(for file in "$HWIMG_SOURCE_DIR"/tests/data/probe/cpuid/*.txt; do
  HWIMG_CPUID_FILE=$file "$HWIMG" probe --format json | jq -r .cpu.vendor; done | sort -u | paste -sd' ')
assert_eq "AMD Intel" "$vendors" "recordings of both vendors"

step "--explain names the recording on its host line; a recording that does not read is a usage error"
explained=$(HWIMG_CPUID_FILE="$HWIMG_SOURCE_DIR/tests/data/probe/cpuid/zen2-epyc7742.txt" \
  "$HWIMG" select --explain "oci:$TEST_TMP/out:1.0" 2>&1)
assert_contains "$explained" "host: linux/amd64 zen2 (AMD); no NVIDIA driver; overrides: HWIMG_CPUID_FILE=" "explain"
printf '00000001.0 not-hex\n' >"$TEST_TMP/broken.txt"
HWIMG_CPUID_FILE="$TEST_TMP/broken.txt" expect_failure "$HWIMG" probe
assert_eq 2 "$STATUS" "exit status of an unreadable recording"
assert_contains "$OUT" "failed to read HWIMG_CPUID_FILE: " "the error names the variable"
HWIMG_CPUID_FILE="$TEST_TMP/missing.txt" expect_failure "$HWIMG" select "oci:$TEST_TMP/out:1.0"
assert_contains "$OUT" "failed to read HWIMG_CPUID_FILE: failed to open $TEST_TMP/missing.txt" "a missing recording"
echo PASS
