#!/usr/bin/env bash
# Running a variant that bundles its driver (issue 27 §3, docs/running.md): `hwimg select --format
# docker-args|podman-args` prints the device nodes of the GPUs considered for a bundled-driver
# variant, the toolkit's options for another GPU variant and the reference alone for a CPU one, on
# one line that `$(...)` splits back into the same words; `hwimg cdi generate` writes a spec that
# the CDI JSON schema (tests/data/cdi) accepts and that podman's CDI library resolves: the known
# devices become the stand-in nodes' majors and minors in the container's OCI config, an unknown
# one fails with CDI's "unresolvable CDI devices".
source "$(dirname "$0")/lib.sh"
require_tool jq
require_tool python3

data=$HWIMG_SOURCE_DIR/tests/data/select
mixed=$data/host-mixed-580.json   # GPU 0 an A100, GPU 1 an H100, driver 580.65.06
h100_535=$data/host-h100-535.json
no_gpu=$data/host-no-gpu.json
# The GPUs considered are --gpus's or all, whatever the machine running the suite sets.
unset NVIDIA_VISIBLE_DEVICES
control="--device /dev/nvidiactl --device /dev/nvidia-uvm --device /dev/nvidia-uvm-tools"

step "three images: one bundling driver 580.65.06, one for NVIDIA's toolkit, one for the CPU"
# variant_spec ID ANNOTATIONS_JSON: a layout_writer spec of one amd64 variant.
variant_spec() {
  jq -n --arg id "$1" --argjson pairs "$2" \
    '[{id: $id, platform: {os: "linux", architecture: "amd64"}, annotations: ({"org.hwimg.variant": $id} + $pairs)}]'
}
variant_spec bundled-580 '{"org.hwimg.cuda.version": "13.0", "org.hwimg.gpu.targets": "sm_80,sm_90",
  "org.hwimg.driver.bundled": "580.65.06"}' >"$TEST_TMP/bundled.json"
variant_spec toolkit '{"org.hwimg.cuda.version": "12.8", "org.hwimg.gpu.targets": "sm_80,sm_90"}' >"$TEST_TMP/toolkit.json"
variant_spec cpu '{"org.hwimg.cpu.level": "x86-64-v1"}' >"$TEST_TMP/cpu.json"
for image in bundled toolkit cpu; do
  make_layout "$TEST_TMP/$image" 1.0 "$TEST_TMP/$image.json" >/dev/null
done
bundled=oci:$TEST_TMP/bundled:1.0
toolkit=oci:$TEST_TMP/toolkit:1.0
cpu=oci:$TEST_TMP/cpu:1.0

step "a bundled-driver variant: the control nodes and each considered GPU's node, no toolkit option"
run_hwimg select "$bundled" --host "$mixed" --format docker-args
assert_eq 0 "$STATUS" "select --format docker-args status ($ERR)"
assert_eq "$control --device /dev/nvidia0 --device /dev/nvidia1 $bundled-bundled-580" "$OUT" "docker-args, both GPUs"
# $(...) splits the line back into the words docker gets: 5 options with a value each, the image.
words=($("$HWIMG" select "$bundled" --host "$mixed" --format docker-args))
assert_eq 11 "${#words[@]}" "words of docker-args"
assert_eq "/dev/nvidia-uvm-tools" "${words[5]}" "the sixth word"
assert_eq "$bundled-bundled-580" "${words[10]}" "the last word, the pinned reference"
run_hwimg select "$bundled" --host "$mixed" --format podman-args --gpus 1
assert_eq "$control --device /dev/nvidia1 $bundled-bundled-580" "$OUT" "podman-args, --gpus 1"
OUT=$(NVIDIA_VISIBLE_DEVICES=GPU-22222222-0000-0000-0000-000000000000 \
  "$HWIMG" select "$bundled" --host "$mixed" --format docker-args)
assert_eq "$control --device /dev/nvidia0 $bundled-bundled-580" "$OUT" "docker-args, NVIDIA_VISIBLE_DEVICES by UUID"
run_hwimg select "$bundled" --host "$mixed" --format docker-args --gpus 0:1
assert_eq 2 "$STATUS" "a MIG device for a bundled-driver variant is a usage error"
assert_contains "$ERR" "names MIG device 0:1, but variant bundled-580 bundles its driver" "the MIG refusal"
# Rule 5 still decides first: another kernel driver gets nothing to run, and the reason.
run_hwimg select "$bundled" --host "$h100_535" --format docker-args
assert_eq 3 "$STATUS" "select on a host with driver 535"
assert_eq "" "$OUT" "nothing on stdout when no variant fits"
assert_contains "$ERR" "bundles driver 580.65.06; host kernel driver is 535" "the rule 5 reason"

step "a toolkit GPU variant: --gpus for docker, NVIDIA's CDI names for podman"
run_hwimg select "$toolkit" --host "$mixed" --format docker-args
assert_eq "--gpus all $toolkit-toolkit" "$OUT" "docker-args, all GPUs"
run_hwimg select "$toolkit" --host "$mixed" --format podman-args
assert_eq "--device nvidia.com/gpu=all $toolkit-toolkit" "$OUT" "podman-args, all GPUs"
run_hwimg select "$toolkit" --host "$mixed" --format docker-args --gpus 1,0
assert_eq "--gpus \"device=1,0\" $toolkit-toolkit" "$OUT" "docker-args, a GPU list (CSV-quoted for docker)"
words=($("$HWIMG" select "$toolkit" --host "$mixed" --format docker-args --gpus 1,0))
assert_eq 3 "${#words[@]}" "words of docker-args with a GPU list"
assert_eq '"device=1,0"' "${words[1]}" "the --gpus value stays one word, quotes and all"
run_hwimg select "$toolkit" --host "$mixed" --format podman-args --gpus 1,0
assert_eq "--device nvidia.com/gpu=1 --device nvidia.com/gpu=0 $toolkit-toolkit" "$OUT" "podman-args, a GPU list"

step "a CPU-only variant: the reference alone; a bundled one with no GPU considered does not run"
run_hwimg select "$cpu" --host "$no_gpu" --format docker-args
assert_eq "$cpu-cpu" "$OUT" "docker-args of a CPU variant"
run_hwimg select "$cpu" --host "$mixed" --format podman-args
assert_eq "$cpu-cpu" "$OUT" "podman-args of a CPU variant on a GPU host"
run_hwimg select "$bundled" --host "$mixed" --format docker-args --gpus none
assert_eq "3 " "$STATUS $OUT" "docker-args of a GPU-only image with --gpus none"

step "cdi generate: a device per GPU by index and UUID, and all; control nodes shared; nothing else"
run_hwimg cdi generate --host "$mixed"
assert_eq 0 "$STATUS" "cdi generate status ($ERR)"
spec=$OUT
assert_eq "0.5.0 hwimg.org/gpu" "$(jq -r '"\(.cdiVersion) \(.kind)"' <<<"$spec")" "version and kind"
assert_eq "0 1 GPU-22222222-0000-0000-0000-000000000000 GPU-11111111-0000-0000-0000-000000000000 all" \
  "$(jq -r '[.devices[].name] | join(" ")' <<<"$spec")" "device names"
assert_eq "/dev/nvidia1" "$(jq -r '.devices[1].containerEdits.deviceNodes[].path' <<<"$spec")" "device 1's node"
assert_eq "/dev/nvidia0 /dev/nvidia1" "$(jq -r '[.devices[4].containerEdits.deviceNodes[].path] | join(" ")' <<<"$spec")" \
  "all's nodes"
assert_eq "/dev/nvidiactl /dev/nvidia-uvm /dev/nvidia-uvm-tools" \
  "$(jq -r '[.containerEdits.deviceNodes[].path] | join(" ")' <<<"$spec")" "the shared control nodes"
assert_eq "[]" "$(jq -c '[.. | objects | (.mounts?, .hooks?, .env?, .hostPath?) | select(. != null)]' <<<"$spec")" \
  "no mounts, hooks, environment or host paths"

step "the spec validates against the CDI JSON schema (v1.1.0), and an invalid one does not"
python3 -c 'import jsonschema' 2>/dev/null || skip "python3-jsonschema is not installed (scripts/setup --tests)"
# validate FILE: the schema's "defs.json#" references made local, so no resolver API is needed.
validate() {
  python3 - "$HWIMG_SOURCE_DIR/tests/data/cdi" "$1" <<'EOF'
import json, sys
import jsonschema
schema_dir, spec_file = sys.argv[1], sys.argv[2]
schema = json.load(open(f"{schema_dir}/schema.json"))
schema["definitions"] = json.load(open(f"{schema_dir}/defs.json"))["definitions"]
text = json.dumps(schema).replace('"defs.json#/definitions/', '"#/definitions/')
jsonschema.Draft7Validator(json.loads(text)).validate(json.load(open(spec_file)))
EOF
}
printf '%s\n' "$spec" >"$TEST_TMP/spec.json"
validate "$TEST_TMP/spec.json" || fail "the generated spec does not validate against the CDI schema"
jq '.devices[0].containerEdits.deviceNodes[0].path = 7' "$TEST_TMP/spec.json" >"$TEST_TMP/bad.json"
if validate "$TEST_TMP/bad.json" 2>/dev/null; then fail "the schema check accepts a numeric device path"; fi

step "cdi generate -o: the same bytes, atomically, into a directory it creates; no GPU is an error"
run_hwimg cdi generate --host "$mixed" -o "$TEST_TMP/etc/cdi/hwimg.yaml"
assert_eq 0 "$STATUS" "cdi generate -o ($ERR)"
assert_eq "$spec" "$(cat "$TEST_TMP/etc/cdi/hwimg.yaml")" "the written spec"
run_hwimg cdi generate --host "$no_gpu" -o "$TEST_TMP/etc/cdi/none.yaml"
assert_eq 1 "$STATUS" "cdi generate on a host without GPUs"
assert_eq "hwimg: error: failed to generate CDI spec: the host has no NVIDIA GPU" "$ERR" "its error"
[ ! -e "$TEST_TMP/etc/cdi/none.yaml" ] || fail "a refused spec left a file"

step "podman's CDI library (podman 4.3) reads the spec: stand-in nodes, a sandboxed podman"
require_root
require_tool podman
require_tool flock
# podman 4.3 reads specs only from /etc/cdi and /var/run/cdi (no cdi_spec_dirs yet): the spec goes
# there for the suite's run, one run at a time (under the lock, what a killed run left is removed),
# and a spec of the host's own for this kind would compete with it.
cdi_dir=/var/run/cdi
exec 9>/run/lock/hwimg-test-cdi.lock
flock -w 600 9 || fail "another run of this suite holds /run/lock/hwimg-test-cdi.lock"
rm -f "$cdi_dir"/hwimg-test-*.json
if grep -rqs '"hwimg.org/gpu"\|kind: *hwimg.org/gpu' /etc/cdi "$cdi_dir"; then
  skip "this host already has a CDI spec of kind hwimg.org/gpu in /etc/cdi or $cdi_dir"
fi
devroot=$TEST_TMP/devroot
mkdir -p "$devroot/dev"
# NVIDIA's majors and minors (docs/running.md#device-nodes); nvidia-uvm's major is dynamic, any will do.
mknod "$devroot/dev/nvidiactl" c 195 255 && mknod "$devroot/dev/nvidia0" c 195 0 &&
  mknod "$devroot/dev/nvidia1" c 195 1 && mknod "$devroot/dev/nvidia-uvm" c 509 0 &&
  mknod "$devroot/dev/nvidia-uvm-tools" c 509 1 || skip "cannot make device nodes under $TEST_TMP (mknod)"
[ -d "$cdi_dir" ] || { mkdir -p "$cdi_dir" && add_cleanup "rmdir '$cdi_dir' 2>/dev/null || true"; }
spec_file=$cdi_dir/hwimg-test-$$.json
add_cleanup "rm -f '$spec_file'"
HWIMG_DEV_ROOT=$devroot "$HWIMG" cdi generate --host "$mixed" -o "$spec_file"
assert_eq "$devroot/dev/nvidia1" "$(jq -r '.devices[1].containerEdits.deviceNodes[0].hostPath' "$spec_file")" \
  "HWIMG_DEV_ROOT's hostPath"
validate "$spec_file" || fail "the spec with host paths does not validate against the CDI schema"

podman_store
tar -cf "$TEST_TMP/empty.tar" -T /dev/null
podman_ import -q "$TEST_TMP/empty.tar" localhost/hwimg-cdi-empty:1 >/dev/null 2>&1 ||
  skip "podman cannot import an image here: $(podman_ import "$TEST_TMP/empty.tar" 2>&1 | tail -2)"

# devices_of DEVICE: creates and inits a container asking for DEVICE; prints the device nodes of
# its OCI config as "path major:minor". podman resolves CDI devices when it writes that config, just
# before runc runs (which fails in this sandbox, on rlimits, after the config is written).
devices_of() {
  local id
  id=$(podman_ create -q --device "$1" localhost/hwimg-cdi-empty:1 /none)
  set +e
  INIT=$(podman_ init "$id" 2>&1)
  set -e
  if [[ "$INIT" == *CDI* ]]; then fail "podman refused $1: $INIT"; fi
  # The container's OCI config, in the vfs store's layout (podman inspect leaves it out here).
  local config=$pod/root/vfs-containers/$id/userdata/config.json
  [ -f "$config" ] || fail "podman wrote no OCI config for $1 ($INIT)"
  jq -r '[.linux.devices[] | "\(.path) \(.major):\(.minor)"] | join(", ")' "$config"
}
ctl="/dev/nvidiactl 195:255, /dev/nvidia-uvm 509:0, /dev/nvidia-uvm-tools 509:1"
assert_eq "$ctl, /dev/nvidia0 195:0, /dev/nvidia1 195:1" "$(devices_of hwimg.org/gpu=all)" "hwimg.org/gpu=all"
assert_eq "$ctl, /dev/nvidia1 195:1" "$(devices_of hwimg.org/gpu=1)" "hwimg.org/gpu=1"
assert_eq "$ctl, /dev/nvidia0 195:0" "$(devices_of hwimg.org/gpu=GPU-22222222-0000-0000-0000-000000000000)" \
  "hwimg.org/gpu=<uuid of GPU 0>"
podman_ create -q --name unknown --device hwimg.org/gpu=7 localhost/hwimg-cdi-empty:1 /none >/dev/null
expect_failure podman_ init unknown
assert_contains "$OUT" "unresolvable CDI devices hwimg.org/gpu=7" "a device the spec does not have"
echo "PASS"
