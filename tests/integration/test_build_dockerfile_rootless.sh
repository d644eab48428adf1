#!/usr/bin/env bash
# Rootless buildah (issue 26: "as root with --isolation chroot, rootless where the machine allows
# it"): `hwimg build` of examples/dockerfile for two CPU variants run by an unprivileged user whose
# buildah keeps its images in overlay storage (what rootless buildah and podman use wherever the
# kernel mounts overlay in a user namespace), against the same build as root in fresh vfs storage.
# Checks: the rootless build works and writes the user's files (skopeo and umoci accept them);
# the overlayfs xattrs rootless buildah leaves in the layers it commits (user.overlay.origin on a
# directory a step copied up) are in none of hwimg's layers, and hwimg says it took them out exactly
# where buildah's own image has them; the index is the root build's, digest for digest.
# The user, hwimg-rootless-test, is made for the suite (useradd gives it a subordinate ID range) and
# removed after; it works in a directory of its own under /tmp.
source "$(dirname "$0")/lib.sh"
source "$(dirname "$0")/registry_lib.sh"
source "$(dirname "$0")/bases_lib.sh"
for tool in buildah newuidmap newgidmap useradd userdel runuser python3; do require_tool "$tool"; done
require_root
[[ "$("$HWIMG" build --help 2>&1)" == *--dockerfile* ]] || skip "hwimg build has no --dockerfile yet (issue 26)"

user=hwimg-rootless-test
if ! id "$user" >/dev/null 2>&1; then
  useradd --create-home --shell /bin/sh "$user" >/dev/null 2>&1 || skip "cannot add the user $user: $(useradd --help 2>&1 | head -1)"
  add_cleanup "userdel --remove $user >/dev/null 2>&1"
fi
grep -q "^$user:" /etc/subuid && grep -q "^$user:" /etc/subgid ||
  skip "$user has no subordinate ID range in /etc/subuid and /etc/subgid: rootless buildah cannot map its IDs"
udir=$(mktemp -d /tmp/hwimg-rootless.XXXXXX)
add_cleanup "rm -rf --one-file-system '$udir'"
mkdir -p "$udir/xdg" "$udir/docker"
chmod 700 "$udir/xdg"
chown -R "$user" "$udir"

# as_user COMMAND...: runs COMMAND as the user, with nothing of root's environment but what it needs.
as_user() {
  runuser -u "$user" -- env -i PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin \
    HOME="$(getent passwd "$user" | cut -d: -f6)" XDG_RUNTIME_DIR="$udir/xdg" XDG_CACHE_HOME="$udir/cache" \
    CONTAINERS_STORAGE_CONF="$udir/storage.conf" DOCKER_CONFIG="$udir/docker" SOURCE_DATE_EPOCH="$SOURCE_DATE_EPOCH" "$@"
}
# storage_conf DRIVER: the user's buildah storage under $udir (rootless buildah reads
# rootless_storage_path, not graphroot, and keeps its run files in $XDG_RUNTIME_DIR).
storage_conf() {
  printf '[storage]\ndriver = "%s"\nrootless_storage_path = "%s/graph"\n' "$1" "$udir" >"$udir/storage.conf"
}

# overlay_xattrs LAYOUT [DIFF_ID]: "NAME (XATTR, ...)" for each entry with overlayfs xattrs in the
# layers of the layout's images (as hwimg -v words what it took out), or in the layer with that diff_id.
overlay_xattrs() {
  python3 - "$@" <<'PY'
import json, os, sys, tarfile
root, wanted = sys.argv[1], sys.argv[2:]
blob = lambda d: os.path.join(root, "blobs", "sha256", d.split(":", 1)[1])
layers, seen, todo = [], set(), list(json.load(open(os.path.join(root, "index.json")))["manifests"])
while todo:
    d = todo.pop()
    if d["digest"] in seen: continue
    seen.add(d["digest"])
    doc = json.load(open(blob(d["digest"])))
    todo += doc.get("manifests", [])
    if "layers" not in doc: continue
    diff_ids = json.load(open(blob(doc["config"]["digest"])))["rootfs"]["diff_ids"]
    for layer, diff_id in zip(doc["layers"], diff_ids):
        if (diff_id in wanted or not wanted) and layer["digest"] not in layers:
            layers.append(layer["digest"])
if wanted and not layers:
    sys.exit(f"no layer with diff_id {wanted[0]} in {root}")
for layer in layers:
    with tarfile.open(blob(layer), "r:*") as tar:
        for m in tar:
            xattrs = {key.split("xattr.", 1)[1] for key in m.pax_headers if "xattr." in key}
            names = sorted(n for n in xattrs if n.startswith(("user.overlay.", "trusted.overlay.")))
            if names:
                print(f"{m.name} ({', '.join(names)})")
PY
}

debian_images runtime builder
main_registry
put main "oci:$IMAGE_builder:bookworm" debian/builder:bookworm --all
# What the user gets of root's set-up: the registry's credentials and CA, the example, hwimg itself
# (the build tree may be where the user cannot reach it).
install -m 600 -o "$user" "$DOCKER_CONFIG/config.json" "$udir/docker/config.json"
install -m 644 "$REG_main_DIR/cert.pem" "$udir/ca.pem"
install -m 755 "$HWIMG" "$udir/hwimg"
app=$udir/app
cp -a "$HWIMG_SOURCE_DIR/examples/dockerfile" "$app"
printf 'axes:\n  gpu: [none]\n  cpu: [x86-64-v1, x86-64-v3]\n' >"$app/levels.yaml"
sed -i -e "s|registry\.example\.org/|$reg/|" -e 's|^matrix: .*|matrix: levels.yaml|' "$app/recipe.yaml"
chown -R "$user" "$udir"

step "the user's buildah: rootless, in overlay storage where this kernel allows it"
storage_conf vfs
as_user buildah unshare true >"$TEST_TMP/probe.log" 2>&1 ||
  skip "rootless buildah cannot make its user namespace here: $(tail -1 "$TEST_TMP/probe.log")"
storage_conf overlay
driver=overlay
if ! as_user buildah unshare sh -c 'c=$(buildah from scratch) && buildah mount "$c" >/dev/null && buildah rm "$c" >/dev/null' \
  >"$TEST_TMP/probe.log" 2>&1; then
  echo "NOTE: rootless overlay storage does not work here ($(tail -1 "$TEST_TMP/probe.log")): vfs instead, which leaves no overlayfs xattrs"
  driver=vfs
  storage_conf vfs
fi
assert_eq "true $driver" "$(as_user buildah info --format '{{.host.rootless}} {{.store.GraphDriverName}}')" "the user's buildah (rootless, driver)"

step "as root, in fresh vfs storage: the reference build"
d=$TEST_TMP/containers-root
mkdir -p "$d"
printf '[storage]\ndriver = "vfs"\ngraphroot = "%s/graph"\nrunroot = "%s/run"\n' "$d" "$d" >"$d/storage.conf"
CONTAINERS_STORAGE_CONF=$d/storage.conf hw_ok build "$app/recipe.yaml" -o "$TEST_TMP/root" --tag 1.0 -j 2 \
  --cache "$TEST_TMP/cache" "${tls[@]}"
root_index=$(tag_digest "$TEST_TMP/root" 1.0)

step "as $user: the same build, rootless buildah in $driver storage"
set +e
out=$(as_user "$udir/hwimg" build "$app/recipe.yaml" -o "$udir/out" --tag 1.0 -j 2 -v --cache "$udir/cache" \
  --ca-file "$udir/ca.pem" 2>&1)
status=$?
set -e
[ "$status" = 0 ] || fail "the rootless build failed ($status): $(tail -30 <<<"$out")"
assert_eq "$user" "$(stat -c %U "$udir/out/index.json")" "owner of the layout's index.json"
check_layout "$udir/out" 1.0
# Each variant's pinned deps stage would leave its working container behind without --force-rm.
assert_eq "" "$(as_user buildah containers -aq)" "working containers left in the user's buildah storage"

step "overlayfs's xattrs: what hwimg says it took out of a layer of buildah's is what that layer holds; none in hwimg's layers"
# buildah_image_with LAYER: the ID of an image in the user's storage that has that diff_id.
buildah_image_with() {
  local id
  for id in $(as_user buildah images --all --quiet --no-trunc); do
    if [[ " $(as_user buildah inspect --type image --format '{{range .OCIv1.RootFS.DiffIDs}}{{.}} {{end}}' "$id") " == *" $1 "* ]]; then
      echo "$id"
      return
    fi
  done
}
mkdir -p "$udir/buildah-images"
chown "$user" "$udir/buildah-images"
taken=$(sed -nE 's/^hwimg: layer (sha256:[0-9a-f]+): took out the overlayfs xattrs [^:]*: (.*)$/\1 \2/p' <<<"$out" | sort -u)
while read -r layer list; do
  [ -n "$layer" ] || continue
  image=$(buildah_image_with "$layer")
  [ -n "$image" ] || fail "hwimg -v names layer $layer, which none of the images in buildah's storage has"
  as_user buildah push --quiet --disable-compression "$image" "oci:$udir/buildah-images:${image#sha256:}" >/dev/null ||
    fail "buildah push $image (as $user)"
  # hwimg names a directory as its tar header does, with a slash; Python's tarfile without.
  assert_eq "$(overlay_xattrs "$udir/buildah-images" "$layer")" "$(sed -E 's/; /\n/g; s|/ \(| (|g' <<<"$list")" \
    "the overlayfs xattrs in buildah's layer $layer vs what hwimg -v says it took out"
done <<<"$taken"
if [ "$driver" = overlay ] && [ -z "$taken" ]; then
  echo "NOTE: this kernel's overlay left no xattrs in the layers hwimg keeps; nothing was taken out"
fi
assert_eq "" "$(overlay_xattrs "$udir/out")" "overlayfs xattrs in hwimg's layers"

if [ -n "$taken" ]; then
  step "an image made by rootless buildah itself, xattrs and all: inspect --verify notes them, a build on it warns"
  read -r layer list <<<"$(head -1 <<<"$taken")"
  image=$(buildah_image_with "$layer")
  # names_each_xattr TEXT: TEXT names every entry of $list ("opt/ (a, b); usr/ (c)", as the filter
  # says it) as the scan of a layer does ("/opt (a, b)"), each with its xattrs in whatever order.
  names_each_xattr() {
    local item path names name
    while read -r item; do
      path=${item%% (*} names=${item#* (}
      assert_contains "$1" "/${path%/} (" "the entry $path"
      for name in $(tr -d '),' <<<"$names"); do
        grep -qE "/${path%/} \([^)]*$name" <<<"$1" || fail "$name is not named for /${path%/} in: $1"
      done
    done < <(sed 's/; /\n/g' <<<"$list")
  }
  # hwimg names a layer by its blob's digest, which differs from the diff_id where buildah compressed it.
  blob=$(python3 - "$udir/buildah-images" "${image#sha256:}" "$layer" <<'PY'
import json, sys
layout, tag, diff_id = sys.argv[1:]
blob = lambda digest: json.load(open(f"{layout}/blobs/sha256/{digest[7:]}"))
entry = next(m for m in json.load(open(f"{layout}/index.json"))["manifests"]
             if m.get("annotations", {}).get("org.opencontainers.image.ref.name") == tag)
manifest = blob(entry["digest"])
print(manifest["layers"][blob(manifest["config"]["digest"])["rootfs"]["diff_ids"].index(diff_id)]["digest"])
PY
)
  out=$("$HWIMG" inspect --verify "oci:$udir/buildah-images:${image#sha256:}" 2>&1) || true
  line=$(grep "^note: layer $blob: " <<<"$out") || fail "inspect --verify has no note on layer $blob (diff_id $layer): $out"
  assert_contains "$line" "overlayfs's own xattrs, which rootless Docker 25 and later cannot set and so refuses to unpack (docs/recipe.md#overlayfs-xattrs): " \
    "the note of inspect --verify on buildah's own image"
  names_each_xattr "$line"
  mkdir -p "$TEST_TMP/on-buildah/data"
  echo data >"$TEST_TMP/on-buildah/data/file"
  printf 'name: on-buildah\nbase: oci:%s:%s\nlayers:\n  - from: data\n    to: /opt/on-buildah\n' \
    "$udir/buildah-images" "${image#sha256:}" >"$TEST_TMP/on-buildah/recipe.yaml"
  out=$("$HWIMG" build "$TEST_TMP/on-buildah/recipe.yaml" -o "$TEST_TMP/on-buildah/out" --cache "$TEST_TMP/on-buildah/cache" 2>&1) ||
    fail "hwimg build on buildah's image: $out"
  line=$(grep "^hwimg: warning: base image oci:$udir/buildah-images:${image#sha256:} layer $blob: " <<<"$out") ||
    fail "the build on buildah's image did not warn about layer $blob: $out"
  assert_contains "$line" "; rebuild the base as root, with vfs storage or with a buildah/podman that drops them" "the build's advice"
  names_each_xattr "$line"
  assert_eq 1 "$(grep -c "layer $blob: .* overlayfs's own xattrs" <<<"$out")" "the warning is said once"
fi

step "the rootless index is the root build's, digest for digest"
assert_eq "$root_index" "$(tag_digest "$udir/out" 1.0)" "index digest, rootless vs root"
echo "root and rootless: $root_index; taken out of buildah's layers: ${taken:-nothing}"
