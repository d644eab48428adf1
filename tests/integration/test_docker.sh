#!/usr/bin/env bash
# Docker, the client a node's first command names (issue 28): a private dockerd (Debian's docker.io)
# pulls from a TLS + htpasswd registry with the credentials of `hwimg login`. `docker run $(hwimg
# select REF)` runs the variant select picks; `docker pull` of serve's path form gets the variant
# select picks for serve's facts, while a plain `docker pull` of the tag gets the variant-less
# baseline; `docker load` of a docker-archive export runs under its source's name; an oci-archive
# export loads where the daemon is Docker 25 or later (docs/compatibility.md#image-archives).
source "$(dirname "$0")/lib.sh"
require_root
require_tool dockerd
require_tool docker
source "$(dirname "$0")/registry_lib.sh"
source "$(dirname "$0")/serve_lib.sh"

# start_dockerd: Debian's dockerd with its own data root, exec root, pid file and socket under
# $TEST_TMP/dockerd, an empty configuration file (not /etc/docker/daemon.json), no bridge, no
# iptables rules, vfs storage; stopped at exit. Exports DOCKER_HOST for the docker client on PATH;
# skips the suite where the daemon cannot start.
start_dockerd() {
  dockerd_dir="$TEST_TMP/dockerd"
  mkdir -p "$dockerd_dir"
  export DOCKER_HOST="unix://$dockerd_dir/docker.sock"
  # dockerd creates /run/docker/plugins whatever its exec root; removed again unless it was there.
  [ -d /run/docker ] || add_cleanup "rmdir /run/docker/plugins /run/docker 2>/dev/null"
  local flags=(--config-file "$dockerd_dir/daemon.json" --data-root "$dockerd_dir/data"
    --exec-root "$dockerd_dir/exec" --pidfile "$dockerd_dir/dockerd.pid" -H "$DOCKER_HOST"
    --bridge=none --iptables=false --ip6tables=false --storage-driver=vfs)
  # Before Docker 23 the daemon writes a trust key to /etc/docker/key.json unless its configuration
  # file names another path (Debian's 20.10 has no flag for it); later ones have no such key, and
  # refuse the setting, so they get an empty configuration.
  printf '{"deprecated-key-path": "%s/key.json"}\n' "$dockerd_dir" >"$dockerd_dir/daemon.json"
  try_dockerd "${flags[@]}" ||
    { grep -q "don't match any configuration option: deprecated-key-path" "$dockerd_dir/dockerd.log" &&
      echo '{}' >"$dockerd_dir/daemon.json" && try_dockerd "${flags[@]}"; } ||
    skip "dockerd cannot start here: $(tail -3 "$dockerd_dir/dockerd.log")"
}

# try_dockerd FLAGS...: starts dockerd and waits up to 30 s for its API; its log is
# $dockerd_dir/dockerd.log.
try_dockerd() {
  dockerd "$@" >"$dockerd_dir/dockerd.log" 2>&1 &
  local pid=$!
  add_cleanup "stop_dockerd $pid"
  for _ in $(seq 1 150); do
    docker version --format '{{.Server.Version}}' >/dev/null 2>&1 && return 0
    kill -0 "$pid" 2>/dev/null || return 1
    sleep 0.2
  done
  return 1
}

# stop_dockerd PID: SIGTERM (dockerd stops its containers and its containerd and unmounts its data
# root), SIGKILL after 20 s; whatever stayed mounted under $TEST_TMP is then unmounted.
stop_dockerd() {
  kill "$1" 2>/dev/null || return 0
  for _ in $(seq 1 100); do kill -0 "$1" 2>/dev/null || break; sleep 0.2; done
  kill -9 "$1" 2>/dev/null || true
  wait "$1" 2>/dev/null || true
  awk -v t="$TEST_TMP/" 'index($2, t) == 1 {print $2}' /proc/mounts | sort -r | xargs -r umount -l
}

# trust_registry_ca HOST:PORT CERT: a root dockerd reads a registry's CA only from
# /etc/docker/certs.d/HOST:PORT/ca.crt (no flag moves it); the port is this test's own, and the
# directory goes at exit.
trust_registry_ca() {
  local certs_dir="/etc/docker/certs.d/$1"
  [ ! -e "$certs_dir" ] || fail "$certs_dir exists already"
  add_cleanup "rm -rf '$certs_dir'; rmdir /etc/docker/certs.d 2>/dev/null"
  mkdir -p "$certs_dir"
  cp "$2" "$certs_dir/ca.crt"
}

# run_image NAME: `docker run --rm NAME`; its output in $RAN.
run_image() {
  RAN=$(timeout 120 docker run --rm "$1" 2>&1) || fail "docker run $1 failed: $RAN"
}

step "a private dockerd: own data root, exec root and socket, vfs, no bridge"
start_dockerd
daemon_version=$(docker version --format '{{.Server.Version}}')
echo "dockerd $daemon_version, docker client $(docker version --format '{{.Client.Version}}')"

step "the hello example for five CPU levels in a TLS + htpasswd registry, hwimg login's credentials"
tls_registry
trust_registry_ca "$reg" "$dir/cert.pem"
hw_ok login "$reg" --username hwimg --password-stdin "${tls[@]}" <"$dir/password"
cp -a "$HWIMG_SOURCE_DIR/tests/data/recipes/hello" "$TEST_TMP/hello"
SOURCE_DATE_EPOCH=1700000000 "$HWIMG" build "$TEST_TMP/hello/hello.yaml" \
  --matrix "$HWIMG_SOURCE_DIR/matrix/cpu-levels.yaml" -o "$TEST_TMP/layout" --tag 1.0 -j 2 >/dev/null
hw_ok push "${tls[@]}" "oci:$TEST_TMP/layout:1.0" "$reg/demo/hello:1.0"
image="$reg/demo/hello:1.0"
# variant_digest ID: the digest of the variant's manifest in the registry.
variant_digest() {
  echo "sha256:$(skopeo inspect --raw --cert-dir "$certs" --creds "hwimg:$password" \
    "docker://$image-$1" | sha256sum | cut -d' ' -f1)"
}
# config_digest ID: the digest of the variant's config, which is the image ID of a graph-driver
# store such as vfs (Docker's containerd image store would name images by manifest instead).
config_digest() {
  skopeo inspect --raw --cert-dir "$certs" --creds "hwimg:$password" "docker://$image-$1" | jq -r .config.digest
}

step "docker run \$(hwimg select REF) runs the variant select picks for this host"
hw_ok select "${tls[@]}" --format json "$image"
picked=$(jq -r .variant <<<"$OUT")
hw_ok select "${tls[@]}" "$image"
selected=$OUT
assert_eq "$reg/demo/hello@$(variant_digest "$picked")" "$selected" "select's reference"
run_image "$("$HWIMG" select "${tls[@]}" "$image")"
assert_contains "$RAN" "hello from $picked: default-arg" "the container's output"
echo "select picked $picked for this host; the container printed: $(head -1 <<<"$RAN")"
assert_eq "$selected" "$(docker image inspect --format '{{index .RepoDigests 0}}' "$selected")" "the image Docker pulled"

step "docker pull of serve's path form gets the variant select picks for serve's facts"
facts_file "$TEST_TMP/v2.json" x86-64-v2
hw_ok select "${tls[@]}" --host "$TEST_TMP/v2.json" --format json "$image"
assert_eq cpu-x86-64-v2 "$(jq -r .variant <<<"$OUT")" "select --host for an x86-64-v2 node"
v2=$(jq -r .digest <<<"$OUT")
# A path component cannot hold a port, so the registry is named by an alias (docs/serve.md#requests);
# Docker speaks plain HTTP to 127.0.0.0/8 and sends the mirror no credentials: serve uses the node's.
start_serve v2 --upstream "registry.test=$reg" "${tls[@]}" --docker-config "$DOCKER_CONFIG" --host "$TEST_TMP/v2.json"
through="$SERVE_ADDR/registry.test/demo/hello:1.0"
docker pull -q "$through" >/dev/null
assert_eq "$SERVE_ADDR/registry.test/demo/hello@$v2" \
  "$(docker image inspect --format '{{index .RepoDigests 0}}' "$through")" "the digest Docker pulled"
assert_eq "$(config_digest cpu-x86-64-v2)" "$(docker image inspect --format '{{.Id}}' "$through")" "the image's config"
run_image "$through"
assert_contains "$RAN" "hello from cpu-x86-64-v2: default-arg" "the container's output"
assert_contains "$(cat "$SERVE_LOG")" "$image -> variant cpu-x86-64-v2 $v2" "serve's resolution line"
stop_serve

step "a plain docker pull of the tag gets the variant-less baseline, whatever the host"
docker pull -q "$image" >/dev/null
# Docker records the index's digest for a pull through an index; the image is the entry it took.
assert_eq "$(config_digest cpu-x86-64-v1)" "$(docker image inspect --format '{{.Id}}' "$image")" "the image Docker pulled"
run_image "$image"
assert_contains "$RAN" "hello from cpu-x86-64-v1: default-arg" "the container's output"
docker rmi "$image" >/dev/null

step "docker load of a docker-archive export runs under its source's name"
hw_ok export "${tls[@]}" --format docker-archive --variant cpu-x86-64-v3 -o "$TEST_TMP/hello-v3.tar" "$image"
expect_failure docker image inspect "$image"
loaded=$(docker load -i "$TEST_TMP/hello-v3.tar")
assert_contains "$loaded" "Loaded image: $image" "docker load's report"
assert_eq "$(config_digest cpu-x86-64-v3)" "$(docker image inspect --format '{{.Id}}' "$image")" "the loaded image"
run_image "$image"
assert_contains "$RAN" "hello from cpu-x86-64-v3: default-arg" "the loaded image's output"
docker rmi "$image" >/dev/null

step "an oci-archive export loads where the daemon is Docker 25 or later"
hw_ok export "${tls[@]}" --format oci-archive --variant cpu-x86-64-v2 -o "$TEST_TMP/hello-v2-oci.tar" "$image"
if [ "${daemon_version%%.*}" -ge 25 ]; then
  loaded=$(docker load -i "$TEST_TMP/hello-v2-oci.tar")
  assert_contains "$loaded" "Loaded image: $image" "docker load's report"
  run_image "$image"
  assert_contains "$RAN" "hello from cpu-x86-64-v2: default-arg" "the loaded image's output"
else
  # Before 25 the loader reads only manifest.json, which an oci-archive lacks.
  expect_failure docker load -i "$TEST_TMP/hello-v2-oci.tar"
  echo "SKIPPED (not failed): docker load of an oci-archive needs Docker >= 25; this daemon is $daemon_version" \
    "and refuses it ($(tail -1 <<<"$OUT")), as docs/compatibility.md#image-archives says"
fi

assert_no_secret "$password"
echo PASS
