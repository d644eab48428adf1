#!/usr/bin/env bash
# hwimg select on registry references (issue 6): the same images pushed to a local TLS + htpasswd
# registry give the same digests as their layouts; an hwimg index costs one manifest GET and no
# blob; configs are fetched only for variants without hwimg annotations.
source "$(dirname "$0")/lib.sh"
source "$(dirname "$0")/registry_lib.sh"
require_tool jq

data=$HWIMG_SOURCE_DIR/tests/data/select
start_registry sel
dir=$REG_sel_DIR
reg=$(cat "$dir/address")
export DOCKER_CONFIG="$TEST_TMP/docker"
tls=(--ca-file "$dir/cert.pem")
hw_ok login "$reg" --username hwimg --password-stdin "${tls[@]}" < "$dir/password"

# sel ARGS...: runs hwimg select; stdout in $OUT, stderr in $ERR, status in $STATUS.
sel() {
  set +e
  OUT=$("$HWIMG" select "${tls[@]}" "$@" 2>"$TEST_TMP/stderr")
  STATUS=$?
  set -e
  ERR=$(cat "$TEST_TMP/stderr")
  printf '%s\n%s\n' "$OUT" "$ERR" >> "$ALL_OUTPUT"
}
layout_digest() { # layout_digest DIR TAG: the digest index.json gives TAG
  jq -r --arg t "$2" '.manifests[] | select(.annotations["org.opencontainers.image.ref.name"] == $t) | .digest' "$1/index.json"
}
# requests_since: the GETs the registry answered (not counting 401 auth challenges) since line $mark.
requests_since() { tail -n +"$((mark + 1))" "$dir/registry.log" | grep -o '"GET /v2/[^"]*" [0-9]*' | grep -v '" 401$' || true; }

step "the stencil layout and its push select the same variant and digest"
export SOURCE_DATE_EPOCH=1700000000
stencil=$TEST_TMP/stencil
"$HWIMG" build "$HWIMG_SOURCE_DIR/recipes/stencil.yaml" -o "$stencil" --tag 1.0 -j 2 > /dev/null
"$HWIMG" probe > "$TEST_TMP/host.json"
hw_ok push "${tls[@]}" "oci:$stencil:1.0" "$reg/demo/stencil:1.0"
sel --host "$TEST_TMP/host.json" "oci:$stencil:1.0"
assert_eq 0 "$STATUS" "layout select: $ERR"
tag=${OUT#oci:$stencil:}
mark=$(wc -l < "$dir/registry.log")
sel --host "$TEST_TMP/host.json" "$reg/demo/stencil:1.0"
assert_eq 0 "$STATUS" "registry select: $ERR"
assert_eq "$reg/demo/stencil@$(layout_digest "$stencil" "$tag")" "$OUT" "registry reference of the same variant"
gets=$(requests_since)
assert_eq 1 "$(grep -c '/manifests/' <<<"$gets")" "manifest GETs for an hwimg index"
assert_eq 0 "$(grep -c '/blobs/' <<<"$gets" || true)" "blob GETs for an hwimg index"
sel --host "$TEST_TMP/host.json" --format json "$reg/demo/stencil@$(layout_digest "$stencil" 1.0)"
assert_eq "$reg/demo/stencil@$(layout_digest "$stencil" "$tag")" "$(jq -r .reference <<<"$OUT")" "by index digest"

step "GPU fixtures: layout and registry agree"
make_layout "$TEST_TMP/gpu" 1.0 "$data/gpu-variants.json" > /dev/null
hw_ok push "${tls[@]}" "oci:$TEST_TMP/gpu:1.0" "$reg/demo/gpu:1.0"
for host in h100-580 h100-535; do
  sel --host "$data/host-$host.json" --format json "oci:$TEST_TMP/gpu:1.0"
  from_layout=$(jq -r .digest <<<"$OUT")
  sel --host "$data/host-$host.json" --format json "$reg/demo/gpu:1.0"
  assert_eq "$from_layout" "$(jq -r .digest <<<"$OUT")" "digest on $host"
  assert_eq "$reg/demo/gpu@$from_layout" "$(jq -r .reference <<<"$OUT")" "reference on $host"
done
sel --host "$data/host-no-gpu.json" "$reg/demo/gpu:1.0"
assert_eq 3 "$STATUS" "GPU-only index, no GPU"
assert_eq 4 "$(grep -c 'needs an NVIDIA GPU; host has no NVIDIA driver' <<<"$ERR")" "reasons"

step "images made by others: configs fetched only for variants without hwimg annotations"
make_layout "$TEST_TMP/cuda" 12.6 "$data/nvidia-cuda-images.json" > /dev/null
hw_ok push "${tls[@]}" "oci:$TEST_TMP/cuda:12.6" "$reg/demo/cuda:12.6"
mark=$(wc -l < "$dir/registry.log")
sel --host "$data/host-h100-535.json" "$reg/demo/cuda:12.6"
assert_eq "$reg/demo/cuda@$(layout_digest "$TEST_TMP/cuda" 12.6-amd64)" "$OUT" "NVIDIA-style image on R535"
gets=$(requests_since)
assert_eq 2 "$(grep -c '/blobs/' <<<"$gets")" "one config GET per variant without annotations"
sel --host "$data/host-arm64.json" "$reg/demo/cuda:12.6"
assert_eq "$reg/demo/cuda@$(layout_digest "$TEST_TMP/cuda" 12.6-arm64)" "$OUT" "arm64 host"

step "a single-manifest image is judged the same way"
sel --host "$data/host-h100-535.json" "$reg/demo/cuda:12.6-amd64"
assert_eq "$reg/demo/cuda@$(layout_digest "$TEST_TMP/cuda" 12.6-amd64)" "$OUT" "single manifest"
sel --host "$data/host-arm64.json" "$reg/demo/cuda:12.6-amd64"
assert_eq 3 "$STATUS" "single amd64 manifest on arm64"
assert_contains "$ERR" "built for linux/amd64; host is linux/arm64" "reason"

step "errors"
sel --host "$data/host-no-gpu.json" "$reg/demo/missing:1.0"
assert_eq 1 "$STATUS" "missing repository"
assert_contains "$ERR" "hwimg: error:" "error line"
assert_no_secret "$(cat "$dir/password")"
echo "PASS"
