// aisched-chaos, process control: fork/exec of the group's `aisched`
// processes, their signals and restarts, the pid registry that every exit
// path kills, and the /proc scans of the orphan check; see process_control.hpp.
#include "tools/chaos/process_control.hpp"

#include <arpa/inet.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <sched.h>
#include <signal.h>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <array>
#include <atomic>
#include <cerrno>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <mutex>
#include <random>
#include <regex>
#include <sstream>
#include <stdexcept>
#include <thread>

#include "tools/chaos/network.hpp"
#include "tools/common/http_client.hpp"

namespace aisched::chaos {

namespace fs = std::filesystem;
using namespace std::chrono_literals;

// -- the pid registry ----------------------------------------------------------

namespace {

// Lock-free, fixed size: the signal handler reads it.
std::array<std::atomic<pid_t>, 64> registry{};
std::atomic<bool> stop_flag{false};
std::mutex root_mu;
std::string group_root;  // the live group's directory, for the hard deadline

void register_pid(pid_t pid) {
  for (auto& slot : registry) {
    pid_t empty = 0;
    if (slot.compare_exchange_strong(empty, pid)) return;
  }
  // More live processes than slots would be a harness bug: never lose one.
  kill(pid, SIGKILL);
  throw std::runtime_error("pid registry full");
}

void unregister_pid(pid_t pid) {
  for (auto& slot : registry) {
    pid_t expected = pid;
    if (slot.compare_exchange_strong(expected, 0)) return;
  }
}

extern "C" void on_stop_signal(int) {
  // A second signal means "now": the first one's orderly exit is taking too long.
  if (stop_flag.exchange(true)) {
    kill_registered_processes();
    _exit(2);
  }
  kill_registered_processes();
}

void sleep_for(std::chrono::milliseconds d) { std::this_thread::sleep_for(d); }

std::string read_from(const std::string& path, size_t offset) {
  std::ifstream in(path, std::ios::binary);
  if (!in) return "";
  in.seekg(0, std::ios::end);
  auto size = static_cast<size_t>(in.tellg());
  if (offset >= size) return "";
  in.seekg(static_cast<std::streamoff>(offset));
  std::string out(size - offset, '\0');
  in.read(out.data(), static_cast<std::streamsize>(out.size()));
  out.resize(static_cast<size_t>(in.gcount()));
  return out;
}

size_t file_size_or_zero(const std::string& path) {
  std::error_code ec;
  auto n = fs::file_size(path, ec);
  return ec ? 0 : static_cast<size_t>(n);
}

std::string tail_of(const std::string& text, size_t n = 1500) {
  return text.size() > n ? "..." + text.substr(text.size() - n) : text;
}

std::string describe_status(int status) {
  if (WIFEXITED(status)) return "exited with status " + std::to_string(WEXITSTATUS(status));
  if (WIFSIGNALED(status)) return std::string("killed by signal ") + strsignal(WTERMSIG(status));
  return "ended (wait status " + std::to_string(status) + ")";
}

}  // namespace

void kill_registered_processes() noexcept {
  for (auto& slot : registry) {
    pid_t pid = slot.load();
    if (pid > 0) kill(pid, SIGKILL);  // a stopped process dies of SIGKILL too
  }
}

void install_cleanup_handlers() {
  struct sigaction sa {};
  sa.sa_handler = on_stop_signal;
  sigemptyset(&sa.sa_mask);
  for (int sig : {SIGINT, SIGTERM, SIGHUP}) sigaction(sig, &sa, nullptr);
  std::atexit([] { kill_registered_processes(); });
}

bool stop_requested() { return stop_flag.load(); }

void kill_everything_and_clean_up() {
  kill_registered_processes();
  std::lock_guard<std::mutex> lock(root_mu);
  if (!group_root.empty() && !std::getenv("AISCHED_CHAOS_KEEP")) {
    std::error_code ec;
    fs::remove_all(group_root, ec);
  }
}

uint16_t free_loopback_port() {
  int fd = ::socket(AF_INET, SOCK_STREAM, 0);
  if (fd < 0) return 0;
  sockaddr_in addr{};
  addr.sin_family = AF_INET;
  addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  socklen_t len = sizeof addr;
  uint16_t port = 0;
  if (::bind(fd, reinterpret_cast<sockaddr*>(&addr), sizeof addr) == 0 &&
      ::getsockname(fd, reinterpret_cast<sockaddr*>(&addr), &len) == 0)
    port = ntohs(addr.sin_port);
  ::close(fd);
  return port;
}

// -- node ----------------------------------------------------------------------

node::node(kind k, std::string id, std::string binary, std::vector<std::string> args,
           std::string log_path, network& net, int slot)
    : kind_(k), id_(std::move(id)), binary_(std::move(binary)), args_(std::move(args)),
      log_path_(std::move(log_path)), net_(net), slot_(slot) {}

std::string node::http_endpoint() const {
  return pid_ > 0 && http_port_ != 0 ? net_.host_of(slot_) + ":" + std::to_string(http_port_)
                                     : "";
}

node::~node() {
  if (pid_ > 0) signal(SIGKILL);
}

std::string node::current_log() const { return read_from(log_path_, log_offset_); }

std::string node::start(clock::time_point deadline) {
  if (pid_ > 0) signal(SIGKILL);
  std::vector<std::string> args{binary_};
  args.insert(args.end(), args_.begin(), args_.end());
  std::vector<char*> argv;
  for (auto& a : args) argv.push_back(a.data());
  argv.push_back(nullptr);
  log_offset_ = file_size_or_zero(log_path_);
  http_port_ = 0;
  stopped_ = false;
  unexpected_exit_ = -1;
  ++starts_;
  // With namespaces the child waits, in its own, until the harness has given
  // it its link: the node must find its address when it binds.
  bool own_ns = net_.enabled();
  int gate[2] = {-1, -1}, ready[2] = {-1, -1};  // harness -> node, node -> harness
  if (own_ns && (pipe2(gate, O_CLOEXEC) != 0 || pipe2(ready, O_CLOEXEC) != 0))
    return id_ + ": pipe failed: " + strerror(errno);
  auto parent = getpid();
  pid_t pid = fork();
  if (pid < 0) return id_ + ": fork failed: " + strerror(errno);
  if (pid == 0) {
    // Between fork and exec only async-signal-safe calls (the harness has threads).
    prctl(PR_SET_PDEATHSIG, SIGKILL);  // never outlive the harness, even if it crashes
    if (getppid() != parent) _exit(126);
    if (own_ns) {
      char go = 0;
      close(gate[1]);
      close(ready[0]);
      if (unshare(CLONE_NEWNET) != 0) _exit(124);
      if (write(ready[1], "r", 1) != 1 || read(gate[0], &go, 1) != 1) _exit(123);
    }
    int in = ::open("/dev/null", O_RDONLY);
    int out = ::open(log_path_.c_str(), O_WRONLY | O_CREAT | O_APPEND, 0644);
    if (in < 0 || out < 0) _exit(125);
    dup2(in, 0);
    dup2(out, 1);
    dup2(out, 2);
    execv(argv[0], argv.data());
    _exit(127);
  }
  pid_ = pid;
  register_pid(pid);
  if (own_ns) {
    close(gate[0]);
    close(ready[1]);
    char r = 0;
    // The link can move only into the node's namespace, once it has one.
    std::string err = read(ready[0], &r, 1) == 1 ? net_.attach(pid, slot_)
                                                 : "the node did not unshare its network";
    if (err.empty() && write(gate[1], "g", 1) != 1) err = "cannot release the node";
    close(gate[1]);
    close(ready[0]);
    if (!err.empty()) {
      signal(SIGKILL);
      return id_ + ": " + err;
    }
  }

  static const std::regex listening(R"re("msg":"http listening","addr":"[^"]*:(\d+)")re");
  while (steady_now() < deadline && !stop_requested()) {
    if (!running())
      return id_ + " " + describe_status(unexpected_exit_) + " while starting; log:\n" +
             tail_of(current_log());
    auto log = current_log();
    if (kind_ == kind::worker) {
      if (log.find(R"("msg":"worker node started")") != std::string::npos) return "";
    } else if (http_port_ == 0) {
      std::smatch m;
      if (std::regex_search(log, m, listening)) http_port_ = static_cast<uint16_t>(std::stoi(m[1]));
    } else {
      // Listening is not serving yet: wait until the API answers.
      tools::http_client c("http://" + net_.host_of(slot_) + ":" + std::to_string(http_port_),
                           {"", 1s});
      if (c.call("GET", "/healthz").status == 200) return "";
    }
    sleep_for(50ms);
  }
  auto log = current_log();
  signal(SIGKILL);
  return id_ + " did not come up in time; log:\n" + tail_of(log);
}

void node::signal(int sig) {
  if (pid_ <= 0) return;
  ::kill(pid_, sig);
  if (sig == SIGSTOP) stopped_ = true;
  if (sig == SIGCONT) stopped_ = false;
  if (sig != SIGKILL) return;
  int status = 0;
  while (waitpid(pid_, &status, 0) < 0 && errno == EINTR) {
  }
  unregister_pid(pid_);
  pid_ = -1;
  stopped_ = false;
}

void node::stop(std::chrono::milliseconds grace) {
  if (pid_ <= 0) return;
  if (stopped_) signal(SIGCONT);
  ::kill(pid_, SIGTERM);
  auto until = steady_now() + grace;
  while (steady_now() < until) {
    if (!running()) return;
    sleep_for(50ms);
  }
  signal(SIGKILL);
}

bool node::running() {
  if (pid_ <= 0) return false;
  int status = 0;
  if (waitpid(pid_, &status, WNOHANG) == pid_) reap(status);
  return pid_ > 0;
}

void node::reap(int status) {
  unexpected_exit_ = status;
  unregister_pid(pid_);
  pid_ = -1;
  stopped_ = false;
}

// -- group ---------------------------------------------------------------------

group::group(std::string binary, network& net) : net_(net), binary_(std::move(binary)) {
  std::random_device rd;
  std::ostringstream name;
  name << "aisched-chaos-" << getpid() << "-" << std::hex << rd() << rd();
  marker_ = name.str();
  // RocksDB syncs often; on this busy disk tmpfs keeps fsync out of the timings.
  fs::path base = std::getenv("TMPDIR") || !fs::is_directory("/dev/shm")
                      ? fs::temp_directory_path()
                      : fs::path("/dev/shm");
  root_ = (base / marker_).string();
  std::error_code ec;
  if (!fs::create_directories(root_, ec)) throw std::runtime_error("cannot create " + root_);
  chmod(root_.c_str(), 0755);
  {
    std::lock_guard<std::mutex> lock(root_mu);
    group_root = root_;
  }
  auto side = root_ + "/side";
  // Runs may execute as another user (nobody, when the nodes run as root).
  if (mkdir(side.c_str(), 0777) != 0 || chmod(side.c_str(), 0777) != 0)
    throw std::runtime_error("cannot create " + side);
  effects_ = side + "/effects";
  std::ofstream(effects_).flush();
  if (chmod(effects_.c_str(), 0666) != 0) throw std::runtime_error("cannot create " + effects_);

  while (cluster_ports_.size() < 3) {
    auto p = free_loopback_port();
    if (p == 0) throw std::runtime_error("no free loopback port");
    if (std::find(cluster_ports_.begin(), cluster_ports_.end(), p) == cluster_ports_.end())
      cluster_ports_.push_back(p);
  }
  for (size_t i = 0; i < 3; ++i)
    peers_ += (i ? "," : "") + ("n" + std::to_string(i + 1)) + "=" +
              net_.host_of(int(i) + 1) + ":" + std::to_string(cluster_ports_[i]);
  for (size_t i = 0; i < 3; ++i) {
    auto id = "n" + std::to_string(i + 1);
    auto host = net_.host_of(int(i) + 1);
    members_.push_back(std::make_unique<node>(
        node::kind::member, id, binary_,
        std::vector<std::string>{"--node-id", id, "--peers", peers_, "--data-dir",
                                 root_ + "/" + id, "--scratch-dir", root_ + "/" + id + "-runs",
                                 "--http-addr", host + ":0", "--cluster-addr",
                                 host + ":" + std::to_string(cluster_ports_[i])},
        root_ + "/" + id + ".log", net_, int(i) + 1));
  }
  worker_ = std::make_unique<node>(node::kind::worker, "w1", binary_, worker_args(0),
                                   root_ + "/w1.log", net_, 4);
}

group::~group() {
  for (auto& m : members_) m->signal(SIGKILL);
  worker_->signal(SIGKILL);
  std::lock_guard<std::mutex> lock(root_mu);
  if (!std::getenv("AISCHED_CHAOS_KEEP")) {
    std::error_code ec;
    fs::remove_all(root_, ec);
  }
  group_root.clear();
}

std::vector<std::string> group::worker_args(size_t join_via) const {
  return {"--node-id", "w1", "--roles", "worker", "--join",
          net_.host_of(int(join_via) + 1) + ":" + std::to_string(cluster_ports_.at(join_via)),
          "--data-dir", root_ + "/w1", "--scratch-dir", root_ + "/w1-runs", "--cluster-addr",
          net_.host_of(4) + ":0"};
}

std::string group::start(clock::time_point deadline) {
  for (auto& m : members_)
    if (auto err = m->start(deadline); !err.empty()) return err;
  return worker_->start(deadline);
}

std::string group::restart(node& n, clock::time_point deadline, size_t join_via) {
  if (&n == worker_.get()) n.set_args(worker_args(join_via));
  return n.start(deadline);
}

std::map<std::string, std::string> group::member_logs() const {
  std::map<std::string, std::string> out;
  for (auto& m : members_) out[m->id()] = m->log_path();
  return out;
}

std::string group::cluster_addr(const node& n) const {
  return net_.host_of(n.slot()) + ":" + std::to_string(cluster_ports_.at(size_t(n.slot()) - 1));
}

void group::stop_all(std::chrono::milliseconds grace) {
  worker_->stop(grace);
  for (auto& m : members_) m->stop(grace);
}

std::vector<node*> group::members() {
  std::vector<node*> out;
  for (auto& m : members_) out.push_back(m.get());
  return out;
}

node* group::member(const std::string& id) {
  for (auto& m : members_)
    if (m->id() == id) return m.get();
  return nullptr;
}

// -- /proc scans ---------------------------------------------------------------

std::string command_line(pid_t pid) {
  std::ifstream in("/proc/" + std::to_string(pid) + "/cmdline", std::ios::binary);
  std::string s((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  for (auto& c : s)
    if (c == '\0') c = ' ';
  while (!s.empty() && s.back() == ' ') s.pop_back();
  return s;
}

std::vector<pid_t> processes_with_marker(const std::string& marker) {
  std::vector<pid_t> out;
  std::error_code ec;
  for (auto& e : fs::directory_iterator("/proc", ec)) {
    auto name = e.path().filename().string();
    if (name.empty() || name.find_first_not_of("0123456789") != std::string::npos) continue;
    auto pid = static_cast<pid_t>(std::stol(name));
    if (pid == getpid()) continue;
    if (command_line(pid).find(marker) != std::string::npos) out.push_back(pid);
  }
  return out;
}

}  // namespace aisched::chaos
