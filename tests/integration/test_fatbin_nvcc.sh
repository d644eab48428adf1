#!/usr/bin/env bash
# The fatbin reader against real nvcc output: every binary lists exactly the targets nvcc was
# given, across SASS/PTX, a/f targets, executables with device-link stubs, -rdc objects and
# compressed fatbins; the builder's check refuses a variant whose files lack a declared target; and,
# where cuobjdump exists (a GPU machine), the reader agrees with `cuobjdump --list-elf --list-ptx`.
source "$(dirname "$0")/lib.sh"

NVCC=${HWIMG_NVCC:-/usr/local/cuda-13.0/bin/nvcc}
[ -x "$NVCC" ] || skip "no nvcc at $NVCC (set HWIMG_NVCC)"
require_tool g++
: "${HWIMG_BUILD_DIR:?run through ctest}"
LISTER="$HWIMG_BUILD_DIR/hwimg_list_device_code"
[ -x "$LISTER" ] || fail "no $LISTER (built with the project)"

cat >"$TEST_TMP/k.cu" <<'CU'
#include <cstdio>
__global__ void scale(float* x, float a, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) x[i] *= a;
}
int main() { std::printf("%p\n", reinterpret_cast<void*>(&scale)); return 0; }
CU

gencode() { # gencode sm_90a compute_80 ... -> -gencode flags, one image each
  local flags=() target
  for target in "$@"; do
    case $target in
      sm_*) flags+=(-gencode "arch=compute_${target#sm_},code=$target") ;;
      compute_*) flags+=(-gencode "arch=$target,code=$target") ;;
    esac
  done
  echo "${flags[@]}"
}
sorted() { tr ' ' '\n' | grep -v '^$' | sort | tr '\n' ' '; }

# expect_targets FILE TARGETS...: the reader lists exactly TARGETS for FILE.
expect_targets() {
  local file=$1; shift
  local got
  got=$("$LISTER" "$file" | cut -d: -f2-)
  assert_eq "$(echo "$*" | sorted)" "$(echo "$got" | sorted)" "device code of $(basename "$file")"
}

ALL=(sm_75 sm_80 sm_90 sm_90a sm_100f sm_120 compute_80 compute_90)
step "executable for ${ALL[*]}"
# shellcheck disable=SC2046
"$NVCC" -o "$TEST_TMP/all" "$TEST_TMP/k.cu" $(gencode "${ALL[@]}")
expect_targets "$TEST_TMP/all" "${ALL[@]}"

step "one target at a time, each of SASS, a, f and PTX"
for target in sm_75 sm_80 sm_86 sm_89 sm_90 sm_90a sm_100 sm_100a sm_100f sm_103f sm_110f sm_120 sm_120a sm_121f \
  compute_75 compute_90a compute_100f compute_120f; do
  # shellcheck disable=SC2046
  "$NVCC" -c -o "$TEST_TMP/$target.o" "$TEST_TMP/k.cu" $(gencode "$target")
  expect_targets "$TEST_TMP/$target.o" "$target"
done

step "nvcc shorthands: -arch=sm_90a adds compute_90; no -arch means sm_75 + compute_75"
"$NVCC" -c -o "$TEST_TMP/arch90a.o" "$TEST_TMP/k.cu" -arch=sm_90a
expect_targets "$TEST_TMP/arch90a.o" sm_90a compute_90a compute_90
"$NVCC" -c -o "$TEST_TMP/default.o" "$TEST_TMP/k.cu"
expect_targets "$TEST_TMP/default.o" sm_75 compute_75

step "device-link stubs for targets no object has are not listed"
"$NVCC" -c -o "$TEST_TMP/only80.o" "$TEST_TMP/k.cu" -gencode arch=compute_80,code=sm_80
"$NVCC" -o "$TEST_TMP/linked" "$TEST_TMP/only80.o" -gencode arch=compute_80,code=sm_80 \
  -gencode arch=compute_90,code=sm_90
expect_targets "$TEST_TMP/linked" sm_80

step "relocatable device code: the linked SASS runs, the kept -rdc PTX does not; a -dc object lists both"
# shellcheck disable=SC2046
"$NVCC" -rdc=true -o "$TEST_TMP/rdc" "$TEST_TMP/k.cu" $(gencode sm_120 compute_120)
expect_targets "$TEST_TMP/rdc" sm_120
# shellcheck disable=SC2046
"$NVCC" -dc -o "$TEST_TMP/dc.o" "$TEST_TMP/k.cu" $(gencode sm_120 compute_120)
expect_targets "$TEST_TMP/dc.o" sm_120 compute_120

step "device-link stubs are recognised inside compressed fatbins too"
"$NVCC" -o "$TEST_TMP/linkedz" "$TEST_TMP/only80.o" -Xfatbin -compress-all -gencode arch=compute_80,code=sm_80 \
  -gencode arch=compute_90,code=sm_90
expect_targets "$TEST_TMP/linkedz" sm_80

step "fully compressed fatbins (zstd and LZ4)"
# shellcheck disable=SC2046
"$NVCC" -o "$TEST_TMP/zstd" "$TEST_TMP/k.cu" -Xfatbin -compress-all $(gencode sm_80 sm_90a compute_90)
expect_targets "$TEST_TMP/zstd" sm_80 sm_90a compute_90
# shellcheck disable=SC2046
"$NVCC" -o "$TEST_TMP/lz4" "$TEST_TMP/k.cu" -Xfatbin -compress-all -Xfatbin -compress-mode=speed $(gencode sm_80 compute_80)
expect_targets "$TEST_TMP/lz4" sm_80 compute_80

step "a host-only ELF file has no device code"
expect_targets /bin/sh

step "the builder's check: a variant whose files lack a declared target is refused"
mkdir -p "$TEST_TMP/variant/bin"
cp "$TEST_TMP/all" "$TEST_TMP/variant/bin/app"
"$LISTER" --check v1 "$(IFS=,; echo "${ALL[*]}")" "$TEST_TMP/variant" >/dev/null
expect_failure "$LISTER" --check cuda13.0-sm120-x86-64-v1 sm_80,sm_120,compute_120 "$TEST_TMP/variant"
assert_contains "$OUT" "failed to check the device code of variant cuda13.0-sm120-x86-64-v1: its files embed sm_75, sm_80, \
compute_80, sm_90, compute_90, sm_90a, sm_100f, sm_120 but it declares sm_80, sm_120, compute_120 (missing \
compute_120; not declared sm_75, compute_80, sm_90, compute_90, sm_90a, sm_100f); the code: " "check message"
assert_contains "$OUT" "bin/app (fatbin container at offset " "the message names the file and the module"

step "modules: an executable from two translation units with different targets runs only what both have"
cat >"$TEST_TMP/a.cu" <<'CU'
__global__ void ka(float* x) { x[threadIdx.x] += 1.0f; }
void run_a(float* x) { ka<<<1, 32>>>(x); }
CU
cat >"$TEST_TMP/b.cu" <<'CU'
__global__ void kb(float* x) { x[threadIdx.x] *= 2.0f; }
void run_a(float* x);
int main() { run_a(nullptr); kb<<<1, 32>>>(nullptr); return 0; }
CU
"$NVCC" -c -o "$TEST_TMP/a80.o" "$TEST_TMP/a.cu" -gencode arch=compute_80,code=sm_80
"$NVCC" -c -o "$TEST_TMP/b8090.o" "$TEST_TMP/b.cu" -gencode arch=compute_80,code=sm_80 -gencode arch=compute_90,code=sm_90
"$NVCC" -o "$TEST_TMP/two" "$TEST_TMP/a80.o" "$TEST_TMP/b8090.o"
expect_targets "$TEST_TMP/two" sm_80
assert_eq "sm_80|sm_80 sm_90" "$("$LISTER" --modules "$TEST_TMP/two" | cut -d: -f2- | sed 's/^ //' | paste -sd'|')" \
  "the modules of the two-unit executable"
mkdir -p "$TEST_TMP/two-variant/bin"
cp "$TEST_TMP/two" "$TEST_TMP/two-variant/bin/app"
expect_failure "$LISTER" --check cuda13.0-sm90-x86-64-v1 sm_80,sm_90 "$TEST_TMP/two-variant"
module=$("$LISTER" --modules "$TEST_TMP/two" | head -1 | cut -d: -f1)
assert_eq "failed to check the device code of variant cuda13.0-sm90-x86-64-v1: it declares sm_80, sm_90, but not \
every module of device code has them, and a GPU runs only what each module has: $TEST_TMP/two-variant/bin/app \
($module) has sm_80, missing sm_90" "$OUT" "a module lacking a declared target is named"
"$LISTER" --check cuda13.0-sm80-x86-64-v1 sm_80 "$TEST_TMP/two-variant" >/dev/null

step "device code wherever it ships: a static library, a cubin, a fatbin and PTX loaded at run time"
"$NVCC" -c -o "$TEST_TMP/a8090.o" "$TEST_TMP/a.cu" $(gencode sm_80 sm_90 compute_90)
"$NVCC" -c -o "$TEST_TMP/b-kernels-with-a-long-name.o" "$TEST_TMP/b.cu" $(gencode sm_80 sm_90 compute_90)
ar rcs "$TEST_TMP/libk.a" "$TEST_TMP/a8090.o" "$TEST_TMP/b-kernels-with-a-long-name.o"
expect_targets "$TEST_TMP/libk.a" sm_80 sm_90 compute_90
assert_eq 2 "$("$LISTER" --modules "$TEST_TMP/libk.a" | grep -c '^member ')" "modules of the static library"
"$NVCC" -cubin -arch=sm_90a -o "$TEST_TMP/k.cubin" "$TEST_TMP/k.cu"
expect_targets "$TEST_TMP/k.cubin" sm_90a
"$NVCC" -cubin -arch=sm_120 -o "$TEST_TMP/k120.cubin" "$TEST_TMP/k.cu"
expect_targets "$TEST_TMP/k120.cubin" sm_120
# shellcheck disable=SC2046
"$NVCC" -fatbin -o "$TEST_TMP/k.fatbin" "$TEST_TMP/k.cu" $(gencode sm_80 sm_100f compute_100f)
expect_targets "$TEST_TMP/k.fatbin" sm_80 sm_100f compute_100f
"$NVCC" -ptx -arch=compute_89 -o "$TEST_TMP/k.ptx" "$TEST_TMP/k.cu"
expect_targets "$TEST_TMP/k.ptx" compute_89
mkdir -p "$TEST_TMP/loaded/lib" "$TEST_TMP/loaded/share"
cp "$TEST_TMP/libk.a" "$TEST_TMP/k.fatbin" "$TEST_TMP/loaded/lib/"
"$LISTER" --check v0 sm_80 "$TEST_TMP/loaded/lib" >/dev/null
"$NVCC" -ptx -arch=compute_80 -o "$TEST_TMP/loaded/share/k80.ptx" "$TEST_TMP/k.cu"
"$LISTER" --check v1 compute_80 "$TEST_TMP/loaded/share" >/dev/null
cp "$TEST_TMP/k.ptx" "$TEST_TMP/loaded/share/k89.ptx"
expect_failure "$LISTER" --check v2 compute_80 "$TEST_TMP/loaded/share"
case $OUT in *"share/k89.ptx (PTX) has compute_89, missing compute_80"*) ;; *) fail "the PTX module is not named: $OUT" ;; esac

step "-rdc: a declared PTX target kept only for device linking is refused with the reason"
mkdir -p "$TEST_TMP/rdc-variant/bin"
cp "$TEST_TMP/rdc" "$TEST_TMP/rdc-variant/bin/app"
expect_failure "$LISTER" --check v sm_120,compute_120 "$TEST_TMP/rdc-variant"
case $OUT in *"compute_120 is in $TEST_TMP/rdc-variant/bin/app only as relocatable (-rdc) code in __nv_relfatbin, which the CUDA runtime never loads"*) ;;
  *) fail "the -rdc reason is missing: $OUT" ;; esac

step "the example program builds for each variant of matrix/cuda-kernel.yaml with exactly its targets"
"$HWIMG" matrix --format json "$HWIMG_SOURCE_DIR/matrix/cuda-kernel.yaml" >"$TEST_TMP/kernel.json"
count=$(jq '.variants | length' "$TEST_TMP/kernel.json")
assert_eq 4 "$count" "variants of matrix/cuda-kernel.yaml"
for i in $(seq 0 $((count - 1))); do
  id=$(jq -r ".variants[$i].id" "$TEST_TMP/kernel.json")
  flags=$(jq -r ".variants[$i].variables[\"gpu.gencode\"]" "$TEST_TMP/kernel.json")
  targets=$(jq -r ".variants[$i].annotations[\"org.hwimg.gpu.targets\"]" "$TEST_TMP/kernel.json")
  make -s -C "$HWIMG_SOURCE_DIR/examples/cuda-kernel" OUT="$TEST_TMP/$id" NVCC="$NVCC" NVCCFLAGS="$flags" >/dev/null
  "$LISTER" --check "$id" "$targets" "$TEST_TMP/$id/bin"
done

# cuobjdump --list-elf names family cubins without their f (sm_100f -> "sm_100.cubin"; the f is only
# in the fatbin entry's flags), PTX files as "sm_XY.ptx", and lists device-link stubs.
cuobjdump_targets() {
  (cuobjdump --list-elf --list-ptx "$1" 2>/dev/null || true) | grep -E '^(ELF|PTX) file' | awk '{print $NF}' \
    | sed -E 's/^.*\.([0-9]+)\.//; s/^sm_(.*)\.ptx$/compute_\1/; s/\.cubin$//' | sort -u | tr '\n' ' '
}
if command -v cuobjdump >/dev/null 2>&1; then
  step "the reader agrees with cuobjdump"
  for file in "$TEST_TMP"/all "$TEST_TMP"/*.o "$TEST_TMP"/rdc "$TEST_TMP"/zstd "$TEST_TMP"/lz4; do
    ours=$("$LISTER" "$file" | cut -d: -f2- | sed -E 's/(sm_[0-9]+)f/\1/g' | sorted)
    assert_eq "$ours" "$(cuobjdump_targets "$file")" "cuobjdump's list for $(basename "$file")"
  done
  assert_eq "sm_80 sm_90 " "$(cuobjdump_targets "$TEST_TMP/linked")" "cuobjdump lists the stub of linked"
else
  echo "cuobjdump not installed here: comparison with it skipped"
fi
echo "PASS"
