#!/usr/bin/env bash
# hwimg select on local layouts (issue 6): the stencil example picks the highest level this CPU has,
# with a facts file and with the live probe; the chosen variant runs under runc; GPU fixtures pick
# by compute capability and CUDA driver; a GPU-only index on a host without GPU exits 3 with reasons.
source "$(dirname "$0")/lib.sh"
require_tool jq
require_tool python3

data=$HWIMG_SOURCE_DIR/tests/data/select
# sel ARGS...: runs hwimg select; stdout in $OUT, stderr in $ERR, status in $STATUS.
sel() {
  set +e
  OUT=$("$HWIMG" select "$@" 2>"$TEST_TMP/stderr")
  STATUS=$?
  set -e
  ERR=$(cat "$TEST_TMP/stderr")
}

export SOURCE_DATE_EPOCH=1700000000
stencil=$TEST_TMP/stencil
step "build the stencil example"
"$HWIMG" build "$HWIMG_SOURCE_DIR/recipes/stencil.yaml" -o "$stencil" --tag 1.0 -j 2 > "$TEST_TMP/build.log"

step "the chosen variant is the highest level this CPU has"
level=$(host_levels | tail -1)
"$HWIMG" probe > "$TEST_TMP/host.json"
sel --host "$TEST_TMP/host.json" "oci:$stencil:1.0"
assert_eq 0 "$STATUS" "select with a facts file: $ERR"
chosen=${OUT#oci:$stencil:1.0-}
if [ "$chosen" = cpu-zen4 ]; then
  # Only a Zen 4 (AMD, v4) ranks the named target above the plain level.
  assert_eq "x86-64-v4 AMD" "$level $(jq -r .cpu.vendor "$TEST_TMP/host.json")" "zen4 chosen on this host"
else
  assert_eq "oci:$stencil:1.0-cpu-$level" "$OUT" "chosen variant for a $level CPU"
fi
echo "chosen: $chosen (CPU level $level)"

sel "oci:$stencil:1.0"
assert_eq 0 "$STATUS" "select with the live probe: $ERR"
assert_eq "oci:$stencil:1.0-$chosen" "$OUT" "live probe agrees with the facts file"
chosen_ref=$OUT

step "--format json names the layout's manifest digest; --explain ranks every variant on stderr"
sel --host "$TEST_TMP/host.json" --format json --explain "oci:$stencil:1.0"
assert_eq 0 "$STATUS" "json"
want=$(jq -r --arg t "1.0-$chosen" '.manifests[] | select(.annotations["org.opencontainers.image.ref.name"] == $t) | .digest' "$stencil/index.json")
assert_eq "$want" "$(jq -r .digest <<<"$OUT")" "digest in json"
assert_eq "$chosen" "$(jq -r .variant <<<"$OUT")" "variant in json"
assert_eq 5 "$(jq '.candidates | length' <<<"$OUT")" "candidates in json"
assert_eq 1 "$(jq '[.candidates[] | select(.rank == 1)] | length' <<<"$OUT")" "one rank 1"
assert_contains "$ERR" "chosen" "explain table"
assert_contains "$ERR" "cpu-x86-64-v1" "explain lists every variant"
if [ "$(jq -r .cpu.vendor "$TEST_TMP/host.json")" != AMD ]; then
  assert_contains "$ERR" "zen4 needs an AMD CPU; host CPU is $(jq -r .cpu.vendor "$TEST_TMP/host.json")" "vendor reason"
fi

step "GPU variants are chosen by compute capability and CUDA driver"
make_layout "$TEST_TMP/gpu" 1.0 "$data/gpu-variants.json" > /dev/null
sel --host "$data/host-h100-580.json" "oci:$TEST_TMP/gpu:1.0"
assert_eq "oci:$TEST_TMP/gpu:1.0-cuda13.0-sm90a-x86-64-v3" "$OUT" "H100 on R580"
sel --host "$data/host-h100-535.json" "oci:$TEST_TMP/gpu:1.0"
assert_eq "oci:$TEST_TMP/gpu:1.0-cuda12.8-sm80-sm90-x86-64-v3" "$OUT" "H100 + A100 on R535 (minor-version compatible SASS)"
sel --host "$data/host-h100-535.json" --gpus 0 --format json "oci:$TEST_TMP/gpu:1.0"
assert_eq "cuda12.8-sm80-sm90-x86-64-v3" "$(jq -r .variant <<<"$OUT")" "--gpus 0"
assert_eq '["needs a driver for CUDA 13.0; host driver 535.104.05 supports CUDA 12.2"]' \
  "$(jq -c '.candidates[0].reasons' <<<"$OUT")" "sm_90a on R535"
sel --host "$data/host-h100-535.json" --gpus 7 "oci:$TEST_TMP/gpu:1.0"
assert_eq 2 "$STATUS" "unknown GPU is a usage error"
assert_contains "$ERR" "--gpus names GPU 7, but this host has 0: NVIDIA H100 80GB HBM3" "unknown GPU message"
NVIDIA_VISIBLE_DEVICES=void sel --host "$data/host-h100-580.json" "oci:$TEST_TMP/gpu:1.0"
assert_eq 3 "$STATUS" "NVIDIA_VISIBLE_DEVICES=void gives the container no GPU"
assert_contains "$ERR" "needs a GPU; the container gets none (NVIDIA_VISIBLE_DEVICES none)" "void reason"

step "--explain says what the ranks mean and why each compatible variant ranks below the chosen one"
ranking="ranking: rank 1 is chosen; the other variants that run here follow, ordered by GPU use, then GPU code quality, native CUDA, a bundled driver, CPU level, a named CPU target, CPU features used, newer CUDA, index order (docs/selection.md#ranking)"
sel --host "$data/host-h100-580.json" --explain "oci:$TEST_TMP/gpu:1.0"
assert_eq "host: linux/amd64 x86-64-v4 (AMD); NVIDIA driver 580.65.06, CUDA 13.0; GPUs considered (default): 0 NVIDIA H100 80GB HBM3 (9.0)
image: oci:$TEST_TMP/gpu:1.0 (4 variants)
$ranking
VARIANT                       PLATFORM        RESULT    WHY
cuda13.0-sm90a-x86-64-v3      linux/amd64/v3  chosen    arch-specific SASS sm_90a, CUDA 13.0 native, x86-64-v3
cuda12.8-sm80-sm90-x86-64-v3  linux/amd64/v3  rank 2    SASS sm_80, sm_90, CUDA 12.8 native, x86-64-v3
                                                        ranks below cuda13.0-sm90a-x86-64-v3: its GPU code is sm_90 (SASS) on 9.0, where cuda13.0-sm90a-x86-64-v3 has sm_90a (arch-specific SASS) on 9.0
cuda12.8-ptx80-x86-64-v1      linux/amd64     rank 3    PTX JIT compute_80, CUDA 12.8 native, x86-64-v1
                                                        ranks below cuda13.0-sm90a-x86-64-v3: its GPU code is compute_80 (PTX JIT) on 9.0, where cuda13.0-sm90a-x86-64-v3 has sm_90a (arch-specific SASS) on 9.0
cuda13.0-sm100f-x86-64-v1     linux/amd64     rejected  GPU 0 (NVIDIA H100 80GB HBM3): no code for compute capability 9.0 (has sm_100f)" \
  "$ERR" "GPU variants ranked by their code for the H100"
sel --host "$data/host-h100-580.json" --explain "oci:$stencil:1.0"
assert_eq "$ranking
VARIANT        PLATFORM        RESULT    WHY
cpu-x86-64-v1  linux/amd64     rank 4    x86-64-v1
                                         ranks below cpu-x86-64-v4: x86-64-v1 is a lower CPU level than cpu-x86-64-v4's x86-64-v4
cpu-x86-64-v2  linux/amd64/v2  rank 3    x86-64-v2
                                         ranks below cpu-x86-64-v4: x86-64-v2 is a lower CPU level than cpu-x86-64-v4's x86-64-v4
cpu-x86-64-v3  linux/amd64/v3  rank 2    x86-64-v3
                                         ranks below cpu-x86-64-v4: x86-64-v3 is a lower CPU level than cpu-x86-64-v4's x86-64-v4
cpu-x86-64-v4  linux/amd64/v4  chosen    x86-64-v4" "$(sed -n '3,11p' <<<"$ERR")" "CPU variants ranked by level"
if [ "$chosen" = cpu-zen4 ]; then
  sel --explain "oci:$stencil:1.0"
  assert_contains "$ERR" "
cpu-x86-64-v4  linux/amd64/v4  rank 2    x86-64-v4
                                         ranks below cpu-zen4: x86-64-v4 is a generic level, where cpu-zen4 is built for zen4
" "on a Zen 4, the plain level ranks below the named target"
fi
sel --host "$data/host-no-gpu.json" --explain "oci:$TEST_TMP/gpu:1.0"
if grep -q "^ranking:" <<<"$ERR"; then fail "--explain explains a ranking when nothing fits"; fi

step "the live probe on GPUs: NVML stand-ins through the real dlopen path"
S=${HWIMG_BUILD_DIR:?run through ctest}/stand-ins
[ -e "$S/nvml-two/libnvidia-ml.so.1" ] || fail "stand-in libraries not built in $S"
# An H100 (9.0) and an L4 (8.9) on driver 580.65.06 (CUDA 13.0).
live() { HWIMG_NVML_LIBRARY="$S/nvml-two/libnvidia-ml.so.1" HWIMG_CUDA_LIBRARY="$S/cuda-h100/libcuda.so.1" sel "$@"; }
live --explain "oci:$TEST_TMP/gpu:1.0"
assert_eq "oci:$TEST_TMP/gpu:1.0-cuda12.8-sm80-sm90-x86-64-v3" "$OUT" "H100 + L4: sm_80 serves the L4, sm_90 the H100"
assert_contains "$ERR" "no code for compute capability 8.9 (has sm_90a)" "sm_90a refused for the L4"
live --gpus 0 "oci:$TEST_TMP/gpu:1.0"
assert_eq "oci:$TEST_TMP/gpu:1.0-cuda13.0-sm90a-x86-64-v3" "$OUT" "the H100 alone takes sm_90a"
NVIDIA_VISIBLE_DEVICES=GPU-66666666-7777-8888-9999-aaaaaaaaaaaa live "oci:$TEST_TMP/gpu:1.0"
assert_eq "oci:$TEST_TMP/gpu:1.0-cuda12.8-sm80-sm90-x86-64-v3" "$OUT" "the L4 by UUID from NVIDIA_VISIBLE_DEVICES"
live --gpus none --format json "oci:$TEST_TMP/gpu:1.0"
assert_eq 3 "$STATUS" "--gpus none on a GPU-only index"
assert_eq '["needs a GPU; the container gets none (--gpus none)"]' "$(jq -c '.candidates[0].reasons' <<<"$OUT")" "none reason"

step "a GPU-only index on a host without GPU exits 3 with every variant's reasons"
sel --host "$data/host-no-gpu.json" "oci:$TEST_TMP/gpu:1.0"
assert_eq 3 "$STATUS" "exit status"
assert_eq "" "$OUT" "nothing on stdout"
assert_contains "$ERR" "hwimg: no variant of oci:$TEST_TMP/gpu:1.0 runs on the host in $data/host-no-gpu.json" "headline"
assert_eq 4 "$(grep -c 'needs an NVIDIA GPU; host has no NVIDIA driver' <<<"$ERR")" "a reason per variant"
sel --host "$data/host-no-gpu.json" --format json "oci:$TEST_TMP/gpu:1.0"
assert_eq 3 "$STATUS" "exit status with json"
assert_eq "null null null" "$(jq -r '[.reference, .digest, .variant] | map(tostring) | join(" ")' <<<"$OUT")" "nulls"

step "images made by others: platform and NVIDIA_REQUIRE_CUDA from the config"
make_layout "$TEST_TMP/cuda" 12.6 "$data/nvidia-cuda-images.json" > /dev/null
sel --host "$data/host-h100-535.json" "oci:$TEST_TMP/cuda:12.6"
assert_eq "oci:$TEST_TMP/cuda:12.6-amd64" "$OUT" "brand=nvidia,driver>=535 admits R535"
sel --host "$data/host-arm64.json" "oci:$TEST_TMP/cuda:12.6"
assert_eq "oci:$TEST_TMP/cuda:12.6-arm64" "$OUT" "arm64 host"
jq '.nvidia.driver_version = "545.23.08" | .nvidia.cuda_driver_version = "12.3"' "$data/host-h100-535.json" > "$TEST_TMP/545.json"
sel --host "$TEST_TMP/545.json" "oci:$TEST_TMP/cuda:12.6"
assert_eq 3 "$STATUS" "R545 fails cuda>=12.6"
assert_contains "$ERR" "NVIDIA_REQUIRE_CUDA: unsatisfied condition: cuda>=12.6; host driver 545.23.08 supports CUDA 12.3" "reason"

step "the selected stencil variant runs under runc"
require_tool umoci
require_tool runc
require_root
bundle=$TEST_TMP/bundle
umoci unpack --image "${chosen_ref#oci:}" "$bundle" >/dev/null  # umoci spells it DIR:TAG
jq '.process.terminal = false | .process.args += ["--size", "256", "--sweeps", "4"]' "$bundle/config.json" > "$TEST_TMP/c.json"
mv "$TEST_TMP/c.json" "$bundle/config.json"
output=$(runc run -b "$bundle" "hwimg-select-$$")
assert_contains "$output" "(variant $chosen)" "runc output"
echo "$output" | head -3
echo "PASS"
