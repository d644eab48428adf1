# Shared set-up for the registry-base suites of issue 13 (sourced after lib.sh and registry_lib.sh):
# test images made from Debian's packages (make_debian_images.sh, cached under the build tree; the
# suite skips when the Debian archive cannot be reached and nothing is cached), registries holding
# them, credentials for hwimg (config.json) and skopeo, and helpers that read what a registry or a
# layout holds.

require_root
for tool in skopeo umoci runc jq flock sha256sum; do require_tool "$tool"; done
: "${HWIMG_BUILD_DIR:=$(cd "$(dirname "$HWIMG")" && pwd)}"
export HWIMG_BUILD_DIR
export SOURCE_DATE_EPOCH=1700000000
export DOCKER_CONFIG="$TEST_TMP/docker"
mkdir -p "$DOCKER_CONFIG"
# 0600, as `hwimg login` writes it: hwimg warns about a config.json others can read.
echo '{"auths":{}}' >"$DOCKER_CONFIG/config.json"
chmod 600 "$DOCKER_CONFIG/config.json"

# debian_images NAME...: makes (or finds in the cache) the images and sets IMAGE_runtime,
# IMAGE_builder, IMAGE_big to their layouts (tag bookworm; shared, never written to).
debian_images() {
  local out status=0 names=("$@") paths i
  out=$("$HWIMG_SOURCE_DIR/tests/integration/make_debian_images.sh" "$@" 2>"$TEST_TMP/images.log") || status=$?
  [ "$status" = 77 ] && skip "$(tail -1 "$TEST_TMP/images.log")"
  [ "$status" = 0 ] || fail "make_debian_images.sh $* failed ($status): $(tail -5 "$TEST_TMP/images.log")"
  mapfile -t paths <<<"$out"
  for i in "${!names[@]}"; do printf -v "IMAGE_${names[$i]%%:*}" '%s' "${paths[$i]}"; done
}

# base_registry NAME [--no-tls]: starts a registry with htpasswd and stores its credentials in
# $DOCKER_CONFIG; sets REG_<NAME> (address), and the arrays HW_<NAME> (hwimg's flags for it) and
# SK_<NAME> (skopeo's flags for it, without a src-/dest- prefix: see skopeo_to / skopeo_from).
base_registry() {
  local name=$1; shift
  start_registry "$name" "$@"
  local dir_var="REG_${name}_DIR"
  local dir=${!dir_var} addr
  addr=$(cat "$dir/address")
  printf -v "REG_$name" '%s' "$addr"
  if [ -f "$dir/cert.pem" ]; then
    mkdir -p "$dir/certs"
    cp "$dir/cert.pem" "$dir/certs/ca.crt"
    eval "HW_$name=(--ca-file \"\$dir/cert.pem\")"
    eval "SK_$name=(cert-dir=\"\$dir/certs\" creds=\"hwimg:\$(cat \"\$dir/password\")\")"
  else
    eval "HW_$name=(--plain-http)"
    eval "SK_$name=(tls-verify=false creds=\"hwimg:\$(cat \"\$dir/password\")\")"
  fi
  add_auth "$addr" "$(cat "$dir/password")"
}

# add_auth HOST:PORT PASSWORD: user hwimg's credentials for that address in $DOCKER_CONFIG.
add_auth() {
  jq --arg a "$1" --arg v "$(printf 'hwimg:%s' "$2" | base64 -w0)" '.auths[$a] = {auth: $v}' \
    "$DOCKER_CONFIG/config.json" >"$DOCKER_CONFIG/config.json.new"
  chmod 600 "$DOCKER_CONFIG/config.json.new"
  mv "$DOCKER_CONFIG/config.json.new" "$DOCKER_CONFIG/config.json"
}

# skopeo_flags PREFIX NAME: skopeo's flags for registry NAME with --src- or --dest-.
skopeo_flags() {
  local arr="SK_$2[@]" flag
  for flag in "${!arr}"; do printf -- '--%s-%s\n' "$1" "$flag"; done
}
# put NAME SOURCE REPO:TAG [--all]: skopeo copies SOURCE (oci:DIR:TAG, ...) into registry NAME.
put() {
  local name=$1 source=$2 dest=$3; shift 3
  local addr_var="REG_$name" flags
  mapfile -t flags < <(skopeo_flags dest "$name")
  skopeo copy -q "$@" "${flags[@]}" "$source" "docker://${!addr_var}/$dest" >/dev/null ||
    fail "skopeo copy $source -> $name/$dest"
}
# raw NAME REPO(:TAG|@DIGEST): the manifest or index the registry serves, byte for byte.
raw() {
  local name=$1 flags addr_var="REG_$1"
  mapfile -t flags < <(skopeo_flags src "$name" | sed 's/^--src-/--/')
  skopeo inspect --raw "${flags[@]}" "docker://${!addr_var}/$2"
}
# config_of NAME REPO@DIGEST: the image config of that manifest.
config_of() {
  local name=$1 flags addr_var="REG_$1"
  mapfile -t flags < <(skopeo_flags src "$name" | sed 's/^--src-/--/')
  skopeo inspect --config "${flags[@]}" "docker://${!addr_var}/$2"
}
digest_of() { echo "sha256:$(sha256sum | cut -d' ' -f1)"; }   # digest_of < BYTES

# platform_manifest NAME REPO:TAG LEVEL: the digest of the manifest hwimg must pick for an amd64
# variant of LEVEL (x86-64-vN): the tag itself when it is a manifest; in an index, the highest
# amd64 entry not above LEVEL (docs/recipe.md#base).
platform_manifest() {
  local file=$TEST_TMP/platform-manifest.json
  raw "$1" "$2" >"$file"
  if [ "$(jq -r .mediaType "$file")" != application/vnd.oci.image.index.v1+json ]; then
    digest_of <"$file"
    return
  fi
  jq -r --argjson level "${3#x86-64-v}" '
    [.manifests[] | select(.platform.os == "linux" and .platform.architecture == "amd64")
     | {d: .digest, l: ((.platform.variant // "v1") | ltrimstr("v") | tonumber)} | select(.l <= $level)]
    | max_by(.l) | .d' "$file"
}
# layers_of NAME REPO@DIGEST: the manifest's layer digests, one line.
layers_of() { raw "$1" "$2" | jq -r '[.layers[].digest] | join(" ")'; }

# Layouts.
tag_digest() { # tag_digest LAYOUT TAG: the digest index.json gives TAG
  jq -r --arg t "$2" '.manifests[] | select(.annotations["org.opencontainers.image.ref.name"] == $t) | .digest' \
    "$1/index.json"
}
layout_blob() { echo "$1/blobs/sha256/${2#sha256:}"; }
layout_manifest() { cat "$(layout_blob "$1" "$(tag_digest "$1" "$2")")"; }   # layout_manifest LAYOUT TAG
variant_ids() { # variant_ids LAYOUT TAG: the index's variants, one per line
  jq -r '.manifests[].annotations["org.hwimg.variant"]' "$(layout_blob "$1" "$(tag_digest "$1" "$2")")"
}

# check_layout DIR TAG: every blob hashes to its name; skopeo reads the index and every variant
# tag, umoci every variant tag.
check_layout() {
  local dir=$1 tag=$2 file id
  while IFS= read -r -d '' file; do
    [ "$(sha256sum <"$file" | cut -d' ' -f1)" = "$(basename "$file")" ] || fail "$dir: $file does not hash to its name"
  done < <(find "$dir/blobs/sha256" -type f -print0)
  assert_eq "$(tag_digest "$dir" "$tag")" "$(skopeo inspect --raw "oci:$dir:$tag" | digest_of)" "skopeo: index of $dir:$tag"
  for id in $(variant_ids "$dir" "$tag"); do
    skopeo inspect "oci:$dir:$tag-$id" >/dev/null || fail "skopeo inspect oci:$dir:$tag-$id"
    umoci stat --image "$dir:$tag-$id" >/dev/null || fail "umoci stat $dir:$tag-$id"
  done
}

# run_variant LAYOUT TAG NAME [ARGS_JSON]: umoci unpack, runc run; prints the output.
run_variant() {
  local bundle=$TEST_TMP/bundle-$3 filter='.process.terminal = false'
  rm -rf "$bundle"
  umoci unpack --image "$1:$2" "$bundle" >/dev/null || fail "umoci unpack $1:$2"
  [ -n "${4:-}" ] && filter+=" | .process.args = $4"
  jq "$filter" "$bundle/config.json" >"$bundle/config.json.new" && mv "$bundle/config.json.new" "$bundle/config.json"
  runc run --bundle "$bundle" "hwimg-bases-$$-$3" </dev/null 2>&1 || fail "runc run $1:$2 exited with status $?"
  rm -rf "$bundle"
}

# Registry logs: requests since a mark.
count_lines() { if [ -z "$1" ]; then echo 0; else grep -c . <<<"$1"; fi; }

# main_registry: the registry "main" (TLS + htpasswd) holding the Debian runtime image as
# debian/runtime:bookworm; sets reg, dir and tls (its skopeo flags).
main_registry() {
  base_registry main
  reg=$REG_main
  dir=$REG_main_DIR
  tls=("${HW_main[@]}")
  put main "oci:$IMAGE_runtime:bookworm" debian/runtime:bookworm --all
}

# stalling_proxy: the plain registry's debian/big:64 behind registry_proxy.py, which stalls the
# first blob GET (it creates $port_file.stalled then); sets proxy (127.0.0.1:PORT) and port_file.
stalling_proxy() {
  base_registry plain --no-tls
  put plain "oci:$IMAGE_big:bookworm" debian/big:64 --all
  start_proxy proxy --upstream "$REG_plain" --stall-blob-gets 1
  proxy=$PROXY_ADDR port_file=$TEST_TMP/proxy.port
  add_auth "$proxy" "$(cat "$REG_plain_DIR/password")"
}
