#!/usr/bin/env bash
# The shell examples in README.md and docs/*.md run as written. Every ```sh block of a page runs, in
# document order, in one bash process per page with `set -euo pipefail` (tests/integration/
# docs_blocks.py), from a copy of the checkout whose build/hwimg is the binary under test, as root
# (the walkthrough unpacks and runs a variant with umoci and runc). Blocks marked
# `<!-- illustration: WHY -->` are listed as skipped with their reason. The README's walkthrough
# starts the registry (registry/run-registry.sh, TLS and a password) that its later sections use;
# the other pages find it running as they say, with its address in $addr and the login stored. A page's background
# processes are ended when it is done. A failing command fails the suite with its page:line, its
# text and its block's output.
if [ "$(id -u)" = 0 ] && [ -z "${HWIMG_DOCS_NETNS:-}" ] && command -v unshare >/dev/null &&
   command -v ip >/dev/null && unshare --net true 2>/dev/null; then
  # A network namespace of its own: the examples' fixed ports (hwimg serve's 127.0.0.1:5050) are
  # free whatever else runs on this machine.
  exec env HWIMG_DOCS_NETNS=1 unshare --net bash -c 'ip link set lo up && exec bash "$0"' "$0"
fi
source "$(dirname "$0")/lib.sh"
require_root
for tool in docker-registry openssl htpasswd curl jq umoci runc python3; do require_tool "$tool"; done

blocks="$HWIMG_SOURCE_DIR/tests/integration/docs_blocks.py"
# The README's first block is the quick start itself (its first lines are not for markers):
# scripts/quickstart and scripts/test, checked by test_quickstart.sh and test_docs.sh.
readme_skips=(--skip=3="the quick start itself (test_quickstart.sh, test_docs.sh)")

step "a checkout whose build/hwimg is $HWIMG"
tree="$TEST_TMP/checkout"
mkdir -p "$tree/build" "$TEST_TMP/home"
for entry in "$HWIMG_SOURCE_DIR"/*; do
  case ${entry##*/} in build* | out | bundle | Testing) continue ;; esac
  ln -s "$entry" "$tree/${entry##*/}"
done
ln -s "$HWIMG" "$tree/build/hwimg"
export HOME="$TEST_TMP/home" DOCKER_CONFIG="$TEST_TMP/home/.docker"
add_cleanup "\"$HWIMG_SOURCE_DIR/registry/run-registry.sh\" stop \"$tree/build/registry\""
cd "$tree"

ran=0
run=0
skipped=()
# The README twice: a reader who goes through it again (bundle/, out/ and the layouts are there).
for page in README.md README.md docs/*.md; do
  run=$((run + 1))
  skips=()
  [ "$page" = README.md ] && skips=("${readme_skips[@]}")
  [ "$run" = 2 ] || while IFS=$'\t' read -r line why; do skipped+=("$page:$line: $why"); done \
    < <(python3 "$blocks" skipped "$page" "${skips[@]}")
  logs="$TEST_TMP/logs/$run"
  mkdir -p "$logs"
  python3 "$blocks" script "$page" "$logs" "${skips[@]}" > "$logs/script.sh"
  count=$(grep -c '^__doc_line=[0-9]*$' "$logs/script.sh" || true)
  [ "$count" -gt 0 ] || continue
  step "$page: $count blocks$([ "$run" = 2 ] && echo ", again")"
  if [ "$page" != README.md ]; then
    # As the README's walkthrough left it: running, $addr set, logged in.
    addr=$(registry/run-registry.sh start build/registry)
    export addr
    build/hwimg login "$addr" --username hwimg --password-stdin --ca-file build/registry/cert.pem \
      < build/registry/password > /dev/null
  fi
  # In a session of its own, so that whatever it leaves running is ended with it; a block that
  # waits for ever (a server left in the foreground) stops it after 5 minutes.
  set +e
  setsid timeout 300 bash "$logs/script.sh" < /dev/null &
  pid=$!
  wait "$pid"
  status=$?
  set -e
  kill -- "-$pid" 2>/dev/null || true
  registry/run-registry.sh stop build/registry
  block=0
  for block in $(ls "$logs" | sed -n 's/^\([0-9]*\)\.log$/\1/p' | sort -n); do
    echo "# output of $page:$block"
    cat "$logs/$block.log"
  done
  if [ "$status" != 0 ]; then
    where="$page (status $status)" command="?"
    [ "$status" != 124 ] || where="$page (still running after 5 minutes)"
    if [ -s "$logs/failed" ]; then
      IFS=$'\t' read -r line status command < "$logs/failed"
      where="$page:$line (exit status $status)"
    fi
    fail "$where, in the block at $page:$block: $command"$'\n'"its output:"$'\n'"$(cat "$logs/$block.log" 2>/dev/null)"
  fi
  ran=$((ran + count))
done

step "$ran blocks ran; ${#skipped[@]} skipped"
for entry in "${skipped[@]}"; do echo "skipped $entry"; done
[ "$ran" -gt 0 ] || fail "no examples found"
echo PASS
