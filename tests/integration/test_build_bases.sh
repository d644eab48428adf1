#!/usr/bin/env bash
# Registry bases (issue 13) with images made from Debian's own packages (make_debian_images.sh):
# per-variant bases (`base: REG/cuda/runtime:${cuda.version}`, one a plain manifest, one a
# multi-platform index resolved per variant's level) under GPU variants whose fatbin holds exactly
# the declared targets; base layers and base.name/base.digest in every manifest; skopeo, umoci and
# runc accept the result; byte-identical rebuilds; the blob cache (no base layer fetched twice; a
# corrupted cached blob fetched again with a warning); SIGKILL in the middle of a base download
# then a rerun; one-line errors that write nothing (a missing tag, a missing platform, an
# unreachable registry). The builder image and --push have their own suites
# (test_build_bases_builder.sh, test_build_bases_push.sh).
source "$(dirname "$0")/lib.sh"
source "$(dirname "$0")/registry_lib.sh"
source "$(dirname "$0")/bases_lib.sh"

debian_images runtime big:64
main_registry

step "two CUDA runtime bases made from the Debian runtime: 12.8 a plain manifest, 13.0 an index (amd64, amd64/v3)"
# Each base adds /etc/cuda-version naming its CUDA version and the level of its platform entry, so
# a variant built on the wrong base or the wrong entry shows it when it runs.
mkdir -p "$TEST_TMP/cuda-base"
cat >"$TEST_TMP/cuda-base/matrix.yaml" <<'EOF'
axes:
  gpu: [none]
  cpu: [x86-64-v1, x86-64-v3]
EOF
for cuda in 12.8 13.0; do
  cat >"$TEST_TMP/cuda-base/$cuda.yaml" <<EOF
name: cuda-runtime
base: oci:$IMAGE_runtime:bookworm
matrix: matrix.yaml
build:
  run: echo "CUDA $cuda runtime for \${cpu.level}" > "\${out}/cuda-version"
layers:
  - {from: "\${out}/cuda-version", to: /etc/cuda-version}
config:
  env: {CUDA_VERSION: "$cuda"}
  labels: {org.example.cuda.version: "$cuda"}
EOF
  "$HWIMG" build "$TEST_TMP/cuda-base/$cuda.yaml" -o "$TEST_TMP/cuda-base/layout" --tag "$cuda" >/dev/null
done
put main "oci:$TEST_TMP/cuda-base/layout:12.8-cpu-x86-64-v1" cuda/runtime:12.8
put main "oci:$TEST_TMP/cuda-base/layout:13.0" cuda/runtime:13.0 --all
assert_eq application/vnd.oci.image.manifest.v1+json "$(raw main cuda/runtime:12.8 | jq -r .mediaType)" "12.8 is a manifest"
assert_eq "linux/amd64 linux/amd64/v3" \
  "$(raw main cuda/runtime:13.0 | jq -r '[.manifests[].platform | [.os, .architecture, .variant // empty] | join("/")] | join(" ")')" \
  "13.0's platforms"

step "GPU variants on per-variant bases: the prebuilt fatbin (sm_80 + compute_90a) copied into \${out}"
# No nvcc needed: tests/data/fatbin/zstd-sm80-compute90a.o holds exactly sm_80 and compute_90a; the
# toolkit check only needs an executable bin/nvcc under cuda_home.
app=$TEST_TMP/app
mkdir -p "$app"
cp "$HWIMG_SOURCE_DIR/tests/data/fatbin/zstd-sm80-compute90a.o" "$app/scale.o"
for cuda in 12.8 13.0; do
  mkdir -p "$app/cuda-$cuda/bin"
  printf '#!/bin/sh\necho "stub nvcc: not to be called" >&2\nexit 1\n' >"$app/cuda-$cuda/bin/nvcc"
  chmod +x "$app/cuda-$cuda/bin/nvcc"
done
cat >"$app/matrix.yaml" <<'EOF'
axes:
  cuda: ["12.8", "13.0"]
  gpu: [[sm_80, compute_90a]]
  cpu: [x86-64-v1, x86-64-v3]
cuda_home: cuda-${cuda.version}
EOF
cat >"$app/recipe.yaml" <<EOF
name: kernel
base: $reg/cuda/runtime:\${cuda.version}
matrix: matrix.yaml
build:
  run: mkdir -p "\${out}/bin" && cp scale.o "\${out}/bin/" && echo "\${variant}" > "\${out}/bin/variant"
layers:
  - {from: "\${out}/bin", to: /opt/kernel}
config:
  entrypoint: [/bin/sh, -c]
  cmd: ['cat /etc/cuda-version /opt/kernel/variant; echo "CUDA_VERSION=\$CUDA_VERSION"']
EOF
cache=$TEST_TMP/cache
mark=$(log_mark "$dir")
hw_ok build "$app/recipe.yaml" -o "$TEST_TMP/L1" --tag 1.0 -j 2 --cache "$cache" "${tls[@]}"
first_build=$(requests_since "$dir" "$mark")
L1=$TEST_TMP/L1
ids=$(variant_ids "$L1" 1.0)
assert_eq "cuda12.8-sm80_compute90a-x86-64-v1 cuda12.8-sm80_compute90a-x86-64-v3 cuda13.0-sm80_compute90a-x86-64-v1 cuda13.0-sm80_compute90a-x86-64-v3" \
  "$(echo $ids)" "variants"
base_layers=()
for id in $ids; do
  cuda=${id#cuda}; cuda=${cuda%%-*}
  level=${id##*-x86-64-}; level=x86-64-$level
  want=$(platform_manifest main "cuda/runtime:$cuda" "$level")
  want_layers=$(layers_of main "cuda/runtime@$want")
  manifest=$(layout_manifest "$L1" "1.0-$id")
  n=$(wc -w <<<"$want_layers")
  assert_eq "$want_layers" "$(jq -r --argjson n "$n" '[.layers[:$n][].digest] | join(" ")' <<<"$manifest")" \
    "$id starts with the layers of cuda/runtime:$cuda for $level"
  assert_eq $((n + 1)) "$(jq '.layers | length' <<<"$manifest")" "$id: the base's layers and its own"
  assert_eq "$reg/cuda/runtime:$cuda" "$(jq -r '.annotations["org.opencontainers.image.base.name"]' <<<"$manifest")" "$id: base.name"
  assert_eq "$want" "$(jq -r '.annotations["org.opencontainers.image.base.digest"]' <<<"$manifest")" "$id: base.digest"
  config=$(skopeo inspect --config "oci:$L1:1.0-$id")
  assert_eq "$cuda" "$(jq -r '.config.Labels["org.example.cuda.version"]' <<<"$config")" "$id: the base's label"
  assert_eq "sm_80,compute_90a" "$(jq -r '.config.Labels["org.hwimg.gpu.targets"]' <<<"$config")" "$id: device code label"
  assert_eq "$(config_of main "cuda/runtime@$want" | jq -c '.rootfs.diff_ids')" \
    "$(jq -c --argjson n "$n" '.rootfs.diff_ids[:$n]' <<<"$config")" "$id: the base's diff_ids first"
  base_layers+=($want_layers)
  # 12.8 is one manifest, made for x86-64-v1; 13.0 has an entry for each level.
  base_level=$level
  [ "$cuda" = 12.8 ] && base_level=x86-64-v1
  out=$(run_variant "$L1" "1.0-$id" "$id")
  assert_eq "CUDA $cuda runtime for $base_level
$id
CUDA_VERSION=$cuda" "$out" "$id runs on its base's /bin/sh"
done
check_layout "$L1" 1.0
mapfile -t base_layers < <(printf '%s\n' "${base_layers[@]}" | sort -u)
# The Debian layer is shared by every base; 12.8 adds one layer, 13.0 one per platform entry.
assert_eq 4 "${#base_layers[@]}" "distinct base layers"
for layer in "${base_layers[@]}"; do
  assert_eq 1 "$(grep -c "^GET /v2/cuda/runtime/blobs/$layer 200$" <<<"$first_build" || true)" "GETs of base layer $layer in the first build"
done
echo "first build: $(grep -c '^GET .*/blobs/' <<<"$first_build") blob GETs (4 layers, the rest configs)"

step "reproducible: a second build into a fresh layout gives the same index digest, fetching no base layer; a third with an empty cache too"
index=$(tag_digest "$L1" 1.0)
mark=$(log_mark "$dir")
hw_ok build "$app/recipe.yaml" -o "$TEST_TMP/L2" --tag 1.0 -j 2 --cache "$cache" --insecure   # TLS unverified
second_build=$(requests_since "$dir" "$mark")
assert_eq "$index" "$(tag_digest "$TEST_TMP/L2" 1.0)" "index digest of the second build"
assert_eq "" "$(grep -F -f <(printf '/blobs/%s \n' "${base_layers[@]}") <<<"$second_build" || true)" \
  "base layer GETs in the second build"
# Platform manifests and configs come from the cache too: only the tags are asked again.
assert_eq "GET /v2/cuda/runtime/manifests/12.8 200
GET /v2/cuda/runtime/manifests/13.0 200" "$(sort <<<"$second_build")" "the second build's requests"
# Credentials from --docker-config, not from $DOCKER_CONFIG.
DOCKER_CONFIG=$TEST_TMP/no-credentials hw_ok build "$app/recipe.yaml" -o "$TEST_TMP/L3" --tag 1.0 -j 1 \
  --cache "$TEST_TMP/cache-fresh" --docker-config "$DOCKER_CONFIG" "${tls[@]}"
assert_eq "$index" "$(tag_digest "$TEST_TMP/L3" 1.0)" "index digest with an empty cache and -j 1"
cmp -s "$L1/index.json" "$TEST_TMP/L3/index.json" || fail "index.json differs between identical builds"

step "a corrupted cached blob is fetched again, with a warning that names it"
victim=${base_layers[0]}
for layer in "${base_layers[@]}"; do  # the biggest one: the Debian rootfs
  [ "$(stat -c %s "$cache/blobs/sha256/${layer#sha256:}")" -gt "$(stat -c %s "$cache/blobs/sha256/${victim#sha256:}")" ] && victim=$layer
done
cached=$cache/blobs/sha256/${victim#sha256:}
victim_size=$(stat -c %s "$cached")
# A new file in its place (what a careless tool or a restore does), not an in-place write (below).
head -c 1000 /dev/urandom >"$TEST_TMP/garbage"
cp "$TEST_TMP/garbage" "$cached.new" && mv "$cached.new" "$cached"
mark=$(log_mark "$dir")
hw_ok build "$app/recipe.yaml" -o "$TEST_TMP/L4" --tag 1.0 -j 2 --cache "$cache" "${tls[@]}"
# Of another size than the descriptor's, so it is not even hashed (the in-place write below is).
assert_contains "$OUT" "hwimg: warning: the cached blob $victim in $cache is corrupt (it is 1000 bytes, its descriptor says $victim_size): fetching it again" "warning"
assert_eq 1 "$(grep -c "hwimg: warning:" <<<"$OUT")" "one warning"
assert_eq "GET /v2/cuda/runtime/blobs/$victim 200" "$(requests_since "$dir" "$mark" | grep -F -f <(printf '/blobs/%s \n' "${base_layers[@]}"))" \
  "the corrupt blob fetched again, and only it"
assert_eq "$index" "$(tag_digest "$TEST_TMP/L4" 1.0)" "index digest after the refetch"
assert_eq "$victim" "$(digest_of <"$cached")" "the cache holds the right bytes again"
check_layout "$TEST_TMP/L4" 1.0

step "an in-place write to a cached blob: caught by the next build; layouts built before keep their bytes"
printf 'garbage' | dd of="$cached" conv=notrunc status=none
hw_ok build "$app/recipe.yaml" -o "$TEST_TMP/L5" --tag 1.0 -j 2 --cache "$cache" "${tls[@]}"
assert_contains "$OUT" "hwimg: warning: the cached blob $victim in $cache is corrupt" "warning after an in-place write"
assert_eq "$index" "$(tag_digest "$TEST_TMP/L5" 1.0)" "index digest after the in-place corruption"
# Layouts get copies of the cache's blobs, never hard links to them.
assert_eq "$victim" "$(digest_of <"$(layout_blob "$TEST_TMP/L4" "$victim")")" "$TEST_TMP/L4's copy of $victim"
check_layout "$TEST_TMP/L4" 1.0

step "a base named without a tag is :latest, and base.name says so"
put main "oci:$IMAGE_runtime:bookworm" debian/runtime:latest --all
mkdir -p "$TEST_TMP/untagged"
echo hi >"$TEST_TMP/untagged/hi.txt"
printf 'name: untagged\nbase: %s\nlayers:\n  - {from: hi.txt, to: /hi.txt}\n' "$reg/debian/runtime" >"$TEST_TMP/untagged/recipe.yaml"
hw_ok build "$TEST_TMP/untagged/recipe.yaml" -o "$TEST_TMP/untagged/out" --tag 1 --cache "$cache" "${tls[@]}"
for id in $(variant_ids "$TEST_TMP/untagged/out" 1); do
  assert_eq "$reg/debian/runtime:latest" \
    "$(layout_manifest "$TEST_TMP/untagged/out" "1-$id" | jq -r '.annotations["org.opencontainers.image.base.name"]')" "$id: base.name"
done

step "SIGKILL while a base layer downloads, then a rerun"
stalling_proxy
big_layer=$(raw plain debian/big:64 | jq -r '.manifests[0].digest')
big_layer=$(layers_of plain "debian/big@$big_layer" | awk '{print $NF}')
mkdir -p "$TEST_TMP/killed"
echo hello >"$TEST_TMP/killed/hello.txt"
cat >"$TEST_TMP/killed/recipe.yaml" <<EOF
name: killed
base: $proxy/debian/big:64
layers:
  - {from: hello.txt, to: /opt/hello.txt}
EOF
kcache=$TEST_TMP/kill-cache
"$HWIMG" build "$TEST_TMP/killed/recipe.yaml" -o "$TEST_TMP/K" --tag 1 --cache "$kcache" --plain-http \
  >"$TEST_TMP/killed.log" 2>&1 &
build_pid=$!
for _ in $(seq 1 400); do [ -e "$port_file.stalled" ] && break; sleep 0.05; done
[ -e "$port_file.stalled" ] || fail "the base layer download never started: $(cat "$TEST_TMP/killed.log")"
partial=""
for _ in $(seq 1 100); do  # the half the proxy sent lands in a temporary file of the cache
  partial=$(find "$kcache/blobs/sha256" -name '*.tmp-*' -size +1k | head -1)
  [ -n "$partial" ] && break
  sleep 0.05
done
[ -n "$partial" ] || fail "no partial download in $kcache: $(find "$kcache" | head)"
partial_digest=sha256:$(basename "$partial" | sed -E 's/^\.([0-9a-f]{64})\.tmp-.*/\1/')
echo "killed with $(stat -c %s "$partial") bytes of $partial_digest in the cache"
kill -9 "$build_pid"
wait "$build_pid" 2>/dev/null || true
[ ! -e "$kcache/blobs/sha256/${partial_digest#sha256:}" ] || fail "the partial blob was stored under its digest"
hw_ok build "$TEST_TMP/killed/recipe.yaml" -o "$TEST_TMP/K" --tag 1 --cache "$kcache" --plain-http
check_layout "$TEST_TMP/K" 1
assert_eq "" "$(find "$kcache" -name '*.tmp-*')" "temporary files in the cache after the rerun"
for layer in "$partial_digest" "$big_layer"; do
  assert_eq "$layer" "$(digest_of <"$kcache/blobs/sha256/${layer#sha256:}")" "the cached layer $layer"
done
assert_eq "$big_layer" "$(layout_manifest "$TEST_TMP/K" 1-cpu-x86-64-v1 | jq -r '.layers[-2].digest')" "the big layer in the layout"
assert_eq 1 "$(grep -c "^stall GET" "$TEST_TMP/proxy.log")" "stalled downloads"

step "errors: one line each, nothing written"
closed_port=$(python3 -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1]); s.close()')
mkdir -p "$TEST_TMP/arm"
echo arm >"$TEST_TMP/arm/file"
printf 'axes:\n  gpu: [none]\n  cpu: [neoverse_v2]\n' >"$TEST_TMP/arm/matrix.yaml"
printf 'name: arm\nbase: scratch\nmatrix: matrix.yaml\nlayers:\n  - {from: file, to: /file}\n' >"$TEST_TMP/arm/recipe.yaml"
"$HWIMG" build "$TEST_TMP/arm/recipe.yaml" -o "$TEST_TMP/arm/layout" --tag 1 >/dev/null
put main "oci:$TEST_TMP/arm/layout:1" arm/only:index --all
put main "oci:$TEST_TMP/arm/layout:1-cpu-neoverse_v2" arm/only:manifest
ecache=$TEST_TMP/error-cache
# expect_error NAME BASE LINE: a recipe on BASE fails with exactly LINE and leaves no layout.
expect_error() {
  local recipe=$TEST_TMP/errors/$1.yaml
  mkdir -p "$TEST_TMP/errors"
  echo hi >"$TEST_TMP/errors/hi.txt"
  printf 'name: %s\nbase: %s\nlayers:\n  - {from: hi.txt, to: /hi.txt}\n' "$1" "$2" >"$recipe"
  set +e
  "$HWIMG" build "$recipe" -o "$TEST_TMP/errors/$1-out" --tag 1 --cache "$ecache" "${tls[@]}" >"$TEST_TMP/errors/stdout" 2>"$TEST_TMP/errors/stderr"
  STATUS=$?
  set -e
  cat "$TEST_TMP/errors/stdout" "$TEST_TMP/errors/stderr" >>"$ALL_OUTPUT"
  assert_eq 1 "$STATUS" "$1: exit status"
  assert_eq "${3//@RECIPE@/$recipe}" "$(cat "$TEST_TMP/errors/stderr")" "$1: the error"
  assert_eq "" "$(cat "$TEST_TMP/errors/stdout")" "$1: stdout"
  [ ! -e "$TEST_TMP/errors/$1-out" ] || fail "$1: a layout was written: $(find "$TEST_TMP/errors/$1-out" | head)"
  assert_eq "" "$(find "$ecache" -name '*.tmp-*' 2>/dev/null)" "$1: temporary files in the cache"
}
expect_error missing-tag "$reg/cuda/runtime:12.6" \
  "hwimg: error: @RECIPE@:2:7: failed to use base image $reg/cuda/runtime:12.6: failed to get manifest $reg/cuda/runtime:12.6: no tag 12.6 in $reg/cuda/runtime (HTTP 404 MANIFEST_UNKNOWN); it has 12.8, 13.0 (hwimg ls $reg/cuda/runtime)"
expect_error missing-platform "$reg/arm/only:index" \
  "hwimg: error: @RECIPE@:2:7: failed to use base image $reg/arm/only:index: it has no image for linux/amd64; it has linux/arm64/v8"
expect_error unreachable "127.0.0.1:$closed_port/debian/runtime:bookworm" \
  "hwimg: error: @RECIPE@:2:7: failed to use base image 127.0.0.1:$closed_port/debian/runtime:bookworm: failed to get manifest 127.0.0.1:$closed_port/debian/runtime:bookworm: connection failed: failed to connect to 127.0.0.1:$closed_port: Connection refused"
# The tag of one variant's base missing fails the whole build, naming that base.
sed 's/"12.8", "13.0"/"12.8", "12.6"/' "$app/matrix.yaml" >"$app/matrix-missing.yaml"
mkdir -p "$app/cuda-12.6/bin" && cp "$app/cuda-12.8/bin/nvcc" "$app/cuda-12.6/bin/"
hw_fails build "$app/recipe.yaml" --matrix "$app/matrix-missing.yaml" -o "$TEST_TMP/errors/per-variant" --tag 1 --cache "$ecache" "${tls[@]}"
# Both 12.6 variants (v1, v3) report it; the 12.8 variants may have been built meanwhile: their
# blobs stay for a rerun, but no tag names anything.
assert_eq "hwimg: error: $app/recipe.yaml:2:7: failed to use base image $reg/cuda/runtime:12.6: failed to get manifest $reg/cuda/runtime:12.6: no tag 12.6 in $reg/cuda/runtime (HTTP 404 MANIFEST_UNKNOWN); it has 12.8, 13.0 (hwimg ls $reg/cuda/runtime)" \
  "$(sort -u <<<"$OUT")" "a per-variant base tag that does not exist"
if [ -e "$TEST_TMP/errors/per-variant/index.json" ]; then
  assert_eq 0 "$(jq '.manifests | length' "$TEST_TMP/errors/per-variant/index.json")" "tags written by a failed build"
fi
# A single-platform base of another architecture: its config says arm64.
expect_error arm-manifest "$reg/arm/only:manifest" \
  "hwimg: error: @RECIPE@:2:7: failed to use base image $reg/arm/only:manifest: it is an image for linux/arm64/v8 (its config says so), not linux/amd64"

assert_no_secret "$(cat "$dir/password")"
assert_no_secret "$(cat "$REG_plain_DIR/password")"
echo PASS
