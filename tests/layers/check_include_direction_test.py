#!/usr/bin/env python3
"""The layering check's own test (ctest: include_direction_self_test).

Runs check_include_direction.py over small trees written to a temporary
directory: a tree that keeps every rule passes, and each kind of bad edge
(an include or a link that points up, a tool reaching into tests/ by an
include or a CMake source path, an actor reaching into another actor's
internals) is reported with its file and line, and makes the script exit 1.

    check_include_direction_test.py
"""
import os
import subprocess
import sys
import tempfile
import unittest

sys.dont_write_bytecode = True  # no __pycache__ in the source tree
HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
import check_include_direction as check  # noqa: E402

# A tree that keeps every rule, the edges each rule allows included.
GOOD = {
    "proto/types.hpp": "#pragma once\n#include <string>\n",
    "proto/CMakeLists.txt": "add_library(aisched_proto types.cpp)\n",
    "common/log.hpp": '#pragma once\n#include "proto/types.hpp"\n#include "obs/metrics.hpp"\n',
    "common/CMakeLists.txt": "add_library(aisched_log log.cpp)\n"
                             "target_link_libraries(aisched_log PUBLIC aisched_proto aisched_obs)\n",
    "obs/metrics.hpp": "#pragma once\n",
    "obs/CMakeLists.txt": "add_library(aisched_obs metrics.cpp)\n",
    "storage/rocks.hpp": '#include "common/log.hpp"\n',
    "storage/CMakeLists.txt": "add_library(aisched_storage rocks.cpp)\n"
                              "target_link_libraries(aisched_storage PUBLIC aisched_log)\n",
    "actors/worker/worker_actor.hpp": '#include "storage/rocks.hpp"\n',
    "actors/worker/executor.hpp": '#include "actors/worker/worker_actor.hpp"\n',
    "actors/worker/CMakeLists.txt": "add_library(aisched_worker worker_actor.cpp executor.cpp)\n"
                                    "target_link_libraries(aisched_worker PUBLIC aisched_storage)\n",
    # Another actor through its shell: allowed.
    "actors/router/workers.cpp": '#include "actors/worker/worker_actor.hpp"\n',
    "actors/router/CMakeLists.txt": "# the router (a comment naming aisched_gateway is no edge)\n"
                                    "add_library(aisched_router workers.cpp)\n"
                                    "target_link_libraries(aisched_router PUBLIC aisched_worker\n"
                                    "  PRIVATE caf::core)\n",
    "gateway/server.cpp": '#include "actors/worker/executor.hpp"\n',
    "gateway/CMakeLists.txt": "add_library(aisched_gateway server.cpp)\n"
                              'file(WRITE x.cpp "#include \\"runtime/main.hpp\\"\\n")\n'
                              "target_link_libraries(aisched_gateway PUBLIC aisched_router)\n",
    "runtime/main.cpp": '#include "gateway/server.hpp"\n',
    "runtime/CMakeLists.txt": "add_executable(aisched main.cpp)\n"
                              "target_link_libraries(aisched PRIVATE aisched_gateway)\n",
    "tools/ctl/main.cpp": '#include "common/log.hpp"\n#include "tools/ctl/output.hpp"\n',
    "tools/ctl/CMakeLists.txt": "add_executable(ctl main.cpp)\n"
                                "target_link_libraries(ctl PRIVATE aisched_gateway)\n",
    "tools/bench/bench_worker.cpp": '#include "actors/worker/executor.hpp"\n',
    "tests/sim/sim.cpp": '#include "runtime/main.cpp"\n#include "actors/worker/executor.hpp"\n',
    "tests/sim/CMakeLists.txt": "add_library(aisched_sim STATIC sim.cpp)\n"
                                "target_link_libraries(aisched_sim PUBLIC aisched ctl)\n"
                                "add_executable(soak ${CMAKE_SOURCE_DIR}/tools/ctl/main.cpp)\n",
}


def write(root, files):
    for path, text in files.items():
        full = os.path.join(root, path)
        os.makedirs(os.path.dirname(full), exist_ok=True)
        with open(full, "w") as f:
            f.write(text)


class layering_check(unittest.TestCase):
    def offences(self, extra):
        """What the check reports on GOOD with `extra` written over it."""
        with tempfile.TemporaryDirectory() as root:
            write(root, {**GOOD, **extra})
            includes, _ = check.include_offences(root)
            links, _ = check.link_offences(root)
            return includes + links

    def assert_reports(self, extra, *where):
        found = self.offences(extra)
        self.assertEqual(len(found), len(where), "\n".join(found))
        for line, prefix in zip(found, where):
            self.assertTrue(line.startswith(prefix), f"{line!r} does not start with {prefix!r}")

    def test_a_tree_that_keeps_the_rules_passes(self):
        self.assertEqual(self.offences({}), [])

    def test_a_layer_including_a_higher_one_fails(self):
        self.assert_reports({"common/bad.hpp": '#include "storage/rocks.hpp"\n'},
                            "common/bad.hpp:1: includes storage/rocks.hpp: a back edge")

    def test_a_layer_including_tests_or_tools_fails(self):
        self.assert_reports({"runtime/bad.cpp": '\n#include "tests/sim/sim.hpp"\n'
                                                '#include "tools/ctl/output.hpp"\n'},
                            "runtime/bad.cpp:2: includes tests/sim/sim.hpp: a back edge",
                            "runtime/bad.cpp:3: includes tools/ctl/output.hpp: a back edge")

    def test_a_tool_including_tests_fails(self):
        self.assert_reports({"tools/soak/soak.cpp": '#include "tests/sim/sim.hpp"\n'},
                            "tools/soak/soak.cpp:1: includes tests/sim/sim.hpp: tools do not "
                            "reach into tests/")

    def test_a_benchmark_including_tests_fails(self):
        self.assert_reports({"tools/bench/b.cpp": '#include "tests/support/fixture.hpp"\n'},
                            "tools/bench/b.cpp:1: includes tests/support/fixture.hpp: tools do "
                            "not reach into tests/")

    def test_a_tool_including_a_layer_above_common_fails(self):
        self.assert_reports({"tools/ctl/bad.cpp": '#include "storage/rocks.hpp"\n'},
                            "tools/ctl/bad.cpp:1: includes storage/rocks.hpp: tools use only")

    def test_a_tool_compiling_sources_of_tests_fails(self):
        self.assert_reports(
            {"tools/soak/CMakeLists.txt":
                 "# raft soak\nadd_executable(soak soak.cpp\n"
                 "  ${CMAKE_SOURCE_DIR}/tests/sim/sim.cpp ../../tests/sim/more.cpp)\n"},
            "tools/soak/CMakeLists.txt:2: add_executable names ${CMAKE_SOURCE_DIR}/tests/sim/sim.cpp",
            "tools/soak/CMakeLists.txt:2: add_executable names ../../tests/sim/more.cpp")

    def test_an_actor_including_another_actors_internals_fails(self):
        self.assert_reports({"actors/router/dispatch.cpp": '#include "actors/worker/executor.hpp"\n'},
                            "actors/router/dispatch.cpp:1: includes actors/worker/executor.hpp: "
                            "actors/router reaches into actors/worker")

    def test_an_actor_including_its_own_internals_passes(self):
        self.assertEqual(self.offences({"actors/worker/x.cpp": '#include "actors/worker/executor.hpp"\n'}),
                         [])

    def test_an_upward_link_fails(self):
        self.assert_reports(
            {"storage/CMakeLists.txt": "add_library(aisched_storage\n  rocks.cpp)\n"
                                       "target_link_libraries(aisched_storage\n"
                                       "  PUBLIC aisched_log PRIVATE aisched_worker)\n"},
            "storage/CMakeLists.txt:3: aisched_storage links aisched_worker (actors/): a back edge")

    def test_a_layer_linking_a_tool_or_test_library_fails(self):
        self.assert_reports(
            {"gateway/CMakeLists.txt": "add_library(aisched_gateway server.cpp)\n"
                                       'file(WRITE x.cpp "#include \\"a.hpp\\"\n(")\n'
                                       "target_link_libraries(aisched_gateway PUBLIC ctl aisched_sim)\n"},
            "gateway/CMakeLists.txt:4: aisched_gateway links ctl (tools/): a back edge",
            "gateway/CMakeLists.txt:4: aisched_gateway links aisched_sim (tests/): a back edge")

    def test_a_tool_linking_runtime_or_tests_fails(self):
        self.assert_reports(
            {"tools/ctl/CMakeLists.txt": "add_executable(ctl main.cpp)\n"
                                         "target_link_libraries(ctl PRIVATE aisched aisched_sim)\n"},
            "tools/ctl/CMakeLists.txt:2: ctl links aisched (runtime/): a back edge",
            "tools/ctl/CMakeLists.txt:2: ctl links aisched_sim (tests/): a back edge")

    def test_the_script_exits_1_and_names_each_edge(self):
        with tempfile.TemporaryDirectory() as root:
            write(root, {**GOOD,
                         "tools/soak/soak.cpp": '#include "tests/sim/sim.hpp"\n',
                         "actors/router/d.cpp": '#include "actors/worker/executor.hpp"\n',
                         "common/CMakeLists.txt": "add_library(aisched_log log.cpp)\n"
                                                  "target_link_libraries(aisched_log aisched_storage)\n"})
            run = subprocess.run([sys.executable, os.path.join(HERE, "check_include_direction.py"),
                                  root], capture_output=True, text=True)
            self.assertEqual(run.returncode, 1, run.stdout + run.stderr)
            for edge in ("tools/soak/soak.cpp:1", "actors/router/d.cpp:1",
                         "common/CMakeLists.txt:2: aisched_log links aisched_storage"):
                self.assertIn(edge, run.stdout)
            self.assertIn("3 edge(s) against the layer order", run.stdout)
        with tempfile.TemporaryDirectory() as root:
            write(root, GOOD)
            run = subprocess.run([sys.executable, os.path.join(HERE, "check_include_direction.py"),
                                  root], capture_output=True, text=True)
            self.assertEqual(run.returncode, 0, run.stdout + run.stderr)


if __name__ == "__main__":
    unittest.main()
