#!/usr/bin/env bash
# `hwimg serve configure-node` (issue 28 item 9) writes the node's configuration into a certs.d and
# a registries.conf.d under $TEST_TMP, where the node already had a hosts.toml of its own for the
# registry and a drop-in of its own: then Debian's containerd (`ctr image pull --hosts-dir`, the
# lookup CRI's config_path uses) and podman (the drop-in directory bind-mounted over
# /etc/containers/registries.conf.d in a mount namespace of its own: podman 4.3 reads drop-ins only
# beside the system registries.conf, not beside $CONTAINERS_REGISTRIES_CONF) pull the plain tag of a
# TLS + htpasswd registry through `hwimg serve` and get the variant `hwimg select` picks for serve's
# facts, where a pull from the registry itself gets the variant-less baseline. A second run changes
# nothing; --remove puts the node's own hosts.toml back byte for byte and deletes the rest.
source "$(dirname "$0")/lib.sh"
require_root
source "$(dirname "$0")/registry_lib.sh"
source "$(dirname "$0")/serve_lib.sh"

step "a registry with an hwimg-shaped image: four CPU-level variants, the baseline without a platform variant"
tls_registry
hw_ok login "$reg" --username hwimg --password-stdin "${tls[@]}" <"$dir/password"
make_layout "$TEST_TMP/app" 1.0 --variants 4 >/dev/null
hw_ok push "${tls[@]}" "oci:$TEST_TMP/app:1.0" "$reg/demo/app:1.0"
image="$reg/demo/app:1.0"
raw() { skopeo inspect --raw --cert-dir "$certs" --creds "hwimg:$password" "docker://$1"; }
variant_digest() { echo "sha256:$(raw "$image-$1" | sha256sum | cut -d' ' -f1)"; }
facts_file "$TEST_TMP/v3.json" x86-64-v3
hw_ok select "${tls[@]}" --host "$TEST_TMP/v3.json" --format json "$image"
selected=$(jq -r .digest <<<"$OUT")
assert_eq "$(variant_digest cpu-x86-64-v3)" "$selected" "select's variant for an x86-64-v3 node"
baseline=$(variant_digest cpu-x86-64)

# The mirror names the registry (it has a port) registry.test in its path form (docs/serve.md#requests).
start_serve v3 --upstream "registry.test=$reg" "${tls[@]}" --docker-config "$DOCKER_CONFIG" --host "$TEST_TMP/v3.json"

step "the node's own configuration, and configure-node over it"
certs_d="$TEST_TMP/node/certs.d"
conf_d="$TEST_TMP/node/registries.conf.d"
mkdir -p "$certs_d/$reg" "$conf_d"
# (containerd 1.6 wants a [host] table: docs/serve.md#containerd)
printf 'server = "https://%s"\n\n[host."https://%s"]\n  ca = "%s"\n' "$reg" "$reg" "$dir/cert.pem" >"$certs_d/$reg/hosts.toml"
cp -p "$certs_d/$reg/hosts.toml" "$TEST_TMP/node-hosts.toml"
printf '[[registry]]\nprefix = "quay.io"\nlocation = "quay.io"\n' >"$conf_d/10-node.conf"
cp -p "$conf_d/10-node.conf" "$TEST_TMP/node-drop-in.conf"
# --direct: the mirror's own image is pulled from the registry itself by CRI-O and podman.
configure=(serve configure-node --upstream "registry.test=$reg" --listen "$SERVE_ADDR" --direct "$reg/hwimg"
  --containerd-dir "$certs_d" --crio-dir "$conf_d")
hw_ok "${configure[@]}"
assert_eq "written $certs_d/$reg/hosts.toml (what was there kept in $certs_d/$reg/hosts.toml.hwimg-backup)
written $conf_d/50-hwimg-serve.conf" "$OUT" "configure-node's report"
cmp -s "$TEST_TMP/node-hosts.toml" "$certs_d/$reg/hosts.toml.hwimg-backup" || fail "the backup differs from the node's file"
assert_contains "$(cat "$certs_d/$reg/hosts.toml")" "[host.\"http://$SERVE_ADDR\"]" "the hosts.toml's mirror"
assert_contains "$(cat "$conf_d/50-hwimg-serve.conf")" "location = \"$SERVE_ADDR/registry.test\"" "the drop-in's rewrite"
before=$(find "$TEST_TMP/node" -type f -exec sha256sum {} + | sort)

step "a second run changes nothing and says so"
hw_ok "${configure[@]}"
assert_eq "unchanged $certs_d/$reg/hosts.toml
unchanged $conf_d/50-hwimg-serve.conf" "$OUT" "the second run's report"
assert_eq "$before" "$(find "$TEST_TMP/node" -type f -exec sha256sum {} + | sort)" "the files after the second run"

# tag_requests: how many requests for a tag serve has answered 200 (0 before the first).
tag_requests() {
  curl -sS "http://$SERVE_ADDR/metrics" | awk '$1 == "hwimg_serve_requests_total{kind=\"tag\",code=\"200\"}" {n = $2} END {print n + 0}'
}

if command -v containerd >/dev/null && command -v ctr >/dev/null; then
  step "containerd pulls the tag through the hosts.toml configure-node wrote: select's variant"
  start_containerd
  tags_before=$(tag_requests)
  ctr_ image pull --hosts-dir "$certs_d" --snapshotter native "$image" >"$TEST_TMP/pull.log" 2>&1 ||
    fail "ctr image pull failed: $(tail -5 "$TEST_TMP/pull.log")"
  assert_eq "$selected" "$(ctr_ image ls | awk -v r="$image" '$1 == r {print $3}')" "the digest containerd pulled"
  [ "$(tag_requests)" -gt "$tags_before" ] || fail "containerd did not ask serve for the tag"
  assert_contains "$(cat "$SERVE_LOG")" "$image -> variant cpu-x86-64-v3 $selected" "serve's resolution line"
else
  echo "containerd or ctr is not installed: the containerd pull is not tried"
  containerd_missing=1
fi

podman_missing=""
if command -v podman >/dev/null && command -v unshare >/dev/null; then
  step "podman reads the drop-in configure-node wrote: the tag through serve, select's variant"
  pod="$TEST_TMP/podman"
  mkdir -p "$pod/home"
  printf '[engine]\nevents_logger = "file"\ncgroup_manager = "cgroupfs"\n' >"$pod/containers.conf"
  printf '[storage]\ndriver = "vfs"\ngraphroot = "%s/root"\nrunroot = "%s/run"\n' "$pod" "$pod" >"$pod/storage.conf"
  : >"$pod/registries.conf"
  add_cleanup "awk -v t='$TEST_TMP/' 'index(\$2, t) == 1 {print \$2}' /proc/mounts | sort -r | xargs -r umount -l"
  # podman_ ARGS...: podman with the test's store, and the test's registries.conf and drop-in
  # directory where podman looks for the node's (HOME too: a user registries.conf would hide them).
  podman_() {
    HOME="$pod/home" CONTAINERS_CONF="$pod/containers.conf" CONTAINERS_STORAGE_CONF="$pod/storage.conf" \
      unshare -m --propagation private bash -c '
        mount --bind "$1" /etc/containers/registries.conf && mount --bind "$2" /etc/containers/registries.conf.d &&
          shift 2 && exec podman --root "$POD/root" --runroot "$POD/run" --storage-driver vfs --tmpdir "$POD/tmp" "$@"' \
      _ "$pod/registries.conf" "$conf_d" "$@"
  }
  export POD="$pod"
  if store=$(podman_ info --format '{{.Store.GraphDriverName}}' 2>&1); then
    assert_eq "$SERVE_ADDR/registry.test" \
      "$(podman_ info --format '{{json .Registries}}' | jq -r --arg r "$reg" '.[$r].Location')" \
      "the location podman reads for the registry"
    assert_eq "$reg/hwimg" \
      "$(podman_ info --format '{{json .Registries}}' | jq -r --arg r "$reg/hwimg" '.[$r].Location')" \
      "the location podman reads for the mirror's own image"
    tags_before=$(tag_requests)
    podman_ pull -q "$image" >/dev/null
    assert_eq "$selected" "$(podman_ image inspect --format '{{.Digest}}' "$image")" "the image podman pulled"
    [ "$(tag_requests)" -gt "$tags_before" ] || fail "podman did not ask serve for the tag"
    podman_ rmi -f "$image" >/dev/null
  else
    echo "podman cannot open a store here: $(tail -3 <<<"$store")"
    podman_missing=1
  fi
else
  echo "podman or unshare is not installed: the podman pull is not tried"
  podman_missing=1
fi

step "--remove restores the node's hosts.toml byte for byte and deletes the rest"
hw_ok serve configure-node --remove --containerd-dir "$certs_d" --crio-dir "$conf_d"
assert_eq "restored $certs_d/$reg/hosts.toml from $certs_d/$reg/hosts.toml.hwimg-backup
removed $conf_d/50-hwimg-serve.conf" "$OUT" "--remove's report"
cmp -s "$TEST_TMP/node-hosts.toml" "$certs_d/$reg/hosts.toml" || fail "the restored hosts.toml differs from the node's"
cmp -s "$TEST_TMP/node-drop-in.conf" "$conf_d/10-node.conf" || fail "the node's own drop-in changed"
assert_eq "$certs_d/$reg/hosts.toml
$conf_d/10-node.conf" "$(find "$TEST_TMP/node" -type f | sort)" "the files left"
hw_ok serve configure-node --remove --containerd-dir "$certs_d" --crio-dir "$conf_d"
assert_eq "nothing of hwimg's to remove" "$OUT" "a second --remove"

if [ -z "${containerd_missing:-}" ]; then
  step "with the node's own hosts.toml back, containerd pulls from the registry itself: the baseline"
  ctr_ image rm "$image" >/dev/null 2>&1 || true
  ctr_ image pull --hosts-dir "$certs_d" --snapshotter native --user "hwimg:$password" "$image" >"$TEST_TMP/pull.log" 2>&1 ||
    fail "ctr image pull failed: $(tail -5 "$TEST_TMP/pull.log")"
  index="sha256:$(raw "$image" | sha256sum | cut -d' ' -f1)"
  assert_eq "$index" "$(ctr_ image ls | awk -v r="$image" '$1 == r {print $3}')" "the digest containerd recorded"
  assert_eq "$baseline" "$(ctr_ content ls | awk -v d="$baseline" '$1 == d {print $1}')" "the baseline in the content store"
fi

assert_no_secret "$password"
[ -z "${containerd_missing:-}" ] || skip "containerd is not installed: configure-node's files were checked, not used"
[ -z "$podman_missing" ] || skip "podman cannot run here: configure-node's drop-in was not tried by podman"
echo PASS
