#!/usr/bin/env python3
"""Writes a multi-variant OCI image layout shaped like hwimg's (docs/selection.md#annotations) for the
select and registry suites and the benchmarks, without depending on `hwimg build`.

  layout_writer.py DIR TAG SPEC.json       # the variants of a spec file:
                                           #   [{"id", "platform", "annotations", "env", "entrypoint"}]
  layout_writer.py DIR TAG --gpu-matrix N  # N hwimg GPU/CPU variants (cuda x targets x cpu level)
  layout_writer.py DIR TAG [--variants N] [--shared-size BYTES] [--variant-size BYTES] [--seed S]
                                           # N CPU-level variants (default 4) sharing one layer

Each variant is an image whose config carries its platform, environment and entrypoint, with its
annotations as config labels and manifest annotations (as the builder writes them); the index lists
it with its platform and annotations. Spec and GPU-matrix variants have one small layer naming the
variant; CPU-level variants have two gzip layers, one shared by all and one of their own, of
pseudo-random (seeded) content, so they do not compress. The index is tagged TAG in index.json and
each manifest TAG-<variant id>. The same arguments give the same digests. Prints the index digest.
"""
import argparse
import gzip
import hashlib
import io
import itertools
import json
import os
import random
import tarfile

INDEX = "application/vnd.oci.image.index.v1+json"
MANIFEST = "application/vnd.oci.image.manifest.v1+json"
CONFIG = "application/vnd.oci.image.config.v1+json"
LAYER = "application/vnd.oci.image.layer.v1.tar+gzip"
REF_NAME = "org.opencontainers.image.ref.name"
MTIME = 1700000000


def canonical(obj):
    return json.dumps(obj, sort_keys=True, separators=(",", ":")).encode()


def make_layer(files):
    """A gzip tar of (name, bytes) files; returns (compressed bytes, diff id)."""
    raw = io.BytesIO()
    with tarfile.open(fileobj=raw, mode="w", format=tarfile.PAX_FORMAT) as tar:
        for name, content in files:
            info = tarfile.TarInfo(name)
            info.size = len(content)
            info.mtime = MTIME
            info.mode = 0o644
            tar.addfile(info, io.BytesIO(content))
    tar_bytes = raw.getvalue()
    return gzip.compress(tar_bytes, compresslevel=1, mtime=0), "sha256:" + hashlib.sha256(tar_bytes).hexdigest()


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

    def image(self, variant):
        """Stores a variant's layers, config and manifest; returns its descriptor as the index lists it."""
        platform = variant["platform"]
        annotations = variant.get("annotations", {})
        layers, diff_ids = [], []
        for compressed, diff_id in variant["layers"]:
            layers.append(self.put(compressed, LAYER))
            diff_ids.append(diff_id)
        config = {
            "architecture": platform["architecture"], "os": platform["os"],
            "config": {"Env": variant.get("env", []), "Labels": annotations,
                       "Entrypoint": variant.get("entrypoint", ["/bin/true"])},
            "rootfs": {"type": "layers", "diff_ids": diff_ids},
        }
        if platform.get("variant"):
            config["variant"] = platform["variant"]
        manifest = {"schemaVersion": 2, "mediaType": MANIFEST, "config": self.put(canonical(config), CONFIG),
                    "layers": layers}
        if annotations:
            manifest["annotations"] = annotations
        descriptor = dict(self.put(canonical(manifest), MANIFEST), platform=platform)
        if annotations:
            descriptor["annotations"] = annotations
        return descriptor

    def write(self, tag, variants):
        """Writes every variant, the index of them and index.json; returns the index descriptor."""
        descriptors = [self.image(v) for v in variants]
        index = self.put(canonical({"schemaVersion": 2, "mediaType": INDEX, "manifests": descriptors}), INDEX)
        refs = [dict(index, annotations={REF_NAME: tag})]
        for variant, descriptor in zip(variants, descriptors):
            entry = {k: descriptor[k] for k in ("mediaType", "digest", "size")}
            refs.append(dict(entry, annotations={REF_NAME: f"{tag}-{variant['id']}"}))
        with open(os.path.join(self.root, "index.json"), "wb") as f:
            f.write(canonical({"schemaVersion": 2, "mediaType": INDEX, "manifests": refs}))
        return index


def named_layer(vid):
    return make_layer([("etc/variant", (vid + "\n").encode())])


def spec_variants(path):
    with open(path) as f:
        variants = json.load(f)
    for variant in variants:
        variant["layers"] = [named_layer(variant["id"])]
    return variants


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
        variants.append({"id": vid, "platform": platform, "layers": [named_layer(vid)], "annotations": {
            "org.hwimg.variant": vid, "org.hwimg.cuda.version": cuda, "org.hwimg.gpu.targets": targets,
            "org.hwimg.cpu.level": level}})
    return variants


def cpu_variants(count, shared_size, variant_size, seed):
    levels = [("x86-64-v2", "v2"), ("x86-64-v3", "v3"), ("x86-64-v4", "v4"), ("x86-64", None)]
    rng = random.Random(seed)
    shared = make_layer([("opt/app/data.bin", rng.randbytes(shared_size))])
    variants = []
    for i in range(count):
        level, oci_variant = levels[i % len(levels)]
        vid = f"cpu-{level}" if i < len(levels) else f"cpu-{level}-{i}"
        own = make_layer([("opt/app/bin/app", rng.randbytes(variant_size) + vid.encode())])
        platform = {"architecture": "amd64", "os": "linux"}
        if oci_variant:
            platform["variant"] = oci_variant
        variants.append({"id": vid, "platform": platform, "layers": [shared, own], "entrypoint": ["/opt/app/bin/app"],
                         "annotations": {"org.hwimg.variant": vid, "org.hwimg.cpu.level": level}})
    return variants


def main():
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("dir")
    parser.add_argument("tag")
    parser.add_argument("spec", nargs="?", help="a JSON list of variants")
    parser.add_argument("--gpu-matrix", type=int, metavar="N")
    parser.add_argument("--variants", type=int, default=4, metavar="N")
    parser.add_argument("--shared-size", type=int, default=256 * 1024, metavar="BYTES")
    parser.add_argument("--variant-size", type=int, default=16 * 1024, metavar="BYTES")
    parser.add_argument("--seed", type=int, default=1)
    args = parser.parse_args()
    if args.spec and args.gpu_matrix is not None:
        parser.error("give a spec file or --gpu-matrix, not both")
    if args.spec:
        variants = spec_variants(args.spec)
    elif args.gpu_matrix is not None:
        variants = gpu_matrix(args.gpu_matrix)
    else:
        variants = cpu_variants(args.variants, args.shared_size, args.variant_size, args.seed)
    print(Layout(args.dir).write(args.tag, variants)["digest"])


if __name__ == "__main__":
    main()
