// The one clock (common/clock.hpp): a system wall_clock reads the system's
// time whatever actor clock it is given; a simulated one reads its anchor plus
// the time the actor clock advanced since, so CAF's test clock drives it.
#include "common/clock.hpp"

#include <chrono>

#include <caf/detail/test_actor_clock.hpp>
#include <gtest/gtest.h>

namespace aisched {
namespace {

using namespace std::chrono_literals;

TEST(wall_clock, the_default_reads_the_system_clock_not_the_actor_clock) {
  caf::detail::test_actor_clock virtual_time;  // stands still unless advanced
  wall_clock system;
  EXPECT_FALSE(system.is_simulated());
  auto before = system_now_ms();
  auto read = system.now(virtual_time);
  EXPECT_GE(read, before);
  EXPECT_LE(read, system_now_ms());
  EXPECT_GT(read, 1'700'000'000'000) << "not unix milliseconds";
}

TEST(wall_clock, a_simulated_clock_moves_with_the_actor_clock_only) {
  caf::detail::test_actor_clock virtual_time;
  auto at = wall_clock::simulated(1'767'225'600'000, virtual_time.now());  // 2026-01-01
  EXPECT_TRUE(at.is_simulated());
  EXPECT_EQ(at.now(virtual_time), 1'767'225'600'000);
  EXPECT_EQ(at.now(virtual_time), 1'767'225'600'000) << "real time passing moves it";
  virtual_time.current_time += 1500ms;
  EXPECT_EQ(at.now(virtual_time), 1'767'225'601'500);
  virtual_time.current_time += 999us;  // whole milliseconds only
  EXPECT_EQ(at.now(virtual_time), 1'767'225'601'500);
}

TEST(wall_clock, copies_of_one_simulated_clock_agree) {
  caf::detail::test_actor_clock virtual_time;
  auto since = virtual_time.now();
  virtual_time.current_time += 10s;  // an actor spawned later reads the same time
  auto first = wall_clock::simulated(5'000, since);
  auto copy = first;
  EXPECT_EQ(first.now(virtual_time), 15'000);
  EXPECT_EQ(copy.now(virtual_time), first.now(virtual_time));
}

}  // namespace
}  // namespace aisched
