// A worker node: runs a worker actor with its run pool and a registrar that
// joins a scheduler node's cluster port and keeps the worker registered with
// the leader's router; stops cleanly on SIGINT/SIGTERM.
#include <chrono>
#include <csignal>
#include <filesystem>

#include <caf/actor_system.hpp>
#include <caf/io/middleman.hpp>
#include <caf/scoped_actor.hpp>
#include <caf/send.hpp>
#include <caf/stateful_actor.hpp>
#include <caf/typed_event_based_actor.hpp>

#include "actors/endpoint/endpoint_actor.hpp"
#include "actors/endpoint/gatekeeper_actor.hpp"
#include "actors/raft/raft_actor.hpp"
#include "actors/worker/registrar_actor.hpp"
#include "actors/worker/worker_actor.hpp"
#include "common/clock.hpp"
#include "proto/errors.hpp"
#include "common/cluster_link.hpp"
#include "proto/registry.hpp"
#include "common/log.hpp"
#include "runtime/node.hpp"
#include "runtime/tls.hpp"

namespace aisched::runtime {

std::unique_ptr<caf::actor_system_config> make_caf_config(const config& cfg) {
  auto c = std::make_unique<caf::actor_system_config>();
  c->set("scheduler.max-threads", cfg.threads);
  c->set("scheduler.policy", caf::atom("sharing"));
  // Detect frozen peers: heartbeats on every node, symmetric (CAF-0.17.md §10).
  c->set("middleman.heartbeat-interval", caf::timespan{std::chrono::milliseconds(500)});
  c->set("middleman.connection-timeout", caf::timespan{std::chrono::seconds(5)});
  c->load<caf::io::middleman>();
  enable_cluster_tls(*c, cfg);  // after the middleman, which the openssl module needs
  proto::register_types(*c);
  c->add_message_type<raft::message>("aisched.raft.message");
  c->add_message_type<raft::snapshot_chunk>("aisched.raft.snapshot_chunk");
  c->add_message_type<raft::node_actor>("aisched.raft.node_actor");
  return c;
}

namespace {

/// Tells the leader this worker drains, then waits until its runs are done,
/// `seconds` pass, or a second signal arrives. Runs still going after that are
/// killed; their attempts time out on the leader and run again elsewhere.
void drain(caf::actor_system& sys, const caf::actor& registrar, const proto::worker_actor& w,
           unsigned seconds, sigset_t& signals) {
  caf::anon_send(registrar, proto::drain_atom::value);
  auto deadline = steady_now() + std::chrono::seconds(seconds);
  caf::scoped_actor self{sys};
  uint32_t busy = 1;
  while (steady_now() < deadline) {
    self->request(w, std::chrono::seconds(1), proto::drain_atom::value)
        .receive([&](uint32_t n) { busy = n; }, [&](caf::error&) { busy = 0; });
    if (busy == 0) break;
    log::info("draining", {{"runs", std::to_string(busy)}});
    timespec wait{0, 200'000'000};
    if (sigtimedwait(&signals, nullptr, &wait) > 0) break;  // asked again: stop now
  }
}

}  // namespace

int run_worker_node(const config& cfg, sigset_t& signals) {
  if (cfg.join.host.empty()) {
    log::error("a worker node needs --join HOST:PORT (a scheduler node's cluster address)");
    return 2;
  }
  std::error_code ec;
  std::filesystem::create_directories(cfg.data_dir, ec);
  auto caf_cfg = make_caf_config(cfg);
  caf::actor_system sys{*caf_cfg};
  // Before the registrar dials the cluster.
  proto::set_cluster_identity(sys, cfg.cluster_secret, "worker:" + cfg.node_id);
  auto pool = std::make_shared<worker::run_pool>(cfg.worker_slots);
  worker::worker_config wcfg;
  wcfg.id = cfg.node_id;
  worker::exec_options exec;  // the real executor: processes, HTTP, containers
  exec.scratch_root = cfg.scratch_dir;  // prepared by main (harden)
  exec.supervisor = cfg.supervisor;  // found by main (harden)
  exec.user = cfg.run_user;
  exec.tenant_users = cfg.tenant_users;
  exec.own_network = cfg.run_network == "none";  // settled by main (harden)
  wcfg.outbox_dir = cfg.data_dir + "/outbox";
  auto w = sys.spawn(worker::worker_actor_impl, wcfg,
                     std::make_shared<worker::process_executor>(pool, std::move(exec)));
  proto::worker info;
  info.id = cfg.node_id;
  info.protocol = proto::worker_protocol::native;
  info.labels = cfg.worker_labels;
  info.tenant = cfg.worker_tenant;
  info.shared = cfg.worker_shared;
  info.max_load = static_cast<uint32_t>(cfg.worker_slots);
  worker::registrar_options ropts;
  ropts.seeds = {cfg.join.host + ":" + std::to_string(cfg.join.port)};
  ropts.info = info;
  ropts.worker = w;
  auto registrar = sys.spawn(worker::registrar_actor_impl, std::move(ropts));
  // An endpoint without router or raft on the cluster address, for aisched-inspect.
  auto inspector = spawn_inspector(sys, cfg, {{"worker", w}});
  auto endpoint = sys.spawn(endpoint::endpoint_actor_impl, proto::router_actor{},
                            caf::actor{}, proto::trigger_actor{}, std::string{}, inspector);
  caf::anon_send(inspector, proto::enroll_atom::value, std::string("endpoint"),
                 proto::inspectable_actor{endpoint});
  auto gatekeeper = sys.spawn(endpoint::gatekeeper_actor_impl, endpoint, cfg.cluster_secret);
  auto cluster_port =
      proto::publish_cluster_endpoint(gatekeeper, endpoint, cfg.cluster.port, cfg.cluster.host);
  if (cluster_port)
    log::info("cluster listening",
              {{"addr", cfg.cluster.host + ":" + std::to_string(*cluster_port)},
               {"admission", cfg.cluster_secret.empty() ? "open" : "secret"}});
  else  // the worker still works; it only cannot be inspected
    log::warn("cannot listen on cluster address", {{"error", view(cluster_port.error()).message}});
  log::info("worker node started", {{"join", cfg.join.host + ":" + std::to_string(cfg.join.port)},
                                    {"slots", std::to_string(cfg.worker_slots)},
                                    {"transport", cfg.tls_cert.empty() ? "tcp" : "tls"}});
  int sig = 0;
  sigwait(&signals, &sig);
  drain(sys, registrar, w, cfg.drain_seconds, signals);
  log::info("shutting down", {{"signal", std::to_string(sig)}});
  pool->stop();
  if (cluster_port) sys.middleman().unpublish(gatekeeper, *cluster_port);
  for (auto a : {caf::actor_cast<caf::actor>(gatekeeper), caf::actor_cast<caf::actor>(endpoint),
                 caf::actor_cast<caf::actor>(inspector)})
    caf::anon_send_exit(a, caf::exit_reason::user_shutdown);
  caf::anon_send_exit(registrar, caf::exit_reason::user_shutdown);
  caf::anon_send_exit(w, caf::exit_reason::user_shutdown);
  sys.await_all_actors_done();
  log::info("stopped");
  return 0;
}

}  // namespace aisched::runtime
