// The aischedctl subcommand groups. Each add_* function registers its commands on
// the top-level app; the one the command line selects stores its work in `chosen`,
// which main() runs after parsing.
#pragma once

#include <boost/json/array.hpp>
#include <cstdint>
#include <functional>
#include <string>
#include <vector>

#include "tools/aischedctl/session.hpp"

namespace CLI {
class App;
}

namespace aisched::ctl {

/// task create|get|list|update|pause|resume|trigger|delete|next|runs
void add_task_commands(CLI::App& app, action& chosen);
/// run list|get|logs|attempts|cancel|retry
void add_run_commands(CLI::App& app, action& chosen);
/// worker list|drain|undrain|remove, cluster status, backpressure, version, cron next, event fire
void add_system_commands(CLI::App& app, action& chosen);
/// pool set|get|list, calendar set|get|list|delete
void add_control_commands(CLI::App& app, action& chosen);
/// login, whoami, token create|list|revoke, user create|list|delete, audit list
void add_auth_commands(CLI::App& app, action& chosen);
/// secret set|list|rm|rotate-key
void add_secret_commands(CLI::App& app, action& chosen);
/// cluster snapshot save (after add_system_commands: it adds to `cluster`), snapshot status
void add_snapshot_commands(CLI::App& app, action& chosen);

// -- shared by the groups -----------------------------------------------------

/// Paging of a list route (`limit`, `cursor`, `--all`).
struct page_args {
  uint32_t limit = 0;  // 0: the server's default page size
  std::string cursor;
  bool all = false;  // follow next_cursor until the last page
};

/// Sends `method target` without a body and prints the answer: the server's JSON
/// with -o json, otherwise the line `summary(answer)`. Returns an exit code.
int act(session& s, const std::string& method, const std::string& target,
        const std::function<std::string(const boost::json::value&)>& summary);

/// Registers --limit, --cursor and --all on `cmd`.
void add_page_options(CLI::App& cmd, page_args& paging);

/// GETs `path` with `query` ("key=value", already encoded) plus the paging
/// parameters, appending each page's items to `items`; `next_cursor` is the
/// cursor of the page after the last one fetched ("" at the end). Returns an
/// exit code (errors already printed).
int fetch_pages(session& s, const std::string& path, std::vector<std::string> query,
                const page_args& paging, boost::json::array& items, std::string& next_cursor);

/// Tells a person on stderr how to get the next page, if there is one.
void hint_next_page(const std::string& next_cursor);

struct run_filter {
  uint64_t task_id = 0;  // 0: every task
  std::string state;     // "": every state
  page_args paging;
};

/// Lists runs (GET /api/v1/instances) as a table or JSON.
int list_runs(session& s, const run_filter& filter);

/// Registers --state for runs on `cmd`, checked against the instance states.
void add_run_state_option(CLI::App& cmd, std::string& state);

}  // namespace aisched::ctl
