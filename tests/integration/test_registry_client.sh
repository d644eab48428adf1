#!/usr/bin/env bash
# Runs the registry client's doctest cases (tests/unit/test_registry_client.cpp) against a real
# registry behind a proxy that paginates tags/list with Link headers.
source "$(dirname "$0")/lib.sh"
source "$(dirname "$0")/registry_lib.sh"

unit_tests="${HWIMG_BUILD_DIR:-$(dirname "$HWIMG")}/hwimg_unit_tests"
[ -x "$unit_tests" ] || skip "hwimg_unit_tests is not built"

use_registry client --no-tls
start_proxy proxy --upstream "$reg" --paginate-tags 2
proxy=$PROXY_ADDR
export DOCKER_CONFIG="$TEST_TMP/docker"
mkdir -p "$DOCKER_CONFIG"
printf '{"auths":{"%s":{"auth":"%s"}}}' "$proxy" "$(printf 'hwimg:%s' "$password" | base64 -w0)" > "$DOCKER_CONFIG/config.json"

step "push a layout, then read it with the client API"
layout="$TEST_TMP/layout"
index_digest=$(make_layout "$layout" v1 --variants 4)
# --no-compat: the client test lists exactly the layout's tags, no sha256-<hex> referrers tags.
hw_ok push --plain-http --no-compat "oci:$layout:v1" "$proxy/client/app"
tags=$(jq -r '[.manifests[].annotations["org.opencontainers.image.ref.name"]] | join(",")' "$layout/index.json")

HWIMG_TEST_REGISTRY="$proxy" HWIMG_TEST_REPOSITORY=client/app HWIMG_TEST_INDEX_DIGEST="$index_digest" \
  HWIMG_TEST_TAGS="$tags" HWIMG_TEST_DOCKER_CONFIG="$DOCKER_CONFIG" \
  "$unit_tests" --test-case='registry client:*' > "$TEST_TMP/unit.log" 2>&1 ||
  fail "client cases failed: $(cat "$TEST_TMP/unit.log")"
cat "$TEST_TMP/unit.log"
grep -Eq 'test cases: +2 \| +2 passed' "$TEST_TMP/unit.log" || fail "the client cases did not run"
pages=$(grep -c '^GET /v2/client/app/tags/list 200' "$TEST_TMP/proxy.log" || true)
[ "$pages" -ge 3 ] || fail "tags/list was not followed through its pages ($pages requests)"
echo "PASS"
