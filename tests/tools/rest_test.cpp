// aisched-chaos's verdict on runs at rest (tools/chaos/rest): a run waiting for
// the resume of the task the harness paused is settled; any other waiting run is not.
#include <gtest/gtest.h>

#include <boost/json.hpp>

#include "tools/chaos/rest.hpp"

using aisched::chaos::final_state;
using aisched::chaos::held_by_pause;
namespace json = boost::json;

namespace {

const char* const paused_reason = "task paused: the run waits for its resume";

json::object run(const char* state, const char* error) {
  return json::object{{"id", "1-1000-0"}, {"task_id", 1}, {"state", state}, {"error", error}};
}

json::object task(bool paused) { return json::object{{"id", 1}, {"paused", paused}}; }

TEST(chaos_rest, ended_runs_are_final_and_waiting_ones_are_not) {
  for (auto* s : {"success", "failed", "timed_out", "cancelled"}) EXPECT_TRUE(final_state(s)) << s;
  for (auto* s : {"pending", "dispatched", "running", "retry_waiting"})
    EXPECT_FALSE(final_state(s)) << s;
}

TEST(chaos_rest, a_pending_run_of_a_paused_task_with_the_routers_reason_is_held) {
  auto t = task(true);
  EXPECT_TRUE(held_by_pause(run("pending", paused_reason), &t));
}

TEST(chaos_rest, a_waiting_run_is_not_held_unless_its_task_is_paused_and_the_reason_committed) {
  auto paused = task(true);
  auto running = task(false);
  // Its task runs: the run must be dispatched, however it waits.
  EXPECT_FALSE(held_by_pause(run("pending", paused_reason), &running));
  // Paused, but the router has not said so yet (or says another reason): not at rest.
  EXPECT_FALSE(held_by_pause(run("pending", ""), &paused));
  EXPECT_FALSE(held_by_pause(run("pending", "no worker matches the task's labels"), &paused));
  // Not pending: dispatched and running runs go on through a pause.
  EXPECT_FALSE(held_by_pause(run("running", paused_reason), &paused));
  EXPECT_FALSE(held_by_pause(run("retry_waiting", paused_reason), &paused));
  // Its task not listed (deleted), or listed without the field.
  EXPECT_FALSE(held_by_pause(run("pending", paused_reason), nullptr));
  auto bare = json::object{{"id", 1}};
  EXPECT_FALSE(held_by_pause(run("pending", paused_reason), &bare));
}

}  // namespace
