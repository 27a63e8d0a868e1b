// The failure rule table; see failure_rules.hpp.
#include "actors/ai_features/failure_rules.hpp"

#include <algorithm>
#include <cctype>
#include <functional>
#include <initializer_list>
#include <vector>

namespace aisched::ai {

namespace {

std::string lower(std::string_view s) {
  std::string out(s);
  for (auto& c : out) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  return out;
}

/// The first of `needles` found in `text` (compared lower-case); "" if none.
std::string first_found(const std::string& lowered_text, std::initializer_list<const char*> needles) {
  for (auto n : needles)
    if (lowered_text.find(lower(n)) != std::string::npos) return n;
  return {};
}

/// One row of the table. `match` returns the evidence needle ("" = no match,
/// "-" = matched on a number rather than on text).
struct rule {
  const char* category;
  const char* severity;
  double confidence;
  std::function<std::string(const failure_facts&, const std::string& text)> match;
  std::function<std::string(const failure_facts&)> summary;
  std::function<std::string(const failure_facts&)> root_cause;
  const char* fix;
};

bool http_status_in(const failure_facts& f, int lo, int hi) {
  if (f.kind == proto::task_kind::http && f.exit_code >= lo && f.exit_code <= hi) return true;
  // curl -f in a shell task: "The requested URL returned error: 503"
  auto t = lower(f.error + "\n" + f.output);
  for (auto key : {"returned error: ", "http status ", "http/1.1 ", "http/2 "}) {
    auto pos = t.find(key);
    while (pos != std::string::npos) {
      auto p = pos + std::string_view(key).size();
      if (p + 3 <= t.size() && std::isdigit(static_cast<unsigned char>(t[p])) &&
          std::isdigit(static_cast<unsigned char>(t[p + 1])) &&
          std::isdigit(static_cast<unsigned char>(t[p + 2]))) {
        int code = std::stoi(t.substr(p, 3));
        if (code >= lo && code <= hi) return true;
      }
      pos = t.find(key, pos + 1);
    }
  }
  return false;
}

std::string code_str(const failure_facts& f) { return std::to_string(f.exit_code); }

/// The output line with `needle` (what the program said), else the error's.
std::string evidence(const failure_facts& f, std::string_view needle) {
  auto line = line_with(f.output, needle);
  return line.empty() ? line_with(f.error, needle) : line;
}

const std::vector<rule>& rules() {
  static const std::vector<rule> table{
      {"timeout", "high", 0.9,
       [](const failure_facts& f, const std::string& t) -> std::string {
         if (f.state == proto::instance_state::timed_out) return "-";
         return first_found(t, {"timed out", "operation timed out", "deadline exceeded"});
       },
       [](const failure_facts& f) {
         return "The run exceeded its timeout" +
                (f.timeout ? " of " + format_duration(f.timeout) : std::string()) +
                " and was stopped.";
       },
       [](const failure_facts&) {
         return std::string("The command or the service it calls took longer than allowed "
                            "(slow dependency, lock wait, growing input, or a hang).");
       },
       "Find where the run spends its time (output tail, the service it waits for); raise "
       "`timeout` if the work legitimately grew, or add a timeout inside the job so it fails "
       "fast and can be retried."},
      {"disk_full", "critical", 0.95,
       [](const failure_facts&, const std::string& t) {
         return first_found(t, {"No space left on device", "ENOSPC", "Disk quota exceeded"});
       },
       [](const failure_facts&) { return std::string("The run failed because a disk is full."); },
       [](const failure_facts& f) {
         return "A write failed with 'No space left on device': " +
                evidence(f, "space left");
       },
       "Free space on the worker's filesystem (old outputs, backups, logs), move large output "
       "elsewhere, or add capacity; alert on disk usage before it reaches 100 %."},
      {"out_of_memory", "high", 0.85,
       [](const failure_facts& f, const std::string& t) -> std::string {
         auto s = first_found(t, {"Cannot allocate memory", "out of memory", "std::bad_alloc",
                                  "MemoryError", "OOMKilled", "oom-kill"});
         if (!s.empty()) return s;
         if (f.exit_code == 137 && f.memory_mb > 0) return "-";
         return {};
       },
       [](const failure_facts& f) {
         return "The run ran out of memory" +
                (f.memory_mb ? " (cap " + std::to_string(f.memory_mb) + " MiB)" : std::string()) +
                ".";
       },
       [](const failure_facts& f) {
         if (f.exit_code == 137)
           return std::string("The process was killed (exit 137 = SIGKILL) while running "
                              "under a memory cap; the kernel or the cap stopped it.");
         return "An allocation failed: " + evidence(f, "memory");
       },
       "Raise the task's `memory_mb`, or reduce the job's memory use (stream instead of "
       "loading everything, smaller batches); run it on workers with more memory (labels)."},
      {"dns_failure", "high", 0.9,
       [](const failure_facts&, const std::string& t) {
         return first_found(t, {"Could not resolve host", "Couldn't resolve host",
                                "Name or service not known", "Temporary failure in name resolution",
                                "nodename nor servname", "no such host", "getaddrinfo"});
       },
       [](const failure_facts&) {
         return std::string("The run could not resolve a host name (DNS failure).");
       },
       [](const failure_facts& f) {
         auto ev = evidence(f, "resolve");
         return "Name resolution failed" + (ev.empty() ? std::string(".") : ": " + ev);
       },
       "Check the host name in the URL or command for typos, the worker's DNS configuration "
       "(/etc/resolv.conf) and whether the name exists from the worker's network."},
      {"connection_refused", "high", 0.9,
       [](const failure_facts&, const std::string& t) {
         return first_found(t, {"Connection refused", "Couldn't connect to server",
                                "Failed to connect", "ECONNREFUSED", "could not connect"});
       },
       [](const failure_facts&) {
         return std::string("The run could not connect: the target refused the connection.");
       },
       [](const failure_facts& f) {
         auto ev = evidence(f, "connect");
         return "Nothing accepted connections at the target address (service down, wrong "
                "port, or a firewall reset)" +
                (ev.empty() ? std::string(".") : ": " + ev);
       },
       "Check that the target service runs and listens on that host and port (from the "
       "worker's network); fix the URL/port, or add retries with backoff for restarts."},
      {"tls_error", "high", 0.8,
       [](const failure_facts&, const std::string& t) {
         return first_found(t, {"SSL certificate problem", "certificate verify failed",
                                "SSL connect error", "SSL peer certificate", "tls handshake",
                                "x509:", "ssl_error", "certificate has expired"});
       },
       [](const failure_facts&) {
         return std::string("The run failed in the TLS handshake with its target.");
       },
       [](const failure_facts& f) {
         auto ev = evidence(f, "certificate");
         if (ev.empty()) ev = evidence(f, "ssl");
         return "TLS could not be established: " + ev;
       },
       "Check the server certificate (expiry, host name, chain) and the CA bundle on the "
       "worker; never switch verification off as the fix."},
      {"http_5xx", "high", 0.85,
       [](const failure_facts& f, const std::string&) -> std::string {
         return http_status_in(f, 500, 599) ? "-" : "";
       },
       [](const failure_facts& f) {
         return "The called service answered with a server error" +
                (f.kind == proto::task_kind::http ? " (HTTP " + code_str(f) + ")" : std::string()) +
                ".";
       },
       [](const failure_facts&) {
         return std::string("The target service failed while handling the request (5xx): "
                            "it is down, overloaded or broken behind its gateway.");
       },
       "Look at the target service's logs and health for the run's time; retries with "
       "exponential backoff help with transient 502/503/504."},
      {"http_4xx", "medium", 0.8,
       [](const failure_facts& f, const std::string&) -> std::string {
         return http_status_in(f, 400, 499) ? "-" : "";
       },
       [](const failure_facts& f) {
         return "The called service rejected the request" +
                (f.kind == proto::task_kind::http ? " (HTTP " + code_str(f) + ")" : std::string()) +
                ".";
       },
       [](const failure_facts& f) {
         if (f.exit_code == 401 || f.exit_code == 403)
           return std::string("The request is not authorised (missing/expired credentials).");
         if (f.exit_code == 404) return std::string("The URL does not exist on the target.");
         return std::string("The request is invalid for the target service (4xx): URL, "
                            "method, headers or body.");
       },
       "Fix the request (URL, method, headers, credentials, body); retrying the same "
       "request will fail the same way."},
      {"command_not_found", "high", 0.95,
       [](const failure_facts& f, const std::string& t) -> std::string {
         if (f.kind == proto::task_kind::shell && f.exit_code == 127) return "-";
         return first_found(t, {"command not found"});
       },
       [](const failure_facts&) {
         return std::string("The command was not found on the worker (exit 127).");
       },
       [](const failure_facts& f) {
         auto ev = evidence(f, "not found");
         return "The shell could not find the program to run" +
                (ev.empty() ? std::string(".") : ": " + ev);
       },
       "Install the program on the workers that run this task (or route it with labels to "
       "workers that have it), or use its absolute path; runs get a minimal PATH."},
      {"permission_denied", "high", 0.85,
       [](const failure_facts& f, const std::string& t) -> std::string {
         if (f.kind == proto::task_kind::shell && f.exit_code == 126) return "-";
         return first_found(t, {"Permission denied", "Operation not permitted", "EACCES"});
       },
       [](const failure_facts&) {
         return std::string("The run was denied permission (not executable or no access).");
       },
       [](const failure_facts& f) {
         auto ev = evidence(f, "permission denied");
         if (ev.empty()) ev = evidence(f, "not permitted");
         return "A file could not be executed or accessed" +
                (ev.empty() ? std::string(" (exit 126).") : ": " + ev);
       },
       "Make the script executable (chmod +x) or call it through its interpreter, and check "
       "the worker user's access to the files and directories involved."},
      {"killed", "high", 0.75,
       [](const failure_facts& f, const std::string&) -> std::string {
         return f.exit_code == 137 ? "-" : "";
       },
       [](const failure_facts&) {
         return std::string("The run was killed (SIGKILL, exit 137).");
       },
       [](const failure_facts&) {
         return std::string("Something sent SIGKILL: most often the kernel's OOM killer, "
                            "else an operator, a container runtime, or the job itself.");
       },
       "Check the worker's kernel log (dmesg) for OOM kills and its memory use at that time; "
       "set `memory_mb` to make a memory limit explicit, or give the run more memory."},
      {"signal", "medium", 0.6,
       [](const failure_facts& f, const std::string&) -> std::string {
         return f.kind == proto::task_kind::shell && f.exit_code > 128 && f.exit_code < 160 ? "-"
                                                                                           : "";
       },
       [](const failure_facts& f) {
         return "The run was terminated by signal " + std::to_string(f.exit_code - 128) + ".";
       },
       [](const failure_facts& f) {
         if (f.exit_code == 143) return std::string("It received SIGTERM (shutdown or stop).");
         if (f.exit_code == 139) return std::string("It crashed (SIGSEGV).");
         if (f.exit_code == 134) return std::string("It aborted (SIGABRT).");
         return std::string("A signal ended the process.");
       },
       "Check who stops the process (deploys, shutdowns) or why it crashes (core dump, "
       "output tail)."},
      {"cancelled", "low", 0.95,
       [](const failure_facts& f, const std::string&) -> std::string {
         return f.state == proto::instance_state::cancelled || f.error == "cancelled" ? "-" : "";
       },
       [](const failure_facts&) { return std::string("The run was cancelled."); },
       [](const failure_facts&) {
         return std::string("An operator or the cluster cancelled the run.");
       },
       "Nothing to fix unless the cancellation was unexpected; check the audit log."},
      {"nonzero_exit", "medium", 0.4,
       [](const failure_facts& f, const std::string&) -> std::string {
         return f.exit_code != 0 ? "-" : "";
       },
       [](const failure_facts& f) {
         return "The run exited with status " + code_str(f) + ".";
       },
       [](const failure_facts& f) {
         auto tail = f.output.size() > 200 ? f.output.substr(f.output.size() - 200) : f.output;
         return "The program reported a failure" +
                (tail.empty() ? std::string(" without output.") : "; output tail: " + tail);
       },
       "Read the output tail and the program's own logs for the failing step; reproduce with "
       "the same environment (SCHEDULE_INSTANCE_ID, SHARD_NO) on the worker."},
  };
  return table;
}

}  // namespace

std::string line_with(std::string_view text, std::string_view needle) {
  auto lt = lower(text);
  auto pos = lt.find(lower(needle));
  if (pos == std::string::npos) return {};
  auto begin = lt.rfind('\n', pos);
  begin = begin == std::string::npos ? 0 : begin + 1;
  auto end = lt.find('\n', pos);
  if (end == std::string::npos) end = lt.size();
  auto line = std::string(text.substr(begin, end - begin));
  auto first = line.find_first_not_of(" \t\r");
  auto last = line.find_last_not_of(" \t\r");
  line = first == std::string::npos ? "" : line.substr(first, last - first + 1);
  return line.size() > 200 ? line.substr(0, 200) : line;
}

failure_facts facts_of(const proto::instance& x, const proto::task* t) {
  failure_facts f;
  f.instance_id = x.id;
  f.state = x.state;
  f.exit_code = x.exit_code;
  f.error = x.error;
  f.output = x.output.size() > 4096 ? x.output.substr(x.output.size() - 4096) : x.output;
  f.attempt = x.attempt;
  if (t) {
    f.kind = t->kind;
    f.memory_mb = t->memory_mb;
    f.timeout = t->timeout;
    f.command = t->kind == proto::task_kind::http ? t->http.method + " " + t->http.url : t->command;
  }
  return f;
}

proto::failure_analysis analyze_by_rules(const failure_facts& f) {
  proto::failure_analysis a;
  a.instance_id = f.instance_id;
  a.source = "rules";
  if (f.state == proto::instance_state::success) {
    a.summary = "The run succeeded.";
    a.severity = "low";
    a.categories = {"none"};
    a.root_cause = "Nothing failed.";
    a.fix = "Nothing to fix.";
    a.confidence = 1.0;
    return a;
  }
  auto text = lower(f.error + "\n" + f.output);
  const rule* first = nullptr;
  for (auto& r : rules()) {
    if (r.match(f, text).empty()) continue;
    // The generic exit rule only names a cause when nothing specific did.
    if (first && std::string_view(r.category) == "nonzero_exit") continue;
    a.categories.emplace_back(r.category);
    if (!first) first = &r;
  }
  if (!first) {
    a.summary = f.error.empty() ? "The run failed without an error message."
                                : "The run failed: " + f.error;
    a.severity = "medium";
    a.categories = {"unknown"};
    a.root_cause = "No known failure pattern in the exit code, error or output.";
    a.fix = "Read the run's output and the worker's logs; an LLM analysis can help when configured.";
    a.confidence = 0.1;
    return a;
  }
  a.summary = first->summary(f);
  a.severity = first->severity;
  a.root_cause = first->root_cause(f);
  a.fix = first->fix;
  a.confidence = first->confidence;
  return a;
}

}  // namespace aisched::ai
