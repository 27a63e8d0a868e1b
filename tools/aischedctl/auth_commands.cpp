// `login`, `whoami`, `token create|list|revoke`, `user create|list|delete` and
// `audit list`: authentication and its administration (README "Authentication").
// `login` prints the token and stores nothing: scripts keep it in AISCHED_TOKEN.
#include <CLI/CLI.hpp>
#include <boost/json.hpp>
#include <cstdlib>
#include <fstream>
#include <iostream>

#include "tools/aischedctl/commands.hpp"
#include "tools/aischedctl/output.hpp"

namespace aisched::ctl {

namespace json = boost::json;

namespace {

const json::array& items_of(const json::value& v) {
  static const json::array none;
  auto* x = v.is_object() ? v.get_object().if_contains("items") : nullptr;
  return x && x->is_array() ? x->get_array() : none;
}

/// A password from `file` ("-" = stdin), else AISCHED_PASSWORD, else a line of stdin.
bool read_password(const std::string& file, std::string& out) {
  if (file.empty()) {
    if (const char* v = std::getenv("AISCHED_PASSWORD"); v && *v) {
      out = v;
      return true;
    }
  }
  if (file.empty() || file == "-") return static_cast<bool>(std::getline(std::cin, out));
  std::ifstream in(file);
  return in && std::getline(in, out);
}

int post(session& s, const std::string& target, const json::object& body, json::value& out) {
  return s.request("POST", target, json::serialize(body), out);
}

/// Prints a list answer as JSON or as a table of `columns` (field names).
int list(session& s, const std::string& target, const std::vector<std::string>& header,
         const std::vector<const char*>& fields) {
  json::value v;
  if (int rc = s.get(target, v)) return rc;
  if (s.json_output()) {
    print_json(std::cout, v);
    return exit_ok;
  }
  table t(header);
  for (auto& x : items_of(v)) {
    std::vector<std::string> row;
    for (auto f : fields) row.push_back(cell(x, f));
    t.add(std::move(row));
  }
  t.print(std::cout);
  auto* next = v.is_object() ? v.get_object().if_contains("next_cursor") : nullptr;
  if (next && next->is_string() && !next->get_string().empty())
    std::cerr << "more: --cursor " << next->get_string().c_str() << "\n";
  return exit_ok;
}

int remove(session& s, const std::string& target, const std::string& what) {
  json::value none;
  if (int rc = s.request("DELETE", target, "", none)) return rc;
  if (s.json_output())
    print_json(std::cout, json::object{{"deleted", what}});
  else
    std::cout << what << " deleted\n";
  return exit_ok;
}

struct login_args {
  std::string username, password_file;
};

struct new_user {
  std::string name, role = "viewer", tenant, password_file;
};

struct new_token {
  std::string name, role = "viewer", tenant;
};

struct audit_args {
  uint32_t limit = 0;
  std::string cursor, since;
};

}  // namespace

void add_auth_commands(CLI::App& app, action& chosen) {
  auto roles = CLI::IsMember({"viewer", "operator", "admin"});

  auto login = std::make_shared<login_args>();
  auto* l = app.add_subcommand("login",
                               "Log in and print the token (nothing is stored: "
                               "export AISCHED_TOKEN=$(aischedctl login ...))");
  l->add_option("-u,--username", login->username, "User name")->required();
  l->add_option("--password-file", login->password_file,
                "File holding the password ('-': stdin; default: env AISCHED_PASSWORD, "
                "else a line of stdin)");
  l->callback([&chosen, login] {
    chosen = [login](session& s) {
      std::string password;
      if (!read_password(login->password_file, password))
        return report_error(exit_usage, "usage", "no password given");
      json::value v;
      json::object body{{"username", login->username}, {"password", password}};
      if (int rc = post(s, "/api/v1/auth/login", body, v)) return rc;
      if (s.json_output())
        print_json(std::cout, v);
      else
        std::cout << cell(v, "token") << "\n";
      return int(exit_ok);
    };
  });

  app.add_subcommand("whoami", "Show who the token belongs to")->callback([&chosen] {
    chosen = [](session& s) {
      json::value v;
      if (int rc = s.get("/api/v1/auth/whoami", v)) return rc;
      if (s.json_output())
        print_json(std::cout, v);
      else
        print_fields(std::cout, v);
      return int(exit_ok);
    };
  });

  auto* token = app.add_subcommand("token", "API tokens for scripts (admin)");
  token->require_subcommand(1);
  auto nt = std::make_shared<new_token>();
  auto* tc = token->add_subcommand("create", "Create a token; its secret is shown once");
  tc->add_option("name", nt->name, "What the token is for")->required();
  tc->add_option("--role", nt->role, "viewer, operator or admin (at most yours)")
      ->capture_default_str()->check(roles);
  tc->add_option("--tenant", nt->tenant, "Tenant (default: yours)");
  tc->callback([&chosen, nt] {
    chosen = [nt](session& s) {
      json::object body{{"name", nt->name}, {"role", nt->role}};
      if (!nt->tenant.empty()) body["tenant"] = nt->tenant;
      json::value v;
      if (int rc = post(s, "/api/v1/tokens", body, v)) return rc;
      if (s.json_output()) {
        print_json(std::cout, v);
      } else {
        std::cout << cell(v, "token") << "\n";
        std::cerr << "token " << cell(v, "id") << " (" << cell(v, "role") << ", tenant "
                  << cell(v, "tenant") << "): keep the secret above, it is not shown again\n";
      }
      return int(exit_ok);
    };
  });
  token->add_subcommand("list", "List tokens (never their secrets)")->callback([&chosen] {
    chosen = [](session& s) {
      return list(s, "/api/v1/tokens", {"ID", "NAME", "ROLE", "TENANT", "CREATED BY", "CREATED"},
                  {"id", "name", "role", "tenant", "created_by", "created_at"});
    };
  });
  auto revoke_id = std::make_shared<std::string>();
  auto* tr = token->add_subcommand("revoke", "Revoke a token on every node");
  tr->add_option("id", *revoke_id, "Token id (tok_...)")->required();
  tr->callback([&chosen, revoke_id] {
    chosen = [revoke_id](session& s) {
      return remove(s, "/api/v1/tokens/" + url_encode(*revoke_id), "token " + *revoke_id);
    };
  });

  auto* user = app.add_subcommand("user", "Users who log in (admin)");
  user->require_subcommand(1);
  auto nu = std::make_shared<new_user>();
  auto* uc = user->add_subcommand("create", "Create a user");
  uc->add_option("name", nu->name, "User name")->required();
  uc->add_option("--role", nu->role, "viewer, operator or admin")->capture_default_str()->check(roles);
  uc->add_option("--tenant", nu->tenant, "Tenant (default: yours)");
  uc->add_option("--password-file", nu->password_file,
                 "File holding the password ('-': stdin; default: env AISCHED_PASSWORD, "
                 "else a line of stdin)");
  uc->callback([&chosen, nu] {
    chosen = [nu](session& s) {
      std::string password;
      if (!read_password(nu->password_file, password))
        return report_error(exit_usage, "usage", "no password given");
      json::object body{{"name", nu->name}, {"role", nu->role}, {"password", password}};
      if (!nu->tenant.empty()) body["tenant"] = nu->tenant;
      json::value v;
      if (int rc = post(s, "/api/v1/users", body, v)) return rc;
      if (s.json_output())
        print_json(std::cout, v);
      else
        std::cout << "user " << cell(v, "name") << " (" << cell(v, "role") << ", tenant "
                  << cell(v, "tenant") << ") created\n";
      return int(exit_ok);
    };
  });
  user->add_subcommand("list", "List the users of your tenant")->callback([&chosen] {
    chosen = [](session& s) {
      return list(s, "/api/v1/users", {"NAME", "ROLE", "TENANT", "CREATED"},
                  {"name", "role", "tenant", "created_at"});
    };
  });
  auto del_name = std::make_shared<std::string>();
  auto* ud = user->add_subcommand("delete", "Delete a user");
  ud->add_option("name", *del_name, "User name")->required();
  ud->callback([&chosen, del_name] {
    chosen = [del_name](session& s) {
      return remove(s, "/api/v1/users/" + url_encode(*del_name), "user " + *del_name);
    };
  });

  auto* audit = app.add_subcommand("audit", "The audit log of your tenant (admin)");
  audit->require_subcommand(1);
  auto aa = std::make_shared<audit_args>();
  auto* al = audit->add_subcommand("list", "Recorded mutations, newest first");
  al->add_option("--limit", aa->limit, "Entries per page (1-1000)")->check(CLI::Range(1, 1000));
  al->add_option("--cursor", aa->cursor, "Continue after a previous page");
  al->add_option("--since", aa->since, "Only entries at or after this RFC 3339 time");
  al->callback([&chosen, aa] {
    chosen = [aa](session& s) {
      std::string q;
      auto add = [&](const std::string& k, const std::string& v) {
        q += (q.empty() ? "?" : "&") + k + "=" + url_encode(v);
      };
      if (aa->limit) add("limit", std::to_string(aa->limit));
      if (!aa->cursor.empty()) add("cursor", aa->cursor);
      if (!aa->since.empty()) add("since", aa->since);
      return list(s, "/api/v1/audit" + q,
                  {"AT", "SUBJECT", "ACTION", "TARGET", "RESULT", "VIA", "NODE"},
                  {"at", "subject", "action", "target", "result", "via", "node"});
    };
  });
}

}  // namespace aisched::ctl
