// The fixture shared by the state machine tests: a real RocksDB in a fresh
// temporary directory per test, the state machine over it, and helpers that
// build tasks, fires and reports and read pages back.
#pragma once

#include "storage/state_machine.hpp"

#include <algorithm>
#include <atomic>
#include <cstdlib>
#include <filesystem>
#include <limits>
#include <memory>
#include <ostream>
#include <random>
#include <set>
#include <string>
#include <vector>

#include <gtest/gtest.h>
#include <unistd.h>

#include <rocksdb/write_batch.h>

#include "obs/metrics.hpp"
#include "proto/commands.hpp"
#include "proto/errors.hpp"
#include "proto/types.hpp"
#include "storage/rocks.hpp"
#include "support/test_dir.hpp"

namespace aisched {
inline void PrintTo(errc x, std::ostream* os) { *os << to_string(x); }
}  // namespace aisched

namespace aisched::proto {
inline void PrintTo(instance_state s, std::ostream* os) { *os << name_of(s); }
}  // namespace aisched::proto

namespace aisched::storage::testing_support {

using namespace proto;

namespace fs = std::filesystem;

constexpr unix_ms t0 = 1'796'022'000'000;  // 2026-11-30T07:00:00Z
constexpr unix_ms minute = 60'000;

inline task make_task(std::string name, std::string tenant = "default", uint32_t shards = 1) {
  task t;
  t.tenant = std::move(tenant);
  t.name = std::move(name);
  t.command = "true";
  t.schedule = "* * * * *";
  t.shards = shards;
  t.created_at = t0;
  t.updated_at = t0;
  return t;
}

inline fire fire_of(std::vector<fire_slot> slots, unix_ms at = t0) {
  return fire{1, at, std::move(slots)};
}

inline run_result report(std::string id, instance_state s, unix_ms at = t0) {
  run_result r;
  r.instance_id = std::move(id);
  r.worker_id = "w1";
  r.state = s;
  r.started_at = at;
  if (s != instance_state::running) r.finished_at = at + 1;
  return r;
}

inline errc code_of(const caf::error& err) { return view(err).code; }

using aisched::test::make_test_dir;

class state_machine_test : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = make_test_dir("aisched-sm-");
    ASSERT_FALSE(dir_.empty()) << "cannot create a temporary directory";
    open();
  }

  void TearDown() override {
    close();
    std::error_code ec;
    fs::remove_all(dir_, ec);
  }

  void open() { open_at(dir_, db_, sm_); }

  /// Opens (creating) a database and its state machine in `dir`.
  static void open_at(const fs::path& dir, std::unique_ptr<rocks>& db,
                      std::unique_ptr<state_machine>& sm) {
    auto d = rocks::open(dir.string());
    ASSERT_TRUE(d) << view(d.error()).message;
    db = std::move(*d);
    auto m = state_machine::open(*db);
    ASSERT_TRUE(m) << view(m.error()).message;
    sm = std::move(*m);
  }

  void close() {
    sm_.reset();
    db_.reset();
  }

  void reopen() {
    close();
    open();
  }

  /// Applies `cmds` as the next log entries, in one batch.
  std::vector<caf::expected<applied>> apply(std::vector<command> cmds) {
    std::vector<log_entry> entries;
    auto index = sm_->applied_index();
    for (auto& c : cmds) entries.push_back(log_entry{++index, 1, std::move(c)});
    return apply_entries(entries);
  }

  std::vector<caf::expected<applied>> apply_entries(const std::vector<log_entry>& entries) {
    auto r = sm_->apply(entries);
    EXPECT_TRUE(r) << view(r.error()).message;
    if (!r) return {};
    EXPECT_EQ(r->size(), entries.size());
    return std::move(*r);
  }

  /// Applies one command and returns its result.
  caf::expected<applied> apply_one(command c) {
    std::vector<command> cmds;
    cmds.push_back(std::move(c));
    auto rs = apply(std::move(cmds));
    if (rs.empty()) return make_error(errc::internal, "apply failed");
    return std::move(rs.front());
  }

  /// Applies `c`, which must succeed.
  applied must_apply(command c) {
    auto r = apply_one(std::move(c));
    EXPECT_TRUE(r) << view(r.error()).message;
    return r ? std::move(*r) : applied{};
  }

  uint64_t create(task t) {
    auto a = must_apply(create_task{std::move(t)});
    EXPECT_EQ(a.tasks.size(), 1u);
    return a.tasks.empty() ? 0 : a.tasks.front().id;
  }

  task get(uint64_t id, std::string tenant = "") {
    auto t = sm_->get_task(tenant, id);
    EXPECT_TRUE(t) << "task " << id << ": " << view(t.error()).message;
    return t ? *t : task{};
  }

  instance get_instance(const std::string& id) {
    auto x = sm_->get_instance("", id);
    EXPECT_TRUE(x) << id << ": " << view(x.error()).message;
    return x ? *x : instance{};
  }

  std::vector<task> all_tasks() {
    auto p = sm_->list_tasks(task_query{"", 0, 1000});
    EXPECT_TRUE(p);
    return p ? p->items : std::vector<task>{};
  }

  /// Reads every page of `q` and returns the instance ids in order.
  std::vector<std::string> page_ids(instance_query q, std::vector<size_t>* sizes = nullptr) {
    std::vector<std::string> ids;
    for (int guard = 0; guard < 100; ++guard) {
      auto p = sm_->list_instances(q);
      EXPECT_TRUE(p) << view(p.error()).message;
      if (!p) break;
      if (sizes) sizes->push_back(p->items.size());
      for (auto& x : p->items) ids.push_back(x.id);
      if (p->next_cursor.empty()) break;
      q.cursor = p->next_cursor;
    }
    return ids;
  }

  /// A task with `shards` shards, fired at `slot`, dispatched, reported running:
  /// returns the id of shard 0's instance.
  std::string running_instance(unix_ms slot = t0) {
    auto id = create(make_task("run"));
    must_apply(fire_of({{id, slot, "tr"}}));
    auto iid = make_instance_id(id, slot, 0);
    must_apply(dispatch{1, slot + 1, {{iid, "w1"}}});
    must_apply(report_results{1, slot + 2, {report(iid, instance_state::running, slot + 2)}});
    return iid;
  }

  fs::path dir_;
  std::unique_ptr<rocks> db_;
  std::unique_ptr<state_machine> sm_;
};

}  // namespace aisched::storage::testing_support
