// Tests for the router's task book: every task's terms follow its changes, the
// definitions cache holds only what it is given for runs to send, never a
// stale or deleted definition, and stays within its bound.
#include "actors/router/task_book.hpp"

#include <gtest/gtest.h>

namespace aisched::router {
namespace {

proto::task task_of(uint64_t id, uint64_t version, const std::string& zone) {
  proto::task t;
  t.id = id;
  t.tenant = "acme";
  t.version = version;
  t.command = "echo " + zone;
  t.labels = {{"zone", zone}};
  t.max_concurrency = 2;
  t.pool = "db";
  return t;
}

TEST(task_book, a_created_task_has_terms_and_no_cached_definition) {
  task_book b;
  b.put(task_of(1, 1, "eu"));
  auto* t = b.terms(1);
  ASSERT_NE(t, nullptr);
  EXPECT_EQ(t->tenant, "acme");
  EXPECT_EQ(t->labels.at("zone"), "eu");
  EXPECT_EQ(t->max_concurrency, 2u);
  EXPECT_EQ(t->pool, "db");
  EXPECT_EQ(b.definition(1), nullptr);  // read from the store when a run of it is sent
  EXPECT_EQ(b.terms(2), nullptr);
}

TEST(task_book, a_change_replaces_the_terms_and_a_cached_definition) {
  task_book b;
  b.put(task_of(1, 1, "eu"));
  b.cache(task_of(1, 1, "eu"));
  ASSERT_NE(b.definition(1), nullptr);
  b.put(task_of(1, 2, "us"));
  EXPECT_EQ(b.terms(1)->labels.at("zone"), "us");
  ASSERT_NE(b.definition(1), nullptr);
  EXPECT_EQ(b.definition(1)->command, "echo us");
}

TEST(task_book, a_definition_read_before_a_change_is_not_cached) {
  task_book b;
  b.put(task_of(1, 2, "us"));  // the change arrived while version 1 was being read
  b.cache(task_of(1, 1, "eu"));
  EXPECT_EQ(b.definition(1), nullptr);
  b.cache(task_of(1, 3, "ap"));  // read after a change not heard of yet: newer is fine
  ASSERT_NE(b.definition(1), nullptr);
  EXPECT_EQ(b.definition(1)->command, "echo ap");
}

TEST(task_book, a_deleted_task_is_gone_and_a_late_read_of_it_is_not_cached) {
  task_book b;
  b.put(task_of(1, 1, "eu"));
  b.cache(task_of(1, 1, "eu"));
  b.erase(1);
  EXPECT_EQ(b.terms(1), nullptr);
  EXPECT_EQ(b.definition(1), nullptr);
  b.cache(task_of(1, 1, "eu"));
  EXPECT_EQ(b.definition(1), nullptr);
  EXPECT_EQ(b.cached(), 0u);
}

TEST(task_book, the_definitions_cache_stays_within_its_bound) {
  task_book b;
  const uint64_t n = task_book::max_definitions * 3;
  for (uint64_t id = 1; id <= n; ++id) {
    b.put(task_of(id, 1, "eu"));
    b.cache(task_of(id, 1, "eu"));
    ASSERT_LE(b.cached(), task_book::max_definitions);
  }
  EXPECT_EQ(b.size(), n);  // every task keeps its terms
  EXPECT_NE(b.definition(n), nullptr);  // the newest is cached
}

}  // namespace
}  // namespace aisched::router
