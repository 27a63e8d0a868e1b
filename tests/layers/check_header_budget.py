#!/usr/bin/env python3
"""The header budget (issue 42; ctest: header_budget, its own test is
check_header_budget_test.py, ctest header_budget_self_test).

Two checks, so that the vocabulary does not grow back into what every file
pays to compile:

1. Budget. Every header in proto/ is listed in header_budget.txt with the
   most lines it may preprocess to (g++ -std=c++17 -E -P, the project root on
   the include path). One above its budget fails, and so does a header
   without one.
2. Reach. Each heavy header listed in heavy_headers.txt (a "[header]" line,
   then the files that may include it directly) reaches no new file: a file
   that includes it and is not listed fails, and so does a listed file that
   no longer includes it (take its line out: the list only shrinks).

Prints each offence and exits 1 if there is one.

    check_header_budget.py <repository root> [<directory holding the two lists>]
"""
import os
import re
import subprocess
import sys

SCANNED = ("proto", "common", "obs", "storage", "actors", "gateway", "runtime", "tools", "tests")
INCLUDE = re.compile(r'^\s*#\s*include\s+"([^"]+)"', re.M)


def preprocessed_lines(root, header):
    out = subprocess.run(
        ["g++", "-std=c++17", "-E", "-P", "-I", root, "-x", "c++", os.path.join(root, header)],
        capture_output=True, text=True, check=False)
    if out.returncode != 0:
        return None, out.stderr.strip().splitlines()[-1:] or ["g++ failed"]
    return out.stdout.count("\n"), None


def read_budgets(path):
    budgets = {}
    with open(path) as f:
        for number, line in enumerate(f, 1):
            line = line.split("#", 1)[0].strip()
            if not line:
                continue
            header, limit = line.split()
            budgets[header] = (int(limit), number)
    return budgets


def read_reach(path):
    reach, current = {}, None
    with open(path) as f:
        for line in f:
            line = line.split("#", 1)[0].strip()
            if not line:
                continue
            if line.startswith("[") and line.endswith("]"):
                current = line[1:-1]
                reach[current] = set()
            elif current is not None:
                reach[current].add(line)
    return reach


def includers(root):
    """Every scanned file and the project headers it includes directly."""
    out = {}
    for top in SCANNED:
        for base, dirs, files in os.walk(os.path.join(root, top)):
            dirs[:] = [d for d in dirs if d not in ("corpus", "fixtures", "node_modules")]
            for name in files:
                if not name.endswith((".cpp", ".hpp", ".h", ".cc")):
                    continue
                path = os.path.join(base, name)
                rel = os.path.relpath(path, root)
                with open(path, errors="replace") as f:
                    out[rel] = set(INCLUDE.findall(f.read()))
    return out


def offences(root, lists):
    found = []
    budgets = read_budgets(os.path.join(lists, "header_budget.txt"))
    headers = sorted("proto/" + n for n in os.listdir(os.path.join(root, "proto"))
                     if n.endswith(".hpp"))
    for header in headers:
        if header not in budgets:
            found.append(f"{header}: has no budget in header_budget.txt (measure it: "
                         f"g++ -std=c++17 -E -P -I. -x c++ {header} | wc -l)")
            continue
        lines, err = preprocessed_lines(root, header)
        limit, number = budgets[header]
        if lines is None:
            found.append(f"{header}: does not preprocess: {err[0]}")
        elif lines > limit:
            found.append(f"{header}: preprocesses to {lines} lines, over its budget of {limit} "
                         f"(header_budget.txt:{number}): include less, forward-declare, or "
                         "move what needs the heavy header into a .cpp")
    for header in budgets:
        if header not in headers:
            found.append(f"header_budget.txt: {header} is gone: take its line out")
    files = includers(root)
    for heavy, allowed in read_reach(os.path.join(lists, "heavy_headers.txt")).items():
        reached = {f for f, inc in files.items() if heavy in inc}
        for f in sorted(reached - allowed):
            found.append(f"{f}: includes {heavy}, which reaches no new file "
                         "(heavy_headers.txt): include the part you use")
        for f in sorted(allowed - reached):
            found.append(f"heavy_headers.txt: {f} no longer includes {heavy}: take its line out")
    return found


def main(argv):
    root = argv[1]
    lists = argv[2] if len(argv) > 2 else os.path.join(root, "tests", "layers")
    found = offences(root, lists)
    for line in found:
        print(line)
    return 1 if found else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
