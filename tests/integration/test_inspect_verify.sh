#!/usr/bin/env bash
# `hwimg inspect --verify`, `hwimg check --verify` and the base layers of a build (issue 24 items 1 and 5,
# docs/recipe.md#cpu-code): every variant of an image, from a layout or a registry, has its
# programs scanned and held against its label. A v2 variant whose program was built with
# -march=x86-64-v3 (built with verify.cpu: off, as another tool would) is NOT COVERED, naming the
# function and the AVX2 instruction, exit status 3; the v3 variant is covered; `check --verify` on an
# x86-64-v2 host refuses the v2 variant its labels would run. A second run takes the
# layers' needs from the cache (nothing scanned, nothing fetched). An image without hwimg labels
# (Debian's, made from its packages) is judged by its platform: glibc is dispatched code, not a
# problem. A build on that Debian base reports the base's code and is not refused. A layout blob
# that does not match its digest is an error naming the layer.
source "$(dirname "$0")/lib.sh"
source "$(dirname "$0")/registry_lib.sh"
source "$(dirname "$0")/bases_lib.sh"
require_tool gcc
require_tool umoci

debian_images runtime
main_registry
export XDG_CACHE_HOME=$TEST_TMP/xdg

app=$TEST_TMP/app
mkdir -p "$app/src"
cat >"$app/src/add.c" <<'C'
void add_ints(int* a, const int* b, int n) { for (int i = 0; i < n; ++i) a[i] += b[i] * 3; }
int main(void) { int a[64] = {0}, b[64] = {1}; add_ints(a, b, 64); return a[0] == 3 ? 0 : 1; }
C
printf 'axes:\n  gpu: [none]\n  cpu: [x86-64-v2, x86-64-v3]\n' >"$app/matrix.yaml"
cat >"$app/recipe.yaml" <<'YAML'
name: add
base: scratch
matrix: matrix.yaml
verify: {cpu: "off"}
build:
  workdir: src
  run: 'mkdir -p "${out}/bin" && gcc -O3 -march=x86-64-v3 -fno-inline -o "${out}/bin/add" add.c'
layers:
  - {from: "${out}/bin", to: /opt/add/bin}
YAML
hw_ok build "$app/recipe.yaml" -o "$TEST_TMP/out" --tag 1

step "inspect --verify of a layout: the v2 variant is not covered, naming function and instruction; v3 is covered"
hw inspect --verify "oci:$TEST_TMP/out:1"
assert_eq 3 "$STATUS" "exit status"
row_v2=$(grep '^cpu-x86-64-v2 ' <<<"$OUT")
assert_contains "$row_v2" "NOT COVERED (1 problem)" "the v2 row"
assert_contains "$(grep '^cpu-x86-64-v3 ' <<<"$OUT")" " covered" "the v3 row"
assert_contains "$OUT" "cpu-x86-64-v2: code that x86-64-v2 does not cover:" "the section"
grep -Eq "^  /opt/add/bin/add: function add_ints needs .*avx2 \(v[a-z0-9]+ at 0x[0-9a-f]+\)" <<<"$OUT" ||
  fail "add_ints and an AVX2 instruction not named: $OUT"
json=$("$HWIMG" inspect --verify --format json "oci:$TEST_TMP/out:1" || true)
assert_eq false "$(jq -r '.verify[] | select(.variant == "cpu-x86-64-v2") | .covered' <<<"$json")" "v2 covered"
assert_eq true "$(jq -r '.verify[] | select(.variant == "cpu-x86-64-v3") | .covered' <<<"$json")" "v3 covered"
assert_eq x86-64-v3 "$(jq -r '.verify[] | select(.variant == "cpu-x86-64-v2") | .needs' <<<"$json")" "what v2's code needs"
assert_eq 0 "$(jq '[.verify[].layers_scanned] | add' <<<"$json")" "layers scanned again (the cache keeps them)"

step "check --verify: the variant check picks must need nothing this host's CPU lacks"
hw check --verify "oci:$TEST_TMP/out:1"
assert_eq 0 "$STATUS" "exit status on this host (x86-64-v3 or better)"
assert_contains "$OUT" "hwimg: the code of variant cpu-x86-64-v3 (1 programs) needs nothing the CPU of this host (" "the verdict"
HWIMG_OVERRIDE_CPU_LEVEL=x86-64-v2 hw check --verify "oci:$TEST_TMP/out:1"
assert_eq 3 "$STATUS" "exit status on an x86-64-v2 host"
assert_contains "$OUT" "runs on this host as variant cpu-x86-64-v2" "what the labels say"
assert_contains "$OUT" "hwimg: oci:$TEST_TMP/out:1 does not run on this host: the code of variant cpu-x86-64-v2 needs what the CPU of this host (x86-64-v2) lacks: /opt/add/bin/add: function add_ints needs " "the refusal"
HWIMG_OVERRIDE_CPU_LEVEL=x86-64-v2 hw check "oci:$TEST_TMP/out:1"
assert_eq 0 "$STATUS" "without --verify the labels alone are judged"

step "inspect --verify of the same image in a registry: the same verdicts, no layer fetched when the cache has its needs"
hw_ok push "oci:$TEST_TMP/out:1" "$reg/add:1" "${tls[@]}"
json=$(XDG_CACHE_HOME=$TEST_TMP/xdg-fresh "$HWIMG" inspect --verify --format json "$reg/add:1" "${tls[@]}" || true)
assert_eq false "$(jq -r '.verify[] | select(.variant == "cpu-x86-64-v2") | .covered' <<<"$json")" "v2 from the registry"
assert_eq true "$(jq -r '.verify[] | select(.variant == "cpu-x86-64-v3") | .covered' <<<"$json")" "v3 from the registry"
[ "$(jq '[.verify[].layers_scanned] | add' <<<"$json")" -ge 1 ] || fail "a fresh cache scanned nothing: $json"
mark=$(log_mark "$dir")
json=$(XDG_CACHE_HOME=$TEST_TMP/xdg-fresh "$HWIMG" inspect --verify --format json "$reg/add:1" "${tls[@]}" || true)
assert_eq 0 "$(jq '[.verify[].layers_scanned] | add' <<<"$json")" "layers scanned on the second run"
# inspect reads each variant's config blob (its summary); no layer is fetched.
configs=$(jq -r '[.variants[].config.digest] | join("|")' <<<"$json")
! requests_since "$dir" "$mark" | grep "GET /v2/add/blobs/" | grep -qvE "$configs" ||
  fail "a layer was fetched again: $(requests_since "$dir" "$mark")"

step "an image made by umoci, without hwimg labels, is judged by its platform"
umoci init --layout "$TEST_TMP/plain"
umoci new --image "$TEST_TMP/plain:1"
mkdir -p "$TEST_TMP/plain-files/opt"
tar -xzf "$TEST_TMP/out/blobs/sha256/$(jq -r '.layers[0].digest' "$TEST_TMP/out/blobs/sha256/$(jq -r '.manifests[0].digest' "$TEST_TMP/out/blobs/sha256/$(jq -r '.manifests[] | select(.annotations["org.opencontainers.image.ref.name"] == "1") | .digest' "$TEST_TMP/out/index.json" | cut -d: -f2)" | cut -d: -f2)" | cut -d: -f2)" -C "$TEST_TMP/plain-files"
umoci insert --image "$TEST_TMP/plain:1" "$TEST_TMP/plain-files/opt" /opt
json=$("$HWIMG" inspect --verify --format json "oci:$TEST_TMP/plain:1" || true)
assert_eq linux/amd64 "$(jq -r '.verify[0].label' <<<"$json")" "the label of an unlabelled image"
assert_eq false "$(jq -r '.verify[0].covered' <<<"$json")" "covered"
jq -e '.verify[0].uncovered | any(test("^/opt/add/bin/add: function add_ints needs .*avx2"))' <<<"$json" >/dev/null ||
  fail "add_ints not named: $(jq -c '.verify[0].uncovered' <<<"$json")"

step "the Debian-made image: glibc is dispatched code, not a problem"
json=$("$HWIMG" inspect --verify --format json "oci:$IMAGE_runtime:bookworm" 2>/dev/null || true)
assert_eq x86-64-v1 "$(jq -r '.verify[0].label' <<<"$json")" "the label"
jq -e '.verify[0].dispatched | any(startswith("/usr/lib/x86_64-linux-gnu/libc.so.6: "))' <<<"$json" >/dev/null ||
  fail "libc's dispatched code not reported: $(jq -c '.verify[0].dispatched[:3]' <<<"$json")"
! jq -e '.verify[0].uncovered | any(startswith("/usr/lib/x86_64-linux-gnu/libc.so.6"))' <<<"$json" >/dev/null ||
  fail "libc reported as not covered"

step "a build on the Debian base reports the base's code and is not refused"
printf 'axes:\n  gpu: [none]\n  cpu: [x86-64-v1]\n' >"$app/matrix-v1.yaml"
cat >"$app/on-debian.yaml" <<YAML
name: on-debian
base: oci:$IMAGE_runtime:bookworm
matrix: matrix-v1.yaml
layers:
  - {from: src/add.c, to: /opt/add.c}
YAML
hw_ok build "$app/on-debian.yaml" -o "$TEST_TMP/on-debian" --tag 1 -v
assert_contains "$OUT" "variant cpu-x86-64-v1: base image oci:$IMAGE_runtime:bookworm has dispatched code beyond x86-64-v1 in " "the base report"
grep -q "accepted: .*libc.so.6 (" <<<"$OUT" || fail "glibc not in the base report: $OUT"

step "a layout blob that does not match its digest: an error naming the layer"
cp -r "$TEST_TMP/out" "$TEST_TMP/corrupt"
layer=$(jq -r '.layers[-1].digest' "$TEST_TMP/corrupt/blobs/sha256/$(jq -r '.manifests[0].digest' "$TEST_TMP/corrupt/index.json" | cut -d: -f2)" 2>/dev/null || true)
if [ -z "$layer" ] || [ "$layer" = null ]; then
  # The tag names an index: its first variant's last layer.
  index=$(jq -r '.manifests[] | select(.annotations["org.opencontainers.image.ref.name"] == "1") | .digest' "$TEST_TMP/corrupt/index.json")
  manifest=$(jq -r '.manifests[0].digest' "$TEST_TMP/corrupt/blobs/sha256/${index#sha256:}")
  layer=$(jq -r '.layers[-1].digest' "$TEST_TMP/corrupt/blobs/sha256/${manifest#sha256:}")
fi
chmod u+w "$TEST_TMP/corrupt/blobs/sha256/${layer#sha256:}"
printf 'x' >>"$TEST_TMP/corrupt/blobs/sha256/${layer#sha256:}"
XDG_CACHE_HOME=$TEST_TMP/xdg-corrupt hw inspect --verify "oci:$TEST_TMP/corrupt:1"
assert_eq 1 "$STATUS" "exit status"
assert_contains "$OUT" "failed to read layer $layer: the blob's content has digest sha256:" "the error"
echo "inspect --verify judges any image's code against its labels"
