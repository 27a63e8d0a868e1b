// The migrations between data formats (storage/migrations.hpp, issue 44):
// format 0's raft log (CAF's variant of 30 commands) becomes format 1's opaque
// entries, and format 1's records (CAF's encoding) become format 2's (the wire
// format), each step in one synced batch with the format it reaches; a damaged
// entry or record stops the step with nothing changed; a crash between the
// batch and the FORMAT file is finished on the next start; a newer database is
// refused.
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <memory>
#include <sstream>
#include <string>
#include <vector>

#include <rocksdb/write_batch.h>

#include "proto/analysis.hpp"
#include "proto/auth_types.hpp"
#include "proto/codec.hpp"
#include "proto/command_visit.hpp"
#include "proto/commands.hpp"
#include "proto/controls.hpp"
#include "proto/errors.hpp"
#include "proto/secret_types.hpp"
#include "storage/format_version.hpp"
#include "storage/keys.hpp"
#include "storage/migrations.hpp"
#include "storage/raft_log.hpp"
#include "storage/rocks.hpp"
#include "support/test_dir.hpp"

namespace aisched::storage {
namespace {

namespace fs = std::filesystem;
using namespace proto;

/// What format 0 wrote for an entry holding command `x`: index and term
/// (big-endian), the command's place in format 0's variant (its type number),
/// then the command's fields (tests/compat/format-0 holds real ones).
template <class T>
std::string format_0_entry(uint64_t index, uint64_t term, const T& x) {
  std::string out;
  keys::put_u64(out, index);
  keys::put_u64(out, term);
  out += static_cast<char>(T::traits.id);
  out += format_1::encode(x);
  return out;
}

std::vector<log_entry> sample_entries() {
  task t;
  t.name = "nightly";
  t.schedule = "0 3 * * *";
  t.command = "echo hi";
  return {log_entry{5, 2, noop{}}, log_entry{6, 2, create_task{t, "idem-1"}},
          log_entry{7, 3, fire{3, 1'000, {{1, 60'000, "tr"}}}},
          log_entry{8, 3, cancel{"acme", "1-60000-0", 1'001, "operator"}}};
}

class migrations_test : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = test::make_test_dir("aisched-migrate-");
    ASSERT_FALSE(dir_.empty());
    reopen();
  }
  void TearDown() override {
    db_.reset();
    std::error_code ec;
    fs::remove_all(dir_, ec);
  }
  void reopen() {
    db_.reset();
    auto db = rocks::open(dir_.string());
    ASSERT_TRUE(db) << view(db.error()).message;
    db_ = std::move(*db);
  }
  void put(column c, const std::string& key, const std::string& value) {
    rocksdb::WriteBatch b;
    b.Put(db_->cf(c), key, value);
    ASSERT_FALSE(db_->write(b, true));
  }
  /// Writes sample_entries() as format 0 wrote them, and FORMAT 0.
  void write_format_0_log() {
    put(column::raft_log, keys::u64(5), format_0_entry(5, 2, noop{}));
    auto e = sample_entries();
    put(column::raft_log, keys::u64(6), format_0_entry(6, 2, *command_as<create_task>(e[1].cmd)));
    put(column::raft_log, keys::u64(7), format_0_entry(7, 3, *command_as<fire>(e[2].cmd)));
    put(column::raft_log, keys::u64(8), format_0_entry(8, 3, *command_as<cancel>(e[3].cmd)));
    ASSERT_FALSE(write_format(dir_.string(), {0, "0.0.9"}));
  }
  std::string format_file() {
    std::ifstream in(dir_ / "FORMAT");
    std::stringstream s;
    s << in.rdbuf();
    return s.str();
  }
  caf::expected<std::vector<std::string>> migrate() {
    auto found = check_format(dir_.string(), "0.1.0");
    if (!found) return found.error();
    return migrate_format(*db_, dir_.string(), *found, "0.1.0");
  }

  fs::path dir_;
  std::unique_ptr<rocks> db_;
};

TEST_F(migrations_test, steps_are_registered_in_order_up_to_the_current_format) {
  auto& steps = migration_steps();
  ASSERT_EQ(steps.size(), current_format);
  for (size_t i = 0; i < steps.size(); ++i) EXPECT_EQ(steps[i].from, i);
}

TEST_F(migrations_test, a_format_0_log_reads_back_entry_for_entry_after_the_migration) {
  write_format_0_log();
  auto ran = migrate();
  ASSERT_TRUE(ran) << view(ran.error()).message;
  ASSERT_EQ(ran->size(), 2u);
  EXPECT_NE(ran->front().find("0 -> 1"), std::string::npos) << ran->front();
  EXPECT_NE(ran->back().find("1 -> 2"), std::string::npos) << ran->back();
  EXPECT_EQ(format_file(), format_text({current_format, "0.1.0"}));
  auto stored = stored_format(*db_);
  ASSERT_TRUE(stored && *stored);
  EXPECT_EQ(**stored, current_format);
  // What the migration wrote survives a reopen (it was one synced batch).
  reopen();
  auto log = raft_log::open(*db_);
  ASSERT_TRUE(log) << view(log.error()).message;
  EXPECT_EQ(log->last_index(), 8u);
  EXPECT_EQ(log->last_term(), 3u);
  auto got = log->read(5, 8);
  ASSERT_TRUE(got) << view(got.error()).message;
  auto want = sample_entries();
  ASSERT_EQ(got->size(), want.size());
  for (size_t i = 0; i < want.size(); ++i) {
    EXPECT_EQ((*got)[i].index, want[i].index);
    EXPECT_EQ((*got)[i].term, want[i].term);
    EXPECT_EQ((*got)[i].cmd, want[i].cmd) << command_name(want[i].cmd);
  }
  auto f = command_as<fire>((*got)[2].cmd);
  ASSERT_TRUE(f);
  EXPECT_EQ(f->term, 3u);
  ASSERT_EQ(f->slots.size(), 1u);
  EXPECT_EQ(f->slots[0].trace_id, "tr");
  // Migrated data is current: a second start runs no step and changes nothing.
  auto again = migrate();
  ASSERT_TRUE(again);
  EXPECT_TRUE(again->empty());
}

TEST_F(migrations_test, a_damaged_format_0_entry_stops_the_step_and_nothing_changes) {
  write_format_0_log();
  auto bad = format_0_entry(7, 3, fire{3, 1'000, {{1, 60'000, "tr"}}});
  bad.pop_back();  // the command's last byte lost
  put(column::raft_log, keys::u64(7), bad);
  auto ran = migrate();
  ASSERT_FALSE(ran);
  EXPECT_EQ(view(ran.error()).code, errc::corrupted);
  EXPECT_NE(view(ran.error()).message.find("entry 7"), std::string::npos)
      << view(ran.error()).message;
  EXPECT_EQ(format_file(), format_text({0, "0.0.9"}));
  auto stored = stored_format(*db_);
  ASSERT_TRUE(stored);
  EXPECT_FALSE(*stored);
  auto raw = db_->get(column::raft_log, keys::u64(6));
  ASSERT_TRUE(raw && *raw);
  auto e = sample_entries();
  EXPECT_EQ(**raw, format_0_entry(6, 2, *command_as<create_task>(e[1].cmd)))
      << "an entry before the damaged one was rewritten";
}

TEST_F(migrations_test, a_format_0_entry_naming_a_command_format_0_never_had_is_refused) {
  std::string bad;
  keys::put_u64(bad, 9);
  keys::put_u64(bad, 3);
  bad += static_cast<char>(30);  // format 0's variant had 30 alternatives: 0..29
  auto got = log_entry_from_format_0(bad);
  ASSERT_FALSE(got);
  EXPECT_EQ(view(got.error()).code, errc::corrupted);
  EXPECT_FALSE(log_entry_from_format_0(std::string(16, '\0')));  // no command byte
}

/// A record of every kind format 1 stored through the codec, at its key.
struct stored_record {
  column c;
  std::string key;
  std::string format_1;  // CAF's encoding
  std::string format_2;  // the wire codec's
};

template <class T>
stored_record record(column c, std::string key, const T& x) {
  return {c, std::move(key), format_1::encode(x), encode(x)};
}

std::vector<stored_record> format_1_records() {
  task t;
  t.id = 42;
  t.name = "nightly";
  t.schedule = "0 3 * * *";
  t.retry.multiplier = 1.5;
  t.labels = {{"zone", "a"}};
  instance x;
  x.id = "42-60000-0";
  x.task_id = 42;
  x.state = instance_state::failed;
  x.output = std::string("o\0\xffut", 5);
  attempt_record a{1, "w-1", instance_state::failed, 1, 2, 3, 9, "boom", "out"};
  user u;
  u.name = "ada";
  u.r = role::admin;
  api_token k;
  k.id = "tok_1";
  k.hash = "ab";
  data_key dk;
  dk.tenant = "acme";
  dk.wrapped = std::string("\x01\x02\xff", 3);
  secret_record sv;
  sv.tenant = "acme";
  sv.name = "db";
  sv.sealed = std::string("\xfe\x00", 2);
  pool p;
  p.tenant = "acme";
  p.name = "db-heavy";
  p.size = 3;
  calendar cal;
  cal.tenant = "acme";
  cal.name = "holidays";
  cal.days = {{20'000, 20'001}};
  load_sample ls;
  ls.worker_id = "w-1";
  ls.at = 1'000;
  set_membership m;
  m.members = {member_info{"n1", true, "127.0.0.1:7401", "127.0.0.1:8080"}};
  audit_entry au;
  au.tenant = "acme";
  au.action = "create_task";
  failure_analysis fa;
  fa.instance_id = x.id;
  fa.summary = "the disk is full";
  return {record(column::tasks, keys::task(42), t),
          record(column::task_state, keys::task(42),
                 task_runtime{42, 60'000, x.id, instance_state::failed}),
          record(column::instances, keys::instance(42, 60'000, 0), x),
          record(column::attempts, keys::attempt(keys::instance(42, 60'000, 0), 1), a),
          record(column::auth, "u/ada", u),
          record(column::auth, "t/tok_1", k),
          record(column::auth, "dk/acme", dk),
          record(column::auth, "sv/acme/db", sv),
          record(column::audit, std::string("acme\0\0\0\0\0\0\0\0\x07\0\0\0\0", 17), au),
          record(column::controls, std::string("p/acme\0db-heavy", 15), p),
          record(column::controls, std::string("c/acme\0holidays", 15), cal),
          record(column::meta, "load/" + keys::u64(1'000) + "w-1", ls),
          record(column::meta, "membership", m),
          record(column::raft_meta, "bootstrap_members", m),
          record(column::ai_analysis, "acme/" + x.id, fa)};
}

/// The values storage/ lays out by hand, which no step rewrites.
std::vector<stored_record> hand_laid_records() {
  auto same = [](column c, std::string key, std::string v) {
    return stored_record{c, std::move(key), v, v};
  };
  return {same(column::meta, "applied_index", keys::u64(8)),
          same(column::meta, "idem/acme" + std::string(1, '\0') + "k", keys::u64(42)),
          same(column::auth, "h/ab", "tok_1"),
          same(column::instances_by_state, std::string(1, '\4') + keys::instance(42, 60'000, 0), ""),
          same(column::ai_conversations, "c/acme/1", R"({"id":"1"})"),
          same(column::raft_meta, "cluster_id", "0123456789abcdef")};
}

TEST_F(migrations_test, every_record_of_format_1_reads_back_as_itself_in_format_2) {
  // A format-1 directory: its log (an entry of each of a few commands), its
  // records, and the values laid out by hand.
  auto e = sample_entries();
  std::vector<stored_record> all = format_1_records();
  for (auto& r : hand_laid_records()) all.push_back(r);
  for (auto& r : all) put(r.c, r.key, r.format_1);
  for (auto& entry : e) {
    auto f1 = entry;
    f1.cmd = visit_command(entry.cmd, [](const auto& x) -> caf::expected<command> {
               using T = std::decay_t<decltype(x)>;
               return command{T::traits.id, format_1::encode(x)};
             }).value();
    put(column::raft_log, keys::u64(entry.index), format_1::encode(f1));
  }
  put(column::raft_meta, "format", keys::u64(1));
  ASSERT_FALSE(write_format(dir_.string(), {1, "0.0.9"}));
  auto ran = migrate();
  ASSERT_TRUE(ran) << view(ran.error()).message;
  ASSERT_EQ(ran->size(), 1u);
  EXPECT_NE(ran->front().find("1 -> 2"), std::string::npos) << ran->front();
  reopen();
  for (auto& r : all) {
    auto got = db_->get(r.c, r.key);
    ASSERT_TRUE(got && *got) << column_name(r.c) << " " << r.key;
    EXPECT_EQ(**got, r.format_2) << column_name(r.c) << " " << r.key;
  }
  auto log = raft_log::open(*db_);
  ASSERT_TRUE(log) << view(log.error()).message;
  auto got = log->read(5, 8);
  ASSERT_TRUE(got) << view(got.error()).message;
  ASSERT_EQ(got->size(), e.size());
  for (size_t i = 0; i < e.size(); ++i) EXPECT_EQ((*got)[i].cmd, e[i].cmd) << command_name(e[i].cmd);
  EXPECT_EQ(format_file(), format_text({current_format, "0.1.0"}));
}

TEST_F(migrations_test, a_damaged_format_1_record_stops_the_step_and_nothing_changes) {
  auto records = format_1_records();
  for (auto& r : records) put(r.c, r.key, r.format_1);
  auto bad = records[2];  // the instance
  bad.format_1.pop_back();
  put(bad.c, bad.key, bad.format_1);
  put(column::raft_meta, "format", keys::u64(1));
  ASSERT_FALSE(write_format(dir_.string(), {1, "0.0.9"}));
  auto ran = migrate();
  ASSERT_FALSE(ran);
  EXPECT_EQ(view(ran.error()).code, errc::corrupted);
  EXPECT_NE(view(ran.error()).message.find("instances"), std::string::npos)
      << view(ran.error()).message;
  EXPECT_EQ(format_file(), format_text({1, "0.0.9"}));
  for (auto& r : records) {
    auto got = db_->get(r.c, r.key);
    ASSERT_TRUE(got && *got);
    EXPECT_EQ(**got, r.key == bad.key && r.c == bad.c ? bad.format_1 : r.format_1)
        << "a record was rewritten: " << column_name(r.c) << " " << r.key;
  }
}

TEST_F(migrations_test, a_crash_between_the_batch_and_the_stamp_is_finished_on_the_next_start) {
  write_format_0_log();
  ASSERT_TRUE(migrate());
  // As if the node died after the batch, before FORMAT was rewritten.
  ASSERT_FALSE(write_format(dir_.string(), {0, "0.0.9"}));
  auto ran = migrate();
  ASSERT_TRUE(ran) << view(ran.error()).message;
  EXPECT_TRUE(ran->empty()) << "the step ran twice";
  EXPECT_EQ(format_file(), format_text({current_format, "0.1.0"}));
  auto log = raft_log::open(*db_);
  ASSERT_TRUE(log) << view(log.error()).message;
  EXPECT_EQ(log->last_index(), 8u);
}

TEST_F(migrations_test, a_database_of_a_newer_format_is_refused) {
  put(column::raft_meta, "format", keys::u64(current_format + 1));
  auto ran = migrate();
  ASSERT_FALSE(ran);
  EXPECT_EQ(view(ran.error()).code, errc::invalid_argument);
  EXPECT_NE(view(ran.error()).message.find("format " + std::to_string(current_format + 1)),
            std::string::npos)
      << view(ran.error()).message;
  EXPECT_FALSE(fs::exists(dir_ / "FORMAT"));
}

TEST_F(migrations_test, a_stamp_ahead_of_its_database_is_corrupted) {
  ASSERT_FALSE(write_format(dir_.string(), {current_format, "0.1.0"}));
  auto ran = migrate();
  ASSERT_FALSE(ran);
  EXPECT_EQ(view(ran.error()).code, errc::corrupted);
}

TEST_F(migrations_test, a_fresh_directory_starts_at_the_current_format) {
  auto ran = migrate();
  ASSERT_TRUE(ran) << view(ran.error()).message;
  EXPECT_TRUE(ran->empty()) << "a database that holds nothing was \"migrated\": " << (*ran)[0];
  auto stored = stored_format(*db_);
  ASSERT_TRUE(stored && *stored);
  EXPECT_EQ(**stored, current_format);
  EXPECT_EQ(format_file(), format_text({current_format, "0.1.0"}));
}

}  // namespace
}  // namespace aisched::storage
