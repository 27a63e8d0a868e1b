// Tests for the proto vocabulary: every type round-trips through the binary codec
// (proto/codec.hpp) and damaged bytes are `corrupted`; the task JSON mapping is
// faithful, strict and merges over a base (proto/json.hpp); validation names the
// offending field (proto/validate.hpp); time text forms parse and format as
// documented (proto/time.hpp); error bodies have the REST shape.
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
#include "proto/commands.hpp"
#include "proto/errors.hpp"
#include "proto/interfaces.hpp"
#include "proto/json.hpp"
#include "proto/time.hpp"
#include "proto/types.hpp"
#include "proto/validate.hpp"

namespace json = boost::json;

// -- printers for readable failure messages ------------------------------------

namespace aisched {
void PrintTo(errc x, std::ostream* os) { *os << to_string(x); }
}  // namespace aisched

namespace aisched::proto {
void PrintTo(const task& t, std::ostream* os) { *os << json::serialize(to_json(t)); }
void PrintTo(const instance& x, std::ostream* os) { *os << json::serialize(to_json(x)); }
void PrintTo(const worker& w, std::ostream* os) { *os << json::serialize(to_json(w)); }
void PrintTo(instance_state s, std::ostream* os) { *os << name_of(s); }
}  // namespace aisched::proto

namespace aisched::proto {
namespace {

constexpr unix_ms t_2026_11_30_07 = 1'796'022'000'000;  // 2026-11-30T07:00:00Z
constexpr unix_ms t_2026_01_01 = 1'767'225'600'000;     // 2026-01-01T00:00:00Z
constexpr unix_ms t_2027_01_01 = 1'798'761'600'000;     // 2027-01-01T00:00:00Z

/// A task whose every field differs from its default, so a field lost anywhere shows.
task full_task() {
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
  t.paused = true;
  t.created_at = t_2026_01_01 + 1;
  t.updated_at = t_2026_01_01 + 2;
  t.version = 12;
  return t;
}

instance full_instance() {
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

auto fields(const raft_status& x) {
  return std::make_tuple(x.node_id, x.role, x.leader_id, x.term, x.commit_index,
                         x.applied_index, x.last_log_index);
}
auto fields(const execute_request& x) {
  return std::make_tuple(x.instance_id, x.task_id, x.kind, x.command, x.http.method, x.http.url,
                         x.http.headers, x.http.body, x.image, x.attempt, x.shard, x.shards,
                         x.idempotency_key, x.trace_id, x.timeout);
}
auto fields(const task_query& x) { return std::make_tuple(x.tenant, x.after_id, x.limit); }
auto fields(const instance_query& x) {
  return std::make_tuple(x.tenant, x.task_id, x.by_state, x.state, x.cursor, x.limit);
}
auto fields(const leadership& x) { return std::make_tuple(x.leading, x.term, x.leader_id); }
auto fields(const pressure& x) { return std::make_tuple(x.level, x.delay); }
auto fields(const noop&) { return std::make_tuple(); }
auto fields(const create_task& x) { return std::make_tuple(x.t); }
auto fields(const update_task& x) { return std::make_tuple(x.t, x.expected_version); }
auto fields(const delete_task& x) { return std::make_tuple(x.tenant, x.id, x.expected_version); }
auto fields(const set_paused& x) { return std::make_tuple(x.tenant, x.id, x.paused, x.at); }
auto fields(const fire_slot& x) { return std::make_tuple(x.task_id, x.slot, x.trace_id); }
auto fields(const dispatch_entry& x) { return std::make_tuple(x.instance_id, x.worker_id); }
auto fields(const run_result& x) {
  return std::make_tuple(x.instance_id, x.worker_id, x.state, x.exit_code, x.error, x.output,
                         x.started_at, x.finished_at, x.next_attempt_at);
}

template <class T>
auto fields_of_each(const std::vector<T>& xs) {
  std::vector<decltype(fields(xs.front()))> out;
  for (const auto& x : xs) out.push_back(fields(x));
  return out;
}

auto fields(const fire& x) { return std::make_tuple(x.term, x.at, fields_of_each(x.slots)); }
auto fields(const dispatch& x) { return std::make_tuple(x.term, x.at, fields_of_each(x.entries)); }
auto fields(const report_results& x) {
  return std::make_tuple(x.term, x.at, fields_of_each(x.results));
}
auto fields(const retry& x) { return std::make_tuple(x.term, x.at, x.instance_ids); }
auto fields(const cancel& x) { return std::make_tuple(x.tenant, x.instance_id, x.at, x.reason); }
auto fields(const user& x) {
  return std::make_tuple(x.name, x.tenant, x.r, x.password_hash, x.created_at);
}
auto fields(const api_token& x) {
  return std::make_tuple(x.id, x.name, x.tenant, x.r, x.hash, x.created_by, x.created_at);
}
auto fields(const audit_entry& x) {
  return std::make_tuple(x.at, x.subject, x.tenant, x.action, x.target, x.result, x.via, x.node);
}
auto fields(const put_user& x) { return std::make_tuple(fields(x.u), x.bootstrap); }
auto fields(const delete_user& x) { return std::make_tuple(x.tenant, x.name); }
auto fields(const put_token& x) { return fields(x.t); }
auto fields(const delete_token& x) { return std::make_tuple(x.tenant, x.id); }
auto fields(const record_audit& x) {
  std::vector<decltype(fields(audit_entry{}))> out;
  for (auto& e : x.entries) out.push_back(fields(e));
  return out;
}
auto fields(const record_load& x) {
  return std::make_tuple(x.term, x.at, x.prune_before, x.samples);
}

/// Expects `a` and `b` to hold the same alternative with the same fields.
void expect_same_command(const command& a, const command& b) {
  ASSERT_EQ(a.index(), b.index());
  caf::visit(
      [&](const auto& x) {
        using alt = std::decay_t<decltype(x)>;
        EXPECT_EQ(fields(x), fields(caf::get<alt>(b)));
      },
      a);
}

/// One value of every command alternative, each with non-default fields.
std::vector<command> every_command() {
  std::vector<command> out;
  out.emplace_back(noop{});
  out.emplace_back(create_task{full_task()});
  out.emplace_back(update_task{full_task(), 11});
  out.emplace_back(delete_task{"acme", 42, 12});
  out.emplace_back(set_paused{"acme", 42, false, t_2026_11_30_07});
  out.emplace_back(fire{3, t_2026_11_30_07, {{42, t_2026_11_30_07, "tr-1"}, {43, -5, "tr-2"}}});
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
  return out;
}

// `applied` grows fields as commands report more; fill and compare those that exist.
template <class A>
auto set_optional_fields(A& a, int) -> decltype(a.deleted_tasks, void()) {
  a.deleted_tasks = {3, 4};
}
template <class A>
void set_optional_fields(A&, long) {}
template <class A>
auto expect_same_optional_fields(const A& a, const A& b, int) -> decltype(a.deleted_tasks, void()) {
  EXPECT_EQ(a.deleted_tasks, b.deleted_tasks);
}
template <class A>
void expect_same_optional_fields(const A&, const A&, long) {}

template <class T>
caf::expected<T> round_trip(const T& x) {
  return decode<T>(encode(x));
}

errc code_of(const caf::error& err) { return view(err).code; }

// -- binary codec --------------------------------------------------------------

TEST(codec, task_with_every_field_set_round_trips) {
  const auto t = full_task();
  auto back = round_trip(t);
  ASSERT_TRUE(back) << view(back.error()).message;
  EXPECT_EQ(*back, t);
  EXPECT_FALSE(*back == task{}) << "the sample must differ from a default task";
}

TEST(codec, instance_worker_and_task_runtime_round_trip) {
  const auto x = full_instance();
  auto xb = round_trip(x);
  ASSERT_TRUE(xb);
  EXPECT_EQ(*xb, x);

  worker w;
  w.id = "w-7";
  w.tenant = "acme";
  w.protocol = worker_protocol::http;
  w.address = "https://worker.example.com/cb";
  w.labels = {{"zone", "eu"}};
  w.max_load = 3;
  w.load = 2;
  w.last_heartbeat = t_2026_11_30_07;
  w.status = worker_status::draining;
  auto wb = round_trip(w);
  ASSERT_TRUE(wb);
  EXPECT_EQ(*wb, w);

  task_runtime rt{42, t_2026_11_30_07, "42-1796022000000-0", instance_state::running};
  auto rb = round_trip(rt);
  ASSERT_TRUE(rb);
  EXPECT_EQ(*rb, rt);
}

TEST(codec, every_command_alternative_round_trips_inside_the_variant) {
  const auto cmds = every_command();
  ASSERT_EQ(cmds.size(), 16u) << "one sample per alternative of proto::command";
  for (size_t i = 0; i < cmds.size(); ++i) {
    SCOPED_TRACE(command_name(cmds[i]));
    EXPECT_EQ(cmds[i].index(), i);
    auto back = round_trip(cmds[i]);
    ASSERT_TRUE(back) << view(back.error()).message;
    expect_same_command(*back, cmds[i]);
  }
}

TEST(codec, log_entry_and_applied_round_trip) {
  for (const auto& cmd : every_command()) {
    SCOPED_TRACE(command_name(cmd));
    log_entry e{77, 5, cmd};
    auto back = round_trip(e);
    ASSERT_TRUE(back);
    EXPECT_EQ(back->index, 77u);
    EXPECT_EQ(back->term, 5u);
    expect_same_command(back->cmd, cmd);
  }

  applied a;
  a.index = 9;
  a.tasks = {full_task(), task{}};
  a.instances = {full_instance(), instance{}};
  set_optional_fields(a, 0);
  auto back = round_trip(a);
  ASSERT_TRUE(back);
  EXPECT_EQ(back->index, a.index);
  EXPECT_EQ(back->tasks, a.tasks);
  EXPECT_EQ(back->instances, a.instances);
  expect_same_optional_fields(*back, a, 0);
}

TEST(codec, messages_and_pages_round_trip) {
  raft_status s{"n1", "leader", "n1", 4, 100, 99, 101};
  auto sb = round_trip(s);
  ASSERT_TRUE(sb);
  EXPECT_EQ(fields(*sb), fields(s));

  execute_request r;
  r.instance_id = "42-1-2";
  r.task_id = 42;
  r.kind = task_kind::container;
  r.command = "echo hi";
  r.http = full_task().http;
  r.image = "alpine:3";
  r.attempt = 3;
  r.shard = 2;
  r.shards = 4;
  r.idempotency_key = "42-1-2";
  r.trace_id = "tr";
  r.timeout = 60'000;
  auto rb = round_trip(r);
  ASSERT_TRUE(rb);
  EXPECT_EQ(fields(*rb), fields(r));

  task_page tp{{full_task(), full_task()}, "42"};
  auto tpb = round_trip(tp);
  ASSERT_TRUE(tpb);
  EXPECT_EQ(tpb->items, tp.items);
  EXPECT_EQ(tpb->next_cursor, tp.next_cursor);

  instance_page ip{{full_instance()}, "00ff"};
  auto ipb = round_trip(ip);
  ASSERT_TRUE(ipb);
  EXPECT_EQ(ipb->items, ip.items);
  EXPECT_EQ(ipb->next_cursor, ip.next_cursor);

  task_query tq{"acme", 10, 25};
  auto tqb = round_trip(tq);
  ASSERT_TRUE(tqb);
  EXPECT_EQ(fields(*tqb), fields(tq));

  instance_query iq{"acme", 42, true, instance_state::failed, "abcd", 7};
  auto iqb = round_trip(iq);
  ASSERT_TRUE(iqb);
  EXPECT_EQ(fields(*iqb), fields(iq));

  leadership l{true, 8, "n2"};
  auto lb = round_trip(l);
  ASSERT_TRUE(lb);
  EXPECT_EQ(fields(*lb), fields(l));

  pressure p{pressure_level::red, 1'500};
  auto pb = round_trip(p);
  ASSERT_TRUE(pb);
  EXPECT_EQ(fields(*pb), fields(p));
}

TEST(codec, truncated_bytes_are_corrupted) {
  const auto bytes = encode(full_task());
  ASSERT_GT(bytes.size(), 10u);
  for (size_t cut : {size_t{0}, size_t{1}, bytes.size() / 2, bytes.size() - 1}) {
    SCOPED_TRACE("kept " + std::to_string(cut) + " of " + std::to_string(bytes.size()));
    auto back = decode<task>(std::string_view(bytes).substr(0, cut));
    ASSERT_FALSE(back);
    EXPECT_EQ(code_of(back.error()), errc::corrupted);
  }
  const auto entry = encode(log_entry{3, 1, create_task{full_task()}});
  auto back = decode<log_entry>(std::string_view(entry).substr(0, entry.size() - 1));
  ASSERT_FALSE(back);
  EXPECT_EQ(code_of(back.error()), errc::corrupted);
}

TEST(codec, trailing_bytes_are_corrupted) {
  auto bytes = encode(full_instance());
  bytes += "x";
  auto back = decode<instance>(bytes);
  ASSERT_FALSE(back);
  EXPECT_EQ(code_of(back.error()), errc::corrupted);

  auto entry = encode(log_entry{1, 1, noop{}});
  entry += std::string(8, '\0');
  auto eb = decode<log_entry>(entry);
  ASSERT_FALSE(eb);
  EXPECT_EQ(code_of(eb.error()), errc::corrupted);
}

TEST(codec, unknown_command_tag_is_corrupted) {
  // A noop serializes to nothing, so the variant's one-byte type tag is the last byte.
  const auto good = encode(log_entry{1, 1, noop{}});
  for (uint8_t tag : {uint8_t{10}, uint8_t{15}, uint8_t{200}}) {
    SCOPED_TRACE("tag " + std::to_string(tag));
    auto bad = good;
    bad.back() = static_cast<char>(tag);
    try {
      auto back = decode<log_entry>(bad);
      if (back) {
        ADD_FAILURE() << "decoded as " << command_name(back->cmd);
        continue;
      }
      EXPECT_EQ(code_of(back.error()), errc::corrupted);
    } catch (const std::exception& e) {
      ADD_FAILURE() << "decode threw: " << e.what();
    }
  }
}

TEST(codec, enum_value_outside_its_enum_is_corrupted) {
  // The state is the last field of a task_runtime and one byte on the wire.
  auto bytes = encode(task_runtime{42, t_2026_11_30_07, "42-1-0", instance_state::running});
  bytes.back() = 42;
  auto back = decode<task_runtime>(bytes);
  if (back) FAIL() << "decoded state " << static_cast<int>(back->last_state);
  EXPECT_EQ(code_of(back.error()), errc::corrupted);
}

// -- JSON: mapping --------------------------------------------------------------

json::value parse(std::string_view body) {
  auto v = parse_json(body);
  EXPECT_TRUE(v) << body;
  return v ? *v : json::value{};
}

TEST(json, task_round_trips_its_definition_fields) {
  const auto t = full_task();
  auto back = task_from_json(to_json(t));
  ASSERT_TRUE(back) << view(back.error()).message;
  // id, tenant, created_at and updated_at are assigned by the cluster: not read back.
  auto expected = t;
  expected.id = 0;
  expected.tenant = "default";
  expected.created_at = 0;
  expected.updated_at = 0;
  EXPECT_EQ(*back, expected);
}

TEST(json, task_text_forms_are_durations_rfc3339_and_enum_names) {
  auto v = to_json(full_task()).as_object();
  EXPECT_EQ(v.at("kind"), "http");
  EXPECT_EQ(v.at("route"), "consistent_hash");
  EXPECT_EQ(v.at("overlap"), "buffer_one");
  EXPECT_EQ(v.at("misfire"), "fire_all");
  EXPECT_EQ(v.at("timeout"), "10m");
  EXPECT_EQ(v.at("jitter"), "1s234ms");
  EXPECT_EQ(v.at("catchup_window"), "2h");
  EXPECT_EQ(v.at("at"), "2026-11-30T07:00:00.250Z");
  EXPECT_EQ(v.at("start_at"), "2026-01-01T00:00:00Z");
  EXPECT_EQ(v.at("retry").at("policy"), "on_error_codes");
  EXPECT_EQ(v.at("retry").at("interval"), "2s500ms");
  EXPECT_EQ(v.at("http").at("method"), "POST");
  EXPECT_TRUE(to_json(task{}).at("at").is_null()) << "an unset instant is null";
}

TEST(json, task_reads_durations_times_and_enums_from_text) {
  auto t = task_from_json(parse(R"({
      "kind": "container", "route": "failover", "overlap": "replace", "misfire": "skip",
      "timeout": "1h30m", "jitter": "500ms", "catchup_window": "0",
      "at": "2026-11-30T08:00:00+01:00", "start_at": "2026-01-01T00:00:00.5Z", "end_at": null,
      "retry": {"policy": "fixed", "interval": "10s", "max": "1m", "multiplier": 1.5,
                "error_codes": [3, -1], "window": "2h"},
      "http": {"method": "PUT", "url": "http://x", "headers": {"A": "b"}, "body": "z"}})"));
  ASSERT_TRUE(t) << view(t.error()).message;
  EXPECT_EQ(t->kind, task_kind::container);
  EXPECT_EQ(t->route, route_strategy::failover);
  EXPECT_EQ(t->overlap, overlap_policy::replace);
  EXPECT_EQ(t->misfire, misfire_policy::skip);
  EXPECT_EQ(t->timeout, 5'400'000);
  EXPECT_EQ(t->jitter, 500);
  EXPECT_EQ(t->catchup_window, 0);
  EXPECT_EQ(t->at, t_2026_11_30_07);
  EXPECT_EQ(t->start_at, t_2026_01_01 + 500);
  EXPECT_EQ(t->end_at, 0);
  EXPECT_EQ(t->retry.kind, retry_kind::fixed);
  EXPECT_EQ(t->retry.interval, 10'000);
  EXPECT_EQ(t->retry.max, 60'000);
  EXPECT_EQ(t->retry.multiplier, 1.5);
  EXPECT_EQ(t->retry.error_codes, (std::vector<int32_t>{3, -1}));
  EXPECT_EQ(t->retry.window, 7'200'000);
  EXPECT_EQ(t->http, (http_spec{"PUT", "http://x", {{"A", "b"}}, "z"}));
}

TEST(json, read_only_fields_are_accepted_and_ignored) {
  task base;
  base.id = 5;
  base.tenant = "acme";
  base.created_at = t_2026_01_01;
  base.updated_at = t_2026_01_01 + 1;
  auto t = task_from_json(parse(R"({"id": 99, "tenant": "evil", "name": "n",
      "created_at": "2020-01-01T00:00:00Z", "updated_at": "2020-01-01T00:00:00Z",
      "next_fire_times": ["2020-01-01T00:00:00Z"], "version": 4})"),
                          base);
  ASSERT_TRUE(t) << view(t.error()).message;
  EXPECT_EQ(t->id, 5u);
  EXPECT_EQ(t->tenant, "acme");
  EXPECT_EQ(t->created_at, t_2026_01_01);
  EXPECT_EQ(t->updated_at, t_2026_01_01 + 1);
  EXPECT_EQ(t->name, "n");
  EXPECT_EQ(t->version, 4u) << "version is read for the caller's version check";
}

TEST(json, present_fields_merge_over_the_base_and_absent_ones_keep_it) {
  const auto base = full_task();
  auto t = task_from_json(parse(R"({"timeout": "5m"})"), base);
  ASSERT_TRUE(t);
  auto expected = base;
  expected.timeout = 300'000;
  EXPECT_EQ(*t, expected);

  auto nested = task_from_json(parse(R"({"retry": {"max_attempts": 9}})"), base);
  ASSERT_TRUE(nested);
  expected = base;
  expected.retry.max_attempts = 9;
  EXPECT_EQ(*nested, expected) << "a nested object merges over the base's as well";

  auto empty = task_from_json(parse("{}"), base);
  ASSERT_TRUE(empty);
  EXPECT_EQ(*empty, base);
}

// -- JSON: strict decoding ----------------------------------------------------

/// Parses `body` as a task document over a default task and returns the error.
error_view task_error(std::string_view body) {
  auto v = parse_json(body);
  if (!v) return view(v.error());
  auto t = task_from_json(*v);
  if (t) return {};
  return view(t.error());
}

void expect_invalid(std::string_view body, const std::string& field) {
  SCOPED_TRACE(std::string(body));
  auto e = task_error(body);
  EXPECT_EQ(e.code, errc::invalid_argument);
  EXPECT_EQ(e.field, field);
  EXPECT_NE(e.message.find(field), std::string::npos) << "message names the field: " << e.message;
}

TEST(json_strict, malformed_body_is_invalid_argument_on_body) {
  for (std::string_view body : {"{", "[1,", "", "{\"name\": }", "{} x", "nul"}) {
    SCOPED_TRACE(std::string(body));
    auto v = parse_json(body);
    ASSERT_FALSE(v);
    auto e = view(v.error());
    EXPECT_EQ(e.code, errc::invalid_argument);
    EXPECT_EQ(e.field, "body");
  }
}

TEST(json_strict, body_that_is_not_an_object_is_rejected) {
  expect_invalid("[1]", "body");
  expect_invalid("\"task\"", "body");
  expect_invalid(R"({"retry": 3})", "retry");
  expect_invalid(R"({"http": []})", "http");
}

TEST(json_strict, unknown_fields_are_named_with_their_path) {
  expect_invalid(R"({"name": "x", "bogus": 1})", "bogus");
  expect_invalid(R"({"retry": {"bogus": 1}})", "retry.bogus");
  expect_invalid(R"({"http": {"url": "http://x", "nope": "y"}})", "http.nope");
  expect_invalid(R"({"Name": "x"})", "Name");
}

TEST(json_strict, wrong_types_are_named) {
  expect_invalid(R"({"shards": "3"})", "shards");
  expect_invalid(R"({"paused": 1})", "paused");
  expect_invalid(R"({"labels": {"a": 1}})", "labels.a");
  expect_invalid(R"({"labels": ["a"]})", "labels");
  expect_invalid(R"({"name": 5})", "name");
  expect_invalid(R"({"shards": 2.5})", "shards");
  expect_invalid(R"({"depends_on": 3})", "depends_on");
  expect_invalid(R"({"depends_on": [1, "2"]})", "depends_on[1]");
  expect_invalid(R"({"retry": {"multiplier": "2"}})", "retry.multiplier");
  expect_invalid(R"({"retry": {"jitter": "yes"}})", "retry.jitter");
  expect_invalid(R"({"http": {"headers": {"A": true}}})", "http.headers.A");
  expect_invalid(R"({"kind": 1})", "kind");
}

TEST(json_strict, integers_out_of_range_are_rejected) {
  expect_invalid(R"({"shards": -1})", "shards");
  expect_invalid(R"({"shards": 4294967296})", "shards");
  expect_invalid(R"({"misfire_limit": 99999999999})", "misfire_limit");
  expect_invalid(R"({"version": 18446744073709551615})", "version");
  expect_invalid(R"({"shards": 1e30})", "shards");
  expect_invalid(R"({"depends_on": [-1]})", "depends_on[0]");
  expect_invalid(R"({"retry": {"error_codes": [2147483648]}})", "retry.error_codes[0]");
  expect_invalid(R"({"retry": {"max_attempts": -3}})", "retry.max_attempts");

  auto ok = task_from_json(parse(R"({"shards": 4294967295, "retry": {"error_codes": [-2147483648]}})"));
  ASSERT_TRUE(ok) << "the limits themselves are in range";
  EXPECT_EQ(ok->shards, 4294967295u);
  EXPECT_EQ(ok->retry.error_codes, std::vector<int32_t>{std::numeric_limits<int32_t>::min()});
}

TEST(json_strict, bad_enum_value_lists_the_allowed_values) {
  auto e = task_error(R"({"kind": "bash"})");
  EXPECT_EQ(e.code, errc::invalid_argument);
  EXPECT_EQ(e.field, "kind");
  EXPECT_NE(e.message.find("bash"), std::string::npos) << e.message;
  EXPECT_NE(e.message.find("shell, http, container, noop"), std::string::npos) << e.message;

  auto r = task_error(R"({"retry": {"policy": "linear"}})");
  EXPECT_EQ(r.field, "retry.policy");
  EXPECT_NE(r.message.find("fixed, exponential, on_error_codes"), std::string::npos)
      << r.message;

  expect_invalid(R"({"route": "nearest"})", "route");
  expect_invalid(R"({"overlap": "Skip"})", "overlap");
  expect_invalid(R"({"misfire": ""})", "misfire");
}

TEST(json_strict, bad_durations_are_rejected) {
  expect_invalid(R"({"timeout": "10x"})", "timeout");
  expect_invalid(R"({"timeout": 10})", "timeout");
  expect_invalid(R"({"timeout": ""})", "timeout");
  expect_invalid(R"({"jitter": "-1s"})", "jitter");
  expect_invalid(R"({"retry": {"interval": "1.5s"}})", "retry.interval");
  auto e = task_error(R"({"timeout": "10x"})");
  EXPECT_NE(e.message.find("10x"), std::string::npos) << e.message;
}

TEST(json_strict, bad_times_are_rejected) {
  expect_invalid(R"({"at": "2026-02-30T00:00:00Z"})", "at");
  expect_invalid(R"({"at": "tomorrow"})", "at");
  expect_invalid(R"({"at": 1796022000000})", "at");
  expect_invalid(R"({"start_at": "2026-11-30"})", "start_at");
  expect_invalid(R"({"end_at": "2026-11-30T07:00:00"})", "end_at");
}

TEST(json_strict, nothing_of_a_rejected_document_is_returned) {
  auto t = task_from_json(parse(R"({"name": "x", "shards": -1})"), full_task());
  ASSERT_FALSE(t);
  EXPECT_EQ(view(t.error()).field, "shards");
}

TEST(json, error_to_json_has_code_message_and_field) {
  auto body = error_to_json(make_error(errc::not_found, "id", "task 7 does not exist"));
  EXPECT_EQ(body, parse(R"({"error": {"code": "not_found", "message": "task 7 does not exist",
                                      "field": "id"}})"));

  auto no_field = error_to_json(make_error(errc::version_conflict, "stale"));
  EXPECT_EQ(no_field, parse(R"({"error": {"code": "version_conflict", "message": "stale",
                                          "field": ""}})"));

  auto timeout = error_to_json(caf::make_error(caf::sec::request_timeout));
  EXPECT_EQ(timeout.at("error").at("code"), "unavailable");
  auto other = error_to_json(caf::make_error(caf::sec::unexpected_message));
  EXPECT_EQ(other.at("error").at("code"), "internal");
}

TEST(json, worker_reads_registration_and_rejects_unknown_fields) {
  auto w = worker_from_json(
      parse(R"({"id": "w1", "callback_url": "https://w/cb", "labels": {"z": "eu"}, "max_load": 4})"));
  ASSERT_TRUE(w) << view(w.error()).message;
  EXPECT_EQ(w->id, "w1");
  EXPECT_EQ(w->protocol, worker_protocol::http);
  EXPECT_EQ(w->address, "https://w/cb");
  EXPECT_EQ(w->max_load, 4u);
  EXPECT_EQ(w->labels, (std::map<std::string, std::string>{{"z", "eu"}}));

  auto bad = worker_from_json(parse(R"({"id": "w1", "tenant": "x"})"));
  ASSERT_FALSE(bad);
  EXPECT_EQ(view(bad.error()).field, "tenant");
}

// -- validation ----------------------------------------------------------------

task valid_shell_task() {
  task t;
  t.name = "backup";
  t.command = "pg_dump shop";
  t.schedule = "0 3 * * *";
  return t;
}

TEST(validate, valid_tasks_of_every_kind_pass) {
  EXPECT_FALSE(validate_task(valid_shell_task()));

  auto h = valid_shell_task();
  h.kind = task_kind::http;
  h.command.clear();
  h.http.url = "https://example.com/hook";
  h.http.method = "DELETE";
  EXPECT_FALSE(validate_task(h));

  auto c = valid_shell_task();
  c.kind = task_kind::container;
  c.image = "alpine:3";
  EXPECT_FALSE(validate_task(c));

  auto n = valid_shell_task();
  n.kind = task_kind::noop;
  n.command.clear();
  n.schedule.clear();
  EXPECT_FALSE(validate_task(n)) << "no trigger at all means manual only";

  auto edges = valid_shell_task();
  edges.id = 3;
  edges.shards = 1024;
  edges.retry.max_attempts = 100;
  edges.retry.initial = edges.retry.max = 5'000;
  edges.start_at = t_2026_01_01;
  edges.end_at = t_2026_01_01 + 1;
  edges.depends_on = {1, 2, 4};
  edges.timeout = max_timeout;
  EXPECT_FALSE(validate_task(edges)) << "limits themselves are allowed";

  auto full = full_task();  // every field set, but three triggers at once
  full.at = 0;
  full.event.clear();
  EXPECT_FALSE(validate_task(full)) << view(validate_task(full)).message;
}

struct rule_case {
  const char* what;
  void (*breaks)(task&);
  const char* field;
};

TEST(validate, each_broken_rule_is_invalid_argument_naming_its_field) {
  const rule_case cases[] = {
      {"empty name", [](task& t) { t.name.clear(); }, "name"},
      {"name too long", [](task& t) { t.name.assign(max_name_length + 1, 'n'); }, "name"},
      {"shell without command", [](task& t) { t.command.clear(); }, "command"},
      {"http without url",
       [](task& t) {
         t.kind = task_kind::http;
         t.http.url.clear();
       },
       "http.url"},
      {"http with non-http url",
       [](task& t) {
         t.kind = task_kind::http;
         t.http.url = "ftp://example.com/x";
       },
       "http.url"},
      {"http with bare scheme",
       [](task& t) {
         t.kind = task_kind::http;
         t.http.url = "https://";
       },
       "http.url"},
      {"http with bad method",
       [](task& t) {
         t.kind = task_kind::http;
         t.http.url = "http://example.com";
         t.http.method = "FETCH";
       },
       "http.method"},
      {"container without image", [](task& t) { t.kind = task_kind::container; }, "image"},
      {"schedule and at", [](task& t) { t.at = t_2026_11_30_07; }, "schedule"},
      {"at and event",
       [](task& t) {
         t.schedule.clear();
         t.at = t_2026_11_30_07;
         t.event = "deploy";
       },
       "schedule"},
      {"shards 0", [](task& t) { t.shards = 0; }, "shards"},
      {"shards 1025", [](task& t) { t.shards = 1025; }, "shards"},
      {"timeout 0", [](task& t) { t.timeout = 0; }, "timeout"},
      {"timeout over a week", [](task& t) { t.timeout = max_timeout + 1; }, "timeout"},
      {"max_attempts 0", [](task& t) { t.retry.max_attempts = 0; }, "retry.max_attempts"},
      {"max_attempts 101", [](task& t) { t.retry.max_attempts = 101; }, "retry.max_attempts"},
      {"exponential max below initial",
       [](task& t) {
         t.retry.kind = retry_kind::exponential;
         t.retry.initial = 10'000;
         t.retry.max = 9'999;
       },
       "retry.max"},
      {"on_error_codes without codes",
       [](task& t) {
         t.retry.kind = retry_kind::on_error_codes;
         t.retry.error_codes.clear();
       },
       "retry.error_codes"},
      {"end_at equal to start_at",
       [](task& t) {
         t.start_at = t_2026_01_01;
         t.end_at = t_2026_01_01;
       },
       "end_at"},
      {"end_at before start_at",
       [](task& t) {
         t.start_at = t_2027_01_01;
         t.end_at = t_2026_01_01;
       },
       "end_at"},
      {"depends on itself",
       [](task& t) {
         t.id = 7;
         t.depends_on = {3, 7};
       },
       "depends_on"},
      {"duplicate dependency", [](task& t) { t.depends_on = {3, 5, 3}; }, "depends_on"},
      {"dependency id 0", [](task& t) { t.depends_on = {0}; }, "depends_on"},
  };
  for (const auto& c : cases) {
    SCOPED_TRACE(c.what);
    auto t = valid_shell_task();
    c.breaks(t);
    auto e = view(validate_task(t));
    EXPECT_EQ(e.code, errc::invalid_argument);
    EXPECT_EQ(e.field, c.field);
    EXPECT_FALSE(e.message.empty());
  }
}

TEST(validate, worker_needs_id_callback_url_and_capacity) {
  worker w;
  w.id = "w1";
  EXPECT_FALSE(validate_worker(w));
  auto no_id = w;
  no_id.id.clear();
  EXPECT_EQ(view(validate_worker(no_id)).field, "id");
  auto http = w;
  http.protocol = worker_protocol::http;
  http.address = "localhost:9000";
  EXPECT_EQ(view(validate_worker(http)).field, "callback_url");
  auto zero = w;
  zero.max_load = 0;
  EXPECT_EQ(view(validate_worker(zero)).field, "max_load");
}

// -- time ----------------------------------------------------------------------

TEST(time, rfc3339_parses_utc_offsets_and_milliseconds) {
  EXPECT_EQ(parse_rfc3339("2026-11-30T07:00:00Z"), t_2026_11_30_07);
  EXPECT_EQ(parse_rfc3339("2026-11-30t07:00:00z"), t_2026_11_30_07);
  EXPECT_EQ(parse_rfc3339("2026-11-30T08:00:00+01:00"), t_2026_11_30_07);
  EXPECT_EQ(parse_rfc3339("2026-11-30T01:30:00-05:30"), t_2026_11_30_07);
  EXPECT_EQ(parse_rfc3339("2026-11-30T07:00:00.250Z"), t_2026_11_30_07 + 250);
  EXPECT_EQ(parse_rfc3339("2026-11-30T07:00:00.5Z"), t_2026_11_30_07 + 500);
  EXPECT_EQ(parse_rfc3339("2026-11-30T07:00:00.123456789Z"), t_2026_11_30_07 + 123);
  EXPECT_EQ(parse_rfc3339("1970-01-01T00:00:00Z"), 0);
  EXPECT_EQ(parse_rfc3339("2024-02-29T12:00:00Z"), 1'709'208'000'000) << "leap day";
  EXPECT_EQ(parse_rfc3339("2027-01-01T00:59:59.999+01:00"), t_2027_01_01 - 1);
}

TEST(time, rfc3339_rejects_invalid_dates_and_garbage) {
  for (const char* s : {"2026-02-30T00:00:00Z", "2025-02-29T00:00:00Z", "2026-13-01T00:00:00Z",
                        "2026-00-10T00:00:00Z", "2026-01-00T00:00:00Z", "2026-01-01T24:00:00Z",
                        "2026-01-01T00:60:00Z", "2026-01-01T00:00:60Z", "2026-01-01T00:00:00",
                        "2026-01-01 00:00:00Z", "2026-01-01T00:00:00.Z", "2026-01-01T00:00Z",
                        "2026-01-01T00:00:00+1:00", "2026-01-01T00:00:00+24:00",
                        "2026-01-01T00:00:00Zjunk", " 2026-01-01T00:00:00Z", "26-01-01T00:00:00Z",
                        "garbage", ""}) {
    EXPECT_FALSE(parse_rfc3339(s).has_value()) << "'" << s << "'";
  }
}

TEST(time, rfc3339_formats_utc_with_milliseconds_only_when_set) {
  EXPECT_EQ(format_rfc3339(0), "1970-01-01T00:00:00Z");
  EXPECT_EQ(format_rfc3339(t_2026_11_30_07), "2026-11-30T07:00:00Z");
  EXPECT_EQ(format_rfc3339(t_2026_11_30_07 + 250), "2026-11-30T07:00:00.250Z");
  EXPECT_EQ(format_rfc3339(t_2026_11_30_07 + 7), "2026-11-30T07:00:00.007Z");
  EXPECT_EQ(format_rfc3339(-1), "1969-12-31T23:59:59.999Z") << "before the epoch";
  EXPECT_EQ(parse_rfc3339("1969-12-31T23:59:59.999Z"), -1);
}

RC_GTEST_PROP(time, rfc3339_format_then_parse_is_identity, ()) {
  // 1970 .. 9999, the years RFC 3339 can write with four digits.
  const auto t = *rc::gen::inRange<unix_ms>(0, 253'402'300'800'000);
  RC_ASSERT(parse_rfc3339(format_rfc3339(t)) == std::optional<unix_ms>(t));
}

TEST(time, durations_parse_go_style_groups) {
  EXPECT_EQ(parse_duration("1h30m"), 5'400'000);
  EXPECT_EQ(parse_duration("500ms"), 500);
  EXPECT_EQ(parse_duration("10s"), 10'000);
  EXPECT_EQ(parse_duration("1m1ms"), 60'001);
  EXPECT_EQ(parse_duration("2h3m4s5ms"), 7'384'005);
  EXPECT_EQ(parse_duration("90m"), 5'400'000);
  EXPECT_EQ(parse_duration("0"), 0);
  EXPECT_EQ(parse_duration("0s"), 0);
}

TEST(time, durations_reject_garbage_and_overflow) {
  for (const char* s : {"", "10x", "-1s", "1.5s", "1h30", "h", "ms", " 1s", "1s ", "1 s", "1H",
                        "1d", "0x10s", "9223372036854775808ms", "2562047788016h",
                        "99999999999999999999s", "2562047788015h2562047788015h"}) {
    EXPECT_FALSE(parse_duration(s).has_value()) << "'" << s << "'";
  }
}

TEST(time, durations_format_the_way_they_parse) {
  EXPECT_EQ(format_duration(5'400'000), "1h30m");
  EXPECT_EQ(format_duration(500), "500ms");
  EXPECT_EQ(format_duration(0), "0s");
  EXPECT_EQ(format_duration(3'723'004), "1h2m3s4ms");
  EXPECT_EQ(format_duration(48 * 3'600'000LL), "48h");
  constexpr auto max = std::numeric_limits<duration_ms>::max();
  EXPECT_EQ(parse_duration(format_duration(max)), max) << format_duration(max);
}

RC_GTEST_PROP(time, duration_format_then_parse_is_identity, ()) {
  const auto d = *rc::gen::inRange<duration_ms>(0, std::numeric_limits<duration_ms>::max());
  RC_ASSERT(parse_duration(format_duration(d)) == std::optional<duration_ms>(d));
}

}  // namespace
}  // namespace aisched::proto
