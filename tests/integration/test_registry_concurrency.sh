#!/usr/bin/env bash
# 8 `hwimg push` at once of layouts sharing blobs into one repository of Debian's registry (TLS,
# password), then 8 `hwimg select` at once against it: all succeed and every digest is the layout's.
# Debian's 2.8.2 rewrites a repository's blob link in place, so concurrent uploads of one blob make
# some manifest PUTs fail with DIGEST_INVALID + MANIFEST_BLOB_UNKNOWN: push must recover.
source "$(dirname "$0")/lib.sh"
source "$(dirname "$0")/registry_lib.sh"

use_registry conc
certs="$TEST_TMP/certs"; mkdir -p "$certs"; cp "$dir/cert.pem" "$certs/ca.crt"
flags=(--ca-file "$dir/cert.pem" --docker-config "$TEST_TMP/docker")
hw_ok login "$reg" --username hwimg --password-stdin "${flags[@]}" < "$dir/password"
jobs=8

step "$jobs layouts sharing blobs: the same seed gives layout N the first N variants of every larger one"
for n in $(seq 1 $jobs); do
  make_layout "$TEST_TMP/layout-$n" "t$n" --variants "$n" --shared-size 3000000 --variant-size 600000 --seed 11 \
    > "$TEST_TMP/layout-$n.digest"
done
shared=$(cat "$TEST_TMP"/layout-*/index.json | jq -r '.manifests[0].digest' | sort -u | wc -l)
assert_eq $jobs "$shared" "one index per layout"

round() { # round NAME: pushes every layout at once into $reg/conc-NAME, checking each result
  local name=$1 pids=() n
  for n in $(seq 1 $jobs); do
    "$HWIMG" push -v "oci:$TEST_TMP/layout-$n:t$n" "$reg/conc-$name:t$n" "${flags[@]}" \
      > "$TEST_TMP/push-$name-$n.log" 2>&1 &
    pids+=($!)
  done
  for n in $(seq 1 $jobs); do
    wait "${pids[$((n - 1))]}" || fail "push $n of round $name failed: $(grep 'error' "$TEST_TMP/push-$name-$n.log")"
    cat "$TEST_TMP/push-$name-$n.log" >> "$ALL_OUTPUT"
    assert_contains "$(tail -1 "$TEST_TMP/push-$name-$n.log")" "$reg/conc-$name:t$n@$(cat "$TEST_TMP/layout-$n.digest")" \
      "push $n of round $name"
  done
}

step "pushes at once, three rounds into fresh repositories (the race hit about one run in six)"
for r in a b c; do round "$r"; done
recovered=$(cat "$TEST_TMP"/push-*.log | grep -c 'refused (HTTP 400.*MANIFEST_BLOB_UNKNOWN.*checking its blobs' || true)
restarted=$(cat "$TEST_TMP"/push-*.log | grep -c 'restarting upload of .*DIGEST_INVALID' || true)
echo "manifest PUTs recovered: $recovered; uploads restarted after DIGEST_INVALID: $restarted"

step "skopeo reads back every index and variant manifest with the layout's digests, and every blob"
for n in $(seq 1 $jobs); do
  raw=$(skopeo inspect --raw --cert-dir "$certs" --creds "hwimg:$password" "docker://$reg/conc-a:t$n" | sha256sum | cut -d' ' -f1)
  assert_eq "$(cat "$TEST_TMP/layout-$n.digest")" "sha256:$raw" "index t$n seen by skopeo"
done
skopeo copy -q --all --preserve-digests --src-cert-dir "$certs" --src-creds "hwimg:$password" \
  "docker://$reg/conc-a:t$jobs" "oci:$TEST_TMP/back:t$jobs"
assert_eq "$(ls "$TEST_TMP/layout-$jobs/blobs/sha256" | sort)" "$(ls "$TEST_TMP/back/blobs/sha256" | sort)" \
  "every blob of the largest layout copied back (skopeo verifies each digest)"

step "$jobs selects at once against the repository pick what they pick from the layouts"
printf '{"schema": 1, "os": "linux", "cpu": {"arch": "amd64", "vendor": "Intel", "level": "x86-64-v3", "features": []}, "nvidia": null}\n' \
  > "$TEST_TMP/host.json"
pids=()
for n in $(seq 1 $jobs); do
  "$HWIMG" select "$reg/conc-b:t$n" --host "$TEST_TMP/host.json" --format json "${flags[@]}" \
    > "$TEST_TMP/select-$n.json" 2> "$TEST_TMP/select-$n.err" &
  pids+=($!)
done
for n in $(seq 1 $jobs); do
  wait "${pids[$((n - 1))]}" || fail "select $n failed: $(cat "$TEST_TMP/select-$n.err")"
  expected=$("$HWIMG" select "oci:$TEST_TMP/layout-$n:t$n" --host "$TEST_TMP/host.json" --format json | jq -r .digest)
  assert_eq "$expected" "$(jq -r .digest "$TEST_TMP/select-$n.json")" "select $n: the layout's variant digest"
  raw=$(skopeo inspect --raw --cert-dir "$certs" --creds "hwimg:$password" "docker://$reg/conc-b@$expected" | sha256sum | cut -d' ' -f1)
  assert_eq "$expected" "sha256:$raw" "select $n: the manifest skopeo reads by that digest"
done

assert_no_secret "$password"
echo PASS
