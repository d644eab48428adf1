#!/bin/bash
# hwimg probe on this machine: its CPU facts agree with the kernel's /proc/cpuinfo.
source "$(dirname "$0")/lib.sh"
require_tool jq
[ "$(uname -m)" = x86_64 ] || skip "CPUID probing is tested on x86_64 hosts"

JSON=$(HWIMG_OVERRIDE_CUDA= "$HWIMG" probe --format json)
FLAGS=" $(grep -m1 '^flags' /proc/cpuinfo | cut -d: -f2) "

# Some VMs give user space CPUID bits their kernel does not list (seen: abm and sse4a in a
# Firecracker-style AMD guest). hwimg follows CPUID, as glibc does; such a feature passes only where
# its instruction runs, tried by a small program (LZCNT is REP BSR on CPUs without it: the result tells).
runs_here() {
  [ -x "$TEST_TMP/try" ] || cat >"$TEST_TMP/try.c" <<'C'
#include <string.h>
int main(int argc, char** argv) {
  if (argc != 2) return 2;
  if (!strcmp(argv[1], "abm")) { unsigned long out, one = 1; __asm__ volatile("lzcnt %1, %0" : "=r"(out) : "r"(one)); return out == 63 ? 0 : 1; }
  if (!strcmp(argv[1], "sse4a")) { __asm__ volatile("extrq $4, $0, %%xmm0" ::: "xmm0"); return 0; }
  return 3;
}
C
  [ -x "$TEST_TMP/try" ] || cc -O0 -o "$TEST_TMP/try" "$TEST_TMP/try.c" || fail "cannot compile the instruction check"
  local status=0
  "$TEST_TMP/try" "$1" 2>/dev/null || status=$?
  [ "$status" != 3 ] || fail "hwimg reports $1, /proc/cpuinfo does not, and this test has no instruction to try for it"
  return "$status"
}

step "every reported feature is a /proc/cpuinfo flag, or its instruction runs here"
for feature in $(jq -r '.cpu.features[]' <<<"$JSON"); do
  [[ "$FLAGS" == *" $feature "* ]] && continue
  runs_here "$feature" || fail "hwimg reports $feature, /proc/cpuinfo does not, and its instruction does not run"
  echo "  $feature: not in /proc/cpuinfo, its instruction runs"
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
  [[ "$FLAGS" == *" $feature "* ]] || runs_here "$feature" || fail "level $LEVEL but /proc/cpuinfo lacks $feature and it does not run"
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
