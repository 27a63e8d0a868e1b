// The migrations between data formats (storage/migrations.hpp, issue 44):
// format 0's raft log (CAF's variant of 30 commands) becomes format 1's opaque
// entries in one synced batch with the format it reaches; a damaged entry
// stops the step with nothing changed; a crash between the batch and the
// FORMAT file is finished on the next start; a newer database is refused.
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <memory>
#include <sstream>
#include <string>
#include <vector>

#include <rocksdb/write_batch.h>

#include "proto/codec.hpp"
#include "proto/commands.hpp"
#include "proto/errors.hpp"
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
  out += encode(x);
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
  ASSERT_EQ(ran->size(), 1u);
  EXPECT_NE(ran->front().find("0 -> 1"), std::string::npos) << ran->front();
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
