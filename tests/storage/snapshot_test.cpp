// Snapshots of the state machine (storage/snapshot.hpp) and log compaction
// (raft_log::compact / install): a state with tasks and instances exported
// from one RocksDB and installed into another reads back identically, replaces
// whatever was there, and survives a reopen; a compacted log reopens at its base.
#include "storage/snapshot.hpp"

#include <atomic>
#include <filesystem>
#include <random>
#include <string>
#include <vector>

#include <gtest/gtest.h>
#include <unistd.h>

#include <rocksdb/iterator.h>
#include <rocksdb/write_batch.h>

#include "proto/commands.hpp"
#include "proto/errors.hpp"
#include "storage/controls_state.hpp"
#include "storage/keys.hpp"
#include "storage/raft_log.hpp"
#include "storage/rocks.hpp"
#include "storage/state_machine.hpp"

namespace aisched::storage {
namespace {

using namespace proto;
namespace fs = std::filesystem;

constexpr unix_ms t0 = 1'796'022'000'000;

fs::path make_dir() {
  static std::atomic<int> counter{0};
  auto name = "aisched-snap-" + std::to_string(::getpid()) + "-" + std::to_string(counter++) + "-" +
              std::to_string(std::random_device{}());
  auto base = std::getenv("TMPDIR") ? fs::temp_directory_path() : fs::path("/dev/shm");
  if (!fs::exists(base)) base = fs::temp_directory_path();
  fs::create_directories(base / name);
  return base / name;
}

/// One node's database and state machine in a temporary directory.
struct node {
  fs::path dir = make_dir();
  std::unique_ptr<rocks> db;
  std::unique_ptr<state_machine> sm;

  node() { open(); }
  ~node() {
    close();
    std::error_code ec;
    fs::remove_all(dir, ec);
  }
  void open() {
    auto d = rocks::open(dir.string());
    ASSERT_TRUE(d) << view(d.error()).message;
    db = std::move(*d);
    auto s = state_machine::open(*db);
    ASSERT_TRUE(s) << view(s.error()).message;
    sm = std::move(*s);
  }
  void close() {
    sm.reset();
    db.reset();
  }

  void apply(command c) {
    std::vector<log_entry> es{log_entry{sm->applied_index() + 1, 1, std::move(c)}};
    auto r = sm->apply(es);
    ASSERT_TRUE(r) << view(r.error()).message;
    ASSERT_TRUE(r->front()) << view(r->front().error()).message;
  }

  /// `n` tasks, each fired at two slots; the first slot's run dispatched.
  void populate(uint64_t n, const std::string& prefix) {
    for (uint64_t i = 0; i < n; ++i) {
      task t;
      t.tenant = "default";
      t.name = prefix + std::to_string(i);
      t.command = "echo " + std::string(200, 'x');  // some bulk, so chunks split
      t.schedule = "@every 1s";
      t.shards = 2;
      apply(create_task{t});
    }
    auto first = sm->applied_index() - n + 1;  // ids follow indexes on a fresh node
    std::vector<fire_slot> slots;
    for (uint64_t id = first; id < first + n; ++id) {
      slots.push_back({id, t0, "tr"});
      slots.push_back({id, t0 + 1000, "tr"});
    }
    apply(fire{1, t0, slots});
    std::vector<dispatch_entry> items;
    for (uint64_t id = first; id < first + n; ++id) items.push_back({make_instance_id(id, t0, 0), "w1"});
    apply(dispatch{1, t0 + 1, items});
    // Pools and calendars are state too (column `controls`).
    apply(put_pool{pool{"default", prefix + "-pool", 4, t0}});
    apply(put_calendar{calendar{"default", prefix + "-cal", "", {{20'000, 20'002}}, t0}});
  }

  std::vector<task> tasks() {
    auto p = sm->list_tasks(task_query{"", 0, 100000});
    EXPECT_TRUE(p);
    return p ? p->items : std::vector<task>{};
  }

  std::vector<instance> instances(bool by_state = false,
                                  instance_state s = instance_state::pending) {
    std::vector<instance> out;
    instance_query q;
    q.limit = 1000;
    q.by_state = by_state;
    q.state = s;
    for (;;) {
      auto p = sm->list_instances(q);
      EXPECT_TRUE(p) << view(p.error()).message;
      if (!p) break;
      out.insert(out.end(), p->items.begin(), p->items.end());
      if (p->next_cursor.empty()) break;
      q.cursor = p->next_cursor;
    }
    return out;
  }
};

void expect_same_state(node& a, node& b) {
  EXPECT_EQ(a.sm->applied_index(), b.sm->applied_index());
  EXPECT_EQ(a.tasks(), b.tasks());
  EXPECT_EQ(a.instances(), b.instances());
  for (auto s : {instance_state::pending, instance_state::dispatched}) {
    EXPECT_EQ(a.instances(true, s), b.instances(true, s));
  }
  EXPECT_EQ(a.sm->instance_counts(), b.sm->instance_counts());
  auto ca = read_controls(*a.db, ""), cb = read_controls(*b.db, "");
  ASSERT_TRUE(ca && cb);
  EXPECT_EQ(ca->pools, cb->pools);
  EXPECT_EQ(ca->calendars, cb->calendars);
  for (auto& t : a.tasks()) {
    auto ra = a.sm->get_task_runtime(t.id);
    auto rb = b.sm->get_task_runtime(t.id);
    ASSERT_TRUE(ra && rb);
    EXPECT_EQ(*ra, *rb);
  }
}

TEST(snapshot, export_then_install_reads_back_identically) {
  node a;
  a.populate(50, "t");
  node b;
  // Small chunks: the transfer spans many of them.
  ASSERT_FALSE(copy_state(*a.db, *b.db, 4096));
  ASSERT_FALSE(b.sm->reload());
  EXPECT_EQ(b.tasks().size(), 50u);
  EXPECT_EQ(b.instances().size(), 200u);
  auto controls = read_controls(*b.db, "default");
  ASSERT_TRUE(controls);
  EXPECT_EQ(controls->pools.size(), 1u) << "pools travel in the snapshot";
  EXPECT_EQ(controls->calendars.size(), 1u) << "calendars travel in the snapshot";
  expect_same_state(a, b);
  // Durable, and the next command applies on top as on the source.
  b.close();
  b.open();
  expect_same_state(a, b);
  task t;
  t.name = "after";
  t.command = "true";
  a.apply(create_task{t});
  b.apply(create_task{t});
  expect_same_state(a, b);
}

TEST(snapshot, install_replaces_the_old_state_entirely) {
  node a;
  a.populate(5, "new");
  node b;
  b.populate(30, "old");  // more tasks, higher applied index, other instances
  ASSERT_FALSE(copy_state(*a.db, *b.db));
  ASSERT_FALSE(b.sm->reload());
  expect_same_state(a, b);
  for (auto& t : b.tasks()) EXPECT_EQ(t.name.rfind("new", 0), 0u) << t.name;
}

TEST(snapshot, export_is_a_point_in_time_view) {
  node a;
  a.populate(10, "t");
  auto exp = snapshot_export::open(*a.db);
  ASSERT_TRUE(exp);
  auto at = a.sm->applied_index();
  EXPECT_EQ((*exp)->applied_index(), at);
  a.populate(10, "later");  // applied while the export is read
  node b;
  snapshot_staging staging(*b.db);
  while (!(*exp)->done()) {
    auto chunk = (*exp)->next_chunk(1000);
    ASSERT_TRUE(chunk);
    EXPECT_LE(chunk->size(), 1000u);
    ASSERT_FALSE(staging.add(*chunk));
  }
  ASSERT_FALSE(b.db->write(staging.batch(), true));
  ASSERT_FALSE(b.sm->reload());
  EXPECT_EQ(b.sm->applied_index(), at);
  EXPECT_EQ(b.tasks().size(), 10u);
}

TEST(snapshot, a_malformed_chunk_is_rejected) {
  node b;
  snapshot_staging staging(*b.db);
  EXPECT_EQ(view(staging.add(std::string("\x02\x00\x00", 3))).code, errc::corrupted);
  std::string wrong_column("\x00\x00\x00\x00\x01k\x00\x00\x00\x00", 10);  // raft_log
  snapshot_staging other(*b.db);
  EXPECT_EQ(view(other.add(wrong_column)).code, errc::corrupted);
}

// -- the log ---------------------------------------------------------------------

std::vector<log_entry> entries(uint64_t from, uint64_t to, uint64_t term) {
  std::vector<log_entry> out;
  for (auto i = from; i <= to; ++i) out.push_back(log_entry{i, term, command{noop{}}});
  return out;
}

TEST(raft_log_compaction, compacted_log_reopens_at_its_base_and_keeps_the_tail) {
  node n;
  {
    auto log = raft_log::open(*n.db);
    ASSERT_TRUE(log);
    ASSERT_FALSE(log->append(entries(1, 100, 2), hard_state{3, "n1", 100}));
    ASSERT_FALSE(log->compact(90, 2));
    EXPECT_EQ(log->base().index, 90u);
    EXPECT_EQ(log->last_index(), 100u);
    ASSERT_FALSE(log->append(entries(101, 110, 3), hard_state{3, "n1", 105}));
  }
  n.close();
  n.open();
  auto log = raft_log::open(*n.db);
  ASSERT_TRUE(log);
  EXPECT_EQ(log->base().index, 90u);
  EXPECT_EQ(log->base().term, 2u);
  EXPECT_EQ(log->last_index(), 110u);
  EXPECT_EQ(log->last_term(), 3u);
  auto it = n.db->iterate(column::raft_log);
  it->SeekToFirst();
  ASSERT_TRUE(it->Valid());
  EXPECT_EQ(keys::get_u64(std::string_view(it->key().data(), it->key().size())), 91u)
      << "nothing is left at or below the base";
  auto tail = log->read(91, 110);
  ASSERT_TRUE(tail);
  ASSERT_EQ(tail->size(), 20u);
  EXPECT_EQ(tail->front().index, 91u);
  // Compacting everything leaves an empty log that still knows where it ends.
  ASSERT_FALSE(log->compact(110, 3));
  auto again = raft_log::open(*n.db);
  ASSERT_TRUE(again);
  EXPECT_EQ(again->last_index(), 110u);
  EXPECT_EQ(again->last_term(), 3u);
}

TEST(raft_log_compaction, install_replaces_log_and_state_in_one_write) {
  node a;
  a.populate(3, "t");
  node b;
  auto log = raft_log::open(*b.db);
  ASSERT_TRUE(log);
  ASSERT_FALSE(log->append(entries(1, 7, 1), hard_state{1, "", 2}));
  snapshot_staging staging(*b.db);
  auto exp = snapshot_export::open(*a.db);
  ASSERT_TRUE(exp);
  auto chunk = (*exp)->next_chunk(1 << 20);
  ASSERT_TRUE(chunk);
  ASSERT_TRUE((*exp)->done());
  ASSERT_FALSE(staging.add(*chunk));
  auto at = a.sm->applied_index();
  ASSERT_FALSE(log->install(log_base{at, 1}, hard_state{4, "", at}, staging.batch()));
  EXPECT_EQ(log->last_index(), at);
  b.close();
  b.open();
  auto reopened = raft_log::open(*b.db);
  ASSERT_TRUE(reopened);
  EXPECT_EQ(reopened->base().index, at);
  EXPECT_EQ(reopened->last_index(), at);
  EXPECT_EQ(reopened->state().term, 4u);
  auto it = b.db->iterate(column::raft_log);
  it->SeekToFirst();
  EXPECT_FALSE(it->Valid()) << "the old log is gone";
  expect_same_state(a, b);
}

}  // namespace
}  // namespace aisched::storage
