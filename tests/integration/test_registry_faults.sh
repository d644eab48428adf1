#!/usr/bin/env bash
# hwimg push through a proxy that drops connections, answers 500/503 and truncates bodies; an
# interrupted push resumed uploads only what is missing.
source "$(dirname "$0")/lib.sh"
source "$(dirname "$0")/registry_lib.sh"

use_registry faults --no-tls
export DOCKER_CONFIG="$TEST_TMP/docker"
mkdir -p "$DOCKER_CONFIG"

# registry_proxy NAME ARGS...: a proxy in front of the registry (start_proxy proxy-NAME), logged in.
registry_proxy() {
  local name=$1; shift
  start_proxy "proxy-$name" --upstream "$reg" "$@"
  printf '{"auths":{"%s":{"auth":"%s"}}}' "$PROXY_ADDR" "$(printf 'hwimg:%s' "$password" | base64 -w0)" \
    > "$DOCKER_CONFIG/config.json"
  chmod 600 "$DOCKER_CONFIG/config.json"
}

step "a push through 20 % faults completes and skopeo verifies what the registry holds"
layout="$TEST_TMP/layout"
index_digest=$(make_layout "$layout" v1 --variants 4 --shared-size 400000)
registry_proxy flaky --fault-rate 0.2 --seed 3
hw_ok push --plain-http --chunk-size 262144 "oci:$layout:v1" "$PROXY_ADDR/test/flaky"
assert_contains "$OUT" "@$index_digest: 9 blobs uploaded" "push through faults"
# The variants' NFD artifacts go through the same faults and retries as the image.
assert_contains "$OUT" "; 4 compat artifacts attached;" "artifacts through faults"
[ -z "$(grep 'warning' <<<"$OUT")" ] || fail "warnings after a push through faults: $OUT"
faults=$(grep -c '^fault' "$TEST_TMP/proxy-flaky.log" || true)
[ "$faults" -ge 5 ] || fail "too few faults were injected ($faults)"
for kind in drop-before drop-after 500 503 truncate; do
  grep -q "^fault $kind" "$TEST_TMP/proxy-flaky.log" || fail "no $kind fault was injected"
done
echo "faults injected: $faults"
skopeo copy -q --all --preserve-digests --src-tls-verify=false --src-creds "hwimg:$password" \
  "docker://$reg/test/flaky:v1" "oci:$TEST_TMP/back:v1"
assert_eq "$(ls "$layout/blobs/sha256" | sort)" "$(ls "$TEST_TMP/back/blobs/sha256" | sort)" "blobs copied back"
raw=$(skopeo inspect --raw --tls-verify=false --creds "hwimg:$password" "docker://$reg/test/flaky:v1" | sha256sum | cut -d' ' -f1)
assert_eq "$index_digest" "sha256:$raw" "index digest after the faulty push"

step "blob checks that keep answering 500 (distribution 2.8 under concurrent uploads) do not fail the push: it uploads"
registry_proxy heads --fail-blob-heads
hw_ok push --plain-http "oci:$layout:v1" "$PROXY_ADDR/test/heads"
assert_contains "$OUT" "@$index_digest: " "push whose blob checks all fail"
grep -q '^fault 500 HEAD /v2/test/heads/blobs/sha256:' "$TEST_TMP/proxy-heads.log" || fail "no blob check was failed"
assert_eq "$index_digest" "sha256:$(skopeo inspect --raw --tls-verify=false --creds "hwimg:$password" \
  "docker://$reg/test/heads:v1" | sha256sum | cut -d' ' -f1)" "index digest after the push"

step "an interrupted push, resumed, uploads only the missing blobs"
resume="$TEST_TMP/resume"
resume_digest=$(make_layout "$resume" v1 --variants 4 --seed 5 --shared-size $((2 << 20)) --variant-size $((2 << 20)))
before=$(count_blob_uploads "$dir/registry.log")
registry_proxy hang --hang-after-uploads 4
# Without NFD artifacts: the registry log's uploads are then the image's blobs only.
"$HWIMG" push --plain-http --no-compat -j 1 "oci:$resume:v1" "$PROXY_ADDR/test/resume" > "$TEST_TMP/interrupted.log" 2>&1 &
push_pid=$!
for _ in $(seq 1 200); do [ -e "$TEST_TMP/proxy-hang.port.hung" ] && break; sleep 0.05; done
[ -e "$TEST_TMP/proxy-hang.port.hung" ] || fail "the push never reached 4 uploads"
kill -9 "$push_pid"
wait "$push_pid" 2>/dev/null || true
# Blobs under 1 MiB (the configs) go up beside the -j slots: uploads in flight may have landed too,
# and the registry logs one as it finishes: count once the log has stopped growing.
landed=$(($(count_blob_uploads "$dir/registry.log") - before))
for _ in $(seq 1 20); do
  sleep 0.25
  now=$(($(count_blob_uploads "$dir/registry.log") - before))
  [ "$now" = "$landed" ] && break
  landed=$now
done
[ "$landed" -ge 4 ] && [ "$landed" -lt 9 ] || fail "the interrupted push landed $landed of 9 blobs"
registry_proxy clean
hw_ok push --plain-http --no-compat "oci:$resume:v1" "$PROXY_ADDR/test/resume"
assert_contains "$OUT" "@$resume_digest: $((9 - landed)) blobs uploaded" "resumed push uploads the rest"
assert_contains "$OUT" "0 mounted, $landed already present" "resumed push skips what is there"

step "bad registry answers are refused with messages that name them"
printf '{"auths":{}}' > "$DOCKER_CONFIG/config.json"
for mode in wrong-digest oversize invalid-json unknown-type; do
  registry_proxy "bad-$mode" --tamper "$mode"
  hw_fails tag --plain-http "$PROXY_ADDR/test/flaky:v1" "tampered-$mode"
  case $mode in
    wrong-digest) assert_contains "$OUT" "failed to get manifest $PROXY_ADDR/test/flaky:v1: wrong digest: Docker-Content-Digest says $index_digest but the content hashes to" "$mode" ;;
    oversize) assert_contains "$OUT" "failed to get manifest $PROXY_ADDR/test/flaky:v1: answer larger than 4194304 bytes" "$mode" ;;
    invalid-json) assert_contains "$OUT" "failed to get manifest $PROXY_ADDR/test/flaky:v1: invalid JSON" "$mode" ;;
    unknown-type) assert_contains "$OUT" "failed to get manifest $PROXY_ADDR/test/flaky:v1: unknown media type \"application/vnd.example.unknown+json\"" "$mode" ;;
  esac
  if skopeo inspect --raw --tls-verify=false --creds "hwimg:$password" "docker://$reg/test/flaky:tampered-$mode" >/dev/null 2>&1; then
    fail "a tag was written from a tampered answer ($mode)"
  fi
done
hw_fails tag --plain-http "$PROXY_ADDR/test/flaky@sha256:0000000000000000000000000000000000000000000000000000000000000000" x
assert_contains "$OUT" "HTTP 404 MANIFEST_UNKNOWN" "unknown digest"

assert_no_secret "$password"
echo "PASS"
