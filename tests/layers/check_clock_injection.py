#!/usr/bin/env python3
"""The clock check (ctest: clock_injection).

Every reading of the time goes through one interface, common/clock.hpp, so a
simulation on CAF's test coordinator drives the time the scheduler sees
(issue 45). Two rules, on the code outside the comments and string literals of
every .hpp/.cpp/.h file under proto/ common/ obs/ storage/ actors/ gateway/
runtime/ tools/ (tests/ are not checked: they measure real time on purpose):

1. No direct reading of a clock: std::chrono's `*_clock::now()` (or an alias's
   `clock::now()`), `high_resolution_clock`, `now_ms()` (the old free
   function), `gettimeofday`, `clock_gettime`, `time(nullptr)`, Boost's
   `*_clock::universal_time()`. Only common/clock.hpp reads them.
2. In the layers the simulation runs (actors/, storage/), no reading of the
   system's clocks through the interface either (`system_now_ms()`,
   `steady_now()`, a default `wall_clock{}` read on the spot): an actor reads
   its injected `wall_clock` with its actor clock (`now_of(self)`) and measures
   durations on `self->clock()`; a pure part takes the instant as an argument.
   SYSTEM_READS_ALLOWED lists the files that must read the real clock, each
   with why.

Prints each offence with its file and line, and exits 1 if there is one (or if
an allow-list entry names a file that is gone or no longer needs it).

    check_clock_injection.py <repository root>
"""
import os
import re
import sys

SCANNED = ("proto", "common", "obs", "storage", "actors", "gateway", "runtime", "tools")
SIMULATED = ("actors", "storage")
SOURCES = (".hpp", ".cpp", ".h")

# The one file that reads the system's clocks.
INTERFACE = "common/clock.hpp"

# Files of the simulated layers that read the system's clocks through the
# interface, with the reason each must.
SYSTEM_READS_ALLOWED = {
    "actors/worker/executor.cpp":
        "runs and times real processes on a pool thread; the simulation replaces "
        "the executor (issue 45 item 2), not its clock",
    "storage/wal_sync.cpp":
        "times a real fsync of the WAL on its own thread (the raft append metric); "
        "a simulated disk does not sync",
}

DIRECT = [
    (re.compile(r"\b\w*clock\s*::\s*now\s*\("), "a clock's now()"),
    (re.compile(r"\bhigh_resolution_clock\b"), "high_resolution_clock"),
    (re.compile(r"\bnow_ms\s*\("), "now_ms()"),
    (re.compile(r"\bgettimeofday\s*\("), "gettimeofday()"),
    (re.compile(r"\bclock_gettime\s*\("), "clock_gettime()"),
    (re.compile(r"(?<![\w.>])(?:std\s*::\s*|::\s*)?time\s*\(\s*(?:nullptr|NULL|0)\s*\)|"
                r"\bstd\s*::\s*time\s*\("), "time()"),
    (re.compile(r"\b(?:microsec|second)_clock\s*::\s*(?:universal|local)_time\b"),
     "a Boost clock"),
]

SYSTEM = [
    (re.compile(r"\bsystem_now_ms\s*\("), "system_now_ms()"),
    (re.compile(r"\bsteady_now\s*\("), "steady_now()"),
    (re.compile(r"\bwall_clock\s*(?:\{\s*\}|\(\s*\))\s*\.\s*now\s*\("), "a default wall_clock's now()"),
]


def in_number(text, i):
    """Whether position `i` follows the digits of a number literal."""
    j = i
    while j > 0 and (text[j - 1].isalnum() or text[j - 1] == "'"):
        j -= 1
    return j < i and text[j].isdigit()


def code_only(text):
    """`text` with comments and the insides of string and character literals
    blanked (newlines kept, so line numbers stay)."""
    out = []
    i, n = 0, len(text)
    while i < n:
        c = text[i]
        if text.startswith("//", i):
            j = text.find("\n", i)
            i = n if j < 0 else j
        elif text.startswith("/*", i):
            j = text.find("*/", i + 2)
            j = n if j < 0 else j + 2
            out.append("\n" * text.count("\n", i, j))
            i = j
        elif c == "R" and text.startswith('R"', i) and (i == 0 or not (text[i - 1].isalnum()
                                                                        or text[i - 1] == "_")):
            k = text.find("(", i + 2)
            if k < 0:
                out.append(c)
                i += 1
                continue
            end = ")" + text[i + 2:k] + '"'
            j = text.find(end, k)
            j = n if j < 0 else j + len(end)
            out.append('""' + "\n" * text.count("\n", i, j))
            i = j
        elif c == "'" and in_number(text, i):
            out.append(c)  # a digit separator (30'000), not a character literal
            i += 1
        elif c in "\"'":
            j = i + 1
            while j < n and text[j] != c and text[j] != "\n":
                j += 2 if text[j] == "\\" else 1
            out.append(c + c)
            i = j + 1
        else:
            out.append(c)
            i += 1
    return "".join(out)


def files_under(root, top):
    for d, _, names in os.walk(os.path.join(root, top)):
        for n in sorted(names):
            if n.endswith(SOURCES):
                yield os.path.relpath(os.path.join(d, n), root)


def offences(code, patterns):
    for number, line in enumerate(code.split("\n"), 1):
        for pattern, what in patterns:
            if pattern.search(line):
                yield number, what


def main(root):
    found = []
    used = set()
    checked = 0
    for top in SCANNED:
        for path in files_under(root, top):
            checked += 1
            with open(os.path.join(root, path), encoding="utf-8", errors="replace") as f:
                code = code_only(f.read())
            if path != INTERFACE:
                for number, what in offences(code, DIRECT):
                    found.append(f"{path}:{number}: reads {what} directly: read the time through "
                                 f"common/clock.hpp")
            if top in SIMULATED:
                system = list(offences(code, SYSTEM))
                if system and path in SYSTEM_READS_ALLOWED:
                    used.add(path)
                    continue
                for number, what in system:
                    found.append(f"{path}:{number}: reads the system's clock ({what}) in a layer "
                                 f"the simulation runs: use the actor's wall_clock (now_of(self)) "
                                 f"or self->clock(), or take the instant as an argument")
    for path, why in SYSTEM_READS_ALLOWED.items():
        if not os.path.exists(os.path.join(root, path)):
            found.append(f"{path}: listed in SYSTEM_READS_ALLOWED but gone: remove the entry")
        elif path not in used:
            found.append(f"{path}: listed in SYSTEM_READS_ALLOWED but reads no system clock: "
                         f"remove the entry")
    for line in found:
        print(line)
    if found:
        print(f"{len(found)} reading(s) of the time outside common/clock.hpp's rules "
              "(tests/layers/check_clock_injection.py, issue 45)")
        return 1
    print(f"clock injection: {checked} files, every reading of the time through common/clock.hpp; "
          f"system clocks in the simulated layers only in {', '.join(sorted(used))}")
    return 0


if __name__ == "__main__":
    if len(sys.argv) != 2:
        sys.exit("usage: check_clock_injection.py <repository root>")
    sys.exit(main(sys.argv[1]))
