#!/usr/bin/env bash
# hwimg push/tag/login against Debian's docker-registry with TLS and htpasswd, checked with skopeo.
source "$(dirname "$0")/lib.sh"
source "$(dirname "$0")/registry_lib.sh"

tls_registry
skopeo_creds="hwimg:$password"

step "login checks the password and stores it with mode 0600"
hw_fails login "$reg" --username hwimg --password-stdin "${tls[@]}" <<< "wrong-$password"
assert_eq "hwimg: error: failed to log in to $reg: user name or password rejected by $reg (HTTP 401 UNAUTHORIZED)" "$OUT" "wrong password at login"
[ ! -e "$DOCKER_CONFIG/config.json" ] || fail "a failed login wrote config.json"
hw_ok login "$reg" --username hwimg --password-stdin "${tls[@]}" <<< "$password"
assert_eq 600 "$(stat -c %a "$DOCKER_CONFIG/config.json")" "config.json mode"
assert_eq 700 "$(stat -c %a "$DOCKER_CONFIG")" "config directory mode"
auth=$(jq -r --arg k "$reg" '.auths[$k].auth' "$DOCKER_CONFIG/config.json")
assert_eq "hwimg:$password" "$(printf '%s' "$auth" | base64 -d)" "stored credentials"

step "push a 4-variant layout; skopeo sees the same index digest and every variant"
layout="$TEST_TMP/layout"
index_digest=$(make_layout "$layout" v1 --variants 4)
hw_ok push "${tls[@]}" "oci:$layout:v1" "$reg/test/app"
assert_contains "$OUT" "pushed $reg/test/app:v1@$index_digest: 9 blobs uploaded" "first push"
assert_contains "$OUT" "5 manifests pushed, 0 already present; 5 tags" "first push manifests"
raw_digest=$(skopeo inspect --raw --cert-dir "$certs" --creds "$skopeo_creds" "docker://$reg/test/app:v1" | sha256sum | cut -d' ' -f1)
assert_eq "$index_digest" "sha256:$raw_digest" "index digest seen by skopeo"
for tag in $(jq -r '.manifests[].annotations["org.opencontainers.image.ref.name"]' "$layout/index.json" | grep -- '-'); do
  want=$(jq -r --arg t "$tag" '.manifests[] | select(.annotations["org.opencontainers.image.ref.name"] == $t) | .digest' "$layout/index.json")
  got=$(skopeo inspect --raw --cert-dir "$certs" --creds "$skopeo_creds" "docker://$reg/test/app:$tag" | sha256sum | cut -d' ' -f1)
  assert_eq "$want" "sha256:$got" "variant tag $tag"
done
skopeo copy -q --all --preserve-digests --src-cert-dir "$certs" --src-creds "$skopeo_creds" \
  "docker://$reg/test/app:v1" "oci:$TEST_TMP/back:v1"
assert_eq "$(ls "$layout/blobs/sha256" | sort)" "$(ls "$TEST_TMP/back/blobs/sha256" | sort)" "blobs copied back by skopeo"

step "a second push uploads no blob"
before=$(count_blob_uploads "$dir/registry.log")
hw_ok push "${tls[@]}" "oci:$layout:v1" "$reg/test/app:v1"
assert_contains "$OUT" ": 0 blobs uploaded (0.0 MiB), 0 mounted, 9 already present; 0 manifests pushed, 5 already present; 5 tags" "second push"
assert_eq "$before" "$(count_blob_uploads "$dir/registry.log")" "blob uploads seen by the registry"

step "a push to another repository mounts every blob"
# --no-compat: the NFD artifacts' own small blobs are uploaded, not mounted (test_compat.sh covers them).
hw_ok push "${tls[@]}" --no-compat "oci:$layout:v1" "$reg/other/app:v2"
assert_contains "$OUT" ": 0 blobs uploaded (0.0 MiB), 9 mounted, 0 already present" "push to another repository"
assert_eq "$before" "$(count_blob_uploads "$dir/registry.log")" "blob uploads after the mount"

step "tag re-tags without blob traffic and keeps the digest"
lines_before=$(wc -l < "$dir/registry.log")
hw_ok tag "${tls[@]}" "$reg/test/app:v1" stable 2026-11
assert_contains "$OUT" "$reg/test/app:stable@$index_digest" "tag output"
raw_digest=$(skopeo inspect --raw --cert-dir "$certs" --creds "$skopeo_creds" "docker://$reg/test/app:2026-11" | sha256sum | cut -d' ' -f1)
assert_eq "$index_digest" "sha256:$raw_digest" "digest behind the new tag"
if tail -n +"$((lines_before + 1))" "$dir/registry.log" | grep -q '/blobs/'; then fail "tag touched blobs"; fi
hw_fails tag "${tls[@]}" "$reg/test/app:v1" "bad+tag"
assert_eq 2 "$STATUS" "exit status for a bad tag"
assert_contains "$OUT" "invalid tag \"bad+tag\": character '+' is not allowed" "bad tag message"
hw_fails tag "${tls[@]}" "$reg/test/app:nope" other
assert_contains "$OUT" "failed to get manifest $reg/test/app:nope: no tag nope in $reg/test/app (HTTP 404 MANIFEST_UNKNOWN); it has " "unknown tag"
assert_contains "$OUT" "(hwimg ls $reg/test/app)" "the command that lists the tags"
hw_fails inspect "${tls[@]}" "$reg/test/ap:v1"
assert_eq "hwimg: error: failed to inspect $reg/test/ap:v1: failed to get manifest $reg/test/ap:v1: no repository $reg/test/ap (HTTP 404 MANIFEST_UNKNOWN); nearest in $reg's catalogue: test/app, other/app" \
  "$OUT" "unknown repository: the nearest names in the catalogue"
absent="sha256:$(printf '0%.0s' $(seq 64))"
hw_fails tag "${tls[@]}" "$reg/test/app@$absent" other
assert_eq "hwimg: error: failed to get manifest $reg/test/app@$absent: HTTP 404 MANIFEST_UNKNOWN: manifest unknown (name test/app, revision $absent)" \
  "$OUT" "a registry error's detail in words, not JSON"

step "connection refused: on loopback at once; elsewhere one line per retry on a terminal"
closed=$(python3 -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1]); s.close()')
hw_fails inspect -v "127.0.0.1:$closed/app:1"
assert_eq 1 "$(grep -c "^hwimg: GET http://127.0.0.1:$closed/v2/app/manifests/1 " <<<"$OUT")" "a loopback refusal is tried once"
assert_contains "$OUT" "hwimg: error: failed to inspect 127.0.0.1:$closed/app:1: failed to get manifest 127.0.0.1:$closed/app:1: connection failed: failed to connect to 127.0.0.1:$closed: Connection refused" \
  "the loopback refusal's error"
# This machine's own address that is not loopback, where nothing listens on that port: refused,
# but from a host the client cannot tell from a distant one.
address=$(hostname -I 2>/dev/null | tr ' ' '\n' | grep -m1 -E '^[0-9]+\.[0-9]+\.[0-9]+\.[0-9]+$' | grep -v '^127\.' || true)
if [ -z "$address" ] || ! command -v script >/dev/null; then
  echo "note: no IPv4 address other than loopback (or no script(1)): the retry lines are not checked here"
else
  set +e
  timeout 3 script -qec "'$HWIMG' inspect '$address:$closed/app:1'" /dev/null > "$TEST_TMP/retries" 2>&1
  "$HWIMG" inspect "$address:$closed/app:1" > "$TEST_TMP/piped" 2>&1  # every retry: about 28 s
  set -e
  retries=$(tr -d '\r' < "$TEST_TMP/retries" | grep 'retrying' | sed -E 's/retrying in [0-9.]+ s/retrying in N s/' | head -2)
  assert_eq "hwimg: $address:$closed refused the connection; retrying in N s (2/8)
hwimg: $address:$closed refused the connection; retrying in N s (3/8)" "$retries" "one line per retry on a terminal"
  assert_eq "hwimg: error: failed to inspect $address:$closed/app:1: failed to get manifest $address:$closed/app:1: connection failed: failed to connect to $address:$closed: Connection refused (tried 8 times)" \
    "$(cat "$TEST_TMP/piped")" "without a terminal: no retry lines, and the error says how often it tried"
fi

step "push a layout built by hwimg build (the stencil example)"
if command -v make >/dev/null && command -v g++ >/dev/null; then
  SOURCE_DATE_EPOCH=1700000000 "$HWIMG" build "$HWIMG_SOURCE_DIR/recipes/stencil.yaml" -o "$TEST_TMP/built" --tag 1.0 \
    > "$TEST_TMP/build.log" 2>&1 || fail "hwimg build failed: $(tail -5 "$TEST_TMP/build.log")"
  built_digest=$(jq -r '.manifests[] | select(.annotations["org.opencontainers.image.ref.name"] == "1.0") | .digest' \
    "$TEST_TMP/built/index.json")
  variants=$(jq '[.manifests[] | select(.annotations["org.opencontainers.image.ref.name"] | startswith("1.0-"))] | length' \
    "$TEST_TMP/built/index.json")
  hw_ok push "${tls[@]}" "oci:$TEST_TMP/built:1.0" "$reg/examples/stencil"
  assert_contains "$OUT" "pushed $reg/examples/stencil:1.0@$built_digest" "push of the built example"
  assert_contains "$OUT" "$((variants + 1)) manifests pushed, 0 already present; $((variants + 1)) tags" \
    "variant manifests of the built example"
  skopeo copy -q --all --preserve-digests --src-cert-dir "$certs" --src-creds "$skopeo_creds" \
    "docker://$reg/examples/stencil:1.0" "oci:$TEST_TMP/built-back:1.0"
  raw=$(skopeo inspect --raw "oci:$TEST_TMP/built-back:1.0" | sha256sum | cut -d' ' -f1)
  assert_eq "$built_digest" "sha256:$raw" "built index copied back by skopeo"
else
  echo "(make or g++ missing: the built example is not pushed)"
fi

step "large blobs go up in PATCH chunks"
big="$TEST_TMP/big"
big_digest=$(make_layout "$big" v1 --variants 2 --shared-size 300000 --seed 7)
hw_ok push "${tls[@]}" --chunk-size 65536 -j 2 "oci:$big:v1" "$reg/test/chunked"
assert_contains "$OUT" "@$big_digest: 5 blobs uploaded" "chunked push"
grep -q '"PATCH /v2/test/chunked/blobs/uploads/' "$dir/registry.log" || fail "no PATCH reached the registry"
skopeo copy -q --all --preserve-digests --src-cert-dir "$certs" --src-creds "$skopeo_creds" \
  "docker://$reg/test/chunked:v1" "oci:$TEST_TMP/big-back:v1"
assert_eq "$(ls "$big/blobs/sha256" | sort)" "$(ls "$TEST_TMP/big-back/blobs/sha256" | sort)" "chunked blobs copied back"

step "TLS is verified: without --ca-file the self-signed certificate is refused"
hw_fails push "oci:$layout:v1" "$reg/test/app:v1"
assert_contains "$OUT" "TLS certificate verification failed" "unverified certificate"

step "a wrong password in config.json gives a clear error and shows no secret"
wrong="$TEST_TMP/wrong"; mkdir -p "$wrong"
wrong_password="not-the-password-$RANDOM"
printf '{"auths":{"%s":{"auth":"%s"}}}' "$reg" "$(printf 'hwimg:%s' "$wrong_password" | base64 -w0)" > "$wrong/config.json"
DOCKER_CONFIG="$wrong" hw_fails push -v "${tls[@]}" "oci:$layout:v1" "$reg/test/app:v1"
assert_contains "$OUT" "hwimg: error: failed to authenticate to $reg: the registry rejected the configured credentials (HTTP 401" "wrong password"
# The stored credentials go with the first requests, sent at once; a request they were refused for
# is not sent again with them, and nothing is sent after the refusals.
refused=$(grep -- '-> 401' <<<"$OUT" | sed 's/ (.*//')
[ -n "$refused" ] || fail "no request was refused for the wrong password"
assert_eq "$(sort <<<"$refused")" "$(sort -u <<<"$refused")" "requests sent twice with the wrong password"
assert_eq "$(grep -c -- ' -> ' <<<"$OUT")" "$(wc -l <<<"$refused")" "requests other than the refused ones"
assert_no_secret "$wrong_password"
assert_no_secret "$(printf 'hwimg:%s' "$wrong_password" | base64 -w0)"
DOCKER_CONFIG="$TEST_TMP/empty" hw_fails push "${tls[@]}" "oci:$layout:v1" "$reg/test/app:v1"
assert_contains "$OUT" "the registry requires credentials and none are configured (run: hwimg login $reg)" "no credentials"

step "verbose logs redact upload state and never show credentials"
make_layout "$TEST_TMP/verbose" v1 --variants 1 --seed 11 >/dev/null
hw_ok push -v "${tls[@]}" "oci:$TEST_TMP/verbose:v1" "$reg/test/verbose"
assert_contains "$OUT" "_state=REDACTED" "redacted upload state"
if grep -qi 'authorization' <<< "$OUT"; then fail "verbose output mentions Authorization"; fi

step "a loopback TLS registry reached without --ca-file: the first round asks in plain HTTP, then every request goes again on TLS"
make_layout "$TEST_TMP/scheme" v1 --variants 2 --seed 12 >/dev/null
hw_ok push -v --insecure "oci:$TEST_TMP/scheme:v1" "$reg/test/scheme"
assert_contains "$OUT" "blobs uploaded" "push with the scheme learned from the first round"
plain_round=$(grep -o 'hwimg: [A-Z]* http://[^ ]*' <<<"$OUT" | sed 's|http://|https://|' | sort)
[ "$(wc -l <<<"$plain_round")" -gt 1 ] || fail "the first round was not sent at once: $OUT"
# Each request of the plain round was sent again on TLS.
while read -r line; do
  grep -qF -- "$line " <<<"$OUT" || fail "not sent again on TLS: $line"
done <<<"$plain_round"

step "plain HTTP: a loopback registry works, a remote one is refused before any connection"
start_registry plain --no-tls --no-auth
plain=$(cat "$REG_plain_DIR/address")
hw_ok push "oci:$layout:v1" "$plain/test/app"
assert_contains "$OUT" "@$index_digest: 9 blobs uploaded" "push to a plain-HTTP loopback registry"
raw_digest=$(skopeo inspect --raw --tls-verify=false "docker://$plain/test/app:v1" | sha256sum | cut -d' ' -f1)
assert_eq "$index_digest" "sha256:$raw_digest" "index digest on the plain registry"
hw_ok tag --plain-http "$plain/test/app:v1" v1-copy

step "a corrupt blob in the layout is refused, naming it"
corrupt="$TEST_TMP/corrupt"
make_layout "$corrupt" v1 --variants 2 --seed 9 >/dev/null
shared=$(jq -r '.layers[0].digest' "$corrupt/blobs/sha256/$(jq -r '.manifests[1].digest' "$corrupt/index.json" | cut -d: -f2)")
size=$(stat -c %s "$corrupt/blobs/sha256/${shared#sha256:}")
head -c "$size" /dev/zero > "$corrupt/blobs/sha256/${shared#sha256:}"
hw_fails push "oci:$corrupt:v1" "$plain/test/corrupt"
assert_contains "$OUT" "failed to push blob $shared: the layout's copy is corrupt: its content hashes to sha256:" "corrupt layer"
start=$(date +%s)
hw_fails push --plain-http "oci:$layout:v1" 192.0.2.1:5000/x
assert_contains "$OUT" "failed to connect to 192.0.2.1:5000: refusing plain HTTP to a registry that is not on this machine (use --insecure to allow it)" "remote plain HTTP"
[ $(( $(date +%s) - start )) -le 2 ] || fail "the refusal took too long (it must not connect)"

assert_no_secret "$password"
echo "PASS"
