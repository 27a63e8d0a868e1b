// Idempotency keys of task creation in storage::state_machine (real RocksDB,
// the shared fixture): a repeat of the same create answers with the first task,
// a reused key with another task is refused (422 at the REST API), and records
// written before requests were fingerprinted keep their old meaning.
#include "proto/json.hpp"
#include "storage/keys.hpp"
#include "storage/state_machine_fixture.hpp"

namespace aisched::storage {
namespace {

using namespace proto;
using namespace testing_support;

TEST_F(state_machine_test, create_repeated_with_an_idempotency_key_returns_the_first_task) {
  // The repeat in the same batch and in a later one both find the first task,
  // also when the proposer stamped other times (a retry is proposed anew).
  auto retry = make_task("a");
  retry.created_at = retry.updated_at = t0 + minute;
  auto rs = apply({create_task{make_task("a"), "key-1"}, create_task{retry, "key-1"}});
  ASSERT_EQ(rs.size(), 2u);
  ASSERT_TRUE(rs[0] && rs[1]);
  EXPECT_EQ(rs[1]->tasks.at(0).id, rs[0]->tasks.at(0).id);
  EXPECT_EQ(rs[1]->tasks.at(0).created_at, t0) << "the repeat does not replace the definition";
  auto again = must_apply(create_task{make_task("a"), "key-1"});
  EXPECT_EQ(again.tasks.at(0).id, rs[0]->tasks.at(0).id);
  EXPECT_NE(must_apply(create_task{make_task("b"), "key-2"}).tasks.at(0).id,
            rs[0]->tasks.at(0).id);
  EXPECT_NE(must_apply(create_task{make_task("c")}).tasks.at(0).id, rs[0]->tasks.at(0).id)
      << "no key: always a new task";
  // Another tenant's identical key is its own.
  auto other = make_task("x");
  other.tenant = "other";
  EXPECT_NE(must_apply(create_task{other, "key-1"}).tasks.at(0).id, rs[0]->tasks.at(0).id);
  // Once the task is deleted the key cannot silently make a new one.
  must_apply(delete_task{"default", rs[0]->tasks.at(0).id, 0});
  auto gone = apply({create_task{make_task("a"), "key-1"}});
  ASSERT_FALSE(gone.at(0));
  EXPECT_EQ(view(gone.at(0).error()).code, errc::already_exists);
  EXPECT_FALSE(is_idempotency_key_reused(gone.at(0).error())) << "a 409, not a reuse";
}

TEST_F(state_machine_test, an_idempotency_key_reused_for_another_task_is_refused_naming_the_header) {
  auto first = must_apply(create_task{make_task("a"), "key-1"});
  // In a later batch and within the batch that made it.
  auto later = apply_one(create_task{make_task("a2"), "key-1"});
  ASSERT_FALSE(later);
  EXPECT_EQ(code_of(later.error()), errc::already_exists);
  EXPECT_EQ(view(later.error()).field, "Idempotency-Key");
  EXPECT_TRUE(is_idempotency_key_reused(later.error())) << "422 idempotency_key_reused at REST";
  EXPECT_NE(view(later.error()).message.find("key-1"), std::string::npos)
      << view(later.error()).message;
  auto same_batch = apply({create_task{make_task("b"), "key-2"}, create_task{make_task("b2"), "key-2"}});
  ASSERT_TRUE(same_batch.at(0));
  ASSERT_FALSE(same_batch.at(1));
  EXPECT_EQ(code_of(same_batch.at(1).error()), errc::already_exists);
  // Nothing was made by the refused ones, and the key still answers its own request.
  EXPECT_EQ(must_apply(create_task{make_task("a"), "key-1"}).tasks.at(0).id,
            first.tasks.at(0).id);
  EXPECT_EQ(create(make_task("c")), first.tasks.at(0).id + 2) << "no id went to a refused create";
}

TEST_F(state_machine_test, an_idempotency_record_from_before_fingerprints_matches_any_request) {
  // Older versions stored only the task id (8 bytes): those keys keep their
  // old meaning instead of refusing every retry.
  auto id = create(make_task("old"));
  rocksdb::WriteBatch b;
  b.Put(db_->cf(column::meta), keys::idempotency("default", "legacy"), keys::u64(id));
  ASSERT_FALSE(db_->write(b, true));
  auto r = must_apply(create_task{make_task("something else"), "legacy"});
  ASSERT_EQ(r.tasks.size(), 1u);
  EXPECT_EQ(r.tasks.at(0).id, id);
  EXPECT_EQ(r.tasks.at(0).name, "old");
}

}  // namespace
}  // namespace aisched::storage
