// aisched-chaos's one-leader-per-term check over members' logs (tools/chaos/leaders).
#include <gtest/gtest.h>

#include "tools/chaos/leaders.hpp"

using aisched::chaos::check_one_leader_per_term;

namespace {

std::string elected(const char* term, const char* leader) {
  return std::string(R"({"level":"info","msg":"elected leader","term":")") + term +
         R"(","leader":")" + leader + "\"}\n";
}

TEST(chaos_leaders, one_leader_per_term_across_restarts_holds) {
  size_t n = 0;
  auto found = check_one_leader_per_term(
      {{"n1", elected("2", "n1") + "{\"msg\":\"http listening\"}\n" + elected("5", "n1")},
       {"n2", elected("3", "n2")},
       {"n3", "not json\n" + elected("4", "n3")}},
      n);
  EXPECT_TRUE(found.empty()) << found.front();
  EXPECT_EQ(n, 4u);
}

TEST(chaos_leaders, two_members_that_won_one_term_are_a_violation) {
  size_t n = 0;
  auto found = check_one_leader_per_term(
      {{"n1", elected("3", "n1")}, {"n2", elected("2", "n2") + elected("3", "n2")}}, n);
  ASSERT_EQ(found.size(), 1u);
  EXPECT_NE(found[0].find("term 3"), std::string::npos) << found[0];
  EXPECT_NE(found[0].find("n1, n2"), std::string::npos) << found[0];
  EXPECT_EQ(n, 3u);
}

}  // namespace
