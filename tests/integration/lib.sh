# Shared helpers for the integration suites (sourced, not run). ctest sets HWIMG, HWIMG_SOURCE_DIR
# and HWIMG_BUILD_DIR; exit 77 tells ctest the suite was skipped.
set -euo pipefail

: "${HWIMG:?run through ctest, or set HWIMG to the hwimg binary}"
: "${HWIMG_SOURCE_DIR:=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)}"

TEST_TMP=$(mktemp -d "${TMPDIR:-/tmp}/hwimg-test.XXXXXX")
cleanup_hooks=()
on_exit() { # runs registered cleanups in reverse order, then removes the scratch directory
  local i
  for ((i = ${#cleanup_hooks[@]} - 1; i >= 0; i--)); do eval "${cleanup_hooks[$i]}" || true; done
  rm -rf "$TEST_TMP"
}
trap on_exit EXIT
add_cleanup() { cleanup_hooks+=("$1"); }
# What hwimg remembers between commands (token realms, the default blob cache) stays with the suite.
export XDG_CACHE_HOME="$TEST_TMP/xdg-cache"

skip() { echo "SKIP: $*"; exit 77; }
fail() { echo "FAIL: $*" >&2; exit 1; }
step() { echo "--- $*"; }

require_tool() { command -v "$1" >/dev/null 2>&1 || skip "$1 is not installed"; }
require_root() { [ "$(id -u)" = 0 ] || skip "needs root (runc/umoci unpack)"; }

assert_eq() { # assert_eq EXPECTED ACTUAL WHAT
  [ "$1" == "$2" ] || fail "$3: expected [$1], got [$2]"
}
assert_contains() { # assert_contains HAYSTACK NEEDLE WHAT
  [[ "$1" == *"$2"* ]] || fail "$3: expected to contain [$2], got [$1]"
}
# make_layout DIR TAG (SPEC.json | --gpu-matrix N | [--variants N] [--shared-size B] [--variant-size B] [--seed S]):
# writes a test layout shaped like hwimg's (tests/integration/layout_writer.py) and prints the index digest.
make_layout() { python3 "$HWIMG_SOURCE_DIR/tests/integration/layout_writer.py" "$@"; }
# Runs a command that must fail; its combined output lands in $OUT and its status in $STATUS.
expect_failure() {
  set +e
  OUT=$("$@" 2>&1)
  STATUS=$?
  set -e
  [ "$STATUS" -ne 0 ] || fail "expected failure from: $* (output: $OUT)"
}

# start_containerd: a containerd with its own root, state and socket under $TEST_TMP/containerd
# (CRI disabled), stopped at exit; sets ctd (that directory) and defines ctr_ (ctr on its socket).
start_containerd() {
  ctd="$TEST_TMP/containerd"
  mkdir -p "$ctd"
  printf 'version = 2\nroot = "%s/root"\nstate = "%s/state"\ndisabled_plugins = ["io.containerd.grpc.v1.cri"]\n[grpc]\n  address = "%s/containerd.sock"\n' \
    "$ctd" "$ctd" "$ctd" >"$ctd/config.toml"
  containerd --config "$ctd/config.toml" >"$ctd/containerd.log" 2>&1 &
  local pid=$!
  add_cleanup "kill $pid 2>/dev/null; wait $pid 2>/dev/null"
  for _ in $(seq 1 100); do [ -S "$ctd/containerd.sock" ] && break; sleep 0.1; done
  [ -S "$ctd/containerd.sock" ] || fail "containerd did not start: $(tail -5 "$ctd/containerd.log")"
}
ctr_() { ctr --address "$ctd/containerd.sock" "$@"; }

# run_hwimg ARGS...: runs hwimg, whatever its status; stdout in $OUT, stderr in $ERR, status in $STATUS.
run_hwimg() {
  set +e
  OUT=$("$HWIMG" "$@" 2>"$TEST_TMP/stderr")
  STATUS=$?
  set -e
  ERR=$(cat "$TEST_TMP/stderr")
}

# podman_store: podman with its own store, run root, configuration and registries.conf under
# $TEST_TMP/podman (vfs storage; nothing of the host's: no systemd or journald here, so cgroupfs and a
# file for events); defines podman_ (podman with those options) and $pod.
podman_store() {
  pod="$TEST_TMP/podman"
  mkdir -p "$pod"
  printf '[engine]\nevents_logger = "file"\ncgroup_manager = "cgroupfs"\n' >"$pod/containers.conf"
  printf '[storage]\ndriver = "vfs"\ngraphroot = "%s/root"\nrunroot = "%s/run"\n' "$pod" "$pod" >"$pod/storage.conf"
  : >"$pod/registries.conf"
  export CONTAINERS_CONF="$pod/containers.conf" CONTAINERS_STORAGE_CONF="$pod/storage.conf"
  export CONTAINERS_REGISTRIES_CONF="$pod/registries.conf"
  podman_() {
    podman --root "$pod/root" --runroot "$pod/run" --storage-driver vfs --tmpdir "$pod/tmp" "$@"
  }
  add_cleanup "awk -v t='$TEST_TMP/' 'index(\$2, t) == 1 {print \$2}' /proc/mounts | sort -r | xargs -r umount -l"
  # Before that (cleanups run last first): containers podman created, with what they keep open.
  add_cleanup "podman_ rm -a -f >/dev/null 2>&1"
}

# host_levels: the x86-64 levels this machine runs, x86-64-v1 up to the one `hwimg probe` reports,
# one per line. test_probe_cpu.sh checks the probe's level against /proc/cpuinfo and the psABI's
# feature lists; other suites take it from the probe, since the kernel spells some flags
# differently by version and vendor (avx512vbmi2 / avx512_vbmi2).
host_levels() {
  local level
  level=$(HWIMG_CPUID_FILE= "$HWIMG" probe --format json | jq -r .cpu.level)
  case $level in x86-64-v[1-4]) ;; *) fail "hwimg probe reports level [$level]" ;; esac
  seq 1 "${level#x86-64-v}" | sed 's/^/x86-64-v/'
}
