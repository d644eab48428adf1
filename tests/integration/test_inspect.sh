#!/usr/bin/env bash
# `hwimg inspect` on a layout and on the same image pushed to a real registry (TLS + htpasswd):
# both show the same index, variants, platforms and manifest digests; errors name the reference.
source "$(dirname "$0")/lib.sh"
require_tool docker-registry
require_tool htpasswd
require_tool jq

export SOURCE_DATE_EPOCH=1700000000
out=$TEST_TMP/out
"$HWIMG" build "$HWIMG_SOURCE_DIR/recipes/stencil.yaml" -o "$out" --tag 1.0 >/dev/null

step "a layout, as a table and as JSON"
table=$("$HWIMG" inspect "oci:$out:1.0")
assert_contains "$table" "(5 variants)" "table header"
assert_contains "$table" "cpu-x86-64-v3" "table row"
layout_json=$("$HWIMG" inspect "oci:$out:1.0" --format json)
assert_eq "application/vnd.oci.image.index.v1+json" "$(jq -r .mediaType <<<"$layout_json")" "media type"
assert_eq "linux/amd64/v3" "$(jq -r '.variants[2].platform | "\(.os)/\(.architecture)/\(.variant)"' <<<"$layout_json")" "platform"
assert_eq 2 "$(jq '.variants[0].layers | length' <<<"$layout_json")" "layers listed"
single=$("$HWIMG" inspect "oci:$out:1.0-cpu-x86-64-v2" --format json)
assert_eq "cpu-x86-64-v2" "$(jq -r '.variants[0].variant' <<<"$single")" "a variant tag shows its manifest"

step "the same image on a registry"
registry_dir=$TEST_TMP/registry
address=$("$HWIMG_SOURCE_DIR/registry/run-registry.sh" start "$registry_dir")
add_cleanup "'$HWIMG_SOURCE_DIR/registry/run-registry.sh' stop '$registry_dir'"
flags=(--ca-file "$registry_dir/cert.pem" --docker-config "$TEST_TMP/docker")
"$HWIMG" login "$address" --username hwimg --password-stdin "${flags[@]}" < "$registry_dir/password" >/dev/null
"$HWIMG" push "oci:$out:1.0" "$address/stencil:1.0" "${flags[@]}" >/dev/null
registry_json=$("$HWIMG" inspect "$address/stencil:1.0" --format json "${flags[@]}")
assert_eq "$(jq -c '[.digest, [.variants[] | .digest, .platform, .annotations]]' <<<"$layout_json")" \
  "$(jq -c '[.digest, [.variants[] | .digest, .platform, .annotations]]' <<<"$registry_json")" "registry = layout"
assert_eq "$address/stencil:1.0" "$(jq -r .reference <<<"$registry_json")" "reference"
# Inspecting reads manifests only: the registry served no layer blob to it.
layer=$(jq -r '.variants[0].layers[0].digest' <<<"$layout_json")
if grep -q "GET /v2/stencil/blobs/$layer" "$registry_dir/registry.log"; then fail "inspect downloaded a layer"; fi

step "errors name what is missing"
expect_failure "$HWIMG" inspect "oci:$out:2.0"
assert_eq "hwimg: error: failed to inspect oci:$out:2.0: failed to resolve tag \"2.0\" in $out: no such tag (did you mean 1.0?)" \
  "$OUT" "unknown layout tag"
expect_failure "$HWIMG" inspect "$address/stencil:nope" "${flags[@]}"
assert_contains "$OUT" "hwimg: error: failed to inspect $address/stencil:nope:" "unknown registry tag"
assert_contains "$OUT" "MANIFEST_UNKNOWN" "the registry's error code"
echo PASS
