// Paged reads of storage::state_machine against a real RocksDB: tasks by id
// (and tenant), instances by task (newest slot first), by state and by key,
// and the slot time-range filter.
#include "storage/state_machine_fixture.hpp"

namespace aisched::storage {
namespace {

using namespace proto;
using namespace testing_support;
// -- paging ----------------------------------------------------------------------

TEST_F(state_machine_test, list_tasks_pages_through_every_task_once) {
  std::vector<command> creates;
  for (int i = 0; i < 25; ++i) creates.push_back(create_task{make_task("t" + std::to_string(i))});
  apply(creates);

  std::vector<uint64_t> ids;
  std::vector<size_t> sizes;
  std::vector<std::string> cursors;
  task_query q{"", 0, 10};
  for (int guard = 0; guard < 10; ++guard) {
    auto p = sm_->list_tasks(q);
    ASSERT_TRUE(p);
    sizes.push_back(p->items.size());
    cursors.push_back(p->next_cursor);
    for (auto& t : p->items) ids.push_back(t.id);
    if (p->next_cursor.empty()) break;
    q.after_id = std::stoull(p->next_cursor);
  }
  EXPECT_EQ(sizes, (std::vector<size_t>{10, 10, 5}));
  EXPECT_EQ(cursors, (std::vector<std::string>{"10", "20", ""}));
  std::vector<uint64_t> expected(25);
  for (uint64_t i = 0; i < 25; ++i) expected[i] = i + 1;
  EXPECT_EQ(ids, expected);
}

TEST_F(state_machine_test, list_tasks_last_full_page_has_no_cursor) {
  std::vector<command> creates;
  for (int i = 0; i < 10; ++i) creates.push_back(create_task{make_task("t")});
  apply(creates);
  auto p = sm_->list_tasks(task_query{"", 0, 10});
  ASSERT_TRUE(p);
  EXPECT_EQ(p->items.size(), 10u);
  EXPECT_EQ(p->next_cursor, "");
}

TEST_F(state_machine_test, list_tasks_after_the_largest_id_is_empty) {
  create(make_task("a"));
  create(make_task("b"));
  auto p = sm_->list_tasks(task_query{"", std::numeric_limits<uint64_t>::max(), 10});
  ASSERT_TRUE(p);
  EXPECT_TRUE(p->items.empty()) << "got " << p->items.size() << " tasks, first id "
                                << p->items.front().id;
  EXPECT_EQ(p->next_cursor, "");
}

TEST_F(state_machine_test, list_tasks_pages_within_a_tenant) {
  std::vector<command> creates;
  for (int i = 0; i < 12; ++i)
    creates.push_back(create_task{make_task("t", i % 3 == 0 ? "acme" : "other")});
  apply(creates);
  std::vector<uint64_t> ids;
  task_query q{"acme", 0, 3};
  for (int guard = 0; guard < 10; ++guard) {
    auto p = sm_->list_tasks(q);
    ASSERT_TRUE(p);
    for (auto& t : p->items) {
      EXPECT_EQ(t.tenant, "acme");
      ids.push_back(t.id);
    }
    if (p->next_cursor.empty()) break;
    q.after_id = std::stoull(p->next_cursor);
  }
  EXPECT_EQ(ids, (std::vector<uint64_t>{1, 4, 7, 10}));
}

TEST_F(state_machine_test, instances_of_a_task_page_newest_slot_first) {
  auto before = create(make_task("neighbour before", "default", 1));
  auto id = create(make_task("subject", "default", 2));
  auto after = create(make_task("neighbour after", "default", 1));
  // Fire out of order, in separate batches, with the neighbours' slots interleaved.
  for (int s : {3, 0, 5, 1, 4, 2}) {
    const auto slot = t0 + s * minute;
    must_apply(fire_of({{before, slot, ""}, {id, slot, ""}, {after, slot, ""}}));
  }

  std::vector<size_t> sizes;
  auto ids = page_ids(instance_query{"", id, false, {}, "", 5}, &sizes);
  EXPECT_EQ(sizes, (std::vector<size_t>{5, 5, 2}));
  ASSERT_EQ(ids.size(), 12u);
  std::set<std::string> unique(ids.begin(), ids.end());
  EXPECT_EQ(unique.size(), 12u) << "no instance twice";
  unix_ms prev = std::numeric_limits<unix_ms>::max();
  for (auto& iid : ids) {
    auto x = get_instance(iid);
    EXPECT_EQ(x.task_id, id) << iid;
    EXPECT_LE(x.slot, prev) << "newest slot first: " << iid;
    prev = x.slot;
  }
  EXPECT_EQ(get_instance(ids.front()).slot, t0 + 5 * minute);
  EXPECT_EQ(get_instance(ids.back()).slot, t0);
}

TEST_F(state_machine_test, instances_by_state_page_and_follow_transitions) {
  auto a = create(make_task("a", "default", 3));
  auto b = create(make_task("b", "default", 3));
  for (int s = 0; s < 2; ++s)
    must_apply(fire_of({{a, t0 + s * minute, ""}, {b, t0 + s * minute, ""}}));

  std::vector<size_t> sizes;
  auto pending = page_ids(instance_query{"", 0, true, instance_state::pending, "", 5}, &sizes);
  EXPECT_EQ(sizes, (std::vector<size_t>{5, 5, 2}));
  EXPECT_EQ(std::set<std::string>(pending.begin(), pending.end()).size(), 12u);

  // Finish two runs of task a; move one of b to running.
  const auto a0 = make_instance_id(a, t0, 0), a1 = make_instance_id(a, t0, 1);
  const auto b0 = make_instance_id(b, t0, 0);
  must_apply(dispatch{1, t0, {{a0, "w1"}, {a1, "w1"}, {b0, "w1"}}});
  must_apply(report_results{1, t0, {report(a0, instance_state::success),
                                     report(a1, instance_state::success),
                                     report(b0, instance_state::running)}});

  auto still_pending = page_ids(instance_query{"", 0, true, instance_state::pending, "", 4});
  EXPECT_EQ(still_pending.size(), 9u);
  for (auto& iid : {a0, a1, b0})
    EXPECT_EQ(std::count(still_pending.begin(), still_pending.end(), iid), 0) << iid;
  for (auto& iid : still_pending) EXPECT_EQ(get_instance(iid).state, instance_state::pending);

  auto success = page_ids(instance_query{"", 0, true, instance_state::success, "", 1});
  EXPECT_EQ(std::set<std::string>(success.begin(), success.end()),
            (std::set<std::string>{a0, a1}));
  EXPECT_TRUE(page_ids(instance_query{"", 0, true, instance_state::dispatched, "", 10}).empty())
      << "the dispatched index entries left with the transition";
  EXPECT_EQ(page_ids(instance_query{"", 0, true, instance_state::running, "", 10}),
            std::vector<std::string>{b0});

  auto pending_of_b = page_ids(instance_query{"", b, true, instance_state::pending, "", 2});
  EXPECT_EQ(pending_of_b.size(), 5u);
  for (auto& iid : pending_of_b) EXPECT_EQ(get_instance(iid).task_id, b);
}

TEST_F(state_machine_test, all_instances_page_in_key_order_and_filter_by_tenant) {
  auto a = create(make_task("a", "acme", 2));
  auto b = create(make_task("b", "globex", 2));
  for (int s = 0; s < 3; ++s)
    must_apply(fire_of({{a, t0 + s * minute, ""}, {b, t0 + s * minute, ""}}));

  std::vector<size_t> sizes;
  auto all = page_ids(instance_query{"", 0, false, {}, "", 4}, &sizes);
  EXPECT_EQ(sizes, (std::vector<size_t>{4, 4, 4}));
  ASSERT_EQ(all.size(), 12u);
  EXPECT_EQ(all.front(), make_instance_id(a, t0, 0));
  EXPECT_EQ(all.back(), make_instance_id(b, t0 + 2 * minute, 1));
  EXPECT_EQ(std::set<std::string>(all.begin(), all.end()).size(), 12u);

  auto acme = page_ids(instance_query{"acme", 0, false, {}, "", 4});
  EXPECT_EQ(acme.size(), 6u);
  for (auto& iid : acme) EXPECT_EQ(get_instance(iid).tenant, "acme");
  EXPECT_TRUE(page_ids(instance_query{"globex", a, false, {}, "", 4}).empty());
}

TEST_F(state_machine_test, malformed_instance_cursor_is_invalid_argument) {
  for (const char* cursor : {"xyz", "zz"}) {
    auto p = sm_->list_instances(instance_query{"", 0, false, {}, cursor, 10});
    ASSERT_FALSE(p) << cursor;
    EXPECT_EQ(code_of(p.error()), errc::invalid_argument);
    EXPECT_EQ(view(p.error()).field, "cursor");
  }
}

TEST_F(state_machine_test, instances_filter_by_slot_range_in_every_scan_order) {
  auto a = create(make_task("a", "default", 2));
  auto b = create(make_task("b", "default", 1));
  for (int s = 0; s < 6; ++s) must_apply(fire_of({{a, t0 + s * minute, ""}, {b, t0 + s * minute, ""}}));

  const auto since = t0 + 2 * minute, until = t0 + 4 * minute;  // slots 2 and 3
  auto in_window = [&](const std::vector<std::string>& ids) {
    for (auto& iid : ids) {
      auto slot = get_instance(iid).slot;
      EXPECT_GE(slot, since) << iid;
      EXPECT_LT(slot, until) << iid;
    }
  };
  auto all = instance_query{"", 0, false, {}, "", 2};
  all.since = since;
  all.until = until;
  auto ids = page_ids(all);
  EXPECT_EQ(ids.size(), 6u) << "two slots of a (2 shards) and b (1 shard)";
  in_window(ids);

  auto of_a = instance_query{"", a, false, {}, "", 3};
  of_a.since = since;
  of_a.until = until;
  ids = page_ids(of_a);
  ASSERT_EQ(ids.size(), 4u);
  in_window(ids);
  EXPECT_EQ(get_instance(ids.front()).slot, t0 + 3 * minute) << "still newest slot first";

  auto pending_b = instance_query{"", b, true, instance_state::pending, "", 10};
  pending_b.since = since;
  ids = page_ids(pending_b);
  EXPECT_EQ(ids.size(), 4u) << "slots 2..5 of b";
  for (auto& iid : ids) EXPECT_GE(get_instance(iid).slot, since);

  auto later = instance_query{"", 0, false, {}, "", 10};
  later.since = t0 + 10 * minute;
  EXPECT_TRUE(page_ids(later).empty());
}

}  // namespace
}  // namespace aisched::storage
