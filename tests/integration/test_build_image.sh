#!/usr/bin/env bash
# build.image (docs/recipe.md#build-image) without the network: a busybox builder image packed here
# by `hwimg build`, then a two-variant recipe whose build step runs in it, as root (runc) and as an
# unprivileged user (bwrap): the step sees the image's files and not the host's compiler, the host's
# environment stays out, its output becomes the layer, and the rootfs is unpacked once per image
# and never changed; a GPU variant needs no host toolkit. Errors, one line each: no /bin/sh, a layer
# with ../escape, no image for this machine, an unknown tag, the runner missing. With Debian's
# docker-registry installed, the same image from a registry with TLS and a password, and an unknown one.
source "$(dirname "$0")/lib.sh"

for tool in jq python3 tar setpriv; do require_tool "$tool"; done
[ -x /bin/busybox ] && ! ldd /bin/busybox >/dev/null 2>&1 ||
  skip "needs a static /bin/busybox (apt-get install busybox-static)"

export SOURCE_DATE_EPOCH=1700000000
readonly MARKER=made-in-the-builder-image
WORK=$TEST_TMP/work
mkdir -p "$WORK/busybox/bin" "$WORK/busybox/etc" "$WORK/nosh/etc" "$WORK/src"
cp /bin/busybox "$WORK/busybox/bin/busybox"
for applet in $(/bin/busybox --list); do [ "$applet" = busybox ] || ln -s busybox "$WORK/busybox/bin/$applet"; done
echo "$MARKER" >"$WORK/busybox/etc/marker"
echo "$MARKER" >"$WORK/nosh/etc/marker"
echo "input from the workdir" >"$WORK/src/input.txt"

tag_digest() { # tag_digest LAYOUT TAG: the digest index.json gives TAG
  jq -r --arg t "$2" '.manifests[] | select(.annotations["org.opencontainers.image.ref.name"] == $t) | .digest' \
    "$1/index.json"
}
blob() { echo "$1/blobs/sha256/${2#sha256:}"; }
layer_file() { # layer_file LAYOUT TAG PATH: PATH from the last layer of the image tagged TAG
  local layer
  layer=$(jq -r '.layers[-1].digest' "$(blob "$1" "$(tag_digest "$1" "$2")")")
  tar -xzOf "$(blob "$1" "$layer")" "$3"
}

step "builder images packed by hwimg from scratch, and broken ones"
cd "$WORK"
for name in busybox nosh; do
  printf 'name: %s\nbase: scratch\nlayers:\n  - {from: %s, to: /}\n' "$name" "$name" >"$name.yaml"
  "$HWIMG" build "$name.yaml" -o images --tag "$name" >/dev/null
done
printf 'axes: {cpu: [x86-64-v1, x86-64-v2]}\n' >matrix.yaml
cat >app.yaml <<'EOF'
name: app
base: scratch
matrix: matrix.yaml
build:
  image: oci:images:busybox
  workdir: src
  run: |
    test "$(cat /etc/marker)" = made-in-the-builder-image
    if command -v gcc || command -v cc || command -v g++ || test -e /usr/bin/gcc; then
      echo "the host's compiler is visible"; exit 1
    fi
    if touch /etc/written 2>/dev/null; then echo "the image is writable"; exit 1; fi
    mkdir -p "${out}/bin"
    cat /etc/marker input.txt > "${out}/bin/result"
    echo "variant=$HWIMG_VARIANT sde=$SOURCE_DATE_EPOCH cwd=$(pwd) uid=$(id -u) host=$${HOST_ONLY:-unset}" > "${out}/bin/info"
layers:
  - {from: "${out}/bin", to: /opt/app}
EOF
# variant_of NAME IMAGE: the recipe with one variant and another builder image, as NAME.yaml.
variant_of() { sed -e "s|oci:images:busybox|$2|" -e '/^matrix:/d' app.yaml >"$1.yaml"; }
variant_of nosh oci:images:nosh
variant_of missing oci:images:missing
variant_of one oci:images:busybox
printf '[{"id": "s390x", "platform": {"os": "linux", "architecture": "s390x"}}]\n' >foreign.json
make_layout foreign-images 1 foreign.json >/dev/null
variant_of foreign oci:foreign-images:1
# A layer hwimg would never write: a shell and "../escape".
escape_layer=$(python3 - <<'EOF'
import gzip, hashlib, io, json, os, tarfile
def put(data, media_type):
    digest = hashlib.sha256(data).hexdigest()
    os.makedirs("escape-images/blobs/sha256", exist_ok=True)
    with open(f"escape-images/blobs/sha256/{digest}", "wb") as f:
        f.write(data)
    return {"mediaType": media_type, "digest": "sha256:" + digest, "size": len(data)}
raw = io.BytesIO()
with tarfile.open(fileobj=raw, mode="w") as tar:
    for name in ("bin/sh", "../escape"):
        info = tarfile.TarInfo(name)
        info.size, info.mode = 2, 0o755
        tar.addfile(info, io.BytesIO(b"x\n"))
layer = put(gzip.compress(raw.getvalue(), mtime=0), "application/vnd.oci.image.layer.v1.tar+gzip")
diff_id = "sha256:" + hashlib.sha256(raw.getvalue()).hexdigest()
config = put(json.dumps({"architecture": "amd64", "os": "linux",
                         "rootfs": {"type": "layers", "diff_ids": [diff_id]}}).encode(),
             "application/vnd.oci.image.config.v1+json")
manifest = put(json.dumps({"schemaVersion": 2, "mediaType": "application/vnd.oci.image.manifest.v1+json",
                           "config": config, "layers": [layer]}).encode(), "application/vnd.oci.image.manifest.v1+json")
manifest["annotations"] = {"org.opencontainers.image.ref.name": "1"}
with open("escape-images/oci-layout", "w") as f:
    f.write('{"imageLayoutVersion":"1.0.0"}')
with open("escape-images/index.json", "w") as f:
    f.write(json.dumps({"schemaVersion": 2, "manifests": [manifest]}))
print(layer["digest"])
EOF
)
variant_of escape oci:escape-images:1
# A GPU variant: no toolkit is looked for on the host, and ${cuda.home} is the image's.
printf 'axes: {cuda: ["12.8"], gpu: [sm_90]}\n' >gpu-matrix.yaml
cat >gpu.yaml <<'EOF'
name: gpu
base: scratch
matrix: gpu-matrix.yaml
build:
  image: oci:images:busybox
  run: echo "home=${cuda.home} env=$CUDA_HOME $HWIMG_CUDA_HOME"; exit 3
layers:
  - {from: "${out}", to: /opt/app}
EOF

# check_build DIR UID: both variants of DIR/app.yaml ran in the image as UID, and DIR/cache holds one
# rootfs, with nothing added to it (no mount points, no files).
check_build() {
  local dir=$1 uid=$2 variant
  for variant in cpu-x86-64-v1 cpu-x86-64-v2; do
    assert_eq "$MARKER
input from the workdir" "$(layer_file "$dir/out" "1-$variant" opt/app/result)" "result of $variant"
    assert_eq "variant=$variant sde=$SOURCE_DATE_EPOCH cwd=$dir/src uid=$uid host=unset" \
      "$(layer_file "$dir/out" "1-$variant" opt/app/info)" "info of $variant"
  done
  local roots
  roots=$(ls "$dir/cache/rootfs")
  [ "$(echo "$roots" | wc -l)" = 2 ] || fail "expected one rootfs and its marker in $dir/cache/rootfs, got: $roots"
  roots=$(grep -v '\.layers$' <<<"$roots")
  local builder_index
  builder_index=$(blob "$dir/images" "$(tag_digest "$dir/images" busybox)")
  assert_eq "$(jq -r '.layers[].digest' "$(blob "$dir/images" "$(jq -r '.manifests[0].digest' "$builder_index")")")" \
    "$(cat "$dir/cache/rootfs/$roots.layers")" "the marker of the cached rootfs names its layers"
  # The cache is its user's alone; the image's own root keeps its mode.
  assert_eq "700 700 700 600" "$(stat -c %a "$dir/cache" "$dir/cache/rootfs" "$dir/cache/blobs" "$dir/cache/rootfs/$roots.layers" | paste -sd' ')" \
    "modes of the cache, its rootfs directory and the marker"
  assert_eq "bin etc" "$(ls "$dir/cache/rootfs/$roots" | paste -sd' ')" "the top level of the cached rootfs"
  assert_eq "busybox marker" "$(ls "$dir/cache/rootfs/$roots"/{bin/busybox,etc/*} | xargs -n1 basename | paste -sd' ')" \
    "the cached rootfs's files"
}

# expect_error EXPECTED RECIPE [ENV...]: the build (with the flags in $extra_flags) fails with
# EXPECTED (a glob) on stderr, writing no layout.
extra_flags=()
expect_error() {
  local expected=$1 recipe=$2
  shift 2
  rm -rf "$WORK/failed"
  set +e
  env "$@" "$HWIMG" build "$recipe" -o "$WORK/failed" --cache "$WORK/error-cache" "${extra_flags[@]}" \
    >"$TEST_TMP/stdout" 2>"$TEST_TMP/stderr"
  local status=$?
  set -e
  local stderr
  stderr=$(cat "$TEST_TMP/stderr")
  # shellcheck disable=SC2053
  [[ "$stderr" == $expected ]] || fail "$recipe: expected stderr [$expected], got [$stderr]"
  assert_eq 1 "$status" "exit status of $recipe"
  assert_eq "" "$(cat "$TEST_TMP/stdout")" "stdout of $recipe"
  [ ! -e "$WORK/failed" ] || fail "$recipe: the output layout was written"
}

# The rootless path, as whoever runs `as_user` (setpriv to nobody under root, else the caller).
as_user=()
[ "$(id -u)" = 0 ] && as_user=(setpriv --reuid=65534 --regid=65534 --init-groups)
bwrap_works=yes
command -v bwrap >/dev/null && "${as_user[@]}" bwrap --ro-bind / / true 2>/dev/null || bwrap_works=no

if [ "$(id -u)" = 0 ]; then
  require_tool runc
  step "as root: the build step runs in the image with runc"
  HOST_ONLY=1 "$HWIMG" build app.yaml -o out --tag 1 --cache "$WORK/cache" >"$TEST_TMP/build.log" 2>&1 ||
    fail "build in the builder image: $(cat "$TEST_TMP/build.log")"
  check_build "$WORK" 0
  rootfs=$(echo "$WORK"/cache/rootfs/*/)
  before=$(cd "$rootfs" && find . -printf '%p %m %s %T@ %i\n' | sort)

  step "unchanged: reused; a changed input: rebuilt in the same rootfs, which is not unpacked again"
  output=$("$HWIMG" build app.yaml -o out --tag 1 --cache "$WORK/cache" 2>&1)
  assert_contains "$output" "(unchanged)" "second build"
  echo "more input" >>src/input.txt
  output=$("$HWIMG" build app.yaml -o out --tag 1 --cache "$WORK/cache" -v 2>&1) || fail "rebuild: $output"
  assert_contains "$(layer_file out 1-cpu-x86-64-v2 opt/app/result)" "more input" "the rebuilt result"
  assert_eq "$before" "$(cd "$rootfs" && find . -printf '%p %m %s %T@ %i\n' | sort)" "the cached rootfs"
  echo "input from the workdir" >src/input.txt

  step "a relative --cache: the rootfs runc is given is an absolute path"
  "$HWIMG" build one.yaml -o relative-out --tag 1 --cache relative-cache >"$TEST_TMP/build.log" 2>&1 ||
    fail "build with --cache relative-cache: $(cat "$TEST_TMP/build.log")"
  assert_eq "$MARKER
input from the workdir" "$(layer_file relative-out "$(jq -r '.manifests[].annotations["org.opencontainers.image.ref.name"] |
    select(startswith("1-"))' relative-out/index.json)" opt/app/result)" "result of the build with a relative cache"

  step "as root without runc: the error says what to install"
  expect_error "hwimg: error: one.yaml:4:10: failed to run the build step in builder image oci:images:busybox: runc is not installed or does not run (apt-get install runc); hwimg runs build steps in builder images with runc when it runs as root" \
    one.yaml PATH=/nonexistent
fi

step "rootless: the build step runs in the image with bwrap"
if [ "$bwrap_works" = no ]; then
  # Without user namespaces only the root path can be tested; the suite is skipped when that did not run.
  why="bwrap is not installed (apt-get install bubblewrap) or cannot make a sandbox here (no user namespaces)"
  [ "$(id -u)" = 0 ] || skip "$why"
  echo "SKIP (rootless part): $why"
else
  USER_WORK=$TEST_TMP/user
  mkdir -p "$USER_WORK/tmp" "$USER_WORK/home"
  cp -a images src app.yaml matrix.yaml one.yaml "$USER_WORK/"
  if [ "$(id -u)" = 0 ]; then
    chmod 0711 "$TEST_TMP"
    chown -R 65534:65534 "$USER_WORK"
  fi
  user_uid=$("${as_user[@]}" id -u)
  (cd "$USER_WORK" && HOST_ONLY=1 "${as_user[@]}" env HOME="$USER_WORK/home" TMPDIR="$USER_WORK/tmp" \
    "$HWIMG" build app.yaml -o out --tag 1 --cache "$USER_WORK/cache") >"$TEST_TMP/build.log" 2>&1 ||
    fail "rootless build in the builder image: $(cat "$TEST_TMP/build.log")"
  check_build "$USER_WORK" "$user_uid"
  [ "$(stat -c %u "$USER_WORK/cache/rootfs")" = "$user_uid" ] || fail "the rootless rootfs is not the user's"

  step "rootless without bwrap: the error says what to install"
  set +e
  stderr=$(cd "$USER_WORK" && "${as_user[@]}" env HOME="$USER_WORK/home" TMPDIR="$USER_WORK/tmp" PATH=/nonexistent \
    "$HWIMG" build one.yaml -o "$USER_WORK/failed" --cache "$USER_WORK/cache" 2>&1 >/dev/null)
  set -e
  assert_eq "hwimg: error: one.yaml:4:10: failed to run the build step in builder image oci:images:busybox: bwrap is not installed or does not run (apt-get install bubblewrap); hwimg runs build steps in builder images with bwrap when it does not run as root" \
    "$stderr" "rootless without bwrap"
fi

step "errors: a GPU variant's step (no host toolkit looked for), no /bin/sh, ../escape, no image for this machine, an unknown tag"
rootfs_made=1  # the nosh image's, unpacked before its /bin/sh is looked for
if [ ! -e /usr/local/cuda-12.8 ]; then
  rootfs_made=2
  expect_error "hwimg: error: gpu.yaml:6:8: build step of variant cuda12.8-sm90-x86-64-v1 failed with exit status 3; its last output:
  | home=/usr/local/cuda env=/usr/local/cuda /usr/local/cuda" gpu.yaml
fi
expect_error "hwimg: error: nosh.yaml:4:10: failed to use builder image oci:images:nosh: it has no /bin/sh to run the build step" \
  nosh.yaml
expect_error "hwimg: error: escape.yaml:4:10: failed to use builder image oci:escape-images:1: failed to unpack layer $escape_layer: entry \"../escape\" leaves the image root" \
  escape.yaml
[ ! -e "$WORK/error-cache/escape" ] && [ ! -e "$WORK/escape" ] || fail "../escape was written"
assert_eq "$rootfs_made" "$(find "$WORK/error-cache/rootfs" -mindepth 1 -maxdepth 1 ! -name "*.layers" | wc -l)" \
  "rootfs entries after the errors (none, not even a staging directory, for the escape image)"
expect_error "hwimg: error: foreign.yaml:4:10: failed to use builder image oci:foreign-images:1: it has no image for linux/$(uname -m | sed 's/x86_64/amd64/;s/aarch64/arm64/')*; it has linux/s390x" \
  foreign.yaml
expect_error "hwimg: error: missing.yaml:4:10: failed to use builder image oci:images:missing: failed to resolve tag \"missing\" in $WORK/images: no such tag" \
  missing.yaml

step "a builder image in a registry (TLS and a password): fetched into the blob cache; an unknown one"
if command -v docker-registry >/dev/null && command -v htpasswd >/dev/null && command -v openssl >/dev/null; then
  export DOCKER_CONFIG=$TEST_TMP/docker
  REGISTRY_SCRIPT=$HWIMG_SOURCE_DIR/registry/run-registry.sh
  address=$("$REGISTRY_SCRIPT" start "$TEST_TMP/registry")
  add_cleanup "\"$REGISTRY_SCRIPT\" stop \"$TEST_TMP/registry\""
  tls=(--ca-file "$TEST_TMP/registry/cert.pem")
  "$HWIMG" login "$address" --username hwimg --password-stdin "${tls[@]}" <"$TEST_TMP/registry/password" >/dev/null
  "$HWIMG" push oci:images:busybox "$address/builders/busybox:1" "${tls[@]}" >/dev/null 2>&1
  variant_of registry "$address/builders/busybox:1"
  "$HWIMG" build registry.yaml -o registry-out --tag 1 --cache "$WORK/registry-cache" "${tls[@]}" \
    >"$TEST_TMP/build.log" 2>&1 || fail "build in a registry builder image: $(cat "$TEST_TMP/build.log")"
  assert_eq "$MARKER
input from the workdir" "$(layer_file registry-out 1-cpu-x86-64-v1 opt/app/result)" "result of the registry build"
  [ "$(ls "$WORK/registry-cache/blobs/sha256" | wc -l)" -ge 1 ] || fail "the builder image's layer is not in the blob cache"
  variant_of unknown "$address/builders/nope:1"
  extra_flags=("${tls[@]}")
  expect_error "hwimg: error: unknown.yaml:4:10: failed to use builder image $address/builders/nope:1: failed to get manifest $address/builders/nope:1: no repository $address/builders/nope (HTTP 404 MANIFEST_UNKNOWN); nearest in $address's catalogue: builders/busybox" \
    unknown.yaml
else
  echo "SKIP (registry part): docker-registry, htpasswd or openssl is not installed"
fi
