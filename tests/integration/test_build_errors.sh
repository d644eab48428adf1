#!/usr/bin/env bash
# Bad input to `hwimg build`: each case checks the exit status, the exact error on stderr (one line
# naming file:line:column and what was expected), an empty stdout and that no output was written.
# Every case runs even when an earlier one fails; the suite then lists the failed cases.
source "$(dirname "$0")/lib.sh"

require_tool jq
require_tool sha256sum

export SOURCE_DATE_EPOCH=1700000000
cp -a "$HWIMG_SOURCE_DIR/tests/data/recipes/errors" "$TEST_TMP/errors"
cd "$TEST_TMP/errors"
HERE=$(pwd -P)

# expect_error STATUS EXPECTED_STDERR BUILD_ARGS...: runs `hwimg build BUILD_ARGS -o $TEST_TMP/out`.
expect_error() {
  local status=$1 expected=$2 output=$TEST_TMP/out
  shift 2
  rm -rf "$output"
  set +e
  "$HWIMG" build "$@" -o "$output" >"$TEST_TMP/stdout" 2>"$TEST_TMP/stderr"
  local actual=$?
  set -e
  local stderr
  stderr=$(cat "$TEST_TMP/stderr")
  assert_eq "$expected" "$stderr" "stderr"
  assert_eq "$status" "$actual" "exit status"
  assert_eq "" "$(cat "$TEST_TMP/stdout")" "stdout"
  [ ! -e "$output" ] || fail "the output directory was created: $(find "$output" | head -5 | paste -sd' ')"
}

FAILED=()
run_case() { # run_case NAME FUNCTION: a failing case is recorded, the others still run
  step "$1"
  set +e
  (
    set -e
    "$2"
  )
  local status=$?
  set -e
  [ "$status" -eq 0 ] || FAILED+=("$1")
}

unknown_key() {
  expect_error 1 'hwimg: error: unknown-key.yaml:8:3: unknown key "labelz" in config (did you mean labels?)' \
    unknown-key.yaml
  printf 'name: x\nbase: scratch\nlayer:\n  - {from: files, to: /opt}\n' >top-level-key.yaml
  expect_error 1 'hwimg: error: top-level-key.yaml:3:1: unknown key "layer" in the recipe (did you mean layers?)' \
    top-level-key.yaml
}
wrong_type() {
  expect_error 1 'hwimg: error: wrong-type.yaml:7:15: expected a list of strings for "config.entrypoint", got a string' \
    wrong-type.yaml
  printf 'name: x\nbase: scratch\nlayers: /opt\n' >layers-string.yaml
  expect_error 1 'hwimg: error: layers-string.yaml:3:9: expected a list of {from, to} maps for "layers"' \
    layers-string.yaml
}
missing_base() {
  expect_error 1 'hwimg: error: missing-base.yaml:1:1: missing key "base" (expected e.g. "base: scratch")' \
    missing-base.yaml
}
failing_step() {
  # The first line names the step and its status; the tail of the step's output follows it.
  expect_error 1 'hwimg: error: failing-step.yaml:4:8: build step of variant cpu-x86-64-v1 failed with exit status 3; its last output:
  | compiling part 1
  | part 2: no such header' failing-step.yaml
  printf 'name: x\nbase: scratch\nbuild:\n  run: exit 5\nlayers:\n  - {from: files, to: /opt}\n' >silent-step.yaml
  expect_error 1 'hwimg: error: silent-step.yaml:4:8: build step of variant cpu-x86-64-v1 failed with exit status 5 and no output' \
    silent-step.yaml
}
missing_layer_source() {
  expect_error 1 "hwimg: error: missing-source.yaml:6:11: layer source $HERE/no-such-directory does not exist" \
    missing-source.yaml
}
escaping_destination() {
  expect_error 1 'hwimg: error: escaping-destination.yaml:5:9: layer destination "/opt/../../etc" escapes the image root' \
    escaping-destination.yaml
  printf 'name: x\nbase: scratch\nlayers:\n  - {from: files, to: opt/files}\n' >relative-destination.yaml
  expect_error 1 'hwimg: error: relative-destination.yaml:4:23: expected an absolute path inside the image for "to", got "opt/files"' \
    relative-destination.yaml
}
corrupt_base_blob() {
  "$HWIMG" build ok.yaml -o ../corrupt-base --tag base >/dev/null
  local manifest layer
  manifest=$(jq -r '.manifests[] | select(.annotations["org.opencontainers.image.ref.name"] == "base-cpu-x86-64-v1")
                    | .digest' ../corrupt-base/index.json)
  layer=$(jq -r '.layers[0].digest' "../corrupt-base/blobs/sha256/${manifest#sha256:}")
  local blob=../corrupt-base/blobs/sha256/${layer#sha256:}
  printf 'X' | dd of="$blob" bs=1 seek=20 conv=notrunc status=none
  expect_error 1 "hwimg: error: bad-base-blob.yaml:3:7: failed to use base image oci:../corrupt-base:base-cpu-x86-64-v1: blob $layer does not match its digest (content hashes to sha256:$(sha256sum "$blob" | cut -d' ' -f1))" \
    bad-base-blob.yaml
  # The config blob is read through another path (Layout::read_blob); same length, other bytes.
  "$HWIMG" build ok.yaml -o ../corrupt-config --tag base >/dev/null
  local config
  config=$(jq -r '.config.digest' "../corrupt-config/blobs/sha256/${manifest#sha256:}")
  blob=../corrupt-config/blobs/sha256/${config#sha256:}
  sed -i 's/"amd64"/"AMD64"/' "$blob"
  sed 's/corrupt-base/corrupt-config/' bad-base-blob.yaml >bad-base-config.yaml
  expect_error 1 "hwimg: error: bad-base-config.yaml:3:7: failed to use base image oci:../corrupt-config:base-cpu-x86-64-v1: failed to read blob $config from $HERE/../corrupt-config: digest mismatch, content hashes to sha256:$(sha256sum "$blob" | cut -d' ' -f1)" \
    bad-base-config.yaml
}
invalid_tag() {
  expect_error 2 'hwimg: error: invalid tag "bad-": each part must start and end with a letter or digit' \
    ok.yaml --tag bad-
}
unknown_only() {
  expect_error 2 'hwimg: error: unknown variant "cpu-x86-64-v3" in --only (did you mean cpu-x86-64-v1?); variants: cpu-x86-64-v1' \
    ok.yaml --only cpu-x86-64-v3
}
malformed_yaml() {
  expect_error 1 'hwimg: error: malformed.yaml:6:1: invalid YAML: end of sequence flow not found' malformed.yaml
}
unknown_variable() {
  printf 'name: x\nbase: scratch\nlayers:\n  - {from: files, to: "/opt/${cpu.levle}"}\n' >unknown-variable.yaml
  expect_error 1 'hwimg: error: unknown-variable.yaml:4:23: unknown variable ${cpu.levle} (did you mean cpu.level?); known: variant, out, cuda.version, cuda.home, gpu.targets, gpu.gencode, gpu.cmake, cpu.level, cpu.target, cpu.march, driver.version, driver.branch (write $${cpu.levle} to pass it to the shell)' \
    unknown-variable.yaml
}
missing_layer_key() {
  printf 'name: x\nbase: scratch\nlayers:\n  - {from: files}\n' >missing-to.yaml
  expect_error 1 'hwimg: error: missing-to.yaml:4:5: missing key "to" in a layer' missing-to.yaml
}
bad_source_date_epoch() {
  SOURCE_DATE_EPOCH=yesterday expect_error 2 \
    'hwimg: error: invalid SOURCE_DATE_EPOCH "yesterday": expected a non-negative number of seconds' ok.yaml
}
# Bugs found while writing this suite (fixed on main since).
empty_layers() {
  printf 'name: x\nbase: scratch\nlayers: []\n' >empty-layers.yaml
  expect_error 1 'hwimg: error: empty-layers.yaml:3:9: expected at least one {from, to} map in "layers"' \
    empty-layers.yaml
}
duplicate_key() {
  printf 'name: x\nbase: scratch\nname: y\nlayers:\n  - {from: files, to: /opt}\n' >duplicate-key.yaml
  expect_error 1 'hwimg: error: duplicate-key.yaml:3:1: duplicate key "name" in the recipe (first at 1:1)' \
    duplicate-key.yaml
}
bad_compression_level() {
  expect_error 2 'hwimg: error: invalid --compression-level 99: expected 1 to 12 for gzip' \
    ok.yaml --compression-level 99
  expect_error 2 'hwimg: error: invalid --compression-level 30: expected 1 to 19 for zstd' \
    ok.yaml --compression zstd --compression-level 30
}

run_case "unknown key, with the nearest valid key" unknown_key
run_case "wrong type" wrong_type
run_case "missing base" missing_base
run_case "a failing build step: exit status and output tail" failing_step
run_case "a missing layer source" missing_layer_source
run_case "a destination that escapes the image root" escaping_destination
run_case "a base layout whose blob does not match its digest" corrupt_base_blob
run_case "an invalid --tag" invalid_tag
run_case "an unknown --only id" unknown_only
run_case "malformed YAML" malformed_yaml
run_case "an unknown variable" unknown_variable
run_case "a layer without \"to\"" missing_layer_key
run_case "an invalid SOURCE_DATE_EPOCH" bad_source_date_epoch
run_case "an empty layer list" empty_layers
run_case "a duplicate key" duplicate_key
run_case "an out-of-range --compression-level" bad_compression_level

[ "${#FAILED[@]}" -eq 0 ] || fail "${#FAILED[@]} case(s) failed: $(printf '[%s] ' "${FAILED[@]}")"
echo "PASS"
