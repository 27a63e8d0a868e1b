// Tests for folding a proxy's batch of reports: a start and the result of the
// same attempt in one batch become the result alone, carrying the start time;
// a start without its result, or with the result of another attempt, stays;
// nothing else moves.
#include "actors/worker_proxy/report_batch.hpp"

#include <gtest/gtest.h>

namespace aisched::worker_proxy {
namespace {

using proto::instance_state;
using proto::run_result;

run_result report(const std::string& id, uint32_t attempt, instance_state s, unix_ms started,
                  unix_ms finished = 0) {
  run_result r;
  r.instance_id = id;
  r.worker_id = "w1";
  r.attempt = attempt;
  r.state = s;
  r.started_at = started;
  r.finished_at = finished;
  return r;
}

std::vector<std::string> states_of(const std::vector<run_result>& rs) {
  std::vector<std::string> out;
  for (auto& r : rs) out.push_back(r.instance_id + ":" + std::string(proto::name_of(r.state)));
  return out;
}

TEST(report_batch, a_start_and_its_result_in_one_batch_become_the_result_with_the_start_time) {
  std::vector<run_result> b{report("a", 1, instance_state::running, 100),
                            report("b", 1, instance_state::running, 110),
                            report("a", 1, instance_state::success, 0, 150)};
  fold_starts(b);
  EXPECT_EQ(states_of(b), (std::vector<std::string>{"b:running", "a:success"}));
  EXPECT_EQ(b[1].started_at, 100);  // the result did not say: the start's time
  EXPECT_EQ(b[1].finished_at, 150);
  EXPECT_EQ(b[1].worker_id, "w1");
}

TEST(report_batch, a_result_that_states_its_start_keeps_it) {
  std::vector<run_result> b{report("a", 1, instance_state::running, 100),
                            report("a", 1, instance_state::failed, 101, 150)};
  fold_starts(b);
  ASSERT_EQ(b.size(), 1u);
  EXPECT_EQ(b[0].state, instance_state::failed);
  EXPECT_EQ(b[0].started_at, 101);
}

TEST(report_batch, a_start_of_another_attempt_or_after_the_result_is_kept) {
  std::vector<run_result> b{report("a", 2, instance_state::running, 200),
                            report("a", 1, instance_state::failed, 100, 150),
                            report("c", 1, instance_state::success, 10, 20),
                            report("c", 1, instance_state::running, 30)};
  fold_starts(b);
  EXPECT_EQ(states_of(b),
            (std::vector<std::string>{"a:running", "a:failed", "c:success", "c:running"}));
}

TEST(report_batch, a_batch_of_starts_only_is_unchanged) {
  std::vector<run_result> b{report("a", 1, instance_state::running, 1),
                            report("b", 1, instance_state::running, 2)};
  fold_starts(b);
  EXPECT_EQ(states_of(b), (std::vector<std::string>{"a:running", "b:running"}));
}

}  // namespace
}  // namespace aisched::worker_proxy
