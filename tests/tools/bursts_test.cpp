// aisched-chaos's check of bulk-enqueued runs against the bursts the workload
// sent (tools/chaos/bursts).
#include <gtest/gtest.h>

#include <boost/json.hpp>

#include "tools/chaos/bursts.hpp"

using aisched::chaos::acked_batch;
using aisched::chaos::burst_record;
using aisched::chaos::check_bursts;
namespace json = boost::json;

namespace {

using runs_by_id = std::map<std::string, json::object>;

constexpr uint64_t bulk_task = 7;

/// Adds the `n` runs of a batch of task `task` at instant `slot` to `runs`;
/// returns their ids in shard order.
std::vector<std::string> add_batch(runs_by_id& runs, const std::string& slot, size_t n,
                                   uint64_t task = bulk_task) {
  std::vector<std::string> ids;
  for (size_t k = 0; k < n; ++k) {
    auto id = std::to_string(task) + "-" + slot + "-" + std::to_string(k);
    runs[id] = json::object{{"id", id}, {"task_id", task}, {"slot", slot}, {"shard", k},
                            {"state", "success"}};
    ids.push_back(id);
  }
  return ids;
}

burst_record one_acked(const std::vector<std::string>& ids) {
  burst_record b;
  b.task = bulk_task;
  b.acked.push_back(acked_batch{"n1", ids.size(), ids});
  return b;
}

std::string joined(const std::vector<std::string>& lines) {
  std::string out;
  for (auto& l : lines) out += l + "\n";
  return out;
}

TEST(chaos_bursts, acknowledged_whole_batches_beside_other_tasks_hold) {
  runs_by_id runs;
  auto bursts = one_acked(add_batch(runs, "1000", 5));
  bursts.acked.push_back(acked_batch{"n2", 3, add_batch(runs, "2000", 3)});
  add_batch(runs, "1000", 1, /*task=*/3);  // a periodic task's run at the same instant
  auto found = check_bursts("n1", runs, bursts);
  EXPECT_TRUE(found.empty()) << joined(found);
}

TEST(chaos_bursts, a_lost_acknowledged_run_is_a_violation) {
  runs_by_id runs;
  auto bursts = one_acked(add_batch(runs, "1000", 4));
  runs.erase(bursts.acked[0].run_ids[2]);
  auto found = check_bursts("n3", runs, bursts);
  ASSERT_FALSE(found.empty());
  auto all = joined(found);
  EXPECT_NE(all.find("acknowledged run 7-1000-2"), std::string::npos) << all;
  EXPECT_NE(all.find("missing on n3"), std::string::npos) << all;
}

TEST(chaos_bursts, an_extra_run_at_an_acknowledged_instant_is_a_violation) {
  runs_by_id runs;
  auto ids = add_batch(runs, "1000", 4);
  add_batch(runs, "1000", 5);  // shard 4 as well: one run more than acknowledged
  auto found = check_bursts("n1", runs, one_acked(ids));
  ASSERT_EQ(found.size(), 1u) << joined(found);
  EXPECT_NE(found[0].find("has 5 runs"), std::string::npos) << found[0];
}

TEST(chaos_bursts, an_unacknowledged_batch_needs_an_uncertain_request) {
  runs_by_id runs;
  auto bursts = one_acked(add_batch(runs, "1000", 3));
  add_batch(runs, "3000", 3);  // committed, but its answer was lost
  auto found = check_bursts("n1", runs, bursts);
  ASSERT_EQ(found.size(), 1u) << joined(found);
  EXPECT_NE(found[0].find("1 bursts nobody acknowledged"), std::string::npos) << found[0];
  bursts.uncertain = 1;
  found = check_bursts("n1", runs, bursts);
  EXPECT_TRUE(found.empty()) << joined(found);
}

TEST(chaos_bursts, a_partial_batch_is_a_violation) {
  runs_by_id runs;
  add_batch(runs, "3000", 4);
  runs.erase("7-3000-0");  // shards 1..3 only: a batch is one raft command
  burst_record bursts;
  bursts.task = bulk_task;
  bursts.uncertain = 1;
  auto found = check_bursts("n2", runs, bursts);
  ASSERT_EQ(found.size(), 1u) << joined(found);
  EXPECT_NE(found[0].find("not whole"), std::string::npos) << found[0];
}

TEST(chaos_bursts, an_answer_that_does_not_name_every_run_is_a_violation) {
  runs_by_id runs;
  auto ids = add_batch(runs, "1000", 3);
  burst_record bursts;
  bursts.task = bulk_task;
  bursts.acked.push_back(acked_batch{"n1", 4, ids});  // sent 4, answered 3 ids
  auto found = check_bursts("n1", runs, bursts);
  ASSERT_EQ(found.size(), 1u) << joined(found);
  EXPECT_NE(found[0].find("acknowledged with 3 run ids"), std::string::npos) << found[0];
}

TEST(chaos_bursts, nothing_to_check_without_a_bulk_task) {
  runs_by_id runs;
  add_batch(runs, "1000", 3);
  EXPECT_TRUE(check_bursts("n1", runs, burst_record{}).empty());
}

}  // namespace
