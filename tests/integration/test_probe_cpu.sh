#!/bin/bash
# hwimg probe on this machine: its CPU facts agree with the kernel's /proc/cpuinfo.
source "$(dirname "$0")/lib.sh"
require_tool jq
[ "$(uname -m)" = x86_64 ] || skip "CPUID probing is tested on x86_64 hosts"

JSON=$(HWIMG_OVERRIDE_CUDA= "$HWIMG" probe --format json)
FLAGS=" $(grep -m1 '^flags' /proc/cpuinfo | cut -d: -f2) "

step "every reported feature is a /proc/cpuinfo flag"
for feature in $(jq -r '.cpu.features[]' <<<"$JSON"); do
  [[ "$FLAGS" == *" $feature "* ]] || fail "hwimg reports $feature, /proc/cpuinfo does not"
done

step "the level's features are all present"
LEVEL=$(jq -r .cpu.level <<<"$JSON")
case $LEVEL in
  x86-64-v4) NEED="avx512f avx512bw avx512cd avx512dq avx512vl avx2 bmi2 fma" ;;
  x86-64-v3) NEED="avx2 bmi1 bmi2 fma f16c movbe abm" ;;
  x86-64-v2) NEED="sse4_2 popcnt cx16 ssse3" ;;
  x86-64-v1) NEED="sse2" ;;
  *) fail "unexpected level $LEVEL" ;;
esac
for feature in $NEED; do
  [[ "$FLAGS" == *" $feature "* ]] || fail "level $LEVEL but /proc/cpuinfo lacks $feature"
done

step "vendor, family and model match /proc/cpuinfo"
VENDOR=$(grep -m1 '^vendor_id' /proc/cpuinfo | awk '{print $3}')
case $VENDOR in GenuineIntel) VENDOR=Intel ;; AuthenticAMD) VENDOR=AMD ;; esac
assert_eq "$VENDOR" "$(jq -r .cpu.vendor <<<"$JSON")" "vendor"
assert_eq "$(grep -m1 '^cpu family' /proc/cpuinfo | awk '{print $4}')" "$(jq -r .cpu.family <<<"$JSON")" "family"
assert_eq "$(grep -m1 '^model[[:space:]]' /proc/cpuinfo | awk '{print $3}')" "$(jq -r .cpu.model <<<"$JSON")" "model"

step "the JSON reads back through select's facts parser shape"
assert_eq 1 "$(jq .schema <<<"$JSON")" "schema"
assert_eq amd64 "$(jq -r .cpu.arch <<<"$JSON")" "arch"

step "without --format: JSON into a pipe or a file, the text summary on a terminal"
assert_eq 1 "$(HWIMG_OVERRIDE_CUDA= "$HWIMG" probe | jq .schema)" "schema of the piped facts"
HWIMG_OVERRIDE_CUDA= "$HWIMG" probe -o "$TEST_TMP/facts.json"
assert_eq 1 "$(jq .schema "$TEST_TMP/facts.json")" "schema of the -o file"
# script(1) gives the probe a pseudo-terminal for standard output.
on_terminal=$(HWIMG_OVERRIDE_CUDA= script -qec "$HWIMG probe" /dev/null | tr -d '\r')
assert_contains "$on_terminal" "Level:     $LEVEL" "the text summary on a terminal"
! grep -q '"schema"' <<<"$on_terminal" || fail "JSON on a terminal: $on_terminal"
echo "PASS"
