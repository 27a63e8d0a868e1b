#!/usr/bin/env python3
"""check_header_budget.py over small trees (ctest: header_budget_self_test):
it passes a tree within its lists and fails each offence it names."""
import os
import sys
import tempfile
import unittest

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import check_header_budget as check  # noqa: E402


def write(root, rel, text):
    path = os.path.join(root, rel)
    os.makedirs(os.path.dirname(path), exist_ok=True)
    with open(path, "w") as f:
        f.write(text)


class header_budget(unittest.TestCase):
    def tree(self, budget_of_big=10000, heavy_users=("actors/a/a.cpp",)):
        root = tempfile.mkdtemp(prefix="aisched-budget-")
        write(root, "proto/small.hpp", "#pragma once\nint small();\n")
        write(root, "proto/big.hpp", "#pragma once\n#include <string>\n#include <map>\n")
        write(root, "actors/a/a.cpp", '#include "proto/big.hpp"\n')
        write(root, "actors/b/b.cpp", '#include "proto/small.hpp"\n')
        write(root, "lists/header_budget.txt",
              f"# comment\nproto/small.hpp 10\nproto/big.hpp {budget_of_big}\n")
        write(root, "lists/heavy_headers.txt",
              "[proto/big.hpp]\n" + "".join(u + "\n" for u in heavy_users))
        return root

    def offences(self, root):
        return check.offences(root, os.path.join(root, "lists"))

    def test_a_tree_within_its_lists_passes(self):
        big, _ = check.preprocessed_lines(self.tree(), "proto/big.hpp")
        self.assertGreater(big, 1000)
        self.assertEqual(self.offences(self.tree(budget_of_big=big)), [])

    def test_a_header_over_its_budget_fails(self):
        found = self.offences(self.tree(budget_of_big=100))
        self.assertEqual(len(found), 1, found)
        self.assertIn("proto/big.hpp: preprocesses to", found[0])

    def test_a_header_without_a_budget_fails(self):
        root = self.tree(budget_of_big=10**6)
        write(root, "proto/new.hpp", "#pragma once\n")
        self.assertEqual(self.offences(root), ["proto/new.hpp: has no budget in header_budget.txt "
                                               "(measure it: g++ -std=c++17 -E -P -I. -x c++ "
                                               "proto/new.hpp | wc -l)"])

    def test_a_heavy_header_reaching_a_new_file_fails(self):
        root = self.tree(budget_of_big=10**6)
        write(root, "gateway/g.cpp", '#include "proto/big.hpp"\n')
        found = self.offences(root)
        self.assertEqual(len(found), 1, found)
        self.assertTrue(found[0].startswith("gateway/g.cpp: includes proto/big.hpp"), found)

    def test_a_listed_file_that_no_longer_includes_it_fails(self):
        root = self.tree(budget_of_big=10**6, heavy_users=("actors/a/a.cpp", "actors/b/b.cpp"))
        found = self.offences(root)
        self.assertEqual(len(found), 1, found)
        self.assertIn("actors/b/b.cpp no longer includes proto/big.hpp", found[0])


if __name__ == "__main__":
    unittest.main()
