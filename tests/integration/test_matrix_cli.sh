#!/usr/bin/env bash
# `hwimg matrix`: the ready matrices expand as documented in every format, and bad input fails with
# exit 1 listing every error at file:line:column.
source "$(dirname "$0")/lib.sh"
require_tool jq
M=$HWIMG_SOURCE_DIR/matrix

step "matrix/cpu-levels.yaml: four levels and zen4, CPU-only"
table=$("$HWIMG" matrix "$M/cpu-levels.yaml")
assert_contains "$table" "cpu-x86-64-v1  linux/amd64 " "baseline has no platform variant"
assert_contains "$table" "cpu-zen4       linux/amd64/v4" "zen4 is a v4 platform"
json=$("$HWIMG" matrix --format json "$M/cpu-levels.yaml")
assert_eq "cpu-x86-64-v1 cpu-x86-64-v2 cpu-x86-64-v3 cpu-x86-64-v4 cpu-zen4" \
  "$(jq -r '[.variants[].id] | join(" ")' <<<"$json")" "ids"
assert_eq "null" "$(jq -c '.variants[0].platform.variant' <<<"$json")" "v1 platform variant"
assert_eq '{"architecture":"amd64","os":"linux","variant":"v3"}' "$(jq -c '.variants[2].platform' <<<"$json")" "v3 platform"
assert_eq "zen4" "$(jq -r '.variants[4].annotations["org.hwimg.cpu.target"]' <<<"$json")" "zen4 annotation"
assert_eq "null" "$(jq -c '.variants[0].cuda' <<<"$json")" "CPU-only has no CUDA"
assert_eq "[]" "$(jq -c '.errors' <<<"$json")" "no errors"

step "matrix/datacenter-gpus.yaml: exclude, include, ptx and the requirement"
json=$("$HWIMG" matrix --format json "$M/datacenter-gpus.yaml")
assert_eq 14 "$(jq '.variants | length' <<<"$json")" "variant count"
v=$(jq -c '.variants[] | select(.id == "cuda13.0-sm90a-x86-64-v4")' <<<"$json")
assert_eq '["compute_90","sm_90a"]' "$(jq -c .gpu <<<"$v")" "sm_90a with PTX"
assert_eq "cuda>=13.0,arch>=9.0 driver>=580,arch=9.0" "$(jq -r .nvidia_require_cuda <<<"$v")" "requirement"
assert_eq "-gencode arch=compute_90,code=compute_90 -gencode arch=compute_90a,code=sm_90a" \
  "$(jq -r '.variables["gpu.gencode"]' <<<"$v")" "gencode"
assert_eq 0 "$(jq '[.variants[] | select(.id | startswith("cuda12.8-sm100f"))] | length' <<<"$json")" "excluded"
assert_eq 1 "$(jq '[.variants[] | select(.id == "cpu-x86-64-v3")] | length' <<<"$json")" "CPU-only once"

step "github format is a strategy.matrix object"
github=$("$HWIMG" matrix --format github "$M/cuda-kernel.yaml")
assert_eq 1 "$(wc -l <<<"$github")" "one line"
assert_eq "cuda13.0-sm80-x86-64-v1,cuda13.0-sm90-x86-64-v1,cuda13.0-sm90a-x86-64-v1,cuda13.0-sm120-x86-64-v1" \
  "$(jq -r '[.include[].variant] | join(",")' <<<"$github")" "github variants"
assert_eq "sm_120,compute_120" "$(jq -r '.include[3].gpu' <<<"$github")" "github gpu"

step "bad input: every error, exit 1"
cat >"$TEST_TMP/bad.yaml" <<'YAML'
axes:
  cuda: ["12.4", "13.0"]
  gpu: [sm_8O, sm_100, sm_70]
  cpu: [haswel]
ptxx: true
YAML
expect_failure "$HWIMG" matrix "$TEST_TMP/bad.yaml"
assert_eq 1 "$STATUS" "exit status"
assert_eq "hwimg: error: $TEST_TMP/bad.yaml:3:9: unknown GPU target 'sm_8O' (did you mean sm_80?)
hwimg: error: $TEST_TMP/bad.yaml:4:9: unknown CPU target 'haswel' (did you mean haswell?)
hwimg: error: $TEST_TMP/bad.yaml:5:1: unknown key 'ptxx' (did you mean ptx?)" "$OUT" "errors"

# Spellings from PyTorch, CMake, NVIDIA's architecture names, GCC and Docker get what they mean.
cat >"$TEST_TMP/spellings.yaml" <<'YAML'
axes:
  cuda: ["12.8"]
  gpu: ["8.6+PTX", 90-real, hopper]
  cpu: [znver4, v3]
YAML
expect_failure "$HWIMG" matrix "$TEST_TMP/spellings.yaml"
assert_eq 1 "$STATUS" "exit status of other tools' spellings"
assert_eq "hwimg: error: $TEST_TMP/spellings.yaml:3:9: unknown GPU target '8.6+PTX' (did you mean [sm_86, compute_86]? GPU targets are nvcc's names: sm_XY for SASS, compute_XY for PTX)
hwimg: error: $TEST_TMP/spellings.yaml:3:20: unknown GPU target '90-real' (did you mean sm_90? GPU targets are nvcc's names: sm_XY for SASS, compute_XY for PTX)
hwimg: error: $TEST_TMP/spellings.yaml:3:29: unknown GPU target 'hopper' (Hopper is compute capability 9.0: did you mean sm_90?)
hwimg: error: $TEST_TMP/spellings.yaml:4:9: unknown CPU target 'znver4' (did you mean zen4? znver4 is its GCC -march name)
hwimg: error: $TEST_TMP/spellings.yaml:4:17: unknown CPU target 'v3' (did you mean x86-64-v3?)" "$OUT" "other tools' spellings"

cat >"$TEST_TMP/unsupported.yaml" <<'YAML'
axes:
  cuda: ["12.4", "13.0"]
  gpu: [sm_80, sm_100, sm_70]
YAML
expect_failure "$HWIMG" matrix "$TEST_TMP/unsupported.yaml"
assert_eq "hwimg: error: $TEST_TMP/unsupported.yaml:3:16: variant cuda12.4-sm100-x86-64-v1: sm_100 needs CUDA 12.8 or newer
hwimg: error: $TEST_TMP/unsupported.yaml:3:24: variant cuda13.0-sm70-x86-64-v1: CUDA 13.0 dropped sm_70; the last toolkit for it is CUDA 12.9" \
  "$OUT" "unsupported combinations"
json=$("$HWIMG" matrix --format json "$TEST_TMP/unsupported.yaml" 2>/dev/null || true)
assert_eq 2 "$(jq '.errors | length' <<<"$json")" "json lists the errors"

step "--skip-unsupported drops them with a warning"
out=$("$HWIMG" matrix --skip-unsupported "$TEST_TMP/unsupported.yaml" 2>"$TEST_TMP/warnings")
assert_contains "$(cat "$TEST_TMP/warnings")" "hwimg: warning: $TEST_TMP/unsupported.yaml:3:16: skipped variant cuda12.4-sm100-x86-64-v1: sm_100 needs CUDA 12.8 or newer" "warning"
assert_eq 4 "$(($(wc -l <<<"$out") - 1))" "remaining variants"

step "usage errors"
expect_failure "$HWIMG" matrix --format yaml "$M/cpu-levels.yaml"
assert_eq 2 "$STATUS" "bad format is a usage error"
expect_failure "$HWIMG" matrix "$TEST_TMP/missing.yaml"
assert_eq "hwimg: error: failed to load matrix $TEST_TMP/missing.yaml: failed to open $TEST_TMP/missing.yaml: No such file or directory" "$OUT" "missing file"
echo "PASS"
