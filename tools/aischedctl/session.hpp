// What every aischedctl subcommand shares: the global options, the exit codes
// scripts rely on, and a session that sends one REST request and turns a failed
// answer into an `error: ...` line on stderr plus the matching exit code.
#pragma once

#include <boost/json/value.hpp>
#include <cstdint>
#include <functional>
#include <string>

#include "tools/common/http_client.hpp"

namespace aisched::ctl {

/// Exit codes; the list in --help and README.md must match.
enum exit_code : int {
  exit_ok = 0,
  exit_server_error = 1,  // 5xx, unreachable server, anything unexpected
  exit_usage = 2,         // bad command line or unreadable input file
  exit_not_found = 3,     // 404
  exit_conflict = 4,      // 409
  exit_invalid = 5,       // 400, 413: the server rejected an argument or document
  exit_unauthenticated = 6,  // 401: no, a bad, an expired or a revoked token
  exit_forbidden = 7,        // 403: the token's role may not do this
  exit_run_unsuccessful = 8, // run logs --follow: the run ended, but not in success
};

/// The exit code for an HTTP status that is not 2xx (0 = no answer).
int exit_code_for(unsigned http_status);

/// Prints an error document `{"error": {"code", "message", "field"}}` that came
/// without an HTTP status (inside an SSE `error` event) and returns the exit code
/// of its code (exit_server_error for an unknown code or another document).
int report_error_document(const boost::json::value& doc);

struct global_options {
  std::string server;
  std::string token;
  std::string output = "table";  // "table" or "json"
  double timeout_s = 10;
};

class session {
 public:
  explicit session(const global_options& options);

  bool json_output() const { return json_output_; }
  tools::http_client& http() { return http_; }
  /// The global options it was made with (a command that talks to another
  /// node, such as the leader, makes a client of its own with the same token).
  const global_options& options() const { return options_; }

  /// Sends one request (`body` as is; empty for none). On a 2xx answer stores
  /// its JSON (null for an empty body) in `out` and returns exit_ok; otherwise
  /// prints the error to stderr and returns its exit code.
  int request(const std::string& method, const std::string& target, const std::string& body,
              boost::json::value& out);

  /// request() for a target without body.
  int get(const std::string& target, boost::json::value& out) {
    return request("GET", target, "", out);
  }

  /// Prints the error of a failed reply (status 0: transport error) and returns
  /// its exit code.
  int fail(const tools::http_reply& reply) const;

 private:
  global_options options_;
  tools::http_client http_;
  bool json_output_;
};

/// Prints `error: <code>: <message>[ (field: <field>)]` to stderr; returns `code_for_exit`.
int report_error(int code_for_exit, const std::string& code, const std::string& message,
                 const std::string& field = "");

/// Reads a JSON document from `path` ("-" = stdin) into `out`. Returns exit_ok,
/// exit_usage (unreadable file) or exit_invalid (not JSON / not an object),
/// having printed the error.
int read_document(const std::string& path, boost::json::value& out);

/// `value` percent-encoded for a URL query.
std::string url_encode(const std::string& value);

/// A subcommand's work, chosen while the command line is parsed and run after.
using action = std::function<int(session&)>;

}  // namespace aisched::ctl
