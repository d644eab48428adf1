#!/usr/bin/env bash
# `hwimg build` end to end: a static C program and a data layer (tests/data/recipes/hello), an image
# built on it from its layout, and the stencil example, checked with skopeo, umoci and runc; file
# attributes in the layers; labels and annotations; byte-identical rebuilds; multi-member gzip; zstd.
source "$(dirname "$0")/lib.sh"

require_root
for tool in skopeo umoci runc jq cc python3 zstd; do require_tool "$tool"; done

export SOURCE_DATE_EPOCH=1700000000
readonly CREATED=2023-11-14T22:13:20Z
readonly VARIANT=cpu-x86-64-v1
WORK=$TEST_TMP/work
mkdir -p "$WORK"
cp -a "$HWIMG_SOURCE_DIR/tests/data/recipes/hello" "$WORK/hello"
# What git cannot carry: a private file owned by someone else (the layer must say 0/0), a hard
# link, and a payload of 3 MiB so the data layer spans several 1 MiB gzip blocks.
chmod 0600 "$WORK/hello/data/sub/secret.txt"
chown 1234:1234 "$WORK/hello/data/sub/secret.txt"
head -c 3145728 /dev/urandom >"$WORK/hello/data/payload.bin"
ln "$WORK/hello/data/greeting.txt" "$WORK/hello/data/hardlink-to-greeting.txt"

tag_digest() { # tag_digest LAYOUT TAG: the digest index.json gives TAG
  jq -r --arg t "$2" '.manifests[] | select(.annotations["org.opencontainers.image.ref.name"] == $t) | .digest' \
    "$1/index.json"
}
blob() { # blob LAYOUT DIGEST: the path of a blob
  echo "$1/blobs/sha256/${2#sha256:}"
}
manifest_json() { # manifest_json LAYOUT TAG
  cat "$(blob "$1" "$(tag_digest "$1" "$2")")"
}
layer_digests() { # layer_digests LAYOUT TAG: one layer digest per line
  manifest_json "$1" "$2" | jq -r '.layers[].digest'
}
# run_image LAYOUT TAG NAME [ARGS_JSON]: unpacks with umoci, runs with runc, prints the output;
# the bundle stays in $TEST_TMP/bundle-NAME for checks on its rootfs.
run_image() {
  local bundle=$TEST_TMP/bundle-$3 id=hwimg-test-$$-$3
  umoci unpack --image "$1:$2" "$bundle" >/dev/null || fail "umoci unpack $1:$2"
  local filter='.process.terminal = false'
  [ -n "${4:-}" ] && filter+=" | .process.args = $4"
  jq "$filter" "$bundle/config.json" >"$bundle/config.json.new"
  mv "$bundle/config.json.new" "$bundle/config.json"
  # In the foreground, runc removes the container when its process exits.
  runc run --bundle "$bundle" "$id" </dev/null || fail "runc run $1:$2 exited with status $?"
}
# Member count of a gzip file, reading every member as RFC 1952 describes.
gzip_members() {
  python3 -c '
import sys, zlib
data, members = open(sys.argv[1], "rb").read(), 0
while data:
    reader = zlib.decompressobj(31)
    reader.decompress(data)
    if not reader.eof:
        sys.exit("truncated gzip member")
    data, members = reader.unused_data, members + 1
print(members)' "$1"
}

step "build the hello recipe"
BASE=$WORK/hello-base
OUT=$("$HWIMG" build "$WORK/hello/hello.yaml" -o "$BASE" --tag base)
INDEX_DIGEST=$(tag_digest "$BASE" base)
MANIFEST_DIGEST=$(tag_digest "$BASE" "base-$VARIANT")
assert_contains "$OUT" "wrote oci:$BASE:base (1 variant: 1 built, 0 unchanged; index $INDEX_DIGEST)" "build summary"
assert_eq 2 "$(jq '.manifests | length' "$BASE/index.json")" "index.json entries (TAG and TAG-variant)"
assert_eq '{"imageLayoutVersion":"1.0.0"}' "$(jq -c . "$BASE/oci-layout")" "oci-layout"

step "a build step on the host gets a clean environment: no DOCKER_AUTH_CONFIG, no other variable of hwimg's"
mkdir -p "$WORK/env"
printf '%s\n' 'name: env' 'base: scratch' 'build:' '  run: env | sort > "${out}/env"' 'layers:' \
  '  - {from: "${out}", to: /env}' >"$WORK/env/env.yaml"
DOCKER_AUTH_CONFIG='{"auths":{"reg.example.com":{"auth":"c2VjcmV0OnNlY3JldA=="}}}' HOST_ONLY=leaked \
  HWIMG_HOST_ONLY=leaked LC_TIME=C.UTF-8 LANG=C.UTF-8 "$HWIMG" build "$WORK/env/env.yaml" -o "$WORK/env/out" >/dev/null
step_env=$(tar -xzOf "$(blob "$WORK/env/out" "$(layer_digests "$WORK/env/out" "latest-$VARIANT" | tail -1)")" env/env)
names=$(sed -n 's/=.*//p' <<<"$step_env")
others=$(grep -vxE 'HWIMG_[A-Z_]+|PATH|HOME|TMPDIR|TZ|LANG|LANGUAGE|LC_[A-Z_]+|SOURCE_DATE_EPOCH|PWD|SHLVL|_' <<<"$names" || true)
assert_eq "" "$others" "variables of hwimg's environment in the host step"
for name in DOCKER_AUTH_CONFIG HOST_ONLY HWIMG_HOST_ONLY; do
  ! grep -qx "$name" <<<"$names" || fail "$name reached the host step"
done
for expected in "PATH=$PATH" LANG=C.UTF-8 LC_TIME=C.UTF-8 "SOURCE_DATE_EPOCH=$SOURCE_DATE_EPOCH" \
  "HWIMG_VARIANT=$VARIANT" "HOME=$HOME"; do
  grep -qxF "$expected" <<<"$step_env" || fail "$expected is not in the host step's environment: $step_env"
done

step "what the recipe passes explicitly reaches the step: build.env (variables substituted) and build.pass_env"
printf '%s\n' 'name: env' 'base: scratch' 'build:' '  run: env | sort > "${out}/env"' \
  '  env: {CCACHE_MAXSIZE: "2G", TARGET_ID: "v-${variant}"}' '  pass_env: [PROXY_FOR_STEP, NOT_SET_ANYWHERE]' \
  'layers:' '  - {from: "${out}", to: /env}' >"$WORK/env/env.yaml"
unset NOT_SET_ANYWHERE
PROXY_FOR_STEP=http://proxy.example:3128 HOST_ONLY=leaked "$HWIMG" build "$WORK/env/env.yaml" -o "$WORK/env/out" >/dev/null
step_env=$(tar -xzOf "$(blob "$WORK/env/out" "$(layer_digests "$WORK/env/out" "latest-$VARIANT" | tail -1)")" env/env)
for expected in CCACHE_MAXSIZE=2G "TARGET_ID=v-$VARIANT" PROXY_FOR_STEP=http://proxy.example:3128; do
  grep -qxF "$expected" <<<"$step_env" || fail "$expected is not in the host step's environment: $step_env"
done
! grep -q '^HOST_ONLY=\|^NOT_SET_ANYWHERE=' <<<"$step_env" || fail "a variable the recipe did not pass reached the step"
printf '%s\n' 'name: env' 'base: scratch' 'build:' '  run: "true"' '  env: {HWIMG_VARIANT: mine}' 'layers:' '  - {from: "${out}", to: /env}' >"$WORK/env/bad.yaml"
set +e; bad=$("$HWIMG" build "$WORK/env/bad.yaml" -o "$WORK/env/bad" 2>&1); status=$?; set -e
assert_eq 1 "$status" "exit status of a recipe that sets HWIMG_VARIANT"
assert_contains "$bad" "bad.yaml:5:24: \"build.env\" may not set HWIMG_VARIANT" "its error"

step "skopeo reads the layout"
assert_eq "$MANIFEST_DIGEST" "$(skopeo inspect "oci:$BASE:base-$VARIANT" | jq -r .Digest)" "skopeo digest of the variant"
RAW_SHA=$(skopeo inspect --raw "oci:$BASE:base" | sha256sum | cut -d' ' -f1)
assert_eq "$INDEX_DIGEST" "sha256:$RAW_SHA" "sha256 of skopeo inspect --raw on the index tag"
# The baseline variant has no platform.variant, so skopeo picks it from the index without help.
assert_eq "$(layer_digests "$BASE" "base-$VARIANT" | paste -sd,)" \
  "$(skopeo inspect "oci:$BASE:base" | jq -r '.Layers | join(",")')" "layers skopeo selects through the index"
assert_eq '{"architecture":"amd64","os":"linux"}' \
  "$(skopeo inspect --raw "oci:$BASE:base" | jq -c '.manifests[0].platform')" "platform of the baseline entry"

step "annotations and labels"
INSPECT=$("$HWIMG" inspect "oci:$BASE:base" --format json)
assert_eq "$INDEX_DIGEST" "$(jq -r .digest <<<"$INSPECT")" "inspect: index digest"
assert_eq "$CREATED" "$(jq -r '.annotations["org.opencontainers.image.created"]' <<<"$INSPECT")" "inspect: index created"
assert_eq hello "$(jq -r '.annotations["org.opencontainers.image.title"]' <<<"$INSPECT")" "inspect: index title"
assert_eq "$VARIANT" "$(jq -r '.variants[0].variant' <<<"$INSPECT")" "inspect: variant id"
assert_eq "$MANIFEST_DIGEST" "$(jq -r '.variants[0].digest' <<<"$INSPECT")" "inspect: variant digest"
assert_eq "$VARIANT" "$(jq -r '.variants[0].annotations["org.hwimg.variant"]' <<<"$INSPECT")" "inspect: org.hwimg.variant"
assert_eq x86-64-v1 "$(jq -r '.variants[0].annotations["org.hwimg.cpu.level"]' <<<"$INSPECT")" "inspect: org.hwimg.cpu.level"
INDEX_BLOB=$(skopeo inspect --raw "oci:$BASE:base")
assert_eq "$VARIANT x86-64-v1" \
  "$(jq -r '.manifests[0].annotations | .["org.hwimg.variant"] + " " + .["org.hwimg.cpu.level"]' <<<"$INDEX_BLOB")" \
  "variant annotations inside the index blob"
MANIFEST=$(manifest_json "$BASE" "base-$VARIANT")
assert_eq "$CREATED $VARIANT" \
  "$(jq -r '.annotations | .["org.opencontainers.image.created"] + " " + .["org.hwimg.variant"]' <<<"$MANIFEST")" \
  "manifest annotations"
CONFIG=$(skopeo inspect --config "oci:$BASE:base-$VARIANT")
assert_eq "$CREATED" "$(jq -r .created <<<"$CONFIG")" "config created"
assert_eq "$VARIANT" "$(jq -r '.config.Labels["org.hwimg.variant"]' <<<"$CONFIG")" "label org.hwimg.variant"
assert_eq x86-64-v1 "$(jq -r '.config.Labels["org.hwimg.cpu.level"]' <<<"$CONFIG")" "label org.hwimg.cpu.level"
assert_eq https://example.org/hwimg/tests/hello \
  "$(jq -r '.config.Labels["org.opencontainers.image.source"]' <<<"$CONFIG")" "recipe label"
assert_eq '["/opt/hello/bin/hello"] ["default-arg"] ["HELLO_VARIANT=cpu-x86-64-v1"]' \
  "$(jq -c '.config.Entrypoint, .config.Cmd, .config.Env' <<<"$CONFIG" | paste -sd' ')" "entrypoint, cmd, env"
assert_eq "$CREATED $CREATED" "$(jq -r '[.history[].created] | join(" ")' <<<"$CONFIG")" "history times"

step "layer contents: order, modes, symlinks, hard links, owner 0/0, mtime from SOURCE_DATE_EPOCH"
mapfile -t LAYERS < <(layer_digests "$BASE" "base-$VARIANT")
assert_eq 2 "${#LAYERS[@]}" "layer count"
listing() { # mode owner date time name [-> target], without sizes
  TZ=UTC tar --numeric-owner -tvzf "$(blob "$BASE" "$1")" | awk '{$3 = ""; print}'
}
assert_eq "drwxr-xr-x 0/0  2023-11-14 22:13 opt/
drwxr-xr-x 0/0  2023-11-14 22:13 opt/hello/
drwxr-xr-x 0/0  2023-11-14 22:13 opt/hello/bin/
-rwxr-x--- 0/0  2023-11-14 22:13 opt/hello/bin/hello
lrwxrwxrwx 0/0  2023-11-14 22:13 opt/hello/bin/hi -> hello" "$(listing "${LAYERS[0]}")" "program layer"
assert_eq "drwxr-xr-x 0/0  2023-11-14 22:13 opt/
drwxr-xr-x 0/0  2023-11-14 22:13 opt/hello/
drwxr-xr-x 0/0  2023-11-14 22:13 opt/hello/data/
-rw-r--r-- 0/0  2023-11-14 22:13 opt/hello/data/greeting.txt
hrw-r--r-- 0/0  2023-11-14 22:13 opt/hello/data/hardlink-to-greeting.txt link to opt/hello/data/greeting.txt
lrwxrwxrwx 0/0  2023-11-14 22:13 opt/hello/data/link-to-greeting -> greeting.txt
-rw-r--r-- 0/0  2023-11-14 22:13 opt/hello/data/payload.bin
drwxr-xr-x 0/0  2023-11-14 22:13 opt/hello/data/sub/
-rw------- 0/0  2023-11-14 22:13 opt/hello/data/sub/secret.txt" "$(listing "${LAYERS[1]}")" "data layer"
for i in 0 1; do
  assert_eq "application/vnd.oci.image.layer.v1.tar+gzip" "$(jq -r ".layers[$i].mediaType" <<<"$MANIFEST")" "layer $i type"
  DIFF_ID=$(zcat "$(blob "$BASE" "${LAYERS[$i]}")" | sha256sum | cut -d' ' -f1)
  assert_eq "sha256:$DIFF_ID" "$(jq -r ".rootfs.diff_ids[$i]" <<<"$CONFIG")" "diff_id of layer $i"
done

step "block-parallel gzip: several members, read by gzip and skopeo"
DATA_LAYER=$(blob "$BASE" "${LAYERS[1]}")
gzip -t "$DATA_LAYER" || fail "gzip -t rejects the data layer"
MEMBERS=$(gzip_members "$DATA_LAYER")
[ "$MEMBERS" -ge 4 ] || fail "a 3 MiB layer should be at least 4 gzip members of 1 MiB blocks, got $MEMBERS"
assert_eq 1 "$(gzip_members "$(blob "$BASE" "${LAYERS[0]}")")" "members of the < 1 MiB program layer"
# skopeo decompresses each layer into dir: and names it by its digest, which must be the DiffID.
skopeo copy -q --dest-decompress "oci:$BASE:base-$VARIANT" "dir:$TEST_TMP/decompressed-gzip"
for i in 0 1; do
  assert_eq "$(jq -r ".rootfs.diff_ids[$i]" <<<"$CONFIG")" \
    "$(jq -r ".layers[$i].digest" "$TEST_TMP/decompressed-gzip/manifest.json")" "skopeo's DiffID of gzip layer $i"
done

step "umoci unpack + runc run"
RUN=$(run_image "$BASE" "base-$VARIANT" hello)
assert_eq "hello from $VARIANT: default-arg
greetings from the data layer" "$RUN" "program output"
ROOTFS=$TEST_TMP/bundle-hello/rootfs
[ -L "$ROOTFS/opt/hello/bin/hi" ] || fail "opt/hello/bin/hi is not a symlink after unpack"
assert_eq hello "$(readlink "$ROOTFS/opt/hello/bin/hi")" "symlink target"
assert_eq "750 0 0" "$(stat -c '%a %u %g' "$ROOTFS/opt/hello/bin/hello")" "program mode and owner"
assert_eq "600 0 0" "$(stat -c '%a %u %g' "$ROOTFS/opt/hello/data/sub/secret.txt")" "private file mode and owner"
assert_eq "$(stat -c %i "$ROOTFS/opt/hello/data/greeting.txt")" \
  "$(stat -c %i "$ROOTFS/opt/hello/data/hardlink-to-greeting.txt")" "hard link unpacked as one inode"
cmp "$WORK/hello/data/payload.bin" "$ROOTFS/opt/hello/data/payload.bin" || fail "payload differs after unpack"
RUN=$(run_image "$BASE" "base-$VARIANT" hello-symlink '["/opt/hello/bin/hi", "through", "symlink"]')
assert_eq "hello from $VARIANT: through symlink
greetings from the data layer" "$RUN" "output through the symlink"

step "an image on a base from another hwimg layout reuses its layers by digest"
DERIVED=$WORK/derived
"$HWIMG" build "$WORK/hello/derived.yaml" -o "$DERIVED" --tag 2.0 >/dev/null
mapfile -t DERIVED_LAYERS < <(layer_digests "$DERIVED" "2.0-$VARIANT")
assert_eq 3 "${#DERIVED_LAYERS[@]}" "derived layer count"
assert_eq "${LAYERS[*]}" "${DERIVED_LAYERS[*]:0:2}" "base layers at the bottom of the derived image"
DERIVED_MANIFEST=$(manifest_json "$DERIVED" "2.0-$VARIANT")
assert_eq "$MANIFEST_DIGEST" "$(jq -r '.annotations["org.opencontainers.image.base.digest"]' <<<"$DERIVED_MANIFEST")" \
  "org.opencontainers.image.base.digest"
DERIVED_CONFIG=$(skopeo inspect --config "oci:$DERIVED:2.0-$VARIANT")
assert_eq "$(jq -c '.rootfs.diff_ids' <<<"$CONFIG")" "$(jq -c '.rootfs.diff_ids[0:2]' <<<"$DERIVED_CONFIG")" \
  "base diff_ids kept"
cmp "$DATA_LAYER" "$(blob "$DERIVED" "${LAYERS[1]}")" || fail "base layer blob differs in the derived layout"
RUN=$(run_image "$DERIVED" "2.0-$VARIANT" derived)
assert_eq "hello from $VARIANT: from-derived
greetings from the data layer" "$RUN" "derived output (inherited entrypoint and env, new cmd)"
assert_eq "added by the derived image" "$(cat "$TEST_TMP/bundle-derived/rootfs/opt/extra/note.txt")" "derived layer"
# Naming the base's index tag picks this platform's manifest from it.
sed 's/:base-cpu-x86-64-v1$/:base/' "$WORK/hello/derived.yaml" >"$WORK/hello/derived-index.yaml"
"$HWIMG" build "$WORK/hello/derived-index.yaml" -o "$WORK/derived-index" --tag 2.0 >/dev/null
assert_eq "${DERIVED_LAYERS[*]}" "$(layer_digests "$WORK/derived-index" "2.0-$VARIANT" | paste -sd' ')" \
  "layers of an image on the base's index tag"

step "reproducible: same SOURCE_DATE_EPOCH, different times and file mtimes -> identical layouts"
"$HWIMG" build "$WORK/hello/hello.yaml" -o "$WORK/repro-1" --tag 1.0 >/dev/null
sleep 1.1
find "$WORK/hello" -exec touch -h {} +
"$HWIMG" build "$WORK/hello/hello.yaml" -o "$WORK/repro-2" --tag 1.0 -j 1 >/dev/null
diff -r --no-dereference --exclude=.hwimg "$WORK/repro-1" "$WORK/repro-2" || fail "rebuilds differ"
assert_eq "blobs index.json oci-layout" "$(cd "$WORK/repro-1" && ls -A | grep -vx .hwimg | sort | paste -sd' ')" \
  "files compared"
assert_eq "$(ls "$BASE/blobs/sha256")" "$(ls "$WORK/repro-1/blobs/sha256")" "blobs of the first build under another tag"
SOURCE_DATE_EPOCH=1700000001 "$HWIMG" build "$WORK/hello/hello.yaml" -o "$WORK/repro-3" --tag 1.0 >/dev/null
[ "$(tag_digest "$WORK/repro-1" 1.0)" != "$(tag_digest "$WORK/repro-3" 1.0)" ] ||
  fail "another SOURCE_DATE_EPOCH gave the same index"

step "zstd layers"
ZSTD=$WORK/zstd
"$HWIMG" build "$WORK/hello/hello.yaml" -o "$ZSTD" --tag z --compression zstd >/dev/null
ZSTD_MANIFEST=$(manifest_json "$ZSTD" "z-$VARIANT")
assert_eq "application/vnd.oci.image.layer.v1.tar+zstd application/vnd.oci.image.layer.v1.tar+zstd" \
  "$(jq -r '[.layers[].mediaType] | join(" ")' <<<"$ZSTD_MANIFEST")" "zstd layer media types"
for digest in $(jq -r '.layers[].digest' <<<"$ZSTD_MANIFEST"); do
  zstd -q -t "$(blob "$ZSTD" "$digest")" || fail "zstd -t rejects layer $digest"
done
ZSTD_CONFIG=$(skopeo inspect --config "oci:$ZSTD:z-$VARIANT")
assert_eq "$(jq -c '.rootfs.diff_ids' <<<"$CONFIG")" "$(jq -c '.rootfs.diff_ids' <<<"$ZSTD_CONFIG")" \
  "zstd and gzip layers wrap the same tar"
skopeo copy -q "oci:$ZSTD:z-$VARIANT" "oci:$TEST_TMP/zstd-copy:copied" || fail "skopeo copy of the zstd image"
assert_eq "$(tag_digest "$ZSTD" "z-$VARIANT")" "$(skopeo inspect "oci:$TEST_TMP/zstd-copy:copied" | jq -r .Digest)" \
  "skopeo copies the zstd image unchanged"
skopeo copy -q --dest-decompress "oci:$ZSTD:z-$VARIANT" "dir:$TEST_TMP/decompressed-zstd"
assert_eq "$(jq -c '.rootfs.diff_ids' <<<"$ZSTD_CONFIG")" \
  "$(jq -c '[.layers[].digest]' "$TEST_TMP/decompressed-zstd/manifest.json")" "skopeo's DiffIDs of the zstd layers"

step "the stencil example: one variant per CPU level, the shared data layer stored once"
require_tool g++
STENCIL=$WORK/stencil
"$HWIMG" build "$HWIMG_SOURCE_DIR/recipes/stencil.yaml" -o "$STENCIL" --tag 1.0 >/dev/null
STENCIL_INDEX=$(skopeo inspect --raw "oci:$STENCIL:1.0")
assert_eq "cpu-x86-64-v1: cpu-x86-64-v2:v2 cpu-x86-64-v3:v3 cpu-x86-64-v4:v4 cpu-zen4:v4" \
  "$(jq -r '[.manifests[] | .annotations["org.hwimg.variant"] + ":" + (.platform.variant // "")] | join(" ")' <<<"$STENCIL_INDEX")" \
  "stencil variants and platform variants"
STENCIL_LAYERS=$(for id in $(jq -r '.manifests[].annotations["org.hwimg.variant"]' <<<"$STENCIL_INDEX"); do
  layer_digests "$STENCIL" "1.0-$id" | paste -sd' '
done)
assert_eq 5 "$(cut -d' ' -f1 <<<"$STENCIL_LAYERS" | sort -u | wc -l)" "distinct program layers"
assert_eq 1 "$(cut -d' ' -f2 <<<"$STENCIL_LAYERS" | sort -u | wc -l)" "distinct data layers"
assert_eq 17 "$(ls "$STENCIL/blobs/sha256" | wc -l)" "stencil blobs: index, 5 x (manifest, config, program), data once"
# The baseline runs everywhere; the highest level this host has shows the per-level build.
mapfile -t LEVELS < <(host_levels)
for level in x86-64-v1 "${LEVELS[-1]}"; do
  RUN=$(run_image "$STENCIL" "1.0-cpu-$level" "stencil-$level" '["/opt/stencil/bin/stencil", "--size", "64", "--sweeps", "4"]')
  assert_eq "stencil: built for $level (variant cpu-$level)" "$(sed -n 1p <<<"$RUN")" "stencil $level line 1"
  # The same static binary run on the host gives the checksum to expect.
  NATIVE=$(HWIMG_VARIANT=cpu-$level "$TEST_TMP/bundle-stencil-$level/rootfs/opt/stencil/bin/stencil" --size 64 --sweeps 4)
  assert_contains "$(sed -n 2p <<<"$RUN")" "stencil: 64x64 grid, 4 sweeps, checksum " "stencil $level line 2"
  assert_eq "$(sed -n 2p <<<"$NATIVE")" "$(sed -n 2p <<<"$RUN")" "stencil $level checksum in the container"
done

echo "PASS"
