#!/usr/bin/env bash
# A variant's x86-64 instructions against its CPU label (issue 24 item 2, docs/recipe.md#cpu-code):
# the stencil recipe with -march=x86-64-v3 forced on every variant is refused for v1 and v2,
# naming the file, a function and an AVX2 instruction; v3 and v4 build. A v1 variant holding a
# target_clones("avx2","default") library builds, and so does one holding a program whose AVX2
# function is only called after __builtin_cpu_supports("avx2"), reported naming the caller.
source "$(dirname "$0")/lib.sh"
require_tool g++
require_tool make

work=$TEST_TMP/stencil
mkdir -p "$work/recipes" "$work/matrix"
cp -r "$HWIMG_SOURCE_DIR/examples" "$work/"
cp "$HWIMG_SOURCE_DIR/matrix/cpu-levels.yaml" "$work/matrix/"
sed 's/CXXFLAGS="-O3 ${cpu.march}"/CXXFLAGS="-O3 ${cpu.march} -march=x86-64-v3"/' \
  "$HWIMG_SOURCE_DIR/recipes/stencil.yaml" >"$work/recipes/stencil.yaml"
grep -q -- '-march=x86-64-v3"' "$work/recipes/stencil.yaml" || fail "the recipe's flags were not forced"

for variant in cpu-x86-64-v1 cpu-x86-64-v2; do
  step "$variant built with -march=x86-64-v3 is refused naming a function and an AVX2 instruction"
  set +e
  err=$("$HWIMG" build "$work/recipes/stencil.yaml" -o "$TEST_TMP/out-$variant" --tag 1 --only "$variant" 2>&1 >/dev/null)
  status=$?
  set -e
  assert_eq 1 "$status" "exit status"
  assert_contains "$err" "failed to check the CPU code of variant $variant: it is labelled ${variant#cpu-}, but /opt/stencil/bin/stencil: function " "the refusal"
  grep -Eq "avx2 \(v[a-z0-9]+ at 0x[0-9a-f]+\)" <<<"$err" || fail "no AVX2 instruction named: $err"
done

step "cpu-x86-64-v3 builds"
out=$("$HWIMG" build "$work/recipes/stencil.yaml" -o "$TEST_TMP/out-ok" --tag 1 --only cpu-x86-64-v3)
assert_contains "$out" "wrote oci:$TEST_TMP/out-ok:1 (1 variant: 1 built, 0 unchanged; index sha256:" "the summary"
step "cpu-x86-64-v4 builds into the same layout; the summary counts the index's variants, the one built and the one kept"
out=$("$HWIMG" build "$work/recipes/stencil.yaml" -o "$TEST_TMP/out-ok" --tag 1 --only cpu-x86-64-v4)
assert_contains "$out" "wrote oci:$TEST_TMP/out-ok:1 (2 variants: 1 built, 0 unchanged, 1 kept from before; index sha256:" "the summary"
out=$("$HWIMG" build "$work/recipes/stencil.yaml" -o "$TEST_TMP/out-ok" --tag 1 --only cpu-x86-64-v4)
assert_contains "$out" "cpu-x86-64-v4" "the variant line"
assert_contains "$out" "(unchanged)" "the variant line of a rebuild"
assert_contains "$out" "(2 variants: 0 built, 1 unchanged, 1 kept from before; index sha256:" "the summary of a rebuild"

step "a v1 variant holding a target_clones library is accepted, the version reported as dispatched"
app=$TEST_TMP/clones
mkdir -p "$app/src"
cat >"$app/src/scale.c" <<'C'
__attribute__((target_clones("avx2", "default")))
void add_ints(int* a, const int* b, int n) { for (int i = 0; i < n; ++i) a[i] += b[i] * 3; }
C
printf 'axes:\n  gpu: [none]\n  cpu: [x86-64-v1]\n' >"$app/matrix.yaml"
cat >"$app/recipe.yaml" <<'YAML'
name: clones
base: scratch
matrix: matrix.yaml
build:
  workdir: src
  run: 'mkdir -p "${out}/lib" && gcc -O3 -fPIC -shared -o "${out}/lib/libscale.so" scale.c'
layers:
  - {from: "${out}/lib", to: /opt/lib}
YAML
# The report goes to util::Output's progress, which `build` does not print when not on a terminal;
# tests/unit/test_build_cpu_code_check.cpp checks its text.
report=$("$HWIMG" build "$app/recipe.yaml" -o "$TEST_TMP/out-clones" --tag 1 -v 2>&1 >/dev/null)
assert_contains "$report" "variant cpu-x86-64-v1: dispatched code beyond x86-64-v1 accepted: " "the dispatched report with -v"
jq -r ".manifests[].annotations[\"org.opencontainers.image.ref.name\"]" "$TEST_TMP/out-clones/index.json" | grep -qx 1-cpu-x86-64-v1 || fail "the v1 variant was not written"
step "a v1 variant holding a program that calls its AVX2 function after __builtin_cpu_supports is accepted, naming the check"
app=$TEST_TMP/cpu-supports
mkdir -p "$app/src"
cat >"$app/src/kernel.c" <<'C'
__attribute__((target("avx2"), noinline))
static void run_avx2(int* a, const int* b, int n) { for (int i = 0; i < n; ++i) a[i] += b[i] * 3; }
__attribute__((noinline))
static void run_plain(int* a, const int* b, int n) { for (int i = 0; i < n; ++i) a[i] += b[i] * 5; }
void work(int* a, const int* b, int n) {
  if (__builtin_cpu_supports("avx2")) run_avx2(a, b, n); else run_plain(a, b, n);
}
int main(void) { int a[64] = {0}, b[64] = {0}; work(a, b, 64); return a[0]; }
C
printf 'axes:\n  gpu: [none]\n  cpu: [x86-64-v1]\n' >"$app/matrix.yaml"
cat >"$app/recipe.yaml" <<'YAML'
name: cpu-supports
base: scratch
matrix: matrix.yaml
build:
  workdir: src
  run: 'mkdir -p "${out}/bin" && gcc -O3 -o "${out}/bin/kernel" kernel.c'
layers:
  - {from: "${out}/bin", to: /opt/bin}
YAML
report=$("$HWIMG" build "$app/recipe.yaml" -o "$TEST_TMP/out-cpu-supports" --tag 1 -v 2>&1 >/dev/null)
assert_contains "$report" "/opt/bin/kernel: function run_avx2 needs " "run_avx2 in the dispatched report"
grep -Eq "avx2 \(v[a-z0-9]+ at 0x[0-9a-f]+\), only reached after a CPU check in work" <<<"$report" || fail "no AVX2 instruction and checking function named: $report"
jq -r ".manifests[].annotations[\"org.opencontainers.image.ref.name\"]" "$TEST_TMP/out-cpu-supports/index.json" | grep -qx 1-cpu-x86-64-v1 || fail "the v1 variant was not written"
echo "instructions beyond the label are refused by function; dispatched versions and code behind a visible CPU check are accepted"
