// Helpers shared by the proto tests: printers, fully populated samples of each
// type, field views of types without operator==, one sample per command, and a
// binary round trip.
#pragma once

#include <cstdint>
#include <limits>
#include <map>
#include <optional>
#include <ostream>
#include <string>
#include <string_view>
#include <tuple>
#include <type_traits>
#include <vector>

#include <boost/json.hpp>
#include <caf/sec.hpp>
#include <gtest/gtest.h>
#include <rapidcheck/gtest.h>

#include "proto/codec.hpp"
#include "proto/command_visit.hpp"
#include "proto/commands.hpp"
#include "proto/errors.hpp"
#include "proto/hex.hpp"
#include "proto/interfaces.hpp"
#include "proto/json.hpp"
#include "proto/time.hpp"
#include "proto/types.hpp"
#include "proto/validate.hpp"

namespace json = boost::json;

namespace aisched {
inline void PrintTo(errc x, std::ostream* os) { *os << to_string(x); }
}  // namespace aisched

namespace aisched::proto {
inline void PrintTo(const task& t, std::ostream* os) { *os << json::serialize(to_json(t)); }
inline void PrintTo(const instance& x, std::ostream* os) { *os << json::serialize(to_json(x)); }
inline void PrintTo(const worker& w, std::ostream* os) { *os << json::serialize(to_json(w)); }
inline void PrintTo(instance_state s, std::ostream* os) { *os << name_of(s); }
}  // namespace aisched::proto

namespace aisched::proto {
namespace testing_support {

constexpr unix_ms t_2026_11_30_07 = 1'796'022'000'000;  // 2026-11-30T07:00:00Z
constexpr unix_ms t_2026_01_01 = 1'767'225'600'000;     // 2026-01-01T00:00:00Z
constexpr unix_ms t_2027_01_01 = 1'798'761'600'000;     // 2027-01-01T00:00:00Z

/// A task whose every field differs from its default, so a field lost anywhere shows.
inline task full_task() {
  task t;
  t.id = 42;
  t.tenant = "acme";
  t.name = "db-backup";
  t.kind = task_kind::http;
  t.command = "pg_dump shop";
  t.http.method = "POST";
  t.http.url = "https://hooks.example.com/run";
  t.http.headers = {{"X-Token", "s3cr3t"}, {"Content-Type", "application/json"}};
  t.http.body = R"({"shop":true})";
  t.image = "postgres:16";
  t.schedule = "0 3 * * *";
  t.at = t_2026_11_30_07 + 250;
  t.event = "deploy";
  t.timezone = "Europe/Berlin";
  t.labels = {{"zone", "eu"}, {"gpu", "a100"}};
  t.route = route_strategy::consistent_hash;
  t.shards = 7;
  t.retry.kind = retry_kind::on_error_codes;
  t.retry.max_attempts = 5;
  t.retry.interval = 2'500;
  t.retry.initial = 1'500;
  t.retry.max = 90'000;
  t.retry.multiplier = 3.5;
  t.retry.jitter = true;
  t.retry.error_codes = {1, -2, 137};
  t.retry.window = 3'600'000;
  t.timeout = 600'000;
  t.overlap = overlap_policy::buffer_one;
  t.start_at = t_2026_01_01;
  t.end_at = t_2027_01_01;
  t.jitter = 1'234;
  t.catchup_window = 7'200'000;
  t.misfire = misfire_policy::fire_all;
  t.misfire_limit = 3;
  t.depends_on = {7, 9};
  t.max_runs = 3;
  t.max_concurrency = 2;
  t.pool = "db";
  t.exclude_calendar = "holidays";
  t.retention = {86'400'000, 50};
  t.paused = true;
  t.created_at = t_2026_01_01 + 1;
  t.updated_at = t_2026_01_01 + 2;
  t.version = 12;
  return t;
}

inline instance full_instance() {
  instance x;
  x.id = "42-1796022000000-3";
  x.tenant = "acme";
  x.task_id = 42;
  x.slot = t_2026_11_30_07;
  x.shard = 3;
  x.shards = 7;
  x.attempt = 2;
  x.state = instance_state::retry_waiting;
  x.worker_id = "w-1";
  x.created_at = t_2026_11_30_07 + 1;
  x.dispatched_at = t_2026_11_30_07 + 2;
  x.started_at = t_2026_11_30_07 + 3;
  x.finished_at = t_2026_11_30_07 + 4;
  x.next_attempt_at = t_2026_11_30_07 + 5;
  x.exit_code = -9;
  x.error = "killed";
  x.output = std::string("line1\nline2\0binary", 18);
  x.trace_id = "trace-abc";
  x.idempotency_key = "42-1796022000000-3";
  return x;
}

// -- field views of types without operator== ---------------------------------

inline auto fields(const raft_status& x) {
  return std::make_tuple(x.node_id, x.role, x.leader_id, x.term, x.commit_index,
                         x.applied_index, x.last_log_index);
}
inline auto fields(const execute_request& x) {
  return std::make_tuple(x.instance_id, x.task_id, x.kind, x.command, x.http.method, x.http.url,
                         x.http.headers, x.http.body, x.image, x.attempt, x.shard, x.shards,
                         x.idempotency_key, x.trace_id, x.timeout);
}
inline auto fields(const task_query& x) { return std::make_tuple(x.tenant, x.after_id, x.limit); }
inline auto fields(const instance_query& x) {
  return std::make_tuple(x.tenant, x.task_id, x.by_state, x.state, x.cursor, x.limit);
}
inline auto fields(const leadership& x) { return std::make_tuple(x.leading, x.term, x.leader_id); }
inline auto fields(const pressure& x) { return std::make_tuple(x.level, x.delay); }
inline auto fields(const noop&) { return std::make_tuple(); }
inline auto fields(const create_task& x) { return std::make_tuple(x.t); }
inline auto fields(const update_task& x) { return std::make_tuple(x.t, x.expected_version); }
inline auto fields(const delete_task& x) {
  return std::make_tuple(x.tenant, x.id, x.expected_version, x.cascade);
}
inline auto fields(const retry_instance& x) { return std::make_tuple(x.tenant, x.instance_id, x.at); }
inline auto fields(const share_worker& x) { return std::make_tuple(x.tenant, x.worker_id, x.shared); }
inline auto fields(const set_paused& x) { return std::make_tuple(x.tenant, x.id, x.paused, x.at); }
inline auto fields(const fire_slot& x) {
  return std::make_tuple(x.task_id, x.slot, x.trace_id, x.scheduled);
}
inline auto fields(const put_pool& x) { return std::make_tuple(x.p); }
inline auto fields(const put_calendar& x) { return std::make_tuple(x.c); }
inline auto fields(const delete_calendar& x) { return std::make_tuple(x.tenant, x.name); }
inline auto fields(const dispatch_entry& x) { return std::make_tuple(x.instance_id, x.worker_id); }
inline auto fields(const run_result& x) {
  return std::make_tuple(x.instance_id, x.worker_id, x.state, x.exit_code, x.error, x.output,
                         x.started_at, x.finished_at, x.next_attempt_at);
}

inline auto fields(const prune_span& x) {
  return std::make_tuple(x.task_id, x.slot, x.shard, x.runs);
}

template <class T>
inline auto fields_of_each(const std::vector<T>& xs) {
  std::vector<decltype(fields(xs.front()))> out;
  for (const auto& x : xs) out.push_back(fields(x));
  return out;
}

inline auto fields(const fire& x) { return std::make_tuple(x.term, x.at, fields_of_each(x.slots)); }
inline auto fields(const dispatch& x) { return std::make_tuple(x.term, x.at, fields_of_each(x.entries)); }
inline auto fields(const report_results& x) {
  return std::make_tuple(x.term, x.at, fields_of_each(x.results));
}
inline auto fields(const retry& x) { return std::make_tuple(x.term, x.at, x.instance_ids); }
inline auto fields(const cancel& x) { return std::make_tuple(x.tenant, x.instance_id, x.at, x.reason); }
inline auto fields(const user& x) {
  return std::make_tuple(x.name, x.tenant, x.r, x.password_hash, x.created_at);
}
inline auto fields(const api_token& x) {
  return std::make_tuple(x.id, x.name, x.tenant, x.r, x.hash, x.created_by, x.created_at);
}
inline auto fields(const audit_entry& x) {
  return std::make_tuple(x.at, x.subject, x.tenant, x.action, x.target, x.result, x.via, x.node);
}
inline auto fields(const put_user& x) { return std::make_tuple(fields(x.u), x.bootstrap); }
inline auto fields(const delete_user& x) { return std::make_tuple(x.tenant, x.name); }
inline auto fields(const put_token& x) { return fields(x.t); }
inline auto fields(const delete_token& x) { return std::make_tuple(x.tenant, x.id); }
inline auto fields(const record_audit& x) {
  std::vector<decltype(fields(audit_entry{}))> out;
  for (auto& e : x.entries) out.push_back(fields(e));
  return out;
}
inline auto fields(const record_load& x) {
  return std::make_tuple(x.term, x.at, x.prune_before, x.samples);
}

inline auto fields(const set_membership& x) {
  std::vector<std::tuple<std::string, bool, std::string, std::string>> out;
  for (auto& m : x.members) out.emplace_back(m.id, m.voter, m.cluster_addr, m.http_addr);
  return out;
}
inline auto fields(const note_waiting& x) { return std::make_tuple(x.term, x.notes); }
inline auto fields(const put_ai_records& x) {
  std::vector<std::tuple<ai_column, std::string, std::string, bool>> out;
  for (auto& r : x.records) out.emplace_back(r.column, r.key, r.value, r.erase);
  return out;
}
inline auto fields(const data_key& x) { return std::make_tuple(x.tenant, x.id, x.kek_check, x.wrapped); }
inline auto fields(const put_data_keys& x) {
  std::vector<decltype(fields(data_key{}))> keys;
  for (auto& k : x.keys) keys.push_back(fields(k));
  return std::make_tuple(keys, x.rotate);
}
inline auto fields(const secret_record& x) {
  return std::make_tuple(x.tenant, x.name, x.key_id, x.sealed, x.version, x.set_by, x.set_at,
                         x.created_at);
}
inline auto fields(const put_secret& x) { return fields(x.s); }
inline auto fields(const delete_secret& x) { return std::make_tuple(x.tenant, x.name); }
inline auto fields(const prune_runs& x) { return std::make_tuple(x.term, x.instance_ids); }
inline auto fields(const prune_history& x) {
  return std::make_tuple(x.term, fields_of_each(x.spans), x.instance_ids);
}
inline auto fields(const fire_placed& x) {
  return std::make_tuple(x.term, x.at, fields_of_each(x.slots), fields_of_each(x.placed));
}

/// Expects `a` and `b` to hold the same command with the same fields.
inline void expect_same_command(const command& a, const command& b) {
  ASSERT_EQ(a.type, b.type);
  auto r = visit_command(a, [&](const auto& x) -> caf::expected<bool> {
    using T = std::decay_t<decltype(x)>;
    auto y = command_as<T>(b);
    if (!y) return make_error(errc::corrupted, "the second command does not decode");
    EXPECT_EQ(fields(x), fields(*y));
    return true;
  });
  EXPECT_TRUE(r) << (r ? "" : view(r.error()).message);
}

/// One value of every command alternative, each with non-default fields.
inline std::vector<command> every_command() {
  std::vector<command> out;
  out.emplace_back(noop{});
  out.emplace_back(create_task{full_task()});
  out.emplace_back(update_task{full_task(), 11});
  out.emplace_back(delete_task{"acme", 42, 12, true});
  out.emplace_back(set_paused{"acme", 42, false, t_2026_11_30_07});
  fire_slot scheduled{43, -5, "tr-2"};
  scheduled.scheduled = true;
  out.emplace_back(fire{3, t_2026_11_30_07, {{42, t_2026_11_30_07, "tr-1"}, scheduled}});
  out.emplace_back(dispatch{3, t_2026_11_30_07 + 1, {{"42-1-0", "w-1"}, {"42-1-1", "w-2"}}});
  run_result r;
  r.instance_id = "42-1-0";
  r.worker_id = "w-1";
  r.state = instance_state::retry_waiting;
  r.exit_code = 2;
  r.error = "exit 2";
  r.output = "oops";
  r.started_at = 10;
  r.finished_at = 20;
  r.next_attempt_at = 30;
  out.emplace_back(report_results{4, t_2026_11_30_07 + 2, {r, r}});
  out.emplace_back(retry{5, t_2026_11_30_07 + 3, {"42-1-0", "42-1-1"}});
  out.emplace_back(cancel{"acme", "42-1-0", t_2026_11_30_07 + 4, "operator said so"});
  out.emplace_back(put_user{user{"alice", "acme", role::operator_, "$argon2id$x", 7}, true});
  out.emplace_back(delete_user{"acme", "alice"});
  out.emplace_back(put_token{api_token{"tok_1", "ci", "acme", role::admin, "ab12", "alice", 8}});
  out.emplace_back(delete_token{"acme", "tok_1"});
  out.emplace_back(record_audit{{audit_entry{9, "alice", "acme", "task.create", "42", "ok",
                                             "ai-agent", "n1"},
                                 audit_entry{10, "bob", "acme", "task.delete", "42",
                                             "forbidden", "", "n2"}}});
  out.emplace_back(record_load{3, t_2026_11_30_07 + 5, t_2026_11_30_07 - 604'800'000,
                               {{"w1", t_2026_11_30_07 + 5, 2, 16, 37, 61},
                                {"w2", t_2026_11_30_07 + 5, 0, 4, 0, 12}}});
  out.emplace_back(set_membership{{{"n1", true, "", ""},
                                   {"n4", false, "127.0.0.1:7404", "127.0.0.1:8084"}}});
  out.emplace_back(note_waiting{6, {{"42-1-0", "no worker of tenant acme matches zone=eu"},
                                    {"42-1-1", ""}}});
  out.emplace_back(share_worker{"acme", "w-1", false});
  out.emplace_back(retry_instance{"acme", "42-1-0", t_2026_11_30_07 + 6});
  out.emplace_back(put_ai_records{{{ai_column::conversations, "c/c-1", "{\"id\":\"c-1\"}", false},
                                   {ai_column::analyses, "acme/42-1-0", "bytes", true}}});
  out.emplace_back(put_data_keys{{data_key{"acme", "k1", "c0ffee", std::string("\x01\x02w", 3)}},
                                 true});
  out.emplace_back(put_secret{secret_record{"acme", "prod-db", "k1", std::string("\x01s\x00", 3),
                                            2, "alice", t_2026_11_30_07, 5}});
  out.emplace_back(delete_secret{"acme", "prod-db"});
  out.emplace_back(put_pool{pool{"acme", "db", 4, t_2026_11_30_07 + 7}});
  out.emplace_back(put_calendar{calendar{"acme", "holidays", "public holidays",
                                         {{20'447, 20'447}, {20'453, 20'454}},
                                         t_2026_11_30_07 + 8}});
  out.emplace_back(delete_calendar{"acme", "holidays"});
  out.emplace_back(prune_runs{7, {"42-1796022000000-3", "42-1796022060000-0"}});
  out.emplace_back(fire_placed{8, t_2026_11_30_07, {{42, t_2026_11_30_07, "tr-3"}},
                               {{"42-1796022000000-0", "w-1"}}});
  out.emplace_back(
      prune_history{9, {{42, t_2026_11_30_07, 3, 1000}, {43, -5, 0, 1}}, {"42-1796022060000-0"}});
  return out;
}

// `applied` grows fields as commands report more; fill and compare those that exist.
template <class A>
inline auto set_optional_fields(A& a, int) -> decltype(a.deleted_tasks, void()) {
  a.deleted_tasks = {3, 4};
}
template <class A>
inline void set_optional_fields(A&, long) {}
template <class A>
inline auto expect_same_optional_fields(const A& a, const A& b, int) -> decltype(a.deleted_tasks, void()) {
  EXPECT_EQ(a.deleted_tasks, b.deleted_tasks);
}
template <class A>
inline void expect_same_optional_fields(const A&, const A&, long) {}

template <class T>
inline caf::expected<T> round_trip(const T& x) {
  return decode<T>(encode(x));
}

inline errc code_of(const caf::error& err) { return view(err).code; }

}  // namespace testing_support
}  // namespace aisched::proto
