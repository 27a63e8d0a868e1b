// `task create|get|list|update|pause|resume|trigger|enqueue|delete|next|runs` over
// /api/v1/tasks. The server lists tasks by id only, so `task list` filters by
// name, label and state here, on the pages it fetched.
#include <CLI/CLI.hpp>
#include <boost/json.hpp>
#include <iostream>
#include <map>

#include "tools/aischedctl/commands.hpp"
#include "tools/aischedctl/output.hpp"

namespace aisched::ctl {

namespace json = boost::json;

namespace {

std::string task_path(uint64_t id) { return "/api/v1/tasks/" + std::to_string(id); }

/// What a task fires on, in one cell: its schedule, one-shot time or event.
std::string trigger_cell(const json::value& t) {
  if (auto s = cell(t, "schedule"); s != "-") return s;
  if (auto at = cell(t, "at"); at != "-") return "at " + at;
  if (auto e = cell(t, "event"); e != "-") return "event " + e;
  return "manual";
}

std::string state_cell(const json::value& t) {
  return cell(t, "paused") == "true" ? "paused" : "active";
}

std::string first_next_fire(const json::value& t) {
  auto* next = t.is_object() ? t.get_object().if_contains("next_fire_times") : nullptr;
  if (!next || !next->is_array() || next->get_array().empty()) return "-";
  auto& first = next->get_array().front();
  return first.is_string() ? std::string(first.get_string()) : "-";
}

void print_task_table(const json::array& tasks) {
  table t({"ID", "NAME", "KIND", "SCHEDULE", "STATE", "NEXT FIRE", "VERSION"});
  for (auto& x : tasks)
    t.add({cell(x, "id"), cell(x, "name"), cell(x, "kind"), trigger_cell(x), state_cell(x),
           first_next_fire(x), cell(x, "version")});
  t.print(std::cout);
}

/// "task 7 (db-backup) <what>": a task the server answered with, for people.
std::string task_line(const json::value& task, const std::string& what) {
  return "task " + cell(task, "id") + " (" + cell(task, "name") + ") " + what;
}

/// Prints a task the server answered with: everything in JSON, a line for people.
int print_task(session& s, const json::value& task, const std::string& what) {
  if (s.json_output())
    print_json(std::cout, task);
  else
    std::cout << task_line(task, what) << '\n';
  return exit_ok;
}

int get_task(session& s, uint64_t id) {
  json::value task;
  if (int rc = s.get(task_path(id), task)) return rc;
  if (s.json_output())
    print_json(std::cout, task);
  else
    print_fields(std::cout, task);
  return exit_ok;
}

int create_task(session& s, const std::string& file) {
  json::value doc, task;
  if (int rc = read_document(file, doc)) return rc;
  if (int rc = s.request("POST", "/api/v1/tasks", json::serialize(doc), task)) return rc;
  return print_task(s, task, "created, version " + cell(task, "version"));
}

int update_task(session& s, uint64_t id, const std::string& file, int64_t version) {
  json::value doc, task;
  if (int rc = read_document(file, doc)) return rc;
  if (version > 0) doc.get_object()["version"] = version;
  // PATCH: the file holds the fields to change (PUT would reset the others).
  if (int rc = s.request("PATCH", task_path(id), json::serialize(doc), task)) return rc;
  return print_task(s, task, "updated, version " + cell(task, "version"));
}

int post_action(session& s, uint64_t id, const std::string& verb, const std::string& done) {
  return act(s, "POST", task_path(id) + "/" + verb,
             [&](const json::value& task) { return task_line(task, done); });
}

int trigger_task(session& s, uint64_t id) {
  json::value answer;
  if (int rc = s.request("POST", task_path(id) + "/trigger", "", answer)) return rc;
  if (s.json_output()) {
    print_json(std::cout, answer);
    return exit_ok;
  }
  table t({"RUN", "STATE"});
  auto* runs = answer.is_object() ? answer.get_object().if_contains("instances") : nullptr;
  if (runs && runs->is_array())
    for (auto& r : runs->get_array()) t.add({cell(r, "id"), cell(r, "state")});
  t.print(std::cout);
  return exit_ok;
}

/// A bulk enqueue: the file holds {"payloads": [{...}, ...]}, one run each.
int enqueue_runs(session& s, uint64_t id, const std::string& file) {
  json::value doc, answer;
  if (int rc = read_document(file, doc)) return rc;
  if (int rc = s.request("POST", task_path(id) + "/runs", json::serialize(doc), answer)) return rc;
  if (s.json_output()) {
    print_json(std::cout, answer);
    return exit_ok;
  }
  auto* ids = answer.is_object() ? answer.get_object().if_contains("instance_ids") : nullptr;
  if (ids && ids->is_array())
    for (auto& r : ids->get_array())
      if (r.is_string()) std::cout << r.get_string() << '\n';
  return exit_ok;
}

int delete_task(session& s, uint64_t id, int64_t version) {
  json::value none;
  auto target = task_path(id) + (version > 0 ? "?version=" + std::to_string(version) : "");
  if (int rc = s.request("DELETE", target, "", none)) return rc;
  // The server answers 204 without a body; say what happened in both modes.
  if (s.json_output())
    print_json(std::cout, json::object{{"id", id}, {"deleted", true}});
  else
    std::cout << "task " << id << " deleted\n";
  return exit_ok;
}

int next_fires(session& s, uint64_t id) {
  json::value task;
  if (int rc = s.get(task_path(id), task)) return rc;
  auto* next = task.get_object().if_contains("next_fire_times");
  json::array times = next && next->is_array() ? next->get_array() : json::array{};
  if (s.json_output()) {
    print_json(std::cout, json::object{{"id", id}, {"next_fire_times", times}});
    return exit_ok;
  }
  for (auto& t : times) std::cout << (t.is_string() ? std::string(t.get_string()) : "-") << '\n';
  return exit_ok;
}

// -- task list ---------------------------------------------------------------

struct list_args {
  std::string name;                 // substring of the name
  std::vector<std::string> labels;  // "key=value", all must match
  std::string state;                // "active" | "paused" | ""
  page_args paging;
};

bool matches(const json::value& task, const list_args& a,
             const std::map<std::string, std::string>& labels) {
  if (!a.name.empty() && cell(task, "name").find(a.name) == std::string::npos) return false;
  if (!a.state.empty() && state_cell(task) != a.state) return false;
  auto* have = task.get_object().if_contains("labels");
  for (auto& [k, v] : labels) {
    auto* got = have && have->is_object() ? have->get_object().if_contains(k) : nullptr;
    if (!got || !got->is_string() || got->get_string() != v) return false;
  }
  return true;
}

int list_tasks(session& s, const list_args& a) {
  std::map<std::string, std::string> labels;
  for (auto& kv : a.labels) {
    auto eq = kv.find('=');
    if (eq == std::string::npos || eq == 0)
      return report_error(exit_usage, "usage", "--label wants key=value, got '" + kv + "'");
    labels[kv.substr(0, eq)] = kv.substr(eq + 1);
  }
  json::array fetched, shown;
  std::string next_cursor;
  if (int rc = fetch_pages(s, "/api/v1/tasks", {}, a.paging, fetched, next_cursor)) return rc;
  for (auto& t : fetched)
    if (t.is_object() && matches(t, a, labels)) shown.push_back(t);
  if (s.json_output()) {
    print_json(std::cout, json::object{{"items", shown}, {"next_cursor", next_cursor}});
    return exit_ok;
  }
  print_task_table(shown);
  hint_next_page(next_cursor);
  return exit_ok;
}

// -- registration --------------------------------------------------------------

struct task_args {
  uint64_t id = 0;
  std::string file;
  int64_t version = 0;
  run_filter runs;
};

CLI::App* with_id(CLI::App* cmd, task_args& a) {
  cmd->add_option("ID", a.id, "Task id")->required();
  return cmd;
}

}  // namespace

void add_task_commands(CLI::App& app, action& chosen) {
  auto* task = app.add_subcommand("task", "Tasks: create, read, change, run, delete");
  task->require_subcommand(1);
  auto a = std::make_shared<task_args>();
  auto on = [&chosen, a](CLI::App* cmd, std::function<int(session&, task_args&)> work) {
    cmd->callback([&chosen, a, work] { chosen = [a, work](session& s) { return work(s, *a); }; });
  };

  auto* create = task->add_subcommand("create", "Create a task from a JSON document");
  create->add_option("-f,--file", a->file, "The task document (README.md); - reads stdin")
      ->required();
  on(create, [](session& s, task_args& x) { return create_task(s, x.file); });

  on(with_id(task->add_subcommand("get", "Show a task, with its next fire times"), *a),
     [](session& s, task_args& x) { return get_task(s, x.id); });

  auto l = std::make_shared<list_args>();
  auto* list = task->add_subcommand("list", "List tasks by id (filters: see list --help)");
  list->footer(
      "The server does not filter tasks yet: --name, --label and --state are applied by\n"
      "aischedctl to the page(s) it fetched, so add --all to search every task.");
  list->add_option("--name", l->name, "Only tasks whose name contains this text");
  list->add_option("--label", l->labels, "Only tasks with this label (key=value; repeatable)")
      ->allow_extra_args(false);
  list->add_option("--state", l->state, "Only active or paused tasks")
      ->check(CLI::IsMember({"active", "paused"}));
  add_page_options(*list, l->paging);
  list->callback([&chosen, l] { chosen = [l](session& s) { return list_tasks(s, *l); }; });

  auto* update = with_id(
      task->add_subcommand("update",
                           "Change a task: fields in the document replace, absent fields are kept"),
      *a);
  update->add_option("-f,--file", a->file, "The fields to change (JSON); - reads stdin")
      ->required();
  update
      ->add_option("--version", a->version,
                   "Fail with exit code 4 if the task's version is no longer this one")
      ->check(CLI::PositiveNumber);
  on(update, [](session& s, task_args& x) { return update_task(s, x.id, x.file, x.version); });

  on(with_id(task->add_subcommand("pause", "Stop firing a task"), *a),
     [](session& s, task_args& x) { return post_action(s, x.id, "pause", "paused"); });
  on(with_id(task->add_subcommand("resume", "Fire a paused task again"), *a),
     [](session& s, task_args& x) { return post_action(s, x.id, "resume", "resumed"); });
  on(with_id(task->add_subcommand("trigger", "Run a task now (overlap policy and upstreams apply)"),
             *a),
     [](session& s, task_args& x) { return trigger_task(s, x.id); });

  auto* enqueue = with_id(
      task->add_subcommand("enqueue", "Enqueue many runs at once: one per payload (at most 1000)"),
      *a);
  enqueue
      ->add_option("-f,--file", a->file, R"(The payloads: {"payloads":[{...}, ...]}; - reads stdin)")
      ->required();
  on(enqueue, [](session& s, task_args& x) { return enqueue_runs(s, x.id, x.file); });

  auto* del = with_id(task->add_subcommand("delete", "Delete a task"), *a);
  del->add_option("--version", a->version, "Fail with exit code 4 if the version changed")
      ->check(CLI::PositiveNumber);
  on(del, [](session& s, task_args& x) { return delete_task(s, x.id, x.version); });

  on(with_id(task->add_subcommand("next", "Print a task's next fire times"), *a),
     [](session& s, task_args& x) { return next_fires(s, x.id); });

  auto* runs =
      with_id(task->add_subcommand("runs", "List a task's runs (like run list --task ID)"), *a);
  add_run_state_option(*runs, a->runs.state);
  add_page_options(*runs, a->runs.paging);
  on(runs, [](session& s, task_args& x) {
    x.runs.task_id = x.id;
    return list_runs(s, x.runs);
  });
}

}  // namespace aisched::ctl
