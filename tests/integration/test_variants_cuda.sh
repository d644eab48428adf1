#!/usr/bin/env bash
# Both examples in one layout (issue 3): the CUDA kernel built with nvcc 13 for sm_80, sm_90,
# sm_90a and sm_120 plus PTX, and the CPU stencil; skopeo and umoci accept the layout; each GPU
# variant is labelled with exactly the device code its binary embeds (the builder checks it);
# a recipe whose binary lacks a declared target is refused by that check; without a GPU the CUDA
# variants are rejected and the selection explains why.
source "$(dirname "$0")/lib.sh"
[ -x /usr/local/cuda-13.0/bin/nvcc ] || skip "nvcc 13.0 is not installed at /usr/local/cuda-13.0"
require_tool skopeo
require_tool umoci
require_tool jq

export SOURCE_DATE_EPOCH=1700000000
out=$TEST_TMP/out
step "build both examples into one layout"
"$HWIMG" build "$HWIMG_SOURCE_DIR/recipes/cuda-kernel.yaml" -o "$out" --tag cuda -j 2 >/dev/null
"$HWIMG" build "$HWIMG_SOURCE_DIR/recipes/stencil.yaml" -o "$out" --tag stencil -j 2 >/dev/null
json=$("$HWIMG" inspect "oci:$out:cuda" --format json)
assert_eq "cuda13.0-sm80-x86-64-v1 cuda13.0-sm90-x86-64-v1 cuda13.0-sm90a-x86-64-v1 cuda13.0-sm120-x86-64-v1" \
  "$(jq -r '[.variants[].variant] | join(" ")' <<<"$json")" "CUDA variants"
assert_eq "sm_80,compute_80 sm_90,compute_90 compute_90,sm_90a sm_120,compute_120" \
  "$(jq -r '[.variants[].annotations["org.hwimg.gpu.targets"]] | join(" ")' <<<"$json")" "device code labels"
assert_eq 5 "$("$HWIMG" inspect "oci:$out:stencil" --format json | jq '.variants | length')" "stencil variants"
# The C/C++ runtime layer is the same for every CUDA variant: stored once.
assert_eq 1 "$(jq -r '[.variants[].layers[0].digest] | unique | length' <<<"$json")" "shared runtime layer"

step "skopeo and umoci accept the layout; labels and NVIDIA_REQUIRE_CUDA are in the config"
for tag in cuda stencil; do skopeo inspect --raw "oci:$out:$tag" >/dev/null; done
config=$(skopeo inspect --config "oci:$out:cuda-cuda13.0-sm90a-x86-64-v1")
assert_eq "compute_90,sm_90a" "$(jq -r '.config.Labels["org.hwimg.gpu.targets"]' <<<"$config")" "label"
require=$(jq -r '.config.Env[] | select(startswith("NVIDIA_REQUIRE_CUDA="))' <<<"$config")
assert_contains "$require" "cuda>=13.0" "NVIDIA_REQUIRE_CUDA"
umoci unpack --rootless --image "$out:cuda-cuda13.0-sm90a-x86-64-v1" "$TEST_TMP/bundle" >/dev/null
[ -x "$TEST_TMP/bundle/rootfs/opt/cuda-kernel/bin/saxpy" ] || fail "saxpy missing from the unpacked variant"

step "the builder refuses a variant whose binary lacks a declared target"
mkdir -p "$TEST_TMP/bad"
cp -r "$HWIMG_SOURCE_DIR/examples" "$TEST_TMP/bad/"
cat > "$TEST_TMP/bad/matrix.yaml" <<'YAML'
axes:
  cuda: ["13.0"]
  gpu: [sm_90]
ptx: true
YAML
cat > "$TEST_TMP/bad/recipe.yaml" <<'YAML'
name: lacking
base: scratch
matrix: matrix.yaml
build:
  workdir: examples/cuda-kernel
  run: make OUT="${out}" NVCC="${cuda.home}/bin/nvcc" NVCCFLAGS="-gencode arch=compute_90,code=sm_90"
layers:
  - {from: "${out}/bin", to: /opt/bin}
YAML
expect_failure "$HWIMG" build "$TEST_TMP/bad/recipe.yaml" -o "$TEST_TMP/bad-out"
assert_contains "$OUT" "hwimg: error: failed to check the device code of variant cuda13.0-sm90-x86-64-v1" "refusal"
assert_contains "$OUT" "missing compute_90" "what is missing"
[ ! -e "$TEST_TMP/bad-out" ] || fail "a refused variant left a layout behind"

step "on a host without a GPU the CUDA variants are rejected, with reasons"
expect_failure "$HWIMG" select "oci:$out:cuda" --host "$HWIMG_SOURCE_DIR/tests/data/select/host-no-gpu.json"
assert_eq 3 "$STATUS" "exit status when nothing fits"
assert_contains "$OUT" "needs" "reasons"
echo PASS
