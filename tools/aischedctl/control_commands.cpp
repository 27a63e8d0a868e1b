// `pool set|get|list` and `calendar set|get|list|delete`: the scheduling
// controls tasks name in `pool` and `exclude_calendar` (PUT/GET
// /api/v1/pools/{name}, /api/v1/calendars/{name}).
#include <CLI/CLI.hpp>
#include <boost/json.hpp>
#include <iostream>
#include <memory>
#include <set>

#include "tools/aischedctl/commands.hpp"
#include "tools/aischedctl/output.hpp"

namespace aisched::ctl {

namespace json = boost::json;

namespace {

struct control_args {
  std::string name;
  uint32_t size = 0;
  std::vector<std::string> dates;  // YYYY-MM-DD or YYYY-MM-DD..YYYY-MM-DD
  std::string description;
};

int print_answer(session& s, const json::value& v) {
  if (s.json_output()) print_json(std::cout, v);
  else print_fields(std::cout, v);
  return exit_ok;
}

int get_one(session& s, const std::string& kind, const std::string& name) {
  json::value v;
  if (int rc = s.get("/api/v1/" + kind + "/" + url_encode(name), v)) return rc;
  return print_answer(s, v);
}

/// How many runs hold a slot of pool `name` now: the dispatched and running
/// runs of the tasks naming it (what the router counts against its size).
/// Counted from the task and run lists, so it is as of this call.
int pool_in_use(session& s, const std::string& name, uint64_t& in_use) {
  page_args all;
  all.all = true;
  json::array tasks;
  std::string next;
  if (int rc = fetch_pages(s, "/api/v1/tasks", {}, all, tasks, next)) return rc;
  std::set<std::string> members;  // task ids as cells
  for (auto& t : tasks)
    if (cell(t, "pool") == name) members.insert(cell(t, "id"));
  in_use = 0;
  if (members.empty()) return exit_ok;
  for (const char* state : {"dispatched", "running"}) {
    json::array runs;
    if (int rc = fetch_pages(s, "/api/v1/instances", {std::string("state=") + state}, all, runs,
                             next))
      return rc;
    for (auto& r : runs) in_use += members.count(cell(r, "task_id"));
  }
  return exit_ok;
}

/// `pool get`: the pool with `in_use`, the slots its runs hold now.
int get_pool(session& s, const std::string& name) {
  json::value v;
  if (int rc = s.get("/api/v1/pools/" + url_encode(name), v)) return rc;
  uint64_t in_use = 0;
  if (int rc = pool_in_use(s, name, in_use)) return rc;
  if (v.is_object()) v.get_object()["in_use"] = in_use;
  return print_answer(s, v);
}

int list(session& s, const std::string& kind, std::vector<std::string> columns) {
  json::value v;
  if (int rc = s.get("/api/v1/" + kind, v)) return rc;
  if (s.json_output()) {
    print_json(std::cout, v);
    return exit_ok;
  }
  std::vector<std::string> heads;
  for (auto& c : columns) {
    heads.push_back(c);
    for (auto& ch : heads.back()) ch = static_cast<char>(std::toupper(ch));
  }
  table t(heads);
  auto* items = v.is_object() ? v.get_object().if_contains("items") : nullptr;
  if (items && items->is_array())
    for (auto& x : items->get_array()) {
      std::vector<std::string> row;
      for (auto& c : columns) row.push_back(cell(x, c.c_str()));
      t.add(row);
    }
  t.print(std::cout);
  return exit_ok;
}

int put(session& s, const std::string& kind, const std::string& name, const json::value& body) {
  json::value v;
  if (int rc = s.request("PUT", "/api/v1/" + kind + "/" + url_encode(name), json::serialize(body),
                         v))
    return rc;
  return print_answer(s, v);
}

}  // namespace

void add_control_commands(CLI::App& app, action& chosen) {
  auto a = std::make_shared<control_args>();

  auto* pool = app.add_subcommand("pool", "Pools: runs of the tasks naming one, at once");
  pool->require_subcommand(1);
  auto* pset = pool->add_subcommand("set", "Create or resize a pool (admin)");
  pset->add_option("NAME", a->name, "Pool name")->required();
  pset->add_option("--size", a->size, "Runs dispatched or running at once (0 holds all back)")
      ->required();
  pset->callback([&chosen, a] {
    chosen = [a](session& s) { return put(s, "pools", a->name, json::object{{"size", a->size}}); };
  });
  auto* pget = pool->add_subcommand(
      "get", "Show a pool and its slots in use (in_use: its dispatched and running runs)");
  pget->add_option("NAME", a->name, "Pool name")->required();
  pget->callback([&chosen, a] { chosen = [a](session& s) { return get_pool(s, a->name); }; });
  pool->add_subcommand("list", "List the pools")->callback([&chosen] {
    chosen = [](session& s) { return list(s, "pools", {"name", "size", "updated_at"}); };
  });

  auto* cal = app.add_subcommand("calendar", "Exclusion calendars: dates tasks do not fire on");
  cal->require_subcommand(1);
  auto* cset = cal->add_subcommand("set", "Create or replace a calendar (admin)");
  cset->add_option("NAME", a->name, "Calendar name")->required();
  cset->add_option("--date", a->dates, "YYYY-MM-DD or YYYY-MM-DD..YYYY-MM-DD (repeatable)")
      ->allow_extra_args(false);
  cset->add_option("--description", a->description, "What the dates are");
  cset->callback([&chosen, a] {
    chosen = [a](session& s) {
      json::array dates;
      for (auto& d : a->dates) dates.push_back(json::string(d));
      return put(s, "calendars", a->name,
                 json::object{{"dates", std::move(dates)}, {"description", a->description}});
    };
  });
  auto* cget = cal->add_subcommand("get", "Show a calendar");
  cget->add_option("NAME", a->name, "Calendar name")->required();
  cget->callback([&chosen, a] {
    chosen = [a](session& s) { return get_one(s, "calendars", a->name); };
  });
  cal->add_subcommand("list", "List the calendars")->callback([&chosen] {
    chosen = [](session& s) { return list(s, "calendars", {"name", "dates", "description"}); };
  });
  auto* cdel = cal->add_subcommand("delete", "Delete a calendar no task excludes (admin)");
  cdel->add_option("NAME", a->name, "Calendar name")->required();
  cdel->callback([&chosen, a] {
    chosen = [a](session& s) -> int {
      json::value none;
      if (int rc = s.request("DELETE", "/api/v1/calendars/" + url_encode(a->name), "", none))
        return rc;
      if (!s.json_output()) std::cout << "calendar " << a->name << " deleted\n";
      return exit_ok;
    };
  });
}

}  // namespace aisched::ctl
