#!/usr/bin/env bash
# Registry edges against Debian's registry behind registry_proxy.py: credentials from
# DOCKER_AUTH_CONFIG, blob storage and token realms on another host:port that must never receive
# the registry's credentials, Retry-After as an HTTP-date, a manifest whose bytes do not match the
# digest asked for, and answers larger than the limits.
source "$(dirname "$0")/lib.sh"
source "$(dirname "$0")/registry_lib.sh"

use_registry edges --no-tls
auth_of() { printf '{"auths":{"%s":{"auth":"%s"}}}' "$1" "$(printf '%s' "$2" | base64 -w0)"; }
good="$TEST_TMP/good"; wrong="$TEST_TMP/wrong"; mkdir -p "$good" "$wrong"
auth_of "$reg" "hwimg:$password" > "$good/config.json"
auth_of "$reg" "hwimg:wrong-$password" > "$wrong/config.json"
chmod 600 "$good/config.json" "$wrong/config.json"
unset DOCKER_AUTH_CONFIG

layout="$TEST_TMP/layout"
index_digest=$(make_layout "$layout" v1 --variants 2)
DOCKER_CONFIG="$good" hw_ok push --plain-http "oci:$layout:v1" "$reg/edge/app"

step "DOCKER_AUTH_CONFIG comes before the config file; an explicit --docker-config is the only source"
DOCKER_CONFIG="$wrong" DOCKER_AUTH_CONFIG=$(auth_of "$reg" "hwimg:$password") hw_ok inspect --plain-http "$reg/edge/app:v1"
assert_contains "$OUT" "$index_digest" "credentials from DOCKER_AUTH_CONFIG"
DOCKER_CONFIG="$good" DOCKER_AUTH_CONFIG=$(auth_of "$reg" "hwimg:wrong-$password") hw_fails inspect --plain-http "$reg/edge/app:v1"
assert_contains "$OUT" "failed to authenticate to $reg: the registry rejected the configured credentials" "DOCKER_AUTH_CONFIG wins over the file"
DOCKER_CONFIG="$good" DOCKER_AUTH_CONFIG=$(auth_of "elsewhere.example.com" "x:y") hw_ok inspect --plain-http "$reg/edge/app:v1"
DOCKER_AUTH_CONFIG=$(auth_of "$reg" "hwimg:$password") hw_fails inspect --plain-http --docker-config "$wrong" "$reg/edge/app:v1"
assert_contains "$OUT" "the registry rejected the configured credentials" "--docker-config is the only source"
DOCKER_CONFIG="$good" DOCKER_AUTH_CONFIG="{\"auths\": {\"$reg\": \"$password" hw_fails inspect --plain-http "$reg/edge/app:v1"
assert_contains "$OUT" "failed to get manifest $reg/edge/app:v1: failed to read \$DOCKER_AUTH_CONFIG: not a valid JSON object" \
  "an invalid DOCKER_AUTH_CONFIG"
export DOCKER_CONFIG="$TEST_TMP/none"

step "blob storage on another port gets redirected reads, never the registry's credentials"
start_proxy storage --storage "$dir/data"
storage=$PROXY_ADDR
start_proxy front --upstream "$reg" --redirect-blobs "http://$storage"
front=$PROXY_ADDR
export DOCKER_AUTH_CONFIG; DOCKER_AUTH_CONFIG=$(auth_of "$front" "hwimg:$password")
variants=$(jq -r '.manifests[].annotations["org.opencontainers.image.ref.name"]' "$layout/index.json" | grep -- - | sort)
from=(); for t in $variants; do from+=(--from "$front/edge/app:$t"); done
hw_ok index create -v --plain-http "$front/edge/app:joined" "${from[@]}"
assert_contains "$OUT" "$front/edge/app:joined@$index_digest" "the index assembled from configs read through storage"
hw_ok push -v --plain-http "oci:$layout:v1" "$front/edge/again"
hw_ok push -v --plain-http "oci:$layout:v1" "$front/edge/again"
assert_contains "$OUT" "0 mounted, 5 already present" "a re-push sees its blobs through storage"
grep -q '^redirect GET ' "$TEST_TMP/front.log" || fail "no GET was redirected: $(cat "$TEST_TMP/front.log")"
grep -q '^redirect HEAD ' "$TEST_TMP/front.log" || fail "no HEAD was redirected"
grep -q '^GET .* auth=none$' "$TEST_TMP/storage.log" || fail "storage served no GET: $(cat "$TEST_TMP/storage.log")"
if grep -v 'auth=none$' "$TEST_TMP/storage.log"; then fail "the registry's credentials reached blob storage"; fi
assert_no_secret "s3cr3t"

step "a 401 from storage on another port: its realm is never asked, the read fails with the status"
start_proxy realm --storage "$TEST_TMP/nothing"
realm=$PROXY_ADDR
start_proxy hostile --storage "$dir/data" --challenge "http://$realm/token"
hostile=$PROXY_ADDR
start_proxy front2 --upstream "$reg" --redirect-blobs "http://$hostile"
DOCKER_AUTH_CONFIG=$(auth_of "$PROXY_ADDR" "hwimg:$password") hw_fails index create --plain-http "$PROXY_ADDR/edge/app:x" "${from[@]/$front/$PROXY_ADDR}"
assert_contains "$OUT" "HTTP 401" "the storage's refusal"
[ -s "$TEST_TMP/hostile.log" ] || fail "the read never reached the hostile storage"
if grep -v 'auth=none$' "$TEST_TMP/hostile.log"; then fail "credentials reached the hostile storage"; fi
[ ! -s "$TEST_TMP/realm.log" ] || fail "the storage's realm was asked: $(cat "$TEST_TMP/realm.log")"

step "Retry-After as an HTTP-date is waited for"
start_proxy slow --upstream "$reg" --retry-after-date 1
DOCKER_AUTH_CONFIG=$(auth_of "$PROXY_ADDR" "hwimg:$password")
started=$(date +%s%N)
hw_ok inspect -v --plain-http "$PROXY_ADDR/edge/app:v1"
elapsed_ms=$(( ($(date +%s%N) - started) / 1000000 ))
[[ $OUT =~ "hwimg: $PROXY_ADDR answered HTTP 503 TOOMANYREQUESTS; retrying in "(2|3)\.0" s (2/8)" ]] ||
  fail "no retry after the HTTP-date: $OUT"
[ "$elapsed_ms" -ge 2000 ] || fail "retried after $elapsed_ms ms, before the date"
assert_contains "$OUT" "$index_digest" "the answer after the wait"

step "a manifest whose bytes do not match the digest asked for is refused, naming both"
start_proxy tampered --upstream "$reg" --tamper wrong-digest
DOCKER_AUTH_CONFIG=$(auth_of "$PROXY_ADDR" "hwimg:$password")
served=sha256:$( (skopeo inspect --raw --tls-verify=false --creds "hwimg:$password" "docker://$reg/edge/app:v1"; printf ' ') | sha256sum | cut -d' ' -f1)
hw_fails inspect --plain-http "$PROXY_ADDR/edge/app@$index_digest"
assert_contains "$OUT" "failed to get manifest $PROXY_ADDR/edge/app@$index_digest: wrong digest: asked for $index_digest, the registry answered content that hashes to $served" \
  "both digests"

step "answers larger than the limits are cut off: documents, error bodies, token answers"
start_proxy oversize --upstream "$reg" --tamper oversize
DOCKER_AUTH_CONFIG=$(auth_of "$PROXY_ADDR" "hwimg:$password") hw_fails inspect --plain-http "$PROXY_ADDR/edge/app:v1"
assert_contains "$OUT" "failed to get manifest $PROXY_ADDR/edge/app:v1: answer larger than 4194304 bytes" "a 5 MiB manifest"
start_proxy huge-error --upstream "$reg" --tamper huge-error
DOCKER_AUTH_CONFIG=$(auth_of "$PROXY_ADDR" "hwimg:$password") hw_fails inspect --plain-http "$PROXY_ADDR/edge/app:v1"
assert_contains "$OUT" "failed to get manifest $PROXY_ADDR/edge/app:v1: HTTP 404 with an answer larger than 4194304 bytes" \
  "a 5 MiB error body"
start_proxy token --storage "$TEST_TMP/nothing"
start_proxy needs-token --storage "$TEST_TMP/nothing" --challenge "http://$PROXY_ADDR/token"
DOCKER_AUTH_CONFIG=$(auth_of "$PROXY_ADDR" "hwimg:$password") hw_fails inspect --plain-http "$PROXY_ADDR/edge/app:v1"
assert_contains "$OUT" "failed to get a registry token: answer larger than 1048576 bytes" "a 2 MiB token answer"

assert_no_secret "$password"
echo PASS
