// Worker load history in the state machine: `record_load` commands applied
// through storage::state_machine are read back by time range and worker,
// oldest first; samples older than a round's `prune_before` are gone; the
// limit truncates; a term other than the entry's is fenced like other
// leader-decided commands.
#include "storage/load_history.hpp"

#include "storage/state_machine_fixture.hpp"

namespace aisched::storage::testing_support {
namespace {

constexpr duration_ms day = 86'400'000;

/// The state machine fixture (a real RocksDB in a fresh directory) plus rounds
/// of samples and reads of the history.
class load_history_test : public state_machine_test {
 protected:
  /// One sampling round at `at` of workers w1 (load 1) and w2 (load 2).
  caf::expected<applied> round(unix_ms at, unix_ms prune_before = 0, uint64_t term = 1) {
    record_load c{term, at, prune_before,
                  {{"w1", at, 1, 16, 10, 20}, {"w2", at, 2, 8, 30, 40}}};
    return apply_one(command{c});
  }

  load_history read(std::string worker, unix_ms since, unix_ms until, uint32_t limit = 1000) {
    auto h = read_load_history(*db_, load_query{std::move(worker), since, until, limit});
    EXPECT_TRUE(h) << view(h.error()).message;
    return h ? *h : load_history{};
  }
};

TEST_F(load_history_test, samples_are_read_by_worker_and_time_range_oldest_first) {
  for (int i = 0; i < 5; ++i) ASSERT_TRUE(round(t0 + i * 30'000));
  auto all = read("", t0, t0 + day);
  ASSERT_EQ(all.items.size(), 10u);
  EXPECT_FALSE(all.truncated);
  for (size_t i = 1; i < all.items.size(); ++i) EXPECT_LE(all.items[i - 1].at, all.items[i].at);

  auto w2 = read("w2", t0 + 30'000, t0 + 90'000);  // both ends included
  ASSERT_EQ(w2.items.size(), 3u);
  EXPECT_EQ(w2.items[0], (load_sample{"w2", t0 + 30'000, 2, 8, 30, 40}));
  EXPECT_EQ(w2.items[2].at, t0 + 90'000);
  EXPECT_TRUE(read("w3", t0, t0 + day).items.empty());
  EXPECT_TRUE(read("w1", t0 + day, t0 + 2 * day).items.empty());

  auto first3 = read("", t0, t0 + day, 3);
  EXPECT_EQ(first3.items.size(), 3u);
  EXPECT_TRUE(first3.truncated);
}

TEST_F(load_history_test, a_round_prunes_what_is_older_than_the_retention) {
  ASSERT_TRUE(round(t0));
  ASSERT_TRUE(round(t0 + day));
  ASSERT_TRUE(round(t0 + 8 * day, t0 + day));  // keeps [t0 + 1 day, ...)
  auto all = read("", 0, t0 + 10 * day);
  ASSERT_EQ(all.items.size(), 4u);
  EXPECT_EQ(all.items.front().at, t0 + day);
  // Other keys of the meta column family are untouched.
  EXPECT_EQ(sm_->applied_index(), 3u);
}

TEST_F(load_history_test, a_round_of_another_term_is_fenced) {
  auto r = round(t0, 0, 7);  // the entry is of term 1
  ASSERT_FALSE(r);
  EXPECT_EQ(view(r.error()).code, errc::not_leader);
  EXPECT_TRUE(read("", 0, t0 + day).items.empty());
}

}  // namespace
}  // namespace aisched::storage::testing_support
