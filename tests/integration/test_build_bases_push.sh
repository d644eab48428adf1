#!/usr/bin/env bash
# `hwimg build RECIPE --push REGISTRY/REPO:TAG` on a registry base (issue 13): the stencil on the
# Debian runtime image. No base layer is ever downloaded when the base is in the same registry
# (skipped or mounted, per the registry's access log) and none is stored in the cache when it is
# relayed from another registry; the digests equal `build -o DIR` then `hwimg push`; skopeo copies
# the result back and runc runs it; SIGKILL during the push, then a rerun, completes it.
source "$(dirname "$0")/lib.sh"
source "$(dirname "$0")/registry_lib.sh"
source "$(dirname "$0")/bases_lib.sh"

require_tool make
require_tool g++
debian_images runtime big:64
main_registry
base_manifest=$(platform_manifest main debian/runtime:bookworm x86-64-v1)
read -ra base_layers <<<"$(layers_of main "debian/runtime@$base_manifest")"

# The stencil on the Debian runtime, run through the base's /bin/sh.
app=$TEST_TMP/app
mkdir -p "$app"
cp -a "$HWIMG_SOURCE_DIR/examples/stencil" "$app/stencil"
write_recipe() { # write_recipe FILE BASE
  cat >"$1" <<EOF
name: stencil
base: $2
matrix: $HWIMG_SOURCE_DIR/matrix/cpu-levels.yaml
build:
  workdir: stencil
  run: make OUT="\${out}" CXXFLAGS="-O3 \${cpu.march}"
layers:
  - {from: "\${out}/bin", to: /opt/stencil/bin}
  - {from: stencil/data, to: /opt/stencil/data}
config:
  entrypoint: [/bin/sh, -c, 'exec /opt/stencil/bin/stencil "\$@"', stencil]
  cmd: [--size, "256", --sweeps, "4"]
  env: {HWIMG_VARIANT: "\${variant}"}
EOF
}
write_recipe "$app/recipe.yaml" "$reg/debian/runtime:bookworm"
pushed_digest() { sed -nE 's/^pushed [^@]*@(sha256:[0-9a-f]{64}):.*/\1/p' <<<"$OUT" | tail -1; }

step "build --push into another repository of the base's registry: base layers skipped or mounted, never downloaded"
cache=$TEST_TMP/cache
mark=$(log_mark "$dir")
hw_ok build "$app/recipe.yaml" --push "$reg/app/stencil:1.0" -j 2 --cache "$cache" "${tls[@]}"
echo "$OUT" | tail -1
index=$(pushed_digest)
[ -n "$index" ] || fail "no pushed line: $OUT"
requests=$(requests_since "$dir" "$mark")
for layer in "${base_layers[@]}"; do
  assert_eq "" "$(grep "^GET [^ ]*/blobs/$layer " <<<"$requests" || true)" "GETs of base layer $layer"
  mount="POST /v2/app/stencil/blobs/uploads/?mount=${layer/:/%3A}&from=debian%2Fruntime 201"
  head="HEAD /v2/app/stencil/blobs/$layer 200"
  grep -qxF -e "$mount" -e "$head" <<<"$requests" ||
    fail "base layer $layer was neither mounted nor found in app/stencil: $(grep -F "${layer#sha256:}" <<<"$requests")"
  [ ! -e "$cache/blobs/sha256/${layer#sha256:}" ] || fail "base layer $layer was stored in the cache"
done
echo "base layers: $(grep -c 'mount=' <<<"$requests") mounted, 0 downloaded"
assert_eq "700 700" "$(stat -c %a "$cache" "$cache/staging" | paste -sd" ")" "modes of the cache and its staging area"

step "the same digests as build -o DIR, then hwimg push"
hw_ok build "$app/recipe.yaml" -o "$TEST_TMP/layout" --tag 1.0 -j 2 --cache "$TEST_TMP/cache-layout" "${tls[@]}"
assert_eq "$index" "$(tag_digest "$TEST_TMP/layout" 1.0)" "index digest of --push and of the layout"
hw_ok push "${tls[@]}" "oci:$TEST_TMP/layout:1.0" "$reg/app/stencil-two:1.0"
assert_eq "$index" "$(pushed_digest)" "index digest pushed by hwimg push"
assert_eq "$index" "$(raw main app/stencil:1.0 | digest_of)" "index digest the registry serves"
for id in $(variant_ids "$TEST_TMP/layout" 1.0); do
  assert_eq "$(tag_digest "$TEST_TMP/layout" "1.0-$id")" "$(raw main "app/stencil:1.0-$id" | digest_of)" "tag 1.0-$id"
done
assert_eq "$reg/debian/runtime:bookworm $base_manifest" \
  "$(raw main "app/stencil:1.0-cpu-x86-64-v1" | jq -r '.annotations | .["org.opencontainers.image.base.name"] + " " + .["org.opencontainers.image.base.digest"]')" \
  "base.name and base.digest"

step "-o DIR and --push: the layout keeps the base layers, the push mounts them from the base's repository"
mark=$(log_mark "$dir")
hw_ok build "$app/recipe.yaml" -o "$TEST_TMP/layout-pushed" --push "$reg/app/stencil-three:1.0" -j 2 --cache "$TEST_TMP/cache-layout" "${tls[@]}"
assert_eq "$index" "$(pushed_digest)" "index digest of -o with --push"
requests=$(requests_since "$dir" "$mark")
for layer in "${base_layers[@]}"; do
  [ -e "$(layout_blob "$TEST_TMP/layout-pushed" "$layer")" ] || fail "the layout lacks base layer $layer"
  grep -qxF "POST /v2/app/stencil-three/blobs/uploads/?mount=${layer/:/%3A}&from=debian%2Fruntime 201" <<<"$requests" ||
    fail "base layer $layer was not mounted: $(grep -F "${layer#sha256:}" <<<"$requests")"
  assert_eq "" "$(grep -E "^(PUT|PATCH) .*${layer#sha256:}" <<<"$requests" || true)" "uploads of base layer $layer"
done

step "skopeo copies the pushed index back; umoci and runc run it on the base's /bin/sh"
mapfile -t src < <(skopeo_flags src main)
skopeo copy -q --all "${src[@]}" "docker://$reg/app/stencil:1.0" "oci:$TEST_TMP/back:1.0" ||
  fail "skopeo copy of the pushed index"
assert_eq "$index" "$(skopeo inspect --raw "oci:$TEST_TMP/back:1.0" | digest_of)" "index digest copied back"
skopeo copy -q "${src[@]}" "docker://$reg/app/stencil:1.0-cpu-x86-64-v1" "oci:$TEST_TMP/back:v1"
out=$(run_variant "$TEST_TMP/back" v1 back)
assert_contains "$out" "stencil: built for x86-64-v1 (variant cpu-x86-64-v1)" "the pushed variant runs"

step "the base in another registry: its layers relayed, each read once, none stored"
base_registry other
mark=$(log_mark "$dir")
other_cache=$TEST_TMP/cache-other
cat "$dir/cert.pem" "$REG_other_DIR/cert.pem" >"$TEST_TMP/both.pem"   # one --ca-file for both registries
hw_ok build "$app/recipe.yaml" --push "$REG_other/app/stencil:1.0" -j 2 --cache "$other_cache" --ca-file "$TEST_TMP/both.pem"
assert_eq "$index" "$(pushed_digest)" "index digest pushed to the other registry"
requests=$(requests_since "$dir" "$mark")
for layer in "${base_layers[@]}"; do
  assert_eq 1 "$(grep -c "^GET /v2/debian/runtime/blobs/$layer 200$" <<<"$requests" || true)" "reads of base layer $layer"
  [ ! -e "$other_cache/blobs/sha256/${layer#sha256:}" ] || fail "the relayed base layer $layer was stored in the cache"
done
assert_eq "$index" "$(raw other app/stencil:1.0 | digest_of)" "index digest in the other registry"

step "SIGKILL during --push, after the first blob upload; a rerun completes"
kcache=$TEST_TMP/cache-killed
kill_mark=$(log_mark "$dir")
"$HWIMG" build "$app/recipe.yaml" --push "$reg/app/killed:1.0" -j 1 --cache "$kcache" "${tls[@]}" \
  >"$TEST_TMP/killed.log" 2>&1 &
pid=$!
for _ in $(seq 1 1000); do
  requests_since "$dir" "$kill_mark" | grep -q '^PUT /v2/app/killed/blobs/uploads/[^ ]* 201$' && break
  kill -0 "$pid" 2>/dev/null || break
  sleep 0.01
done
kill -9 "$pid" 2>/dev/null || fail "the push finished before it could be killed: $(cat "$TEST_TMP/killed.log")"
wait "$pid" 2>/dev/null || true
requests_since "$dir" "$kill_mark" | grep -q '^PUT /v2/app/killed/blobs/uploads/[^ ]* 201$' ||
  fail "killed before any upload: $(cat "$TEST_TMP/killed.log")"
if raw main app/killed:1.0 >/dev/null 2>&1; then fail "the index tag exists after the killed push"; fi
hw_ok build "$app/recipe.yaml" --push "$reg/app/killed:1.0" -j 1 --cache "$kcache" "${tls[@]}"
assert_eq "$index" "$(pushed_digest)" "index digest after the rerun"
requests=$(requests_since "$dir" "$kill_mark")
for layer in "${base_layers[@]}"; do
  assert_eq "" "$(grep "^GET [^ ]*/blobs/$layer " <<<"$requests" || true)" "GETs of base layer $layer by the killed push and its rerun"
done
assert_eq "$index" "$(raw main app/killed:1.0 | digest_of)" "index digest the registry serves after the rerun"
for id in $(variant_ids "$TEST_TMP/layout" 1.0); do
  mapfile -t src < <(skopeo_flags src main | sed 's/^--src-/--/')
  skopeo inspect "${src[@]}" "docker://$reg/app/killed:1.0-$id" >/dev/null || fail "skopeo inspect app/killed:1.0-$id"
done
mapfile -t src < <(skopeo_flags src main)
skopeo copy -q --all "${src[@]}" "docker://$reg/app/killed:1.0" "oci:$TEST_TMP/killed-back:1.0" ||
  fail "skopeo copy of the index pushed after the kill"
assert_eq "" "$(find "$kcache" -name '*.tmp-*')" "temporary files in the cache after the rerun"

step "SIGKILL while a 64 MiB base layer is relayed from another registry; a rerun completes"
stalling_proxy
write_recipe "$app/relayed.yaml" "$proxy/debian/big:64"
rcache=$TEST_TMP/cache-relayed
"$HWIMG" build "$app/relayed.yaml" --push "$reg/app/relayed:1.0" -j 2 --cache "$rcache" "${tls[@]}" \
  >"$TEST_TMP/relayed.log" 2>&1 &
pid=$!
for _ in $(seq 1 600); do [ -e "$port_file.stalled" ] && break; kill -0 "$pid" 2>/dev/null || break; sleep 0.05; done
[ -e "$port_file.stalled" ] || fail "the relay never started: $(cat "$TEST_TMP/relayed.log")"
sleep 0.5   # the half the proxy sent goes on to the registry
kill -9 "$pid"
wait "$pid" 2>/dev/null || true
if raw main app/relayed:1.0 >/dev/null 2>&1; then fail "the index tag exists after the killed push"; fi
hw_ok build "$app/relayed.yaml" --push "$reg/app/relayed:1.0" -j 2 --cache "$rcache" "${tls[@]}"
relayed_index=$(pushed_digest)
assert_eq "$relayed_index" "$(raw main app/relayed:1.0 | digest_of)" "index digest after the rerun"
mapfile -t src < <(skopeo_flags src main)
skopeo copy -q --all "${src[@]}" "docker://$reg/app/relayed:1.0" "oci:$TEST_TMP/relayed-back:1.0" ||
  fail "skopeo copy of the index relayed after the kill"
for layer in $(layers_of plain "debian/big@$(platform_manifest plain debian/big:64 x86-64-v1)"); do
  [ ! -e "$rcache/blobs/sha256/${layer#sha256:}" ] || fail "the relayed base layer $layer was stored in the cache"
  assert_eq "$layer" "$(digest_of <"$TEST_TMP/relayed-back/blobs/sha256/${layer#sha256:}")" "base layer $layer in the registry"
done
assert_eq "" "$(find "$rcache" -name '*.tmp-*')" "temporary files in the cache after the rerun"

assert_no_secret "$(cat "$dir/password")"
assert_no_secret "$(cat "$REG_other_DIR/password")"
assert_no_secret "$(cat "$REG_plain_DIR/password")"
echo PASS
