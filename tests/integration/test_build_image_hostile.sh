#!/usr/bin/env bash
# Builder images whose layers try to leave the root (issue 15 §3): `..` in a path, a hard link out
# of the root, a path through an absolute symlink or one that climbs out, a character or block
# device, a whiteout of no name (`.wh...` once removed the cache's rootfs directory; issue 23 F4).
# Each is refused while the rootfs is unpacked, with one error line naming the entry and its layer;
# nothing is written outside the root and no rootfs is left in the cache. A setuid-root file is
# unpacked without its setuid bit (F5). Layers made with Python's tarfile, as a hostile registry
# would serve them.
source "$(dirname "$0")/lib.sh"

for tool in python3 jq; do require_tool "$tool"; done
export SOURCE_DATE_EPOCH=1700000000
cd "$TEST_TMP"
mkdir -p outside
echo "the host's" >outside/victim

# hostile_image NAME ENTRY_SPEC...: a layout NAME (tag 1) with one layer holding /bin/sh and the
# entries, each "TYPE:NAME[:TARGET]" with TYPE f (file), s (setuid and setgid file), l (symlink),
# h (hard link), c/b (device);
# prints the layer's digest.
hostile_image() {
  python3 - "$@" <<'PY'
import gzip, hashlib, io, json, os, sys, tarfile
name, specs = sys.argv[1], sys.argv[2:]
def put(data, media_type):
    digest = hashlib.sha256(data).hexdigest()
    os.makedirs(f"{name}/blobs/sha256", exist_ok=True)
    with open(f"{name}/blobs/sha256/{digest}", "wb") as f:
        f.write(data)
    return {"mediaType": media_type, "digest": "sha256:" + digest, "size": len(data)}
raw = io.BytesIO()
with tarfile.open(fileobj=raw, mode="w", format=tarfile.PAX_FORMAT) as tar:
    info = tarfile.TarInfo("bin/sh"); info.size, info.mode = 2, 0o755
    tar.addfile(info, io.BytesIO(b"x\n"))
    for spec in specs:
        kind, path, *target = spec.split(":", 2)
        info = tarfile.TarInfo(path)
        info.mode = 0o644
        if kind in "fs":
            info.size = 7
            if kind == "s": info.mode = 0o6755
            tar.addfile(info, io.BytesIO(b"hostile"))
            continue
        info.type = {"l": tarfile.SYMTYPE, "h": tarfile.LNKTYPE, "c": tarfile.CHRTYPE, "b": tarfile.BLKTYPE}[kind]
        if target: info.linkname = target[0]
        if kind in "cb": info.devmajor, info.devminor = 1, 3
        tar.addfile(info)
layer = put(gzip.compress(raw.getvalue(), mtime=0), "application/vnd.oci.image.layer.v1.tar+gzip")
arch = {"x86_64": "amd64", "aarch64": "arm64"}.get(os.uname().machine, os.uname().machine)
config = put(json.dumps({"architecture": arch, "os": "linux",
                         "rootfs": {"type": "layers", "diff_ids": ["sha256:" + hashlib.sha256(raw.getvalue()).hexdigest()]}}).encode(),
             "application/vnd.oci.image.config.v1+json")
manifest = put(json.dumps({"schemaVersion": 2, "mediaType": "application/vnd.oci.image.manifest.v1+json",
                           "config": config, "layers": [layer]}).encode(), "application/vnd.oci.image.manifest.v1+json")
manifest["annotations"] = {"org.opencontainers.image.ref.name": "1"}
with open(f"{name}/oci-layout", "w") as f: f.write('{"imageLayoutVersion":"1.0.0"}')
with open(f"{name}/index.json", "w") as f: json.dump({"schemaVersion": 2, "manifests": [manifest]}, f)
print(layer["digest"])
PY
}

# recipe NAME: NAME.yaml, a recipe whose build step runs in oci:NAME:1.
recipe() {
  cat >"$1.yaml" <<YAML
name: hostile
base: scratch
build:
  image: oci:$1:1
  run: echo never
layers:
  - {from: "\${out}", to: /out}
YAML
}

# refused NAME EXPECTED_ENTRY_ERROR ENTRY_SPEC...: a build in that image fails with exactly that.
refused() {
  local name=$1 expected=$2; shift 2
  local layer
  layer=$(hostile_image "$name" "$@")
  recipe "$name"
  set +e
  "$HWIMG" build "$name.yaml" -o "out-$name" --cache cache >stdout 2>stderr
  local status=$?
  set -e
  assert_eq 1 "$status" "$name: exit status ($(cat stderr))"
  assert_eq "hwimg: error: $name.yaml:4:10: failed to use builder image oci:$name:1: failed to unpack layer $layer: $expected" \
    "$(cat stderr)" "$name: the error"
  assert_eq "the host's" "$(cat outside/victim)" "$name: the file outside"
  [ ! -e escape ] && [ ! -e "$TEST_TMP/../escape" ] || fail "$name: something was written outside the root"
  [ ! -e "out-$name" ] || fail "$name: the output layout was written"
  assert_eq "" "$(ls -A cache/rootfs 2>/dev/null)" "$name: rootfs entries left in the cache"
}

step "a path with .. (plain, and in the middle of a path)"
refused dotdot 'entry "../escape" leaves the image root' f:../escape
refused dotdot-middle 'entry "usr/../../escape" leaves the image root' f:usr/../../escape
step "a hard link out of the root"
refused hardlink-out 'entry "usr/passwd" is a hard link to "../outside/victim", outside the image root' \
  h:usr/passwd:../outside/victim
step "a path through an absolute symlink out of the root, and through one that climbs out"
refused through-absolute "entry \"evil/victim\": Cannot extract through symlink evil/victim" \
  "l:evil:$TEST_TMP/outside" f:evil/victim
refused through-relative 'entry "up/victim": Cannot extract through symlink up/victim' l:up:../../../../.. f:up/victim
step "device nodes"
refused char-device 'entry "dev/null" is a device node, which a builder image may not carry' c:dev/null
refused block-device 'entry "dev/sda" is a device node, which a builder image may not carry' b:dev/sda
step "whiteouts of no name: .wh..., .wh.. and .wh."
refused whiteout-parent 'entry ".wh..." is a whiteout of "..", which names no file of its directory' f:.wh...
refused whiteout-self 'entry "usr/.wh.." is a whiteout of ".", which names no file of its directory' f:usr/.wh..
refused whiteout-empty 'entry "usr/.wh." is a whiteout of "", which names no file of its directory' f:usr/.wh.
step "a setuid-root file is unpacked without its setuid and setgid bits"
hostile_image setuid s:usr/bin/su >/dev/null
recipe setuid
# Its /bin/sh is no program, so the step fails, after the rootfs was unpacked into the cache.
expect_failure "$HWIMG" build setuid.yaml -o out-setuid --cache "$TEST_TMP/cache"
assert_contains "$OUT" "exec format error" "the step of the setuid image ran in its rootfs"
assert_eq 755 "$(stat -c %a cache/rootfs/*/usr/bin/su)" "the mode of the setuid file in the cached rootfs"
echo "every hostile builder image was refused, naming its entry"
