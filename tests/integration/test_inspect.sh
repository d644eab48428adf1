#!/usr/bin/env bash
# `hwimg inspect` on a layout and on the same image pushed to a real registry (TLS + htpasswd):
# both show the same index, variants, platforms, manifest digests, variant tags and configs; sizes
# are marked compressed; the registry copy shows the NFD artifacts push attached (issue 25);
# errors name the reference.
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

step "each variant's tag and config, sizes marked compressed, what is attached"
assert_contains "$table" "SIZE (compressed)" "size column"
zen4=$(sed -n '/^cpu-zen4 /,/^cpu-\|^$/p' <<<"$table")
assert_contains "$zen4" "
    tag oci:$out:1.0-cpu-zen4
" "the variant's tag, as the next command takes it"
assert_contains "$zen4" "
    config entrypoint [\"/opt/stencil/bin/stencil\"], user root (none set), created 2023-11-14T22:13:20Z
    env HWIMG_VARIANT=cpu-zen4
    label org.opencontainers.image.source = https://example.org/hwimg/examples/stencil
" "config summary"
assert_contains "$table" "
sizes are the layers as stored and pulled (compressed); unpacked they take more room
no referrers (signatures, SBOMs, NFD compatibility artifacts) are attached" "notes under the table"
assert_eq '["1.0-cpu-zen4"]' "$(jq -c '.variants[] | select(.variant == "cpu-zen4") | .tags' <<<"$layout_json")" "tags in JSON"
assert_eq '{"created":"2023-11-14T22:13:20Z","entrypoint":["/opt/stencil/bin/stencil"],"cmd":null,"workingDir":null,"user":null}' \
  "$(jq -c '.variants[0].imageConfig | {created, entrypoint, cmd, workingDir, user}' <<<"$layout_json")" "config in JSON"
assert_eq "$(jq '[.variants[0].layers[].size] | add' <<<"$layout_json")" "$(jq '.variants[0].layersSize' <<<"$layout_json")" "layersSize"
assert_eq '[]' "$(jq -c '[.referrers[], .variants[].referrers[]]' <<<"$layout_json")" "no referrers in the layout"

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
assert_eq "$(jq -c '[.variants[] | .tags, .imageConfig]' <<<"$layout_json")" \
  "$(jq -c '[.variants[] | .tags, .imageConfig]' <<<"$registry_json")" "registry tags and configs = layout's"
# push attaches an NFD compatibility artifact to each variant (docs/nfd.md).
assert_eq '["application/vnd.nfd.image-compatibility.v1alpha1"]' \
  "$(jq -c '[.variants[].referrers[].artifactType] | unique' <<<"$registry_json")" "referrers on the registry"
assert_eq 5 "$(jq '[.variants[].referrers[]] | length' <<<"$registry_json")" "one artifact per variant"
tag_lists_before=$(grep -c "GET /v2/stencil/tags/list" "$registry_dir/registry.log" || true)
registry_table=$("$HWIMG" inspect "$address/stencil:1.0" "${flags[@]}")
assert_contains "$registry_table" "
    tag $address/stencil:1.0-cpu-zen4
" "the variant's tag on the registry"
assert_contains "$registry_table" "    referrer sha256:$(jq -r '.variants[0].referrers[0].digest' <<<"$registry_json" | cut -c8-19) application/vnd.nfd.image-compatibility.v1alpha1" "a referrer line"
assert_eq 1 "$(( $(grep -c "GET /v2/stencil/tags/list" "$registry_dir/registry.log") - tag_lists_before ))" "one tag-list request"
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
