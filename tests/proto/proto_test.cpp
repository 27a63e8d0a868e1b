// Tests for the proto vocabulary: every type round-trips through the binary codec
// (proto/codec.hpp) and damaged bytes are `corrupted`; the task JSON mapping is
// faithful, strict and merges over a base (proto/json.hpp); error bodies have the
// REST shape. Validation and time forms: proto_validate_test.
#include <set>

#include "proto/proto_fixture.hpp"

namespace aisched::proto {
namespace {

using namespace testing_support;

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

template <class... Ts>
constexpr size_t count_of(command_list<Ts...>) {
  return sizeof...(Ts);
}

TEST(codec, every_command_round_trips_under_its_own_type_number) {
  const auto cmds = every_command();
  ASSERT_EQ(cmds.size(), count_of(all_commands{}))
      << "one sample per command of proto::all_commands (tests/proto/proto_fixture.hpp)";
  std::set<command_type> seen;
  for (const auto& cmd : cmds) {
    SCOPED_TRACE(command_name(cmd));
    EXPECT_NE(traits_of(cmd.type), nullptr);
    EXPECT_TRUE(seen.insert(cmd.type).second) << "two samples of type " << cmd.type;
    auto back = round_trip(cmd);
    ASSERT_TRUE(back) << view(back.error()).message;
    expect_same_command(*back, cmd);
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
  a.waiting_for = {3, 5};
  set_optional_fields(a, 0);
  auto back = round_trip(a);
  ASSERT_TRUE(back);
  EXPECT_EQ(back->index, a.index);
  EXPECT_EQ(back->tasks, a.tasks);
  EXPECT_EQ(back->instances, a.instances);
  EXPECT_EQ(back->waiting_for, a.waiting_for);
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

TEST(codec, truncated_bytes_are_corrupted_unless_cut_where_a_field_ends) {
  const auto bytes = encode(full_task());
  ASSERT_GT(bytes.size(), 10u);
  // Where each field ends.
  std::set<size_t> ends;
  for (const char *p = bytes.data(), *e = p + bytes.size(); p != e;) {
    wire::raw_field f;
    ASSERT_TRUE(wire::next_field(p, e, f));
    ends.insert(static_cast<size_t>(p - bytes.data()));
  }
  for (size_t cut = 0; cut < bytes.size(); ++cut) {
    SCOPED_TRACE("kept " + std::to_string(cut) + " of " + std::to_string(bytes.size()));
    auto back = decode<task>(std::string_view(bytes).substr(0, cut));
    if (ends.count(cut) == 0) {  // nothing at all, or in the middle of a field
      ASSERT_FALSE(back);
      EXPECT_EQ(code_of(back.error()), errc::corrupted);
    } else {  // the fields before the cut, as a record written before the others existed
      ASSERT_TRUE(back);
      EXPECT_EQ(encode(*back).substr(0, cut), bytes.substr(0, cut));
    }
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

TEST(codec, an_unknown_or_damaged_command_is_corrupted_when_applied) {
  // Entries are opaque: the log reads any type number back, and only reading
  // the command (the state machine's visit_command) judges it.
  auto ok = [](const auto&) -> caf::expected<bool> { return true; };
  for (command_type type : {command_type{30}, command_type{200}, command_type{65535}}) {
    SCOPED_TRACE("type " + std::to_string(type));
    auto back = decode<log_entry>(encode(log_entry{1, 1, command{type, ""}}));
    ASSERT_TRUE(back);
    EXPECT_EQ(back->cmd.type, type);
    EXPECT_STREQ(command_name(back->cmd), "unknown");
    auto r = visit_command(back->cmd, ok);
    ASSERT_FALSE(r);
    EXPECT_EQ(code_of(r.error()), errc::corrupted);
  }
  command cancel_cmd = cancel{"acme", "42-1-0", 5, "why"};
  auto damaged = cancel_cmd;
  damaged.data += "x";  // trailing bytes
  EXPECT_FALSE(visit_command(damaged, ok));
  EXPECT_FALSE(command_as<cancel>(damaged).has_value());
  damaged = cancel_cmd;
  damaged.data.pop_back();  // truncated
  EXPECT_FALSE(visit_command(damaged, ok));
  damaged = cancel_cmd;
  damaged.type = delete_task::traits.id;  // another command's type number
  EXPECT_FALSE(visit_command(damaged, ok));
  EXPECT_FALSE(command_as<cancel>(damaged).has_value());
  EXPECT_TRUE(visit_command(cancel_cmd, ok));
}

// A run's instance and report, the records every run writes, in the wire
// format (proto/wire.hpp): any bytes, damaged or not, read as a valid value
// or as `corrupted`, never as something that does not write back the same.

run_result full_report() {
  run_result r;
  r.instance_id = "42-1796022000000-3";
  r.worker_id = "w-1";
  r.attempt = 2;
  r.state = instance_state::failed;
  r.exit_code = -9;
  r.error = "killed";
  r.output = std::string("out\0put", 7);
  r.started_at = t_2026_11_30_07 + 3;
  r.finished_at = t_2026_11_30_07 + 4;
  r.next_attempt_at = t_2026_11_30_07 + 5;
  return r;
}

bool same(const instance& a, const instance& b) { return a == b; }
bool same(const run_result& a, const run_result& b) { return fields(a) == fields(b); }

/// `bytes` read as a T: corrupted, or a value that writes back as bytes that
/// read as the same value.
template <class T>
void reads_safely(const std::string& bytes) {
  auto x = decode<T>(bytes);
  if (!x) {
    EXPECT_EQ(code_of(x.error()), errc::corrupted);
    return;
  }
  auto again = decode<T>(encode(*x));
  ASSERT_TRUE(again);
  EXPECT_TRUE(same(*again, *x));
}

/// Every cut and every byte of `good` set to a few values reads safely.
template <class T>
void damaged_reads_safely(const std::string& good) {
  for (size_t cut = 0; cut <= good.size(); ++cut) {
    SCOPED_TRACE("kept " + std::to_string(cut));
    reads_safely<T>(good.substr(0, cut));
  }
  for (size_t i = 0; i < good.size(); ++i)
    for (int v : {0x00, 0x01, 0x7f, 0x80, 0xff}) {
      SCOPED_TRACE("byte " + std::to_string(i) + " = " + std::to_string(v));
      auto bad = good;
      bad[i] = static_cast<char>(v);
      reads_safely<T>(bad);
    }
}

TEST(codec, instance_and_report_read_back_as_themselves) {
  auto with_long = full_instance();
  with_long.output = std::string(200, 'o');            // a two-byte length
  with_long.event_payload = std::string(20'000, 'p');  // a three-byte length
  auto empty = instance{};
  empty.tenant.clear();
  for (const auto& x : {full_instance(), with_long, instance{}, empty}) {
    auto back = decode<instance>(encode(x));
    ASSERT_TRUE(back);
    EXPECT_EQ(*back, x);
  }
  auto long_report = full_report();
  long_report.output = std::string(70'000, 'o');
  for (const auto& r : {full_report(), long_report, run_result{}}) {
    auto back = decode<run_result>(encode(r));
    ASSERT_TRUE(back);
    EXPECT_TRUE(same(*back, r));
  }
}

TEST(codec, instance_and_report_read_damaged_bytes_safely) {
  damaged_reads_safely<instance>(encode(full_instance()));
  damaged_reads_safely<run_result>(encode(full_report()));
}

/// `bytes` with field `number` set again to the varint `value` (the last wins).
std::string with_varint(std::string bytes, uint32_t number, uint64_t value) {
  wire::put_tag(bytes, number, wire::varint);
  wire::put_varint(bytes, value);
  return bytes;
}

TEST(codec, a_report_with_a_state_outside_its_enum_is_corrupted) {
  auto bytes = with_varint(encode(full_report()), 4, 42);  // field 4: state
  auto back = decode<run_result>(bytes);
  if (back) FAIL() << "decoded state " << static_cast<int>(back->state);
  EXPECT_EQ(code_of(back.error()), errc::corrupted);
}

TEST(codec, enum_value_outside_its_enum_is_corrupted) {
  auto bytes = with_varint(
      encode(task_runtime{42, t_2026_11_30_07, "42-1-0", instance_state::running}), 4, 42);
  auto back = decode<task_runtime>(bytes);  // field 4: last_state
  if (back) FAIL() << "decoded state " << static_cast<int>(back->last_state);
  EXPECT_EQ(code_of(back.error()), errc::corrupted);
}

TEST(codec, an_infinite_number_is_corrupted) {
  // 1.5 is 0x3FF8000000000000, little-endian in the wire format; patched to
  // +inf (0x7FF0...), it must not decode: a stored infinity would fail every
  // member that writes the record again.
  task t;
  t.retry.multiplier = 1.5;
  for (bool in_command : {false, true}) {
    auto bytes = in_command ? encode(command{create_task{t, ""}}) : encode(t);
    const std::string one_and_a_half("\0\0\0\0\0\0\xF8\x3F", 8);
    auto at = bytes.find(one_and_a_half);
    ASSERT_NE(at, std::string::npos);
    bytes.replace(at, 8, std::string("\0\0\0\0\0\0\xF0\x7F", 8));
    if (in_command) {
      // Raft entries are opaque: the command's bytes are judged when read as
      // their struct, as the state machine reads them.
      auto cmd = decode<command>(bytes);
      ASSERT_TRUE(cmd);
      EXPECT_FALSE(command_as<create_task>(*cmd).has_value());
      auto back = visit_command(*cmd, [](const auto&) -> caf::expected<bool> { return true; });
      ASSERT_FALSE(back);
      EXPECT_EQ(code_of(back.error()), errc::corrupted);
    } else {
      auto back = decode<task>(bytes);
      ASSERT_FALSE(back) << back->retry.multiplier;
      EXPECT_EQ(code_of(back.error()), errc::corrupted);
    }
  }
}

TEST(codec_death, encoding_an_infinite_number_aborts_instead_of_hanging) {
  task t;
  t.retry.multiplier = std::numeric_limits<double>::infinity();
  EXPECT_DEATH(encode(t), "");
}

TEST(hex, round_trips_any_bytes_and_refuses_what_is_not_hex) {
  const std::string bytes("\x00\x01\x7f\x80\xfe\xff", 6);
  EXPECT_EQ(to_hex(bytes), "00017f80feff");
  EXPECT_EQ(from_hex("00017F80FEff"), std::optional<std::string>(bytes));
  EXPECT_EQ(from_hex(""), std::optional<std::string>(""));
  EXPECT_FALSE(from_hex("abc"));  // odd length
  EXPECT_FALSE(from_hex("0g"));
  EXPECT_EQ(hex_digit('F'), 15);
  EXPECT_EQ(hex_digit('/'), -1);
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

TEST(commands, every_leader_decided_command_carries_its_term_for_fencing) {
  // The leader-decided commands of every_command() carry terms 3..6; client
  // commands carry none. A new command with a `term` is fenced without a list
  // to update (proto/commands.cpp detects the member).
  std::map<std::string, uint64_t> want{{"fire", 3},       {"dispatch", 3},    {"report_results", 4},
                                       {"retry", 5},      {"record_load", 3}, {"note_waiting", 6},
                                       {"prune_runs", 7}, {"fire_placed", 8}, {"prune_history", 9}};
  for (const auto& cmd : every_command()) {
    SCOPED_TRACE(command_name(cmd));
    auto i = want.find(command_name(cmd));
    EXPECT_EQ(fenced_by_leader(cmd), i != want.end());
    auto term = visit_command(cmd, [](const auto& c) -> caf::expected<uint64_t> {
      if constexpr (std::decay_t<decltype(c)>::traits.fence == fencing::leader_term) return c.term;
      else return uint64_t{0};
    });
    ASSERT_TRUE(term);
    EXPECT_EQ(*term, i == want.end() ? 0u : i->second);
  }
}

}  // namespace
}  // namespace aisched::proto
