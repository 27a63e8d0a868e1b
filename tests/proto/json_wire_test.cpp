// proto/json_wire: the external-worker protocol's bodies (execute, cancel, the
// report a worker sends back), the webhook alert, the gateway's own error
// bodies and the AI agent's stored records. Each shape is pinned byte for byte
// (workers, webhooks and stored records depend on it), survives ids and text
// holding quotes, backslashes and non-ASCII, and the report parser refuses
// what it must, naming the field.
#include <gtest/gtest.h>

#include <string>

#include <boost/json.hpp>

#include "proto/errors.hpp"
#include "proto/json.hpp"
#include "proto/json_wire.hpp"

namespace aisched::proto {
namespace {

namespace json = boost::json;

/// Text that breaks naive JSON: a quote, a backslash, a newline, a control
/// character, two- and four-byte UTF-8 (é, 😀).
const std::string hostile = "a\"b\\c\nd\x01 \xC3\xA9 \xF0\x9F\x98\x80";

std::string text(const json::value& v) { return json::serialize(v); }

// -- the external-worker protocol ---------------------------------------------

execute_request sample_request() {
  execute_request r;
  r.instance_id = "7-1796022000000-0";
  r.task_id = 7;
  r.kind = task_kind::http;
  r.command = "echo $AISCHED_EVENT_X";
  r.http.method = "POST";
  r.http.url = "http://svc/hook";
  r.http.headers = {{"Authorization", "Bearer s3cret"}};
  r.http.body = "{}";
  r.image = "alpine:3";
  r.attempt = 2;
  r.shard = 1;
  r.shards = 3;
  r.idempotency_key = "k-1";
  r.trace_id = "4bf92f3577b34da6a3ce929d0e0e4736";
  r.timeout = 30'000;
  r.memory_mb = 256;  // not part of the external protocol
  r.env = {{"AISCHED_EVENT_X", "1"}};
  r.tenant = "acme";  // nor is this
  r.secret_env = {{"DB_PASSWORD", "s3cret"}};
  r.redact = {"s3cret"};
  return r;
}

TEST(json_wire, execute_body_is_the_documented_document) {
  EXPECT_EQ(text(execute_to_json(sample_request(), "http://gw/api/v1/instances/i/report")),
            R"({"instance_id":"7-1796022000000-0","task_id":7,"kind":"http",)"
            R"("command":"echo $AISCHED_EVENT_X","http":{"method":"POST","url":"http://svc/hook",)"
            R"("headers":{"Authorization":"Bearer s3cret"},"body":"{}"},"image":"alpine:3",)"
            R"("attempt":2,"shard":1,"shards":3,"idempotency_key":"k-1",)"
            R"("trace_id":"4bf92f3577b34da6a3ce929d0e0e4736","timeout":"30s",)"
            R"("env":{"AISCHED_EVENT_X":"1"},"secrets":{"DB_PASSWORD":"s3cret"},)"
            R"("redact":["s3cret"],"report_url":"http://gw/api/v1/instances/i/report"})");
}

TEST(json_wire, execute_body_carries_hostile_text_intact) {
  auto r = sample_request();
  r.instance_id = hostile;
  r.command = hostile;
  r.env = {{"AISCHED_EVENT_X", hostile}};
  r.redact = {hostile};
  auto v = json::parse(text(execute_to_json(r, hostile)));
  EXPECT_EQ(v.at("instance_id").as_string(), hostile);
  EXPECT_EQ(v.at("command").as_string(), hostile);
  EXPECT_EQ(v.at("env").at("AISCHED_EVENT_X").as_string(), hostile);
  EXPECT_EQ(v.at("redact").at(0).as_string(), hostile);
  EXPECT_EQ(v.at("report_url").as_string(), hostile);
}

TEST(json_wire, cancel_body_names_the_instance) {
  EXPECT_EQ(text(cancel_to_json("7-1796022000000-0")), R"({"instance_id":"7-1796022000000-0"})");
  // An id with a quote once ended the string early and made the body invalid.
  auto body = text(cancel_to_json(hostile));
  EXPECT_EQ(json::parse(body).at("instance_id").as_string(), hostile) << body;
  EXPECT_EQ(json::parse(body).as_object().size(), 1u);
}

// -- the report a worker sends ------------------------------------------------

caf::expected<run_result> report(const std::string& body) {
  run_result base;
  base.instance_id = "i-1";
  return run_result_from_json(json::parse(body), base);
}

void expect_refused(const std::string& body, const std::string& field, const std::string& message) {
  auto r = report(body);
  ASSERT_FALSE(r) << body;
  auto e = view(r.error());
  EXPECT_EQ(e.code, errc::invalid_argument) << body;
  EXPECT_EQ(e.field, field) << body;
  EXPECT_EQ(e.message, message) << body;
}

TEST(json_wire, a_report_reads_every_field) {
  auto r = report(R"({"worker_id":"w-1","state":"failed","attempt":3,"exit_code":-2,)"
                  R"("output":"out","error":"boom","started_at":"2026-11-30T07:00:00Z",)"
                  R"("finished_at":null})");
  ASSERT_TRUE(r) << view(r.error()).message;
  EXPECT_EQ(r->instance_id, "i-1");  // from the base: the path names the run
  EXPECT_EQ(r->worker_id, "w-1");
  EXPECT_EQ(r->state, instance_state::failed);
  EXPECT_EQ(r->attempt, 3u);
  EXPECT_EQ(r->exit_code, -2);
  EXPECT_EQ(r->output, "out");
  EXPECT_EQ(r->error, "boom");
  EXPECT_EQ(r->started_at, 1'796'022'000'000);
  EXPECT_EQ(r->finished_at, 0);
}

TEST(json_wire, a_report_keeps_hostile_text_and_cuts_long_output) {
  json::object o{{"worker_id", hostile},
                 {"state", "success"},
                 {"attempt", 1},
                 {"output", hostile},
                 {"error", hostile}};
  auto r = report(text(o));
  ASSERT_TRUE(r);
  EXPECT_EQ(r->worker_id, hostile);
  EXPECT_EQ(r->output, hostile);
  EXPECT_EQ(r->error, hostile);
  o["output"] = std::string(100'000, 'x');
  r = report(text(o));
  ASSERT_TRUE(r);
  EXPECT_EQ(r->output.size(), 64u * 1024);
}

TEST(json_wire, a_report_accepts_each_reportable_state) {
  for (auto s : {"running", "success", "failed", "timed_out"}) {
    auto r = report(R"({"worker_id":"w","attempt":1,"state":")" + std::string(s) + "\"}");
    ASSERT_TRUE(r) << s;
    EXPECT_EQ(name_of(r->state), s);
  }
}

TEST(json_wire, a_report_refuses_what_it_cannot_mean) {
  expect_refused("[1]", "body", "expected an object");
  expect_refused(R"({"worker_id":"w","state":"success","attempt":1,"extra":1})", "extra",
                 "extra: unknown field");
  expect_refused(R"({"worker_id":7})", "worker_id", "worker_id: wrong type");
  expect_refused(R"({"attempt":"1"})", "attempt", "attempt: wrong type");
  expect_refused(R"({"attempt":1000000})", "attempt", "attempt: wrong type");
  expect_refused(R"({"attempt":-1})", "attempt", "attempt: wrong type");
  expect_refused(R"({"exit_code":1.5})", "exit_code", "exit_code: wrong type");
  expect_refused(R"({"output":null})", "output", "output: wrong type");
  expect_refused(R"({"state":"pending"})", "state",
                 "state: one of running, success, failed, timed_out");
  expect_refused(R"({"state":"done"})", "state",
                 "state: one of running, success, failed, timed_out");
  expect_refused(R"({"started_at":"yesterday"})", "started_at", "started_at: an RFC 3339 time");
  // The first offending field is named, in the document's order.
  expect_refused(R"({"zz":1,"worker_id":7})", "zz", "zz: unknown field");
}

TEST(json_wire, a_report_needs_state_worker_and_attempt) {
  expect_refused(R"({"worker_id":"w","attempt":1})", "state", "state: required");
  expect_refused(R"({"state":"success","attempt":1})", "worker_id", "worker_id: required");
  expect_refused(R"({"state":"success","worker_id":"w"})", "attempt", "attempt: required");
  expect_refused("{}", "state", "state: required");
}

// -- alerts -------------------------------------------------------------------

TEST(json_wire, an_alert_is_the_documented_document) {
  instance x;
  x.id = "7-1796022000000-0";
  x.task_id = 7;
  x.state = instance_state::timed_out;
  x.attempt = 3;
  x.exit_code = 137;
  x.error = "deadline passed";
  x.trace_id = "4bf92f3577b34da6a3ce929d0e0e4736";
  x.finished_at = 1'796'022'000'000;
  EXPECT_EQ(text(alert_to_json(x, "db-backup", "n1")),
            R"({"type":"run_failed","task_id":7,"task_name":"db-backup",)"
            R"("instance_id":"7-1796022000000-0","state":"timed_out","attempt":3,)"
            R"("exit_code":137,"error":"deadline passed",)"
            R"("trace_id":"4bf92f3577b34da6a3ce929d0e0e4736",)"
            R"("finished_at":"2026-11-30T07:00:00Z","node":"n1"})");
  x.id = x.error = hostile;
  auto v = json::parse(text(alert_to_json(x, hostile, hostile)));
  EXPECT_EQ(v.at("instance_id").as_string(), hostile);
  EXPECT_EQ(v.at("error").as_string(), hostile);
  EXPECT_EQ(v.at("task_name").as_string(), hostile);
  EXPECT_EQ(v.at("node").as_string(), hostile);
}

// -- error bodies -------------------------------------------------------------

TEST(json_wire, an_error_body_with_an_own_code_has_the_shape_of_every_error) {
  EXPECT_EQ(text(error_to_json("method_not_allowed", "method not allowed", "")),
            R"({"error":{"code":"method_not_allowed","message":"method not allowed","field":""}})");
  auto err = make_error(errc::not_found, "id", "no task 'x'");
  EXPECT_EQ(text(error_to_json(err)), text(error_to_json("not_found", "no task 'x'", "id")));
  // Invalid UTF-8 is replaced, as error_to_json(caf::error) does.
  auto v = json::parse(text(error_to_json("too_many_requests", "bad \xFF", "\xC3")));
  EXPECT_EQ(v.at("error").at("message").as_string(), "bad \xEF\xBF\xBD");
  EXPECT_EQ(v.at("error").at("field").as_string(), "\xEF\xBF\xBD");
}

// -- the AI agent's records ---------------------------------------------------

conversation sample_conversation() {
  return {"c-0123456789abcdef", "acme", "alice", "how many runs failed?", 1'796'022'000'000,
          1'796'022'060'000,    12};
}

chat_message sample_message() {
  return {"assistant", "let me look", {{"call-1", "list_runs", R"({"state":"failed"})"}}, "", ""};
}

void expect_same(const chat_message& a, const chat_message& b) {
  EXPECT_EQ(a.role, b.role);
  EXPECT_EQ(a.content, b.content);
  EXPECT_EQ(a.tool_call_id, b.tool_call_id);
  EXPECT_EQ(a.name, b.name);
  ASSERT_EQ(a.tool_calls.size(), b.tool_calls.size());
  for (size_t i = 0; i < a.tool_calls.size(); ++i) {
    EXPECT_EQ(a.tool_calls[i].id, b.tool_calls[i].id);
    EXPECT_EQ(a.tool_calls[i].name, b.tool_calls[i].name);
    EXPECT_EQ(a.tool_calls[i].arguments, b.tool_calls[i].arguments);
  }
}

void expect_same(const conversation& a, const conversation& b) {
  EXPECT_EQ(a.id, b.id);
  EXPECT_EQ(a.tenant, b.tenant);
  EXPECT_EQ(a.subject, b.subject);
  EXPECT_EQ(a.title, b.title);
  EXPECT_EQ(a.created_at, b.created_at);
  EXPECT_EQ(a.updated_at, b.updated_at);
  EXPECT_EQ(a.messages, b.messages);
}

/// The records as they have been stored so far: they must keep reading.
const std::string stored_conversation =
    R"({"id":"c-0123456789abcdef","tenant":"acme","subject":"alice",)"
    R"("title":"how many runs failed?","created_at":1796022000000,)"
    R"("updated_at":1796022060000,"messages":12})";
const std::string stored_message_text =
    R"({"role":"assistant","content":"let me look","tool_calls":[{"id":"call-1",)"
    R"("name":"list_runs","arguments":"{\"state\":\"failed\"}"}],"at":1796022000000})";
const std::string stored_tool_result =
    R"({"role":"tool","content":"[]","tool_call_id":"call-1","name":"list_runs",)"
    R"("at":1796022000001})";

TEST(json_wire, records_keep_their_stored_format) {
  EXPECT_EQ(text(conversation_record(sample_conversation())), stored_conversation);
  EXPECT_EQ(text(message_record(sample_message(), 1'796'022'000'000)), stored_message_text);
  chat_message result{"tool", "[]", {}, "call-1", "list_runs"};
  EXPECT_EQ(text(message_record(result, 1'796'022'000'001)), stored_tool_result);
  EXPECT_EQ(text(pending_action_record({"a-1", "delete_task", R"({"id":3})", "delete task 3"})),
            R"({"action_id":"a-1","name":"delete_task","arguments":"{\"id\":3}",)"
            R"("summary":"delete task 3"})");
}

TEST(json_wire, stored_records_read_back) {
  auto c = conversation_from_record(json::parse(stored_conversation));
  ASSERT_TRUE(c);
  expect_same(*c, sample_conversation());
  auto m = message_from_record(json::parse(stored_message_text));
  ASSERT_TRUE(m);
  EXPECT_EQ(m->at, 1'796'022'000'000);
  EXPECT_EQ(m->seq, 0u);  // the key's, not the record's
  expect_same(m->msg, sample_message());
  auto t = message_from_record(json::parse(stored_tool_result));
  ASSERT_TRUE(t);
  expect_same(t->msg, chat_message{"tool", "[]", {}, "call-1", "list_runs"});
}

TEST(json_wire, records_round_trip_hostile_text) {
  conversation c{hostile, hostile, hostile, hostile, 1, 2, 3};
  auto back = conversation_from_record(json::parse(text(conversation_record(c))));
  ASSERT_TRUE(back);
  expect_same(*back, c);
  chat_message m{"assistant", hostile, {{hostile, hostile, hostile}}, hostile, hostile};
  auto mb = message_from_record(json::parse(text(message_record(m, 5))));
  ASSERT_TRUE(mb);
  EXPECT_EQ(mb->at, 5);
  expect_same(mb->msg, m);
  pending_action a{hostile, hostile, hostile, hostile};
  auto ab = pending_action_from_record(json::parse(text(pending_action_record(a))));
  ASSERT_TRUE(ab);
  EXPECT_EQ(ab->action_id, hostile);
  EXPECT_EQ(ab->name, hostile);
  EXPECT_EQ(ab->arguments, hostile);
  EXPECT_EQ(ab->summary, hostile);
}

TEST(json_wire, records_read_leniently) {
  // Absent or ill-typed members read as empty: a record from an older build
  // (or a field lost) still lists.
  auto c = conversation_from_record(
      json::parse(R"({"id":"c-1","tenant":7,"created_at":0.5,"messages":18446744073709551615})"));
  ASSERT_TRUE(c);
  EXPECT_EQ(c->id, "c-1");
  EXPECT_EQ(c->tenant, "");
  EXPECT_EQ(c->created_at, 0);
  EXPECT_EQ(c->messages, 0u);
  c = conversation_from_record(json::parse(R"({"updated_at":1796022000000})"));
  ASSERT_TRUE(c);
  EXPECT_EQ(c->updated_at, 1'796'022'000'000);
  auto m = message_from_record(json::parse(R"({"role":"user","tool_calls":[1,{"id":"x"}]})"));
  ASSERT_TRUE(m);
  EXPECT_EQ(m->msg.role, "user");
  ASSERT_EQ(m->msg.tool_calls.size(), 1u);
  EXPECT_EQ(m->msg.tool_calls[0].id, "x");
  EXPECT_EQ(m->at, 0);
}

TEST(json_wire, a_record_that_is_not_an_object_is_corrupted) {
  for (auto raw : {"[]", "\"c\"", "1", "null"}) {
    auto v = json::parse(raw);
    auto c = conversation_from_record(v);
    ASSERT_FALSE(c) << raw;
    EXPECT_EQ(view(c.error()).code, errc::corrupted);
    EXPECT_EQ(view(c.error()).message, "unreadable conversation record");
    EXPECT_FALSE(message_from_record(v)) << raw;
    EXPECT_FALSE(pending_action_from_record(v)) << raw;
  }
}

TEST(json_wire, the_api_views_show_times_as_rfc3339) {
  EXPECT_EQ(text(to_json(sample_conversation())),
            R"({"id":"c-0123456789abcdef","tenant":"acme","subject":"alice",)"
            R"("title":"how many runs failed?","created_at":"2026-11-30T07:00:00Z",)"
            R"("updated_at":"2026-11-30T07:01:00Z","messages":12})");
  stored_message m{4, 1'796'022'000'000, sample_message()};
  EXPECT_EQ(text(to_json(m)),
            R"({"role":"assistant","content":"let me look","tool_calls":[{"id":"call-1",)"
            R"("name":"list_runs","arguments":"{\"state\":\"failed\"}"}],"seq":4,)"
            R"("at":"2026-11-30T07:00:00Z"})");
}

}  // namespace
}  // namespace aisched::proto
