#!/usr/bin/env python3
"""Writes an OCI layout whose index holds the variants of a spec file, each a tiny image with the
given platform, annotations (also as config labels, as the builder writes them) and environment.
Tags: TAG for the index, TAG-<id> for each variant. Prints the index digest.

  make_select_layout.py DIR TAG SPEC.json      # SPEC: [{"id", "platform", "annotations", "env"}]
  make_select_layout.py DIR TAG --gpu-matrix N # N hwimg GPU/CPU variants (cuda x targets x cpu)
"""
import gzip
import hashlib
import io
import itertools
import json
import os
import sys
import tarfile


def dump(obj):
    return json.dumps(obj, sort_keys=True, separators=(",", ":")).encode()


class Layout:
    def __init__(self, root):
        self.root = root
        os.makedirs(os.path.join(root, "blobs", "sha256"), exist_ok=True)
        with open(os.path.join(root, "oci-layout"), "w") as f:
            f.write('{"imageLayoutVersion":"1.0.0"}')

    def put(self, data, media_type):
        digest = hashlib.sha256(data).hexdigest()
        with open(os.path.join(self.root, "blobs", "sha256", digest), "wb") as f:
            f.write(data)
        return {"mediaType": media_type, "digest": "sha256:" + digest, "size": len(data)}


def layer_bytes(text):
    raw = io.BytesIO()
    with tarfile.open(fileobj=raw, mode="w", format=tarfile.PAX_FORMAT) as tar:
        data = text.encode()
        info = tarfile.TarInfo("etc/variant")
        info.size = len(data)
        info.mtime = 0
        tar.addfile(info, io.BytesIO(data))
    return raw.getvalue()


def image(layout, variant):
    platform = variant["platform"]
    tar = layer_bytes(variant["id"] + "\n")
    layer = layout.put(gzip.compress(tar, mtime=0), "application/vnd.oci.image.layer.v1.tar+gzip")
    config = {
        "architecture": platform["architecture"], "os": platform["os"],
        "config": {"Env": variant.get("env", []), "Labels": variant.get("annotations", {}),
                   "Entrypoint": ["/bin/true"]},
        "rootfs": {"type": "layers", "diff_ids": ["sha256:" + hashlib.sha256(tar).hexdigest()]},
    }
    if platform.get("variant"):
        config["variant"] = platform["variant"]
    config_descriptor = layout.put(dump(config), "application/vnd.oci.image.config.v1+json")
    manifest = {"schemaVersion": 2, "mediaType": "application/vnd.oci.image.manifest.v1+json",
                "config": config_descriptor, "layers": [layer]}
    descriptor = layout.put(dump(manifest), "application/vnd.oci.image.manifest.v1+json")
    descriptor["platform"] = platform
    if variant.get("annotations"):
        descriptor["annotations"] = variant["annotations"]
    return descriptor


def gpu_matrix(count):
    levels = [("x86-64-v1", ""), ("x86-64-v2", "v2"), ("x86-64-v3", "v3"), ("x86-64-v4", "v4")]
    combos = itertools.product(["12.8", "13.0"], ["sm_80", "sm_90", "sm_90a", "sm_100", "sm_100f", "sm_120",
                                                 "sm_80,sm_90,compute_90", "sm_100,sm_120,compute_120"], levels)
    variants = []
    for cuda, targets, (level, oci_variant) in itertools.islice(combos, count):
        short = targets.replace("sm_", "sm").replace("compute_", "ptx").replace(",", "-")
        vid = f"cuda{cuda}-{short}-{level}"
        platform = {"os": "linux", "architecture": "amd64"}
        if oci_variant:
            platform["variant"] = oci_variant
        variants.append({"id": vid, "platform": platform, "annotations": {
            "org.hwimg.variant": vid, "org.hwimg.cuda.version": cuda, "org.hwimg.gpu.targets": targets,
            "org.hwimg.cpu.level": level}})
    return variants


def main():
    root, tag, spec = sys.argv[1], sys.argv[2], sys.argv[3]
    variants = gpu_matrix(int(sys.argv[4])) if spec == "--gpu-matrix" else json.load(open(spec))
    layout = Layout(root)
    descriptors = [image(layout, v) for v in variants]
    index = layout.put(dump({"schemaVersion": 2, "mediaType": "application/vnd.oci.image.index.v1+json",
                             "manifests": descriptors}), "application/vnd.oci.image.index.v1+json")
    refs = [dict(index, annotations={"org.opencontainers.image.ref.name": tag})]
    for v, d in zip(variants, descriptors):
        entry = {k: d[k] for k in ("mediaType", "digest", "size")}
        entry["annotations"] = {"org.opencontainers.image.ref.name": f"{tag}-{v['id']}"}
        refs.append(entry)
    with open(os.path.join(root, "index.json"), "wb") as f:
        f.write(dump({"schemaVersion": 2, "mediaType": "application/vnd.oci.image.index.v1+json",
                      "manifests": refs}))
    print(index["digest"])


if __name__ == "__main__":
    main()
