// Pools, calendars and the fire count of max_runs in the state machine on a
// real RocksDB: put_pool / put_calendar / delete_calendar apply and read back
// per tenant, a task may name only a pool and calendar of its tenant that
// exist (also created earlier in the same batch), a calendar in use cannot be
// deleted, and scheduled fires are counted once per slot from fire records.
#include "storage/controls_state.hpp"
#include "storage/state_machine_fixture.hpp"

namespace aisched::storage {
namespace {

using namespace proto;
using namespace testing_support;

pool pool_of(std::string tenant, std::string name, uint32_t size) {
  return pool{std::move(tenant), std::move(name), size, t0};
}

calendar calendar_of(std::string tenant, std::string name) {
  return calendar{std::move(tenant), std::move(name), "", {{20'000, 20'001}}, t0};
}

TEST_F(state_machine_test, pools_and_calendars_apply_and_read_back_per_tenant) {
  auto a = must_apply(put_pool{pool_of("acme", "db", 4)});
  ASSERT_EQ(a.pools.size(), 1u) << "listeners (the router) learn the size";
  must_apply(put_pool{pool_of("acme", "db", 2)});  // resized
  must_apply(put_pool{pool_of("globex", "db", 9)});
  auto c = must_apply(put_calendar{calendar_of("acme", "holidays")});
  ASSERT_EQ(c.calendars.size(), 1u) << "listeners (the trigger) learn the dates";
  reopen();
  auto acme = read_controls(*db_, "acme");
  ASSERT_TRUE(acme);
  ASSERT_EQ(acme->pools.size(), 1u);
  EXPECT_EQ(acme->pools[0].size, 2u);
  ASSERT_EQ(acme->calendars.size(), 1u);
  EXPECT_EQ(acme->calendars[0].days, (std::vector<day_range>{{20'000, 20'001}}));
  auto all = read_controls(*db_, "");
  ASSERT_TRUE(all);
  EXPECT_EQ(all->pools.size(), 2u);
}

TEST_F(state_machine_test, a_task_names_only_pools_and_calendars_of_its_tenant) {
  must_apply(put_pool{pool_of("globex", "db", 4)});
  auto t = make_task("t", "acme");
  t.pool = "db";
  auto r = apply_one(create_task{t});
  ASSERT_FALSE(r);
  EXPECT_EQ(code_of(r.error()), errc::invalid_argument);
  EXPECT_EQ(view(r.error()).field, "pool");
  t.pool.clear();
  t.exclude_calendar = "holidays";
  r = apply_one(create_task{t});
  ASSERT_FALSE(r);
  EXPECT_EQ(view(r.error()).field, "exclude_calendar");
  // Created in the same batch, before the task: the task sees them.
  t.pool = "db";
  auto rs = apply({put_pool{pool_of("acme", "db", 1)}, put_calendar{calendar_of("acme", "holidays")},
                   create_task{t}});
  ASSERT_EQ(rs.size(), 3u);
  ASSERT_TRUE(rs[2]) << view(rs[2].error()).message;
  // An update is checked the same way.
  auto id = rs[2]->tasks.at(0).id;
  auto u = get(id);
  u.pool = "nope";
  r = apply_one(update_task{u, 0});
  ASSERT_FALSE(r);
  EXPECT_EQ(view(r.error()).field, "pool");
}

TEST_F(state_machine_test, a_calendar_in_use_is_not_deleted) {
  must_apply(put_calendar{calendar_of("default", "holidays")});
  auto t = make_task("t");
  t.exclude_calendar = "holidays";
  auto id = create(t);
  auto r = apply_one(delete_calendar{"default", "holidays"});
  ASSERT_FALSE(r);
  EXPECT_EQ(code_of(r.error()), errc::has_dependents);
  EXPECT_NE(view(r.error()).message.find(std::to_string(id)), std::string::npos);
  auto u = get(id);
  u.exclude_calendar.clear();
  must_apply(update_task{u, 0});
  auto gone = must_apply(delete_calendar{"default", "holidays"});
  ASSERT_EQ(gone.deleted_calendars.size(), 1u);
  EXPECT_EQ(gone.deleted_calendars[0].name, "holidays");
  r = apply_one(delete_calendar{"default", "holidays"});
  ASSERT_FALSE(r);
  EXPECT_EQ(code_of(r.error()), errc::not_found);
}

TEST_F(state_machine_test, scheduled_fires_are_counted_once_per_slot) {
  auto id = create(make_task("t", "default", 2));
  fire_slot s{id, t0, "tr"};
  s.scheduled = true;
  fire_slot manual{id, t0 + minute, "tr"};  // a manual run: not counted
  must_apply(fire_of({s, manual}));
  must_apply(fire_of({s}));  // the same slot again (a new leader repeating it)
  auto rt = sm_->get_task_runtime(id);
  ASSERT_TRUE(rt);
  EXPECT_EQ(rt->scheduled_fires, 1u);
  fire_slot next{id, t0 + 2 * minute, "tr"};
  next.scheduled = true;
  must_apply(fire_of({next}));
  reopen();
  rt = sm_->get_task_runtime(id);
  ASSERT_TRUE(rt);
  EXPECT_EQ(rt->scheduled_fires, 2u) << "durable: a new leader continues from here";
}

}  // namespace
}  // namespace aisched::storage
