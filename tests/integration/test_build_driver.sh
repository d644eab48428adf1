#!/usr/bin/env bash
# Bundled user-mode drivers (issue 27, items 1, 2 and 4), without a GPU: the stand-in libcuda and
# libnvidia-ml (tests/stand-ins/*.c) built at two driver versions into DIR/VERSION with NVIDIA's
# file names (plus a distribution's soname link, which hwimg leaves out) are bundled by a matrix
# `driver: [none, V1, V2]` into a GPU recipe on the Debian-made runtime image (no nvcc: a stub
# toolkit, the checked-in libkernels.a as device code). Checks: the three variants; the driver
# layer holds the libraries, their soname links, libcuda.so and the ld.so.conf.d entry; the config's
# LD_LIBRARY_PATH and NVIDIA_VISIBLE_DEVICES=void; org.hwimg.driver.bundled; build --explain names
# the driver; one layer per driver, shared by a rebuild's two CPU levels; skopeo and umoci accept
# the layout; under runc a program that dlopens libnvidia-ml.so.1 and libcuda.so.1 by soname prints
# the bundled driver's version, nothing mounted, even with another driver's libraries earlier on
# the recipe's LD_LIBRARY_PATH; `select --host` picks the variant of the host's driver and
# --explain says why the others lose; bad inputs write nothing (a library of another version, a libcuda without its version string, no
# libnvidia-ml, a driver too old for the CUDA version, a recipe without driver:). Where buildah is
# installed, one Dockerfile recipe with driver: gets the driver layer last and the environment.
source "$(dirname "$0")/lib.sh"
source "$(dirname "$0")/bases_lib.sh"
require_tool gcc
require_tool tar

v1=535.247.01
v2=570.195.03
standins=$HWIMG_SOURCE_DIR/tests/stand-ins
drivers=$TEST_TMP/drivers

# driver_libraries DIR VERSION [EMBEDDED]: the stand-ins as NVIDIA's runfile names them, libcuda
# carrying EMBEDDED (default VERSION) as its version string.
driver_libraries() {
  local dir=$1 version=$2 embedded=${3:-$2}
  mkdir -p "$dir"
  gcc -shared -fPIC -O1 -DSTANDIN_h100 "-DSTANDIN_DRIVER_VERSION=\"$embedded\"" -Wl,-soname,libcuda.so.1 \
    -o "$dir/libcuda.so.$version" "$standins/cuda.c" || fail "gcc: the stand-in libcuda $version"
  gcc -shared -fPIC -O1 "-DSTANDIN_DRIVER_VERSION=\"$version\"" -Wl,-soname,libnvidia-ml.so.1 \
    -o "$dir/libnvidia-ml.so.$version" "$standins/nvml.c" || fail "gcc: the stand-in libnvidia-ml $version"
}

step "the stand-in drivers $v1 and $v2, as NVIDIA names them, plus a distribution's soname link"
for v in $v1 $v2; do
  driver_libraries "$drivers/$v" "$v"
  ln -s "libcuda.so.$v" "$drivers/$v/libcuda.so.1"
done
strings "$drivers/$v1/libcuda.so.$v1" | grep -qx "$v1" || fail "the stand-in libcuda does not carry $v1"

debian_images runtime

step "a GPU recipe (stub toolkit, checked-in sm_80 + sm_90 device code) with driver: [none, $v1, $v2]"
app=$TEST_TMP/app
mkdir -p "$app/cuda/bin"
printf '#!/bin/sh\necho "stub nvcc: not to be called" >&2\nexit 1\n' >"$app/cuda/bin/nvcc"
chmod +x "$app/cuda/bin/nvcc"
cp "$HWIMG_SOURCE_DIR/tests/data/fatbin/libkernels.a" "$app/"
# Opens libnvidia-ml and libcuda by soname, as programs do, and says which files the loader took.
cat >"$app/driver-version.c" <<'EOF'
#define _GNU_SOURCE
#include <dlfcn.h>
#include <link.h>
#include <stdio.h>

static const char* path_of(void* handle) {
  struct link_map* map = NULL;
  return dlinfo(handle, RTLD_DI_LINKMAP, &map) == 0 ? map->l_name : "?";
}

int main(void) {
  void* nvml = dlopen("libnvidia-ml.so.1", RTLD_NOW);
  void* cuda = nvml == NULL ? NULL : dlopen("libcuda.so.1", RTLD_NOW);
  if (cuda == NULL) {
    fprintf(stderr, "dlopen: %s\n", dlerror());
    return 1;
  }
  int (*init)(void) = (int (*)(void))dlsym(nvml, "nvmlInit_v2");
  int (*version)(char*, unsigned) = (int (*)(char*, unsigned))dlsym(nvml, "nvmlSystemGetDriverVersion");
  const char* cuda_version = dlsym(cuda, "standin_driver_version");
  char text[96];
  if (init == NULL || version == NULL || cuda_version == NULL || init() != 0 || version(text, sizeof text) != 0) {
    fprintf(stderr, "nvml: no driver version\n");
    return 1;
  }
  printf("nvml %s %s\ncuda %s %s\n", text, path_of(nvml), cuda_version, path_of(cuda));
  return 0;
}
EOF
write_matrix() { # write_matrix CPU_LEVELS DRIVERS
  cat >"$app/matrix.yaml" <<EOF
axes:
  cuda: ["12.4"]
  gpu: [[sm_80, sm_90]]
  cpu: [$1]
  driver: [$2]
cuda_home: cuda
EOF
}
write_matrix x86-64-v1 "none, \"$v1\", \"$v2\""
recipe_head="name: drv
base: oci:$IMAGE_runtime:bookworm
matrix: matrix.yaml
build:
  run: mkdir -p \"\${out}/bin\" && cp libkernels.a \"\${out}/\" && gcc -O1 -o \"\${out}/bin/driver-version\" driver-version.c
layers:
  - {from: \"\${out}\", to: /opt/drv}
config:
  entrypoint: [/opt/drv/bin/driver-version]"
printf '%s\ndriver:\n  from: %s/${driver.version}\n' "$recipe_head" "$drivers" >"$app/recipe.yaml"

L=$TEST_TMP/L
export SOURCE_DATE_EPOCH=1700000000
"$HWIMG" build "$app/recipe.yaml" -o "$L" --tag 1 --cache "$TEST_TMP/cache" -j 2 >"$TEST_TMP/build.log" 2>&1 ||
  fail "hwimg build: $(tail -5 "$TEST_TMP/build.log")"
plain=cuda12.4-sm80_sm90-x86-64-v1
id1=$plain-driver$v1
id2=$plain-driver$v2
assert_eq "$plain $id1 $id2" "$(variant_ids "$L" 1 | sort | paste -sd' ')" "variants"

step "the driver layers: libraries, soname links, libcuda.so, the ld.so.conf.d entry; not the directory's link"
# driver_layer ID: the digest of the variant's last layer (the driver's).
driver_layer() { layout_manifest "$L" "1-$1" | jq -r '.layers[-1].digest'; }
for id in $id1 $id2; do
  v=${id##*-driver}
  layer=$(driver_layer "$id")
  listing=$(tar -tzvf "$(layout_blob "$L" "$layer")") || fail "$id: tar cannot list its last layer $layer"
  # "PERMS OWNER SIZE DATE TIME NAME[ -> TARGET]" -> "t NAME[ -> TARGET]" (t: the type letter)
  entries=$(awk '{ name = $6; for (i = 7; i <= NF; i++) name = name " " $i; print substr($1, 1, 1) " " name }' <<<"$listing" |
    sed -E 's#^(.) \./#\1 #; s#^(.) /#\1 #' | sort)
  for want in "- usr/local/nvidia/lib64/libcuda.so.$v" "- usr/local/nvidia/lib64/libnvidia-ml.so.$v" \
    "l usr/local/nvidia/lib64/libcuda.so.1 -> libcuda.so.$v" "l usr/local/nvidia/lib64/libnvidia-ml.so.1 -> libnvidia-ml.so.$v" \
    "l usr/local/nvidia/lib64/libcuda.so -> libcuda.so.1" "- etc/ld.so.conf.d/000-hwimg-nvidia-driver.conf"; do
    grep -qxF -e "$want" <<<"$entries" || fail "$id: the driver layer has no [$want]: $entries"
  done
  if grep -qE '^- .*/libcuda\.so\.1$' <<<"$entries"; then fail "$id: the directory's libcuda.so.1 link was packed as a file: $entries"; fi
  assert_eq /usr/local/nvidia/lib64 "$(tar -xzOf "$(layout_blob "$L" "$layer")" --wildcards '*etc/ld.so.conf.d/000-hwimg-nvidia-driver.conf')" \
    "$id: the ld.so.conf.d entry"
  mkdir -p "$TEST_TMP/x-$v"
  tar -xzf "$(layout_blob "$L" "$layer")" -C "$TEST_TMP/x-$v" --wildcards "*libcuda.so.$v"
  cmp -s "$drivers/$v/libcuda.so.$v" "$(find "$TEST_TMP/x-$v" -name "libcuda.so.$v")" || fail "$id: libcuda.so.$v is not the directory's"

  config=$(skopeo inspect --config "oci:$L:1-$id") || fail "skopeo inspect --config oci:$L:1-$id"
  env=$(jq -r '.config.Env[]' <<<"$config")
  grep -qE '^LD_LIBRARY_PATH=/usr/local/nvidia/lib64(:|$)' <<<"$env" || fail "$id: LD_LIBRARY_PATH does not start with /usr/local/nvidia/lib64: $env"
  grep -qx 'NVIDIA_VISIBLE_DEVICES=void' <<<"$env" || fail "$id: no NVIDIA_VISIBLE_DEVICES=void: $env"
  assert_eq "$v" "$(layout_manifest "$L" "1-$id" | jq -r '.annotations["org.hwimg.driver.bundled"]')" "$id: org.hwimg.driver.bundled on the manifest"
  assert_eq "$v" "$(jq -r --arg id "$id" '.manifests[] | select(.annotations["org.hwimg.variant"] == $id) | .annotations["org.hwimg.driver.bundled"]' \
    "$(layout_blob "$L" "$(tag_digest "$L" 1)")")" "$id: org.hwimg.driver.bundled in the index"
done
[ "$(driver_layer "$id1")" != "$(driver_layer "$id2")" ] || fail "the two drivers share a layer"
plain_manifest=$(layout_manifest "$L" "1-$plain")
assert_eq null "$(jq -r '.annotations["org.hwimg.driver.bundled"]' <<<"$plain_manifest")" "$plain: no org.hwimg.driver.bundled"
for layer in $(driver_layer "$id1") $(driver_layer "$id2"); do
  jq -e --arg d "$layer" '[.layers[].digest] | index($d) == null' <<<"$plain_manifest" >/dev/null || fail "$plain carries driver layer $layer"
done
plain_env=$(skopeo inspect --config "oci:$L:1-$plain" | jq -r '.config.Env[]')
if grep -qE '^(NVIDIA_VISIBLE_DEVICES|LD_LIBRARY_PATH)=' <<<"$plain_env"; then fail "$plain has a driver's environment: $plain_env"; fi
check_layout "$L" 1
# block LOG ID: the lines --explain printed for variant ID (its line and the indented ones under it).
block() { awk -v id="$2" '$1 == id { on = 1; print; next } on && /^  / { print; next } { on = 0 }' <<<"$1"; }
explained=$("$HWIMG" build "$app/recipe.yaml" -o "$L" --tag 1 --explain 2>&1) || fail "hwimg build --explain: $explained"
for id in $id1 $id2; do
  v=${id##*-driver}
  assert_contains "$(block "$explained" "$id")" "  driver $v from $drivers/$v -> /usr/local/nvidia/lib64" "build --explain for $id"
done
if grep -q '^  driver ' <<<"$(block "$explained" "$plain")"; then fail "build --explain gives $plain a driver: $explained"; fi

step "a rebuild with two CPU levels: one layer per driver, the same for both levels"
write_matrix "x86-64-v1, x86-64-v2" "none, \"$v1\", \"$v2\""
"$HWIMG" build "$app/recipe.yaml" -o "$L" --tag 2 --cache "$TEST_TMP/cache" -j 2 >"$TEST_TMP/build2.log" 2>&1 ||
  fail "hwimg build with two levels: $(tail -5 "$TEST_TMP/build2.log")"
assert_eq 6 "$(variant_ids "$L" 2 | wc -l)" "variants of the rebuild"
for v in $v1 $v2; do
  a=$(layout_manifest "$L" "2-cuda12.4-sm80_sm90-x86-64-v1-driver$v" | jq -r '.layers[-1].digest')
  b=$(layout_manifest "$L" "2-cuda12.4-sm80_sm90-x86-64-v2-driver$v" | jq -r '.layers[-1].digest')
  assert_eq "$a" "$b" "driver $v: the layer of the x86-64-v1 and x86-64-v2 variants"
  assert_eq "$(driver_layer "$plain-driver$v")" "$a" "driver $v: the layer of the first build"
done
check_layout "$L" 2

step "under runc, nothing mounted: the program loads the bundled libraries by soname"
for id in $id1 $id2; do
  v=${id##*-driver}
  out=$(run_variant "$L" "1-$id" "$v")
  assert_eq "nvml $v /usr/local/nvidia/lib64/libnvidia-ml.so.1
cuda $v /usr/local/nvidia/lib64/libcuda.so.1" "$out" "$id under runc"
done
# The toolkit-mounted variant has no driver of its own: with nothing mounted there is none to open.
bundle=$TEST_TMP/bundle-plain
umoci unpack --image "$L:1-$plain" "$bundle" >/dev/null || fail "umoci unpack $L:1-$plain"
jq '.process.terminal = false' "$bundle/config.json" >"$bundle/c.json" && mv "$bundle/c.json" "$bundle/config.json"
set +e
out=$(runc run --bundle "$bundle" "hwimg-driver-$$-plain" </dev/null 2>&1)
status=$?
set -e
[ "$status" != 0 ] || fail "$plain found a driver with nothing mounted: $out"
assert_contains "$out" "dlopen: libnvidia-ml.so.1: cannot open shared object file" "$plain under runc"

step "LD_LIBRARY_PATH naming the driver's directory after one with another driver's libraries: the bundled one first"
# As a base or recipe may set it (a CUDA forward-compatibility directory first, say): the loader
# takes the first libnvidia-ml.so.1 it finds, so the bundled driver's directory must lead.
# (sh -e runs the step: ";" stops at a failure as "&&" would, and sed leaves it alone.)
decoy_run="mkdir -p \"\${out}/decoy\"; cp $drivers/$v2/libnvidia-ml.so.$v2 \"\${out}/decoy/libnvidia-ml.so.1\"; \
cp $drivers/$v2/libcuda.so.$v2 \"\${out}/decoy/libcuda.so.1\"; "
printf '%s\n  env: {LD_LIBRARY_PATH: "/opt/drv/decoy:/usr/local/nvidia/lib64"}\ndriver:\n  from: %s/${driver.version}\n' \
  "$recipe_head" "$drivers" | sed -e "s|^  run: |  run: $decoy_run|" >"$app/decoy.yaml"
"$HWIMG" build "$app/decoy.yaml" -o "$TEST_TMP/L3" --tag 1 --only "$id1" --cache "$TEST_TMP/cache" >"$TEST_TMP/build3.log" 2>&1 ||
  fail "hwimg build (decoy): $(tail -5 "$TEST_TMP/build3.log")"
assert_eq "LD_LIBRARY_PATH=/usr/local/nvidia/lib64:/opt/drv/decoy" \
  "$(skopeo inspect --config "oci:$TEST_TMP/L3:1-$id1" | jq -r '.config.Env[] | select(startswith("LD_LIBRARY_PATH="))')" \
  "$id1 with the recipe's LD_LIBRARY_PATH"
assert_eq "nvml $v1 /usr/local/nvidia/lib64/libnvidia-ml.so.1
cuda $v1 /usr/local/nvidia/lib64/libcuda.so.1" "$(run_variant "$TEST_TMP/L3" "1-$id1" decoy)" "$id1 with a decoy driver under runc"

step "select --host: the variant of the host's driver; the toolkit variant below it; the other driver refused"
facts() { # facts DRIVER CUDA: host-h100-535.json with that driver
  jq --arg d "$1" --arg c "$2" '.nvidia.driver_version = $d | .nvidia.cuda_driver_version = $c' \
    "$HWIMG_SOURCE_DIR/tests/data/select/host-h100-535.json" >"$TEST_TMP/host-$1.json"
  echo "$TEST_TMP/host-$1.json"
}
select_on() { # select_on FACTS: the chosen variant; the explanation in $TEST_TMP/explain
  local out
  out=$("$HWIMG" select "oci:$L:1" --host "$1" --format json --explain 2>"$TEST_TMP/explain") ||
    fail "select on $1: $(cat "$TEST_TMP/explain")"
  jq -r .variant <<<"$out"
}
# row ID: the explanation's lines for variant ID (its row and the continuation lines under it).
row() { awk -v id="$1" '$1 == id { on = 1; print; next } on && /^ / { print; next } { on = 0 }' "$TEST_TMP/explain"; }
assert_eq "$id1" "$(select_on "$(facts $v1 12.2)")" "select on a $v1 host"
assert_contains "$(row "$plain")" "ranks below $id1: uses the host's driver, mounted by NVIDIA's toolkit, where $id1 bundles driver $v1" \
  "--explain: the toolkit variant on a $v1 host"
assert_contains "$(row "$id2")" "bundles driver $v2; host kernel driver is $v1 (they must be equal)" "--explain: the $v2 variant on a $v1 host"
assert_eq "$id2" "$(select_on "$(facts $v2 12.8)")" "select on a $v2 host"
assert_contains "$(row "$id1")" "bundles driver $v1; host kernel driver is $v2 (they must be equal)" "--explain: the $v1 variant on a $v2 host"
assert_eq "$plain" "$(select_on "$(facts 550.54.14 12.4)")" "select on a 550.54.14 host"

step "bad input writes nothing"
# refused DIR WHAT NEEDLE...: a build from DIR (as driver.from) fails naming each NEEDLE; no layout.
refused() {
  local from=$1 what=$2; shift 2
  printf '%s\ndriver:\n  from: %s\n' "$recipe_head" "$from" >"$app/bad.yaml"
  rm -rf "$TEST_TMP/bad"
  expect_failure "$HWIMG" build "$app/bad.yaml" -o "$TEST_TMP/bad" --tag 1 --cache "$TEST_TMP/cache"
  local needle
  for needle in "$@"; do assert_contains "$OUT" "$needle" "$what"; done
  [ ! -e "$TEST_TMP/bad" ] || fail "$what: the layout was written: $(ls -A "$TEST_TMP/bad")"
  echo "${OUT##*hwimg: error: }" | head -c 300; echo
}
write_matrix x86-64-v1 "\"$v1\""
mixed=$TEST_TMP/mixed
mkdir -p "$mixed/$v1"
cp "$drivers/$v1"/libcuda.so.$v1 "$drivers/$v1"/libnvidia-ml.so.$v1 "$mixed/$v1/"
cp "$drivers/$v2/libnvidia-ml.so.$v2" "$mixed/$v1/"
refused "$mixed/\${driver.version}" "a $v2 library in the $v1 directory" "libnvidia-ml.so.$v2 is of driver $v2, not $v1"
driver_libraries "$TEST_TMP/wrong-string/$v1" "$v1" "$v2"
refused "$TEST_TMP/wrong-string/\${driver.version}" "a libcuda built as $v2, named $v1" \
  "$TEST_TMP/wrong-string/$v1/libcuda.so.$v1" "does not carry the version string $v1"
mkdir -p "$TEST_TMP/no-nvml/$v1"
cp "$drivers/$v1/libcuda.so.$v1" "$TEST_TMP/no-nvml/$v1/"
refused "$TEST_TMP/no-nvml/\${driver.version}" "a directory without libnvidia-ml" "there is no libnvidia-ml.so.$v1"
write_matrix x86-64-v1 '"470.256.02"'
refused "$drivers/\${driver.version}" "driver 470 for CUDA 12.4" \
  "$app/matrix.yaml:5:" "driver 470.256.02 (CUDA 11.4) cannot run CUDA 12.4 code"
write_matrix x86-64-v1 "none, \"$v1\""
rm -rf "$TEST_TMP/bad"
printf '%s\n' "$recipe_head" >"$app/no-driver.yaml"
expect_failure "$HWIMG" build "$app/no-driver.yaml" -o "$TEST_TMP/bad" --tag 1 --cache "$TEST_TMP/cache"
assert_contains "$OUT" "bundles driver $v1 (the matrix's driver axis), but the recipe does not say where its libraries are" \
  "a recipe without driver:"
[ ! -e "$TEST_TMP/bad" ] || fail "a recipe without driver: wrote the layout"

step "a Dockerfile recipe with driver: the driver layer last, the environment set"
if ! command -v buildah >/dev/null; then
  echo "SKIP (this part): buildah is not installed"
else
  storage=$TEST_TMP/containers
  mkdir -p "$storage"
  printf '[storage]\ndriver = "vfs"\ngraphroot = "%s/graph"\nrunroot = "%s/run"\n' "$storage" "$storage" >"$storage/storage.conf"
  export CONTAINERS_STORAGE_CONF=$storage/storage.conf
  d=$TEST_TMP/dockerfile
  mkdir -p "$d/ctx"
  cp "$HWIMG_SOURCE_DIR/tests/data/fatbin/libkernels.a" "$d/ctx/"
  gcc -O1 -o "$d/ctx/driver-version" "$app/driver-version.c" || fail "gcc: driver-version.c"
  printf 'ARG BASE\nFROM ${BASE}\nCOPY libkernels.a driver-version /opt/kernels/\nENV LD_LIBRARY_PATH=/opt/kernels\nENTRYPOINT ["/opt/kernels/driver-version"]\n' \
    >"$d/ctx/Dockerfile"
  cp -r "$app/cuda" "$d/"
  printf 'axes:\n  cuda: ["12.4"]\n  gpu: [[sm_80, sm_90]]\n  cpu: [x86-64-v1]\n  driver: ["%s"]\ncuda_home: cuda\n' "$v1" >"$d/matrix.yaml"
  cat >"$d/recipe.yaml" <<EOF
name: drv-dockerfile
matrix: matrix.yaml
dockerfile: ctx/Dockerfile
context: ctx
args:
  BASE: oci:$IMAGE_runtime:bookworm
driver:
  from: $drivers/\${driver.version}
EOF
  "$HWIMG" build "$d/recipe.yaml" -o "$d/L" --tag 1 --cache "$TEST_TMP/cache" >"$TEST_TMP/dockerfile.log" 2>&1 ||
    fail "hwimg build (Dockerfile): $(tail -5 "$TEST_TMP/dockerfile.log")"
  did=$plain-driver$v1
  assert_eq "$did" "$(variant_ids "$d/L" 1)" "the Dockerfile recipe's variant"
  manifest=$(layout_manifest "$d/L" "1-$did")
  assert_eq "$(driver_layer "$id1")" "$(jq -r '.layers[-1].digest' <<<"$manifest")" "the Dockerfile variant's last layer: the driver's"
  config=$(skopeo inspect --config "oci:$d/L:1-$did")
  env=$(jq -r '.config.Env[]' <<<"$config")
  grep -qx 'LD_LIBRARY_PATH=/usr/local/nvidia/lib64:/opt/kernels' <<<"$env" || fail "Dockerfile variant: LD_LIBRARY_PATH: $env"
  grep -qx 'NVIDIA_VISIBLE_DEVICES=void' <<<"$env" || fail "Dockerfile variant: no NVIDIA_VISIBLE_DEVICES=void: $env"
  assert_eq "$(jq '.layers | length' <<<"$manifest")" "$(jq '.rootfs.diff_ids | length' <<<"$config")" "Dockerfile variant: diff_ids per layer"
  assert_eq "$v1" "$(jq -r '.annotations["org.hwimg.driver.bundled"]' <<<"$manifest")" "Dockerfile variant: the annotation"
  check_layout "$d/L" 1
  explained=$("$HWIMG" build "$d/recipe.yaml" -o "$d/L" --tag 1 --explain 2>&1) || fail "hwimg build --explain (Dockerfile): $explained"
  assert_contains "$(block "$explained" "$did")" "  driver $v1 from $drivers/$v1 -> /usr/local/nvidia/lib64" "build --explain (Dockerfile)"
  assert_eq "nvml $v1 /usr/local/nvidia/lib64/libnvidia-ml.so.1
cuda $v1 /usr/local/nvidia/lib64/libcuda.so.1" "$(run_variant "$d/L" "1-$did" dockerfile)" "the Dockerfile variant under runc"
fi

echo "OK"
