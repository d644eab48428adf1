#!/usr/bin/env bash
# Bring your Dockerfile (issue 26): `hwimg build` of examples/dockerfile (a multi-stage C++
# Dockerfile: a shared stage without MARCH, a per-variant g++ stage, a runtime stage) through
# buildah, from the Debian-made builder and runtime images in a TLS + htpasswd registry, for the four
# x86-64 levels with -j 2. Checks: the shared stage ran once (buildah prints a RUN's output only
# when it runs it); each variant runs under runc and reports the level it was compiled for; skopeo
# and umoci accept the layout; select picks per host facts; every manifest carries its variant,
# base.name/base.digest of the final stage's FROM and the runtime image's own layer blobs; a rerun
# reuses every variant without running buildah; a GPU variant whose Dockerfile copies a fatbin with
# other targets is refused (the CLI form, with --context and --target); --push, skopeo copies it
# back, serve resolves the tag per facts; the errors (buildah missing, a failing RUN, an undeclared
# argument, a FROM that does not exist, a context that escapes); a build into a fresh layout and
# cache interrupted with SIGINT, then rerun: the same index digest; one variant again in fresh
# buildah storage: the same manifest digest. The CUDA example (examples/dockerfile/cuda) is built
# where HWIMG_TEST_CUDA_IMAGE names an nvcc toolkit image or a toolkit is installed (see that step),
# skipped otherwise.
# buildah keeps its images in storage of the suite's own (CONTAINERS_STORAGE_CONF, driver vfs).
source "$(dirname "$0")/lib.sh"
source "$(dirname "$0")/registry_lib.sh"
source "$(dirname "$0")/bases_lib.sh"
source "$(dirname "$0")/serve_lib.sh"
for tool in buildah runc umoci skopeo setsid; do require_tool "$tool"; done
require_root

# The Dockerfile front end lands in stages: until hwimg knows it, this suite is skipped, never passed.
[[ "$("$HWIMG" build --help 2>&1)" == *--dockerfile* ]] || skip "hwimg build has no --dockerfile yet (issue 26)"

# containers_storage NAME: a storage.conf of buildah's (vfs, everything under $TEST_TMP); prints its path.
containers_storage() {
  local d=$TEST_TMP/containers-$1
  mkdir -p "$d"
  printf '[storage]\ndriver = "vfs"\ngraphroot = "%s/graph"\nrunroot = "%s/run"\n' "$d" "$d" >"$d/storage.conf"
  echo "$d/storage.conf"
}
CONTAINERS_STORAGE_CONF=$(containers_storage main)
export CONTAINERS_STORAGE_CONF

debian_images runtime builder
main_registry
put main "oci:$IMAGE_builder:bookworm" debian/builder:bookworm --all
base_manifest=$(platform_manifest main debian/runtime:bookworm x86-64-v1)
base_layers=$(layers_of main "debian/runtime@$base_manifest")
base_diff_ids=$(config_of main "debian/runtime@$base_manifest" | jq -c '.rootfs.diff_ids')
builder_layers=$(layers_of main "debian/builder@$(platform_manifest main debian/builder:bookworm x86-64-v1)")
n=$(wc -w <<<"$base_layers")
password=$(cat "$REG_main_DIR/password")

# The example as shipped, its registry names pointed at this registry and its matrix at four levels.
app=$TEST_TMP/app
cp -a "$HWIMG_SOURCE_DIR/examples/dockerfile" "$app"
printf 'axes:\n  gpu: [none]\n  cpu: [x86-64-v1, x86-64-v2, x86-64-v3, x86-64-v4]\n' >"$app/levels.yaml"
sed -i -e "s|registry\.example\.org/|$reg/|" -e 's|^matrix: .*|matrix: levels.yaml|' "$app/recipe.yaml"
grep -qx "  BUILDER: $reg/debian/builder:bookworm" "$app/recipe.yaml" || fail "recipe.yaml: no BUILDER to point at $reg: $(cat "$app/recipe.yaml")"
grep -qx "  BASE: $reg/debian/runtime:bookworm" "$app/recipe.yaml" || fail "recipe.yaml: no BASE to point at $reg"
ids="cpu-x86-64-v1 cpu-x86-64-v2 cpu-x86-64-v3 cpu-x86-64-v4"
march_of() { "$HWIMG" matrix "$app/levels.yaml" --format json | jq -r --arg id "$1" '.variants[] | select(.id == $id) | .variables["cpu.march"]'; }
# buildah_says LOG [ID]: the lines buildah printed through -v ("variant ID | LINE"; "stage NAME | LINE"
# for a stage built once for all variants), of one variant or of every build.
buildah_says() {
  if [ -n "${2:-}" ]; then sed -nE "s/^(variant )?$2 \\| //p" <<<"$1"; else sed -nE 's/^[^|]* \| //p' <<<"$1"; fi
}
shared_runs() { buildah_says "$1" | grep -cxF "hwimg-example: shared stage ran" || true; }
errors_in() { grep -c '^hwimg: error:' <<<"$1" || true; }

step "the multi-stage example for 4 CPU variants, -j 2, -v, bases from the TLS + htpasswd registry"
L1=$TEST_TMP/L1
started=$(date +%s)
hw_ok build "$app/recipe.yaml" -o "$L1" --tag 1.0 -j 2 -v --cache "$TEST_TMP/cache" "${tls[@]}"
build_log=$OUT
echo "built in $(($(date +%s) - started)) s"
assert_eq "$ids" "$(echo $(variant_ids "$L1" 1.0))" "variants"
[ -n "$(buildah_says "$build_log" cpu-x86-64-v1)" ] || fail "-v passed on no buildah output as 'variant ID | LINE': $(tail -20 <<<"$build_log")"

step "the stage without MARCH ran once; the g++ stage once per variant with its own MARCH"
assert_eq 1 "$(shared_runs "$build_log")" "times the shared stage's RUN printed its marker in the 4 builds"
# Each variant starts its deps stage from the image the shared build committed, one FROM step by
# image ID, instead of stepping through the stage's cache again.
deps_images=$(for id in $ids; do
  buildah_says "$build_log" "$id" | sed -nE 's/^\[1\/3\] STEP 1\/1: FROM ([0-9a-f]{64}) AS deps$/\1/p'
done | sort | uniq -c | awk '{print $1}')
assert_eq 4 "$deps_images" "variants whose deps stage is one FROM of the same image ID"
for id in $ids; do
  march=$(march_of "$id")
  assert_eq 1 "$(buildah_says "$build_log" "$id" | grep -cxF "hwimg-example: compiling with $march" || true)" \
    "$id: its compile step with MARCH=$march"
done

# buildah leaves the working container of a stage with no instruction after its FROM (each
# variant's pinned deps stage) mounted in its storage unless told --force-rm: one mount per variant.
assert_eq "" "$(buildah containers -aq)" "buildah's working containers left after the build"

step "skopeo and umoci accept the layout; skopeo copies it to another layout unchanged"
check_layout "$L1" 1.0
index=$(tag_digest "$L1" 1.0)
skopeo copy -q --all "oci:$L1:1.0" "oci:$TEST_TMP/copied:1.0" >/dev/null || fail "skopeo copy --all oci:$L1:1.0"
assert_eq "$index" "$(tag_digest "$TEST_TMP/copied" 1.0)" "the index copied by skopeo"
tags=$(umoci ls --layout "$L1") || fail "umoci ls --layout $L1"
assert_eq "1.0 1.0-cpu-x86-64-v1 1.0-cpu-x86-64-v2 1.0-cpu-x86-64-v3 1.0-cpu-x86-64-v4" "$(sort <<<"$tags" | paste -sd' ')" "umoci ls: the tags"

step "the index: platforms, org.hwimg.* annotations and labels, the runtime image as base, its layers byte for byte"
index_blob=$(layout_blob "$L1" "$index")
for id in $ids; do
  level=${id#cpu-}
  want_platform='{"architecture":"amd64","os":"linux"}'
  [ "$level" = x86-64-v1 ] || want_platform="{\"architecture\":\"amd64\",\"os\":\"linux\",\"variant\":\"v${level#x86-64-v}\"}"
  entry=$(jq -c --arg id "$id" '.manifests[] | select(.annotations["org.hwimg.variant"] == $id)' "$index_blob")
  [ -n "$entry" ] || fail "$id: no index entry annotated org.hwimg.variant=$id"
  assert_eq "$want_platform" "$(jq -cS .platform <<<"$entry")" "$id: platform in the index"
  assert_eq "$level" "$(jq -r '.annotations["org.hwimg.cpu.level"]' <<<"$entry")" "$id: org.hwimg.cpu.level in the index"
  manifest=$(layout_manifest "$L1" "1.0-$id")
  assert_eq "$id" "$(jq -r '.annotations["org.hwimg.variant"]' <<<"$manifest")" "$id: org.hwimg.variant on the manifest"
  assert_eq "$reg/debian/runtime:bookworm" "$(jq -r '.annotations["org.opencontainers.image.base.name"]' <<<"$manifest")" "$id: base.name"
  assert_eq "$base_manifest" "$(jq -r '.annotations["org.opencontainers.image.base.digest"]' <<<"$manifest")" "$id: base.digest"
  assert_eq "level" "$(jq -r '.annotations["org.opencontainers.image.title"]' <<<"$manifest")" "$id: the recipe's annotation"
  assert_eq "$base_layers" "$(jq -r --argjson n "$n" '[.layers[:$n][].digest] | join(" ")' <<<"$manifest")" \
    "$id starts with the runtime image's own layer blobs"
  assert_eq $((n + 1)) "$(jq '.layers | length' <<<"$manifest")" "$id: the runtime's layers and the COPY's"
  for layer in $builder_layers; do
    jq -e --arg d "$layer" '[.layers[].digest] | index($d) == null' <<<"$manifest" >/dev/null ||
      fail "$id carries the builder's layer $layer"
  done
  config=$(cat "$(layout_blob "$L1" "$(jq -r .config.digest <<<"$manifest")")")
  assert_eq "$base_diff_ids" "$(jq -c --argjson n "$n" '.rootfs.diff_ids[:$n]' <<<"$config")" "$id: the base's diff_ids first"
  assert_eq "$id" "$(jq -r '.config.Labels["org.hwimg.variant"]' <<<"$config")" "$id: org.hwimg.variant label"
  assert_eq "$level" "$(jq -r '.config.Labels["org.hwimg.cpu.level"]' <<<"$config")" "$id: org.hwimg.cpu.level label"
  assert_eq '["/opt/level/bin/level"]' "$(jq -c .config.Entrypoint <<<"$config")" "$id: the Dockerfile's ENTRYPOINT"
  assert_eq "2023-11-14T22:13:20Z" "$(jq -r .created <<<"$config")" "$id: created = SOURCE_DATE_EPOCH"
done

step "each variant this CPU runs, under runc: it reports the level it was compiled for"
"$HWIMG" probe >"$TEST_TMP/host.json"
compatible=$("$HWIMG" select "oci:$L1:1.0" --host "$TEST_TMP/host.json" --format json |
  jq -r '.candidates[] | select(.compatible) | .variant')
grep -qx cpu-x86-64-v1 <<<"$compatible" || fail "select: cpu-x86-64-v1 does not run here: $compatible"
for id in $ids; do
  if ! grep -qx "$id" <<<"$compatible"; then echo "not run here (this CPU cannot): $id"; continue; fi
  out=$(run_variant "$L1" "1.0-$id" "$id")
  assert_contains "$out" "compiled for ${id#cpu-}" "$id ran"
done

step "select --host: a v3 host gets cpu-x86-64-v3, a v4 host cpu-x86-64-v4"
for level in 3 4; do
  facts_file "$TEST_TMP/v$level.json" "x86-64-v$level"
  picked=$("$HWIMG" select "oci:$L1:1.0" --host "$TEST_TMP/v$level.json" --format json)
  assert_eq "cpu-x86-64-v$level" "$(jq -r .variant <<<"$picked")" "select for a v$level host"
done

step "a rerun into the same layout: every variant unchanged, buildah not run (HWIMG_BUILDAH fails if it is)"
fake=$TEST_TMP/fake-buildah
printf '#!/bin/sh\ntouch "%s/buildah-ran"\necho "fake buildah: must not run ($*)" >&2\nexit 1\n' "$TEST_TMP" >"$fake"
chmod +x "$fake"
HWIMG_BUILDAH=$fake hw_ok build "$app/recipe.yaml" -o "$L1" --tag 1.0 -j 2 --cache "$TEST_TMP/cache" "${tls[@]}"
for id in $ids; do
  grep -qE "^$id .*\(unchanged\)$" <<<"$OUT" || fail "$id not reported unchanged: $OUT"
done
assert_contains "$OUT" "(4 variants: 0 built, 4 unchanged; index $index)" "the summary of the rerun"
[ ! -e "$TEST_TMP/buildah-ran" ] || fail "buildah was run for a rerun with nothing changed"

step "a GPU variant whose Dockerfile copies a checked-in fatbin (sm_80 + compute_80) is refused for sm_90"
# No toolkit anywhere: the Dockerfile brings its device code. tests/data/fatbin/k-sm80-compute80.fatbin
# holds exactly sm_80 and compute_80 (see its README), what the sm_80 variant declares with ptx.
gpu=$TEST_TMP/gpu
mkdir -p "$gpu/ctx"
cp "$HWIMG_SOURCE_DIR/tests/data/fatbin/k-sm80-compute80.fatbin" "$gpu/ctx/kernels.fatbin"
mkdir -p "$gpu/docker"
printf 'ARG BASE\nFROM ${BASE} AS kernels\nCOPY kernels.fatbin /opt/kernels/kernels.fatbin\nFROM kernels AS unused\nRUN false\n' \
  >"$gpu/docker/Dockerfile"
printf 'axes:\n  cuda: ["13.0"]\n  gpu: [sm_80, sm_90]\nptx: true\n' >"$gpu/matrix.yaml"
gpu_build=(build --dockerfile "$gpu/docker/Dockerfile" --context "$gpu/ctx" --target kernels
  --build-arg "BASE=$reg/debian/runtime:bookworm" --matrix "$gpu/matrix.yaml" --tag 1 --cache "$TEST_TMP/cache" "${tls[@]}")
hw_fails "${gpu_build[@]}" -o "$gpu/out"
assert_eq 1 "$(errors_in "$OUT")" "one error line: $OUT"
assert_contains "$OUT" "cuda13.0-sm90-x86-64-v1" "the refusal names the variant"
assert_contains "$OUT" "/opt/kernels/kernels.fatbin" "the refusal names the file"
assert_contains "$OUT" "layer" "the refusal names the layer"
# The accepted sm_80 variant may have stored its blobs first (kept for the rerun, as for recipes):
# the layout is valid and indexes nothing.
[ ! -e "$gpu/out/index.json" ] || assert_eq 0 "$(jq '.manifests | length' "$gpu/out/index.json")" \
  "manifests the refused GPU build indexed"
echo "${OUT##*hwimg: error: }" | cut -c1-300
hw_ok "${gpu_build[@]}" -o "$gpu/out" --only cuda13.0-sm80-x86-64-v1
config=$(skopeo inspect --config "oci:$gpu/out:1-cuda13.0-sm80-x86-64-v1")
assert_eq "sm_80,compute_80" "$(jq -r '.config.Labels["org.hwimg.gpu.targets"]' <<<"$config")" "the sm_80 variant's targets label"
grep -q '^NVIDIA_REQUIRE_CUDA=cuda>=13.0' <<<"$(jq -r '.config.Env[]' <<<"$config")" ||
  fail "the sm_80 variant has no NVIDIA_REQUIRE_CUDA: $(jq -c .config.Env <<<"$config")"

step "--push: the index as built; skopeo copies it back; serve resolves the tag to select's variant per facts"
HWIMG_BUILDAH=$fake hw_ok build "$app/recipe.yaml" -o "$L1" --push "$reg/app:1.0" --tag 1.0 -j 2 --cache "$TEST_TMP/cache" "${tls[@]}"
pushed=$(raw main app:1.0 | digest_of)
assert_eq "$index" "$pushed" "the pushed index"
[ ! -e "$TEST_TMP/buildah-ran" ] || fail "buildah was run for a push of unchanged variants"
assert_eq "$ids" "$(raw main app:1.0 | jq -r '[.manifests[].annotations["org.hwimg.variant"]] | join(" ")')" "pushed variants"
mapfile -t src_flags < <(skopeo_flags src main)
skopeo copy -q --all "${src_flags[@]}" "docker://$reg/app:1.0" "oci:$TEST_TMP/back:1.0" >/dev/null ||
  fail "skopeo copy --all docker://$reg/app:1.0"
assert_eq "$pushed" "$(tag_digest "$TEST_TMP/back" 1.0)" "the index skopeo copied back"
for level in 3 4; do
  want=$("$HWIMG" select "$reg/app:1.0" --host "$TEST_TMP/v$level.json" --format json "${tls[@]}")
  assert_eq "cpu-x86-64-v$level" "$(jq -r .variant <<<"$want")" "select on the pushed index for a v$level host"
  start_serve "v$level" --upstream "$reg" "${tls[@]}" --host "$TEST_TMP/v$level.json"
  fetch "http://$SERVE_ADDR/v2/app/manifests/1.0"
  assert_eq 200 "$CODE" "serve (v$level host): GET app:1.0"
  assert_eq "$(jq -r .digest <<<"$want")" "$(body_digest)" "serve (v$level host): the variant select picks"
  stop_serve
done

step "errors: one line each, nothing written"
e=$TEST_TMP/errors
mkdir -p "$e/ctx" "$e/fails"
printf 'axes:\n  gpu: [none]\n  cpu: [x86-64-v3]\n' >"$e/one.yaml"
echo hello >"$e/ctx/hello.txt"
printf 'ARG BASE\nFROM ${BASE}\nCOPY hello.txt /hello.txt\nHEALTHCHECK --interval=5m CMD ["/bin/true"]\n' >"$e/ctx/Dockerfile"
printf 'ARG BASE\nFROM ${BASE}\nARG MARCH\nRUN echo "about to fail with $MARCH" && exit 3\n' >"$e/fails/Dockerfile"
small=(--matrix "$e/one.yaml" --tag 1 --cache "$e/cache" "${tls[@]}")

echo "buildah missing: not on PATH; HWIMG_BUILDAH naming no file"
mkdir -p "$e/empty-path"
PATH=$e/empty-path hw_fails build "$app/recipe.yaml" -o "$e/missing" --cache "$e/cache" "${tls[@]}"
assert_eq 1 "$(errors_in "$OUT")" "buildah missing: one error line: $OUT"
assert_contains "$OUT" "apt-get install buildah" "buildah missing: how to install it"
[ ! -e "$e/missing" ] || fail "buildah missing: $e/missing was written"
HWIMG_BUILDAH=$e/no-such-buildah hw_fails build "$app/recipe.yaml" -o "$e/missing" --cache "$e/cache" "${tls[@]}"
assert_eq 1 "$(errors_in "$OUT")" "HWIMG_BUILDAH naming no file: one error line: $OUT"
assert_contains "$OUT" "$e/no-such-buildah" "HWIMG_BUILDAH naming no file: the path"
[ ! -e "$e/missing" ] || fail "HWIMG_BUILDAH naming no file: $e/missing was written"

echo "a RUN that fails"
hw_fails build --dockerfile "$e/fails/Dockerfile" --build-arg "BASE=$reg/debian/runtime:bookworm" \
  --build-arg 'MARCH=${cpu.march}' "${small[@]}" -o "$e/run"
assert_eq 1 "$(errors_in "$OUT")" "failing RUN: one error line: $OUT"
error=$(grep '^hwimg: error:' <<<"$OUT")
assert_contains "$error" "cpu-x86-64-v3" "failing RUN: the variant"
assert_contains "$error" "Dockerfile:4" "failing RUN: the Dockerfile line"
# The step's last lines follow the error line.
assert_contains "$(sed -n '/^hwimg: error:/,$p' <<<"$OUT")" "about to fail with $(march_of cpu-x86-64-v3)" \
  "failing RUN: the last lines of its output, after the error"
[ ! -e "$e/run" ] || fail "failing RUN: $e/run was written"
assert_eq "" "$(buildah containers -aq)" "buildah's working containers left after the failing RUN"

echo "SHELL holds for the RUNs after it, as in docker build: under bash -o pipefail a failing pipe fails the build"
mkdir -p "$e/shell"
printf 'ARG BASE\nFROM ${BASE}\nSHELL ["/bin/bash", "-o", "pipefail", "-c"]\nRUN echo "shell: $0" && false | true\n' \
  >"$e/shell/Dockerfile"
hw_fails build --dockerfile "$e/shell/Dockerfile" --build-arg "BASE=$reg/debian/runtime:bookworm" "${small[@]}" -o "$e/shell-out"
assert_contains "$(grep '^hwimg: error:' <<<"$OUT")" "Dockerfile:4" "SHELL: the failing pipe's RUN line"
assert_contains "$OUT" "shell: /bin/bash" "SHELL: the RUN ran under bash"

echo "an argument the Dockerfile does not declare: a warning, the build goes on"
hw_ok build --dockerfile "$e/ctx/Dockerfile" --build-arg "BASE=$reg/debian/runtime:bookworm" \
  --build-arg NOT_DECLARED=1 "${small[@]}" -o "$e/undeclared"
warning=$(grep '^hwimg: warning:.*NOT_DECLARED' <<<"$OUT" || true)
[ -n "$warning" ] || fail "no warning naming NOT_DECLARED: $OUT"
assert_contains "$warning" "not declared" "the warning says the argument is not declared"
check_layout "$e/undeclared" 1
# HEALTHCHECK is in the OCI config as Docker writes it there (docker-image-spec's DockerOCIImageConfigExt).
config=$(layout_blob "$e/undeclared" "$(jq -r .config.digest <<<"$(layout_manifest "$e/undeclared" 1-cpu-x86-64-v3)")")
assert_eq '{"Interval":300000000000,"Test":["CMD","/bin/true"]}' "$(jq -cS .config.Healthcheck "$config")" \
  "the Dockerfile's HEALTHCHECK in the variant's config"

echo "a FROM image that does not exist"
hw_fails build --dockerfile "$e/ctx/Dockerfile" --build-arg "BASE=$reg/debian/runtime:no-such-tag" "${small[@]}" -o "$e/from"
assert_eq 1 "$(errors_in "$OUT")" "missing FROM image: one error line: $OUT"
assert_contains "$OUT" "404" "missing FROM image: the registry's status"
assert_contains "$OUT" "MANIFEST_UNKNOWN" "missing FROM image: the registry's code"
assert_contains "$OUT" "Dockerfile:2" "missing FROM image: the FROM line"
[ ! -e "$e/from" ] || fail "missing FROM image: $e/from was written"

echo "a recipe context that escapes the recipe's directory"
mkdir -p "$e/escape/app"
cp "$e/ctx/Dockerfile" "$e/escape/app/"
printf 'name: escape\nmatrix: ../../one.yaml\ndockerfile: Dockerfile\ncontext: ../..\nargs: {BASE: "%s/debian/runtime:bookworm"}\n' \
  "$reg" >"$e/escape/app/recipe.yaml"
hw_fails build "$e/escape/app/recipe.yaml" -o "$e/escape/out" --cache "$e/cache" "${tls[@]}"
assert_eq 1 "$(errors_in "$OUT")" "escaping context: one error line: $OUT"
assert_contains "$OUT" "recipe.yaml:4:" "escaping context: recipe:line:column of context"
[ ! -e "$e/escape/out" ] || fail "escaping context: $e/escape/out was written"

step "into a fresh layout and cache, interrupted (SIGINT to hwimg and buildah, as Ctrl-C sends it): the layout valid or absent"
# A session of its own, so the signal reaches hwimg and its buildah as a terminal's Ctrl-C would, and
# SIGINT back to its default: bash starts background commands with SIGINT ignored.
L2=$TEST_TMP/L2
python3 -c 'import os, signal, sys; signal.signal(signal.SIGINT, signal.SIG_DFL); os.setsid(); os.execvp(sys.argv[1], sys.argv[1:])' \
  "$HWIMG" build "$app/recipe.yaml" -o "$L2" --tag 1.0 -j 2 -v --cache "$TEST_TMP/cache2" "${tls[@]}" \
  >"$TEST_TMP/interrupted.log" 2>&1 &
group=$!
add_cleanup "kill -KILL -- -$group 2>/dev/null"
for _ in $(seq 1 600); do
  grep -q ' | ' "$TEST_TMP/interrupted.log" && break
  kill -0 "$group" 2>/dev/null || break
  sleep 0.1
done
kill -INT -- "-$group" 2>/dev/null || true
status=0
wait "$group" || status=$?
[ "$status" != 0 ] || fail "the build was not interrupted (it finished): $(tail -5 "$TEST_TMP/interrupted.log")"
echo "interrupted build: exit $status after $(grep -c ' | ' "$TEST_TMP/interrupted.log" || true) lines of buildah output"
assert_eq 130 "$status" "exit status of the interrupted build (ended by SIGINT)"
# Killed between two steps, buildah leaves its working containers mounted: hwimg lets the running
# builds finish instead, and starts no other.
assert_eq "" "$(buildah containers -aq)" "buildah's working containers left by the interrupted build"
for _ in $(seq 1 100); do pgrep -g "$group" >/dev/null || break; sleep 0.1; done
assert_eq "" "$(pgrep -a -g "$group" || true)" "processes of the interrupted build still running 10 s later"
if [ -f "$L2/index.json" ]; then
  jq -e . "$L2/index.json" >/dev/null || fail "the interrupted build left an index.json that is not JSON"
  for digest in $(jq -r '.manifests[].digest' "$L2/index.json"); do
    blob=$(layout_blob "$L2" "$digest")
    [ -f "$blob" ] || fail "the interrupted build's index.json names $digest, which is not in the layout"
    assert_eq "${digest#sha256:}" "$(sha256sum <"$blob" | cut -d' ' -f1)" "a blob the interrupted layout names"
  done
  if [ -n "$(tag_digest "$L2" 1.0)" ]; then check_layout "$L2" 1.0; fi
fi

step "the rerun completes: same inputs and SOURCE_DATE_EPOCH, the same index digest as the first build"
hw_ok build "$app/recipe.yaml" -o "$L2" --tag 1.0 -j 2 --cache "$TEST_TMP/cache2" "${tls[@]}"
assert_eq "$index" "$(tag_digest "$L2" 1.0)" "index digest of the second layout"
check_layout "$L2" 1.0
assert_eq "" "$(find "${TMPDIR:-/tmp}" -maxdepth 1 -name "hwimg-build-$group-*")" "the interrupted build's scratch directories after the rerun"

step "one variant again with fresh buildah storage (every step run again): the same manifest digest"
saved=$CONTAINERS_STORAGE_CONF
CONTAINERS_STORAGE_CONF=$(containers_storage fresh)
hw_ok build "$app/recipe.yaml" -o "$TEST_TMP/L3" --tag 1.0 --only cpu-x86-64-v3 -v --cache "$TEST_TMP/cache3" "${tls[@]}"
CONTAINERS_STORAGE_CONF=$saved
assert_eq 1 "$(shared_runs "$OUT")" "the shared stage ran again in the fresh storage"
assert_eq "$(tag_digest "$L1" 1.0-cpu-x86-64-v3)" "$(tag_digest "$TEST_TMP/L3" 1.0-cpu-x86-64-v3)" \
  "cpu-x86-64-v3's manifest digest built in fresh storage"

step "the CUDA example (examples/dockerfile/cuda)"
# HWIMG_TEST_CUDA_IMAGE: an nvcc toolkit image hwimg's credentials can pull (e.g.
# nvidia/cuda:13.0.0-devel-ubuntu24.04 in a local registry); HWIMG_TEST_CUDA_VERSION: its CUDA
# version (default 13.0); HWIMG_TEST_CUDA_RUNTIME_IMAGE: the runtime stage's base (default: the same).
# Without one, a toolkit installed at /usr/local/cuda-13.0 (or HWIMG_TEST_CUDA_HOME) becomes one: what
# nvcc needs of it (bin, nvvm, the headers, the static CUDA runtime) on the Debian-made builder image.
cuda_home=${HWIMG_TEST_CUDA_HOME:-/usr/local/cuda-13.0}
if [ -z "${HWIMG_TEST_CUDA_IMAGE:-}" ] && [ -x "$cuda_home/bin/nvcc" ]; then
  HWIMG_TEST_CUDA_VERSION=${HWIMG_TEST_CUDA_VERSION:-$("$cuda_home/bin/nvcc" --version | sed -n 's/.*release \([0-9]*\.[0-9]*\),.*/\1/p')}
  kit=$TEST_TMP/cuda-toolkit
  mkdir -p "$kit/tree/lib64" "$kit/tree/targets/x86_64-linux"
  cp -a "$cuda_home/bin" "$cuda_home/nvvm" "$kit/tree/"
  cp -rL "$cuda_home/include" "$kit/tree/include"
  for lib in libcudart_static.a libcudadevrt.a libculibos.a; do cp -L "$cuda_home/lib64/$lib" "$kit/tree/lib64/"; done
  ln -s ../../include "$kit/tree/targets/x86_64-linux/include"
  ln -s ../../lib64 "$kit/tree/targets/x86_64-linux/lib"
  printf 'axes: {cpu: [x86-64-v1]}\n' >"$kit/matrix.yaml"
  printf '%s\n' "name: cuda-toolkit" "base: oci:$IMAGE_builder:bookworm" "matrix: matrix.yaml" \
    "layers: [{from: tree, to: /usr/local/cuda-$HWIMG_TEST_CUDA_VERSION}]" \
    "config: {env: {PATH: \"/usr/local/cuda-$HWIMG_TEST_CUDA_VERSION/bin:/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin\"}}" \
    'verify: {cpu: "off"}' >"$kit/recipe.yaml"
  hw_ok build "$kit/recipe.yaml" -o "$kit/layout" --tag devel --compression-level 1
  put main "oci:$kit/layout:devel" "cuda/toolkit:$HWIMG_TEST_CUDA_VERSION" --all
  HWIMG_TEST_CUDA_IMAGE=$reg/cuda/toolkit:$HWIMG_TEST_CUDA_VERSION
  HWIMG_TEST_CUDA_RUNTIME_IMAGE=${HWIMG_TEST_CUDA_RUNTIME_IMAGE:-$reg/debian/runtime:bookworm}
  echo "the toolkit image: $cuda_home as $HWIMG_TEST_CUDA_IMAGE"
fi
if [ -z "${HWIMG_TEST_CUDA_IMAGE:-}" ]; then
  echo "SKIP (this step only): no CUDA toolkit image or toolkit at hand; set HWIMG_TEST_CUDA_IMAGE or install one at $cuda_home to build examples/dockerfile/cuda"
else
  cuda=$TEST_TMP/cuda
  cp -a "$HWIMG_SOURCE_DIR/examples/dockerfile/cuda" "$cuda"
  printf 'axes:\n  cuda: ["%s"]\n  gpu: [sm_80, sm_90]\nptx: true\n' "${HWIMG_TEST_CUDA_VERSION:-13.0}" >"$cuda/matrix.yaml"
  cuda_build=(build --dockerfile "$cuda/Dockerfile" --context "$cuda" --target runtime --matrix "$cuda/matrix.yaml"
    --build-arg "CUDA_IMAGE=$HWIMG_TEST_CUDA_IMAGE" --build-arg "RUNTIME_IMAGE=${HWIMG_TEST_CUDA_RUNTIME_IMAGE:-$HWIMG_TEST_CUDA_IMAGE}"
    --build-arg 'CUDA_VERSION=${cuda.version}' --tag 1 -j 2 --cache "$TEST_TMP/cache" "${tls[@]}")
  hw_ok "${cuda_build[@]}" --build-arg 'CUDA_ARCHS=${gpu.cmake}' -o "$cuda/out"
  for id in $(variant_ids "$cuda/out" 1); do
    want=$("$HWIMG" matrix "$cuda/matrix.yaml" --format json | jq -r --arg id "$id" '.variants[] | select(.id == $id) | .variables["gpu.targets"]')
    assert_eq "$want" "$(skopeo inspect --config "oci:$cuda/out:1-$id" | jq -r '.config.Labels["org.hwimg.gpu.targets"]')" "$id: targets label"
  done
  # A Dockerfile that ignores the variant's targets (every variant compiled for sm_80) is refused.
  hw_fails "${cuda_build[@]}" --build-arg 'CUDA_ARCHS=80-real;80-virtual' -o "$cuda/ignored"
  assert_contains "$OUT" "sm90" "the variant whose device code does not match"
  assert_contains "$OUT" "/usr/local/bin/scale" "the file"
  [ ! -e "$cuda/ignored/index.json" ] || assert_eq 0 "$(jq '.manifests | length' "$cuda/ignored/index.json")" \
    "manifests the refused CUDA build indexed"
fi

assert_no_secret "$password"
echo PASS
