#!/usr/bin/env bash
# hwimg ls, digest, delete and export against Debian's docker-registry with TLS and htpasswd,
# checked with skopeo, umoci and runc: every tag across pages, digests as skopeo computes them and
# as select picks a variant, deletes and a registry's refusal, archives docker and skopeo load.
source "$(dirname "$0")/lib.sh"
source "$(dirname "$0")/registry_lib.sh"
require_tool umoci
require_tool cc

# The template enables deletes; the second registry turns them off through distribution's
# environment override, as a registry left at its default would answer.
start_registry tls
REGISTRY_STORAGE_DELETE_ENABLED=false start_registry nodelete
export DOCKER_CONFIG="$TEST_TMP/docker"
for name in tls nodelete; do
  dir_var="REG_${name}_DIR"; dir=${!dir_var}
  hw_ok login "$(cat "$dir/address")" --username hwimg --password-stdin --ca-file "$dir/cert.pem" < "$dir/password"
done
reg=$(cat "$REG_tls_DIR/address")
reg2=$(cat "$REG_nodelete_DIR/address")
tls=(--ca-file "$REG_tls_DIR/cert.pem")
tls2=(--ca-file "$REG_nodelete_DIR/cert.pem")
certs="$TEST_TMP/certs"; mkdir -p "$certs"; cp "$REG_tls_DIR/cert.pem" "$certs/ca.crt"
skopeo_opts=(--cert-dir "$certs" --creds "hwimg:$(cat "$REG_tls_DIR/password")")
raw_digest() { echo "sha256:$(skopeo inspect --raw "${skopeo_opts[@]}" "docker://$1" | sha256sum | cut -d' ' -f1)"; }

# --no-compat: the NFD artifacts' referrers tags (sha256-<hex>) would add to the tags listed below.
step "build the hello example for five CPU levels and push it"
cp -a "$HWIMG_SOURCE_DIR/tests/data/recipes/hello" "$TEST_TMP/hello"
SOURCE_DATE_EPOCH=1700000000 "$HWIMG" build "$TEST_TMP/hello/hello.yaml" --matrix "$HWIMG_SOURCE_DIR/matrix/cpu-levels.yaml" \
  -o "$TEST_TMP/layout" --tag 1.0 -j 2 > "$TEST_TMP/build.log" 2>&1 || fail "hwimg build: $(tail -5 "$TEST_TMP/build.log")"
hw_ok push --no-compat "${tls[@]}" "oci:$TEST_TMP/layout:1.0" "$reg/tools/hello:1.0"
hw_ok tag "${tls[@]}" --format json "$reg/tools/hello:1.0" stable
assert_eq "$reg/tools/hello:stable" "$(jq -r '.references | join(" ")' <<<"$OUT")" "tag --format json: references"
assert_eq "$(raw_digest "$reg/tools/hello:1.0")" "$(jq -r .digest <<<"$OUT")" "tag --format json: digest"
expected_tags=$(printf '%s\n' 1.0 1.0-cpu-x86-64-v1 1.0-cpu-x86-64-v2 1.0-cpu-x86-64-v3 1.0-cpu-x86-64-v4 1.0-cpu-zen4 stable)

step "ls: seven tags in pages of two, each once, sorted"
# distribution 2.8.2 never pages tags/list (it ignores n and last): a proxy in front of a third
# registry pages as distribution 3 does, honouring the n the client asks for.
start_registry pages --no-tls
start_proxy proxy --upstream "$(cat "$REG_pages_DIR/address")" --paginate-tags 1000
proxy=$PROXY_ADDR
hw_ok login "$proxy" --username hwimg --password-stdin --plain-http < "$REG_pages_DIR/password"
hw_ok push --no-compat --plain-http "oci:$TEST_TMP/layout:1.0" "$proxy/tools/hello:1.0"
hw_ok tag --plain-http "$proxy/tools/hello:1.0" stable
tag_pages() { grep -c '^GET /v2/tools/hello/tags/list 200' "$TEST_TMP/proxy.log" || true; }
hw_ok ls --plain-http --page-size 2 "$proxy/tools/hello"
assert_eq "$expected_tags" "$OUT" "tags over pages of 2"
assert_eq 4 "$(tag_pages)" "pages served (7 tags, 2 a page)"
hw_ok ls --plain-http "$proxy/tools/hello"
assert_eq "$expected_tags" "$OUT" "tags in the registry's own pages"
assert_eq 5 "$(tag_pages)" "one more page without --page-size"
hw_ok ls "${tls[@]}" "$reg/tools/hello" --format json
assert_eq "$reg/tools/hello" "$(jq -r .repository <<< "$OUT")" "json repository"
assert_eq "$expected_tags" "$(jq -r '.tags[]' <<< "$OUT")" "json tags over TLS with a password"
hw_fails ls "${tls[@]}" "$reg/tools/hello:1.0"
assert_eq 2 "$STATUS" "ls of a tag is a usage mistake"
assert_contains "$OUT" "failed to list tags of $reg/tools/hello:1.0: name the repository alone" "ls of a tag"
hw_fails ls "${tls[@]}" --page-size 0 "$reg/tools/hello"
assert_eq 2 "$STATUS" "--page-size 0"

step "digest: what skopeo hashes; with --for, the variant select picks for that host"
hw_ok digest "${tls[@]}" "$reg/tools/hello:1.0"
index_digest=$(raw_digest "$reg/tools/hello:1.0")
assert_eq "$index_digest" "$OUT" "index digest"
hw_ok digest "oci:$TEST_TMP/layout:1.0"
assert_eq "$index_digest" "$OUT" "the layout's digest of the same index"
HWIMG_OVERRIDE_CPU_LEVEL=x86-64-v2 "$HWIMG" probe --format json > "$TEST_TMP/v2.json"
v2_digest=$(raw_digest "$reg/tools/hello:1.0-cpu-x86-64-v2")
hw_ok digest "${tls[@]}" "$reg/tools/hello:1.0" --for "$TEST_TMP/v2.json"
assert_eq "$v2_digest" "$OUT" "digest of the variant for an x86-64-v2 host"
hw_ok select "${tls[@]}" "$reg/tools/hello:1.0" --host "$TEST_TMP/v2.json"
assert_eq "$reg/tools/hello@$v2_digest" "$OUT" "select agrees"
hw_ok digest "${tls[@]}" "$reg/tools/hello:1.0" --for "$TEST_TMP/v2.json" --format json
assert_eq "$reg/tools/hello:1.0 $v2_digest application/vnd.oci.image.manifest.v1+json cpu-x86-64-v2" \
  "$(jq -r '"\(.reference) \(.digest) \(.mediaType) \(.variant)"' <<< "$OUT")" "json with --for"
size=$(skopeo inspect --raw "${skopeo_opts[@]}" "docker://$reg/tools/hello:1.0-cpu-x86-64-v2" | wc -c)
assert_eq "$size" "$(jq .size <<< "$OUT")" "json size"
hw_fails digest "${tls[@]}" "$reg/tools/hello:nope"
assert_eq 1 "$STATUS" "digest of a missing tag"
assert_contains "$OUT" "failed to get manifest $reg/tools/hello:nope: no tag nope in $reg/tools/hello (HTTP 404 MANIFEST_UNKNOWN); it has 1.0, " "missing tag"

step "export: a variant in both formats, read back by skopeo and umoci"
unset SOURCE_DATE_EPOCH  # the archives below are dated by it; unset, 1970-01-01
hw_ok export "${tls[@]}" "$reg/tools/hello:1.0" --for "$TEST_TMP/v2.json" --format docker-archive -o "$TEST_TMP/v2.tar"
assert_contains "$OUT" "variant cpu-x86-64-v2 ($v2_digest) to $TEST_TMP/v2.tar as docker-archive" "export summary"
assert_eq "[\"$reg/tools/hello:1.0\"]" "$(tar -xOf "$TEST_TMP/v2.tar" manifest.json | jq -c '.[0].RepoTags')" "RepoTags"
hw_ok export "${tls[@]}" "$reg/tools/hello:1.0" --variant cpu-x86-64-v3 --format oci-archive -o "$TEST_TMP/v3.tar"
tar -tf "$TEST_TMP/v3.tar" | grep -qx manifest.json && fail "an oci-archive holds manifest.json"
# Named as Docker 25 names what it saves: podman load and containerd take io.containerd.image.name.
assert_eq "1.0 $reg/tools/hello:1.0" "$(tar -xOf "$TEST_TMP/v3.tar" index.json |
  jq -r '.manifests[0].annotations | "\(.["org.opencontainers.image.ref.name"]) \(.["io.containerd.image.name"])"')" \
  "the oci-archive's tag and image name"
skopeo copy -q "docker-archive:$TEST_TMP/v2.tar" "oci:$TEST_TMP/from-docker:v2" || fail "skopeo read the docker-archive"
skopeo copy -q "oci-archive:$TEST_TMP/v3.tar" "oci:$TEST_TMP/from-oci:v3" || fail "skopeo read the oci-archive"
assert_eq "$(raw_digest "$reg/tools/hello:1.0-cpu-x86-64-v3")" \
  "sha256:$(skopeo inspect --raw "oci:$TEST_TMP/from-oci:v3" | sha256sum | cut -d' ' -f1)" "oci-archive keeps the manifest"
hw_ok export "oci:$TEST_TMP/layout:1.0" --variant cpu-x86-64-v3 --format oci-archive -o "$TEST_TMP/v3-layout.tar" \
  --tag "$reg/tools/hello:1.0"
cmp -s "$TEST_TMP/v3.tar" "$TEST_TMP/v3-layout.tar" || fail "the same variant from a layout and a registry gave different archives"
entry_times() { TZ=UTC tar --full-time -tvf "$1" | awk '{print $4, $5}' | sort -u; }  # every entry's, once
assert_eq "1970-01-01 00:00:00" "$(entry_times "$TEST_TMP/v3.tar")" "entries dated 0 without SOURCE_DATE_EPOCH"
# 1700000000 = 2023-11-14 22:13:20 UTC; the same epoch gives the same bytes, from a registry or a layout.
SOURCE_DATE_EPOCH=1700000000 hw_ok export "${tls[@]}" "$reg/tools/hello:1.0" --variant cpu-x86-64-v3 --format oci-archive \
  -o "$TEST_TMP/v3-epoch.tar"
assert_eq "2023-11-14 22:13:20" "$(entry_times "$TEST_TMP/v3-epoch.tar")" "entries dated SOURCE_DATE_EPOCH"
SOURCE_DATE_EPOCH=1700000000 hw_ok export "oci:$TEST_TMP/layout:1.0" --variant cpu-x86-64-v3 --format oci-archive \
  -o "$TEST_TMP/v3-epoch-again.tar" --tag "$reg/tools/hello:1.0"
cmp -s "$TEST_TMP/v3-epoch.tar" "$TEST_TMP/v3-epoch-again.tar" || fail "two exports with the same SOURCE_DATE_EPOCH differ"
SOURCE_DATE_EPOCH=yesterday hw_fails export "oci:$TEST_TMP/layout:1.0" --variant cpu-x86-64-v3 --format oci-archive \
  -o "$TEST_TMP/x.tar"
assert_eq 2 "$STATUS" "an invalid SOURCE_DATE_EPOCH is a usage mistake"
assert_contains "$OUT" "invalid SOURCE_DATE_EPOCH \"yesterday\": expected a non-negative number of seconds" \
  "invalid SOURCE_DATE_EPOCH"
hw_fails export "${tls[@]}" "$reg/tools/hello:1.0" --format docker-archive -o "$TEST_TMP/x.tar"
assert_eq 2 "$STATUS" "an index without --variant"
assert_contains "$OUT" "it is an index of 5 variants; choose one with --variant ID or --for FACTS.json (variants: cpu-x86-64-v1, cpu-x86-64-v2, cpu-x86-64-v3, cpu-x86-64-v4, cpu-zen4)" "variants listed"
hw_fails export "${tls[@]}" "$reg/tools/hello:1.0" --variant cpu-x86-64-v5 --format docker-archive -o "$TEST_TMP/x.tar"
assert_eq 2 "$STATUS" "unknown variant id"
assert_contains "$OUT" "no variant \"cpu-x86-64-v5\" (did you mean cpu-x86-64-v4?)" "nearest variant id"
hw_fails export "${tls[@]}" "$reg/tools/hello:nope" --variant cpu-x86-64-v1 --format docker-archive -o "$TEST_TMP/x.tar"
assert_contains "$OUT" "HTTP 404 MANIFEST_UNKNOWN" "export of a missing tag"
[ ! -e "$TEST_TMP/x.tar" ] || fail "a failed export left a file"
[ -z "$(find "$TEST_TMP" -maxdepth 1 -name '.x.tar.tmp-*')" ] || fail "a failed export left a temporary"

step "delete: a tag goes alone, its manifest and other tags stay; by digest the manifest goes with its tags"
hw_ok push "${tls[@]}" "oci:$TEST_TMP/layout:1.0" "$reg/tools/doomed:1.0"
hw_ok tag "${tls[@]}" "$reg/tools/doomed:1.0" keep
hw_ok delete "${tls[@]}" "$reg/tools/doomed:1.0"
assert_eq "deleted tag $reg/tools/doomed:1.0 (it named $index_digest; that manifest and its other tags stay)" "$OUT" \
  "delete output"
expect_failure skopeo inspect --raw "${skopeo_opts[@]}" "docker://$reg/tools/doomed:1.0"
assert_contains "$OUT" "manifest unknown" "skopeo after the delete"
# Debian's registry has no tag deletion (400 DIGEST_INVALID): a placeholder went to the tag and
# was deleted by digest, taking only that tag.
assert_eq "$index_digest" "$(raw_digest "$reg/tools/doomed:keep")" "another tag of the same index survives"
assert_eq "$index_digest" "$(raw_digest "$reg/tools/doomed@$index_digest")" "the index survives its tag"
hw_ok ls "${tls[@]}" --exclude-digest-tags "$reg/tools/doomed"
assert_eq "$(grep -v '^1.0$' <<<"$expected_tags" | grep -v '^stable$'; echo keep)" "$(sort <<<"$OUT")" "tags after deleting 1.0"
assert_eq "$v2_digest" "$(raw_digest "$reg/tools/doomed:1.0-cpu-x86-64-v2")" "a variant survives its index's tag"
hw_ok tag "${tls[@]}" "$reg/tools/doomed:1.0-cpu-x86-64-v2" v2-again
hw_ok delete "${tls[@]}" --format json "$reg/tools/doomed@$v2_digest"
assert_eq "$v2_digest manifest" "$(jq -r '.digest + " " + .deleted' <<<"$OUT")" "delete --format json"
hw_ok delete "${tls[@]}" "$reg/tools/doomed@$index_digest"
assert_eq "deleted $reg/tools/doomed@$index_digest and every tag that named it" "$OUT" "delete by digest output"
for tag in 1.0-cpu-x86-64-v2 v2-again keep; do
  expect_failure skopeo inspect --raw "${skopeo_opts[@]}" "docker://$reg/tools/doomed:$tag"
  assert_contains "$OUT" "manifest unknown" "tag $tag after deleting its manifest by digest"
done
hw_fails delete "${tls[@]}" "$reg/tools/doomed:missing"
assert_eq 1 "$STATUS" "delete of a missing tag"
assert_eq "hwimg: error: failed to delete $reg/tools/doomed:missing: no such tag (HTTP 404 MANIFEST_UNKNOWN: manifest unknown (tag missing))" \
  "$OUT" "delete of a missing tag: one line with the status and the registry's code"
hw_fails delete "${tls[@]}" "$reg/tools/doomed@$v2_digest"
assert_eq 1 "$STATUS" "delete of a deleted digest"
assert_eq "hwimg: error: failed to delete $reg/tools/doomed@$v2_digest: no such manifest (HTTP 404 MANIFEST_UNKNOWN: manifest unknown)" \
  "$OUT" "delete of a deleted digest: one line with the status and the registry's code"
hw_ok push "${tls2[@]}" "oci:$TEST_TMP/layout:1.0" "$reg2/tools/hello:1.0"
hw_fails delete "${tls2[@]}" "$reg2/tools/hello:1.0"
assert_eq 1 "$STATUS" "refused delete"
assert_contains "$OUT" "failed to delete $reg2/tools/hello:1.0: HTTP 405 UNSUPPORTED" "refusal status and code"
assert_contains "$OUT" "(the registry does not allow deletes; " "refusal explained"
hw_ok digest "${tls2[@]}" "$reg2/tools/hello:1.0"
assert_eq "$index_digest" "$OUT" "the refused tag still names its index"
hw_fails delete "${tls[@]}" "oci:$TEST_TMP/layout:1.0"
assert_eq 2 "$STATUS" "delete of a layout"
assert_no_secret "$(cat "$REG_tls_DIR/password")"

step "run the exported variants under runc; containerd imports the docker-archive"
if [ "$(id -u)" != 0 ] || ! command -v runc >/dev/null; then skip "runc needs root (everything before passed)"; fi
for pair in "from-docker:v2:cpu-x86-64-v2" "from-oci:v3:cpu-x86-64-v3"; do
  IFS=: read -r layout tag variant <<< "$pair"
  bundle="$TEST_TMP/bundle-$tag"
  umoci unpack --image "$TEST_TMP/$layout:$tag" "$bundle" > /dev/null || fail "umoci unpack $layout:$tag"
  jq '.process.terminal = false' "$bundle/config.json" > "$bundle/config.new" && mv "$bundle/config.new" "$bundle/config.json"
  ran=$(runc run --bundle "$bundle" "hwimg-tools-$$-$tag" < /dev/null) || fail "runc run $layout:$tag"
  assert_eq "hello from $variant: default-arg" "$(head -n 1 <<< "$ran")" "the exported $variant runs"
done
# Docker with the containerd image store loads through this importer (index.json and its
# io.containerd.image.name annotation).
if ! command -v containerd >/dev/null || ! command -v ctr >/dev/null; then
  skip "containerd is not installed (everything before passed)"
fi
start_containerd
ctr_ image import --snapshotter native "$TEST_TMP/v2.tar" > "$TEST_TMP/import.log" 2>&1 ||
  fail "ctr image import: $(tail -5 "$TEST_TMP/import.log")"
assert_eq "$v2_digest" "$(ctr_ image ls | awk -v r="$reg/tools/hello:1.0" '$1 == r {print $3}')" \
  "containerd's image named by the archive"
ran=$(timeout 60 ctr --address "$ctd/containerd.sock" run --rm --snapshotter native "$reg/tools/hello:1.0" "hwimg-tools-$$" 2>&1) ||
  fail "ctr run: $ran"
assert_eq "hello from cpu-x86-64-v2: default-arg" "$(head -n 1 <<< "$ran")" "containerd runs the imported variant"
echo PASS
