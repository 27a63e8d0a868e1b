// Process, HTTP and container execution of one attempt; see executor.hpp.
// It runs real processes on a pool thread, so it reads the system's clocks
// (common/clock.hpp; allowed by tests/layers/check_clock_injection.py): a
// simulation replaces the executor (issue 45 item 2), not its clock.
#include "actors/worker/executor.hpp"
#include "common/clock.hpp"
#include "common/curl_session.hpp"
#include "common/redactor.hpp"
#include "common/traceparent.hpp"

#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <chrono>
#include <cstring>
#include <filesystem>

#include <boost/json.hpp>
#include <strings.h>

namespace aisched::worker {

using namespace proto;
namespace fs = std::filesystem;

namespace {

/// Keeps the last `cap` bytes of everything appended, with the run's secret
/// values masked first (common/redactor), so neither the kept tail nor the
/// live chunks passed on to `live` ever hold one, even split across reads.
class tail_buffer {
 public:
  tail_buffer(size_t cap, const execute_request& req, const output_fn* live = nullptr)
      : cap_(cap), mask_(req.redact), live_(live) {}
  void append(std::string_view s) { keep(mask_.feed(s)); }
  std::string take() {
    keep(mask_.flush());
    if (data_.size() > cap_) data_.erase(0, data_.size() - cap_);
    return std::move(data_);
  }

 private:
  void keep(const std::string& s) {
    if (s.empty()) return;
    data_.append(s);
    if (data_.size() > 2 * cap_) data_.erase(0, data_.size() - cap_);
    if (live_ && *live_) (*live_)(s);
  }

  size_t cap_;
  redactor mask_;
  const output_fn* live_;
  std::string data_;
};

run_result base_result(const execute_request& req) {
  run_result r;
  r.instance_id = req.instance_id;
  r.started_at = system_now_ms();
  return r;
}

run_result finish(run_result r, instance_state s, int32_t code, std::string error,
                  std::string output) {
  r.state = s;
  r.exit_code = code;
  r.error = std::move(error);
  r.output = std::move(output);
  r.finished_at = system_now_ms();
  return r;
}

/// Reads what is left in the output pipe `fd` into `out`, until end of file
/// or for at most 200 ms (a writer that escaped the supervisor cannot hold
/// the run's end up).
void drain_output(int fd, tail_buffer& out) {
  auto until = steady_now() + std::chrono::milliseconds(200);
  char buf[8192];
  for (;;) {
    auto left =
        std::chrono::duration_cast<std::chrono::milliseconds>(until - steady_now()).count();
    if (left <= 0) return;
    pollfd p{fd, POLLIN, 0};
    int n = poll(&p, 1, static_cast<int>(left));
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) return;
    auto got = read(fd, buf, sizeof buf);
    if (got > 0) out.append(std::string_view(buf, static_cast<size_t>(got)));
    else if (got == 0 || (errno != EINTR && errno != EAGAIN)) return;
  }
}

/// Runs argv under a supervisor inside `dir` with `env`; see execute_task.
run_result run_process(const execute_request& req, const std::vector<std::string>& argv,
                       const std::string& dir, const std::vector<std::string>& env,
                       const run_user* user, const exec_options& opts,
                       const cancel_fn& cancelled, const output_fn& on_output) {
  auto r = base_result(req);
  spawn_spec spec;
  spec.supervisor = opts.supervisor;
  spec.argv = argv;
  spec.env = env;
  spec.dir = dir;
  spec.user = user;
  spec.namespaces = opts.namespaces;
  spec.own_network = opts.own_network;
  // Containers get the runtime's cgroup limit instead (--memory).
  if (req.memory_mb != 0 && req.kind != task_kind::container)
    spec.memory_bytes = static_cast<uint64_t>(req.memory_mb) * 1024 * 1024;
  supervised_run run;
  std::string spawn_error;
  if (!spawn_supervised(spec, run, spawn_error))
    return finish(r, instance_state::failed, -1, spawn_error, "");
  tail_buffer out(opts.output_cap, req, &on_output);
  auto deadline =
      steady_now() + std::chrono::milliseconds(req.timeout > 0 ? req.timeout : 3'600'000);
  bool timed_out = false, killed_by_cancel = false, eof = false, exited = false;
  bool status_open = true;
  int32_t code = 0;
  std::string setup_error;
  // After the shell exits, children it left behind may keep the pipe open; they
  // get this long to finish writing before everything of the run is killed.
  constexpr auto linger = std::chrono::milliseconds(200);
  std::chrono::steady_clock::time_point exited_at;
  std::vector<run_status> records;
  char buf[8192];
  while (!(eof && exited)) {
    pollfd p[2] = {{eof ? -1 : run.output_fd, POLLIN, 0},
                   {status_open ? run.status_fd : -1, POLLIN, 0}};
    int n = poll(p, 2, 50);
    if (n > 0 && (p[0].revents & (POLLIN | POLLHUP | POLLERR))) {
      auto got = read(run.output_fd, buf, sizeof buf);
      if (got > 0) {
        out.append(std::string_view(buf, static_cast<size_t>(got)));
      } else if (got == 0 || (errno != EINTR && errno != EAGAIN)) {
        eof = true;
      }
    }
    if (n > 0 && (p[1].revents & (POLLIN | POLLHUP | POLLERR))) {
      status_open = read_status(run.status_fd, records);
      for (auto& rec : records) {
        if (rec.kind == run_status::setup_failed && setup_error.empty())
          setup_error = describe_setup_failure(rec, user);
        if (rec.kind == run_status::exited && !exited) {
          exited = true;
          code = rec.code;
          exited_at = steady_now();
        }
      }
      records.clear();
      if (!status_open && !exited) {
        // The supervisor is gone without a report: it failed to set the run up or
        // was killed; either way the run is over.
        exited = true;
        code = setup_error.empty() ? 128 + SIGKILL : 126;
        exited_at = steady_now();
      }
    }
    // Output closed but the process still runs (it redirected its output): the
    // poll above keeps waiting on the status pipe, the checks below still apply.
    if (exited && !eof && steady_now() - exited_at > linger)
      break;  // leftover children holding the pipe: the run is over
    if (!exited) {
      if (cancelled()) {
        killed_by_cancel = true;
        break;
      }
      if (steady_now() >= deadline) {
        timed_out = true;
        break;
      }
    }
  }
  // Nothing of the run survives it: the supervisor kills what is left, then exits.
  terminate_supervised(run);
  // A cancel or timeout stops reading at once: what the run wrote up to its
  // end is still in the pipe, and is its output too (its writers are gone now).
  if (!eof) drain_output(run.output_fd, out);
  close(run.output_fd);
  close(run.status_fd);
  if (killed_by_cancel || timed_out) code = 128 + SIGKILL;
  if (killed_by_cancel) return finish(r, instance_state::failed, code, "cancelled", out.take());
  if (timed_out)
    return finish(r, instance_state::timed_out, code,
                  "timed out after " + format_duration(req.timeout), out.take());
  if (!setup_error.empty()) return finish(r, instance_state::failed, code, setup_error, out.take());
  if (code == 0) return finish(r, instance_state::success, 0, "", out.take());
  std::string error = "exit status " + std::to_string(code);
  if (code == 127) error += " (command not found)";
  if (code == 126) error += " (cannot execute)";
  return finish(r, instance_state::failed, code, error, out.take());
}

/// Whether the task's own headers include `name` (header names are case-insensitive).
bool has_header(const execute_request& req, const char* name) {
  for (auto& [k, v] : req.http.headers)
    if (strcasecmp(k.c_str(), name) == 0) return true;
  return false;
}

/// Whether `body` is one JSON document (what a task author writing `{"a":1}` means).
bool is_json(const std::string& body) {
  boost::system::error_code ec;
  boost::json::parse(body, ec);
  return !ec;
}

run_result run_http(const execute_request& req, const exec_options& opts,
                    const cancel_fn& cancelled) {
  auto r = base_result(req);
  tail_buffer out(opts.output_cap, req);
  for (auto& [k, v] : req.http.headers)
    if ((k + v).find_first_of("\r\n") != std::string::npos)  // tasks stored before validation
      return finish(r, instance_state::failed, -1,
                    "http.headers." + k.substr(0, k.find_first_of("\r\n")) +
                        ": must not contain CR or LF",
                    "");
  http::curl_request call;
  call.method = req.http.method;
  call.url = req.http.url;
  for (auto& [k, v] : req.http.headers) call.headers.push_back(k + ": " + v);
  // curl would label a body application/x-www-form-urlencoded, which a JSON API
  // refuses or misreads; the task's own Content-Type wins.
  if (!req.http.body.empty() && !has_header(req, "Content-Type") && is_json(req.http.body))
    call.headers.push_back("Content-Type: application/json");
  for (auto& kv : run_environment(req, "")) {
    // The run's identity travels as headers too: IDEMPOTENCY_KEY -> Idempotency-Key ...
    auto eq = kv.find('=');
    auto name = kv.substr(0, eq);
    if (name == "PATH" || name == "HOME" || name.rfind("AISCHED_EVENT_", 0) == 0 ||
        req.secret_env.count(name))
      continue;  // secrets reach an HTTP task only where it places {{secret.NAME}}
    std::string header;
    bool upper = true;
    for (char ch : name) {
      if (ch == '_') {
        header += '-';
        upper = true;
      } else {
        header += upper ? ch : static_cast<char>(std::tolower(static_cast<unsigned char>(ch)));
        upper = false;
      }
    }
    call.headers.push_back(header + ": " + kv.substr(eq + 1));
  }
  // W3C trace context, unless the task sets its own.
  if (auto tp = http::traceparent(req.trace_id); !tp.empty() && !has_header(req, "traceparent"))
    call.headers.push_back("traceparent: " + tp);
  if (!req.http.body.empty()) call.body = req.http.body;
  call.timeout = std::chrono::milliseconds(req.timeout > 0 ? req.timeout : 3'600'000);
  call.on_data = [&out](long, std::string_view bytes) {
    out.append(bytes);  // the response is the run's output, whatever its status
    return true;
  };
  call.cancelled = cancelled;
  auto got = http::perform(call);
  switch (got.outcome) {
    case http::curl_outcome::cancelled:
      return finish(r, instance_state::failed, -1, "cancelled", out.take());
    case http::curl_outcome::timed_out:
      return finish(r, instance_state::timed_out, -1,
                    "timed out after " + format_duration(req.timeout), out.take());
    case http::curl_outcome::ok:
    case http::curl_outcome::stopped:
      break;
    case http::curl_outcome::failed:
      return finish(r, instance_state::failed, -1, got.error, out.take());
  }
  auto status = static_cast<int32_t>(got.status);
  if (status >= 200 && status < 300) return finish(r, instance_state::success, status, "", out.take());
  return finish(r, instance_state::failed, status, "HTTP status " + std::to_string(status),
                out.take());
}

std::string find_in_path(const char* name) {
  for (const char* dir : {"/usr/local/bin", "/usr/bin", "/bin"}) {
    auto p = std::string(dir) + "/" + name;
    if (access(p.c_str(), X_OK) == 0) return p;
  }
  return {};
}

}  // namespace

std::vector<std::string> run_environment(const execute_request& req, const std::string& home) {
  std::vector<std::string> env{
      "PATH=/usr/local/bin:/usr/bin:/bin",
      "HOME=" + home,
      "IDEMPOTENCY_KEY=" + req.idempotency_key,
      "SHARD_NO=" + std::to_string(req.shard),
      "SHARD_TOTAL=" + std::to_string(req.shards),
      "SCHEDULE_INSTANCE_ID=" + req.instance_id,
      "ATTEMPT=" + std::to_string(req.attempt),
      "TRACE_ID=" + req.trace_id,
      "TASK_ID=" + std::to_string(req.task_id),
  };
  // Event values, referred to by the command; names never shadow the ones above.
  for (auto& [name, value] : req.env)
    if (name.rfind("AISCHED_EVENT_", 0) == 0) env.push_back(name + "=" + value);
  // The task's secrets (validated names: none shadows the variables above).
  for (auto& [name, value] : req.secret_env) env.push_back(name + "=" + value);
  return env;
}

run_result execute_task(const execute_request& req, const exec_options& opts,
                        const cancel_fn& cancelled, const output_fn& on_output) {
  switch (req.kind) {
    case task_kind::noop: {
      auto r = base_result(req);
      return finish(r, instance_state::success, 0, "", "");
    }
    case task_kind::http:
      return run_http(req, opts, cancelled);
    case task_kind::shell:
    case task_kind::container:
      break;
  }
  // A scratch directory per attempt, outside the data dir, owned by the run's user,
  // removed afterwards (by the node, so a run cannot keep it). Its name keeps only
  // safe characters of the id, so no id can point it outside the scratch root.
  std::string name = "run-";
  for (char c : req.instance_id)
    name += (std::isalnum(static_cast<unsigned char>(c)) || c == '-' || c == '_') ? c : '_';
  name += "-" + std::to_string(req.attempt);
  // A container's command runs inside the container; the runtime's client needs the
  // node's user (its socket), so only shell commands switch users on the host.
  const run_user* user = nullptr;
  if (req.kind == task_kind::shell) {
    auto mapped = opts.tenant_users.find(req.tenant);
    user = mapped != opts.tenant_users.end() ? &mapped->second : &opts.user;
  }
  static const run_user node_user;
  std::string error;
  auto dir = make_run_dir(opts.scratch_root, name, user ? *user : node_user, error);
  if (dir.empty()) {
    auto r = base_result(req);
    return finish(r, instance_state::failed, -1, error, "");
  }
  std::error_code ec;
  auto env = run_environment(req, dir);
  std::vector<std::string> argv;
  if (req.kind == task_kind::shell) {
    // The command is the only field that reaches a shell; nothing else is interpolated.
    argv = {"/bin/sh", "-c", req.command};
  } else {
    auto runtime = find_in_path("podman");
    if (runtime.empty()) runtime = find_in_path("docker");
    if (runtime.empty()) {
      fs::remove_all(dir, ec);
      auto r = base_result(req);
      return finish(r, instance_state::failed, 127,
                    "no container runtime: install docker or podman on this worker", "");
    }
    argv = {runtime, "run", "--rm"};
    if (req.memory_mb != 0) argv.push_back("--memory=" + std::to_string(req.memory_mb) + "m");
    for (auto& kv : env)
      if (kv.rfind("PATH=", 0) != 0 && kv.rfind("HOME=", 0) != 0) {
        // `-e NAME` takes the value from the client's environment (set to `env`):
        // values stay out of argv, where any local user could read them.
        argv.push_back("-e");
        argv.push_back(kv.substr(0, kv.find('=')));
      }
    argv.push_back(req.image);
    if (!req.command.empty()) {
      argv.push_back("/bin/sh");
      argv.push_back("-c");
      argv.push_back(req.command);
    }
  }
  auto r = run_process(req, argv, dir, env, user, opts, cancelled, on_output);
  fs::remove_all(dir, ec);
  return r;
}

}  // namespace aisched::worker
