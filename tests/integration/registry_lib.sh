# Helpers for the registry suites (sourced after lib.sh): a real local registry,
# skopeo options, and a check that no secret leaked into any output.

require_tool docker-registry
require_tool skopeo
require_tool openssl
require_tool htpasswd
require_tool python3
require_tool curl
require_tool jq

REGISTRY_SCRIPT="$HWIMG_SOURCE_DIR/registry/run-registry.sh"
PROXY="$HWIMG_SOURCE_DIR/tests/integration/registry_proxy.py"
ALL_OUTPUT="$TEST_TMP/all-output.log"   # everything hwimg printed, checked for secrets at the end

# start_registry NAME [--no-tls] [--no-auth]: sets REG_<NAME>_DIR and prints nothing; the address
# is in $dir/address.
start_registry() {
  local name=$1; shift
  local dir="$TEST_TMP/registry-$name"
  "$REGISTRY_SCRIPT" start "$dir" "$@" >/dev/null
  add_cleanup "\"$REGISTRY_SCRIPT\" stop \"$dir\""
  printf -v "REG_${name}_DIR" '%s' "$dir"
}

# use_registry NAME [OPTIONS]: start_registry, then sets dir, reg and password to its directory,
# address and password.
use_registry() {
  start_registry "$@"
  local dir_var="REG_$1_DIR"
  dir=${!dir_var}
  reg=$(cat "$dir/address")
  password=$(cat "$dir/password")
}

# tls_registry: the registry "tls" (TLS + htpasswd) by use_registry; also sets certs (a skopeo
# cert dir), tls (hwimg's flags) and DOCKER_CONFIG (empty: each suite logs in as it needs).
tls_registry() {
  use_registry tls
  certs="$TEST_TMP/certs"; mkdir -p "$certs"; cp "$dir/cert.pem" "$certs/ca.crt"
  export DOCKER_CONFIG="$TEST_TMP/docker"
  tls=(--ca-file "$dir/cert.pem")
}

# start_proxy NAME ARGS...: a registry_proxy.py (ARGS: --upstream ADDR and its faults) with its port
# file in $TEST_TMP/NAME.port (the proxy puts NAME.port.stalled/.hung beside it) and its log in
# $TEST_TMP/NAME.log; sets PROXY_ADDR to 127.0.0.1:PORT.
start_proxy() {
  local name=$1; shift
  local port_file="$TEST_TMP/$name.port"
  python3 "$PROXY" --port-file "$port_file" --log "$TEST_TMP/$name.log" "$@" &
  add_cleanup "kill $! 2>/dev/null"
  for _ in $(seq 1 100); do [ -s "$port_file" ] && break; sleep 0.05; done
  [ -s "$port_file" ] || fail "proxy $name did not start"
  touch "$TEST_TMP/$name.log"
  PROXY_ADDR="127.0.0.1:$(cat "$port_file")"
}

# hw ARGS...: runs hwimg, teeing its output into $ALL_OUTPUT; output in $OUT, status in $STATUS.
hw() {
  set +e
  OUT=$("$HWIMG" "$@" 2>&1)
  STATUS=$?
  set -e
  printf '%s\n' "$OUT" >> "$ALL_OUTPUT"
}
hw_ok() {
  hw "$@"
  [ "$STATUS" = 0 ] || fail "hwimg $1 failed ($STATUS): $OUT"
}
hw_fails() {
  hw "$@"
  [ "$STATUS" != 0 ] || fail "hwimg $1 should have failed: $OUT"
}

log_mark() { wc -l <"$1/registry.log"; }
requests_since() { # requests_since DIR MARK: "METHOD PATH STATUS" per request, 401 challenges left out
  tail -n +"$(($2 + 1))" "$1/registry.log" | grep -o '"[A-Z]* /v2/[^"]*" [0-9]*' | grep -v '" 401$' |
    sed -E 's/^"([A-Z]+) ([^ ]*) HTTP[^"]*" /\1 \2 /' || true
}

# count_blob_uploads LOG: finished blob uploads in a registry log (PUT to an upload session -> 201).
count_blob_uploads() { grep -c '"PUT /v2/[^ ]*/blobs/uploads/[^ ]* HTTP/[0-9.]*" 201' "$1" || true; }

# assert_no_secret SECRET: fails if SECRET appears in anything hwimg printed.
assert_no_secret() {
  if grep -qF -- "$1" "$ALL_OUTPUT"; then fail "a secret appeared in hwimg's output"; fi
}
