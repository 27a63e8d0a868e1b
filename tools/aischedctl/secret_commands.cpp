// `secret set|list|rm|rotate-key`: the secret store (README "Secrets"). A value
// is read from a prompt (echo off) or standard input, never from an argument:
// arguments are visible to every local user (ps, /proc) and land in shell
// history. Nothing prints a value; the server never answers one.
#include <termios.h>
#include <unistd.h>

#include <CLI/CLI.hpp>
#include <boost/json.hpp>
#include <iostream>
#include <iterator>

#include "tools/aischedctl/commands.hpp"
#include "tools/aischedctl/output.hpp"

namespace aisched::ctl {

namespace json = boost::json;

namespace {

/// The value: at a terminal, one line typed at a prompt without echo; else all
/// of standard input, without one trailing newline (`echo pw | aischedctl ...`).
bool read_value(const std::string& name, std::string& out) {
  if (isatty(STDIN_FILENO)) {
    std::cerr << "value of secret " << name << ": " << std::flush;
    termios old{};
    bool quiet = tcgetattr(STDIN_FILENO, &old) == 0;
    if (quiet) {
      auto silent = old;
      silent.c_lflag &= ~static_cast<tcflag_t>(ECHO);
      tcsetattr(STDIN_FILENO, TCSAFLUSH, &silent);
    }
    bool ok = static_cast<bool>(std::getline(std::cin, out));
    if (quiet) tcsetattr(STDIN_FILENO, TCSAFLUSH, &old);
    std::cerr << "\n";
    return ok && !out.empty();
  }
  out.assign(std::istreambuf_iterator<char>(std::cin), std::istreambuf_iterator<char>());
  if (!out.empty() && out.back() == '\n') out.pop_back();
  if (!out.empty() && out.back() == '\r') out.pop_back();
  return !out.empty();
}

const json::array& items_of(const json::value& v) {
  static const json::array none;
  auto* x = v.is_object() ? v.get_object().if_contains("items") : nullptr;
  return x && x->is_array() ? x->get_array() : none;
}

}  // namespace

void add_secret_commands(CLI::App& app, action& chosen) {
  auto* secret = app.add_subcommand("secret", "Secrets tasks use without showing them");
  secret->require_subcommand(1);

  auto set_name = std::make_shared<std::string>();
  auto* set = secret->add_subcommand(
      "set", "Set a secret (admin); the value comes from a prompt or standard input");
  set->add_option("name", *set_name, "Secret name")->required();
  set->callback([&chosen, set_name] {
    chosen = [set_name](session& s) {
      std::string value;
      if (!read_value(*set_name, value))
        return report_error(exit_usage, "usage",
                            "no value: type it at the prompt or pipe it to standard input");
      json::value v;
      int rc = s.request("PUT", "/api/v1/secrets/" + url_encode(*set_name),
                         json::serialize(json::object{{"value", value}}), v);
      std::fill(value.begin(), value.end(), '\0');
      if (rc) return rc;
      if (s.json_output())
        print_json(std::cout, v);
      else
        std::cout << "secret " << cell(v, "name") << " set (tenant " << cell(v, "tenant") << ")\n";
      return int(exit_ok);
    };
  });

  secret->add_subcommand("list", "List the secrets of your tenant (names only)")
      ->callback([&chosen] {
        chosen = [](session& s) {
          json::value v;
          if (int rc = s.get("/api/v1/secrets", v)) return rc;
          if (s.json_output()) {
            print_json(std::cout, v);
            return int(exit_ok);
          }
          table t({"NAME", "VERSION", "SET BY", "SET AT"});
          for (auto& x : items_of(v))
            t.add({cell(x, "name"), cell(x, "version"), cell(x, "set_by"), cell(x, "set_at")});
          t.print(std::cout);
          return int(exit_ok);
        };
      });

  auto rm_name = std::make_shared<std::string>();
  auto* rm = secret->add_subcommand("rm", "Delete a secret (admin)");
  rm->add_option("name", *rm_name, "Secret name")->required();
  rm->callback([&chosen, rm_name] {
    chosen = [rm_name](session& s) {
      json::value none;
      if (int rc = s.request("DELETE", "/api/v1/secrets/" + url_encode(*rm_name), "", none))
        return rc;
      if (s.json_output())
        print_json(std::cout, json::object{{"deleted", *rm_name}});
      else
        std::cout << "secret " << *rm_name << " deleted\n";
      return int(exit_ok);
    };
  });

  secret
      ->add_subcommand("rotate-key",
                       "Re-wrap every data key under the cluster key the node was started "
                       "with (cluster admin; README \"Secrets\")")
      ->callback([&chosen] {
        chosen = [](session& s) {
          return act(s, "POST", "/api/v1/cluster/secrets-key/rotate",
                     [](const json::value& v) {
                       return "re-wrapped " + cell(v, "rewrapped") +
                              " data keys under key " + cell(v, "key_check");
                     });
        };
      });
}

}  // namespace aisched::ctl
