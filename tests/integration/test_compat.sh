#!/usr/bin/env bash
# NFD image-compatibility artifacts (docs/nfd.md): hwimg push and build --push attach one per variant
# through the referrers tag schema on Debian's docker-registry (TLS + htpasswd), found again by
# skopeo and curl as oras would, valid against NFD's types, never duplicated; --no-compat attaches none.
source "$(dirname "$0")/lib.sh"
source "$(dirname "$0")/registry_lib.sh"

tls_registry
hw_ok login "$reg" --username hwimg --password-stdin "${tls[@]}" <<< "$password"
raw() { skopeo inspect --raw --cert-dir "$certs" --creds "hwimg:$password" "docker://$1"; }
blob() { curl -sSf --cacert "$dir/cert.pem" -u "hwimg:$password" "https://$reg/v2/$1/blobs/$2"; }
nfd_type=application/vnd.nfd.image-compatibility.v1alpha1
export SOURCE_DATE_EPOCH=1700000000

step "build the stencil example (two variants) and push it: one artifact per variant"
layout="$TEST_TMP/out"
"$HWIMG" build "$HWIMG_SOURCE_DIR/recipes/stencil.yaml" -o "$layout" --tag 1.0 -j 2 \
  --only cpu-x86-64-v1 --only cpu-x86-64-v3 > "$TEST_TMP/build.log" || fail "build: $(cat "$TEST_TMP/build.log")"
hw_ok push "${tls[@]}" "oci:$layout:1.0" "$reg/demo/stencil:1.0"
assert_contains "$OUT" "; 2 compat artifacts attached;" "push summary"
index=$(raw "$reg/demo/stencil:1.0")
variants=$(jq -r '.manifests[].digest' <<<"$index")
assert_eq 2 "$(wc -l <<<"$variants")" "variants in the index"

step "the registry has no referrers API (404), so each variant's sha256-<hex> tag lists its artifact once"
first=$(head -1 <<<"$variants")
status=$(curl -s -o /dev/null -w '%{http_code}' --cacert "$dir/cert.pem" -u "hwimg:$password" \
  "https://$reg/v2/demo/stencil/referrers/$first")
assert_eq 404 "$status" "referrers API of Debian's registry"
for digest in $variants; do
  id=$(jq -r --arg d "$digest" '.manifests[] | select(.digest == $d) | .annotations["org.hwimg.variant"]' <<<"$index")
  referrers=$(raw "$reg/demo/stencil:sha256-${digest#sha256:}")
  assert_eq application/vnd.oci.image.index.v1+json "$(jq -r .mediaType <<<"$referrers")" "referrers index of $id"
  assert_eq 1 "$(jq --arg t "$nfd_type" '[.manifests[] | select(.artifactType == $t)] | length' <<<"$referrers")" \
    "NFD artifacts listed for $id"
  artifact=$(jq -r '.manifests[0].digest' <<<"$referrers")
  manifest=$(raw "$reg/demo/stencil@$artifact")
  assert_eq "$nfd_type" "$(jq -r .artifactType <<<"$manifest")" "artifactType of $id's artifact"
  assert_eq "$digest" "$(jq -r .subject.digest <<<"$manifest")" "subject of $id's artifact"
  assert_eq "application/vnd.oci.empty.v1+json {}" \
    "$(jq -r .config.mediaType <<<"$manifest") $(blob demo/stencil "$(jq -r .config.digest <<<"$manifest")")" "config"
  assert_eq "application/vnd.nfd.image-compatibility.spec.v1alpha1+yaml" \
    "$(jq -r '.layers[] | .mediaType' <<<"$manifest")" "the one layer of $id's artifact"

  # The YAML layer round-trips: the blob is what compat show prints.
  blob demo/stencil "$(jq -r '.layers[0].digest' <<<"$manifest")" > "$TEST_TMP/$id.yaml"
  "$HWIMG" compat show "${tls[@]}" "$reg/demo/stencil:1.0" --variant "$id" > "$TEST_TMP/$id.shown" ||
    fail "compat show --variant $id"
  cmp -s "$TEST_TMP/$id.yaml" "$TEST_TMP/$id.shown" || fail "compat show differs from the stored layer of $id"
  level=${id#cpu-x86-64-v}
  grep -qxF "        X86_64_V$level: {op: Exists}" "$TEST_TMP/$id.yaml" || fail "$id's spec lacks X86_64_V$level"
done
cp "$TEST_TMP/cpu-x86-64-v3.yaml" "$TEST_TMP/spec-cpu.yaml"

step "compat show of the index prints both, and JSON"
hw_ok compat show "${tls[@]}" "$reg/demo/stencil:1.0"
assert_eq 2 "$(grep -c '^--- # variant ' <<<"$OUT")" "documents in compat show's YAML stream"
hw_ok compat show "${tls[@]}" "$reg/demo/stencil:1.0" --format json
assert_eq "cpu-x86-64-v1 cpu-x86-64-v3" "$(jq -r '[.[].variant] | join(" ")' <<<"$OUT")" "JSON variants"
hw_fails compat show "${tls[@]}" "$reg/demo/stencil:1.0" --variant cpu-x86-64-v9
assert_eq 2 "$STATUS" "exit status for an unknown variant"
assert_contains "$OUT" "no variant \"cpu-x86-64-v9\"" "unknown variant"

step "pushing again keeps one referrer per variant and writes nothing"
before=$(for d in $variants; do raw "$reg/demo/stencil:sha256-${d#sha256:}" | sha256sum; done)
mark=$(log_mark "$dir")
hw_ok push "${tls[@]}" "oci:$layout:1.0" "$reg/demo/stencil:1.0"
assert_contains "$OUT" "; 2 compat artifacts attached;" "second push summary"
assert_eq "" "$(requests_since "$dir" "$mark" | grep -v '^HEAD \|^GET ' || true)" "writes of an unchanged push"
after=$(for d in $variants; do raw "$reg/demo/stencil:sha256-${d#sha256:}" | sha256sum; done)
assert_eq "$before" "$after" "referrers indexes after the second push"

step "the artifacts go up with the image: blobs beside its blobs, manifests beside the index"
mark=$(log_mark "$dir")
hw_ok push "${tls[@]}" "oci:$layout:1.0" "$reg/demo/together:1.0"
assert_contains "$OUT" "; 2 compat artifacts attached;" "push to a new repository"
requests_since "$dir" "$mark" > "$TEST_TMP/together.log"
# Each variant: its artifact manifest put by digest, its referrers tag written once.
for digest in $variants; do
  assert_eq 1 "$(grep -c "^PUT /v2/demo/together/manifests/sha256-${digest#sha256:} 201" "$TEST_TMP/together.log")" \
    "one write of ${digest}'s referrers tag"
done
assert_eq 2 "$(grep -c '^PUT /v2/demo/together/manifests/sha256:[0-9a-f]* 201' "$TEST_TMP/together.log")" \
  "artifact manifests put by digest"
# The referrers tag is written after both the variant and its artifact are stored (the artifact may
# go first: a registry must take a referrer before its subject), so it never names a missing manifest.
for digest in $variants; do
  id=$(jq -r --arg d "$digest" '.manifests[] | select(.digest == $d) | .annotations["org.hwimg.variant"]' <<<"$index")
  artifact=$(raw "$reg/demo/together:sha256-${digest#sha256:}" | jq -r '.manifests[0].digest')
  at() { grep -n "^PUT /v2/demo/together/manifests/$1 201" "$TEST_TMP/together.log" | cut -d: -f1; }
  variant_at=$(at "1.0-$id") artifact_at=$(at "$artifact") tag_at=$(at "sha256-${digest#sha256:}")
  [ -n "$variant_at" ] && [ -n "$artifact_at" ] && [ -n "$tag_at" ] || fail "writes for $id missing"
  [ "$tag_at" -gt "$variant_at" ] && [ "$tag_at" -gt "$artifact_at" ] ||
    fail "referrers tag of $id written (line $tag_at) before its variant ($variant_at) or artifact ($artifact_at)"
done

step "a registry that refuses manifests with a subject: the image is pushed, each artifact a warning"
start_registry plain --no-tls --no-auth
start_proxy refusing --upstream "$(cat "$REG_plain_DIR/address")" --refuse-subject
hw push --plain-http "oci:$layout:1.0" "$PROXY_ADDR/demo/refused:1.0"
assert_eq 0 "$STATUS" "exit status when the artifacts are refused ($OUT)"
assert_eq 2 "$(grep -c '^hwimg: warning: failed to push referrer sha256:[0-9a-f]* of sha256:[0-9a-f]*: HTTP 400 MANIFEST_INVALID' <<<"$OUT")" \
  "one warning per refused artifact"
assert_contains "$OUT" "; 0 compat artifacts attached;" "refused artifacts are not counted"
assert_eq "$(raw "$reg/demo/stencil:1.0")" \
  "$(skopeo inspect --raw --tls-verify=false "docker://$(cat "$REG_plain_DIR/address")/demo/refused:1.0")" "the image itself"
assert_eq 2 "$(grep -c '^refuse-subject PUT' "$TEST_TMP/refusing.log")" "artifacts the proxy refused"

step "a registry that answers OCI-Subject lists the referrers itself: no referrers tag is written"
start_proxy indexing --upstream "$(cat "$REG_plain_DIR/address")" --oci-subject
hw_ok push --plain-http "oci:$layout:1.0" "$PROXY_ADDR/demo/indexed:1.0"
assert_contains "$OUT" "; 2 compat artifacts attached;" "artifacts on a registry with the referrers API"
assert_eq 2 "$(grep -c '^oci-subject PUT /v2/demo/indexed/manifests/sha256:' "$TEST_TMP/indexing.log")" \
  "artifact manifests the registry indexed"
if grep -q '^PUT /v2/demo/indexed/manifests/sha256-' "$TEST_TMP/indexing.log"; then
  fail "a referrers tag was written although the registry answered OCI-Subject"
fi

step "ls lists the referrers tags; --exclude-digest-tags leaves them out"
hw_ok ls "${tls[@]}" "$reg/demo/stencil"
assert_eq 2 "$(grep -c '^sha256-[0-9a-f]\{64\}$' <<<"$OUT")" "referrers tags listed"
all_tags=$OUT
hw_ok ls "${tls[@]}" --exclude-digest-tags "$reg/demo/stencil"
assert_eq "$(grep -v '^sha256-' <<<"$all_tags")" "$OUT" "the other tags, unchanged"

step "--no-compat attaches none"
hw_ok push "${tls[@]}" --no-compat "oci:$layout:1.0" "$reg/demo/plain:1.0"
assert_contains "$OUT" "; 0 compat artifacts attached;" "--no-compat summary"
tags=$(skopeo list-tags --cert-dir "$certs" --creds "hwimg:$password" "docker://$reg/demo/plain" | jq -r '.Tags[]')
[ -z "$(grep '^sha256-' <<<"$tags")" ] || fail "--no-compat left referrers tags: $tags"
hw_fails compat show "${tls[@]}" "$reg/demo/plain:1.0" --variant cpu-x86-64-v1
assert_contains "$OUT" "it has none" "compat show without artifacts"

step "build --push attaches them too; a GPU variant's spec names NVIDIA's PCI vendor and hwimg's labels"
"$HWIMG" build "$HWIMG_SOURCE_DIR/recipes/stencil.yaml" --push "$reg/demo/built:1.0" "${tls[@]}" \
  --only cpu-x86-64-v3 > "$TEST_TMP/build-push.log" || fail "build --push: $(cat "$TEST_TMP/build-push.log")"
assert_contains "$(cat "$TEST_TMP/build-push.log")" "; 1 compat artifacts attached;" "build --push summary"
built=$(raw "$reg/demo/built:1.0" | jq -r '.manifests[0].digest')
raw "$reg/demo/built:sha256-${built#sha256:}" | jq -e --arg t "$nfd_type" '.manifests[0].artifactType == $t' >/dev/null ||
  fail "build --push attached no NFD artifact"
gpu="$TEST_TMP/gpu"
make_layout "$gpu" 1.0 --gpu-matrix 2 >/dev/null
hw_ok push "${tls[@]}" "oci:$gpu:1.0" "$reg/demo/gpu:1.0"
gpu_id=$(raw "$reg/demo/gpu:1.0" | jq -r '[.manifests[] | select(.annotations["org.hwimg.gpu.targets"])][0].annotations["org.hwimg.variant"]')
"$HWIMG" compat show "${tls[@]}" "$reg/demo/gpu:1.0" --variant "$gpu_id" > "$TEST_TMP/spec-gpu.yaml" || fail "compat show $gpu_id"
grep -qF 'vendor: {op: In, value: ["10de"]}' "$TEST_TMP/spec-gpu.yaml" || fail "no NVIDIA PCI vendor in $gpu_id's spec"
grep -qF 'hwimg.org/nvidia.cuda: {op: Ge, value: [' "$TEST_TMP/spec-gpu.yaml" || fail "no CUDA rule in $gpu_id's spec"
grep -qF 'matchName: {op: In, value: ["hwimg.org/nvidia.gpu.compute-capability.' "$TEST_TMP/spec-gpu.yaml" ||
  fail "no compute capability rule in $gpu_id's spec"

step "the specs validate against NFD's Go types (tests/fixtures/nfd-image-compatibility.schema.json)"
python3 -c 'import yaml, jsonschema' 2>/dev/null || skip "python3-yaml and python3-jsonschema are not installed"
python3 - "$HWIMG_SOURCE_DIR/tests/fixtures/nfd-image-compatibility.schema.json" "$TEST_TMP/spec-cpu.yaml" \
  "$TEST_TMP/spec-gpu.yaml" <<'PY' || fail "a spec does not validate against NFD's types"
import json, sys, yaml, jsonschema
schema = json.load(open(sys.argv[1]))
for path in sys.argv[2:]:
    # YAML 1.1 like sigs.k8s.io/yaml: an unquoted 0300 or 12.8 would be a number, which the schema's
    # string values (NFD's MatchValue) refuse.
    jsonschema.validate(yaml.safe_load(open(path)), schema)
print("validated", len(sys.argv) - 2, "specs")
PY
assert_no_secret "$password"
echo "PASS"
