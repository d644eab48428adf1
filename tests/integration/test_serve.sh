#!/usr/bin/env bash
# hwimg serve (issue 12) against Debian's registry with TLS and htpasswd: a tag naming an hwimg
# index is answered with the variant `hwimg select` picks for the facts given, in all three request
# forms; anything else passes through byte for byte; skopeo pulls through it directly and through a
# registries.conf rewrite; nothing fits -> the client sees the reason; authentication passes
# through; faults give registry errors, never a wrong answer.
source "$(dirname "$0")/lib.sh"
source "$(dirname "$0")/registry_lib.sh"
source "$(dirname "$0")/serve_lib.sh"

use_registry srv
node_config="$TEST_TMP/node-docker"
export DOCKER_CONFIG="$node_config"
tls=(--ca-file "$dir/cert.pem")
hw_ok login "$reg" --username hwimg --password-stdin "${tls[@]}" < "$dir/password"
creds=(--creds "hwimg:$password")

step "the stencil index, a plain manifest and an index made by others in the registry"
export SOURCE_DATE_EPOCH=1700000000
stencil="$TEST_TMP/stencil"
"$HWIMG" build "$HWIMG_SOURCE_DIR/recipes/stencil.yaml" -o "$stencil" --tag 1.0 -j 2 > /dev/null
hw_ok push "${tls[@]}" "oci:$stencil:1.0" "$reg/demo/stencil:1.0"
raw() { skopeo inspect --raw --cert-dir "$dir" --tls-verify=false "${creds[@]}" "docker://$reg/demo/stencil:$1"; }
digest_of() { echo "sha256:$(raw "$1" | sha256sum | cut -d' ' -f1)"; }
v2=$(digest_of 1.0-cpu-x86-64-v2)
v3=$(digest_of 1.0-cpu-x86-64-v3)
index=$(digest_of 1.0)
hw_ok tag "${tls[@]}" "$reg/demo/stencil:1.0-cpu-x86-64-v1" plain
v1=$(digest_of plain)
v1_size=$(raw plain | wc -c)
printf '{"schemaVersion":2,"mediaType":"application/vnd.oci.image.index.v1+json","manifests":[{"mediaType":"application/vnd.oci.image.manifest.v1+json","digest":"%s","size":%s,"platform":{"architecture":"amd64","os":"linux"}}]}' \
  "$v1" "$v1_size" > "$TEST_TMP/foreign.json"
curl -sS --cacert "$dir/cert.pem" -u "hwimg:$password" -X PUT -H 'Content-Type: application/vnd.oci.image.index.v1+json' \
  --data-binary "@$TEST_TMP/foreign.json" "https://$reg/v2/demo/stencil/manifests/foreign" -o /dev/null
foreign="sha256:$(sha256sum < "$TEST_TMP/foreign.json" | cut -d' ' -f1)"
assert_eq "$foreign" "$(digest_of foreign)" "the foreign index as pushed"

facts_file "$TEST_TMP/v3.json" x86-64-v3
facts_file "$TEST_TMP/v2.json" x86-64-v2
start_serve v3 --upstream "$reg" "${tls[@]}" --host "$TEST_TMP/v3.json"
mirror=$SERVE_ADDR
v3_log=$SERVE_LOG
v3_pid=$SERVE_PID

step "the ping, health and metrics endpoints"
fetch "http://$mirror/v2/"
assert_eq 200 "$CODE" "GET /v2/"
assert_eq "registry/2.0" "$(header_value docker-distribution-api-version)" "API version header"
fetch "http://$mirror/healthz"
assert_eq 200 "$CODE" "GET /healthz"
await_readyz "$mirror" ready
assert_eq 200 "$CODE" "GET /readyz with an upstream that answers"
assert_eq "ready" "$(cat "$BODY_FILE")" "the body of /readyz"
assert_contains "$(cat "$v3_log")" "upstream $reg: answers" "the start's check of the upstream in serve's log"

step "a tag naming an hwimg index gets this node's variant in every request form"
for url in "http://$mirror/v2/demo/stencil/manifests/1.0" \
           "http://$mirror/v2/demo/stencil/manifests/1.0?ns=$reg" \
           "http://$mirror/v2/$reg/demo/stencil/manifests/1.0"; do
  fetch "$url"
  assert_eq 200 "$CODE" "GET $url"
  assert_eq "$v3" "$(header_value docker-content-digest)" "Docker-Content-Digest of $url"
  assert_eq "$v3" "$(body_digest)" "the body of $url"
  assert_eq "application/vnd.oci.image.manifest.v1+json" "$(header_value content-type)" "media type of $url"
done
curl -sS -I "http://$mirror/v2/demo/stencil/manifests/1.0" | tr -d '\r' > "$TEST_TMP/head"
assert_contains "$(cat "$TEST_TMP/head")" "Docker-Content-Digest: $v3" "HEAD of the tag"
assert_contains "$(cat "$TEST_TMP/head")" "Content-Length: $(raw 1.0-cpu-x86-64-v3 | wc -c)" "HEAD length is the variant's"
assert_contains "$(cat "$v3_log")" "$reg/demo/stencil:1.0 -> variant cpu-x86-64-v3 $v3" "the resolution's log line"

step "digests, blobs and images made by others pass through unchanged"
fetch "http://$mirror/v2/demo/stencil/manifests/$index"
assert_eq "$index" "$(body_digest)" "the index by digest"
fetch "http://$mirror/v2/demo/stencil/manifests/plain"
assert_eq "$v1" "$(body_digest)" "a single manifest by tag"
fetch "http://$mirror/v2/demo/stencil/manifests/foreign"
assert_eq "$foreign" "$(body_digest)" "an index without hwimg variants"
layer=$(raw 1.0-cpu-x86-64-v3 | jq -r '.layers[-1].digest')
fetch "http://$mirror/v2/demo/stencil/blobs/$layer"
assert_eq 200 "$CODE" "GET of a layer"
assert_eq "$layer" "$(body_digest)" "the layer streamed through"
size=$(raw 1.0-cpu-x86-64-v3 | jq -r '.layers[-1].size')
curl -sS -I "http://$mirror/v2/demo/stencil/blobs/$layer" | tr -d '\r' > "$TEST_TMP/head"
assert_contains "$(cat "$TEST_TMP/head")" "Content-Length: $size" "HEAD of a layer"

step "skopeo through the mirror: directly, and through a registries.conf rewrite"
skopeo inspect --raw --tls-verify=false "docker://$mirror/demo/stencil:1.0" > "$BODY_FILE"
assert_eq "$v3" "$(body_digest)" "skopeo inspect by the mirror's address"
cat > "$TEST_TMP/registries.conf" <<EOF
[[registry]]
prefix = "$reg"
location = "$mirror"
insecure = true
EOF
skopeo --registries-conf "$TEST_TMP/registries.conf" copy -q --src-tls-verify=false \
  "docker://$reg/demo/stencil:1.0" "oci:$TEST_TMP/pulled:1.0"
pulled=$(jq -r '.manifests[0].digest' "$TEST_TMP/pulled/index.json")
assert_eq "$v3" "$pulled" "skopeo copy through the rewrite"
skopeo inspect --raw "oci:$TEST_TMP/pulled:1.0" > /dev/null

step "a registry with a port named by an alias: the path form through a registries.conf rewrite"
start_serve alias --upstream "local=$reg" "${tls[@]}" --host "$TEST_TMP/v3.json"
printf '[[registry]]\nprefix = "%s"\nlocation = "%s/local"\ninsecure = true\n' "$reg" "$SERVE_ADDR" \
  > "$TEST_TMP/registries-alias.conf"
skopeo --registries-conf "$TEST_TMP/registries-alias.conf" copy -q --src-tls-verify=false \
  "docker://$reg/demo/stencil:1.0" "oci:$TEST_TMP/pulled-alias:1.0"
assert_eq "$v3" "$(jq -r '.manifests[0].digest' "$TEST_TMP/pulled-alias/index.json")" "skopeo copy by the alias"
fetch "http://$SERVE_ADDR/v2/local/demo/stencil/manifests/1.0"
assert_eq "$v3" "$(header_value docker-content-digest)" "the alias in the path"
stop_serve

step "a listen address other machines can reach is warned about"
start_serve open --listen 0.0.0.0:0 --upstream "$reg" "${tls[@]}" --host "$TEST_TMP/v3.json"
stop_serve
assert_contains "$(cat "$SERVE_LOG")" "hwimg: warning: listening on 0.0.0.0, which other machines can reach" "the warning"

step "an upstream that is not configured is refused"
fetch "http://$mirror/v2/demo/stencil/manifests/1.0?ns=registry.example.org"
assert_eq 403 "$CODE" "a request for another registry"
assert_eq DENIED "$(jq -r '.errors[0].code' "$BODY_FILE")" "its error code"
fetch "http://$mirror/v2/registry.example.org/demo/stencil/manifests/1.0"
assert_eq 403 "$CODE" "the path form naming another registry"

step "the metrics count requests and selections"
fetch "http://$mirror/metrics"
metrics=$(cat "$BODY_FILE")
assert_contains "$(header_value content-type)" "text/plain; version=0.0.4" "metrics content type"
assert_contains "$metrics" 'hwimg_serve_requests_total{kind="tag",code="200"}' "tag requests counted"
assert_contains "$metrics" 'hwimg_serve_selections_total{variant="cpu-x86-64-v3"} 1' "one selection (the rest cached)"
assert_contains "$metrics" 'hwimg_serve_resolution_seconds_bucket{le="+Inf"}' "the latency histogram"

step "200 concurrent requests for a tag cost the upstream one index fetch"
hw_ok tag "${tls[@]}" "$reg/demo/stencil:1.0" fresh
mark=$(wc -l < "$dir/registry.log")
mkdir "$TEST_TMP/answers"
seq 1 200 | xargs -P 200 -I{} sh -c "curl -sS -o '$TEST_TMP/answers/{}' -w '%{http_code}\n' 'http://$mirror/v2/demo/stencil/manifests/fresh'" \
  > "$TEST_TMP/codes"
assert_eq 200 "$(grep -c '^200$' "$TEST_TMP/codes")" "answers with 200"
assert_eq 1 "$(sha256sum "$TEST_TMP"/answers/* | cut -d' ' -f1 | sort -u | wc -l)" "distinct answers"
assert_eq "$v3" "sha256:$(sha256sum < "$TEST_TMP/answers/1" | cut -d' ' -f1)" "the answer"
gets=$(tail -n +"$((mark + 1))" "$dir/registry.log" | grep -o '"GET /v2/demo/stencil/manifests/fresh[^"]*" 200' | wc -l)
assert_eq 1 "$gets" "upstream GETs of the tag"

step "SIGHUP reloads the facts: the same tag, another variant, no restart"
cp "$TEST_TMP/v2.json" "$TEST_TMP/v3.json"
kill -HUP "$v3_pid"
for _ in $(seq 1 100); do grep -q "host facts changed" "$v3_log" && break; sleep 0.05; done
fetch "http://$mirror/v2/demo/stencil/manifests/1.0"
assert_eq "$v2" "$(header_value docker-content-digest)" "the variant after the facts changed"

step "SIGKILL and a restart: the next pull works"
kill -9 "$v3_pid"
wait "$v3_pid" 2>/dev/null || true
start_serve again --upstream "$reg" "${tls[@]}" --host "$TEST_TMP/v2.json"
fetch "http://$SERVE_ADDR/v2/demo/stencil/manifests/1.0"
assert_eq "$v2" "$(header_value docker-content-digest)" "the answer after a restart"

step "SIGTERM lets a download in flight finish"
"$HWIMG" build "$HWIMG_SOURCE_DIR/tests/data/recipes/serve-big.yaml" -o "$TEST_TMP/big" --tag 1 > /dev/null
hw_ok push "${tls[@]}" "oci:$TEST_TMP/big:1" "$reg/demo/big:1"
big_layer=$(skopeo inspect --raw --tls-verify=false "${creds[@]}" "docker://$reg/demo/big:1-cpu-x86-64-v1" | jq -r '.layers[-1].digest')
curl -sS --limit-rate 2M -o "$TEST_TMP/big-layer" "http://$SERVE_ADDR/v2/demo/big/blobs/$big_layer" &
curl_pid=$!
sleep 0.5
stop_serve
wait "$curl_pid" || fail "the download in flight was cut by SIGTERM"
assert_eq "$big_layer" "sha256:$(sha256sum < "$TEST_TMP/big-layer" | cut -d' ' -f1)" "the drained download"

step "under systemd: READY=1 once listening, WATCHDOG=1 while /healthz answers, STOPPING=1 at the end"
# A unix datagram socket standing for systemd's $NOTIFY_SOCKET; every datagram, one per line.
python3 -c '
import socket, sys
s = socket.socket(socket.AF_UNIX, socket.SOCK_DGRAM)
s.bind(sys.argv[1])
open(sys.argv[1] + ".bound", "w").close()
with open(sys.argv[2], "a") as out:
    while True:
        out.write(s.recv(4096).decode() + "\n")
        out.flush()
' "$TEST_TMP/notify" "$TEST_TMP/notified" &
add_cleanup "kill $! 2>/dev/null"
for _ in $(seq 1 100); do [ -e "$TEST_TMP/notify.bound" ] && break; sleep 0.05; done
NOTIFY_SOCKET="$TEST_TMP/notify" WATCHDOG_USEC=1000000 start_serve notified --upstream "$reg" "${tls[@]}" \
  --host "$TEST_TMP/v2.json"
for _ in $(seq 1 60); do [ "$(grep -c WATCHDOG=1 "$TEST_TMP/notified" 2>/dev/null)" -ge 2 ] && break; sleep 0.1; done
assert_eq "READY=1" "$(head -1 "$TEST_TMP/notified")" "the first notification"
[ "$(grep -c '^WATCHDOG=1$' "$TEST_TMP/notified")" -ge 2 ] || fail "no WATCHDOG=1 every half second: $(cat "$TEST_TMP/notified")"
stop_serve
for _ in $(seq 1 20); do grep -q STOPPING=1 "$TEST_TMP/notified" && break; sleep 0.05; done
assert_eq "STOPPING=1" "$(tail -1 "$TEST_TMP/notified")" "the last notification"

step "nothing fits: 404 MANIFEST_UNKNOWN with the reason, the full explanation in the log"
printf '{"schema": 1, "os": "linux", "cpu": {"arch": "arm64", "vendor": "ARM", "features": ["asimd", "fp"]}, "nvidia": null}\n' \
  > "$TEST_TMP/arm.json"
start_serve arm --upstream "$reg" "${tls[@]}" --host "$TEST_TMP/arm.json"
fetch "http://$SERVE_ADDR/v2/demo/stencil/manifests/1.0"
assert_eq 404 "$CODE" "no variant for arm64"
assert_eq MANIFEST_UNKNOWN "$(jq -r '.errors[0].code' "$BODY_FILE")" "the error code"
assert_contains "$(jq -r '.errors[0].message' "$BODY_FILE")" "no variant of $reg/demo/stencil:1.0 runs on this node" "the message"
expect_failure skopeo inspect --raw --tls-verify=false "docker://$SERVE_ADDR/demo/stencil:1.0"
assert_contains "$OUT" "no variant of $reg/demo/stencil:1.0 runs on this node" "skopeo shows the reason"
assert_contains "$(cat "$SERVE_LOG")" "cpu-x86-64-v3" "the log explains every variant"
stop_serve

step "--foreign select: an index made by others (platform levels only, as docker buildx writes) gets the entry select picks"
# v1 without a variant, v2..v4 with theirs; no org.hwimg.* in the index, the manifests or the configs.
push_foreign buildx "$HWIMG_SOURCE_DIR/tests/data/select/buildx-levels.json" "$reg/others/buildx:1.0" \
  --dest-cert-dir "$dir" --dest-tls-verify=false --dest-creds "hwimg:$password"
buildx=$(foreign_digest buildx)
for level in v2 v3; do
  facts_file "$TEST_TMP/foreign-$level.json" "x86-64-$level"
  start_serve "foreign-$level" --upstream "$reg" "${tls[@]}" --host "$TEST_TMP/foreign-$level.json" --foreign select
  fetch "http://$SERVE_ADDR/v2/others/buildx/manifests/1.0"
  assert_eq 200 "$CODE" "the buildx-style tag through --foreign select ($level node)"
  assert_eq "$(foreign_digest buildx "$level")" "$(header_value docker-content-digest)" "an x86-64-$level node gets the $level entry"
  assert_eq "$(foreign_digest buildx "$level")" "$(body_digest)" "its bytes ($level node)"
  stop_serve
done
start_serve foreign-hwimg --upstream "$reg" "${tls[@]}" --host "$TEST_TMP/foreign-v2.json" --foreign select
fetch "http://$SERVE_ADDR/v2/demo/stencil/manifests/1.0"
assert_eq "$v2" "$(header_value docker-content-digest)" "hwimg indexes as before"
stop_serve
start_serve foreign-arm --upstream "$reg" "${tls[@]}" --host "$TEST_TMP/arm.json" --foreign select
fetch "http://$SERVE_ADDR/v2/others/buildx/manifests/1.0"
assert_eq 404 "$CODE" "no entry for arm64"
assert_eq MANIFEST_UNKNOWN "$(jq -r '.errors[0].code' "$BODY_FILE")" "the error code for a foreign index"
assert_contains "$(jq -r '.errors[0].message' "$BODY_FILE")" "no variant of $reg/others/buildx:1.0 runs on this node" \
  "the reason for a foreign index"
stop_serve
start_serve foreign-default --upstream "$reg" "${tls[@]}" --host "$TEST_TMP/foreign-v3.json"
fetch "http://$SERVE_ADDR/v2/others/buildx/manifests/1.0"
assert_eq "$buildx" "$(body_digest)" "without --foreign select the index passes through"
stop_serve

step "authentication passes through: the client's credentials, the upstream's 401"
export DOCKER_CONFIG="$TEST_TMP/empty-docker"
mkdir -p "$DOCKER_CONFIG"
start_serve auth --upstream "$reg" "${tls[@]}" --host "$TEST_TMP/v2.json" -v
fetch "http://$SERVE_ADDR/v2/demo/stencil/manifests/1.0"
assert_eq 401 "$CODE" "no credentials"
assert_contains "$(header_value www-authenticate)" "Basic realm" "the upstream's challenge"
fetch "http://$SERVE_ADDR/v2/demo/stencil/manifests/1.0" -u "hwimg:$password"
assert_eq 200 "$CODE" "the client's credentials"
assert_eq "$v2" "$(header_value docker-content-digest)" "the variant with the client's credentials"
fetch "http://$SERVE_ADDR/v2/demo/stencil/blobs/$layer" -u "hwimg:$password"
assert_eq "$layer" "$(body_digest)" "a blob with the client's credentials"
fetch "http://$SERVE_ADDR/v2/demo/stencil/manifests/1.0" -u "hwimg:wrong"
assert_eq 401 "$CODE" "wrong credentials"
fetch "http://$SERVE_ADDR/v2/demo/stencil/manifests/1.0"
assert_eq 401 "$CODE" "an answer fetched with credentials is not given without them"
stop_serve
if grep -qF -- "$password" "$SERVE_LOG"; then fail "the password appeared in serve's log"; fi
if grep -qiF -- "$(printf 'hwimg:%s' "$password" | base64 -w0)" "$SERVE_LOG"; then fail "the credentials appeared in serve's log"; fi
export DOCKER_CONFIG="$node_config"

step "upstream down: 503 UNAVAILABLE, no answer made up; said at start, in /readyz, not in /healthz"
closed=$(python3 -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1]); s.close()')
start_serve down --upstream "127.0.0.1:$closed" --host "$TEST_TMP/v2.json"
refused="upstream 127.0.0.1:$closed: failed to connect to 127.0.0.1:$closed: connection failed: failed to connect to 127.0.0.1:$closed: Connection refused"
await_readyz "$SERVE_ADDR" "$refused"  # no glob characters in it
assert_eq 503 "$CODE" "GET /readyz with an upstream that refuses connections"
assert_eq "$refused" "$(cat "$BODY_FILE")" "the body of /readyz names the upstream and the cause"
fetch "http://$SERVE_ADDR/healthz"
assert_eq 200 "$CODE" "GET /healthz stays liveness only"
assert_contains "$(cat "$SERVE_LOG")" "hwimg: warning: upstream 127.0.0.1:$closed cannot be used: failed to connect to 127.0.0.1:$closed: connection failed: failed to connect to 127.0.0.1:$closed: Connection refused; pulls through it fail until that is fixed (/readyz says so meanwhile)" \
  "the warning at start"
fetch "http://$SERVE_ADDR/v2/demo/stencil/manifests/1.0"
assert_eq 503 "$CODE" "an unreachable upstream"
assert_eq UNAVAILABLE "$(jq -r '.errors[0].code' "$BODY_FILE")" "its error code"
fetch "http://$SERVE_ADDR/v2/demo/stencil/blobs/$layer"
assert_eq 503 "$CODE" "a blob from an unreachable upstream"
stop_serve

step "an upstream whose certificate serve cannot verify (no --ca-file): said at start and in /readyz"
start_serve unverified --upstream "$reg" --host "$TEST_TMP/v2.json"
await_readyz "$SERVE_ADDR" "*TLS certificate*"
assert_eq 503 "$CODE" "GET /readyz with an upstream it cannot verify"
assert_eq "upstream $reg: failed to connect to $reg: TLS certificate verification failed: SSL certificate problem: self-signed certificate (use --ca-file for a private CA)" \
  "$(cat "$BODY_FILE")" "the body of /readyz"
assert_contains "$(cat "$SERVE_LOG")" "hwimg: warning: upstream $reg cannot be used: failed to connect to $reg: TLS certificate verification failed" \
  "the warning at start"
stop_serve

step "an upstream index whose bytes do not match its digest is refused"
start_registry plain --no-tls --no-auth
plain_reg=$(cat "$REG_plain_DIR/address")
hw_ok push "oci:$stencil:1.0" "$plain_reg/demo/stencil:1.0"
start_proxy tamper --upstream "$plain_reg" --tamper wrong-digest
start_serve tampered --upstream "$PROXY_ADDR" --host "$TEST_TMP/v2.json"
fetch "http://$SERVE_ADDR/v2/demo/stencil/manifests/1.0"
assert_eq 503 "$CODE" "a tampered index"
assert_contains "$(jq -r '.errors[0].message' "$BODY_FILE")" "wrong digest" "the error names the mismatch"
stop_serve

step "a blob whose bytes do not match its digest never reaches a client whole"
start_proxy corrupt --upstream "$plain_reg" --tamper corrupt-blob
start_serve corrupt --upstream "$PROXY_ADDR" --host "$TEST_TMP/v2.json"
size=$(skopeo inspect --raw --tls-verify=false "docker://$plain_reg/demo/stencil:1.0-cpu-x86-64-v3" |
  jq -r --arg d "$layer" '.layers[] | select(.digest == $d) | .size')
set +e
got=$(curl -s -o "$BODY_FILE" -w '%{size_download}' "http://$SERVE_ADDR/v2/demo/stencil/blobs/$layer")
curl_status=$?
set -e
[ "$curl_status" != 0 ] || fail "curl took a corrupt blob as complete"
[ "$got" -lt "$size" ] || fail "the client received all $size bytes of a corrupt blob"
grep -q "blob $layer does not match its digest (content hashes to sha256:[0-9a-f]*); the body was cut off" "$SERVE_LOG" || fail "no warning: $(cat "$SERVE_LOG")"
stop_serve

assert_no_secret "$password"
echo PASS
