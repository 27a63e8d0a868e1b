// Process harness and HTTP client for integration tests; see node_process.hpp.
#include "support/node_process.hpp"

#include <fcntl.h>
#include <signal.h>
#include <sys/prctl.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cctype>
#include <filesystem>
#include <fstream>
#include <random>
#include <regex>
#include <sstream>

#include <boost/asio.hpp>
#include <boost/beast.hpp>
#include <gtest/gtest.h>

namespace aisched::test {

namespace fs = std::filesystem;

namespace {

/// Sends `sig` to child `pid` and reaps it (SIGKILL after `timeout`); returns
/// its wait status, or -1 if it had to be killed. Sets `pid` to -1.
int stop_child(pid_t& pid, int sig, std::chrono::milliseconds timeout) {
  if (pid <= 0) return -1;
  kill(pid, sig);
  int status = 0;
  bool exited = eventually([&] { return waitpid(pid, &status, WNOHANG) == pid; }, timeout);
  if (!exited) {
    kill(pid, SIGKILL);
    waitpid(pid, &status, 0);
  }
  pid = -1;
  return exited ? status : -1;
}

/// Forks and execs `args` (args[0] is the program's path) with stdin from
/// `in_path` and stdout / stderr appended to `out_path` / `err_path` (the same
/// path: one interleaved log). The child never outlives the test binary.
/// Returns its pid, or -1 if fork failed.
pid_t spawn_child(const std::vector<std::string>& args, const std::string& in_path,
                  const std::string& out_path, const std::string& err_path) {
  std::vector<char*> argv;
  for (auto& a : args) argv.push_back(const_cast<char*>(a.c_str()));
  argv.push_back(nullptr);
  auto parent = getpid();
  pid_t pid = fork();
  if (pid == 0) {
    // Never outlive the test binary, even if it crashes (or died before prctl).
    prctl(PR_SET_PDEATHSIG, SIGKILL);
    if (getppid() != parent) _exit(126);
    int in = ::open(in_path.c_str(), O_RDONLY);
    int out = ::open(out_path.c_str(), O_WRONLY | O_CREAT | O_APPEND, 0644);
    int err = err_path == out_path ? out : ::open(err_path.c_str(), O_WRONLY | O_CREAT | O_APPEND, 0644);
    dup2(in, 0);
    dup2(out, 1);
    dup2(err, 2);
    execv(argv[0], argv.data());
    _exit(127);
  }
  return pid;
}

/// Whether every thread of `pid` is in the stopped state ('T' in /proc/PID/task/*/stat).
bool all_threads_stopped(pid_t pid) {
  std::error_code ec;
  fs::directory_iterator tasks("/proc/" + std::to_string(pid) + "/task", ec);
  if (ec) return false;
  bool any = false;
  for (auto& t : tasks) {
    std::ifstream in(t.path() / "stat");
    std::string line;
    if (!std::getline(in, line)) continue;  // the thread has just exited
    auto close = line.rfind(')');           // the name may hold spaces and parentheses
    if (close == std::string::npos || close + 2 >= line.size()) return false;
    if (line[close + 2] != 'T') return false;
    any = true;
  }
  return any;
}

std::string read_file(const std::string& path) {
  std::ifstream in(path);
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

}  // namespace

temp_dir::temp_dir() {
  std::random_device rd;
  auto base = fs::temp_directory_path() / ("aisched-test-" + std::to_string(getpid()) + "-" +
                                           std::to_string(rd()));
  fs::create_directories(base);
  path_ = base.string();
}

temp_dir::~temp_dir() {
  std::error_code ec;
  fs::remove_all(path_, ec);
}

bool freeze(pid_t pid, std::chrono::milliseconds timeout) {
  if (pid <= 0 || kill(pid, SIGSTOP) != 0) return false;
  return eventually([&] { return all_threads_stopped(pid); }, timeout);
}

node_process::node_process(std::string data_dir, std::vector<std::string> extra_args,
                           std::chrono::milliseconds timeout, std::string cluster_addr)
    : data_dir_(std::move(data_dir)) {
  log_path_ = data_dir_ + ".log";
  // The log lies beside the data directory: its parent must exist before the
  // child opens it (the node creates only the data directory itself).
  std::error_code made;
  fs::create_directories(fs::path(log_path_).parent_path(), made);
  std::vector<std::string> args{AISCHED_BINARY, "--data-dir",     data_dir_,
                                "--http-addr",  "127.0.0.1:0",  "--cluster-addr",
                                std::move(cluster_addr)};
  args.insert(args.end(), extra_args.begin(), extra_args.end());
  pid_ = fork();
  if (pid_ == 0) {
    // Never outlive the test binary, even if it crashes.
    prctl(PR_SET_PDEATHSIG, SIGKILL);
    int fd = ::open(log_path_.c_str(), O_WRONLY | O_CREAT | O_APPEND, 0644);
    dup2(fd, 1);
    dup2(fd, 2);
    std::vector<char*> argv;
    for (auto& a : args) argv.push_back(const_cast<char*>(a.c_str()));
    argv.push_back(nullptr);
    execv(argv[0], argv.data());
    _exit(127);
  }
  // Wait for this incarnation's "http listening" line (the log file is appended
  // across restarts, so count lines seen before we started).
  auto before = log();
  std::regex listening(R"re("msg":"http listening","addr":"127\.0\.0\.1:(\d+)")re");
  bool up = eventually(
      [&] {
        auto text = log();
        auto tail = text.substr(std::min(before.size(), text.size()));
        std::smatch m;
        if (std::regex_search(tail, m, listening)) {
          http_port_ = static_cast<uint16_t>(std::stoi(m[1]));
          return true;
        }
        int status;
        if (waitpid(pid_, &status, WNOHANG) == pid_) {
          pid_ = -1;
          return true;  // exited early; reported below
        }
        return false;
      },
      timeout);
  // Listening is not serving yet: wait until the API answers.
  if (up && pid_ > 0 && http_port_ != 0)
    up = eventually([&] { return http_call(http_port_, "GET", "/healthz").status == 200; },
                    timeout);
  if (!up || pid_ < 0 || http_port_ == 0) {
    ADD_FAILURE() << "aisched did not start; log:\n" << log();
    if (pid_ > 0) stop(SIGKILL);
    http_port_ = 0;
  }
}

node_process::~node_process() {
  if (pid_ > 0) stop(SIGKILL);
  std::error_code ec;
  fs::remove(log_path_, ec);
}

int node_process::stop(int sig, std::chrono::milliseconds timeout) {
  return stop_child(pid_, sig, timeout);
}

std::string node_process::log() const { return read_file(log_path_); }

child_process::child_process(std::vector<std::string> args, std::string log_path)
    : log_path_(std::move(log_path)) {
  pid_ = spawn_child(args, "/dev/null", log_path_, log_path_);
  if (pid_ < 0) ADD_FAILURE() << "fork failed for " << args.at(0);
}

child_process::~child_process() {
  if (pid_ > 0) stop(SIGKILL);
}

bool child_process::running() {
  if (pid_ <= 0) return false;
  int status;
  if (waitpid(pid_, &status, WNOHANG) == pid_) pid_ = -1;
  return pid_ > 0;
}

int child_process::stop(int sig, std::chrono::milliseconds timeout) {
  return stop_child(pid_, sig, timeout);
}

std::string child_process::log() const { return read_file(log_path_); }

std::string child_process::await_log(const std::string& pattern, std::chrono::milliseconds timeout,
                                     size_t from) {
  std::regex re(pattern);
  std::string found;
  eventually(
      [&] {
        auto text = log();
        auto tail = text.substr(std::min(from, text.size()));
        std::smatch m;
        if (std::regex_search(tail, m, re)) {
          found = m.size() > 1 ? m[1].str() : m[0].str();
          return true;
        }
        return !running();
      },
      timeout);
  return found;
}

command_result run_command(const std::vector<std::string>& args, std::chrono::milliseconds timeout,
                           const std::string& input) {
  temp_dir dir;
  auto in = dir.path() + "/stdin", out = dir.path() + "/stdout", err = dir.path() + "/stderr";
  std::ofstream(in) << input;
  pid_t pid = spawn_child(args, in, out, err);
  command_result r;
  if (pid < 0) {
    ADD_FAILURE() << "fork failed for " << args.at(0);
    return r;
  }
  int status = 0;
  if (!eventually([&] { return waitpid(pid, &status, WNOHANG) == pid; }, timeout)) {
    kill(pid, SIGKILL);
    waitpid(pid, &status, 0);
    ADD_FAILURE() << args.at(0) << " did not finish within " << timeout.count() << " ms";
  } else if (WIFEXITED(status)) {
    r.exit_code = WEXITSTATUS(status);
  }
  r.out = read_file(out);
  r.err = read_file(err);
  return r;
}

http_result http_call(uint16_t port, const std::string& method, const std::string& target,
                      const std::string& body, std::chrono::milliseconds timeout,
                      const std::map<std::string, std::string>& headers) {
  namespace asio = boost::asio;
  namespace beast = boost::beast;
  namespace http = beast::http;
  http_result out;
  try {
    // Asynchronous operations, because tcp_stream's deadline only bounds those: a
    // frozen (SIGSTOPped) server accepts the connection in the kernel and never answers.
    asio::io_context ioc;
    beast::tcp_stream stream(ioc);
    stream.expires_after(timeout);  // one deadline for the whole exchange
    http::request<http::string_body> req{http::string_to_verb(method), target, 11};
    req.set(http::field::host, "127.0.0.1");
    req.set(http::field::content_type, "application/json");
    for (auto& [name, value] : headers) req.set(name, value);
    req.body() = body;
    req.prepare_payload();
    beast::flat_buffer buf;
    http::response<http::string_body> res;
    beast::error_code result = asio::error::would_block;
    auto read = [&] {
      http::async_read(stream, buf, res, [&](beast::error_code ec, size_t) { result = ec; });
    };
    stream.async_connect(
        asio::ip::tcp::endpoint(asio::ip::make_address("127.0.0.1"), port),
        [&](beast::error_code ec) {
          if (ec) {
            result = ec;
            return;
          }
          // A server may answer (e.g. 413) before the whole body is sent; read its
          // answer anyway.
          http::async_write(stream, req, [&](beast::error_code, size_t) { read(); });
        });
    ioc.run();
    if (result) {
      out.body = result.message();
      return out;
    }
    out.status = res.result_int();
    out.body = res.body();
    out.content_type = std::string(res[http::field::content_type]);
    for (auto& h : res) {
      std::string name(h.name_string());
      for (auto& c : name) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
      out.headers[name] = std::string(h.value());
    }
    out.allow = std::string(res[http::field::allow]);
    beast::error_code ec;
    stream.socket().shutdown(asio::ip::tcp::socket::shutdown_both, ec);
  } catch (const std::exception& e) {
    out.status = 0;
    out.body = e.what();
  }
  return out;
}

}  // namespace aisched::test
