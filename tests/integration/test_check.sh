#!/usr/bin/env bash
# hwimg check (issue 14 §4): exit 0 when that exact image runs here, 3 with the reasons when not,
# for single manifests and indexes, from a layout and from a TLS + htpasswd registry; a node with an
# A100 beside an H100 names the failing GPU in --explain and in JSON; the HWIMG_OVERRIDE_* variables
# are applied, shown, and refused with a usage error when misspelt.
source "$(dirname "$0")/lib.sh"
require_tool jq
require_tool python3

data=$HWIMG_SOURCE_DIR/tests/data/select
mixed=$data/host-mixed-580.json
a100_reason="GPU 0 (NVIDIA A100-SXM4-80GB): no code for compute capability 8.0 (has sm_90a)"

gpu=$TEST_TMP/gpu
make_layout "$gpu" 1.0 "$data/gpu-variants.json" > /dev/null
make_layout "$TEST_TMP/cuda" 12.6 "$data/nvidia-cuda-images.json" > /dev/null
hopper="oci:$gpu:1.0-cuda13.0-sm90a-x86-64-v3"

step "a single manifest from a layout: 0 where it runs, 3 with the reasons where it does not"
run_hwimg check --host "$data/host-h100-580.json" "$hopper"
assert_eq 0 "$STATUS" "sm_90a on an H100: $ERR"
assert_eq "$hopper runs on the host in $data/host-h100-580.json: arch-specific SASS sm_90a, CUDA 13.0 native, x86-64-v3" "$OUT" "verdict line"
run_hwimg check --host "$mixed" "$hopper"
assert_eq 3 "$STATUS" "sm_90a on an A100 + H100 node"
assert_eq "" "$OUT" "nothing on stdout"
assert_contains "$ERR" "hwimg: $hopper does not run on the host in $mixed" "headline"
assert_contains "$ERR" "$a100_reason" "the A100 is named"
assert_eq 1 "$(grep -c 'rejected' <<<"$ERR")" "one variant judged, not the index"
run_hwimg check --host "$mixed" --gpus 1 "$hopper"
assert_eq 0 "$STATUS" "the H100 alone (--gpus 1)"

step "an index runs here when select finds a variant, and check says which"
run_hwimg check --host "$mixed" --explain "oci:$gpu:1.0"
assert_eq 0 "$STATUS" "index on the mixed node: $ERR"
assert_contains "$OUT" "oci:$gpu:1.0 runs on the host in $mixed as variant cuda12.8-sm80-sm90-x86-64-v3 (oci:$gpu:1.0-cuda12.8-sm80-sm90-x86-64-v3)" "variant named"
assert_contains "$ERR" "$a100_reason" "--explain names the A100"
run_hwimg check --host "$data/host-no-gpu.json" "oci:$gpu:1.0"
assert_eq 3 "$STATUS" "GPU-only index, no GPU"
assert_eq 4 "$(grep -c 'needs an NVIDIA GPU; host has no NVIDIA driver' <<<"$ERR")" "a reason per variant"

step "an image made by others: its NVIDIA_REQUIRE_CUDA, which CDI mode no longer checks"
jq '.nvidia.driver_version = "545.23.08" | .nvidia.cuda_driver_version = "12.3"' "$data/host-h100-535.json" > "$TEST_TMP/545.json"
run_hwimg check --host "$data/host-h100-535.json" "oci:$TEST_TMP/cuda:12.6-amd64"
assert_eq 0 "$STATUS" "brand=nvidia,driver>=535 admits R535: $ERR"
run_hwimg check --host "$TEST_TMP/545.json" "oci:$TEST_TMP/cuda:12.6-amd64"
assert_eq 3 "$STATUS" "R545 fails cuda>=12.6"
assert_contains "$ERR" "NVIDIA_REQUIRE_CUDA: unsatisfied condition: cuda>=12.6" "reason"

step "mixed GPUs: select --explain and --format json name the GPU that fails"
run_hwimg select --host "$mixed" --explain "oci:$gpu:1.0"
assert_eq "oci:$gpu:1.0-cuda12.8-sm80-sm90-x86-64-v3" "$OUT" "sm_80 + sm_90 serve both GPUs"
assert_contains "$ERR" "cuda13.0-sm90a-x86-64-v3" "explain lists the rejected variant"
assert_contains "$ERR" "$a100_reason" "explain names the A100"
run_hwimg select --host "$mixed" --format json "oci:$gpu:1.0"
sm90a=$(jq -c '.candidates[] | select(.variant == "cuda13.0-sm90a-x86-64-v3")' <<<"$OUT")
assert_eq "[\"$a100_reason\"]" "$(jq -c .reasons <<<"$sm90a")" "reasons"
assert_eq '{"index":0,"uuid":"GPU-22222222-0000-0000-0000-000000000000","name":"NVIDIA A100-SXM4-80GB","compute_capability":"8.0"}' \
  "$(jq -c '.gpu_failures[0].gpu' <<<"$sm90a")" "gpu_failures names the A100"
assert_eq "$a100_reason" "$(jq -r '.gpu_failures[0].reason' <<<"$sm90a")" "its reason"
assert_eq 1 "$(jq '.gpu_failures | length' <<<"$sm90a")" "only the A100 failed"
sm100f=$(jq -c '.candidates[] | select(.variant == "cuda13.0-sm100f-x86-64-v1")' <<<"$OUT")
assert_eq "0 1" "$(jq -r '[.gpu_failures[].gpu.index] | map(tostring) | join(" ")' <<<"$sm100f")" "sm_100f fails both"
assert_eq '[]' "$(jq -c '.candidates[] | select(.variant == "cuda12.8-sm80-sm90-x86-64-v3") | .gpu_failures' <<<"$OUT")" "none for the chosen"

step "overrides: applied by the probe, shown in probe and --explain, refused when misspelt"
if [ "$(uname -m)" = x86_64 ]; then
  export HWIMG_OVERRIDE_CUDA=13.0 HWIMG_OVERRIDE_COMPUTE_CAPABILITY=8.0,9.0 HWIMG_OVERRIDE_CPU_LEVEL=x86-64-v3
  run_hwimg probe --format text
  assert_eq 0 "$STATUS" "probe with overrides: $ERR"
  assert_contains "$OUT" "Level:     x86-64-v3" "level"
  assert_contains "$OUT" 'Overrides: HWIMG_OVERRIDE_CUDA="13.0" HWIMG_OVERRIDE_COMPUTE_CAPABILITY="8.0,9.0" HWIMG_OVERRIDE_CPU_LEVEL="x86-64-v3"' "probe text"
  assert_contains "$OUT" "compute capability 9.0" "second GPU"
  run_hwimg select --explain "oci:$gpu:1.0"
  assert_eq "oci:$gpu:1.0-cuda12.8-sm80-sm90-x86-64-v3" "$OUT" "select on the overridden host: $ERR"
  assert_contains "$ERR" 'overrides: HWIMG_OVERRIDE_CUDA="13.0", HWIMG_OVERRIDE_COMPUTE_CAPABILITY="8.0,9.0", HWIMG_OVERRIDE_CPU_LEVEL="x86-64-v3"' "explain host line"
  assert_contains "$ERR" "GPU 0" "the first GPU named"
  assert_contains "$ERR" "no code for compute capability 8.0 (has sm_90a)" "sm_90a on the 8.0 GPU"
  HWIMG_OVERRIDE_COMPUTE_CAPABILITY=9.0 run_hwimg check "$hopper"
  assert_eq 0 "$STATUS" "one 9.0 GPU runs sm_90a: $ERR"
  HWIMG_OVERRIDE_COMPUTE_CAPABILITY=9.0 HWIMG_OVERRIDE_CPU_LEVEL=x86-64-v2 run_hwimg check "$hopper"
  assert_eq 3 "$STATUS" "an x86-64-v2 CPU does not run x86-64-v3 code"
  assert_contains "$ERR" "needs AVX2" "level reason"
  assert_contains "$ERR" 'HWIMG_OVERRIDE_CPU_LEVEL="x86-64-v2"' "override on the host line"
  HWIMG_OVERRIDE_COMPUTE_CAPABILITY= run_hwimg check "$hopper"
  assert_eq 3 "$STATUS" "empty: no GPU"
  assert_contains "$ERR" "needs a GPU; host has none" "no GPU reason"
  unset HWIMG_OVERRIDE_CUDA HWIMG_OVERRIDE_COMPUTE_CAPABILITY HWIMG_OVERRIDE_CPU_LEVEL
else
  echo "overrides part skipped: it overrides with an amd64 level"
fi
HWIMG_OVERRIDE_CPU_LEVEL=zen4 run_hwimg probe
assert_eq 2 "$STATUS" "a microarchitecture is a usage error"
assert_contains "$ERR" 'hwimg: error: failed to read HWIMG_OVERRIDE_CPU_LEVEL: "zen4" is a microarchitecture, not a level (did you mean x86-64-v4?)' "level message"
HWIMG_OVERRIDE_COMPUTE_CAPABILITY=sm_90 run_hwimg check --explain "$hopper"
assert_eq 2 "$STATUS" "sm_90 is a usage error"
assert_contains "$ERR" 'failed to read HWIMG_OVERRIDE_COMPUTE_CAPABILITY: expected compute capabilities such as "9.0" or "8.0,9.0" (one per GPU), or nothing for no GPU, got "sm_90" (did you mean "9.0"?)' "capability message"
HWIMG_OVERRIDE_CUDA= HWIMG_OVERRIDE_COMPUTE_CAPABILITY=9.0 run_hwimg probe
assert_eq 2 "$STATUS" "GPUs without CUDA"
assert_contains "$ERR" "HWIMG_OVERRIDE_CUDA is empty" "conflict message"

step "usage errors and missing images"
run_hwimg check --host "$mixed" --gpus 7 "$hopper"
assert_eq 2 "$STATUS" "unknown GPU"
run_hwimg check --host "$mixed" "oci:$gpu:2.0"
assert_eq 1 "$STATUS" "unknown tag"
assert_contains "$ERR" "hwimg: error:" "error line"

step "from a registry (TLS, password): the same verdicts, by tag and by digest"
source "$(dirname "$0")/registry_lib.sh"
use_registry check
export DOCKER_CONFIG="$TEST_TMP/docker"
tls=(--ca-file "$dir/cert.pem")
hw_ok login "$reg" --username hwimg --password-stdin "${tls[@]}" < "$dir/password"
hw_ok push "${tls[@]}" "oci:$gpu:1.0" "$reg/demo/gpu:1.0"
hw_ok push "${tls[@]}" "oci:$TEST_TMP/cuda:12.6" "$reg/demo/cuda:12.6"
run_hwimg check "${tls[@]}" --host "$data/host-h100-580.json" "$reg/demo/gpu:1.0-cuda13.0-sm90a-x86-64-v3"
assert_eq 0 "$STATUS" "registry manifest on an H100: $ERR"
assert_contains "$OUT" "$reg/demo/gpu:1.0-cuda13.0-sm90a-x86-64-v3 runs on the host in $data/host-h100-580.json: arch-specific SASS sm_90a" "verdict line"
digest=$(jq -r '.manifests[] | select(.annotations["org.opencontainers.image.ref.name"] == "1.0-cuda13.0-sm90a-x86-64-v3") | .digest' "$gpu/index.json")
run_hwimg check "${tls[@]}" --host "$mixed" "$reg/demo/gpu@$digest"
assert_eq 3 "$STATUS" "by digest on the mixed node"
assert_contains "$ERR" "$a100_reason" "registry: the A100 is named"
run_hwimg check "${tls[@]}" --host "$mixed" --format json "$reg/demo/gpu@$digest"
assert_eq 3 "$STATUS" "json exit status"
assert_eq "null 0" "$(jq -r '[.reference, .candidates[0].gpu_failures[0].gpu.index] | map(tostring) | join(" ")' <<<"$OUT")" "json"
run_hwimg check "${tls[@]}" --host "$mixed" "$reg/demo/gpu:1.0"
assert_eq 0 "$STATUS" "registry index on the mixed node: $ERR"
want=$(jq -r '.manifests[] | select(.annotations["org.opencontainers.image.ref.name"] == "1.0-cuda12.8-sm80-sm90-x86-64-v3") | .digest' "$gpu/index.json")
assert_contains "$OUT" "as variant cuda12.8-sm80-sm90-x86-64-v3 ($reg/demo/gpu@$want)" "pinned variant"
run_hwimg check "${tls[@]}" --host "$TEST_TMP/545.json" "$reg/demo/cuda:12.6-amd64"
assert_eq 3 "$STATUS" "registry: NVIDIA image on R545"
assert_contains "$ERR" "NVIDIA_REQUIRE_CUDA: unsatisfied condition: cuda>=12.6" "registry reason"
printf '%s\n%s\n' "$OUT" "$ERR" >> "$ALL_OUTPUT"
assert_no_secret "$(cat "$dir/password")"
echo "PASS"
