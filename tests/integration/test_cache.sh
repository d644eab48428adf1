#!/usr/bin/env bash
# The user's cache (docs/cache.md, issue 23 item 6) against Debian's registry: `build --push`
# stages one layout per recipe (a push of the same recipe to another repository builds nothing
# again); `hwimg cache ls` shows what is there; `hwimg cache prune` and the cap each build applies
# remove least recently used entries but never what a running build holds, and leases of killed
# builds are reclaimed.
source "$(dirname "$0")/lib.sh"
source "$(dirname "$0")/registry_lib.sh"

tls_registry
hw_ok login "$reg" --username hwimg --password-stdin "${tls[@]}" <<< "$password"
cache=$TEST_TMP/cache
export SOURCE_DATE_EPOCH=1700000000
only=(--only cpu-x86-64-v1 --only cpu-x86-64-v2)

# write_recipe NAME [HOLD]: a two-variant recipe whose step, with HOLD, waits until that file exists.
write_recipe() {
  mkdir -p "$TEST_TMP/$1"
  local wait=""
  [ -z "${2:-}" ] || wait="; while [ ! -e $2 ]; do sleep 0.1; done"
  cat >"$TEST_TMP/$1/recipe.yaml" <<YAML
name: $1
base: scratch
matrix: $HWIMG_SOURCE_DIR/matrix/cpu-levels.yaml
build:
  run: 'echo "\${variant}" > "\${out}/id"; head -c 200000 /dev/urandom > "\${out}/payload"$wait'
layers:
  - {from: "\${out}", to: /opt/$1}
YAML
}
staging_entries() { "$HWIMG" cache ls --cache "$cache" --format json | jq -r '.entries[] | select(.kind == "staging") | "\(.recipe) \(.in_use)"' | sort; }

write_recipe one
write_recipe two "$TEST_TMP/release"
one=$(realpath "$TEST_TMP/one/recipe.yaml")
two=$(realpath "$TEST_TMP/two/recipe.yaml")

step "build --push stages by recipe: the same recipe pushed to another repository builds nothing again"
hw_ok build "$TEST_TMP/one/recipe.yaml" --push "$reg/a/one:1.0" "${only[@]}" --cache "$cache" "${tls[@]}"
assert_eq 0 "$(grep -c '(unchanged)' <<<"$OUT" || true)" "variants reused by the first build"
cd "$TEST_TMP"  # the recipe named by another path: the same recipe
hw_ok build one/recipe.yaml --push "$reg/b/one:2.0" "${only[@]}" --cache "$cache" "${tls[@]}"
cd - >/dev/null
assert_eq 2 "$(grep -c '(unchanged)' <<<"$OUT" || true)" "variants reused when pushing to another repository"
assert_eq "$(skopeo inspect --raw --cert-dir "$certs" --creds "hwimg:$password" "docker://$reg/a/one:1.0" | sha256sum)" \
  "$(skopeo inspect --raw --cert-dir "$certs" --creds "hwimg:$password" "docker://$reg/b/one:2.0" | sha256sum)" \
  "the index pushed to both repositories"
assert_eq "$one false" "$(staging_entries)" "staging layouts (one, for the recipe, not in use)"

step "a changed recipe's staging layout keeps only what its latest build uses"
staged() { find "$cache/staging" -path '*/blobs/sha256/*' -type f -printf '%f\n' | sort; }
before=$(staged)
sed -i 's/head -c 200000/head -c 200001/' "$TEST_TMP/one/recipe.yaml"
hw_ok build "$TEST_TMP/one/recipe.yaml" --push "$reg/a/one:1.1" "${only[@]}" --cache "$cache" "${tls[@]}"
assert_eq 0 "$(grep -c '(unchanged)' <<<"$OUT" || true)" "variants reused after the recipe changed"
staging_dir=$(dirname "$(find "$cache/staging" -name oci-layout)")
reachable=$( (index=$(jq -r '.manifests[] | select(.annotations["org.opencontainers.image.ref.name"] == "1.1") | .digest' \
  "$staging_dir/index.json"); echo "${index#sha256:}"
  for m in $(jq -r '.manifests[].digest' "$staging_dir/blobs/sha256/${index#sha256:}"); do
    echo "${m#sha256:}"; jq -r '.config.digest, .layers[].digest' "$staging_dir/blobs/sha256/${m#sha256:}" | sed 's/^sha256://'
  done) | sort -u)
assert_eq "$reachable" "$(staged)" "blobs in the staging layout: exactly what tag 1.1 uses"
assert_eq "1.1 1.1-cpu-x86-64-v1 1.1-cpu-x86-64-v2" \
  "$(jq -r '[.manifests[].annotations["org.opencontainers.image.ref.name"]] | sort | join(" ")' "$staging_dir/index.json")" \
  "tags in the staging layout"
assert_eq 2 "$(find "$staging_dir/.hwimg/cache" -name '*.json' | wc -l)" "build cache entries in the staging layout"
[ -n "$(comm -23 <(echo "$before") <(staged))" ] || fail "no blob of the earlier build left the staging layout"
hw_ok build "$TEST_TMP/one/recipe.yaml" --push "$reg/b/one:1.1" "${only[@]}" --cache "$cache" "${tls[@]}"
assert_eq 2 "$(grep -c '(unchanged)' <<<"$OUT" || true)" "variants reused after the trim"

step "cache ls lists the staging layout with its recipe, the total and the cap"
hw_ok cache ls --cache "$cache"
assert_contains "$OUT" "$one" "cache ls"
assert_contains "$(tail -1 <<<"$OUT")" "$cache: " "the total line"
assert_contains "$(tail -1 <<<"$OUT")" "in 1 entry, cap " "the total line"
HWIMG_CACHE_MAX_SIZE=off hw_ok cache ls --cache "$cache"
assert_contains "$(tail -1 <<<"$OUT")" ", cap off" "the total line without a cap"

step "a prune while another build runs removes what nobody uses and keeps what the build holds"
"$HWIMG" build "$TEST_TMP/two/recipe.yaml" --push "$reg/c/two:1.0" "${only[@]}" --cache "$cache" "${tls[@]}" \
  >"$TEST_TMP/two.log" 2>&1 &
held=$!
add_cleanup "kill $held 2>/dev/null"
for _ in $(seq 1 300); do [ "$(staging_entries | grep -c "^$two true$" || true)" = 1 ] && break; sleep 0.1; done
assert_eq "$(printf '%s\n' "$one false" "$two true" | sort)" "$(staging_entries)" "staging layouts while two builds"
hw_ok cache prune --cache "$cache" --max-size 0 --format json
assert_eq "staging $one" "$(jq -r '.removed[] | "\(.kind) \(.recipe)"' <<<"$OUT")" "what the prune removed"
assert_eq "$two true" "$(staging_entries)" "staging layouts after the prune"
touch "$TEST_TMP/release"
wait "$held" || fail "the build running during the prune failed: $(cat "$TEST_TMP/two.log")"
assert_contains "$(cat "$TEST_TMP/two.log")" "pushed $reg/c/two:1.0@sha256:" "the held build's push"

step "the cap after a build: what that build used stays, older entries go"
HWIMG_CACHE_MAX_SIZE=1 hw_ok build "$TEST_TMP/one/recipe.yaml" --push "$reg/a/one:1.0" "${only[@]}" --cache "$cache" \
  "${tls[@]}"
assert_contains "$OUT" "over its cap of 1 B" "the warning of a build over the cap"
assert_eq "$one false" "$(staging_entries)" "staging layouts after a build with a 1-byte cap"
hw_ok build "$TEST_TMP/one/recipe.yaml" --push "$reg/a/one:1.0" "${only[@]}" --cache "$cache" --cache-max-size off \
  "${tls[@]}"
assert_eq 2 "$(grep -c '(unchanged)' <<<"$OUT" || true)" "variants reused after the capped build"

step "a killed build's lease is reclaimed: its staging layout is not in use"
rm -f "$TEST_TMP/release"
"$HWIMG" build "$TEST_TMP/two/recipe.yaml" --push "$reg/c/two:1.0" "${only[@]}" --cache "$cache" "${tls[@]}" \
  >"$TEST_TMP/killed.log" 2>&1 &
killed=$!
for _ in $(seq 1 300); do [ "$(staging_entries | grep -c "^$two true$" || true)" = 1 ] && break; sleep 0.1; done
assert_eq 1 "$(staging_entries | grep -c "^$two true$" || true)" "the killed build's staging layout, before the kill"
kill -9 "$killed"; wait "$killed" 2>/dev/null || true
assert_eq "$(printf '%s\n' "$one false" "$two false" | sort)" "$(staging_entries)" "staging layouts after the kill"
hw_ok cache prune --cache "$cache" --older-than 0s
assert_eq "" "$(staging_entries)" "staging layouts after prune --older-than 0s"
assert_eq "" "$(ls -A "$cache/leases")" "leases left after the prune"

step "bad sizes and durations are usage errors that name what was expected"
HWIMG_CACHE_MAX_SIZE=lots hw build "$TEST_TMP/one/recipe.yaml" --push "$reg/a/one:1.0" --cache "$cache" "${tls[@]}"
assert_eq 2 "$STATUS" "exit status of a bad HWIMG_CACHE_MAX_SIZE"
assert_contains "$OUT" 'HWIMG_CACHE_MAX_SIZE: invalid size "lots"' "its message"
hw cache prune --cache "$cache" --older-than 3y
assert_eq 2 "$STATUS" "exit status of a bad --older-than"
assert_contains "$OUT" 'unknown unit "y"' "its message"
hw cache prune --cache "$cache" --max-size 2XB
assert_eq 2 "$STATUS" "exit status of a bad --max-size"

assert_no_secret "$password"
echo "the cache stages by recipe and is pruned without touching what running builds hold"
