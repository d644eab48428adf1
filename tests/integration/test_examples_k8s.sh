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
echo PASS
