// `worker list|drain|undrain|remove`, `cluster status|add-member|remove-member`,
// `backpressure`, `version`, `cron next`
// and `event fire`: the routes around the tasks and runs.
#include <CLI/CLI.hpp>
#include <boost/json.hpp>
#include <iostream>

#include "tools/aischedctl/commands.hpp"
#include "tools/aischedctl/output.hpp"

namespace aisched::ctl {

namespace json = boost::json;

namespace {

const json::array& array_field(const json::value& v, const char* key) {
  static const json::array none;
  auto* x = v.is_object() ? v.get_object().if_contains(key) : nullptr;
  return x && x->is_array() ? x->get_array() : none;
}

/// GETs `target` and prints it as JSON or, for people, with `show`.
template <class Show>
int show(session& s, const std::string& target, Show show_for_people) {
  json::value v;
  if (int rc = s.get(target, v)) return rc;
  if (s.json_output())
    print_json(std::cout, v);
  else
    show_for_people(v);
  return exit_ok;
}

int list_workers(session& s) {
  return show(s, "/api/v1/workers", [](const json::value& v) {
    table t({"ID", "PROTOCOL", "STATUS", "LOAD", "LABELS", "LAST HEARTBEAT"});
    for (auto& w : array_field(v, "items"))
      t.add({cell(w, "id"), cell(w, "protocol"), cell(w, "status"),
             cell(w, "load") + "/" + cell(w, "max_load"), cell(w, "labels"),
             cell(w, "last_heartbeat")});
    t.print(std::cout);
  });
}

/// POST /workers/{id}/drain or /undrain: the server answers with the worker.
int set_draining(session& s, const std::string& id, bool drain) {
  auto target = "/api/v1/workers/" + url_encode(id) + (drain ? "/drain" : "/undrain");
  return act(s, "POST", target,
             [&](const json::value& w) { return "worker " + id + ": " + cell(w, "status"); });
}

int remove_worker(session& s, const std::string& id) {
  json::value none;
  if (int rc = s.request("DELETE", "/api/v1/workers/" + url_encode(id), "", none)) return rc;
  if (s.json_output())
    print_json(std::cout, json::object{{"id", id}, {"removed", true}});
  else
    std::cout << "worker " << id << " removed\n";
  return exit_ok;
}

int cluster_status(session& s) {
  return show(s, "/api/v1/cluster", [](const json::value& v) {
    std::cout << "node " << cell(v, "node_id") << "  leader " << cell(v, "leader") << "  term "
              << cell(v, "term") << "\n\n";
    table t({"ID", "ROLE", "REACHABLE", "COMMIT", "APPLIED", "MATCH", "VERSION", "FORMAT",
             "ADDRESS"});
    for (auto& m : array_field(v, "members"))
      t.add({cell(m, "id") + (cell(m, "self") == "true" ? " (self)" : ""), cell(m, "role"),
             cell(m, "reachable"), cell(m, "commit_index"), cell(m, "applied_index"),
             cell(m, "match_index"), cell(m, "version"), cell(m, "data_format"),
             cell(m, "address")});
    t.print(std::cout);
  });
}

struct member_args {
  std::string id;
  std::string cluster_addr;
  std::string http_addr;
};

int add_member(session& s, const member_args& a) {
  json::object body{{"id", a.id}, {"cluster_addr", a.cluster_addr}};
  if (!a.http_addr.empty()) body["http_addr"] = a.http_addr;
  json::value answer;
  if (int rc = s.request("POST", "/api/v1/cluster/members", json::serialize(body), answer))
    return rc;
  if (s.json_output())
    print_json(std::cout, answer);
  else
    std::cout << "member " << a.id << " added as a learner at log index " << cell(answer, "index")
              << "; the leader makes it a voter once it has caught up\n";
  return exit_ok;
}

int remove_member(session& s, const std::string& id) {
  json::value answer;
  if (int rc = s.request("DELETE", "/api/v1/cluster/members/" + url_encode(id), "", answer))
    return rc;
  if (s.json_output())
    print_json(std::cout, answer);
  else
    std::cout << "member " << id << " removed at log index " << cell(answer, "index") << "\n";
  return exit_ok;
}

int version(session& s) {
  json::value v;
  if (int rc = s.get("/api/v1/version", v)) return rc;
  if (s.json_output()) {
    print_json(std::cout, json::object{{"client", AISCHED_VERSION}, {"server", v}});
    return exit_ok;
  }
  std::cout << "aischedctl " << AISCHED_VERSION << "\nserver     " << cell(v, "version")
            << " (node " << cell(v, "node_id") << ")\n";
  return exit_ok;
}

struct cron_args {
  std::string expression;
  std::string tz = "UTC";
  unsigned n = 5;
  std::string calendar;  // skip the dates of this exclusion calendar
};

int cron_next(session& s, const cron_args& a) {
  auto target = "/api/v1/schedules/next?cron=" + url_encode(a.expression) +
                "&tz=" + url_encode(a.tz) + "&n=" + std::to_string(a.n) +
                (a.calendar.empty() ? "" : "&calendar=" + url_encode(a.calendar));
  return show(s, target, [](const json::value& v) {
    for (auto& t : array_field(v, "times"))
      std::cout << (t.is_string() ? std::string(t.get_string()) : "-") << '\n';
  });
}

struct event_args {
  std::string name;
  std::string file;  // "": an empty payload
};

int fire_event(session& s, const event_args& a) {
  json::value payload = json::object{}, answer;
  if (!a.file.empty())
    if (int rc = read_document(a.file, payload)) return rc;
  auto target = "/api/v1/events/" + url_encode(a.name);
  if (int rc = s.request("POST", target, json::serialize(payload), answer)) return rc;
  if (s.json_output()) {
    print_json(std::cout, answer);
    return exit_ok;
  }
  std::cout << "event " << a.name << " fired " << array_field(answer, "fired_tasks").size()
            << " task(s): " << cell(answer, "fired_tasks") << '\n';
  table t({"RUN", "TASK", "STATE"});
  for (auto& r : array_field(answer, "instances"))
    t.add({cell(r, "id"), cell(r, "task_id"), cell(r, "state")});
  if (!t.empty()) t.print(std::cout);
  return exit_ok;
}

}  // namespace

void add_system_commands(CLI::App& app, action& chosen) {
  auto* worker = app.add_subcommand("worker", "Workers: list, drain, undrain, remove");
  worker->require_subcommand(1);
  worker->add_subcommand("list", "List registered workers")->callback([&chosen] {
    chosen = list_workers;
  });
  auto worker_id = std::make_shared<std::string>();
  auto* drain = worker->add_subcommand("drain", "Route no new runs to a worker; its runs finish");
  auto* undrain = worker->add_subcommand("undrain", "Route runs to a drained worker again");
  auto* remove = worker->add_subcommand("remove", "Forget a worker");
  for (auto* cmd : {drain, undrain, remove})
    cmd->add_option("ID", *worker_id, "Worker id")->required();
  drain->callback([&chosen, worker_id] {
    chosen = [worker_id](session& s) { return set_draining(s, *worker_id, true); };
  });
  undrain->callback([&chosen, worker_id] {
    chosen = [worker_id](session& s) { return set_draining(s, *worker_id, false); };
  });
  remove->callback([&chosen, worker_id] {
    chosen = [worker_id](session& s) { return remove_worker(s, *worker_id); };
  });

  auto* cluster = app.add_subcommand("cluster", "The Raft group as this node sees it");
  cluster->require_subcommand(1);
  cluster->add_subcommand("status", "Leader, term and each member's role and indexes")
      ->callback([&chosen] { chosen = cluster_status; });
  auto m = std::make_shared<member_args>();
  auto* add = cluster->add_subcommand(
      "add-member", "Add a node started with --join as a learner (promoted once caught up)");
  add->add_option("ID", m->id, "The new node's --node-id")->required();
  add->add_option("--cluster-addr", m->cluster_addr, "Its --cluster-addr HOST:PORT")->required();
  add->add_option("--http-addr", m->http_addr, "Its gateway HOST:PORT");
  add->callback([&chosen, m] { chosen = [m](session& s) { return add_member(s, *m); }; });
  auto* rm = cluster->add_subcommand("remove-member", "Remove a member (the leader too)");
  rm->add_option("ID", m->id, "Member id")->required();
  rm->callback([&chosen, m] { chosen = [m](session& s) { return remove_member(s, m->id); }; });

  app.add_subcommand("backpressure", "Backpressure state (green/yellow/red), backlog, worker load")
      ->callback([&chosen] {
        chosen = [](session& s) {
          return show(s, "/api/v1/backpressure", [](auto& v) { print_fields(std::cout, v); });
        };
      });
  app.add_subcommand("version", "Client and server versions")->callback([&chosen] {
    chosen = version;
  });

  auto c = std::make_shared<cron_args>();
  auto* cron = app.add_subcommand("cron", "Check a schedule expression");
  cron->require_subcommand(1);
  auto* next = cron->add_subcommand("next", "Print the next fire times of a schedule");
  next->add_option("EXPRESSION", c->expression, "Cron (5 or 6 fields), @every 1h30m, @daily, ...")
      ->required();
  next->add_option("--tz", c->tz, "IANA time zone")->capture_default_str();
  next->add_option("-n,--n", c->n, "How many times (1-1000)")
      ->capture_default_str()
      ->check(CLI::Range(1, 1000));
  next->add_option("--calendar", c->calendar, "Skip the dates of this exclusion calendar");
  next->callback([&chosen, c] { chosen = [c](session& s) { return cron_next(s, *c); }; });

  auto e = std::make_shared<event_args>();
  auto* event = app.add_subcommand("event", "Events that tasks subscribe to");
  event->require_subcommand(1);
  auto* fire = event->add_subcommand("fire", "Fire every task subscribed to an event, once");
  fire->add_option("NAME", e->name, "Event name")->required();
  fire->add_option("-f,--file", e->file, "Payload: a JSON object; - reads stdin");
  fire->callback([&chosen, e] { chosen = [e](session& s) { return fire_event(s, *e); }; });
}

}  // namespace aisched::ctl
