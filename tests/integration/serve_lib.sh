# Helpers for the `hwimg serve` suites (sourced after lib.sh and registry_lib.sh): start a mirror
# on a free loopback port, made-up host facts, images made by others, and the digests a registry holds.

# start_serve NAME ARGS...: runs `hwimg serve --listen 127.0.0.1:0 ARGS` (unless ARGS name another
# --listen) in the background; sets SERVE_ADDR (ADDRESS:PORT), SERVE_PID and SERVE_LOG (its stderr).
start_serve() {
  local name=$1; shift
  SERVE_LOG="$TEST_TMP/serve-$name.log"
  local listen=(--listen 127.0.0.1:0)
  [[ " $* " == *" --listen "* ]] && listen=()
  : > "$SERVE_LOG"  # before the first look at it, which may come before serve's shell opens it
  "$HWIMG" serve "${listen[@]}" "$@" 2>"$SERVE_LOG" &
  SERVE_PID=$!
  add_cleanup "kill -9 $SERVE_PID 2>/dev/null"
  local line=""
  for _ in $(seq 1 200); do
    line=$(grep -m1 -o 'listening on [0-9.]*:[0-9]*' "$SERVE_LOG" || true)
    [ -n "$line" ] && break
    kill -0 "$SERVE_PID" 2>/dev/null || fail "hwimg serve ($name) exited: $(cat "$SERVE_LOG")"
    sleep 0.05
  done
  [ -n "$line" ] || fail "hwimg serve ($name) did not start: $(cat "$SERVE_LOG")"
  SERVE_ADDR=${line#listening on }
}

# stop_serve: SIGTERM, then waits; fails unless it exits 0.
stop_serve() {
  kill -TERM "$SERVE_PID"
  local status=0
  wait "$SERVE_PID" || status=$?
  assert_eq 0 "$status" "hwimg serve's exit status after SIGTERM"
}

# await_readyz ADDR BODY_GLOB: GETs ADDR/readyz until its body matches the glob (the upstreams are
# checked on a thread of their own as serve starts), 5 s at most; leaves the last answer in
# $CODE and $BODY_FILE.
await_readyz() {
  for _ in $(seq 1 100); do
    fetch "http://$1/readyz"
    # shellcheck disable=SC2053
    [[ "$(cat "$BODY_FILE")" == $2 ]] && return 0
    sleep 0.05
  done
}

# facts_file FILE LEVEL: host facts of an amd64 machine of that level without an NVIDIA driver.
facts_file() {
  printf '{"schema": 1, "os": "linux", "cpu": {"arch": "amd64", "vendor": "Intel", "level": "%s", "features": []}, "nvidia": null}\n' "$2" > "$1"
}

# push_foreign NAME SPEC REF [SKOPEO ARGS...]: an image made by another tool: the images of SPEC
# (layout_writer.py: platforms and env only, no org.hwimg.* anywhere) in the layout $TEST_TMP/NAME,
# copied to the registry reference REF by `skopeo copy --all`, digests kept.
push_foreign() {
  local layout="$TEST_TMP/$1" spec=$2 ref=$3; shift 3
  make_layout "$layout" foreign "$spec" > /dev/null
  skopeo copy -q --all --preserve-digests "$@" "oci:$layout:foreign" "docker://$ref"
}
# foreign_digest NAME [ID [.config]]: in push_foreign's layout NAME, the index's digest, or the
# manifest digest of SPEC's image ID; with .config, that image's config digest.
foreign_digest() {
  local digest
  digest=$(jq -r --arg r "foreign${2:+-$2}" \
    '.manifests[] | select(.annotations["org.opencontainers.image.ref.name"] == $r) | .digest' "$TEST_TMP/$1/index.json")
  if [ "${3:-}" = .config ]; then jq -r .config.digest "$TEST_TMP/$1/blobs/sha256/${digest#sha256:}"; else echo "$digest"; fi
}

# fetch URL [CURL ARGS...]: GETs URL; body in $BODY_FILE, status in $CODE, headers in $HEADERS.
BODY_FILE="$TEST_TMP/body"
fetch() {
  local url=$1; shift
  CODE=$(curl -sS -o "$BODY_FILE" -D "$TEST_TMP/headers" -w '%{http_code}' "$@" "$url")
  HEADERS=$(tr -d '\r' < "$TEST_TMP/headers")
}
header_value() { grep -i "^$1:" <<<"$HEADERS" | tail -1 | cut -d' ' -f2-; }
body_digest() { echo "sha256:$(sha256sum < "$BODY_FILE" | cut -d' ' -f1)"; }
