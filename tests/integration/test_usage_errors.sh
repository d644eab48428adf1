#!/usr/bin/env bash
# Usage mistakes exit 2 in every subcommand (issue 15 §4): a bad reference, tag, flag value or
# missing argument, whichever library function finds it, with exactly one `hwimg: error:` line
# (CLI11's own mistakes too, with the nearest command or option: issue 25) and nothing on stdout. Each row of the table is one command line; every row runs, then
# the failed ones are listed.
source "$(dirname "$0")/lib.sh"

cd "$TEST_TMP"
printf 'name: app\nbase: scratch\nlayers: [{from: recipe.yaml, to: /recipe.yaml}]\n' >recipe.yaml
"$HWIMG" build recipe.yaml -o layout --tag 1 >/dev/null

# Each row: the words of one command line, then ' -- ' and a part of the expected stderr.
ROWS=(
  "build recipe.yaml -o out --tag bad@@tag -- invalid tag \"bad@@tag\""
  "build recipe.yaml -o out --only nope -- unknown variant \"nope\" in --only"
  "build recipe.yaml -o out --compression lz4 -- hwimg: error: --compression: \"lz4\" is not one of {gzip,zstd} (see hwimg build --help)"
  "build recipe.yaml -o out --compression-level 99 -- invalid --compression-level 99"
  "build recipe.yaml -o out -j x -- --jobs"
  "build recipe.yaml --push bad!!ref -- failed to parse reference \"bad!!ref\""
  "build recipe.yaml --push 127.0.0.1:5000/app -- name the tag to push to"
  "build recipe.yaml -- name where the images go"
  "build -- name a recipe file, or a Dockerfile with --dockerfile FILE"
  "build recipe.yaml --dockerfile Dockerfile -o out -- name a recipe file (recipe.yaml) or --dockerfile Dockerfile, not both"
  "build --dockerfile Dockerfile --build-arg MARCH -o out -- invalid --build-arg \"MARCH\": expected NAME=VALUE"
  "build recipe.yaml --build-arg A=1 -o out -- --context, --target and --build-arg go with --dockerfile"
  "build recipe.yaml -o out --no-such-flag -- --no-such-flag"
  "inspect bad!!ref -- failed to parse reference \"bad!!ref\""
  "inspect oci:layout:bad@@tag -- invalid tag \"bad@@tag\""
  "inspect oci:layout --format yaml -- --format: \"yaml\" is not one of {table,json}"
  "probe --format xml -- --format: \"xml\" is not one of {auto,json,text,nfd}"
  "matrix recipe.yaml --format xml -- --format"
  "push layout 127.0.0.1:5000/app:1 -- the source must be an image layout, oci:DIR[:TAG] (did you mean oci:layout?)"
  "push oci:layout:bad@@tag 127.0.0.1:5000/app:1 -- invalid tag \"bad@@tag\""
  "push oci:layout:1 bad!!ref -- failed to parse reference \"bad!!ref\""
  "push oci:layout:1 127.0.0.1:5000/app:1 -j 0 -- --jobs: Value 0 not in range"
  "tag bad!!ref 2 -- failed to parse reference \"bad!!ref\""
  "tag 127.0.0.1:5000/app:1 bad@@tag -- invalid"
  "login bad!!host --username u --password-stdin -- is not a registry host[:port]"
  "login 127.0.0.1:5000 --username u --password-stdin -- no password on standard input"
  "select bad!!ref -- failed to parse reference \"bad!!ref\""
  "select oci:layout:bad@@tag -- invalid tag \"bad@@tag\""
  "select layout:1 -- hwimg: error: failed to parse reference \"layout:1\": it names an image layout on this machine and an image on Docker Hub; write oci:layout:1 for the layout or docker.io/library/layout:1 for Docker Hub"
  "inspect ./layout -- hwimg: error: failed to parse reference \"./layout\": that is an image layout on this machine; write oci:./layout"
  "copy layout:1 oci:copied -- write oci:layout:1 for the layout"
  "export layout:1 --variant x --format oci-archive -o x.tar -- write oci:layout:1 for the layout"
  "digest layout:1 -- write oci:layout:1 for the layout"
  "select oci:layout:1 --gpus 0,,1 -- empty GPU name"
  "select oci:layout:1 --format xml -- --format: \"xml\" is not one of {ref,json,docker-args,podman-args}"
  "select oci:layout:1 --host /nonexistent/facts.json -- File does not exist"
  "check bad!!ref -- failed to parse reference \"bad!!ref\""
  "check oci:layout:bad@@tag -- invalid tag \"bad@@tag\""
  "check oci:layout:1 --format xml -- --format: \"xml\" is not one of {text,json}"
  "cdi -- hwimg cdi needs a command: generate"
  "cdi generate --host /nonexistent/facts.json -- File does not exist"
  "index create bad!!ref --from 127.0.0.1:5000/app:1-a -- failed to parse reference \"bad!!ref\""
  "index create 127.0.0.1:5000/app:1 --from bad!!ref -- failed to parse reference \"bad!!ref\""
  "index create 127.0.0.1:5000/app@sha256:0000000000000000000000000000000000000000000000000000000000000000 --from 127.0.0.1:5000/app:1-a -- name it by tag"
  "serve --upstream bad!!host -- invalid upstream \"bad!!host\""
  "serve --upstream 127.0.0.1:5000 --listen nonsense -- invalid --listen \"nonsense\""
  "serve --upstream 127.0.0.1:5000 --ttl 5x -- invalid duration \"5x\""
  "serve --upstream 127.0.0.1:5000 --upstream-check 0s -- hwimg: error: invalid --upstream-check \"0s\": it must be longer than 0"
  "serve configure-node --upstream 127.0.0.1:5000 -- configure-node needs --containerd-dir, --crio-dir or both"
  "serve configure-node --containerd-dir . -- configure-node needs at least one --upstream"
  "serve configure-node --upstream r.example.org --listen 127.0.0.1:0 --containerd-dir . -- invalid --listen \"127.0.0.1:0\""
  "serve configure-node --upstream 127.0.0.1:5000 --crio-dir . -- a registry with a port needs a name"
  "serve configure-node --upstream r.example.org --crio-dir . --direct quay.io/x -- invalid --direct \"quay.io/x\""
  "completion fish -- hwimg: error: SHELL: \"fish\" is not one of {bash,zsh} (see hwimg completion --help)"
  "no-such-command -- hwimg: error: unknown command \"no-such-command\"; hwimg --help lists the commands"
  "sellect oci:layout:1 -- hwimg: error: unknown command \"sellect\" (did you mean select?); hwimg --help lists the commands"
  "select oci:layout:1 --gpu 0 -- hwimg: error: unknown option --gpu for hwimg select (did you mean --gpus?)"
  "probe --format jsn -- hwimg: error: --format: \"jsn\" is not one of {auto,json,text,nfd} (did you mean json?)"
  "cache lss -- hwimg: error: unknown command \"lss\" (did you mean ls?); hwimg cache --help lists the commands"
  "cache -- hwimg: error: hwimg cache needs a command: ls, prune (hwimg cache --help)"
  "select oci:layout:1 extra -- hwimg: error: unexpected argument extra for hwimg select (see hwimg select --help)"
  "build -- hwimg: error: failed to build: name a recipe file, or a Dockerfile with --dockerfile FILE (see hwimg build --help)"
)

FAILED=()
for row in "${ROWS[@]}"; do
  read -r -a words <<<"${row%% -- *}"
  expected=${row#* -- }
  set +e
  "$HWIMG" "${words[@]}" </dev/null >"$TEST_TMP/stdout" 2>"$TEST_TMP/stderr"
  status=$?
  set -e
  stderr=$(cat "$TEST_TMP/stderr")
  if [ "$status" != 2 ] || [[ "$stderr" != *"$expected"* ]] || [ -s "$TEST_TMP/stdout" ] ||
    [ "$(wc -l <"$TEST_TMP/stderr")" != 1 ] || [[ "$stderr" != "hwimg: error: "* ]]; then
    echo "FAILED: hwimg ${words[*]}: exit $status (expected 2), stderr [$stderr], stdout [$(head -c 200 "$TEST_TMP/stdout")]" >&2
    FAILED+=("${words[*]}")
  fi
done
[ ! -e out ] || fail "a usage mistake wrote the output layout"
[ ${#FAILED[@]} = 0 ] || fail "${#FAILED[@]} of ${#ROWS[@]} command lines did not exit 2: $(printf '[%s] ' "${FAILED[@]}")"
echo "all ${#ROWS[@]} usage mistakes exit 2"
