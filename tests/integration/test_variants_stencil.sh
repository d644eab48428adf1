#!/usr/bin/env bash
# The stencil example as a matrix build (issue 3): five CPU variants in one index, each labelled
# with what it was built for, skopeo/umoci accept the layout, every variant this CPU can run runs
# under runc and reports the level it was compiled for, and an unchanged rebuild rebuilds nothing.
source "$(dirname "$0")/lib.sh"
require_tool skopeo
require_tool umoci
require_tool runc
require_tool jq
require_root

export SOURCE_DATE_EPOCH=1700000000
out=$TEST_TMP/out
step "build the stencil matrix"
"$HWIMG" build "$HWIMG_SOURCE_DIR/recipes/stencil.yaml" -o "$out" --tag 1.0 -j 2 > "$TEST_TMP/build.log"
cat "$TEST_TMP/build.log"

json=$("$HWIMG" inspect "oci:$out:1.0" --format json)
assert_eq "cpu-x86-64-v1 cpu-x86-64-v2 cpu-x86-64-v3 cpu-x86-64-v4 cpu-zen4" \
  "$(jq -r '[.variants[].variant] | join(" ")' <<<"$json")" "variants in matrix order"
assert_eq "null v2 v3 v4 v4" "$(jq -r '[.variants[].platform.variant] | map(tostring) | join(" ")' <<<"$json")" \
  "platform variants (the baseline has none)"
assert_eq "zen4" "$(jq -r '.variants[4].annotations["org.hwimg.cpu.target"]' <<<"$json")" "zen4 target annotation"
# The data layer is the same for every variant and is stored once.
assert_eq 1 "$(jq -r '[.variants[].layers[1].digest] | unique | length' <<<"$json")" "shared data layer"

step "skopeo reads the index and every variant, labels included"
raw_digest=$(skopeo inspect --raw "oci:$out:1.0" | sha256sum | cut -d' ' -f1)
index_digest=$(jq -r '.manifests[] | select(.annotations["org.opencontainers.image.ref.name"]=="1.0") | .digest' "$out/index.json")
assert_eq "sha256:$raw_digest" "$index_digest" "index digest"
for id in $(jq -r '.variants[].variant' <<<"$json"); do
  level=$(skopeo inspect --config "oci:$out:1.0-$id" | jq -r '.config.Labels["org.hwimg.cpu.level"]')
  assert_eq "$(jq -r --arg id "$id" '.variants[] | select(.variant==$id) | .annotations["org.hwimg.cpu.level"]' <<<"$json")" \
    "$level" "label of $id"
done

step "every variant whose level this CPU has runs under runc"
mapfile -t runnable < <(host_levels)
for level in "${runnable[@]}"; do
  bundle=$TEST_TMP/bundle-$level
  umoci unpack --image "$out:1.0-cpu-$level" "$bundle" >/dev/null
  jq '.process.terminal = false | .process.args += ["--size", "256", "--sweeps", "4"]' "$bundle/config.json" > "$TEST_TMP/c.json"
  mv "$TEST_TMP/c.json" "$bundle/config.json"
  output=$(runc run -b "$bundle" "hwimg-stencil-$level-$$")
  assert_contains "$output" "stencil: built for $level (variant cpu-$level)" "runc output of $level"
done
echo "ran: ${runnable[*]}"

step "an unchanged rebuild reuses every variant; a changed source rebuilds"
"$HWIMG" build "$HWIMG_SOURCE_DIR/recipes/stencil.yaml" -o "$out" --tag 1.0 -j 2 > "$TEST_TMP/rebuild.log"
assert_eq 5 "$(grep -c '(unchanged)' "$TEST_TMP/rebuild.log")" "variants reused"
first=$(tail -1 "$TEST_TMP/build.log")
again=$(tail -1 "$TEST_TMP/rebuild.log")
assert_eq "${first##*; index }" "${again##*; index }" "same index"
assert_contains "$again" "(5 variants: 0 built, 5 unchanged; index sha256:" "the rebuild's summary"
cp -r "$HWIMG_SOURCE_DIR/recipes" "$HWIMG_SOURCE_DIR/examples" "$HWIMG_SOURCE_DIR/matrix" "$TEST_TMP/"
"$HWIMG" build "$TEST_TMP/recipes/stencil.yaml" -o "$out" --tag 1.0 > /dev/null
echo "// changed" >> "$TEST_TMP/examples/stencil/stencil.cpp"
"$HWIMG" build "$TEST_TMP/recipes/stencil.yaml" -o "$out" --tag 1.0 --only cpu-x86-64-v3 > "$TEST_TMP/only.log"
assert_eq 0 "$(grep -c '(unchanged)' "$TEST_TMP/only.log" || true)" "changed source rebuilds"

step "--only merges one variant into the existing index"
assert_eq 5 "$(skopeo inspect --raw "oci:$out:1.0" | jq '.manifests | length')" "variants after --only"
umoci unpack --image "$out:1.0-cpu-x86-64-v1" "$TEST_TMP/bundle-after" >/dev/null
echo "PASS"
