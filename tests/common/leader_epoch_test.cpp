// The leader-only protocol's bookkeeping (common/leader_epoch.hpp): an answer
// begun under an older leadership no longer counts, and a rebuild that
// finishes after leadership moved does not make the actor ready.
#include "common/leader_epoch.hpp"

#include <gtest/gtest.h>

namespace aisched {
namespace {

TEST(leader_epoch, a_change_moves_the_epoch_and_waits_for_the_rebuild) {
  leader_epoch lead;
  EXPECT_TRUE(lead.change(true, 3));
  auto e = lead.epoch;
  EXPECT_EQ(lead.term, 3u);
  EXPECT_TRUE(lead.leading);
  EXPECT_FALSE(lead.ready) << "ready before its rebuild";
  EXPECT_TRUE(lead.rebuilt(e));
  EXPECT_TRUE(lead.ready);
}

TEST(leader_epoch, work_of_an_older_epoch_does_not_count) {
  leader_epoch lead;
  lead.change(true, 3);
  auto old = lead.epoch;
  EXPECT_FALSE(lead.change(false, 4)) << "a follower does not rebuild";
  EXPECT_FALSE(lead.current(old));
  EXPECT_FALSE(lead.rebuilt(old)) << "the deposed leader's rebuild finished late";
  EXPECT_FALSE(lead.ready);
}

TEST(leader_epoch, a_late_rebuild_does_not_make_the_next_leadership_ready) {
  leader_epoch lead;
  lead.change(true, 3);
  auto first = lead.epoch;
  lead.change(true, 5);  // leading again, a new term: a new rebuild begins
  EXPECT_FALSE(lead.rebuilt(first));
  EXPECT_FALSE(lead.ready) << "term 5 was made ready by term 3's rebuild";
  EXPECT_TRUE(lead.rebuilt(lead.epoch));
  EXPECT_EQ(lead.term, 5u);
}

}  // namespace
}  // namespace aisched
