// Tests for the router's handover of runs in flight when a native worker
// registers (actors/router/adoption): held runs are adopted, those not held
// that never started (no `running` committed) are placed again, the others
// become worker_lost reports naming the worker and the attempt, other
// workers' runs are untouched.
#include "actors/router/adoption.hpp"

#include <gtest/gtest.h>

namespace aisched::router {
namespace {

using namespace proto;

instance in_flight(std::string id, std::string worker, uint32_t attempt,
                   instance_state s = instance_state::running) {
  instance x;
  x.id = std::move(id);
  x.worker_id = std::move(worker);
  x.attempt = attempt;
  x.state = s;
  return x;
}

TEST(adoption_test, held_runs_are_adopted_and_the_others_reported_lost) {
  std::vector<instance> runs{in_flight("1-0-0", "n1", 1), in_flight("2-0-0", "n1", 3),
                             in_flight("3-0-0", "n1", 1), in_flight("4-0-0", "n2", 1)};
  auto h = sort_in_flight(runs, "n1", {{"1-0-0", 1}, {"4-0-0", 1}});
  ASSERT_EQ(h.adopt.size(), 1u);
  EXPECT_EQ(h.adopt[0].id, "1-0-0");
  EXPECT_TRUE(h.replace.empty()) << "running attempts may have run";
  ASSERT_EQ(h.lost.size(), 2u) << "n2's run is not n1's to lose";
  EXPECT_EQ(h.lost[0].instance_id, "2-0-0");
  EXPECT_EQ(h.lost[1].instance_id, "3-0-0");
  for (auto& r : h.lost) {
    EXPECT_EQ(r.state, instance_state::failed);
    EXPECT_EQ(r.worker_id, "n1");
    EXPECT_EQ(r.exit_code, -1);
    EXPECT_EQ(r.error, "worker_lost: worker n1 restarted without it");
  }
  EXPECT_EQ(h.lost[0].attempt, 3u) << "the report ends exactly the attempt in flight";
  EXPECT_EQ(h.lost[1].attempt, 1u);
}

TEST(adoption_test, an_attempt_that_never_started_is_placed_again_not_lost) {
  // Dispatched (placed ahead of its instant, or never delivered) with no
  // `running` committed: no execution, so no failure either.
  auto unstarted = in_flight("1-0-0", "n1", 1, instance_state::dispatched);
  auto h = sort_in_flight({unstarted, in_flight("2-0-0", "n1", 1, instance_state::dispatched),
                           in_flight("3-0-0", "n2", 1, instance_state::dispatched)},
                          "n1", {{"2-0-0", 1}});
  ASSERT_EQ(h.replace.size(), 1u);
  EXPECT_EQ(h.replace[0].id, "1-0-0");
  EXPECT_EQ(h.replace[0].attempt, 1u) << "placed again as the same attempt";
  EXPECT_TRUE(h.lost.empty());
  ASSERT_EQ(h.adopt.size(), 1u);
  EXPECT_EQ(h.adopt[0].id, "2-0-0");
  EXPECT_TRUE(never_started(unstarted));
  unstarted.started_at = 1;
  EXPECT_FALSE(never_started(unstarted)) << "a start time means a running report committed";
  EXPECT_FALSE(never_started(in_flight("1-0-0", "n1", 1, instance_state::running)));
}

TEST(adoption_test, another_attempt_of_the_same_run_is_not_holding_it) {
  // The worker still has attempt 1's unacknowledged report; attempt 2 is in flight.
  auto h = sort_in_flight({in_flight("1-0-0", "n1", 2)}, "n1", {{"1-0-0", 1}});
  EXPECT_TRUE(h.adopt.empty());
  ASSERT_EQ(h.lost.size(), 1u);
  EXPECT_EQ(h.lost[0].attempt, 2u);
}

TEST(adoption_test, a_worker_holding_everything_loses_nothing) {
  auto h = sort_in_flight({in_flight("1-0-0", "n1", 1), in_flight("2-0-0", "n1", 1)}, "n1",
                          {{"2-0-0", 1}, {"1-0-0", 1}});
  EXPECT_EQ(h.adopt.size(), 2u);
  EXPECT_TRUE(h.lost.empty());
  EXPECT_TRUE(sort_in_flight({}, "n1", {}).lost.empty());
}

}  // namespace
}  // namespace aisched::router
