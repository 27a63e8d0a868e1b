// aisched-inspect: shows the actors running on one aisched node. Connects over
// CAF to the node's cluster port, passes its gatekeeper (proving the cluster
// secret with --cluster-secret-file), asks the endpoint for the node's
// inspector and the inspector for a node_summary; prints it as a table or
// JSON, once or every --interval with --watch.
// Exit codes: 0 ok, 1 cannot connect / not admitted / no answer in time, 2 usage.
#include <atomic>
#include <chrono>
#include <csignal>
#include <iostream>
#include <set>
#include <string>
#include <thread>

#include <CLI/CLI.hpp>
#include <boost/json.hpp>
#include <caf/actor_system.hpp>
#include <caf/actor_system_config.hpp>
#include <caf/io/middleman.hpp>
#include <caf/scoped_actor.hpp>

#include "common/clock.hpp"
#include "common/cluster_link.hpp"
#include "proto/cluster_link_auth.hpp"
#include "proto/errors.hpp"
#include "proto/inspection.hpp"
#include "proto/interfaces.hpp"
#include "proto/registry.hpp"
#include "tools/aisched-inspect/render.hpp"
#include "tools/aischedctl/output.hpp"

using namespace aisched;
using namespace std::chrono_literals;

namespace {

std::atomic<bool> interrupted{false};

extern "C" void on_interrupt(int) { interrupted = true; }

struct options {
  std::string host;
  uint16_t port = 0;
  bool json = false;
  bool watch = false;
  duration_ms interval = 1000;
  duration_ms timeout = 3000;
  uint64_t count = 0;  // --watch: rounds (0: until Ctrl-C)
  std::string cluster_secret;  // "" without --cluster-secret-file
};

/// Parses the command line into `opts`; returns the exit code when the tool
/// should stop now (help: 0, usage error: 2), -1 to go on.
int parse(int argc, char** argv, options& opts) {
  CLI::App app{"aisched-inspect: the actors running on an aisched node"};
  std::string node, output = "table", interval = "1s", timeout = "3s";
  app.add_option("--node", node, "the node's cluster address HOST:PORT")->required();
  app.add_option("-o,--output", output, "table | json")
      ->check(CLI::IsMember({"table", "json"}))
      ->capture_default_str();
  app.add_flag("--watch", opts.watch, "show again every --interval until Ctrl-C");
  app.add_option("--interval", interval, "--watch: time between rounds (500ms, 2s)")
      ->capture_default_str();
  app.add_option("--count", opts.count, "--watch: stop after N rounds (0: never)");
  app.add_option("--timeout", timeout, "how long to wait to connect and for each answer")
      ->capture_default_str();
  std::string secret_file;
  app.add_option("--cluster-secret-file", secret_file,
                 "the cluster secret of a node started with --cluster-secret-file (the same file)")
      ->envname("AISCHED_CLUSTER_SECRET_FILE");
  try {
    app.parse(argc, argv);
  } catch (const CLI::ParseError& e) {
    auto rc = app.exit(e);
    return rc == 0 ? 0 : 2;
  }
  auto usage = [](const std::string& what) {
    std::cerr << "aisched-inspect: " << what << "\n";
    return 2;
  };
  auto colon = node.rfind(':');
  if (colon == std::string::npos || colon == 0) return usage("--node: expected HOST:PORT");
  opts.host = node.substr(0, colon);
  try {
    auto p = std::stoul(node.substr(colon + 1));
    if (p == 0 || p > 65535) return usage("--node: bad port");
    opts.port = static_cast<uint16_t>(p);
  } catch (const std::exception&) {
    return usage("--node: bad port");
  }
  auto i = parse_duration(interval);
  auto t = parse_duration(timeout);
  if (!i || *i <= 0) return usage("--interval: expected a duration such as 1s or 500ms");
  if (!t || *t <= 0) return usage("--timeout: expected a duration such as 3s or 500ms");
  opts.interval = *i;
  opts.timeout = *t;
  opts.json = output == "json";
  if (!secret_file.empty()) {
    auto secret = proto::cluster_auth::read_secret_file(secret_file);
    if (!secret) return usage(view(secret.error()).message);
    opts.cluster_secret = std::move(*secret);
  }
  return -1;
}

/// Connects to the node, passes its gatekeeper and fetches its inspector.
caf::expected<proto::inspector_actor> find_inspector(caf::scoped_actor& self,
                                                     const options& opts) {
  auto timeout = std::chrono::milliseconds(opts.timeout);
  caf::expected<proto::inspector_actor> out{caf::sec::runtime_error};
  // The dialer asks the middleman to connect, not io::remote_actor: that has a
  // timeout (remote_actor blocks forever on a port that accepts but never answers).
  auto dialer = proto::spawn_dialer(self->system(), timeout);
  proto::endpoint_actor endpoint;
  self->request(dialer, timeout * 3, proto::cluster_dial_atom::value, opts.host, opts.port)
      .receive([&](proto::endpoint_actor& ep) { endpoint = std::move(ep); },
               [&](caf::error& err) { out = std::move(err); });
  if (!endpoint) return out;
  self->request(endpoint, timeout, proto::inspector_atom::value)
      .receive([&](proto::inspector_actor& i) { out = std::move(i); },
               [&](caf::error& err) { out = std::move(err); });
  return out;
}

/// An error for a person: ours by its message, CAF's as CAF renders it.
std::string describe(caf::actor_system& sys, const caf::error& err) {
  if (err.category() == caf::atom("aisched")) return view(err).message;
  return sys.render(err);
}

caf::expected<proto::node_summary> fetch(caf::scoped_actor& self,
                                         const proto::inspector_actor& inspector,
                                         const options& opts) {
  caf::expected<proto::node_summary> out{caf::sec::runtime_error};
  // The inspector waits for slow actors a bit less than we wait for it, so an
  // unresponsive actor shows up as such instead of timing out the whole answer.
  duration_ms wait = opts.timeout * 2 / 3;
  self->request(inspector, std::chrono::milliseconds(opts.timeout),
                proto::inspect_node_atom::value, wait)
      .receive([&](proto::node_summary& s) { out = std::move(s); },
               [&](caf::error& err) { out = std::move(err); });
  return out;
}

void show(const proto::node_summary& s, const options& opts) {
  if (opts.json && opts.watch) {
    std::cout << boost::json::serialize(inspect_tool::to_json(s)) << std::endl;  // one per line
  } else if (opts.json) {
    ctl::print_json(std::cout, inspect_tool::to_json(s));
  } else {
    if (opts.watch) std::cout << "\033[H\033[2J";  // redraw in place
    inspect_tool::print_table(std::cout, s);
    std::cout.flush();
  }
}

/// Sleeps `ms` in short steps; false when Ctrl-C came meanwhile.
bool pause_for(duration_ms ms) {
  auto until = steady_now() + std::chrono::milliseconds(ms);
  while (!interrupted && steady_now() < until)
    std::this_thread::sleep_for(20ms);
  return !interrupted;
}

int run(const options& opts) {
  caf::actor_system_config cfg;
  cfg.set("scheduler.max-threads", 1);
  // Nodes drop connections that stay silent past their connection timeout (5s);
  // heartbeats keep a --watch with a long --interval connected (CAF-0.17.md §10).
  cfg.set("middleman.heartbeat-interval", caf::timespan{std::chrono::milliseconds(500)});
  cfg.load<caf::io::middleman>();
  proto::register_types(cfg);
  caf::actor_system sys{cfg};
  proto::set_cluster_identity(sys, opts.cluster_secret, "inspect");
  caf::scoped_actor self{sys};
  auto where = opts.host + ":" + std::to_string(opts.port);
  auto inspector = find_inspector(self, opts);
  if (!inspector) {
    std::cerr << "aisched-inspect: cannot reach the inspector at " << where << ": "
              << describe(sys, inspector.error()) << "\n";
    return 1;
  }
  for (uint64_t round = 1;; ++round) {
    auto s = fetch(self, *inspector, opts);
    if (!s) {
      std::cerr << "aisched-inspect: no answer from " << where << ": " << sys.render(s.error())
                << "\n";
      return 1;
    }
    show(*s, opts);
    if (!opts.watch || (opts.count != 0 && round >= opts.count)) return 0;
    if (!pause_for(opts.interval)) return 0;
  }
}

}  // namespace

int main(int argc, char** argv) {
  options opts;
  if (auto rc = parse(argc, argv, opts); rc >= 0) return rc;
  std::signal(SIGINT, on_interrupt);
  std::signal(SIGTERM, on_interrupt);
  return run(opts);
}
