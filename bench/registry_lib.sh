# Shared by the benches that time registry work (base, copy, push; sourced): wall-clock timing,
# medians, and local registries (TLS + htpasswd) that hwimg and skopeo both log in to.
# The caller sets `root` (the checkout) and `work` (a temporary directory), and calls
# bench_cleanup from its EXIT trap.

BENCH_REGISTRIES=()

now() { date +%s.%N; }
elapsed() { python3 -c "print(f'{$2 - $1:.3f}')"; }
median() { printf '%s\n' "$@" | sort -g | awk '{a[NR]=$1} END {print (NR % 2) ? a[(NR+1)/2] : (a[NR/2] + a[NR/2+1]) / 2}'; }

# timed ARRAY COMMAND...: appends the command's wall time to ARRAY; a failure stops the bench
# with the command's output.
timed() {
  local -n into=$1; shift
  local t0 t1
  t0=$(now)
  "$@" >"$work/last.log" 2>&1 || { echo "bench: failed: $*" >&2; cat "$work/last.log" >&2; exit 1; }
  t1=$(now)
  into+=("$(elapsed "$t0" "$t1")")
}

# bench_registry DIR: starts a registry in DIR (DIR/certs then is a skopeo cert dir), adds its
# credentials to $DOCKER_CONFIG/config.json (0600) and its CA to $work/ca.pem for --ca-file; its
# address in $address (not printed: a $(...) subshell would lose the cleanup list).
bench_registry() {
  local dir=$1 config="$DOCKER_CONFIG/config.json"
  address=$("$root/registry/run-registry.sh" start "$dir")
  BENCH_REGISTRIES+=("$dir")
  mkdir -p "$dir/certs" "$DOCKER_CONFIG"
  cp "$dir/cert.pem" "$dir/certs/ca.crt"
  [ -s "$config" ] || echo '{"auths":{}}' >"$config"
  python3 - "$config" "$address" "$(cat "$dir/password")" <<'PY'
import base64, json, sys
path, address, password = sys.argv[1:]
config = json.load(open(path))
config["auths"][address] = {"auth": base64.b64encode(f"hwimg:{password}".encode()).decode()}
json.dump(config, open(path, "w"))
PY
  chmod 600 "$config"  # hwimg warns of credentials others can read
  cat "$dir/cert.pem" >>"$work/ca.pem"
}

# bench_stop_registry DIR: stops one started by bench_registry (and drops its data).
bench_stop_registry() {
  "$root/registry/run-registry.sh" stop "$1" || true
  local kept=() dir
  for dir in "${BENCH_REGISTRIES[@]}"; do [ "$dir" = "$1" ] || kept+=("$dir"); done
  BENCH_REGISTRIES=("${kept[@]}")
}

bench_cleanup() {
  local dir
  for dir in "${BENCH_REGISTRIES[@]}"; do "$root/registry/run-registry.sh" stop "$dir" || true; done
  rm -rf "$work"
}
