#!/usr/bin/env bash
# containerd pulls a multi-variant tag through `hwimg serve` (issue 12): Debian's containerd with
# its own root, state and socket, a hosts.toml whose answer is final (the upstream only for
# digests), `ctr image pull --hosts-dir` of the plain tag from the TLS + htpasswd registry, and
# `ctr run` of what it got. Two sets of facts give two variants from the same tag; pull secrets
# (`ctr --user`) pass through the mirror to a registry the node has no credentials for. With the
# mirror down the pull fails; with the upstream as the next host (docs/serve.md#a-fallback-to-the-upstream)
# it works, and yields the baseline variant. Images made by others, with `--foreign select` (issue 28):
# a buildx-style index (linux/amd64, /v2 ... /v4 entries, no org.hwimg.*) gives the entry `select`
# picks where containerd alone takes the variant-less one, and a CUDA image's entry is the one whose
# NVIDIA_REQUIRE_CUDA the node's driver meets; with none, the pull fails and serve says why.
source "$(dirname "$0")/lib.sh"
source "$(dirname "$0")/registry_lib.sh"
source "$(dirname "$0")/serve_lib.sh"
require_root
require_tool containerd
require_tool ctr
require_tool runc

start_registry ctd
dir=$REG_ctd_DIR
reg=$(cat "$dir/address")
password=$(cat "$dir/password")
export DOCKER_CONFIG="$TEST_TMP/push-docker"
tls=(--ca-file "$dir/cert.pem")
hw_ok login "$reg" --username hwimg --password-stdin "${tls[@]}" < "$dir/password"

step "the stencil's variants in the registry"
export SOURCE_DATE_EPOCH=1700000000
"$HWIMG" build "$HWIMG_SOURCE_DIR/recipes/stencil.yaml" -o "$TEST_TMP/stencil" --tag 1.0 -j 2 > /dev/null
hw_ok push "${tls[@]}" "oci:$TEST_TMP/stencil:1.0" "$reg/demo/stencil:1.0"
variant_digest() {
  echo "sha256:$(skopeo inspect --raw --tls-verify=false --creds "hwimg:$password" \
    "docker://$reg/demo/stencil:1.0-cpu-$1" | sha256sum | cut -d' ' -f1)"
}
v2=$(variant_digest x86-64-v2)
v3=$(variant_digest x86-64-v3)

step "containerd with its own root, state and socket"
start_containerd
# Overlay mounts are not available in every sandbox; the native snapshotter copies instead.
snapshotter=native

# hosts_for MIRROR: the hosts dir that sends every tag of $reg to the mirror (the upstream itself
# only for digests, so the mirror's answer is final).
hosts_for() {
  mkdir -p "$ctd/hosts/$reg"
  cat > "$ctd/hosts/$reg/hosts.toml" <<EOF
server = "https://$reg"
capabilities = ["pull"]
ca = "$dir/cert.pem"

[host."http://$1"]
  capabilities = ["pull", "resolve"]
EOF
}

# pull IMAGE [CTR PULL ARGS...]: pulls IMAGE afresh through the hosts dir; sets PULLED (the digest
# containerd recorded).
pull() {
  local image=$1; shift
  ctr_ image rm "$image" > /dev/null 2>&1 || true
  ctr_ image pull --hosts-dir "$ctd/hosts" --snapshotter "$snapshotter" "$@" "$image" \
    > "$TEST_TMP/pull.log" 2>&1 || fail "ctr image pull of $image failed: $(tail -5 "$TEST_TMP/pull.log")"
  PULLED=$(ctr_ image ls | awk -v r="$image" '$1 == r {print $3}')
}

# pull_and_run NAME [CTR PULL ARGS...]: pulls the plain tag through the hosts dir and runs it; sets
# PULLED and RAN (the container's first line).
pull_and_run() {
  local name=$1; shift
  pull "$reg/demo/stencil:1.0" "$@"
  local try
  # ctr 1.6 now and then exits before it copied a short-lived container's output (an empty log with
  # status 0; seen once in some dozen runs here): a second run tells that from a container that printed nothing.
  for try in 1 2; do
    timeout 120 ctr --address "$ctd/containerd.sock" run --rm --snapshotter "$snapshotter" "$reg/demo/stencil:1.0" \
      "run-$name-$try" /opt/stencil/bin/stencil --size 64 --sweeps 2 > "$TEST_TMP/run.log" 2>&1 ||
      fail "ctr run failed: $(tail -5 "$TEST_TMP/run.log")"
    RAN=$(head -1 "$TEST_TMP/run.log")
    [ -z "$RAN" ] || break
    echo "NOTE: ctr run printed nothing (run $try)"
  done
}

facts_file "$TEST_TMP/v3.json" x86-64-v3
facts_file "$TEST_TMP/v2.json" x86-64-v2
# The mirror has no credentials of its own here: containerd's (ctr --user, as kubelet's pull
# secrets) answer the upstream's challenge, which the mirror passes through.
mkdir -p "$TEST_TMP/no-credentials"
no_credentials=(--docker-config "$TEST_TMP/no-credentials")

step "facts of an x86-64-v3 node: containerd pulls and runs the v3 variant"
start_serve v3 --upstream "$reg" "${tls[@]}" "${no_credentials[@]}" --host "$TEST_TMP/v3.json"
hosts_for "$SERVE_ADDR"
pull_and_run v3 --user "hwimg:$password"
assert_eq "$v3" "$PULLED" "the digest containerd pulled"
assert_contains "$RAN" "built for x86-64-v3 (variant cpu-x86-64-v3)" "the container's variant"
stop_serve

step "facts of an x86-64-v2 node: the same tag gives the v2 variant"
start_serve v2 --upstream "$reg" "${tls[@]}" "${no_credentials[@]}" --host "$TEST_TMP/v2.json"
hosts_for "$SERVE_ADDR"
pull_and_run v2 --user "hwimg:$password"
assert_eq "$v2" "$PULLED" "the digest containerd pulled"
assert_contains "$RAN" "built for x86-64-v2 (variant cpu-x86-64-v2)" "the container's variant"

step "the node's own credentials serve a client that sends none"
stop_serve
start_serve node --upstream "$reg" "${tls[@]}" --docker-config "$TEST_TMP/push-docker" --host "$TEST_TMP/v3.json"
hosts_for "$SERVE_ADDR"
pull_and_run node
assert_eq "$v3" "$PULLED" "the digest containerd pulled without credentials of its own"
assert_contains "$RAN" "built for x86-64-v3 (variant cpu-x86-64-v3)" "the container's variant"
stop_serve

step "a nothing-fits answer stops the pull: the upstream is not asked for the tag"
printf '{"schema": 1, "os": "linux", "cpu": {"arch": "arm64", "vendor": "ARM", "features": ["asimd"]}, "nvidia": null}\n' \
  > "$TEST_TMP/arm.json"
start_serve arm --upstream "$reg" "${tls[@]}" --docker-config "$TEST_TMP/push-docker" --host "$TEST_TMP/arm.json"
hosts_for "$SERVE_ADDR"
ctr_ image rm "$reg/demo/stencil:1.0" > /dev/null 2>&1 || true
mark=$(wc -l < "$dir/registry.log")
expect_failure ctr_ image pull --hosts-dir "$ctd/hosts" --snapshotter "$snapshotter" "$reg/demo/stencil:1.0"
assert_contains "$OUT" "not found" "containerd's error for a tag with no fitting variant"
since=$(tail -n +"$((mark + 1))" "$dir/registry.log")
assert_eq 0 "$(grep -c '"HEAD /v2/demo/stencil/manifests/1.0' <<<"$since" || true)" "containerd's own HEADs of the tag upstream"
assert_eq 1 "$(grep -c '"GET /v2/demo/stencil/manifests/1.0[^"]*" 200' <<<"$since" || true)" "the mirror's GETs of the tag"
stop_serve

step "the mirror down: the tag cannot be pulled; with the upstream as the next host, the baseline"
v1=$(variant_digest x86-64-v1)
closed=$(python3 -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1]); s.close()')
hosts_for "127.0.0.1:$closed"
ctr_ image rm "$reg/demo/stencil:1.0" > /dev/null 2>&1 || true
expect_failure ctr_ image pull --hosts-dir "$ctd/hosts" --snapshotter "$snapshotter" --user "hwimg:$password" \
  "$reg/demo/stencil:1.0"
assert_contains "$OUT" "connection refused" "containerd's error while the mirror is down"
# The fallback: the server keeps its default capabilities, so it also resolves tags.
sed -i '/^capabilities = \["pull"\]$/d' "$ctd/hosts/$reg/hosts.toml"
pull_and_run fallback --user "hwimg:$password"
assert_contains "$RAN" "built for x86-64-v1 (variant cpu-x86-64-v1)" "the baseline, whatever the node runs"
assert_eq "$v1" "$(ctr_ content ls | awk -v d="$v1" '$1 == d {print $1}')" "the baseline's manifest in the content store"

step "--foreign select: a buildx-style index (linux/amd64, /v2, /v3, /v4; no org.hwimg.*) gives select's entry"
certs="$TEST_TMP/certs"
mkdir -p "$certs"
cp "$dir/cert.pem" "$certs/ca.crt"
to_registry=(--dest-cert-dir "$certs" --dest-creds "hwimg:$password")
push_foreign buildx "$HWIMG_SOURCE_DIR/tests/data/select/buildx-levels.json" "$reg/others/buildx:1.0" "${to_registry[@]}"
node=(--upstream "$reg" "${tls[@]}" --docker-config "$TEST_TMP/push-docker")
# Without it the index passes through, and containerd picks by os and architecture alone (it
# detects no amd64 level, containerd/containerd#9506): the variant-less entry, on any node.
start_serve buildx-pass "${node[@]}" --host "$TEST_TMP/v3.json"
hosts_for "$SERVE_ADDR"
pull "$reg/others/buildx:1.0"
assert_eq "$(foreign_digest buildx)" "$PULLED" "the image containerd recorded without --foreign select"
content=$(ctr_ content ls -q)
assert_contains "$content" "$(foreign_digest buildx v1)" "the entry it fetched: the baseline"
[[ "$content" != *"$(foreign_digest buildx v3)"* ]] || fail "containerd fetched the v3 entry by itself"
stop_serve
for level in v2 v3; do
  start_serve "buildx-$level" "${node[@]}" --host "$TEST_TMP/$level.json" --foreign select
  hosts_for "$SERVE_ADDR"
  pull "$reg/others/buildx:1.0"
  assert_eq "$(foreign_digest buildx "$level")" "$PULLED" "the entry containerd recorded on an x86-64-$level node"
  stop_serve
done

step "--foreign select: a CUDA image's entry by its NVIDIA_REQUIRE_CUDA and the node's driver"
data="$HWIMG_SOURCE_DIR/tests/data/select"
push_foreign cuda "$data/cuda-requirements.json" "$reg/others/cuda:12" "${to_registry[@]}"
# Driver 580 (CUDA 13.0) meets cuda>=12.4; 535 (CUDA 12.2, GPUs of brand NVIDIA, not Tesla) only cuda>=12.2.
for node_entry in host-h100-580:cuda12.4 host-h100-535:cuda12.2; do
  start_serve "${node_entry%:*}" "${node[@]}" --host "$data/${node_entry%:*}.json" --foreign select
  hosts_for "$SERVE_ADDR"
  pull "$reg/others/cuda:12"
  assert_eq "$(foreign_digest cuda "${node_entry#*:}")" "$PULLED" "the entry containerd recorded on the ${node_entry%:*} node"
  stop_serve
done
jq '.nvidia.driver_version = "470.82.01" | .nvidia.cuda_driver_version = "11.4"' "$data/host-h100-535.json" \
  > "$TEST_TMP/470.json"
start_serve cuda-470 "${node[@]}" --host "$TEST_TMP/470.json" --foreign select
hosts_for "$SERVE_ADDR"
ctr_ image rm "$reg/others/cuda:12" > /dev/null 2>&1 || true
expect_failure ctr_ image pull --hosts-dir "$ctd/hosts" --snapshotter "$snapshotter" "$reg/others/cuda:12"
assert_contains "$OUT" "not found" "containerd's error when no entry fits the driver"
fetch "http://$SERVE_ADDR/v2/others/cuda/manifests/12"
assert_eq "404 MANIFEST_UNKNOWN" "$CODE $(jq -r '.errors[0].code' "$BODY_FILE")" "the mirror's answer containerd got"
reason="NVIDIA_REQUIRE_CUDA: unsatisfied condition: cuda>=12.2; host driver 470.82.01 supports CUDA 11.4"
assert_contains "$(jq -r '.errors[0].message' "$BODY_FILE")" "$reason" "the reason in the answer"
# Both entries are linux/amd64 and nobody labelled them: the answer tells them apart by digest.
for entry in cuda12.2 cuda12.4; do
  digest=$(foreign_digest cuda "$entry")
  assert_contains "$(jq -r '.errors[0].message' "$BODY_FILE")" "linux/amd64 (${digest:0:19}): NVIDIA_REQUIRE_CUDA" \
    "the answer's words for the $entry entry"
done
assert_contains "$(cat "$SERVE_LOG")" "$reg/others/cuda:12 -> no variant runs on this node" "serve's log line"
assert_contains "$(cat "$SERVE_LOG")" "rejected  $reason" "serve's log explains each entry"
stop_serve

assert_no_secret "$password"
echo PASS
