// The example values of the golden encodings; see golden_examples.hpp. Enums
// are never at their first value, optional fields are set, vectors hold two
// elements and maps two entries, so that every part of a layout shows in the
// bytes.
#include "compat/golden_examples.hpp"

namespace aisched::compat {

using namespace proto;

namespace {

constexpr unix_ms day = 86'400'000;

const std::string run_id = "42-1796022000000-3";  // task 42, slot t0, shard 3

fire_slot slot_a() {
  fire_slot s;
  s.task_id = 42;
  s.slot = t0;
  s.trace_id = "4bf92f3577b34da6a3ce929d0e0e4736";
  s.event_name = "deploy";
  s.event_payload = R"({"env":"prod","build":731})";
  s.fanout = 3;
  s.scheduled = true;
  s.payloads = {R"({"n":1})", R"({"n":2})"};
  return s;
}

fire_slot slot_b() {
  fire_slot s;
  s.task_id = 43;
  s.slot = t0 + 60'000;
  s.trace_id = "00f067aa0ba902b7";
  s.event_name = "release";
  s.event_payload = R"({"tag":"v2"})";
  s.fanout = 5;
  s.scheduled = true;
  s.payloads = {"alpha", "beta"};
  return s;
}

run_result second_report() {
  run_result r;
  r.instance_id = "43-1796022060000-0";
  r.worker_id = "w-eu-2";
  r.attempt = 4;
  r.state = instance_state::retry_waiting;
  r.exit_code = 75;
  r.error = "temporary failure";
  r.output = "retrying\n";
  r.started_at = t0 + 61'000;
  r.finished_at = t0 + 62'000;
  r.next_attempt_at = t0 + 120'000;
  return r;
}

member_info member(std::string id, bool voter, std::string cluster, std::string http) {
  member_info m;
  m.id = std::move(id);
  m.voter = voter;
  m.cluster_addr = std::move(cluster);
  m.http_addr = std::move(http);
  return m;
}

load_sample second_sample() {
  load_sample s;
  s.worker_id = "w-eu-2";
  s.at = t0 + 15'000;
  s.load = 9;
  s.max_load = 12;
  s.cpu_percent = 88;
  s.memory_percent = 41;
  return s;
}

audit_entry second_audit_entry() {
  audit_entry e;
  e.at = t0 + 3'000;
  e.subject = "token:tok_9f2c";
  e.tenant = "acme";
  e.action = "cluster.member.add";
  e.target = "node-d";
  e.result = "forbidden";
  e.via = "";
  e.node = "node-b";
  return e;
}

data_key second_data_key() {
  data_key k;
  k.tenant = "globex";
  k.id = "dk-77aa";
  k.kek_check = "c0ffee00";
  k.wrapped = std::string("\x10\x20\x00\x30wrapped", 11);
  return k;
}

}  // namespace

// -- records ------------------------------------------------------------------

task example_task() {
  task t;
  t.id = 42;
  t.tenant = "acme";
  t.name = "nightly-db-backup";
  t.kind = task_kind::http;
  t.command = "pg_dump --format=custom shop";
  t.http.method = "POST";
  t.http.url = "https://hooks.example.com/backup?db=shop";
  t.http.headers = {{"Authorization", "Bearer {{secret.HOOK_TOKEN}}"},
                    {"Content-Type", "application/json"}};
  t.http.body = R"({"db":"shop","full":true})";
  t.image = "postgres:16-alpine";
  t.schedule = "0 3 * * 1-5";
  t.at = t0 + 250;
  t.event = "deploy.finished";
  t.timezone = "Europe/Berlin";
  t.labels = {{"gpu", "a100"}, {"zone", "eu-west"}};
  t.route = route_strategy::consistent_hash;
  t.shards = 7;
  t.retry.kind = retry_kind::on_error_codes;
  t.retry.max_attempts = 5;
  t.retry.interval = 2'500;
  t.retry.initial = 1'500;
  t.retry.max = 90'000;
  t.retry.multiplier = 3.5;
  t.retry.jitter = true;
  t.retry.error_codes = {75, -2};
  t.retry.window = 3'600'000;
  t.timeout = 600'000;
  t.memory_mb = 2'048;
  t.overlap = overlap_policy::buffer_one;
  t.start_at = t0 - 30 * day;
  t.end_at = t0 + 365 * day;
  t.jitter = 1'234;
  t.catchup_window = 7'200'000;
  t.misfire = misfire_policy::fire_all;
  t.misfire_limit = 3;
  t.depends_on = {7, 9};
  t.secrets = {{"DB_PASSWORD", "db_password"}, {"HOOK_TOKEN", "hook.token"}};
  t.max_runs = 300;
  t.max_concurrency = 2;
  t.pool = "db-heavy";
  t.exclude_calendar = "holidays";
  t.retention = {14 * day, 500};
  t.paused = true;
  t.created_at = t0 - 10 * day;
  t.updated_at = t0 - day;
  t.version = 12;
  return t;
}

task_runtime example_task_runtime() {
  task_runtime r;
  r.task_id = 42;
  r.last_slot = t0;
  r.last_instance_id = run_id;
  r.last_state = instance_state::failed;
  r.scheduled_fires = 17;
  r.runs = 230;
  return r;
}

instance example_instance() {
  instance x;
  x.id = run_id;
  x.tenant = "acme";
  x.task_id = 42;
  x.slot = t0;
  x.shard = 3;
  x.shards = 7;
  x.attempt = 2;
  x.state = instance_state::retry_waiting;
  x.worker_id = "w-eu-1";
  x.created_at = t0 + 1;
  x.dispatched_at = t0 + 2;
  x.started_at = t0 + 3;
  x.finished_at = t0 + 4;
  x.next_attempt_at = t0 + 5'000;
  x.deadline = t0 + 630'000;
  x.exit_code = -9;
  x.error = "killed by signal 9";
  x.output = std::string("line1\nline2\0binary", 18);
  x.trace_id = "4bf92f3577b34da6a3ce929d0e0e4736";
  x.idempotency_key = "idem-" + run_id;
  x.event_name = "deploy.finished";
  x.event_payload = R"({"env":"prod","build":731})";
  return x;
}

attempt_record example_attempt() {
  attempt_record r;
  r.attempt = 3;
  r.worker_id = "w-eu-1";
  r.state = instance_state::timed_out;
  r.dispatched_at = t0 + 10;
  r.started_at = t0 + 20;
  r.finished_at = t0 + 600'020;
  r.exit_code = 124;
  r.error = "no report before the deadline";
  r.output = "step 1/3\nstep 2/3\n";
  return r;
}

run_result example_run_result() {
  run_result r;
  r.instance_id = run_id;
  r.worker_id = "w-eu-1";
  r.attempt = 2;
  r.state = instance_state::failed;
  r.exit_code = 3;
  r.error = "exit status 3";
  r.output = "pg_dump: error: connection refused\n";
  r.started_at = t0 + 3;
  r.finished_at = t0 + 4'003;
  r.next_attempt_at = t0 + 9'003;
  return r;
}

user example_user() {
  user u;
  u.name = "alice";
  u.tenant = "acme";
  u.r = role::admin;
  u.password_hash = "$argon2id$v=19$m=65536,t=3,p=1$c2FsdHNhbHQ$aGFzaGhhc2hoYXNo";
  u.created_at = t0 - 5 * day;
  return u;
}

api_token example_token() {
  api_token t;
  t.id = "tok_3f9a1c";
  t.name = "ci deploys";
  t.tenant = "acme";
  t.r = role::operator_;
  t.hash = "9f86d081884c7d659a2feaa0c55ad015a3bf4f1b2b0b822cd15d6c15b0f00a08";
  t.created_by = "alice";
  t.created_at = t0 - 4 * day;
  return t;
}

audit_entry example_audit_entry() {
  audit_entry e;
  e.at = t0 + 2'000;
  e.subject = "alice";
  e.tenant = "acme";
  e.action = "task.update";
  e.target = "42";
  e.result = "ok";
  e.via = "ai-agent";
  e.node = "node-a";
  return e;
}

data_key example_data_key() {
  data_key k;
  k.tenant = "acme";
  k.id = "dk-41c2";
  k.kek_check = "5a5a0102";
  k.wrapped = std::string("\x01\x02\x00\xffsealed-data-key", 19);
  return k;
}

secret_record example_secret() {
  secret_record s;
  s.tenant = "acme";
  s.name = "db_password";
  s.key_id = "dk-41c2";
  s.sealed = std::string("\x00nonce+ciphertext\xfe", 18);
  s.version = 4;
  s.set_by = "token:tok_3f9a1c";
  s.set_at = t0 - day;
  s.created_at = t0 - 9 * day;
  return s;
}

pool example_pool() {
  pool p;
  p.tenant = "acme";
  p.name = "db-heavy";
  p.size = 3;
  p.updated_at = t0 - 2 * day;
  return p;
}

calendar example_calendar() {
  calendar c;
  c.tenant = "acme";
  c.name = "holidays";
  c.description = "Bank holidays and the year-end freeze";
  c.days = {{20'447, 20'447}, {20'812, 20'819}};  // 2025-12-25; 2026-12-25 to 2027-01-01
  c.updated_at = t0 - 3 * day;
  return c;
}

load_sample example_load_sample() {
  load_sample s;
  s.worker_id = "w-eu-1";
  s.at = t0 + 15'000;
  s.load = 5;
  s.max_load = 16;
  s.cpu_percent = 73;
  s.memory_percent = 58;
  return s;
}

membership example_membership() {
  return {member("node-a", true, "10.0.0.1:7400", "10.0.0.1:8080"),
          member("node-d", false, "10.0.0.4:7400", "10.0.0.4:8080")};
}

failure_analysis example_analysis() {
  failure_analysis a;
  a.instance_id = run_id;
  a.source = "llm";
  a.summary = "The database refused connections during the backup.";
  a.severity = "high";
  a.categories = {"network", "dependency"};
  a.root_cause = "postgres was restarting";
  a.fix = "retry after the maintenance window";
  a.confidence = 0.875;
  a.analyzed_at = t0 + 5'000;
  a.llm_error = "first answer lacked 'fix'";
  return a;
}

conversation example_conversation() {
  conversation c;
  c.id = "c-9f8e7d6c5b4a3921";
  c.tenant = "acme";
  c.subject = "alice";
  c.title = "Why did the nightly backup fail?";
  c.created_at = t0 + 100;
  c.updated_at = t0 + 9'100;
  c.messages = 6;
  return c;
}

chat_message example_chat_message() {
  chat_message m;
  m.role = "assistant";
  m.content = "Let me look at the last runs.";
  m.tool_calls = {{"call_1", "list_runs", R"({"task_id":42,"limit":5})"},
                  {"call_2", "get_analysis", R"({"instance_id":"42-1796022000000-3"})"}};
  m.tool_call_id = "call_0";
  m.name = "get_task";
  return m;
}

pending_action example_pending_action() {
  pending_action a;
  a.action_id = "act-5d1e";
  a.name = "delete_task";
  a.arguments = R"({"id":42,"cascade":true})";
  a.summary = "Delete task 42 and remove it from its dependents";
  return a;
}

// -- layouts written by hand in storage/ ----------------------------------------

storage::hard_state example_hard_state() {
  storage::hard_state hs;
  hs.term = 7;
  hs.voted_for = "node-b";
  hs.commit = 41;
  return hs;
}

storage::log_base example_log_base() { return storage::log_base{40, 6}; }

storage::idempotency_record example_idempotency_record() {
  return storage::idempotency_record{42, 0x0123'4567'89ab'cdefULL};
}

storage::state_machine::state_counts example_instance_counts() {
  return {11, 12, 13, 1'400, 15, 16, 17, 18};
}

std::vector<std::pair<std::string, run_result>> example_outbox_reports() {
  auto second = second_report();
  return {{run_id + "#2", example_run_result()}, {second.instance_id + "#4", second}};
}

// -- commands -----------------------------------------------------------------

std::vector<log_entry> example_log_entries() {
  std::vector<command> cmds;
  cmds.emplace_back(noop{});
  cmds.emplace_back(create_task{example_task(), "idem-7f3e"});
  cmds.emplace_back(update_task{example_task(), 11});
  cmds.emplace_back(delete_task{"acme", 42, 12, true});
  cmds.emplace_back(set_paused{"acme", 42, false, t0 + 5});
  cmds.emplace_back(fire{7, t0, {slot_a(), slot_b()}});
  cmds.emplace_back(dispatch{7, t0 + 10, {{run_id, "w-eu-1"}, {"43-1796022060000-0", "w-eu-2"}}});
  cmds.emplace_back(report_results{7, t0 + 20, {example_run_result(), second_report()}});
  cmds.emplace_back(retry{7, t0 + 30, {run_id, "43-1796022060000-0"}});
  cmds.emplace_back(cancel{"acme", run_id, t0 + 40, "operator asked"});
  cmds.emplace_back(put_user{example_user(), true});
  cmds.emplace_back(delete_user{"acme", "bob"});
  cmds.emplace_back(put_token{example_token()});
  cmds.emplace_back(delete_token{"acme", "tok_0b1d"});
  cmds.emplace_back(record_audit{{example_audit_entry(), second_audit_entry()}});
  cmds.emplace_back(
      record_load{7, t0 + 15'000, t0 - 7 * day, {example_load_sample(), second_sample()}});
  cmds.emplace_back(set_membership{example_membership()});
  cmds.emplace_back(note_waiting{7,
                                 {{run_id, "no worker of tenant acme matches gpu=a100"},
                                  {"43-1796022060000-0", "every matching worker is draining"}}});
  cmds.emplace_back(share_worker{"acme", "w-eu-1", false});
  cmds.emplace_back(retry_instance{"acme", run_id, t0 + 50});
  cmds.emplace_back(
      put_ai_records{{ai_record{ai_column::analyses, "acme/" + run_id, "analysis bytes\x01", true},
                      ai_record{ai_column::conversations, "c/c-9f8e7d6c5b4a3921",
                                R"({"id":"c-9f8e7d6c5b4a3921","tenant":"acme"})", false}}});
  cmds.emplace_back(put_data_keys{{example_data_key(), second_data_key()}, true});
  cmds.emplace_back(put_secret{example_secret()});
  cmds.emplace_back(delete_secret{"acme", "hook.token"});
  cmds.emplace_back(put_pool{example_pool()});
  cmds.emplace_back(put_calendar{example_calendar()});
  cmds.emplace_back(delete_calendar{"acme", "freeze-2025"});
  cmds.emplace_back(prune_runs{7, {run_id, "43-1796022060000-0"}});
  cmds.emplace_back(fire_placed{
      7, t0 + 60, {slot_a(), slot_b()}, {{run_id, "w-eu-1"}, {"43-1796022060000-0", "w-eu-2"}}});
  cmds.emplace_back(prune_history{7,
                                  {prune_span{42, t0 - 9 * day, 1, t0 - 2 * day, 6, 120},
                                   prune_span{43, t0 - 8 * day, 0, t0 - 3 * day, 2, 35}},
                                  {run_id, "43-1796022060000-0"}});
  std::vector<log_entry> out;
  uint64_t index = 1'000;
  for (auto& c : cmds) {
    out.push_back(log_entry{index, 7, std::move(c)});
    index += 1;
  }
  return out;
}

}  // namespace aisched::compat
