#!/usr/bin/env bash
# An arm64 variant's instructions against its CPU target (issue 24 item 3, docs/recipe.md#cpu-code):
# a recipe of `cpu: [neoverse_n1, neoverse_v2]` whose step assembles and links an SVE program with
# Debian's binutils-aarch64-linux-gnu is refused for neoverse_n1 (no SVE), naming the program, its
# function, the instruction and "sve"; the neoverse_v2 variant builds.
source "$(dirname "$0")/lib.sh"
require_tool aarch64-linux-gnu-as
require_tool aarch64-linux-gnu-ld

app=$TEST_TMP/sve
mkdir -p "$app/src"
cat >"$app/src/sve.s" <<'ASM'
	.text
	.global _start
	.type _start, %function
_start:
	mov x0, #0
	mov x8, #93	// exit
	svc #0
	.size _start, .-_start

	.global double_ints
	.type double_ints, %function
double_ints:
	ptrue p0.s
	ld1w {z0.s}, p0/z, [x0]
	add z0.s, z0.s, z0.s
	st1w {z0.s}, p0, [x0]
	ret
	.size double_ints, .-double_ints
ASM
printf 'axes:\n  gpu: [none]\n  cpu: [neoverse_n1, neoverse_v2]\n' >"$app/matrix.yaml"
cat >"$app/recipe.yaml" <<'YAML'
name: sve
base: scratch
matrix: matrix.yaml
build:
  workdir: src
  run: 'mkdir -p "${out}/bin" && aarch64-linux-gnu-as -march=armv8.2-a+sve -o sve.o sve.s && aarch64-linux-gnu-ld -o "${out}/bin/sve" sve.o'
layers:
  - {from: "${out}/bin", to: /opt/sve/bin}
YAML

step "the neoverse_n1 variant holding SVE code is refused naming the program, function, instruction and sve"
set +e
err=$("$HWIMG" build "$app/recipe.yaml" -o "$TEST_TMP/out-n1" --tag 1 --only cpu-neoverse_n1 2>&1 >/dev/null)
status=$?
set -e
assert_eq 1 "$status" "exit status"
assert_contains "$err" "failed to check the CPU code of variant cpu-neoverse_n1: it is labelled neoverse_n1, but /opt/sve/bin/sve: function double_ints needs sve (SVE instruction 0x2598e3e0 at 0x" "the refusal"
! grep -q "function _start" <<<"$err" || fail "the plain function was named: $err"

step "the neoverse_v2 variant builds"
"$HWIMG" build "$app/recipe.yaml" -o "$TEST_TMP/out-v2" --tag 1 --only cpu-neoverse_v2 >/dev/null
jq -r '.manifests[].annotations["org.opencontainers.image.ref.name"]' "$TEST_TMP/out-v2/index.json" | grep -qx 1-cpu-neoverse_v2 ||
  fail "the v2 variant was not written: $(cat "$TEST_TMP/out-v2/index.json")"
echo "SVE in an arm64 variant without it is refused by function; a target with SVE builds"
