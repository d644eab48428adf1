#!/usr/bin/env bash
# The registry commands against a registry that looks remote (issue 22): Debian's docker-registry
# (TLS + htpasswd) behind bench/delay_proxy.py (5 ms round trip, a TCP forwarder, so TLS is
# end to end), reached by the name localhost:PORT. push, select, digest, copy, ls, delete and
# serve work through it, checked with skopeo; connections are reused where that is cheap to see
# (the proxy logs each connection). Behaviour only: timings belong to bench/remote.
source "$(dirname "$0")/lib.sh"
source "$(dirname "$0")/registry_lib.sh"
source "$(dirname "$0")/serve_lib.sh"

# start_delay_proxy NAME UPSTREAM RTT_MS: bench/delay_proxy.py logging to $TEST_TMP/NAME.log;
# sets DELAY_PID and DELAY_HOST (localhost:PORT).
start_delay_proxy() {
  local name=$1 port_file="$TEST_TMP/$1.port"
  python3 "$HWIMG_SOURCE_DIR/bench/delay_proxy.py" --upstream "$2" --rtt-ms "$3" --port-file "$port_file" \
    --log "$TEST_TMP/$name.log" &
  DELAY_PID=$!
  add_cleanup "kill $DELAY_PID 2>/dev/null"
  for _ in $(seq 1 100); do [ -s "$port_file" ] && break; sleep 0.05; done
  [ -s "$port_file" ] || fail "the delay proxy $name did not start"
  touch "$TEST_TMP/$name.log"
  DELAY_HOST="localhost:$(cat "$port_file")"
}
proxy_log="$TEST_TMP/remote.log"
mark() { wc -l <"$proxy_log"; }
conns_since() { tail -n +"$(($1 + 1))" "$proxy_log" | grep -c '^open ' || true; }

tls_registry
start_delay_proxy remote "$reg" 5
remote=$DELAY_HOST
proxy_pid=$DELAY_PID
skopeo_opts=(--cert-dir "$certs" --creds "hwimg:$password")
raw_digest() { echo "sha256:$(skopeo inspect --raw "${skopeo_opts[@]}" "docker://$1" | sha256sum | cut -d' ' -f1)"; }

step "the proxy refuses addresses that are not this machine's"
set +e
refused=$(python3 "$HWIMG_SOURCE_DIR/bench/delay_proxy.py" --upstream 192.0.2.1:443 --port-file "$TEST_TMP/x.port" 2>&1)
status=$?
set -e
[ "$status" != 0 ] || fail "the delay proxy forwarded to 192.0.2.1"
assert_contains "$refused" "must be a loopback address" "the refusal"

step "login and push through the proxy"
hw_ok login "$remote" --username hwimg --password-stdin "${tls[@]}" < "$dir/password"
layout="$TEST_TMP/layout"
index_digest=$(make_layout "$layout" 1.0 --variants 5)
jobs=2
m=$(mark)
hw_ok push -j "$jobs" "${tls[@]}" "oci:$layout:1.0" "$remote/team/app:1.0"
assert_contains "$OUT" "$remote/team/app:1.0@$index_digest" "push output"
push_conns=$(conns_since "$m")
echo "push -j $jobs opened $push_conns connections"
assert_eq "$index_digest" "$(raw_digest "$remote/team/app:1.0")" "the pushed index as skopeo reads it through the proxy"
# Reuse: the 74 exchanges (11 blobs of at most 1 MiB, 6 manifests, 5 artifacts) share one HTTP/2
# connection; blobs over 1 MiB would take up to -j connections of their own.
assert_eq 1 "$push_conns" "connections opened by a 5-variant push of small blobs"

step "select, check and digest: the variant for an x86-64-v3 host, each over one connection"
facts_file "$TEST_TMP/v3.json" x86-64-v3
v3=$(raw_digest "$remote/team/app:1.0-cpu-x86-64-v3")
m=$(mark)
hw_ok select "${tls[@]}" --host "$TEST_TMP/v3.json" "$remote/team/app:1.0"
assert_eq "$remote/team/app@$v3" "$OUT" "select through the proxy"
assert_eq 1 "$(conns_since "$m")" "connections opened by select"
m=$(mark)
hw_ok check "${tls[@]}" --host "$TEST_TMP/v3.json" "$remote/team/app:1.0"
assert_contains "$OUT" "runs on the host in $TEST_TMP/v3.json as variant cpu-x86-64-v3" "check through the proxy"
assert_eq 1 "$(conns_since "$m")" "connections opened by check"
m=$(mark)
hw_ok digest "${tls[@]}" "$remote/team/app:1.0"
assert_eq "$index_digest" "$OUT" "digest through the proxy"
assert_eq 1 "$(conns_since "$m")" "connections opened by digest"
hw_ok digest "${tls[@]}" --for "$TEST_TMP/v3.json" "$remote/team/app:1.0"
assert_eq "$v3" "$OUT" "digest --for through the proxy"

step "an unchanged re-push moves nothing"
hw_ok push -j "$jobs" "${tls[@]}" "oci:$layout:1.0" "$remote/team/app:1.0"
assert_contains "$OUT" "0 blobs uploaded" "re-push blobs"
assert_contains "$OUT" "0 manifests pushed" "re-push manifests"

step "copy within the registry: the same index at the destination, blobs mounted"
hw_ok copy "${tls[@]}" "$remote/team/app:1.0" "$remote/team/mirror:1.0"
assert_contains "$OUT" "$remote/team/mirror:1.0@$index_digest" "copy output"
assert_contains "$OUT" "0 streamed" "nothing streamed within a registry"
assert_eq "$index_digest" "$(raw_digest "$remote/team/mirror:1.0")" "the copy's index as skopeo reads it"
assert_eq "$v3" "$(raw_digest "$remote/team/mirror:1.0-cpu-x86-64-v3")" "a variant's tag at the destination"

step "ls: every tag, one connection"
expected_tags=$(printf '%s\n' 1.0 1.0-cpu-x86-64 1.0-cpu-x86-64-v2 1.0-cpu-x86-64-v2-4 1.0-cpu-x86-64-v3 1.0-cpu-x86-64-v4)
m=$(mark)
hw_ok ls "${tls[@]}" --exclude-digest-tags "$remote/team/mirror"
assert_eq "$expected_tags" "$OUT" "tags of the copy"
assert_eq 1 "$(conns_since "$m")" "connections opened by ls"
hw_ok ls "${tls[@]}" "$remote/team/app"
assert_eq 11 "$(wc -l <<<"$OUT")" "tags with the 5 referrers tags"

step "delete: the tag goes, a later select and digest fail saying so, the variants stay"
hw_ok delete "${tls[@]}" "$remote/team/mirror:1.0"
assert_eq "deleted tag $remote/team/mirror:1.0 (it named $index_digest; that manifest and its other tags stay)" "$OUT" \
  "delete output"
hw_fails select "${tls[@]}" --host "$TEST_TMP/v3.json" "$remote/team/mirror:1.0"
assert_eq 1 "$STATUS" "select of a deleted tag"
assert_contains "$OUT" "$remote/team/mirror:1.0" "the error names the reference"
assert_contains "$OUT" "no tag 1.0 in $remote/team/mirror (HTTP 404 MANIFEST_UNKNOWN); it has " "the error says the registry does not know it"
hw_fails digest "${tls[@]}" "$remote/team/mirror:1.0"
assert_contains "$OUT" "no tag 1.0 in $remote/team/mirror (HTTP 404 MANIFEST_UNKNOWN)" "digest of a deleted tag"
expect_failure skopeo inspect --raw "${skopeo_opts[@]}" "docker://$remote/team/mirror:1.0"
assert_contains "$OUT" "manifest unknown" "skopeo after the delete"
hw_ok ls "${tls[@]}" --exclude-digest-tags "$remote/team/mirror"
assert_eq "$(grep -v '^1.0$' <<<"$expected_tags")" "$OUT" "tags after the delete"
assert_eq "$index_digest" "$(raw_digest "$remote/team/app:1.0")" "the source is untouched"

step "serve through the proxy: a tag answered with the selected variant; cached answers ask nothing"
start_serve remote --upstream "$remote" "${tls[@]}" --host "$TEST_TMP/v3.json"
fetch "http://$SERVE_ADDR/v2/team/app/manifests/1.0"
assert_eq 200 "$CODE" "GET of the tag through serve"
assert_eq "$v3" "$(header_value docker-content-digest)" "Docker-Content-Digest"
assert_eq "$v3" "$(body_digest)" "the variant's manifest, byte for byte"
skopeo inspect --raw --tls-verify=false "docker://$SERVE_ADDR/team/app:1.0" > "$BODY_FILE"
assert_eq "$v3" "$(body_digest)" "skopeo through serve"
hw_ok tag "${tls[@]}" "$remote/team/app:1.0" again
m=$(mark)
requests=$(log_mark "$dir")
fetch "http://$SERVE_ADDR/v2/team/app/manifests/again"
assert_eq "$v3" "$(header_value docker-content-digest)" "another tag of the index"
assert_eq 0 "$(conns_since "$m")" "upstream connections opened for a second tag (the first is kept alive)"
# The variant's manifest is kept by digest: the second tag costs the upstream its index alone.
assert_eq "GET /v2/team/app/manifests/again 200" "$(requests_since "$dir" "$requests")" "upstream requests for a second tag"
requests=$(log_mark "$dir")
fetch "http://$SERVE_ADDR/v2/team/app/manifests/again"
assert_eq "$v3" "$(header_value docker-content-digest)" "the cached answer"
assert_eq "" "$(requests_since "$dir" "$requests")" "upstream requests for a cached tag"
layer=$(skopeo inspect --raw "${skopeo_opts[@]}" "docker://$remote/team/app:1.0-cpu-x86-64-v3" | jq -r '.layers[-1].digest')
fetch "http://$SERVE_ADDR/v2/team/app/blobs/$layer"
assert_eq "$layer" "$(body_digest)" "a layer streamed through serve and the proxy"
stop_serve

step "the proxy stops cleanly on SIGTERM and logged every connection it closed"
kill -TERM "$proxy_pid"
status=0
wait "$proxy_pid" || status=$?
assert_eq 0 "$status" "the delay proxy's exit status"
assert_eq "$(grep -c '^open ' "$proxy_log")" "$(grep -c '^close ' "$proxy_log")" "connections opened and closed"

assert_no_secret "$password"
echo PASS
