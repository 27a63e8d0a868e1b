// aischedctl: the command-line client of aisched's REST API. Parses the command
// line (CLI11), runs the chosen subcommand against --server and exits with a
// code scripts can rely on (listed in the footer of --help and in README.md).
#include <CLI/CLI.hpp>
#include <cstdlib>
#include <iostream>

#include "tools/aischedctl/commands.hpp"
#include "tools/aischedctl/session.hpp"

namespace {

using namespace aisched::ctl;

constexpr const char* exit_codes_help =
    "Exit codes: 0 ok, 1 server error (5xx, unreachable), 2 usage error, 3 not found (404),\n"
    "4 conflict (409), 5 invalid argument (400, 413), 6 unauthenticated (401),\n"
    "7 forbidden (403), 8 a followed run ended but not in success. Errors are printed to\n"
    "stderr as `error: <code>: <message> (field: <field>)`.";

std::string env_or(const char* name, const char* fallback) {
  const char* v = std::getenv(name);
  return v && *v ? v : fallback;
}

void add_global_options(CLI::App& app, global_options& g) {
  g.server = env_or("AISCHED_SERVER", "http://127.0.0.1:8080");
  g.token = env_or("AISCHED_TOKEN", "");
  app.add_option("--server", g.server, "Base URL of any node (env AISCHED_SERVER)")
      ->capture_default_str();
  app.add_option("--token", g.token, "Sent as Authorization: Bearer (env AISCHED_TOKEN)");
  app.add_option("-o,--output", g.output, "table (for people) or json (the server's answer)")
      ->capture_default_str()
      ->check(CLI::IsMember({"table", "json"}));
  app.add_option("--timeout", g.timeout_s, "Seconds to wait for each answer")
      ->capture_default_str()
      ->check(CLI::Range(0.001, 3600.0));
}

int run(int argc, char** argv) {
  CLI::App app{"aischedctl: operate an aisched cluster over its REST API", "aischedctl"};
  app.footer(exit_codes_help);
  // Global options may come after the subcommand too: `aischedctl task list -o json`.
  app.fallthrough();
  app.require_subcommand(1);
  global_options globals;
  add_global_options(app, globals);
  action chosen;
  add_task_commands(app, chosen);
  add_run_commands(app, chosen);
  add_system_commands(app, chosen);
  add_control_commands(app, chosen);
  add_auth_commands(app, chosen);
  add_secret_commands(app, chosen);
  add_snapshot_commands(app, chosen);
  try {
    app.parse(argc, argv);
  } catch (const CLI::CallForHelp& e) {
    return app.exit(e);
  } catch (const CLI::CallForAllHelp& e) {
    return app.exit(e);
  } catch (const CLI::ParseError& e) {
    app.exit(e);  // prints the message and a pointer to --help
    return exit_usage;
  }
  if (!chosen) return report_error(exit_usage, "usage", "no command given; see --help");
  session s(globals);
  return chosen(s);
}

}  // namespace

int main(int argc, char** argv) {
  try {
    return run(argc, argv);
  } catch (const std::exception& e) {
    return report_error(exit_server_error, "internal", e.what());
  } catch (...) {
    return report_error(exit_server_error, "internal", "unknown exception");
  }
}
