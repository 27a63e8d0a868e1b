// Conversations in RocksDB: messages kept in order across a reopen, the
// replayed history bounded and starting at a user message, pending actions
// taken once, other tenants' conversations invisible in lists.
#include <gtest/gtest.h>

#include "actors/llm_agent/conversation_store.hpp"
#include "proto/errors.hpp"
#include "storage/rocks.hpp"
#include "support/local_ai_writer.hpp"
#include "support/node_process.hpp"

namespace aisched::llm {
namespace {

std::shared_ptr<storage::rocks> open_db(const std::string& dir) {
  auto db = storage::rocks::open(dir);
  EXPECT_TRUE(db);
  return std::shared_ptr<storage::rocks>(std::move(*db));
}

TEST(conversation_store_test, keeps_messages_in_order_across_a_reopen) {
  test::temp_dir dir;
  std::string id;
  {
    auto db = open_db(dir.path());
    conversation_store store(db, test::local_ai_writer(db));
    auto c = store.create("default", "alice", "why did db-backup fail?", 1'000);
    ASSERT_TRUE(c);
    id = c->id;
    ASSERT_FALSE(store.append(*c, {{"user", "why did db-backup fail?", {}, {}, {}},
                                   {"assistant", "", {{"c1", "query_instances", "{}"}}, {}, {}},
                                   {"tool", "{\"items\":[]}", {}, "c1", "query_instances"},
                                   {"assistant", "No failures.", {}, {}, {}}},
                              2'000));
  }
  auto db = open_db(dir.path());
    conversation_store store(db, test::local_ai_writer(db));
  auto c = store.get(id);
  ASSERT_TRUE(c);
  EXPECT_EQ(c->messages, 4u);
  EXPECT_EQ(c->title, "why did db-backup fail?");
  auto msgs = store.messages(id, 100);
  ASSERT_TRUE(msgs);
  ASSERT_EQ(msgs->size(), 4u);
  EXPECT_EQ((*msgs)[1].msg.tool_calls.at(0).name, "query_instances");
  EXPECT_EQ((*msgs)[2].msg.tool_call_id, "c1");
  EXPECT_EQ((*msgs)[3].seq, 3u);
  auto list = store.list("default", 10);
  ASSERT_TRUE(list);
  ASSERT_EQ(list->size(), 1u);
  EXPECT_TRUE(store.list("other-tenant", 10)->empty());
  EXPECT_EQ(view(store.get("c-missing").error()).code, errc::not_found);
}

TEST(conversation_store_test, replayed_history_is_bounded_and_starts_at_a_user_message) {
  test::temp_dir dir;
  auto db = open_db(dir.path());
    conversation_store store(db, test::local_ai_writer(db));
  auto c = store.create("default", "", "x", 1'000);
  ASSERT_TRUE(c);
  for (int i = 0; i < 10; ++i)
    ASSERT_FALSE(store.append(*c, {{"user", "q" + std::to_string(i), {}, {}, {}},
                                   {"assistant", "", {{"c", "query_workers", "{}"}}, {}, {}},
                                   {"tool", "{}", {}, "c", "query_workers"},
                                   {"assistant", "a" + std::to_string(i), {}, {}, {}}},
                              2'000 + i));
  auto recent = store.recent(c->id, {6, 100'000});
  ASSERT_TRUE(recent);
  // The last 6 are: tool, answer(8), q9, call, tool, answer(9): cut to start at q9.
  ASSERT_EQ(recent->size(), 4u);
  EXPECT_EQ(recent->front().content, "q9");
  EXPECT_EQ(recent->back().content, "a9");
  auto by_size = store.recent(c->id, {100, 10});
  ASSERT_TRUE(by_size);
  EXPECT_LE(by_size->size(), 4u);
}

TEST(conversation_store_test, a_pending_action_is_taken_once) {
  test::temp_dir dir;
  auto db = open_db(dir.path());
    conversation_store store(db, test::local_ai_writer(db));
  ASSERT_FALSE(store.put_pending("c-1", {"a1-c1", "delete_task", R"({"task_id":3})", "delete task 3"}));
  auto a = store.take_pending("c-1", "a1-c1");
  ASSERT_TRUE(a);
  EXPECT_EQ(a->name, "delete_task");
  EXPECT_EQ(a->arguments, R"({"task_id":3})");
  EXPECT_EQ(view(store.take_pending("c-1", "a1-c1").error()).code, errc::not_found);
}

}  // namespace
}  // namespace aisched::llm
