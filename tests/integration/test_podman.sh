#!/usr/bin/env bash
# podman, the containers/image client (issue 28): Debian's podman with its own store, run root,
# configuration, registries.conf and cert dir under $TEST_TMP (vfs storage), credentials from
# `hwimg login`'s config.json. Pulling the tag of a TLS + htpasswd registry through `hwimg serve` as
# the registries.conf `location` rewrite of docs/serve.md#cri-o-and-podman, and as a
# `[[registry.mirror]]`, gets the variant `hwimg select` picks for serve's facts; so does pulling
# serve's path form, where a pull from the registry itself gets the variant-less baseline; with
# `serve --foreign select` (issue 28), so does a buildx-style index made by others (no org.hwimg.*),
# where a pull from the registry itself gets its baseline entry;
# `podman load` of both archive formats names the image after its source.
# `podman run` is not tried: it hits this sandbox's rlimits; digests say which variant arrived.
source "$(dirname "$0")/lib.sh"
require_root
require_tool podman
source "$(dirname "$0")/registry_lib.sh"
source "$(dirname "$0")/serve_lib.sh"

step "podman with its own store, run root, configuration and registries.conf (vfs)"
podman_store
store=$(podman_ info --format '{{.Store.GraphDriverName}} {{.Store.GraphRoot}}' 2>&1) ||
  skip "podman cannot open a store here: $(tail -3 <<<"$store")"
assert_eq "vfs $pod/root" "$store" "podman's store"
echo "podman $(podman_ version --format '{{.Client.Version}}')"

step "the hello example for five CPU levels in a TLS + htpasswd registry, hwimg login's credentials"
tls_registry
hw_ok login "$reg" --username hwimg --password-stdin "${tls[@]}" <"$dir/password"
authfile=(--authfile "$DOCKER_CONFIG/config.json")
cp -a "$HWIMG_SOURCE_DIR/tests/data/recipes/hello" "$TEST_TMP/hello"
SOURCE_DATE_EPOCH=1700000000 "$HWIMG" build "$TEST_TMP/hello/hello.yaml" \
  --matrix "$HWIMG_SOURCE_DIR/matrix/cpu-levels.yaml" -o "$TEST_TMP/layout" --tag 1.0 -j 2 >/dev/null
hw_ok push "${tls[@]}" "oci:$TEST_TMP/layout:1.0" "$reg/demo/hello:1.0"
image="$reg/demo/hello:1.0"
raw() { skopeo inspect --raw --cert-dir "$certs" --creds "hwimg:$password" "docker://$1"; }
variant_digest() { echo "sha256:$(raw "$image-$1" | sha256sum | cut -d' ' -f1)"; }
config_digest() { raw "$image-$1" | jq -r .config.digest; }
# pulled NAME: the manifest digest podman recorded for the image, and its config digest (podman's ID).
pulled() { podman_ image inspect --format '{{.Digest}} sha256:{{.Id}}' "$1"; }
# forget NAME: removes the image, so the next pull or load starts from nothing.
forget() { podman_ rmi -f "$1" >/dev/null 2>&1 || true; }
expected_v2="$(variant_digest cpu-x86-64-v2) $(config_digest cpu-x86-64-v2)"

step "podman pulls the tag from the registry itself (login's config.json, own cert dir): the baseline"
podman_ pull -q --cert-dir "$certs" "${authfile[@]}" "$image" >/dev/null
index="sha256:$(raw "$image" | sha256sum | cut -d' ' -f1)"
# podman records the digest it asked for, the index's; the image is the entry it took by platform alone.
assert_eq "$index $(config_digest cpu-x86-64-v1)" "$(pulled "$image")" "the image podman pulled"
forget "$image"

facts_file "$TEST_TMP/v2.json" x86-64-v2
hw_ok select "${tls[@]}" --host "$TEST_TMP/v2.json" --format json "$image"
assert_eq "cpu-x86-64-v2 $(variant_digest cpu-x86-64-v2)" "$(jq -r '.variant + " " + .digest' <<<"$OUT")" \
  "select --host for an x86-64-v2 node"
# tag_requests: how many requests for a tag serve has answered 200 (its answers are kept for --ttl,
# so a second pull of the tag adds no resolution line to its log).
tag_requests() {
  curl -sS "http://$SERVE_ADDR/metrics" | awk '$1 == "hwimg_serve_requests_total{kind=\"tag\",code=\"200\"}" {print $2}'
}
# A path component cannot hold a port, so serve names the registry by an alias (docs/serve.md#requests);
# containers/image sends the rewritten location no credentials: serve uses the node's.
start_serve v2 --upstream "registry.test=$reg" "${tls[@]}" --docker-config "$DOCKER_CONFIG" --host "$TEST_TMP/v2.json"

step "a tag pulled through serve as the registries.conf location of the registry: select's variant"
printf '[[registry]]\nprefix = "%s"\nlocation = "%s/registry.test"\ninsecure = true\n' "$reg" "$SERVE_ADDR" \
  >"$pod/registries.conf"
podman_ pull -q "$image" >/dev/null
assert_eq "$expected_v2" "$(pulled "$image")" "the image podman pulled by the rewrite"
assert_contains "$(cat "$SERVE_LOG")" "$image -> variant cpu-x86-64-v2 $(variant_digest cpu-x86-64-v2)" \
  "serve's resolution line"
forget "$image"

step "a tag pulled through serve as a [[registry.mirror]] of the registry: select's variant"
cat >"$pod/registries.conf" <<EOF
[[registry]]
prefix = "$reg"
location = "$reg"

[[registry.mirror]]
location = "$SERVE_ADDR/registry.test"
insecure = true
EOF
tags_before=$(tag_requests)
podman_ pull -q --cert-dir "$certs" "${authfile[@]}" "$image" >/dev/null
assert_eq "$expected_v2" "$(pulled "$image")" "the image podman pulled through the mirror"
[ "$(tag_requests)" -gt "$tags_before" ] || fail "the pull did not ask serve for the tag"
forget "$image"

step "serve's path form pulled directly: select's variant"
: >"$pod/registries.conf"
through="$SERVE_ADDR/registry.test/demo/hello:1.0"
podman_ pull -q --tls-verify=false "$through" >/dev/null
assert_eq "$expected_v2" "$(pulled "$through")" "the image podman pulled by the path form"
forget "$through"
stop_serve

step "--foreign select: a buildx-style index (linux/amd64, /v2 ... /v4; no org.hwimg.*) by the rewrite: select's entry"
push_foreign buildx "$HWIMG_SOURCE_DIR/tests/data/select/buildx-levels.json" "$reg/others/buildx:1.0" \
  --dest-cert-dir "$certs" --dest-creds "hwimg:$password"
# The contrast: from the registry itself, podman takes the entry it matches by platform alone.
podman_ pull -q --cert-dir "$certs" "${authfile[@]}" "$reg/others/buildx:1.0" >/dev/null
assert_eq "sha256:$(raw "$reg/others/buildx:1.0" | sha256sum | cut -d' ' -f1) $(foreign_digest buildx v1 .config)" \
  "$(pulled "$reg/others/buildx:1.0")" "the image podman pulled from the registry itself (the index; the baseline's config)"
forget "$reg/others/buildx:1.0"
facts_file "$TEST_TMP/v3.json" x86-64-v3
start_serve foreign --upstream "registry.test=$reg" "${tls[@]}" --docker-config "$DOCKER_CONFIG" --host "$TEST_TMP/v3.json" \
  --foreign select
printf '[[registry]]\nprefix = "%s"\nlocation = "%s/registry.test"\ninsecure = true\n' "$reg" "$SERVE_ADDR" \
  >"$pod/registries.conf"
podman_ pull -q "$reg/others/buildx:1.0" >/dev/null
assert_eq "$(foreign_digest buildx v3) $(foreign_digest buildx v3 .config)" "$(pulled "$reg/others/buildx:1.0")" \
  "the image podman pulled for an x86-64-v3 node"
forget "$reg/others/buildx:1.0"
stop_serve

# load FORMAT VARIANT: exports that variant of the tag in FORMAT, loads it into an empty store, and
# checks that the one image there is named after its source and is that variant.
load() {
  hw_ok export "${tls[@]}" --format "$1" --variant "$2" -o "$TEST_TMP/hello-$1.tar" "$image"
  podman_ rmi -a -f >/dev/null 2>&1 || true
  assert_eq "" "$(podman_ images -q)" "podman's store before loading the $1"
  podman_ load -q -i "$TEST_TMP/hello-$1.tar" >/dev/null
  assert_eq "$image" "$(podman_ images --format '{{.Repository}}:{{.Tag}}')" "the name podman load gives the $1"
  assert_eq "$(config_digest "$2")" "sha256:$(podman_ images --format '{{.ID}}' --no-trunc | sed 's/^sha256://')" \
    "the image loaded from the $1"
}

step "podman load of a docker-archive export names the image after its source"
load docker-archive cpu-x86-64-v3

step "podman load of an oci-archive export names the image after its source"
load oci-archive cpu-x86-64-v4

assert_no_secret "$password"
echo PASS
