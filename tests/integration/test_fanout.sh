#!/usr/bin/env bash
# The fan-out flow of examples/ci/github-actions.yml, run locally against a real registry: the
# matrix "job" expands the matrix, each build "job" (its own process, its own directory, all at
# once) builds one variant with --only and pushes it, and the index "job" runs `hwimg index create`.
# The result must equal a single `hwimg build` of the same matrix pushed to another repository:
# the same index digest, variants, platforms and manifest digests.
source "$(dirname "$0")/lib.sh"
require_tool docker-registry
require_tool htpasswd
require_tool jq
require_tool make

export SOURCE_DATE_EPOCH=1700000000
TAG=3f2a9c1
recipe=$HWIMG_SOURCE_DIR/recipes/stencil.yaml

registry_dir=$TEST_TMP/registry
address=$("$HWIMG_SOURCE_DIR/registry/run-registry.sh" start "$registry_dir")
add_cleanup "'$HWIMG_SOURCE_DIR/registry/run-registry.sh' stop '$registry_dir'"
flags=(--ca-file "$registry_dir/cert.pem" --docker-config "$TEST_TMP/docker")
"$HWIMG" login "$address" --username hwimg --password-stdin "${flags[@]}" < "$registry_dir/password" >/dev/null
IMAGE=$address/stencil

step "every hwimg command the workflow runs exists"
workflow=$HWIMG_SOURCE_DIR/examples/ci/github-actions.yml
commands=$(grep -oE '(bin|build)/hwimg [a-z]+( create)?' "$workflow" | sed -E 's|^[a-z]+/hwimg ||' | sort -u)
assert_eq "build
index create
login
matrix
push" "$commands" "commands in the workflow"
while read -r command; do
  # shellcheck disable=SC2086 # "index create" is two words
  usage=$("$HWIMG" $command --help | grep '^Usage:')
  assert_contains "$usage" "hwimg $command [OPTIONS]" "hwimg $command exists"
done <<<"$commands"

step "matrix job"
MATRIX=$("$HWIMG" matrix "$HWIMG_SOURCE_DIR/matrix/cpu-levels.yaml" --format github)
mapfile -t variants < <(jq -r '.include[].variant' <<<"$MATRIX")
assert_eq "cpu-x86-64-v1 cpu-x86-64-v2 cpu-x86-64-v3 cpu-x86-64-v4 cpu-zen4" "${variants[*]}" "variants"

step "build jobs, one process per variant, all at once"
# The pushes overlap: Debian's registry (2.8.2, filesystem driver) rewrites a repository's blob
# link in place, so a manifest PUT racing another job's upload of the same shared layer may be
# answered DIGEST_INVALID + MANIFEST_BLOB_UNKNOWN; push re-checks the blobs and puts it again.
pids=()
for VARIANT in "${variants[@]}"; do
  job=$TEST_TMP/job-$VARIANT
  mkdir -p "$job"
  (
    cd "$job"
    "$HWIMG" build "$recipe" --only "$VARIANT" -o out --tag "$TAG"
    "$HWIMG" push "oci:out:$TAG-$VARIANT" "$IMAGE:$TAG-$VARIANT" "${flags[@]}"
  ) > "$job/log" 2>&1 &
  pids+=($!)
done
for i in "${!pids[@]}"; do
  wait "${pids[$i]}" || fail "build job ${variants[$i]} failed: $(cat "$TEST_TMP/job-${variants[$i]}/log")"
done

step "index job"
from=()
for variant in $(jq -r '.include[].variant' <<<"$MATRIX"); do from+=(--from "$IMAGE:$TAG-$variant"); done
created=$("$HWIMG" index create "$IMAGE:$TAG" "${from[@]}" "${flags[@]}")
[[ $created =~ ^$IMAGE:$TAG@sha256:[0-9a-f]{64}$ ]] || fail "index create printed [$created]"
json=$("$HWIMG" index create --format json "$IMAGE:$TAG" "${from[@]}" "${flags[@]}")
assert_eq "$IMAGE:$TAG@$(jq -r .digest <<<"$json")" "$created" "index create --format json: the same index"
assert_eq "${#from[@]}" "$(($(jq '.variants | length' <<<"$json") * 2))" "index create --format json: its variants"

step "a single build of the whole matrix, pushed to another repository"
"$HWIMG" build "$recipe" -o "$TEST_TMP/single" --tag "$TAG" >/dev/null
"$HWIMG" push "oci:$TEST_TMP/single:$TAG" "$address/single:$TAG" "${flags[@]}" >/dev/null

step "the same index, byte for byte"
fanout=$("$HWIMG" inspect "$IMAGE:$TAG" --format json "${flags[@]}")
single=$("$HWIMG" inspect "$address/single:$TAG" --format json "${flags[@]}")
layout=$("$HWIMG" inspect "oci:$TEST_TMP/single:$TAG" --format json)
assert_eq "$(jq -r .digest <<<"$layout")" "$(jq -r .digest <<<"$single")" "single build: registry = layout"
assert_eq "$(jq -r .digest <<<"$single")" "$(jq -r .digest <<<"$fanout")" "index digest"
assert_eq "@${created#*@}" "@$(jq -r .digest <<<"$fanout")" "the digest index create printed"
shape='[.variants[] | .variant, .digest, .platform, .annotations]'
assert_eq "$(jq -c "$shape" <<<"$single")" "$(jq -c "$shape" <<<"$fanout")" "variants, manifest digests, platforms"
assert_eq 5 "$(jq '.variants | length' <<<"$fanout")" "variant count"

step "the same selection from both indexes"
"$HWIMG" probe --format json > "$TEST_TMP/this-host.json"
shown='[.digest, .variant, [.candidates[] | .variant, .digest, .compatible, .rank, .reasons]]'
for facts in "$TEST_TMP/this-host.json" "$HWIMG_SOURCE_DIR"/tests/data/select/host-*.json; do
  set +e
  a=$("$HWIMG" select "$address/single:$TAG" --host "$facts" --format json "${flags[@]}" 2>"$TEST_TMP/select.log")
  a_status=$?
  b=$("$HWIMG" select "$IMAGE:$TAG" --host "$facts" --format json "${flags[@]}" 2>"$TEST_TMP/select.log")
  b_status=$?
  set -e
  assert_eq "$a_status" "$b_status" "select's exit code for $(basename "$facts")"
  assert_eq "$(jq -c "$shown" <<<"$a")" "$(jq -c "$shown" <<<"$b")" "selection for $(basename "$facts")"
  echo "$(basename "$facts"): $(jq -r .variant <<<"$b") (exit $b_status)"
done
[ "$(jq -r .variant <<<"$("$HWIMG" select "$IMAGE:$TAG" --host "$TEST_TMP/this-host.json" --format json "${flags[@]}")")" != null ] ||
  fail "no stencil variant selected for this machine"

step "errors name the reference"
expect_failure "$HWIMG" index create "$IMAGE:bad" --from "$address/single:$TAG" "${flags[@]}"
assert_eq "hwimg: error: --from $address/single:$TAG is in $address/single, not in $IMAGE: a registry accepts an index only when its variants are in the same repository; push the variant there first" \
  "$OUT" "another repository"
assert_eq 2 "$STATUS" "usage exit code"
expect_failure "$HWIMG" index create "$IMAGE:bad" --from "$IMAGE:$TAG" "${flags[@]}"
assert_eq "hwimg: error: failed to create the index: $IMAGE:$TAG is an image index, not a variant manifest (name one variant's tag or digest)" \
  "$OUT" "an index as --from"
v3_digest=$(jq -r '.variants[2].digest' <<<"$fanout")
expect_failure "$HWIMG" index create "$IMAGE:bad" --from "$IMAGE:$TAG-cpu-x86-64-v3" --from "$IMAGE@$v3_digest" "${flags[@]}"
assert_eq "hwimg: error: failed to create the index: variant \"cpu-x86-64-v3\" is in both $IMAGE:$TAG-cpu-x86-64-v3 and $IMAGE@$v3_digest" \
  "$OUT" "a variant twice"
expect_failure "$HWIMG" index create "$IMAGE@$v3_digest" --from "$IMAGE:$TAG-cpu-x86-64-v3" "${flags[@]}"
assert_eq "hwimg: error: failed to create the index $IMAGE@$v3_digest: name it by tag, REGISTRY/REPO:TAG" "$OUT" "index by digest"
expect_failure "$HWIMG" index create "$IMAGE:bad" --from "$IMAGE:nope" "${flags[@]}"
assert_contains "$OUT" "hwimg: error: failed to read $IMAGE:nope: " "unknown tag"
assert_contains "$OUT" "MANIFEST_UNKNOWN" "the registry's error code"
# A plain image (no hwimg labels) pushed beside the variants.
plain=$TEST_TMP/plain
mkdir -p "$plain/blobs/sha256"
put_blob() { local d; d=$(printf '%s' "$1" | sha256sum | cut -d' ' -f1); printf '%s' "$1" > "$plain/blobs/sha256/$d"; echo "$d"; }
config='{"architecture":"amd64","os":"linux","rootfs":{"diff_ids":[],"type":"layers"}}'
config_digest=$(put_blob "$config")
manifest=$(printf '{"config":{"digest":"sha256:%s","mediaType":"application/vnd.oci.image.config.v1+json","size":%d},"layers":[],"mediaType":"application/vnd.oci.image.manifest.v1+json","schemaVersion":2}' \
  "$config_digest" "${#config}")
manifest_digest=$(put_blob "$manifest")
printf '{"imageLayoutVersion":"1.0.0"}' > "$plain/oci-layout"
printf '{"schemaVersion":2,"manifests":[{"mediaType":"application/vnd.oci.image.manifest.v1+json","digest":"sha256:%s","size":%d,"annotations":{"org.opencontainers.image.ref.name":"plain"}}]}' \
  "$manifest_digest" "${#manifest}" > "$plain/index.json"
"$HWIMG" push "oci:$plain:plain" "$IMAGE:plain" "${flags[@]}" >/dev/null
expect_failure "$HWIMG" index create "$IMAGE:bad" --from "$IMAGE:$TAG-cpu-x86-64-v1" --from "$IMAGE:plain" "${flags[@]}"
assert_eq "hwimg: error: failed to create the index: $IMAGE:plain has no org.hwimg.variant label: it was not built by hwimg build (or names no variant)" \
  "$OUT" "a manifest without org.hwimg.variant"
# None of the failures wrote a tag.
expect_failure "$HWIMG" inspect "$IMAGE:bad" "${flags[@]}"
echo PASS
