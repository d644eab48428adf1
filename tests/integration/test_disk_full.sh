#!/usr/bin/env bash
# A full disk (issue 15 §3): a small tmpfs holds, in turn, the output layout of `hwimg build`, the
# blob cache a registry base is fetched into, and the staging layout of `build --push`. Each time
# the disk fills up the build fails with one error line naming the file and ENOSPC's text, nothing
# is left half-written (no `*.tmp-*` anywhere on the disk), what was there before is unchanged and
# valid (the layout's index.json byte for byte, skopeo and umoci read it; every cached blob still
# hashes to its name), and once space is freed the same command succeeds.
source "$(dirname "$0")/lib.sh"
source "$(dirname "$0")/registry_lib.sh"
source "$(dirname "$0")/bases_lib.sh"   # root, skopeo, umoci; a registry with credentials

disk=$TEST_TMP/disk
mkdir -p "$disk"
mount -t tmpfs -o size=8m hwimg-test-full "$disk" 2>/dev/null || skip "cannot mount a tmpfs"
add_cleanup "umount -l '$disk'"

# fill_disk LEAVE_KIB: a filler file takes all but about LEAVE_KIB of the disk.
fill_disk() {
  rm -f "$disk/filler"
  local free
  free=$(df --output=avail -k "$disk" | tail -1)
  [ "$free" -gt "$1" ] || fail "only ${free} KiB free on the test disk"
  head -c "$(((free - $1) * 1024))" /dev/zero >"$disk/filler"
}
no_temporaries() { # no_temporaries WHAT: nothing half-written is left on the disk
  local left
  left=$(find "$disk" -name '*.tmp-*' | head -5)
  [ -z "$left" ] || fail "$1: temporary files left behind: $left"
}
# expect_enospc WHAT ARGS...: hwimg fails with exit 1 and one line naming the disk full.
expect_enospc() {
  local what=$1; shift
  set +e
  "$HWIMG" "$@" >"$TEST_TMP/stdout" 2>"$TEST_TMP/stderr"
  local status=$?
  set -e
  assert_eq 1 "$status" "$what: exit status (stderr: $(cat "$TEST_TMP/stderr"))"
  assert_eq 1 "$(wc -l <"$TEST_TMP/stderr")" "$what: lines on stderr ($(cat "$TEST_TMP/stderr"))"
  local line
  line=$(cat "$TEST_TMP/stderr")
  [[ "$line" =~ ^hwimg:\ error:\ .*failed\ to\ write\ [^:]+:\ No\ space\ left\ on\ device$ ]] ||
    fail "$what: expected one 'failed to write FILE: No space left on device' error, got [$line]"
  echo "  $what: $line"
}
# A recipe with one layer of SIZE_KIB incompressible bytes made by its build step.
make_recipe() { # make_recipe FILE SIZE_KIB [BASE]
  cat >"$1" <<YAML
name: full
base: ${3:-scratch}
build:
  run: head -c $(($2 * 1024)) /dev/urandom > "\${out}/payload"
layers:
  - {from: "\${out}/payload", to: /payload}
YAML
}

step "build into a layout on the full disk"
make_recipe "$TEST_TMP/small.yaml" 64
make_recipe "$TEST_TMP/big.yaml" 3072
"$HWIMG" build "$TEST_TMP/small.yaml" -o "$disk/layout" --tag 1 >/dev/null
before_index=$(sha256sum <"$disk/layout/index.json")
before_blobs=$(ls "$disk/layout/blobs/sha256" | sort)
fill_disk 1024
expect_enospc "build" build "$TEST_TMP/big.yaml" -o "$disk/layout" --tag 2
no_temporaries "build"
assert_eq "$before_index" "$(sha256sum <"$disk/layout/index.json")" "index.json after the failed build"
assert_eq "$before_blobs" "$(ls "$disk/layout/blobs/sha256" | sort)" "blobs after the failed build"
check_layout "$disk/layout" 1
rm -f "$disk/filler"
"$HWIMG" build "$TEST_TMP/big.yaml" -o "$disk/layout" --tag 2 >/dev/null
check_layout "$disk/layout" 2
rm -rf "$disk/layout"

step "a registry base fetched into a cache on the full disk"
base_registry main
reg=$REG_main
# Two bases made by hwimg: a small one, cached first, and one with a 3 MiB layer.
"$HWIMG" build "$TEST_TMP/small.yaml" -o "$TEST_TMP/bases" --tag small >/dev/null
"$HWIMG" build "$TEST_TMP/big.yaml" -o "$TEST_TMP/bases" --tag big >/dev/null
put main "oci:$TEST_TMP/bases:small-cpu-x86-64-v1" base:small
put main "oci:$TEST_TMP/bases:big-cpu-x86-64-v1" base:big
make_recipe "$TEST_TMP/on-small.yaml" 4 "$reg/base:small"
make_recipe "$TEST_TMP/on-big.yaml" 4 "$reg/base:big"
"$HWIMG" build "$TEST_TMP/on-small.yaml" -o "$TEST_TMP/out" --tag 1 --cache "$disk/cache" "${HW_main[@]}" >/dev/null
cached_before=$(cd "$disk/cache" && find . -type f -path './blobs/*' | sort)
fill_disk 1024
expect_enospc "base fetch" build "$TEST_TMP/on-big.yaml" -o "$TEST_TMP/out" --tag 2 --cache "$disk/cache" "${HW_main[@]}"
no_temporaries "base fetch"
# What was cached stays; what was added (the base's manifest and config, fetched before its layer)
# is complete: every blob hashes to its name.
missing=$(comm -23 <(echo "$cached_before") <(cd "$disk/cache" && find . -type f -path './blobs/*' | sort))
assert_eq "" "$missing" "cached blobs lost in the failed fetch"
for file in "$disk"/cache/blobs/sha256/*; do
  [ "$(sha256sum <"$file" | cut -d' ' -f1)" = "$(basename "$file")" ] || fail "cached $file does not hash to its name"
done
check_layout "$TEST_TMP/out" 1
assert_eq "" "$(jq -r '.manifests[] | select(.annotations["org.opencontainers.image.ref.name"] == "2") | .digest' "$TEST_TMP/out/index.json")" "tag 2 in the layout"
rm -f "$disk/filler"
"$HWIMG" build "$TEST_TMP/on-big.yaml" -o "$TEST_TMP/out" --tag 2 --cache "$disk/cache" "${HW_main[@]}" >/dev/null
check_layout "$TEST_TMP/out" 2
rm -rf "$disk/cache"

step "build --push stages its layers in a cache on the full disk"
"$HWIMG" build "$TEST_TMP/small.yaml" --push "$reg/app:1" --cache "$disk/cache" "${HW_main[@]}" >/dev/null
pushed_before=$(raw main app:1 | digest_of)
# Staging is per recipe (docs/cache.md): small.yaml's layout must come through big.yaml's failure.
staging=$(dirname "$(find "$disk/cache/staging" -name oci-layout)")
staged_before=$(cd "$staging" && find . -type f ! -path '*/.hwimg/*' | sort)
fill_disk 1024
expect_enospc "push staging" build "$TEST_TMP/big.yaml" --push "$reg/app:1" --cache "$disk/cache" "${HW_main[@]}"
no_temporaries "push staging"
assert_eq "$pushed_before" "$(raw main app:1 | digest_of)" "app:1 in the registry after the failed build"
assert_eq "$staged_before" "$(cd "$staging" && find . -type f ! -path '*/.hwimg/*' | sort)" \
  "the staging layout of the earlier build after the failed build"
check_layout "$staging" 1
for layout in "$disk"/cache/staging/*/; do  # big.yaml's own: valid, each blob whole
  [ "${layout%/}" != "$staging" ] || continue
  jq -e '.schemaVersion == 2' "$layout/index.json" >/dev/null || fail "$layout/index.json after the failed build"
  for file in "$layout"blobs/sha256/*; do
    [ ! -e "$file" ] || [ "$(sha256sum <"$file" | cut -d' ' -f1)" = "$(basename "$file")" ] || fail "$file is not whole"
  done
done
rm -f "$disk/filler"
"$HWIMG" build "$TEST_TMP/big.yaml" --push "$reg/app:1" --cache "$disk/cache" "${HW_main[@]}" >/dev/null
[ "$(raw main app:1 | digest_of)" != "$pushed_before" ] || fail "app:1 did not move after the successful push"
echo "a full disk fails cleanly in build, base fetch and push staging"
