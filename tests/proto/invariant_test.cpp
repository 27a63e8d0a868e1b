// The shared invariant check (proto/invariant.hpp): a broken invariant aborts
// naming the file, the line, what broke and the condition; a holding one is free.
#include "proto/invariant.hpp"

#include <gtest/gtest.h>

namespace {

TEST(invariant_death, a_broken_invariant_aborts_naming_what_and_where) {
  int slots = 2;
  EXPECT_DEATH(AISCHED_INVARIANT(slots == 3, "slot count drifted"),
               "invariant broken at .*invariant_test.cpp:[0-9]+: slot count drifted "
               "\\(slots == 3\\)");
}

TEST(invariant, a_holding_invariant_does_nothing) {
  int evaluated = 0;
  AISCHED_INVARIANT(++evaluated == 1, "evaluated once");
  EXPECT_EQ(evaluated, 1);
}

}  // namespace
