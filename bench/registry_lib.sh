# Shared by the benches that time registry work (base, copy, push, remote; sourced): wall-clock
# timing, medians, local registries (TLS + htpasswd) that hwimg and skopeo both log in to, and
# delay proxies that make them look remote. The caller sets `root` (the checkout) and `work` (a
# temporary directory), and calls bench_cleanup from its EXIT trap.

BENCH_REGISTRIES=()
BENCH_PIDS=()  # background processes (proxies, token services, mirrors) bench_cleanup ends

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

# bench_registry DIR [OPTIONS]: starts a registry in DIR (OPTIONS as run-registry.sh start takes
# them, e.g. --token-realm URL; DIR/certs then is a skopeo cert dir), adds its credentials to
# $DOCKER_CONFIG/config.json (0600) and its CA to $work/ca.pem for --ca-file; its address in
# $address (not printed: a $(...) subshell would lose the cleanup list).
bench_registry() {
  local dir=$1; shift
  address=$("$root/registry/run-registry.sh" start "$dir" "$@")
  BENCH_REGISTRIES+=("$dir")
  mkdir -p "$dir/certs"
  cp "$dir/cert.pem" "$dir/certs/ca.crt"
  bench_auth "$address" "$(cat "$dir/password")"
  cat "$dir/cert.pem" >>"$work/ca.pem"
}

# bench_auth HOST[:PORT] PASSWORD: stores user hwimg's credentials for that registry name in
# $DOCKER_CONFIG/config.json (0600; hwimg, and skopeo with --authfile, read them).
bench_auth() {
  local config="$DOCKER_CONFIG/config.json"
  mkdir -p "$DOCKER_CONFIG"
  [ -s "$config" ] || echo '{"auths":{}}' >"$config"
  python3 - "$config" "$1" "$2" <<'PY'
import base64, json, sys
path, address, password = sys.argv[1:]
config = json.load(open(path))
config["auths"][address] = {"auth": base64.b64encode(f"hwimg:{password}".encode()).decode()}
json.dump(config, open(path, "w"))
PY
  chmod 600 "$config"  # hwimg warns of credentials others can read
}

# bench_delay_proxy NAME UPSTREAM RTT_MS [OPTIONS]: bench/delay_proxy.py in front of UPSTREAM
# (HOST:PORT) adding RTT_MS per round trip (OPTIONS: --rate-mib N, ...), logging its connections
# to $work/NAME.proxy.log; its address, localhost:PORT, in $proxy (a name clients resolve; the
# registries' certificates hold DNS:localhost). $BENCH_HOST_NAME, when set, replaces localhost
# (a name that resolves to 127.0.0.1 and that the certificates hold).
bench_delay_proxy() {
  local name=$1 upstream=$2 rtt=$3; shift 3
  local port_file="$work/$name.proxy.port"
  python3 "$root/bench/delay_proxy.py" --upstream "$upstream" --rtt-ms "$rtt" --port-file "$port_file" \
    --log "$work/$name.proxy.log" "$@" &
  BENCH_PIDS+=($!)
  local _
  for _ in $(seq 1 100); do [ -s "$port_file" ] && break; sleep 0.05; done
  [ -s "$port_file" ] || { echo "bench: the delay proxy $name did not start" >&2; exit 1; }
  touch "$work/$name.proxy.log"
  proxy="${BENCH_HOST_NAME:-localhost}:$(cat "$port_file")"
}

# bench_stop_registry DIR: stops one started by bench_registry (and drops its data).
bench_stop_registry() {
  "$root/registry/run-registry.sh" stop "$1" || true
  local kept=() dir
  for dir in "${BENCH_REGISTRIES[@]}"; do [ "$dir" = "$1" ] || kept+=("$dir"); done
  BENCH_REGISTRIES=("${kept[@]}")
}

bench_cleanup() {
  local dir pid
  for pid in "${BENCH_PIDS[@]}"; do { kill "$pid" && wait "$pid"; } 2>/dev/null || true; done
  for dir in "${BENCH_REGISTRIES[@]}"; do "$root/registry/run-registry.sh" stop "$dir" || true; done
  rm -rf "$work"
}
