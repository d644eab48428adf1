#!/bin/bash
# hwimg probe's NVIDIA steps against stand-in libnvidia-ml.so.1 / libcuda.so.1 built from C with
# NVIDIA's real signatures (tests/stand-ins), loaded through the real dlopen path.
source "$(dirname "$0")/lib.sh"
require_tool jq
: "${HWIMG_BUILD_DIR:?run through ctest}"
S=$HWIMG_BUILD_DIR/stand-ins
DATA=$HWIMG_SOURCE_DIR/tests/data/probe
[ -e "$S/nvml-h100/libnvidia-ml.so.1" ] || fail "stand-in libraries not built in $S"
mkdir -p "$TEST_TMP/empty"
MISSING=$TEST_TMP/missing

# probe NVML CUDA PROC [ENV...] -- runs hwimg probe -v with those libraries; JSON in $JSON, log in $LOG.
probe() {
  local nvml=$1 cuda=$2 proc=$3
  shift 3
  env HWIMG_NVML_LIBRARY="$nvml" HWIMG_CUDA_LIBRARY="$cuda" HWIMG_PROC_ROOT="$proc" \
    HWIMG_SYS_ROOT="$TEST_TMP/empty" "$@" timeout 60 "$HWIMG" probe --format json -v >"$TEST_TMP/out.json" 2>"$TEST_TMP/log"
  JSON=$(cat "$TEST_TMP/out.json")
  LOG=$(cat "$TEST_TMP/log")
}
q() { jq -c "$1" <<<"$JSON"; }

step "one H100 through NVML, driver 580.65.06"
probe "$S/nvml-h100/libnvidia-ml.so.1" "$S/cuda-h100/libcuda.so.1" "$TEST_TMP/empty"
assert_eq '"nvml"' "$(q .nvidia.source)" "source"
assert_eq '"580.65.06"' "$(q .nvidia.driver_version)" "driver version"
assert_eq '"13.0"' "$(q .nvidia.cuda_driver_version)" "CUDA driver version"
assert_eq '[{"index":0,"uuid":"GPU-11111111-2222-3333-4444-555555555555","name":"NVIDIA H100 80GB HBM3","compute_capability":"9.0","brand":"NVIDIA","memory_mib":81559}]' \
  "$(q .nvidia.gpus)" "GPUs"
assert_contains "$LOG" "nvml: driver 580.65.06, CUDA 13.0, 1 GPU(s)" "verbose NVML step"
assert_contains "$LOG" "cuda: not needed" "verbose CUDA step"

step "two different GPUs, and a third the caller may not open"
probe "$S/nvml-two/libnvidia-ml.so.1" "$S/cuda-h100/libcuda.so.1" "$TEST_TMP/empty"
assert_eq '[["NVIDIA H100 80GB HBM3","9.0",0],["NVIDIA L4","8.9",1]]' \
  "$(q '[.nvidia.gpus[] | [.name, .compute_capability, .index]]')" "two GPUs"
assert_contains "$LOG" "GPU 2: nvmlDeviceGetHandleByIndex_v2 returned NVML_ERROR_NO_PERMISSION (4), skipped" "skipped GPU"

step "NVML missing, libcuda present: CUDA answers, the driver version comes from procfs"
probe "$MISSING/libnvidia-ml.so.1" "$S/cuda-h100/libcuda.so.1" "$DATA/proc-open"
assert_eq '"cuda"' "$(q .nvidia.source)" "source"
assert_eq '"580.159.04"' "$(q .nvidia.driver_version)" "driver version from the open module's version file"
assert_eq '"13.0"' "$(q .nvidia.cuda_driver_version)" "CUDA driver version"
assert_eq '[{"index":0,"uuid":"GPU-11111111-2222-3333-4444-555555555555","name":"NVIDIA H100 80GB HBM3","compute_capability":"9.0","brand":null,"memory_mib":81079}]' \
  "$(q .nvidia.gpus)" "GPU from the CUDA driver API"
assert_contains "$LOG" "nvml: failed to load $MISSING/libnvidia-ml.so.1" "verbose NVML failure"

step "an NVML whose init fails falls back to CUDA"
probe "$S/nvml-broken/libnvidia-ml.so.1" "$S/cuda-h100/libcuda.so.1" "$DATA/proc-proprietary"
assert_eq '"cuda"' "$(q .nvidia.source)" "source"
assert_eq '"550.90.07"' "$(q .nvidia.driver_version)" "driver version from the proprietary module's version file"
assert_contains "$LOG" "nvml: nvmlInit_v2 returned NVML_ERROR_DRIVER_NOT_LOADED (9)" "verbose init failure"

step "an old NVML lacking optional functions: skipped, CUDA fills the compute capability by UUID"
probe "$S/nvml-old/libnvidia-ml.so.1" "$S/cuda-h100/libcuda.so.1" "$TEST_TMP/empty"
assert_eq '"nvml"' "$(q .nvidia.source)" "source"
assert_eq '"450.80.02"' "$(q .nvidia.driver_version)" "driver version"
assert_eq '"11.0"' "$(q .nvidia.cuda_driver_version)" "CUDA version from nvmlSystemGetCudaDriverVersion (v1)"
assert_eq '["9.0",null,81559]' "$(q '.nvidia.gpus[0] | [.compute_capability, .brand, .memory_mib]')" "completed GPU"
assert_contains "$LOG" "nvml: nvmlDeviceGetCudaComputeCapability not exported, skipped" "verbose skip"
assert_contains "$LOG" "cuda: driver unknown, CUDA 13.0, 1 GPU(s) (completing NVML's answer)" "verbose completion"

step "cuInit that hangs: the deadline holds and procfs answers"
probe "$MISSING/libnvidia-ml.so.1" "$S/cuda-hang/libcuda.so.1" "$DATA/proc-proprietary" HWIMG_CUDA_PROBE_TIMEOUT_MS=300
assert_eq '"procfs"' "$(q .nvidia.source)" "source"
assert_eq '"550.90.07"' "$(q .nvidia.driver_version)" "driver version"
assert_eq '[["NVIDIA L4",null]]' "$(q '[.nvidia.gpus[] | [.name, .compute_capability]]')" "GPU from procfs"
assert_contains "$LOG" "cuda: timed out after 300 ms" "verbose timeout"

step "nothing present: nvidia is null and the exit status 0"
probe "$MISSING/libnvidia-ml.so.1" "$MISSING/libcuda.so.1" "$TEST_TMP/empty"
assert_eq "null" "$(q .nvidia)" "no driver"
assert_contains "$LOG" "procfs: no NVIDIA kernel module" "verbose procfs step"

step "the CUDA toolkit's stub libcuda is not a driver"
STUB=/usr/local/cuda-13.0/lib64/stubs/libcuda.so
if [ -e "$STUB" ]; then
  probe "$MISSING/libnvidia-ml.so.1" "$STUB" "$TEST_TMP/empty"
  assert_eq "null" "$(q .nvidia)" "stub only"
  assert_contains "$LOG" "is the CUDA toolkit's stub, not a driver" "verbose stub"
else
  echo "(no CUDA toolkit stub at $STUB: step skipped)"
fi

step "HWIMG_OVERRIDE_CUDA replaces the CUDA driver version, and empty means no CUDA"
probe "$S/nvml-h100/libnvidia-ml.so.1" "$S/cuda-h100/libcuda.so.1" "$TEST_TMP/empty" HWIMG_OVERRIDE_CUDA=12.4
assert_eq '["12.4","580.65.06"]' "$(q '[.nvidia.cuda_driver_version, .nvidia.driver_version]')" "override"
probe "$S/nvml-h100/libnvidia-ml.so.1" "$S/cuda-h100/libcuda.so.1" "$TEST_TMP/empty" HWIMG_OVERRIDE_CUDA=
assert_eq "null" "$(q .nvidia)" "empty override"
expect_failure env HWIMG_OVERRIDE_CUDA=twelve "$HWIMG" probe
assert_eq 2 "$STATUS" "bad override is a usage error"
assert_contains "$OUT" 'hwimg: error: failed to read HWIMG_OVERRIDE_CUDA: expected a CUDA version such as "12.4" or nothing, got "twelve"' "bad override"

step "--format nfd --output writes a features.d file atomically"
mkdir -p "$TEST_TMP/features.d"
HWIMG_NVML_LIBRARY="$S/nvml-two/libnvidia-ml.so.1" "$HWIMG" probe --format nfd --output "$TEST_TMP/features.d/hwimg"
NFD=$(cat "$TEST_TMP/features.d/hwimg")
assert_contains "$NFD" "hwimg.org/nvidia.driver=580.65.06" "driver label"
assert_contains "$NFD" "hwimg.org/nvidia.cuda=13.0" "CUDA label"
assert_contains "$NFD" "hwimg.org/nvidia.gpu.compute-capability.8.9=true" "L4 label"
assert_contains "$NFD" "hwimg.org/nvidia.gpu.compute-capability.9.0=true" "H100 label"
assert_contains "$NFD" $'nvidia.com/cuda.driver-version.major=580\nnvidia.com/cuda.driver-version.minor=65\nnvidia.com/cuda.driver-version.revision=06' "GFD's driver labels"
assert_contains "$NFD" $'nvidia.com/cuda.runtime-version.major=13\nnvidia.com/cuda.runtime-version.minor=0' "GFD's CUDA labels"
assert_contains "$NFD" $'nvidia.com/gpu.compute.major=8\nnvidia.com/gpu.compute.minor=9' "GFD's names on mixed GPUs: the lowest capability (the L4's)"
assert_eq "hwimg" "$(ls -A "$TEST_TMP/features.d")" "only the final file is left"

step "--help documents the overrides"
HELP=$("$HWIMG" probe --help)
for var in HWIMG_PROC_ROOT HWIMG_SYS_ROOT HWIMG_NVML_LIBRARY HWIMG_CUDA_LIBRARY HWIMG_OVERRIDE_CUDA \
  HWIMG_OVERRIDE_COMPUTE_CAPABILITY HWIMG_OVERRIDE_CPU_LEVEL HWIMG_CUDA_PROBE_TIMEOUT_MS; do
  assert_contains "$HELP" "$var" "--help"
done
echo "PASS"
