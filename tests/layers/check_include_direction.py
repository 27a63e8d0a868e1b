#!/usr/bin/env python3
"""The layering check (ctest: include_direction; its own test is
check_include_direction_test.py, ctest include_direction_self_test).

Reads the sources and the CMakeLists.txt files, builds nothing. The layers,
lowest first (ARCHITECTURE.md draws them):

    proto <- common (and obs) <- storage <- actors <- gateway <- runtime

with tools/ and tests/ above them. Four rules:

1. Layers. A quoted #include in a file under a layer names that layer or one
   below it, never tools/ or tests/.
2. Tools. A file under tools/ includes only proto/, common/ and tools/: tools
   talk to nodes over their APIs. tools/bench, which measures the internals,
   may include any layer. No tool includes tests/: a program that needs what
   tests/ holds lives in tests/ (tests/sim/raft_soak).
3. Actors. A file in actors/<a>/ includes another actor folder actors/<b>/
   only through b's public interface: its `*_actor.hpp` headers, the actor's
   shell (its state struct and the behaviour function that whoever spawns it
   hands to spawn). Every other file in actors/<b>/ is b's own; what two
   actors share lives in a lower layer (proto/ for vocabulary, common/ for
   helpers).
4. Links. In the CMakeLists.txt files of the layers, tools/ and tests/, each
   target_link_libraries edge to one of the project's own targets (a target
   belongs to the folder whose CMakeLists.txt defines it), and each source or
   include path a target names in another folder, follows the same direction:
   a layer uses its own layer or those below it, never tools/ or tests/; a
   tool uses any layer below runtime/ and tools/, never tests/; tests use
   anything.

Prints each offence with its file and line and exits 1 if there is one.

    check_include_direction.py <repository root>
"""
import os
import re
import sys

RANK = {"proto": 0, "common": 1, "obs": 1, "storage": 2, "actors": 3, "gateway": 4, "runtime": 5}
TOOLS_MAY_INCLUDE = {"proto", "common", "tools"}
ABOVE = ("tools", "tests")  # above every layer
KNOWN = set(RANK) | set(ABOVE)
INCLUDE = re.compile(r'^\s*#\s*include\s*"([^"]+)"')
SOURCES = (".hpp", ".cpp", ".h")
ORDER = "proto <- common <- storage <- actors <- gateway <- runtime"


def top_of(path):
    return path.split("/", 1)[0]


def files_under(root, top, suffixes):
    for d, dirs, names in os.walk(os.path.join(root, top)):
        dirs.sort()
        for n in sorted(names):
            if n.endswith(suffixes):
                yield os.path.relpath(os.path.join(d, n), root).replace(os.sep, "/")


def includes(root, path):
    """(line number, target) of each quoted include of `path`."""
    with open(os.path.join(root, path), encoding="utf-8", errors="replace") as f:
        for number, line in enumerate(f, 1):
            m = INCLUDE.match(line)
            if m:
                yield number, m.group(1)


def may_use(src, dst):
    """Whether a file or target of top folder `src` may use one of `dst` (rules 1, 4)."""
    if src == "tests":
        return True
    if dst == "tests":
        return False
    if src == "tools":
        return dst == "tools" or RANK[dst] < RANK["runtime"]
    if dst == "tools":
        return False
    return RANK[dst] <= RANK[src]


# -- rules 1 to 3: the includes --------------------------------------------------


def actor_folder(path):
    """"b" for a path actors/b/..., else None."""
    parts = path.split("/")
    return parts[1] if len(parts) > 2 and parts[0] == "actors" else None


def actor_public(target):
    """Whether `target` (actors/b/...) is b's public interface (rule 3)."""
    parts = target.split("/")
    return len(parts) == 3 and parts[2].endswith("_actor.hpp")


def include_offences(root):
    found, checked = [], 0
    for layer in RANK:
        for path in files_under(root, layer, SOURCES):
            checked += 1
            for number, target in includes(root, path):
                top = top_of(target)
                if top in KNOWN and not may_use(layer, top):
                    found.append(f"{path}:{number}: includes {target}: a back edge ({layer} may "
                                 f"not depend on {top}; {ORDER})")
                    continue
                mine, theirs = actor_folder(path), actor_folder(target)
                if mine and theirs and mine != theirs and not actor_public(target):
                    found.append(f"{path}:{number}: includes {target}: actors/{mine} reaches into "
                                 f"actors/{theirs} (another actor only through its *_actor.hpp; "
                                 "what two share belongs in proto/ or common/)")
    for path in files_under(root, "tools", SOURCES):
        checked += 1
        bench = path.startswith("tools/bench/")
        for number, target in includes(root, path):
            top = top_of(target)
            if top == "tests":
                found.append(f"{path}:{number}: includes {target}: tools do not reach into tests/ "
                             "(a program that needs it lives in tests/)")
            elif top in KNOWN and not bench and top not in TOOLS_MAY_INCLUDE:
                found.append(f"{path}:{number}: includes {target}: tools use only proto/ and "
                             "common/ (tools/bench aside)")
    return found, checked


# -- rule 4: the CMake link graph ------------------------------------------------


def cmake_calls(text):
    """(name, args, line) of each command call in CMake `text`; comments dropped,
    quoted arguments unquoted."""
    calls, i, n, line = [], 0, len(text), 1
    while i < n:
        c = text[i]
        if c == "#":
            while i < n and text[i] != "\n":
                i += 1
        elif c == "\n":
            line += 1
            i += 1
        elif c.isalpha() or c == "_":
            j = i
            while j < n and (text[j].isalnum() or text[j] == "_"):
                j += 1
            name, k = text[i:j], j
            while k < n and text[k] in " \t":
                k += 1
            if k < n and text[k] == "(":
                args, k, lines = cmake_args(text, k + 1)
                calls.append((name.lower(), args, line))
                line += lines
                i = k
            else:
                i = j
        else:
            i += 1
    return calls


def cmake_args(text, i):
    """The arguments of a call whose "(" ends before `i`: (args, index after ")",
    newlines passed)."""
    args, cur, depth, lines, n = [], None, 1, 0, len(text)

    def flush():
        nonlocal cur
        if cur is not None:
            args.append(cur)
        cur = None

    while i < n:
        c = text[i]
        if c == '"':
            i += 1
            cur = cur or ""
            while i < n and text[i] != '"':
                if text[i] == "\\" and i + 1 < n:
                    i += 1
                if text[i] == "\n":
                    lines += 1
                cur += text[i]
                i += 1
        elif c == "#":
            while i < n and text[i] != "\n":
                i += 1
            continue
        elif c == "(":
            depth += 1
            cur = (cur or "") + c
        elif c == ")":
            depth -= 1
            if depth == 0:
                flush()
                return args, i + 1, lines
            cur = (cur or "") + c
        elif c.isspace():
            lines += c == "\n"
            flush()
        else:
            cur = (cur or "") + c
        i += 1
    flush()
    return args, i, lines


LINK_KEYWORDS = {"PUBLIC", "PRIVATE", "INTERFACE", "LINK_PUBLIC", "LINK_PRIVATE",
                 "LINK_INTERFACE_LIBRARIES", "debug", "optimized", "general"}
PATH_COMMANDS = {"add_executable": 1, "add_library": 1, "target_sources": 1,
                 "target_include_directories": 1, "include_directories": 0}


def cmake_files(root):
    for top in sorted(KNOWN):
        for path in files_under(root, top, ("CMakeLists.txt", ".cmake")):
            with open(os.path.join(root, path), encoding="utf-8", errors="replace") as f:
                yield path, cmake_calls(f.read())


def path_top(root, cmake_dir, arg):
    """The top folder a source or include path `arg` of a CMakeLists.txt in
    `cmake_dir` names, or None (a variable left, outside the repository)."""
    for var in ("${CMAKE_SOURCE_DIR}", "${PROJECT_SOURCE_DIR}"):
        arg = arg.replace(var, root)
    for var in ("${CMAKE_CURRENT_SOURCE_DIR}", "${CMAKE_CURRENT_LIST_DIR}"):
        arg = arg.replace(var, os.path.join(root, cmake_dir))
    if "${" in arg or "$<" in arg:
        return None
    rel = os.path.relpath(os.path.normpath(os.path.join(root, cmake_dir, arg)), root)
    if rel.startswith(".."):
        return None
    return top_of(rel.replace(os.sep, "/"))


def link_offences(root):
    files = list(cmake_files(root))
    owner = {}  # target -> top folder of the CMakeLists.txt that defines it
    for path, calls in files:
        for name, args, _ in calls:
            if name in ("add_library", "add_executable") and args and "IMPORTED" not in args:
                owner.setdefault(args[0], top_of(path))
    found = []
    for path, calls in files:
        src = top_of(path)
        for name, args, line in calls:
            if name == "target_link_libraries" and args:
                user = owner.get(args[0], src)
                for lib in args[1:]:
                    dst = owner.get(lib)
                    if lib not in LINK_KEYWORDS and dst and not may_use(user, dst):
                        found.append(f"{path}:{line}: {args[0]} links {lib} ({dst}/): a back edge "
                                     f"in the link graph ({user} may not depend on {dst})")
            if name in PATH_COMMANDS:
                for arg in args[PATH_COMMANDS[name]:]:
                    dst = path_top(root, os.path.dirname(path), arg)
                    if dst in KNOWN and dst != src and not may_use(src, dst):
                        found.append(f"{path}:{line}: {name} names {arg}: {src} may not use "
                                     f"{dst}/ (move what both need where both may use it)")
    return found, len(files)


def main(root):
    found, checked = include_offences(root)
    links, cmakes = link_offences(root)
    found += links
    for line in found:
        print(line)
    if found:
        print(f"{len(found)} edge(s) against the layer order {ORDER} (ARCHITECTURE.md)")
        return 1
    print(f"include direction: {checked} files and {cmakes} CMake files, no back edge")
    return 0


if __name__ == "__main__":
    if len(sys.argv) != 2:
        sys.exit("usage: check_include_direction.py <repository root>")
    sys.exit(main(sys.argv[1]))
