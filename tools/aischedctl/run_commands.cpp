// `run list|get|logs|attempts|cancel|retry`: runs (instances) over /api/v1/instances. `run logs
// --follow` reads the Server-Sent Events of /instances/{id}/output?follow=true and
// falls back to polling the run where a server has no such route; either way it ends
// with how the run ended (stderr) and exits 0 only when it succeeded.
#include <CLI/CLI.hpp>
#include <algorithm>
#include <boost/json.hpp>
#include <chrono>
#include <iostream>
#include <thread>

#include "proto/types.hpp"
#include "tools/aischedctl/commands.hpp"
#include "tools/aischedctl/output.hpp"
#include "common/sse_reader.hpp"

namespace aisched::ctl {

namespace json = boost::json;

namespace {

constexpr auto poll_interval = std::chrono::milliseconds(500);

std::string run_path(const std::string& id) { return "/api/v1/instances/" + url_encode(id); }

std::string text_field(const json::value& v, const char* key) {
  auto* x = v.is_object() ? v.get_object().if_contains(key) : nullptr;
  return x && x->is_string() ? std::string(x->get_string()) : std::string();
}

/// `text` on one line: a table row stays one row whatever an error holds.
std::string one_line(std::string text) {
  std::replace(text.begin(), text.end(), '\n', ' ');
  return text;
}

int get_run(session& s, const std::string& id) {
  json::value run;
  if (int rc = s.get(run_path(id), run); rc != exit_ok) return rc;
  if (s.json_output()) {
    print_json(std::cout, run);
    return exit_ok;
  }
  // The output has lines of its own: shown below the fields, not in them.
  auto output = text_field(run, "output");
  if (run.is_object()) run.get_object().erase("output");
  print_fields(std::cout, run);
  if (!output.empty()) std::cout << "\noutput:\n" << output << (output.back() == '\n' ? "" : "\n");
  return exit_ok;
}

/// Every attempt of the run, oldest first (GET /instances/{id}/attempts).
int show_attempts(session& s, const std::string& id) {
  json::value v;
  if (int rc = s.get(run_path(id) + "/attempts", v); rc != exit_ok) return rc;
  if (s.json_output()) {
    print_json(std::cout, v);
    return exit_ok;
  }
  table t({"ATTEMPT", "STATE", "WORKER", "EXIT", "DISPATCHED", "FINISHED", "ERROR"});
  auto* items = v.is_object() ? v.get_object().if_contains("attempts") : nullptr;
  if (items && items->is_array())
    for (auto& a : items->get_array())
      t.add({cell(a, "attempt"), cell(a, "state"), cell(a, "worker_id"), cell(a, "exit_code"),
             cell(a, "dispatched_at"), cell(a, "finished_at"), cell(a, "error")});
  t.print(std::cout);
  return exit_ok;
}

int cancel_run(session& s, const std::string& id) {
  return act(s, "POST", run_path(id) + "/cancel",
             [&](const json::value& run) { return "run " + id + ": " + cell(run, "state"); });
}

int retry_run(session& s, const std::string& id) {
  return act(s, "POST", run_path(id) + "/retry", [&](const json::value& run) {
    return "run " + id + ": " + cell(run, "state") + ", attempt " + cell(run, "attempt");
  });
}

/// Says on stderr how followed run `id` ended (`run` holds state, exit_code and
/// error) and returns the exit code: ok for success, exit_run_unsuccessful
/// otherwise, so a script can tell a cancelled or failed run from a good one.
int report_end(const std::string& id, const json::value& run) {
  auto state = text_field(run, "state");
  auto error = text_field(run, "error");
  std::cerr << "run " << id << " ended: " << (state.empty() ? "unknown" : state)
            << ", exit code " << cell(run, "exit_code") << (error.empty() ? "" : ": " + error)
            << "\n";
  return state == "success" ? exit_ok : exit_run_unsuccessful;
}

/// Polls GET instance until the run is terminal, printing output as it grows.
int poll_logs(session& s, const std::string& id) {
  std::string shown;
  for (;;) {
    json::value run;
    if (int rc = s.get(run_path(id), run); rc != exit_ok) return rc;
    auto output = text_field(run, "output");
    if (output.compare(0, shown.size(), shown) == 0) {
      std::cout << output.substr(shown.size()) << std::flush;
    } else {
      // The server keeps only the tail of the output; it moved past what we showed.
      std::cout << "\n[... output truncated ...]\n" << output << std::flush;
    }
    shown = output;
    auto state = proto::parse_enum<proto::instance_state>(text_field(run, "state"));
    if (state && proto::is_terminal(*state)) return report_end(id, run);
    std::this_thread::sleep_for(poll_interval);
  }
}

int follow_logs(session& s, const std::string& id) {
  // Each `data:` event carries {"chunk": "..."}; `event: end` closes the stream
  // and `event: error` ends it with the server's error document.
  bool ended = false;
  int rc = exit_ok;
  http::sse_reader events([&](const http::sse_event& e) {
    boost::system::error_code ec;
    auto v = json::parse(e.data, ec);
    if (e.type == "end" || e.type == "error") {
      ended = true;
      rc = e.type == "error" ? report_error_document(ec ? json::value() : v)
                             : report_end(id, ec ? json::value() : v);
      return false;
    }
    if (!ec) std::cout << text_field(v, "chunk") << std::flush;
    return true;
  });
  auto reply = s.http().stream(run_path(id) + "/output?follow=true",
                               [&](std::string_view data) { return events.feed(data); });
  // A server without the streaming route: poll the run instead. (If the run
  // itself is missing, the poll reports that 404.)
  if (reply.status == 404) return poll_logs(s, id);
  if (reply.status < 200 || reply.status >= 300) return s.fail(reply);
  if (!ended)
    return report_error(exit_server_error, "stream_ended",
                        "the output stream closed before its end event");
  return rc;
}

int show_logs(session& s, const std::string& id, bool follow) {
  if (follow) return follow_logs(s, id);
  json::value run;
  if (int rc = s.get(run_path(id), run); rc != exit_ok) return rc;
  std::cout << text_field(run, "output");
  return exit_ok;
}

}  // namespace

void add_run_state_option(CLI::App& cmd, std::string& state) {
  std::vector<std::string> states;
  for (auto name : proto::enum_names<proto::instance_state>::value) states.emplace_back(name);
  cmd.add_option("--state", state, "Only runs in this state (filtered by the server)")
      ->check(CLI::IsMember(states));
}

int list_runs(session& s, const run_filter& filter) {
  std::vector<std::string> query;
  if (filter.task_id) query.push_back("task_id=" + std::to_string(filter.task_id));
  if (!filter.state.empty()) query.push_back("state=" + url_encode(filter.state));
  json::array items;
  std::string next_cursor;
  if (int rc = fetch_pages(s, "/api/v1/instances", query, filter.paging, items, next_cursor))
    return rc;
  if (s.json_output()) {
    print_json(std::cout, json::object{{"items", items}, {"next_cursor", next_cursor}});
    return exit_ok;
  }
  // ERROR: why a run failed, or why a pending run waits (no worker can take it,
  // its task is paused, a limit holds it), as `run get` says.
  table t({"ID", "TASK", "STATE", "ATTEMPT", "WORKER", "EXIT", "CREATED", "FINISHED", "ERROR"});
  for (auto& r : items)
    t.add({cell(r, "id"), cell(r, "task_id"), cell(r, "state"), cell(r, "attempt"),
           cell(r, "worker_id"), cell(r, "exit_code"), cell(r, "created_at"),
           cell(r, "finished_at"), one_line(cell(r, "error"))});
  t.print(std::cout);
  hint_next_page(next_cursor);
  return exit_ok;
}

void add_run_commands(CLI::App& app, action& chosen) {
  auto* run = app.add_subcommand("run", "Runs (instances): list, get, logs, attempts, cancel, retry");
  run->require_subcommand(1);

  auto filter = std::make_shared<run_filter>();
  auto* list = run->add_subcommand("list", "List runs, newest first");
  list->add_option("--task", filter->task_id, "Only runs of this task id");
  add_run_state_option(*list, filter->state);
  add_page_options(*list, filter->paging);
  list->callback(
      [&chosen, filter] { chosen = [filter](session& s) { return list_runs(s, *filter); }; });

  auto id = std::make_shared<std::string>();
  auto* get = run->add_subcommand("get", "Show one run (its output last)");
  get->add_option("ID", *id, "Run id")->required();
  get->callback([&chosen, id] { chosen = [id](session& s) { return get_run(s, *id); }; });

  auto follow = std::make_shared<bool>(false);
  auto* logs =
      run->add_subcommand("logs", "Print a run's output (the last 16 KiB the server keeps)");
  logs->add_option("ID", *id, "Run id")->required();
  logs->add_flag("-f,--follow", *follow,
                 "Keep printing output until the run ends (streams it; polls every 500 ms "
                 "where the server cannot stream)");
  logs->callback([&chosen, id, follow] {
    chosen = [id, follow](session& s) { return show_logs(s, *id, *follow); };
  });

  auto* attempts =
      run->add_subcommand("attempts", "Every attempt of a run: worker, outcome, times, error");
  attempts->add_option("ID", *id, "Run id")->required();
  attempts->callback(
      [&chosen, id] { chosen = [id](session& s) { return show_attempts(s, *id); }; });

  auto* cancel = run->add_subcommand("cancel", "Cancel a run (kills its process group)");
  cancel->add_option("ID", *id, "Run id")->required();
  cancel->callback([&chosen, id] { chosen = [id](session& s) { return cancel_run(s, *id); }; });

  auto* retry = run->add_subcommand(
      "retry", "Start another attempt of a failed, timed-out or cancelled run (same run id)");
  retry->add_option("ID", *id, "Run id")->required();
  retry->callback([&chosen, id] { chosen = [id](session& s) { return retry_run(s, *id); }; });
}

}  // namespace aisched::ctl
