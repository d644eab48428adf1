#!/usr/bin/env bash
# The layout store under concurrency and crashes: builds into one layout at once all land; a build
# killed with SIGKILL (at random moments, and at every fsync and blob rename, injected with strace)
# leaves a layout that skopeo and umoci accept, and a rerun completes it.
source "$(dirname "$0")/lib.sh"

require_root
for tool in skopeo umoci runc jq cc sha256sum setsid strace; do require_tool "$tool"; done

export SOURCE_DATE_EPOCH=1700000000
readonly VARIANT=cpu-x86-64-v1
# Build scratch directories that a kill leaves behind land here and go with the suite.
export TMPDIR=$TEST_TMP/tmp
mkdir -p "$TMPDIR"
RECIPES=$TEST_TMP/recipes
cp -a "$HWIMG_SOURCE_DIR/tests/data/recipes" "$RECIPES"
mkdir "$RECIPES/bulk/payload"
for i in $(seq 1 48); do
  head -c 750000 /dev/urandom | base64 >"$RECIPES/bulk/payload/part-$i.txt"
done
HELLO=$RECIPES/hello/hello.yaml
BULK=$RECIPES/bulk/bulk.yaml
DATA_ONLY=$RECIPES/hello/data-only.yaml

tag_digest() { # tag_digest LAYOUT TAG
  jq -r --arg t "$2" '.manifests[] | select(.annotations["org.opencontainers.image.ref.name"] == $t) | .digest' \
    "$1/index.json"
}
tags_of() { # tags_of LAYOUT: every tag in index.json, one per line
  jq -r '.manifests[].annotations["org.opencontainers.image.ref.name"] // empty' "$1/index.json"
}

# check_layout DIR: index.json is a valid index, every blob hashes to its name and nothing else is
# in blobs/, every tag resolves with skopeo (and umoci for manifests), every referenced blob exists.
check_layout() {
  local dir=$1 file name tag digest type
  assert_eq '{"imageLayoutVersion":"1.0.0"}' "$(jq -c . "$dir/oci-layout")" "$dir/oci-layout"
  jq -e '.schemaVersion == 2 and (.manifests | type == "array")' "$dir/index.json" >/dev/null ||
    fail "$dir/index.json is not a valid image index: $(head -c 300 "$dir/index.json")"
  while IFS= read -r -d '' file; do
    name=${file#"$dir/blobs/"}
    [[ $name =~ ^sha256/[0-9a-f]{64}$ ]] || fail "$dir: stray file blobs/$name"
    [ "$(sha256sum <"$file" | cut -d' ' -f1)" = "${name#sha256/}" ] || fail "$dir: blobs/$name does not hash to its name"
  done < <(find "$dir/blobs" -mindepth 1 ! -type d -print0)
  for tag in $(tags_of "$dir"); do
    digest=$(tag_digest "$dir" "$tag")
    assert_eq "$digest" "sha256:$(skopeo inspect --raw "oci:$dir:$tag" | sha256sum | cut -d' ' -f1)" \
      "$dir: skopeo inspect --raw of tag $tag"
    type=$(jq -r .mediaType "$dir/blobs/sha256/${digest#sha256:}")
    if [ "$type" = application/vnd.oci.image.index.v1+json ]; then
      for digest in $(jq -r '.manifests[].digest' "$dir/blobs/sha256/${digest#sha256:}"); do
        [ -f "$dir/blobs/sha256/${digest#sha256:}" ] || fail "$dir: tag $tag lists missing manifest $digest"
      done
    else
      skopeo inspect "oci:$dir:$tag" >/dev/null || fail "$dir: skopeo inspect of tag $tag"
      umoci stat --image "$dir:$tag" >/dev/null || fail "$dir: umoci stat of tag $tag"
      for digest in $(jq -r '.layers[].digest' "$dir/blobs/sha256/${digest#sha256:}"); do
        [ -f "$dir/blobs/sha256/${digest#sha256:}" ] || fail "$dir: tag $tag lists missing layer $digest"
      done
    fi
  done
}
# check_killed DIR: a layout, or (killed while creating it) no layout yet: no oci-layout at all.
check_killed() {
  if [ ! -e "$1/oci-layout" ]; then
    [ ! -e "$1/index.json" ] || fail "$1: index.json without oci-layout"
    return 0
  fi
  [ -e "$1/index.json" ] || fail "$1: oci-layout without index.json: skopeo and umoci refuse the layout"
  check_layout "$1"
}
# run_image LAYOUT TAG NAME: umoci unpack + runc run; prints the program's output.
run_image() {
  local bundle=$TEST_TMP/bundle-$3 id=hwimg-test-$$-$3
  umoci unpack --image "$1:$2" "$bundle" >/dev/null || fail "umoci unpack $1:$2"
  jq '.process.terminal = false' "$bundle/config.json" >"$bundle/config.json.new"
  mv "$bundle/config.json.new" "$bundle/config.json"
  # In the foreground, runc removes the container when its process exits.
  runc run --bundle "$bundle" "$id" </dev/null || fail "runc run $1:$2 exited with status $?"
}
# rerun LAYOUT TAG RECIPE: the same build again must complete, with both tags resolving, and
# clear what killed writers left (temporary files named .NAME.tmp-PID-...).
rerun() {
  "$HWIMG" build "$3" -o "$1" --tag "$2" >/dev/null || fail "rerun into $1 failed"
  check_layout "$1"
  [ -n "$(tag_digest "$1" "$2")" ] && [ -n "$(tag_digest "$1" "$2-$VARIANT")" ] || fail "$1: rerun left no tag $2"
  local left
  left=$(cd "$1" && find . -name '.*.tmp-*' | sort | paste -sd' ')
  [ -z "$left" ] || fail "$1: temporary files of killed builds left after a rerun: $left"
}

step "three builds into one layout at once"
SHARED=$TEST_TMP/shared
"$HWIMG" build "$HELLO" -o "$SHARED" --tag one >/dev/null &
PID_ONE=$!
"$HWIMG" build "$BULK" -o "$SHARED" --tag two >/dev/null &
PID_TWO=$!
"$HWIMG" build "$BULK" -o "$SHARED" --tag three -j 1 >/dev/null &
PID_THREE=$!
wait "$PID_ONE" || fail "build one failed"
wait "$PID_TWO" || fail "build two failed"
wait "$PID_THREE" || fail "build three failed"
assert_eq "one one-$VARIANT three three-$VARIANT two two-$VARIANT" "$(tags_of "$SHARED" | sort | paste -sd' ')" \
  "tags after parallel builds"
check_layout "$SHARED"
assert_eq "$(tag_digest "$SHARED" two)" "$(tag_digest "$SHARED" three)" "two builds of one recipe give one index"
assert_eq "" "$(cd "$SHARED" && find . -name '.*.tmp-*')" "temporary files after the parallel builds"
assert_eq "hello from $VARIANT: default-arg
greetings from the data layer" "$(run_image "$SHARED" "one-$VARIANT" one)" "output of tag one"
assert_eq "hello from $VARIANT: bulk
greetings from the data layer" "$(run_image "$SHARED" "three-$VARIANT" three)" "output of tag three"
cmp "$RECIPES/bulk/payload/part-48.txt" "$TEST_TMP/bundle-three/rootfs/opt/bulk/payload/part-48.txt" ||
  fail "payload differs after unpack"

FAILED=()
# point NAME FUNCTION ARGS...: one check that may fail without stopping the others.
point() {
  local name=$1
  shift
  set +e
  (
    set -e
    "$@"
  )
  local status=$?
  set -e
  [ "$status" -eq 0 ] || FAILED+=("$name")
}

step "SIGKILL at random moments"
SEED=${HWIMG_TEST_SEED:-$$}
RANDOM=$SEED
echo "random seed $SEED (set HWIMG_TEST_SEED to repeat)"
KILLED=$TEST_TMP/killed
# The layout holds a finished image from the start, so every check sees tags; each killed build
# has its own SOURCE_DATE_EPOCH, so every blob it writes is new.
"$HWIMG" build "$BULK" -o "$KILLED" --tag done >/dev/null
for i in $(seq 1 10); do
  # setsid: the kill takes the build step's processes with it.
  SOURCE_DATE_EPOCH=$((SOURCE_DATE_EPOCH + i)) setsid "$HWIMG" build "$BULK" -o "$KILLED" --tag "k$i" >/dev/null 2>&1 &
  pid=$!
  ms=$((RANDOM % 1501))
  sleep "$((ms / 1000)).$(printf %03d $((ms % 1000)))"
  kill -KILL -- "-$pid" 2>/dev/null || true
  status=0
  { wait "$pid" || status=$?; } 2>/dev/null
  echo "kill $i after ${ms} ms: exit status $status; tags: $(tags_of "$KILLED" | paste -sd' ');" \
    "temporary files: $(find "$KILLED" -name '.*.tmp-*' -printf '%P (%s bytes) ' 2>/dev/null)"
  point "random kill $i after $ms ms" check_killed "$KILLED"
done
rerun_and_run() {
  SOURCE_DATE_EPOCH=$((SOURCE_DATE_EPOCH + 10)) rerun "$KILLED" k10 "$BULK"
  assert_eq "$(tag_digest "$KILLED" done-$VARIANT)" "$(tag_digest "$SHARED" two-$VARIANT)" "the finished image"
  assert_eq "hello from $VARIANT: bulk
greetings from the data layer" "$(run_image "$KILLED" "k10-$VARIANT" killed)" "output after the rerun"
}
point "rerun after the random kills" rerun_and_run

# The builds below are killed by strace at the N-th fsync or rename of one thread (strace counts
# per thread). Each write hwimg makes is a temporary file, its fsync, a rename, a directory fsync;
# a kill at each fsync covers before and after every rename of the thread that writes first. They
# build a recipe without a build step (tag k, SOURCE_DATE_EPOCH+100, so every blob is new).
readonly KILL_EPOCH=$((SOURCE_DATE_EPOCH + 100))
kill_at() { # kill_at LAYOUT SYSCALL N
  (
    SOURCE_DATE_EPOCH=$KILL_EPOCH strace -f -o /dev/null -e "trace=$2" -e "inject=$2:signal=KILL:when=$3" \
      "$HWIMG" build "$DATA_ONLY" -o "$1" --tag k >/dev/null 2>&1 || true
  ) 2>/dev/null
}
completed() { # completed LAYOUT: the killed build finished after all
  [ -e "$1/index.json" ] && [ -n "$(tag_digest "$1" k)" ]
}
REFERENCE=$TEST_TMP/reference
SOURCE_DATE_EPOCH=$KILL_EPOCH "$HWIMG" build "$DATA_ONLY" -o "$REFERENCE" --tag k >/dev/null
REFERENCE_INDEX=$(tag_digest "$REFERENCE" k)
rerun_completes() { # the same build again completes and gives the reference index
  SOURCE_DATE_EPOCH=$KILL_EPOCH rerun "$1" k "$DATA_ONLY"
  assert_eq "$REFERENCE_INDEX" "$(tag_digest "$1" k)" "$1: index of the rerun"
}

step "SIGKILL at every fsync while a new layout is created and filled"
after_kill_in_new_layout() {
  check_killed "$1"
  rerun_completes "$1"
}
for n in $(seq 1 40); do
  dir=$TEST_TMP/new-fsync-$n
  kill_at "$dir" fsync "$n"
  if completed "$dir"; then
    echo "fsync $n: the build completed; no more kill points"
    break
  fi
  echo "fsync $n: killed; files: $(cd "$dir" 2>/dev/null && find . -type f | sort | paste -sd' ')"
  point "new layout, killed at fsync $n" after_kill_in_new_layout "$dir"
  rm -rf "$dir"
done
# Without this, a broken injection would make the loop above pass without one kill.
[ "$n" -gt 4 ] || fail "the build completed before fsync $n: the strace injection does not work"

step "SIGKILL at every fsync (and rename, for the index writer) while a layout with an image gets another"
PRISTINE=$TEST_TMP/pristine
"$HWIMG" build "$DATA_ONLY" -o "$PRISTINE" --tag good >/dev/null
GOOD_INDEX=$(tag_digest "$PRISTINE" good)
after_kill_in_existing_layout() { # the old image intact, the layout valid, then a rerun completes
  check_layout "$1"
  assert_eq "$GOOD_INDEX" "$(tag_digest "$1" good)" "$1: tag good after the kill"
  rerun_completes "$1"
}
# index-only: the layout already holds every blob of the build but its index, so the variant's
# thread renames nothing and the index writer's thread (index blob, then index.json) is the one
# whose first renames are counted.
for seed_syscall in none/fsync index-only/fsync index-only/rename; do
  seed=${seed_syscall%/*} syscall=${seed_syscall#*/}
  for n in $(seq 1 40); do
    dir=$TEST_TMP/existing-$seed-$syscall-$n
    cp -a "$PRISTINE" "$dir"
    if [ "$seed" = index-only ]; then
      for blob in "$REFERENCE"/blobs/sha256/*; do
        [ "sha256:$(basename "$blob")" = "$REFERENCE_INDEX" ] || cp "$blob" "$dir/blobs/sha256/"
      done
    fi
    kill_at "$dir" "$syscall" "$n"
    if completed "$dir"; then
      echo "$seed/$syscall $n: the build completed; no more kill points"
      break
    fi
    echo "$seed/$syscall $n: killed"
    point "layout with an image ($seed blobs seeded), killed at $syscall $n" after_kill_in_existing_layout "$dir"
    rm -rf "$dir"
  done
  [ "$n" -gt 2 ] || fail "the build completed before $syscall $n: the strace injection does not work"
done

[ "${#FAILED[@]}" -eq 0 ] || fail "${#FAILED[@]} kill point(s) failed: $(printf '[%s] ' "${FAILED[@]}")"
echo "PASS"
