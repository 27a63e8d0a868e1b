// storage::state_machine on a real RocksDB applying a bulk enqueue (a fire slot
// with payloads): one pending run per payload, each with its own payload, in
// order, as shard k of N; a repeat of the entry is a no-op; it survives a
// reopen; and each run then goes its own way (one fails and retries, the others
// succeed).
#include "storage/state_machine_fixture.hpp"

namespace aisched::storage {
namespace {

using namespace proto;
using namespace testing_support;

fire_slot bulk_slot(uint64_t task, unix_ms slot, size_t n) {
  fire_slot s{task, slot, "trace"};
  for (size_t i = 0; i < n; ++i) s.payloads.push_back(R"({"n":)" + std::to_string(i) + "}");
  return s;
}

TEST_F(state_machine_test, a_bulk_slot_makes_one_run_per_payload_with_its_own_payload) {
  auto t = make_task("emails");
  t.schedule = "";
  auto id = create(t);
  auto a = must_apply(fire_of({bulk_slot(id, t0, 5)}));
  ASSERT_EQ(a.instances.size(), 5u);
  for (uint32_t k = 0; k < 5; ++k) {
    auto& x = a.instances[k];
    EXPECT_EQ(x.id, make_instance_id(id, t0, k)) << "in the order of the payloads";
    EXPECT_EQ(x.shard, k);
    EXPECT_EQ(x.shards, 5u);
    EXPECT_EQ(x.state, instance_state::pending);
    EXPECT_EQ(x.event_payload, R"({"n":)" + std::to_string(k) + "}");
    EXPECT_EQ(get_instance(x.id).event_payload, x.event_payload);
  }
  EXPECT_TRUE(must_apply(fire_of({bulk_slot(id, t0, 5)})).instances.empty())
      << "a repeated entry (a leader's retry) enqueued the batch twice";
  reopen();
  EXPECT_EQ(get_instance(make_instance_id(id, t0, 4)).event_payload, R"({"n":4})");
}

TEST_F(state_machine_test, each_run_of_a_batch_is_reported_and_retried_on_its_own) {
  auto t = make_task("emails");
  t.schedule = "";
  t.retry.max_attempts = 2;
  auto id = create(t);
  must_apply(fire_of({bulk_slot(id, t0, 3)}));
  std::vector<std::string> ids;
  for (uint32_t k = 0; k < 3; ++k) ids.push_back(make_instance_id(id, t0, k));
  std::vector<dispatch_entry> entries;
  for (auto& i : ids) entries.push_back({i, "w1"});
  must_apply(dispatch{1, t0 + 1, entries});
  auto failed = report(ids[1], instance_state::failed, t0 + 2);
  must_apply(report_results{1, t0 + 3,
                            {report(ids[0], instance_state::success, t0 + 2), failed,
                             report(ids[2], instance_state::success, t0 + 2)}});
  EXPECT_EQ(get_instance(ids[0]).state, instance_state::success);
  EXPECT_EQ(get_instance(ids[1]).state, instance_state::retry_waiting);
  EXPECT_EQ(get_instance(ids[2]).state, instance_state::success);
  EXPECT_EQ(get_instance(ids[1]).event_payload, R"({"n":1})") << "a retry keeps its payload";
}

}  // namespace
}  // namespace aisched::storage
