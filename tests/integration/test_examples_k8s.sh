#!/usr/bin/env bash
# examples/k8s: the DaemonSet's own `hwimg probe --format nfd --output` command writes a feature
# file that Node Feature Discovery accepts (docs/compatibility.md#nfd-labels): names, prefixes, values,
# size, written by rename; and it carries every label the workloads select on: hwimg.org's, and the
# NFD (feature.node.kubernetes.io) and GPU Feature Discovery (nvidia.com) names hwimg writes too.
# (The YAML structure is checked by tests/unit/test_examples_files.cpp.)
source "$(dirname "$0")/lib.sh"
K8S=$HWIMG_SOURCE_DIR/examples/k8s
features_d=/etc/kubernetes/node-feature-discovery/features.d

step "the DaemonSet runs hwimg probe into NFD's features.d"
command=$(grep -oE "hwimg probe --format nfd --output $features_d/[A-Za-z0-9_-]+" "$K8S/nfd-hwimg-daemonset.yaml")
assert_eq "hwimg probe --format nfd --output $features_d/hwimg" "$command" "the probe command"
assert_contains "$(cat "$K8S/nfd-hwimg-daemonset.yaml")" "path: $features_d" "hostPath"

# nfd_check FILE: every rule nfd-worker and nfd-master apply to a `local` feature file.
nfd_check() {
  local file=$1 line name value prefix label
  [ "$(stat -c %s "$file")" -le 65536 ] || fail "$file is over 65536 bytes: nfd-worker ignores it"
  local part='^[A-Za-z0-9]([-A-Za-z0-9_.]{0,61}[A-Za-z0-9])?$'
  local dns='^[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*$'
  while IFS= read -r line || [ -n "$line" ]; do
    [[ -z ${line// /} || $line == \#* ]] && continue
    name=${line%%=*}
    value=true
    [[ $line == *=* ]] && value=${line#*=}
    [[ $name == */* ]] || fail "[$line]: no prefix (nfd-master would add feature.node.kubernetes.io/)"
    prefix=${name%%/*}
    label=${name#*/}
    [[ $prefix =~ $dns && ${#prefix} -le 253 ]] || fail "[$line]: prefix is not a DNS subdomain"
    # nfd-master denies kubernetes.io prefixes but NFD's own feature/profile ones (validate.go).
    if [[ $prefix == kubernetes.io || $prefix == *.kubernetes.io ]]; then
      [[ $prefix == feature.node.kubernetes.io || $prefix == profile.node.kubernetes.io ||
         $prefix == *.feature.node.kubernetes.io || $prefix == *.profile.node.kubernetes.io ]] ||
        fail "[$line]: a kubernetes.io prefix other than NFD's is denied"
    fi
    [[ $label =~ $part ]] || fail "[$line]: name breaks the label syntax"
    [[ -z $value || $value =~ $part ]] || fail "[$line]: value breaks the label syntax"
    [[ $value != @* ]] || fail "[$line]: nfd-master reads a value starting with @ as a reference"
  done < "$file"
}

# probe_into ROOT [ENV...]: runs the DaemonSet's command with features.d under ROOT.
probe_into() {
  local root=$1; shift
  mkdir -p "$root$features_d"
  env "$@" "$HWIMG" probe --format nfd --output "$root$features_d/hwimg"
}

step "this machine's CPU"
root=$TEST_TMP/node
probe_into "$root"
nfd_check "$root$features_d/hwimg"
labels=$(cat "$root$features_d/hwimg")
assert_contains "$labels" "hwimg.org/cpu.arch=" "cpu.arch"
assert_contains "$labels" "hwimg.org/cpu.level=" "cpu.level"
level_num=$(sed -n 's|^hwimg.org/cpu.level-num=||p' <<<"$labels")
[[ $level_num =~ ^[1-4]$ ]] || fail "cpu.level-num is [$level_num], not a number Gt can compare"
for n in $(seq 1 "$level_num"); do
  assert_contains "$labels" "feature.node.kubernetes.io/cpu-cpuid.X86_64_V$n=true" "NFD's cumulative level V$n"
done
! grep -q "X86_64_V$((level_num + 1))" <<<"$labels" || fail "a level above cpu.level-num is labelled"
assert_eq "hwimg" "$(ls -A "$root$features_d")" "only the feature file, no temporary left (nfd-worker skips dot-files anyway)"

step "the file is replaced by rename, never rewritten in place"
ln "$root$features_d/hwimg" "$TEST_TMP/before"
before_inode=$(stat -c %i "$root$features_d/hwimg")
probe_into "$root"
[ "$(stat -c %i "$root$features_d/hwimg")" != "$before_inode" ] || fail "the feature file was rewritten in place"
assert_eq "$labels" "$(cat "$TEST_TMP/before")" "a reader holding the old file still sees all of it"

step "an H100 node (NVML stand-in) carries every label the workloads select on"
stand_ins=${HWIMG_BUILD_DIR:-}/stand-ins
if [ -e "$stand_ins/nvml-h100/libnvidia-ml.so.1" ]; then
  mkdir -p "$TEST_TMP/empty"
  gpu_root=$TEST_TMP/gpu-node
  probe_into "$gpu_root" HWIMG_NVML_LIBRARY="$stand_ins/nvml-h100/libnvidia-ml.so.1" \
    HWIMG_CUDA_LIBRARY="$stand_ins/cuda-h100/libcuda.so.1" HWIMG_PROC_ROOT="$TEST_TMP/empty" HWIMG_SYS_ROOT="$TEST_TMP/empty"
  nfd_check "$gpu_root$features_d/hwimg"
  gpu_labels=$(cat "$gpu_root$features_d/hwimg")
  assert_contains "$gpu_labels" "hwimg.org/nvidia.gpu.compute-capability.9.0=true" "compute capability label"
  assert_contains "$gpu_labels" "hwimg.org/nvidia.cuda=13.0" "CUDA label"
  assert_contains "$gpu_labels" "nvidia.com/cuda.runtime-version.major=13" "GFD's CUDA label"
  assert_contains "$gpu_labels" "nvidia.com/gpu.compute.major=9" "GFD's compute capability label"
  selected=$(grep -oE '\{key: (hwimg\.org|feature\.node\.kubernetes\.io|nvidia\.com)/[A-Za-z0-9._-]+' \
    "$K8S/workload.yaml" | sed 's/^{key: //' | sort -u)
  grep -q '^nvidia\.com/' <<<"$selected" || fail "no GFD affinity keys found in workload.yaml"
  grep -q '^hwimg\.org/' <<<"$selected" || fail "no hwimg.org affinity keys found in workload.yaml"
  for key in $selected; do
    grep -q "^$key=" <<<"$gpu_labels$(printf '\n')$labels" || fail "workload.yaml selects on $key, which the probe does not write"
  done
else
  echo "note: NVML stand-ins not built in $stand_ins; GPU labels not checked here (the unit test checks them from recorded facts)"
fi

step "the guard: the DaemonSet's facts file, judged by the init container's own hwimg check"
facts=/var/lib/hwimg/node.json
grep -qF "hwimg probe --format json --output $facts" "$K8S/nfd-hwimg-daemonset.yaml" ||
  fail "the DaemonSet does not write $facts"
mkdir -p "$root/var/lib/hwimg"
"$HWIMG" probe --format json --output "$root$facts"
# The guard's command as the Deployment writes it (a JSON array on one or more lines), with the
# registry image replaced by the same variants in a layout and the host's paths under $root.
guard=$(python3 -c 'import sys, yaml; d = yaml.safe_load(open(sys.argv[1])); print("\n".join(d["spec"]["template"]["spec"]["initContainers"][0]["command"]))' \
  "$K8S/guarded-deployment.yaml")
mapfile -t words <<<"$guard"
assert_eq "hwimg check registry.example.org/stencil:1.0-cpu-x86-64-v4 --host $facts" "${words[*]:0:5}" "the guard's command"
printf '[{"id": "cpu-x86-64-v1", "platform": {"os": "linux", "architecture": "amd64"},
   "annotations": {"org.hwimg.variant": "cpu-x86-64-v1", "org.hwimg.cpu.level": "x86-64-v1"}},
  {"id": "cpu-x86-64-v4", "platform": {"os": "linux", "architecture": "amd64", "variant": "v4"},
   "annotations": {"org.hwimg.variant": "cpu-x86-64-v4", "org.hwimg.cpu.level": "x86-64-v4"}}]' > "$TEST_TMP/variants.json"
make_layout "$TEST_TMP/stencil" 1.0 "$TEST_TMP/variants.json" > /dev/null
check_guard() { # check_guard FACTS TAG: the guard's command against the layout's TAG
  "$HWIMG" check "oci:$TEST_TMP/stencil:$2" --host "$1"
}
check_guard "$root$facts" 1.0-cpu-x86-64-v1 > /dev/null || fail "the portable variant does not pass the guard on this node"
jq '.cpu.level = "x86-64-v3" | .cpu.microarch = null | .cpu.features = [.cpu.features[] | select(startswith("avx512") | not)]' \
  "$root$facts" > "$TEST_TMP/v3-node.json"
set +e
reasons=$(check_guard "$TEST_TMP/v3-node.json" 1.0-cpu-x86-64-v4 2>&1)
status=$?
set -e
assert_eq 3 "$status" "the guard's exit status on a node without AVX-512 (the init container fails)"
assert_contains "$reasons" "does not run on the host in $TEST_TMP/v3-node.json" "the reason the termination message carries"
assert_contains "$reasons" "needs AVX-512" "what the variant needs"
echo PASS
