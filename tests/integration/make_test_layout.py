#!/usr/bin/env python3
"""Writes a multi-variant OCI image layout shaped like hwimg's (docs/selection.md#annotations) for the
registry tests, without depending on `hwimg build`.

  make_test_layout.py DIR TAG [--variants N] [--shared-size BYTES] [--variant-size BYTES] [--seed S]

Every variant manifest has two gzip layers: one shared by all variants and one of its own. The
index is tagged TAG in index.json and each manifest TAG-<variant id>. Content is pseudo-random
(seeded), so layers do not compress and the same arguments give the same digests.
"""
import argparse
import gzip
import hashlib
import io
import json
import os
import random
import tarfile

INDEX = "application/vnd.oci.image.index.v1+json"
MANIFEST = "application/vnd.oci.image.manifest.v1+json"
CONFIG = "application/vnd.oci.image.config.v1+json"
LAYER = "application/vnd.oci.image.layer.v1.tar+gzip"
LEVELS = [("x86-64-v2", "v2"), ("x86-64-v3", "v3"), ("x86-64-v4", "v4"), ("x86-64", None)]


def canonical(obj):
    return json.dumps(obj, sort_keys=True, separators=(",", ":")).encode()


class Layout:
    def __init__(self, root):
        self.root = root
        os.makedirs(os.path.join(root, "blobs", "sha256"), exist_ok=True)
        with open(os.path.join(root, "oci-layout"), "w") as f:
            f.write('{"imageLayoutVersion":"1.0.0"}')

    def put(self, data, media_type):
        digest = hashlib.sha256(data).hexdigest()
        path = os.path.join(self.root, "blobs", "sha256", digest)
        if not os.path.exists(path):
            with open(path, "wb") as f:
                f.write(data)
        return {"mediaType": media_type, "digest": "sha256:" + digest, "size": len(data)}


def make_layer(files):
    raw = io.BytesIO()
    with tarfile.open(fileobj=raw, mode="w", format=tarfile.PAX_FORMAT) as tar:
        for name, content in files:
            info = tarfile.TarInfo(name)
            info.size = len(content)
            info.mtime = 1700000000
            info.mode = 0o644
            tar.addfile(info, io.BytesIO(content))
    tar_bytes = raw.getvalue()
    compressed = gzip.compress(tar_bytes, compresslevel=1, mtime=0)
    return compressed, "sha256:" + hashlib.sha256(tar_bytes).hexdigest()


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("dir")
    parser.add_argument("tag")
    parser.add_argument("--variants", type=int, default=4)
    parser.add_argument("--shared-size", type=int, default=256 * 1024)
    parser.add_argument("--variant-size", type=int, default=16 * 1024)
    parser.add_argument("--seed", type=int, default=1)
    args = parser.parse_args()
    rng = random.Random(args.seed)
    layout = Layout(args.dir)

    shared, shared_diff = make_layer([("opt/app/data.bin", rng.randbytes(args.shared_size))])
    shared_desc = layout.put(shared, LAYER)
    index_entries, tags = [], []
    for i in range(args.variants):
        level, variant = LEVELS[i % len(LEVELS)]
        vid = f"cpu-{level}" if i < len(LEVELS) else f"cpu-{level}-{i}"
        own, own_diff = make_layer([("opt/app/bin/app", rng.randbytes(args.variant_size) + vid.encode())])
        own_desc = layout.put(own, LAYER)
        labels = {"org.hwimg.variant": vid, "org.hwimg.cpu.level": level}
        config = {
            "architecture": "amd64", "os": "linux",
            "config": {"Entrypoint": ["/opt/app/bin/app"], "Labels": labels},
            "rootfs": {"type": "layers", "diff_ids": [shared_diff, own_diff]},
        }
        if variant:
            config["variant"] = variant
        config_desc = layout.put(canonical(config), CONFIG)
        manifest = {"schemaVersion": 2, "mediaType": MANIFEST, "config": config_desc,
                    "layers": [shared_desc, own_desc], "annotations": labels}
        manifest_desc = layout.put(canonical(manifest), MANIFEST)
        platform = {"architecture": "amd64", "os": "linux"}
        if variant:
            platform["variant"] = variant
        index_entries.append(dict(manifest_desc, platform=platform, annotations=labels))
        tags.append(dict(manifest_desc, annotations={"org.opencontainers.image.ref.name": f"{args.tag}-{vid}"}))
    index = {"schemaVersion": 2, "mediaType": INDEX, "manifests": index_entries}
    index_desc = layout.put(canonical(index), INDEX)
    top = {"schemaVersion": 2, "mediaType": INDEX,
           "manifests": [dict(index_desc, annotations={"org.opencontainers.image.ref.name": args.tag})] + tags}
    with open(os.path.join(args.dir, "index.json"), "wb") as f:
        f.write(canonical(top))
    print(index_desc["digest"])


if __name__ == "__main__":
    main()
