#!/usr/bin/env bash
# The bearer-token flow against Debian's docker-registry with token auth: tokens per scope from a
# token service (GET with Basic credentials, OAuth2 POST with an identity token), mounts with the
# source repository's pull scope, anonymous and rejected credentials.
source "$(dirname "$0")/lib.sh"
source "$(dirname "$0")/registry_lib.sh"

dir="$TEST_TMP/registry-token"
mkdir -p "$dir"
refresh_token="refresh-$RANDOM-$RANDOM"
python3 "$HWIMG_SOURCE_DIR/tests/integration/token_server.py" --dir "$dir" --port-file "$TEST_TMP/token.port" \
  --user hwimg --password-file "$dir/password" --refresh-token "$refresh_token" --log "$TEST_TMP/token.log" &
token_pid=$!
add_cleanup "kill $token_pid 2>/dev/null"
for _ in $(seq 1 100); do [ -s "$TEST_TMP/token.port" ] && break; sleep 0.05; done
[ -s "$TEST_TMP/token.port" ] || fail "the token service did not start"
realm="https://127.0.0.1:$(cat "$TEST_TMP/token.port")/token"
"$REGISTRY_SCRIPT" start "$dir" --token-realm "$realm" >/dev/null
add_cleanup "\"$REGISTRY_SCRIPT\" stop \"$dir\""
reg=$(cat "$dir/address")
password=$(cat "$dir/password")
certs="$TEST_TMP/certs"; mkdir -p "$certs"; cp "$dir/cert.pem" "$certs/ca.crt"
tls=(--ca-file "$dir/cert.pem")
export DOCKER_CONFIG="$TEST_TMP/docker"

step "login fetches a token with the credentials"
hw_fails login "$reg" --username hwimg --password-stdin "${tls[@]}" <<< "bad-$password"
assert_contains "$OUT" "failed to log in to $reg: user name or password rejected by its token service (HTTP 401)" "wrong password at login"
hw_ok login "$reg" --username hwimg --password-stdin "${tls[@]}" <<< "$password"

step "push with one token for the whole push; skopeo reads it back"
layout="$TEST_TMP/layout"
index_digest=$(make_layout "$layout" v1 --variants 3)
: > "$TEST_TMP/token.log"
hw_ok push "${tls[@]}" "oci:$layout:v1" "$reg/team/app"
assert_contains "$OUT" "@$index_digest: 7 blobs uploaded" "push with bearer tokens"
assert_contains "$OUT" "3 compat artifacts attached" "artifacts attached with bearer tokens"
# One token for the whole push: the artifacts go up on the image's own connections.
assert_eq "GET basic hwimg scopes=repository:team/app:pull,push" "$(cat "$TEST_TMP/token.log")" "token requests of a push"
raw=$(skopeo inspect --raw --cert-dir "$certs" --creds "hwimg:$password" "docker://$reg/team/app:v1" | sha256sum | cut -d' ' -f1)
assert_eq "$index_digest" "sha256:$raw" "index digest seen by skopeo"

step "a push to another repository mounts with pull on the source in the same token"
: > "$TEST_TMP/token.log"
hw_ok push --no-compat "${tls[@]}" "oci:$layout:v1" "$reg/team/copy:v1"
assert_contains "$OUT" ": 0 blobs uploaded (0.0 MiB), 7 mounted" "mount with tokens"
assert_eq "GET basic hwimg scopes=repository:team/copy:pull,push repository:team/app:pull" \
  "$(cat "$TEST_TMP/token.log")" "token scopes for the mount"

step "tag and an identity token (OAuth2 refresh-token grant)"
idt="$TEST_TMP/idt"; mkdir -p "$idt"
printf '{"auths":{"%s":{"identitytoken":"%s"}}}' "$reg" "$refresh_token" > "$idt/config.json"
: > "$TEST_TMP/token.log"
DOCKER_CONFIG="$idt" hw_ok tag "${tls[@]}" "$reg/team/app:v1" stable
assert_contains "$OUT" "$reg/team/app:stable@$index_digest" "tag with an identity token"
grep -q '^POST refresh_token hwimg scopes=repository:team/app:pull' "$TEST_TMP/token.log" ||
  fail "no refresh-token grant: $(cat "$TEST_TMP/token.log")"

step "anonymous and rejected credentials"
DOCKER_CONFIG="$TEST_TMP/none" hw_fails tag "${tls[@]}" "$reg/team/app:v1" anon
assert_contains "$OUT" "the registry requires credentials and none are configured (run: hwimg login $reg)" "anonymous"
bad="$TEST_TMP/bad"; mkdir -p "$bad"
printf '{"auths":{"%s":{"auth":"%s"}}}' "$reg" "$(printf 'hwimg:wrong-%s' "$password" | base64 -w0)" > "$bad/config.json"
: > "$TEST_TMP/token.log"
DOCKER_CONFIG="$bad" hw_fails push -v "${tls[@]}" "oci:$layout:v1" "$reg/team/app:v1"
assert_contains "$OUT" "failed to get a registry token: the token service rejected the credentials" "wrong password"
# The push's requests go at once and wait for one token: the wrong password is tried once.
assert_eq "GET rejected credentials" "$(cat "$TEST_TMP/token.log")" "token requests with the wrong password"

step "the realm is remembered: the next command asks for its token first, and no request is refused"
memory="$XDG_CACHE_HOME/hwimg/registries.json"
[ -f "$memory" ] || fail "no $memory after commands against a token registry"
assert_eq 600 "$(stat -c %a "$memory")" "mode of the remembered realms"
assert_eq "$realm" "$(python3 -c 'import json,sys; print(json.load(open(sys.argv[1]))["registries"]["https://"+sys.argv[2]]["realm"])' "$memory" "$reg")" "remembered realm"
: > "$TEST_TMP/token.log"
hw_ok digest -v "${tls[@]}" "$reg/team/app:v1"
assert_contains "$OUT" "$index_digest" "digest with a remembered realm"
# (GET /v2/ only opens the registry's connection while the token is fetched: its 401 is expected.)
if grep -- '-> 401' <<<"$OUT" | grep -qv ' https://[^ ]*/v2/ -> '; then fail "a request refused although the realm was known: $OUT"; fi
grep -q '/v2/team/app/manifests/v1 -> 200' <<<"$OUT" || fail "the manifest was not read with the token at once: $OUT"
assert_eq "GET basic hwimg scopes=repository:team/app:pull" "$(cat "$TEST_TMP/token.log")" "token requests of a digest"

step "a remembered realm that does not answer is forgotten, and the registry's challenge used"
python3 - "$memory" "$reg" <<'PY'
import json, sys
path, reg = sys.argv[1], sys.argv[2]
doc = json.load(open(path))
doc["registries"]["https://" + reg]["realm"] = "https://127.0.0.1:1/token"
json.dump(doc, open(path, "w"))
PY
hw_ok digest -v "${tls[@]}" "$reg/team/app:v1"
assert_contains "$OUT" "$index_digest" "digest after a stale realm"
assert_contains "$OUT" "forgetting the token realm remembered for $reg" "stale realm forgotten"
assert_eq "$realm" "$(python3 -c 'import json,sys; print(json.load(open(sys.argv[1]))["registries"]["https://"+sys.argv[2]]["realm"])' "$memory" "$reg")" "realm learned again"
if grep -q "Bearer\|eyJ" "$ALL_OUTPUT"; then fail "a token appeared in hwimg's output"; fi

assert_no_secret "$password"
assert_no_secret "$refresh_token"
echo "PASS"
