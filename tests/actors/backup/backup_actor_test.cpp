// Tests for the backup actor on CAF's test coordinator (virtual time, no threads: the
// files are written inline, `io` null): a real raft group of one over RocksDB in a
// temporary directory. A leader writes one verified backup file per interval, named by
// the virtual wall clock, and keeps the newest N of its cluster (never another file);
// a follower (a stand-in raft that answers `follower`) writes none; a backup directory
// below a regular file fails every round: each is counted, the third in a row puts a
// reason in backup_health (/readyz) and sends the alerter one backup_failed, and the
// first success afterwards clears the reason.
#define CAF_GTEST_DSL_IMPL
#include "support/caf_gtest_dsl.hpp"
#include "support/node_fixture.hpp"

#include <stdlib.h>

#include <algorithm>
#include <chrono>
#include <filesystem>
#include <fstream>
#include <map>
#include <memory>
#include <stdexcept>
#include <string>
#include <vector>

#include "actors/backup/backup_actor.hpp"
#include "actors/backup/backup_files.hpp"
#include "common/backup_file.hpp"
#include "obs/metrics.hpp"
#include "proto/errors.hpp"
#include "storage/format_version.hpp"

namespace aisched::backups {
namespace {

namespace fs = std::filesystem;
using namespace std::chrono_literals;

const unix_ms start_unix = test::at("2026-03-01T02:00:00Z");
constexpr duration_ms interval = 1'000;

/// Stands in for raft on a member that follows.
proto::raft_actor::behavior_type follower_raft(proto::raft_actor::pointer) {
  return {
      [](proto::propose_atom, proto::command&) -> caf::result<proto::applied> {
        return make_error(errc::not_leader, "a follower");
      },
      [](proto::change_members_atom, proto::membership_change&) -> caf::result<proto::applied> {
        return make_error(errc::not_leader, "a follower");
      },
      [](proto::raft_status_atom) {
        proto::raft_status s;
        s.node_id = "n2";
        s.role = "follower";
        s.leader_id = "n1";
        return s;
      },
      [](proto::subscribe_atom, proto::commit_listener_actor) {},
      [](proto::flush_atom) {},
      [](proto::inspect_atom) { return proto::actor_summary{}; },
  };
}

/// What the stand-in alerter was told.
struct alerts_seen {
  std::vector<std::string> errors;
  std::vector<uint64_t> misses;
};

/// Stands in for the alerter: records each backup_failed.
proto::alerter_actor::behavior_type recording_alerter(proto::alerter_actor::pointer,
                                                      std::shared_ptr<alerts_seen> seen) {
  return {
      [](proto::leader_atom, const proto::leadership&) {},
      [](proto::committed_atom, const proto::applied&) {},
      [seen](proto::backup_failed_atom, const std::string& error, const std::string&,
             uint64_t misses, unix_ms, unix_ms) {
        seen->errors.push_back(error);
        seen->misses.push_back(misses);
      },
      [](proto::ack_atom, uint64_t, bool) {},
      [](proto::wake_atom, uint64_t) {},
      [](proto::inspect_atom) { return proto::actor_summary{}; },
  };
}

class backup_actor_test : public test_coordinator_fixture<test::actor_test_config>,
                          public test::node_fixture {
 protected:
  backup_actor_test() : node_fixture(sys, sched, self, "backup", start_unix) {
    char tmpl[] = "/tmp/aisched-backup-test-XXXXXX";
    if (!::mkdtemp(tmpl)) throw std::runtime_error("mkdtemp failed");
    root_ = tmpl;
    health_ = std::make_shared<backup_health>();
    seen_ = std::make_shared<alerts_seen>();
    alerter_ = sys.spawn(recording_alerter, seen_);
    keep(alerter_);
    proto::task t;
    t.name = "nightly";
    t.kind = proto::task_kind::noop;
    t.created_at = t.updated_at = now();
    create_task(t);
  }

  ~backup_actor_test() override {
    std::error_code ec;
    fs::remove_all(root_, ec);
  }

  proto::backup_actor spawn_backup(const std::string& dir, uint32_t keep_n,
                                   const proto::raft_actor& raft) {
    backup_options o;
    o.dir = dir;
    o.interval = interval;
    o.keep = keep_n;
    o.node_id = "n1";
    o.written_by = "test";
    o.db = node_.db;
    o.health = health_;
    o.alerter = alerter_;
    o.clock = sim_clock();
    auto a = sys.spawn(backup_actor_impl, raft, o);
    keep(a);
    return a;
  }

  void advance_intervals(int n) { advance_to(now() + n * interval); }

  /// The backup files in `dir`, oldest first (every entry: .tmp ones too).
  static std::vector<std::string> files_in(const std::string& dir) {
    std::vector<std::string> out;
    std::error_code ec;
    for (auto& e : fs::directory_iterator(dir, ec)) out.push_back(e.path().filename().string());
    std::sort(out.begin(), out.end());
    return out;
  }

  std::map<std::string, std::string> details(const proto::backup_actor& a) {
    std::map<std::string, std::string> out;
    auto h = self->request(a, caf::infinite, proto::inspect_atom::value);
    sched.run();
    h.receive([&](proto::actor_summary& s) { out = std::move(s.details); },
              [&](caf::error& e) { ADD_FAILURE() << sys.render(e); });
    return out;
  }

  std::string root_;
  std::shared_ptr<backup_health> health_;
  std::shared_ptr<alerts_seen> seen_;
  proto::alerter_actor alerter_;
};

TEST_F(backup_actor_test, a_leader_writes_one_verified_file_per_interval_and_keeps_the_newest) {
  auto dir = root_ + "/backups";
  fs::create_directories(dir);
  std::ofstream(dir + "/notes.txt") << "an operator's file\n";
  // Another cluster's backup, older than any of ours: never rotated away.
  auto foreign = file_name(start_unix - 86'400'000, "otherclu", 7);
  std::ofstream(dir + "/" + foreign) << "not ours\n";
  auto written_before = obs::get().backups_total.value();
  auto a = spawn_backup(dir, 2, node_.raft);

  advance_intervals(1);
  auto first = files_in(dir);
  ASSERT_EQ(first.size(), 3u) << "one backup after one interval";
  std::string ours;
  for (auto& f : first)
    if (f != foreign && f != "notes.txt") ours = f;
  ASSERT_FALSE(ours.empty());
  EXPECT_EQ(ours.rfind("aisched-20260301T020001.000Z-", 0), 0u) << ours;  // the virtual clock
  std::ifstream in(dir + "/" + ours, std::ios::binary);
  auto summary = backup::read_backup(in, storage::current_format);
  ASSERT_TRUE(summary) << sys.render(summary.error());
  EXPECT_EQ(summary->header.created_at_ms, start_unix + interval);
  EXPECT_EQ(summary->header.node_id, "n1");
  EXPECT_GT(summary->records_by_column["tasks"], 0u);
  EXPECT_TRUE(is_backup_of(ours, cluster_tag(summary->header.cluster_id)));

  advance_intervals(3);
  auto later = files_in(dir);
  std::vector<std::string> kept;
  for (auto& f : later)
    if (f != foreign && f != "notes.txt") kept.push_back(f);
  ASSERT_EQ(kept.size(), 2u) << "keep 2";
  EXPECT_EQ(kept[0].rfind("aisched-20260301T020003.000Z-", 0), 0u) << kept[0];
  EXPECT_EQ(kept[1].rfind("aisched-20260301T020004.000Z-", 0), 0u) << kept[1];
  EXPECT_NE(std::find(later.begin(), later.end(), foreign), later.end());
  EXPECT_NE(std::find(later.begin(), later.end(), "notes.txt"), later.end());
  auto d = details(a);
  EXPECT_EQ(d["backups"], "4");
  EXPECT_EQ(d["failures"], "0");
  EXPECT_EQ(d["last_file"], kept[1]);
  EXPECT_EQ(obs::get().backups_total.value() - written_before, 4.0);
  EXPECT_EQ(health_->problem(), "");
}

TEST_F(backup_actor_test, a_follower_writes_none) {
  auto dir = root_ + "/backups";
  fs::create_directories(dir);
  auto raft = caf::actor_cast<proto::raft_actor>(sys.spawn(follower_raft));
  keep(raft);
  auto a = spawn_backup(dir, 2, raft);
  advance_intervals(3);
  EXPECT_TRUE(files_in(dir).empty());
  EXPECT_EQ(details(a)["backups"], "0");
  EXPECT_EQ(details(a)["failures"], "0");
}

TEST_F(backup_actor_test, a_failing_directory_is_counted_and_reported_after_three_in_a_row) {
  auto blocker = root_ + "/blocker";
  std::ofstream(blocker) << "a file, not a directory\n";
  auto dir = blocker + "/backups";  // below a regular file: nothing can be created there
  auto failures_before = obs::get().backup_failures_total.value();
  auto a = spawn_backup(dir, 2, node_.raft);

  advance_intervals(2);
  EXPECT_EQ(details(a)["failures"], "2");
  EXPECT_EQ(health_->problem(), "") << "two misses are not reported yet";
  EXPECT_TRUE(seen_->errors.empty());

  advance_intervals(1);
  EXPECT_EQ(details(a)["failures"], "3");
  auto why = health_->problem();
  EXPECT_NE(why.find("3 scheduled backups in a row failed"), std::string::npos) << why;
  EXPECT_NE(why.find(dir), std::string::npos) << why;
  ASSERT_EQ(seen_->errors.size(), 1u);
  EXPECT_EQ(seen_->misses[0], 3u);
  EXPECT_NE(seen_->errors[0].find("cannot create"), std::string::npos) << seen_->errors[0];

  advance_intervals(1);
  EXPECT_NE(health_->problem().find("4 scheduled backups in a row"), std::string::npos);
  EXPECT_EQ(seen_->errors.size(), 1u) << "one alert per streak";
  EXPECT_EQ(obs::get().backup_failures_total.value() - failures_before, 4.0);

  // Mended: the next round writes a file and clears the reason.
  fs::remove(blocker);
  fs::create_directories(dir);
  advance_intervals(1);
  EXPECT_EQ(details(a)["backups"], "1");
  EXPECT_EQ(health_->problem(), "");
  auto files = files_in(dir);
  ASSERT_EQ(files.size(), 1u);
  EXPECT_EQ(files[0].find(".tmp"), std::string::npos);
}

TEST(backup_files, names_sort_by_time_and_only_a_clusters_own_are_recognized) {
  auto a = file_name(test::at("2026-03-01T02:00:00Z"), "abc12345", 9);
  auto b = file_name(test::at("2026-03-01T02:00:00Z") + 500, "abc12345", 10);
  auto c = file_name(test::at("2026-12-31T23:59:59.999Z"), "abc12345", 11);
  EXPECT_EQ(a, "aisched-20260301T020000.000Z-abc12345-9.snap");
  EXPECT_LT(a, b);
  EXPECT_LT(b, c);
  EXPECT_TRUE(is_backup_of(c, "abc12345"));
  EXPECT_FALSE(is_backup_of(c, "abc1234"));
  EXPECT_FALSE(is_backup_of(c + ".tmp", "abc12345"));
  EXPECT_FALSE(is_backup_of("aisched-2026.snap", "abc12345"));
  EXPECT_EQ(cluster_tag("9f:3a-77b1c2d4e5"), "9f3a77b1");
  EXPECT_EQ(cluster_tag(""), "cluster");
}

}  // namespace
}  // namespace aisched::backups
