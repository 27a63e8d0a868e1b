#!/usr/bin/env python3
"""The include-direction check (ctest: include_direction).

Every quoted #include in a file under proto/ common/ obs/ storage/ actors/
gateway/ runtime/ must name a layer at or below the file's own:

    proto <- common (and obs) <- storage <- actors <- gateway <- runtime

and tools/ (benchmarks aside: they measure the internals) use only proto/ and
common/, because tools talk to nodes over their APIs. Prints each back edge
with its file and line and exits 1 if there is one. ARCHITECTURE.md draws the
picture this keeps true.

    check_include_direction.py <repository root>
"""
import os
import re
import sys

RANK = {"proto": 0, "common": 1, "obs": 1, "storage": 2, "actors": 3, "gateway": 4, "runtime": 5}
TOOLS_MAY_USE = {"proto", "common"}
INCLUDE = re.compile(r'^\s*#\s*include\s*"([^"]+)"')
SOURCES = (".hpp", ".cpp", ".h")


def files_under(root, top):
    for d, _, names in os.walk(os.path.join(root, top)):
        for n in sorted(names):
            if n.endswith(SOURCES):
                yield os.path.relpath(os.path.join(d, n), root)


def back_edges(root, path, allowed):
    """(line number, target) of each include of `path` whose layer `allowed` rejects."""
    with open(os.path.join(root, path), encoding="utf-8", errors="replace") as f:
        for number, line in enumerate(f, 1):
            m = INCLUDE.match(line)
            if not m:
                continue
            top = m.group(1).split("/", 1)[0]
            if top in RANK and not allowed(top):
                yield number, m.group(1)


def main(root):
    found = []
    checked = 0
    for layer, rank in RANK.items():
        for path in files_under(root, layer):
            checked += 1
            for number, target in back_edges(root, path, lambda top: RANK[top] <= rank):
                found.append(f"{path}:{number}: includes {target}: a back edge ({layer} may not "
                             f"depend on {target.split('/', 1)[0]})")
    for path in files_under(root, "tools"):
        if path.startswith("tools/bench/"):
            continue
        checked += 1
        for number, target in back_edges(root, path, lambda top: top in TOOLS_MAY_USE):
            found.append(f"{path}:{number}: includes {target}: tools use only proto/ and common/")
    for line in found:
        print(line)
    if found:
        print(f"{len(found)} include(s) against the layer order proto <- common <- storage <- "
              "actors <- gateway <- runtime (ARCHITECTURE.md)")
        return 1
    print(f"include direction: {checked} files, no back edge")
    return 0


if __name__ == "__main__":
    if len(sys.argv) != 2:
        sys.exit("usage: check_include_direction.py <repository root>")
    sys.exit(main(sys.argv[1]))
