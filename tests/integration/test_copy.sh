#!/usr/bin/env bash
# hwimg copy between repositories, registries and layouts (Debian's docker-registry with TLS and
# htpasswd), with only the variants named or those that run on given hosts; checked with skopeo and
# the registries' own logs (mounts, not transfers, within one registry).
source "$(dirname "$0")/lib.sh"
source "$(dirname "$0")/registry_lib.sh"
require_tool umoci

start_registry one
start_registry two
one=$(cat "$REG_one_DIR/address")
two=$(cat "$REG_two_DIR/address")
export DOCKER_CONFIG="$TEST_TMP/docker"
mkdir -p "$DOCKER_CONFIG"
auth() { printf 'hwimg:%s' "$(cat "$1/password")" | base64 -w0; }
jq -n --arg a "$one" --arg b "$two" --arg x "$(auth "$REG_one_DIR")" --arg y "$(auth "$REG_two_DIR")" \
  '{auths: {($a): {auth: $x}, ($b): {auth: $y}}}' >"$DOCKER_CONFIG/config.json"
chmod 600 "$DOCKER_CONFIG/config.json"
cat "$REG_one_DIR/cert.pem" "$REG_two_DIR/cert.pem" >"$TEST_TMP/ca.pem"
tls=(--ca-file "$TEST_TMP/ca.pem")
sk() { # sk REGISTRY-DIR: skopeo's TLS and credential flags for that registry
  mkdir -p "$1/certs"; cp "$1/cert.pem" "$1/certs/ca.crt"
  echo "--cert-dir $1/certs --creds hwimg:$(cat "$1/password")"
}
sk_one=$(sk "$REG_one_DIR"); sk_two=$(sk "$REG_two_DIR")
raw() { skopeo inspect --raw $1 "docker://$2"; }  # raw SKOPEO-FLAGS REF
data="$HWIMG_SOURCE_DIR/tests/data/select"
compatible() { "$HWIMG" select --host "$1" --format json "oci:$layout:v1" 2>/dev/null | jq -r '.candidates[] | select(.compatible) | .variant'; }

layout="$TEST_TMP/layout"
index_digest=$(make_layout "$layout" v1 --gpu-matrix 32)
hw_ok push "${tls[@]}" "oci:$layout:v1" "$one/src/app:v1"
variant_digest() { jq -r --arg v "$1" '.manifests[] | select(.annotations["org.hwimg.variant"] == $v) | .digest' \
  "$layout/blobs/sha256/${index_digest#sha256:}"; }

step "--variant within one registry: a reduced index of unchanged manifests, every blob mounted"
mark=$(log_mark "$REG_one_DIR")
hw_ok copy "${tls[@]}" "$one/src/app:v1" "$one/mirror/app" --variant cuda12.8-sm90-x86-64-v3 --variant cuda12.8-sm100-x86-64-v1
assert_contains "$OUT" "copied $one/src/app:v1 to $one/mirror/app:v1@sha256:" "summary line"
# 4 of the image and 3 of the two NFD artifacts push attached (their shared config, two specs).
assert_contains "$OUT" "2 of 32 variants; blobs: 7 mounted, 0 streamed from the source registry, 0 uploaded" "mounts"
assert_contains "$OUT" "; 3 tags; 2 referrers" "the variants' referrers came along"
index=$(raw "$sk_one" "$one/mirror/app:v1")
assert_eq "cuda12.8-sm90-x86-64-v3 cuda12.8-sm100-x86-64-v1" "$(jq -r '[.manifests[].annotations["org.hwimg.variant"]] | join(" ")' <<<"$index")" "variants kept, in index order"
for v in cuda12.8-sm90-x86-64-v3 cuda12.8-sm100-x86-64-v1; do
  assert_eq "$(variant_digest "$v")" "$(jq -r --arg v "$v" '.manifests[] | select(.annotations["org.hwimg.variant"] == $v) | .digest' <<<"$index")" "$v digest unchanged"
  assert_eq "$(variant_digest "$v")" "sha256:$(raw "$sk_one" "$one/mirror/app:v1-$v" | sha256sum | cut -d' ' -f1)" "tag v1-$v"
done
requests=$(requests_since "$REG_one_DIR" "$mark")
assert_eq 0 "$(grep -c 'GET /v2/[^ ]*/blobs/' <<<"$requests" || true)" "blob downloads within one registry"
assert_eq 7 "$(grep -c 'POST /v2/mirror/app/blobs/uploads/?.*mount=.* 201$' <<<"$requests" || true)" "mounts seen by the registry"
for v in cuda12.8-sm90-x86-64-v3 cuda12.8-sm100-x86-64-v1; do
  d=$(variant_digest "$v")
  listed=$(raw "$sk_one" "$one/mirror/app:sha256-${d#sha256:}")
  assert_eq "application/vnd.nfd.image-compatibility.v1alpha1" "$(jq -r '.manifests[].artifactType' <<<"$listed")" "$v: its NFD artifact listed under the referrers tag"
  hw_ok compat show "${tls[@]}" "$one/src/app:v1" --variant "$v"
  want_spec=$OUT
  hw_ok compat show "${tls[@]}" "$one/mirror/app:v1" --variant "$v"
  assert_eq "$want_spec" "$OUT" "$v: the same NFD spec at the destination"
done
skopeo copy -q --all --src-cert-dir "$REG_one_DIR/certs" --src-creds "hwimg:$(cat "$REG_one_DIR/password")" \
  "docker://$one/mirror/app:v1" "oci:$TEST_TMP/skopeo-back:v1" || fail "skopeo could not copy the reduced index"

step "--for: every variant that runs on one of the hosts"
want=$( (compatible "$data/host-h100-580.json"; compatible "$data/host-mixed-580.json") | sort -u)
[ -n "$want" ] || fail "the fixture hosts run no variant"
hw_ok copy "${tls[@]}" "$one/src/app:v1" "$one/fleet/app:gpu" --for "$data/host-h100-580.json" --for "$data/host-mixed-580.json"
got=$(raw "$sk_one" "$one/fleet/app:gpu" | jq -r '.manifests[].annotations["org.hwimg.variant"]' | sort)
assert_eq "$want" "$got" "variants for the two hosts"

step "no filter: the index is copied byte for byte"
hw_ok copy "${tls[@]}" --format json "$one/src/app:v1" "$one/whole/app"
assert_eq "$index_digest" "$(jq -r .digest <<<"$OUT")" "digest in the JSON summary"
assert_eq "32 32" "$(jq -r '"\(.variants.kept) \(.variants.total)"' <<<"$OUT")" "variant counts"
assert_eq "$index_digest" "sha256:$(raw "$sk_one" "$one/whole/app:v1" | sha256sum | cut -d' ' -f1)" "same index digest"

step "to another registry: blobs streamed through, the second copy finds them there"
hw_ok copy "${tls[@]}" "$one/src/app:v1" "$two/other/app:v7" --variant cuda12.8-sm90-x86-64-v3
assert_contains "$OUT" "1 of 32 variants; blobs: 0 mounted, 4 streamed from the source registry" "streamed"
assert_contains "$OUT" "; 1 referrers" "the referrer streamed too"
assert_eq "$(variant_digest cuda12.8-sm90-x86-64-v3)" "sha256:$(raw "$sk_two" "$two/other/app:v7-cuda12.8-sm90-x86-64-v3" | sha256sum | cut -d' ' -f1)" "variant on the second registry"
hw_ok copy "${tls[@]}" "$one/src/app:v1" "$two/other/app:v7" --variant cuda12.8-sm90-x86-64-v3
assert_contains "$OUT" "blobs: 0 mounted, 0 streamed from the source registry, 0 uploaded, 4 already there" "rerun"
d=$(variant_digest cuda12.8-sm90-x86-64-v3)
assert_eq 1 "$(raw "$sk_two" "$two/other/app:sha256-${d#sha256:}" | jq '.manifests | length')" "a rerun lists the referrer once"

step "registry to layout and back: skopeo and umoci accept it, digests agree"
hw_ok copy "${tls[@]}" "$one/src/app:v1" "oci:$TEST_TMP/out:mirror" --variant cuda12.8-sm100-x86-64-v1 --variant cuda12.8-sm90-x86-64-v3
reduced=$(raw "$sk_one" "$one/mirror/app:v1" | sha256sum | cut -d' ' -f1)
assert_contains "$OUT" "to oci:$TEST_TMP/out:mirror@sha256:" "layout summary"
assert_contains "$OUT" "; 2 referrers" "the kept variants' referrers came into the layout"
skopeo inspect "oci:$TEST_TMP/out:mirror-cuda12.8-sm100-x86-64-v1" >/dev/null || fail "skopeo cannot read the variant"
tags=$(cd "$TEST_TMP" && umoci ls --layout out) || fail "umoci cannot read the layout"
assert_eq "mirror mirror-cuda12.8-sm100-x86-64-v1 mirror-cuda12.8-sm90-x86-64-v3" "$(sort <<<"$tags" | xargs)" \
  "umoci lists the tags, untagged referrers left out"
skopeo copy -q --all "oci:$TEST_TMP/out:mirror" "oci:$TEST_TMP/out-skopeo:mirror" || fail "skopeo cannot copy the layout with referrers"
nfd=application/vnd.nfd.image-compatibility.v1alpha1
untagged() { jq -c '[.manifests[] | select(.annotations["org.opencontainers.image.ref.name"] == null)]' "$1/index.json"; }
blob_in() { echo "$1/blobs/sha256/${2#sha256:}"; }  # blob_in LAYOUT DIGEST
artifact_in() { # artifact_in LAYOUT VARIANT: the digest of the untagged manifest whose subject is that variant
  for a in $(untagged "$1" | jq -r '.[].digest'); do
    [ "$(jq -r .subject.digest "$(blob_in "$1" "$a")")" = "$(variant_digest "$2")" ] && echo "$a"
  done
}
listed=$(untagged "$TEST_TMP/out")
assert_eq 2 "$(jq length <<<"$listed")" "index.json lists one untagged descriptor per kept variant"
assert_eq "$nfd $nfd" "$(jq -r '[.[].artifactType] | join(" ")' <<<"$listed")" "each carries the NFD artifactType"
for a in $(jq -r '.[].digest' <<<"$listed"); do
  for b in "$a" $(jq -r '(.config, .layers[]) | .digest' "$(blob_in "$TEST_TMP/out" "$a")"); do
    assert_eq "${b#sha256:}" "$(sha256sum <"$(blob_in "$TEST_TMP/out" "$b")" | cut -d' ' -f1)" "artifact $a: blob $b matches its digest"
  done
done
for v in cuda12.8-sm90-x86-64-v3 cuda12.8-sm100-x86-64-v1; do
  d=$(variant_digest "$v")
  assert_eq "$(raw "$sk_one" "$one/src/app:sha256-${d#sha256:}" | jq -r '.manifests[].digest')" "$(artifact_in "$TEST_TMP/out" "$v")" \
    "$v: the source's artifact, unchanged, with the variant as its subject"
done
cp "$TEST_TMP/out/index.json" "$TEST_TMP/out-index.json"
hw_ok copy "${tls[@]}" "$one/src/app:v1" "oci:$TEST_TMP/out:mirror" --variant cuda12.8-sm100-x86-64-v1 --variant cuda12.8-sm90-x86-64-v3
assert_contains "$OUT" "; 0 blobs copied" "a rerun copies nothing"
cmp "$TEST_TMP/out-index.json" "$TEST_TMP/out/index.json" || fail "a rerun changed index.json: $(cat "$TEST_TMP/out/index.json")"
hw_ok copy "${tls[@]}" "oci:$TEST_TMP/out:mirror" "$two/back/app:v1"
assert_contains "$OUT" "; 2 referrers" "the layout's referrers went to the registry"
assert_eq "sha256:$(raw "$sk_two" "$two/back/app:v1" | sha256sum | cut -d' ' -f1)" \
  "$(jq -r '.manifests[] | select(.annotations["org.opencontainers.image.ref.name"] == "mirror") | .digest' "$TEST_TMP/out/index.json")" \
  "layout index pushed unchanged"
for v in cuda12.8-sm90-x86-64-v3 cuda12.8-sm100-x86-64-v1; do
  d=$(variant_digest "$v")
  assert_eq "$(artifact_in "$TEST_TMP/out" "$v")" "$(raw "$sk_two" "$two/back/app:sha256-${d#sha256:}" | jq -r '.manifests[].digest')" \
    "$v: the referrers tag of the registry copy lists the layout's artifact"
done
hw_ok compat show "${tls[@]}" "$one/src/app:v1" --variant cuda12.8-sm90-x86-64-v3
want_spec=$OUT
hw_ok compat show "${tls[@]}" "$two/back/app:v1" --variant cuda12.8-sm90-x86-64-v3
assert_eq "$want_spec" "$OUT" "the NFD spec survives registry, layout, registry"
hw_ok compat show "oci:$TEST_TMP/out:mirror" --variant cuda12.8-sm90-x86-64-v3
assert_eq "$want_spec" "$OUT" "compat show reads the artifact the layout keeps"
hw_ok copy "oci:$TEST_TMP/out:mirror" "oci:$TEST_TMP/one-variant:v1" --variant cuda12.8-sm90-x86-64-v3
assert_contains "$OUT" "; 1 referrers" "layout to layout with --variant: the kept variant's referrer only"
assert_eq 1 "$(untagged "$TEST_TMP/one-variant" | jq length)" "one untagged descriptor"
assert_eq "$(artifact_in "$TEST_TMP/out" cuda12.8-sm90-x86-64-v3)" "$(artifact_in "$TEST_TMP/one-variant" cuda12.8-sm90-x86-64-v3)" \
  "the kept variant's artifact, unchanged"
# hwimg push takes the referrers a layout holds along too (--no-compat: none made anew).
hw_ok push --no-compat "${tls[@]}" "oci:$TEST_TMP/one-variant:v1" "$two/pushed/app:v1"
d=$(variant_digest cuda12.8-sm90-x86-64-v3)
assert_eq "$(artifact_in "$TEST_TMP/out" cuda12.8-sm90-x86-64-v3)" \
  "$(raw "$sk_two" "$two/pushed/app:sha256-${d#sha256:}" | jq -r '.manifests[].digest')" "push carries the layout's referrer"
hw_ok copy "oci:$layout:v1" "oci:$TEST_TMP/out:all"
assert_contains "$OUT" "32 of 32 variants" "layout to layout"
assert_contains "$OUT" "; 0 referrers" "a layout without referrers gives none"
assert_contains "$OUT" "already there" "blobs shared in the layout"
hw_fails compat show "oci:$layout:v1" --variant cuda12.8-sm90-x86-64-v3
assert_contains "$OUT" "it has none" "a layout variant without an artifact"

step "SIGKILL during a copy into a layout: the layout stays valid, a rerun finishes"
start_registry plain --no-tls --no-auth
plain=$(cat "$REG_plain_DIR/address")
make_layout "$TEST_TMP/big" v1 --variants 2 --shared-size $((4 << 20)) >/dev/null
hw_ok push --plain-http "oci:$TEST_TMP/big:v1" "$plain/big/app:v1"
start_proxy proxy --upstream "$plain" --stall-blob-gets 1
proxy=$PROXY_ADDR port_file=$TEST_TMP/proxy.port
hw_ok copy "${tls[@]}" "$one/src/app:v1" "oci:$TEST_TMP/killed:v0" --variant cuda12.8-sm90-x86-64-v3
# The copy's blobs under 1 MiB that the layout lacks: they arrive while the large one (copied
# first, largest first) stalls, since blobs are copied several at once.
big_blob() { echo "$TEST_TMP/big/blobs/sha256/${1#sha256:}"; }
big_root=$(jq -r '.manifests[] | select(.annotations["org.opencontainers.image.ref.name"] == "v1") | .digest' "$TEST_TMP/big/index.json")
small=$(for m in $(jq -r '.manifests[].digest' "$(big_blob "$big_root")"); do
  jq -r '(.config, .layers[]) | select(.size <= 1048576) | .digest' "$(big_blob "$m")"; done | sort -u |
  while read -r d; do [ -e "$TEST_TMP/killed/blobs/sha256/${d#sha256:}" ] || echo "$d"; done)
[ -n "$small" ] || fail "the big image has no small blob the layout lacks"
arrived() { for d in $small; do [ -e "$TEST_TMP/killed/blobs/sha256/${d#sha256:}" ] || return 1; done; }
cp "$TEST_TMP/killed/index.json" "$TEST_TMP/killed-index.json"
"$HWIMG" copy --plain-http "$proxy/big/app:v1" "oci:$TEST_TMP/killed:v1" >"$TEST_TMP/killed.log" 2>&1 &
copier=$!
for _ in $(seq 1 400); do [ -e "$port_file.stalled" ] && break; sleep 0.05; done
[ -e "$port_file.stalled" ] || fail "the blob download never started: $(cat "$TEST_TMP/killed.log")"
for _ in $(seq 1 200); do arrived && break; sleep 0.05; done
arrived || fail "while one blob download stalled, the other blobs were not copied (one at a time?)"
kill -9 "$copier"; wait "$copier" 2>/dev/null || true
assert_eq "v0 v0-cuda12.8-sm90-x86-64-v3" "$(cd "$TEST_TMP" && umoci ls --layout killed | sort | xargs)" "the killed copy added no tag"
cmp "$TEST_TMP/killed-index.json" "$TEST_TMP/killed/index.json" || fail "the killed copy changed index.json (a referrer listed?)"
for blob in "$TEST_TMP"/killed/blobs/sha256/*; do
  assert_eq "$(basename "$blob")" "$(sha256sum <"$blob" | cut -d' ' -f1)" "every blob in the layout matches its digest"
done
hw_ok copy --plain-http "$proxy/big/app:v1" "oci:$TEST_TMP/killed:v1"
assert_contains "$OUT" "; 2 referrers" "the finished copy brings the two variants' NFD artifacts"
assert_eq 3 "$(untagged "$TEST_TMP/killed" | jq length)" "untagged: the first copy's artifact and the two of the finished one"
skopeo copy -q --all "oci:$TEST_TMP/killed:v1" "oci:$TEST_TMP/killed-check:v1" || fail "skopeo cannot read the finished copy"

step "a registry answering bytes that do not match the digest: refused, named"
start_proxy tamper --upstream "$plain" --tamper wrong-digest
hw_fails copy --plain-http "$PROXY_ADDR/big/app:v1" "oci:$TEST_TMP/tampered:v1"
echo "$OUT" >"$TEST_TMP/tampered.out"; assert_contains "$OUT" "wrong digest: Docker-Content-Digest says sha256:" "tampered manifest refused, digests named"
[ ! -e "$TEST_TMP/tampered/index.json" ] || assert_eq "" "$(jq -r '.manifests[].annotations["org.opencontainers.image.ref.name"]' "$TEST_TMP/tampered/index.json")" "nothing tagged after a refused copy"

python3 "$PROXY" --upstream "$plain" --port-file "$TEST_TMP/corrupt.port" --tamper corrupt-blob --log "$TEST_TMP/corrupt.log" &
add_cleanup "kill $! 2>/dev/null"
for _ in $(seq 1 100); do [ -s "$TEST_TMP/corrupt.port" ] && break; sleep 0.05; done
corrupt=127.0.0.1:$(cat "$TEST_TMP/corrupt.port")
hw_fails copy --plain-http "$corrupt/big/app:v1" "oci:$TEST_TMP/corrupted:v1"
assert_eq 1 "$STATUS" "corrupt blobs exit status"
[[ "$OUT" =~ ^"hwimg: error: failed to get blob "(sha256:[0-9a-f]{64})" from $corrupt/big/app: blob "(sha256:[0-9a-f]{64})" does not match its digest (content hashes to sha256:"[0-9a-f]{64}")"$ ]] &&
  [ "${BASH_REMATCH[1]}" = "${BASH_REMATCH[2]}" ] || fail "parallel blob copies: the first failure, one line naming its blob; got [$OUT]"
[ -z "$(ls "$TEST_TMP/corrupted/blobs/sha256")" ] || fail "a corrupt blob reached the layout"
assert_eq "" "$(jq -r '.manifests[]' "$TEST_TMP/corrupted/index.json")" "nothing tagged after corrupt blobs"

# Relayed to another registry, a corrupt blob is stopped by the relay (before its last piece), not
# only by the destination's digest check, and the relay's own reason is named.
hw_fails copy --plain-http "$corrupt/big/app:v1" "$plain/relayed/app:v1"
echo "$OUT" >"$TEST_TMP/relayed.out"
grep -Eq "relaying it from $corrupt/big/app failed: failed to get blob (sha256:[0-9a-f]{64}) from $corrupt/big/app: blob \1 does not match its digest \(content hashes to sha256:[0-9a-f]{64}\)" <<<"$OUT" ||
  fail "a corrupt relayed blob, named by the relay; got [$OUT]"
if skopeo inspect --raw --tls-verify=false "docker://$plain/relayed/app:v1" >/dev/null 2>&1; then
  fail "the tag was written although a relayed blob was corrupt"
fi

step "bad input: one line, exit 2 for usage mistakes"
hw_fails copy "${tls[@]}" "$one/src/app:v1" "$one/mirror/app" --variant cuda12.8-sm90-x86-64-v33
assert_eq 2 "$STATUS" "unknown variant exit status"
assert_contains "$OUT" 'no variant "cuda12.8-sm90-x86-64-v33" (did you mean cuda12.8-sm90-x86-64-v3?)' "nearest variant"
hw_fails copy "${tls[@]}" "$one/src/app:v1" "$one/mirror/app" --for "$data/host-arm64.json"
assert_eq 1 "$STATUS" "nothing fits exit status"
assert_contains "$OUT" "none of the 32 variants runs on $data/host-arm64.json" "nothing fits"
hw_fails copy "${tls[@]}" "$one/src/app:nope" "$one/mirror/app"
assert_contains "$OUT" "MANIFEST_UNKNOWN" "missing source tag"
hw_fails copy "${tls[@]}" "$one/src/app:v1" "$one/mirror/app@$index_digest"
assert_eq 2 "$STATUS" "digest destination exit status"

assert_no_secret "$(cat "$REG_one_DIR/password")"
assert_no_secret "$(cat "$REG_two_DIR/password")"
echo "PASS"
