#!/usr/bin/env bash
# A variant's programs are for its architecture (issue 24 item 1, docs/recipe.md#cpu-code): a recipe
# whose step compiles with the host's g++ for every variant of `cpu: [neoverse_v2, x86-64-v3]` is
# refused for the arm64 variant, naming the x86-64 program, its machine and its layer; the cubin
# beside it (EM_CUDA) is not named; the amd64 variant alone builds; nothing is written on refusal.
source "$(dirname "$0")/lib.sh"
require_tool g++

app=$TEST_TMP/app
mkdir -p "$app/src"
printf '#include <cstdio>\nint main() { std::puts("hello"); }\n' >"$app/src/hello.cpp"
cp "$HWIMG_SOURCE_DIR/tests/data/fatbin/k-sm90a.cubin" "$app/src/"
printf 'axes:\n  gpu: [none]\n  cpu: [neoverse_v2, x86-64-v3]\n' >"$app/matrix.yaml"
cat >"$app/recipe.yaml" <<'YAML'
name: hello
base: scratch
matrix: matrix.yaml
build:
  workdir: src
  run: 'mkdir -p "${out}/bin" && g++ -O2 -o "${out}/bin/hello" hello.cpp && cp k-sm90a.cubin "${out}/bin/"'
layers:
  - {from: "${out}/bin", to: /opt/hello/bin}
YAML

step "the arm64 variant with the host's x86-64 program is refused, naming it; the cubin is not named"
set +e
err=$("$HWIMG" build "$app/recipe.yaml" -o "$TEST_TMP/out" --tag 1 -j 1 2>&1 >/dev/null)
status=$?
set -e
assert_eq 1 "$status" "exit status"
assert_contains "$err" "failed to check the CPU code of variant cpu-neoverse_v2 (linux/arm64/v8): its programs and libraries must be 64-bit AArch64 (EM_AARCH64) ELF, but /opt/hello/bin/hello is a 64-bit x86-64 (EM_X86_64)" "the refusal"
assert_contains "$err" "(its own layer, from " "the layer named"
! grep -q "k-sm90a.cubin" <<<"$err" || fail "the cubin was named: $err"
[ ! -e "$TEST_TMP/out/index.json" ] || [ "$(jq '.manifests | length' "$TEST_TMP/out/index.json")" = 0 ] ||
  fail "an index was written for the refused build: $(cat "$TEST_TMP/out/index.json")"

step "the amd64 variant alone builds, its program checked and kept"
"$HWIMG" build "$app/recipe.yaml" -o "$TEST_TMP/out" --tag 1 --only cpu-x86-64-v3 >/dev/null
assert_eq 1-cpu-x86-64-v3 "$(jq -r '.manifests[].annotations["org.opencontainers.image.ref.name"]' "$TEST_TMP/out/index.json" | grep -- -cpu- )" "the variant tag"
echo "programs for another architecture are refused by name"
