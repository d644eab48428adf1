#!/usr/bin/env python3
"""The ```sh blocks of a markdown page as one bash script, for tests/integration/test_docs_examples.sh.

    docs_blocks.py script PAGE.md LOG_DIR [--skip=LINE=WHY]...
        prints a bash script that runs the page's blocks in document order, in one process, each
        block's output in LOG_DIR/LINE.log (LINE: its opening fence); a failing command leaves
        "PAGE_LINE<TAB>STATUS<TAB>COMMAND" in LOG_DIR/failed and stops the script
    docs_blocks.py skipped PAGE.md [--skip=LINE=WHY]...
        prints "LINE<TAB>WHY" for each block that is not run

A block is not run when the line just before its opening fence is `<!-- illustration: WHY -->` (it
needs a GPU, a cluster, dockerd, ... that the suite does not have) or when --skip names the line of
its opening fence (for blocks the page cannot mark, such as the README's first lines).
"""
import re
import shlex
import sys

FENCE = re.compile(r"^(\s*)(`{3,}|~{3,})\s*([A-Za-z0-9_+-]*)")
ILLUSTRATION = re.compile(r"^\s*<!--\s*illustration:\s*(.*?)\s*-->\s*$")


def blocks(path):
    """(fence line, language, [(line, text)], why not run or None) for each fenced block."""
    with open(path, encoding="utf-8") as f:
        lines = f.read().split("\n")
    result = []
    i = 0
    while i < len(lines):
        m = FENCE.match(lines[i])
        if not m:
            i += 1
            continue
        indent, fence, language = len(m.group(1)), m.group(2), m.group(3)
        start = i
        body = []
        i += 1
        while i < len(lines) and not lines[i].strip().startswith(fence):
            body.append((i + 1, lines[i][indent:] if lines[i][:indent].isspace() else lines[i]))
            i += 1
        if i >= len(lines):
            sys.exit(f"{path}:{start + 1}: unclosed code fence")
        i += 1
        mark = ILLUSTRATION.match(lines[start - 1]) if start > 0 else None
        result.append((start + 1, language, body, mark.group(1) if mark else None))
    return result


def parse_skips(args):
    skips = {}
    for arg in args:
        line, _, why = arg.partition("=")
        skips[int(line)] = why
    return skips


def runnable(path, skips):
    for line, language, body, why in blocks(path):
        if language != "sh":
            continue
        if line in skips:
            why = skips[line]
        yield line, body, why


def script(path, log_dir, skips):
    body = []
    mapping = []
    header_lines = 4
    for line, text_lines, why in runnable(path, skips):
        if why is not None:
            continue
        body.append(f"__doc_line={line}")
        body.append(f"exec > {shlex.quote(f'{log_dir}/{line}.log')} 2>&1")
        for doc_line, text in text_lines:
            body.append(text)
            mapping.append((header_lines + len(body), doc_line))
    doc_map = " ".join(f"[{generated}]={doc}" for generated, doc in mapping)
    # A command that stops the script leaves where it was in the page, its status and its text.
    header = [
        "set -euo pipefail",
        f"__doc_line=0; __doc_failed={shlex.quote(log_dir + '/failed')}",
        f"declare -A __doc_map=({doc_map})",
        "trap '__status=$?; printf \"%s\\t%s\\t%s\\n\" \"${__doc_map[$LINENO]:-$__doc_line}\" \"$__status\" "
        "\"$BASH_COMMAND\" > \"$__doc_failed\"' ERR",
    ]
    assert len(header) == header_lines
    return "\n".join(header + body) + "\n"


def main(argv):
    if len(argv) >= 4 and argv[1] == "script":
        skips = parse_skips(a.removeprefix("--skip=") for a in argv[4:] if a.startswith("--skip="))
        sys.stdout.write(script(argv[2], argv[3], skips))
    elif len(argv) >= 3 and argv[1] == "skipped":
        skips = parse_skips(a.removeprefix("--skip=") for a in argv[3:] if a.startswith("--skip="))
        for line, _, why in runnable(argv[2], skips):
            if why is not None:
                print(f"{line}\t{why}")
    else:
        sys.exit(__doc__)


if __name__ == "__main__":
    main(sys.argv)
