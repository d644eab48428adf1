#!/usr/bin/env python3
"""Turns a /proc/cpuinfo capture (vendor, family, model, model name, flags) into the CPUID dump
format `hwimg probe --cpuid-dump` prints, for CPUs we have no register capture of. Its bit table
is transcribed separately from the one in src/hwimg/probe/x86_cpuid.cpp
(docs/compatibility.md#x86-feature-names), so a typo in either shows up as a test failure.

usage: encode_cpuinfo.py CPUINFO XCR0_HEX [--source TEXT] > DUMP
"""
import sys

BITS = {  # name: (leaf, subleaf, register, bit)
    "fpu": (1, 0, "edx", 0), "cx8": (1, 0, "edx", 8), "cmov": (1, 0, "edx", 15), "clflush": (1, 0, "edx", 19),
    "mmx": (1, 0, "edx", 23), "fxsr": (1, 0, "edx", 24), "sse": (1, 0, "edx", 25), "sse2": (1, 0, "edx", 26),
    "pni": (1, 0, "ecx", 0), "pclmulqdq": (1, 0, "ecx", 1), "ssse3": (1, 0, "ecx", 9), "fma": (1, 0, "ecx", 12),
    "cx16": (1, 0, "ecx", 13), "sse4_1": (1, 0, "ecx", 19), "sse4_2": (1, 0, "ecx", 20), "movbe": (1, 0, "ecx", 22),
    "popcnt": (1, 0, "ecx", 23), "aes": (1, 0, "ecx", 25), "xsave": (1, 0, "ecx", 26), "avx": (1, 0, "ecx", 28),
    "f16c": (1, 0, "ecx", 29), "rdrand": (1, 0, "ecx", 30), "hypervisor": (1, 0, "ecx", 31),
    "fsgsbase": (7, 0, "ebx", 0), "tsc_adjust": (7, 0, "ebx", 1), "bmi1": (7, 0, "ebx", 3), "avx2": (7, 0, "ebx", 5),
    "bmi2": (7, 0, "ebx", 8), "avx512f": (7, 0, "ebx", 16), "avx512dq": (7, 0, "ebx", 17), "rdseed": (7, 0, "ebx", 18),
    "adx": (7, 0, "ebx", 19), "avx512ifma": (7, 0, "ebx", 21), "clflushopt": (7, 0, "ebx", 23),
    "clwb": (7, 0, "ebx", 24), "avx512pf": (7, 0, "ebx", 26), "avx512er": (7, 0, "ebx", 27),
    "avx512cd": (7, 0, "ebx", 28), "sha_ni": (7, 0, "ebx", 29), "avx512bw": (7, 0, "ebx", 30),
    "avx512vl": (7, 0, "ebx", 31), "avx512vbmi": (7, 0, "ecx", 1), "pku": (7, 0, "ecx", 3), "ospke": (7, 0, "ecx", 4),
    "waitpkg": (7, 0, "ecx", 5), "avx512_vbmi2": (7, 0, "ecx", 6), "gfni": (7, 0, "ecx", 8), "vaes": (7, 0, "ecx", 9),
    "vpclmulqdq": (7, 0, "ecx", 10), "avx512_vnni": (7, 0, "ecx", 11), "avx512_bitalg": (7, 0, "ecx", 12),
    "avx512_vpopcntdq": (7, 0, "ecx", 14), "rdpid": (7, 0, "ecx", 22), "cldemote": (7, 0, "ecx", 25),
    "movdiri": (7, 0, "ecx", 27), "movdir64b": (7, 0, "ecx", 28), "avx512_4vnniw": (7, 0, "edx", 2),
    "avx512_4fmaps": (7, 0, "edx", 3), "avx512_vp2intersect": (7, 0, "edx", 8), "serialize": (7, 0, "edx", 14),
    "amx_bf16": (7, 0, "edx", 22), "avx512_fp16": (7, 0, "edx", 23), "amx_tile": (7, 0, "edx", 24),
    "amx_int8": (7, 0, "edx", 25), "flush_l1d": (7, 0, "edx", 28), "sha512": (7, 1, "eax", 0), "sm3": (7, 1, "eax", 1),
    "sm4": (7, 1, "eax", 2), "avx_vnni": (7, 1, "eax", 4), "avx512_bf16": (7, 1, "eax", 5),
    "cmpccxadd": (7, 1, "eax", 7), "amx_fp16": (7, 1, "eax", 21), "avx_ifma": (7, 1, "eax", 23),
    "avx_vnni_int8": (7, 1, "edx", 4), "avx_ne_convert": (7, 1, "edx", 5), "xsaveopt": (0xD, 1, "eax", 0),
    "xsavec": (0xD, 1, "eax", 1), "xgetbv1": (0xD, 1, "eax", 2), "xsaves": (0xD, 1, "eax", 3),
    "lahf_lm": (0x80000001, 0, "ecx", 0), "abm": (0x80000001, 0, "ecx", 5), "sse4a": (0x80000001, 0, "ecx", 6),
    "xop": (0x80000001, 0, "ecx", 11), "fma4": (0x80000001, 0, "ecx", 16), "tbm": (0x80000001, 0, "ecx", 21),
    "syscall": (0x80000001, 0, "edx", 11), "lm": (0x80000001, 0, "edx", 29), "clzero": (0x80000008, 0, "ebx", 0),
    "wbnoinvd": (0x80000008, 0, "ebx", 9),
}
REGS = ["eax", "ebx", "ecx", "edx"]


def words(text, count):
    data = text.encode().ljust(count * 4, b"\0")[: count * 4]
    return [int.from_bytes(data[i : i + 4], "little") for i in range(0, count * 4, 4)]


def main():
    cpuinfo, xcr0 = open(sys.argv[1]).read(), int(sys.argv[2], 16)
    source = sys.argv[4] if len(sys.argv) > 4 and sys.argv[3] == "--source" else sys.argv[1]
    info = {}
    for line in cpuinfo.splitlines():
        if ":" in line:
            key, value = line.split(":", 1)
            info.setdefault(key.strip(), value.strip())
    flags = info["flags"].split()
    family, model = int(info["cpu family"]), int(info["model"])
    leaves = {key: {r: 0 for r in REGS} for key in
              [(0, 0), (1, 0), (7, 0), (7, 1), (0xD, 1), (0x80000000, 0), (0x80000001, 0), (0x80000002, 0),
               (0x80000003, 0), (0x80000004, 0), (0x80000008, 0)]}
    vendor = words(info["vendor_id"], 3)
    leaves[(0, 0)].update(eax=0xD, ebx=vendor[0], edx=vendor[1], ecx=vendor[2])
    base_family = min(family, 0xF)
    leaves[(1, 0)]["eax"] = ((family - base_family) << 20) | ((model >> 4) << 16) | (base_family << 8) | ((model & 0xF) << 4)
    leaves[(0x80000000, 0)]["eax"] = 0x80000008
    for i, value in enumerate(words(info["model name"], 12)):
        leaves[(0x80000002 + i // 4, 0)][REGS[i % 4]] = value
    for flag in flags:
        if flag in BITS:
            leaf, subleaf, reg, bit = BITS[flag]
            leaves[(leaf, subleaf)][reg] |= 1 << bit
    if "xsave" in flags:  # OSXSAVE: the kernel shows xsave only when it enabled it
        leaves[(1, 0)]["ecx"] |= 1 << 27
    if any(leaves[(7, 1)][r] for r in REGS):
        leaves[(7, 0)]["eax"] = 1
    print(f"# {info['model name']} (family {family}, model {model}), encoded from /proc/cpuinfo flags")
    print(f"# source: {source}")
    print(f"# flags: {' '.join(flags)}")
    for (leaf, subleaf), r in sorted(leaves.items()):
        print(f"{leaf:08x}.{subleaf:x} {r['eax']:08x} {r['ebx']:08x} {r['ecx']:08x} {r['edx']:08x}")
    print(f"xcr0 {xcr0:016x}")


main()
