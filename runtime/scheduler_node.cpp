// A scheduler node: opens RocksDB, recovers the raft log into the state
// machine, spawns raft, store, trigger, retry, router, backpressure and (with
// the worker role) a built-in worker, serves HTTP and the cluster port, and
// shuts everything down cleanly on SIGINT/SIGTERM. Crash-only: if an essential
// actor terminates on its own, the node logs why and exits non-zero.
#include <atomic>
#include <csignal>
#include <cstdlib>
#include <filesystem>
#include <mutex>
#include <set>
#include <thread>

#include <unistd.h>

#include <caf/actor_system.hpp>
#include <caf/actor_system_config.hpp>
#include <caf/io/middleman.hpp>
#include <caf/send.hpp>
#include <caf/stateful_actor.hpp>
#include <caf/typed_event_based_actor.hpp>

#include "actors/alerter/alerter_actor.hpp"
#include "actors/ai_features/analysis_actor.hpp"
#include "actors/ai_features/llm_judge.hpp"
#include "actors/backup/backup_actor.hpp"
#include "actors/endpoint/endpoint_actor.hpp"
#include "actors/endpoint/gatekeeper_actor.hpp"
#include "actors/llm_agent/llm_agent_actor.hpp"
#include "actors/inspector/inspector_actor.hpp"
#include "actors/load_sampler/load_sampler_actor.hpp"
#include "actors/retention/retention_actor.hpp"
#include "actors/raft/membership_guard.hpp"
#include "actors/raft/raft_actor.hpp"
#include "actors/router/router_actor.hpp"
#include "actors/worker/registrar_actor.hpp"
#include "actors/worker/worker_actor.hpp"
#include "common/clock.hpp"
#include "gateway/ai_routes.hpp"
#include "gateway/api.hpp"
#include "gateway/auth_routes.hpp"
#include "gateway/metrics_route.hpp"
#include "gateway/server.hpp"
#include "common/cluster_link.hpp"
#include "proto/errors.hpp"
#include "proto/registry.hpp"
#include "common/log.hpp"
#include "common/propose.hpp"
#include "runtime/node.hpp"
#include "runtime/scheduling.hpp"
#include "storage/format_version.hpp"
#include "storage/migrations.hpp"
#include "storage/health.hpp"
#include "storage/rocks.hpp"
#include "storage/secret_keeper.hpp"
#include "storage/secret_store.hpp"
#include "storage/state_machine.hpp"
#include "actors/store/store_actor.hpp"

namespace aisched::runtime {

namespace {

/// The gateway's handler, installed once the actors it talks to exist.
class late_handler {
 public:
  void set(gateway::handler_fn h) {
    std::lock_guard<std::mutex> guard(mtx_);
    handler_ = std::move(h);
  }
  void handle(gateway::http_request req, gateway::reply_fn reply) {
    gateway::handler_fn h;
    {
      std::lock_guard<std::mutex> guard(mtx_);
      h = handler_;
    }
    if (!h)
      return reply({503, R"({"error":{"code":"unavailable","message":"starting","field":""}})",
                    "application/json"});
    h(std::move(req), std::move(reply));
  }

 private:
  std::mutex mtx_;
  gateway::handler_fn handler_;
};

int fail(const std::string& what, const caf::error& err) {
  log::error(what, {{"error", view(err).message}});
  return 1;
}

/// The node's secret keeper over `db` (disabled without --secrets-key-file),
/// once its key opens every data key this member stores: a member with the
/// wrong key file refuses to start rather than fail each run that uses a secret.
caf::expected<std::shared_ptr<storage::secret_keeper>> open_secrets(
    const config& cfg, const std::shared_ptr<storage::rocks>& db) {
  std::optional<secret_crypto::key> key, previous;
  if (!cfg.secrets_key_file.empty()) {
    auto k = secret_crypto::load_key_file(cfg.secrets_key_file, "--secrets-key-file");
    if (!k) return k.error();
    key = *k;
  }
  if (!cfg.secrets_previous_key_file.empty()) {
    if (!key)
      return make_error(errc::invalid_argument, "secrets-previous-key-file",
                        "--secrets-previous-key-file needs --secrets-key-file (the new key)");
    auto p = secret_crypto::load_key_file(cfg.secrets_previous_key_file,
                                          "--secrets-previous-key-file");
    if (!p) return p.error();
    previous = *p;
  }
  auto keeper = std::make_shared<storage::secret_keeper>(*db, key, previous);
  if (!key) {
    auto keys = storage::read_data_keys(*db);
    if (keys && !keys->empty())
      log::warn("this member stores secrets but has no --secrets-key-file: runs that use "
                "secrets fail while it leads, and its gateway answers secrets_disabled",
                {{"tenants", std::to_string(keys->size())}});
    return keeper;
  }
  if (auto err = keeper->check()) return err;
  log::info("secret store enabled", {{"key_check", keeper->key_check()},
                                     {"rotating", previous ? "true" : "false"}});
  return keeper;
}

/// Crash-only supervision of the node's essential actors: one that terminates
/// while the node is not shutting down leaves a process that answers health
/// checks but cannot schedule, so the node logs which actor died and why, and
/// exits with exit_code (a process supervisor restarts it from disk).
class supervision {
 public:
  static constexpr int exit_code = 70;  // EX_SOFTWARE

  explicit supervision(caf::actor_system& sys) : sys_(sys) {}

  /// Watches `a` under `name`; a null handle is ignored.
  template <class Handle>
  void watch(const Handle& h, std::string name) {
    auto a = caf::actor_cast<caf::actor>(h);
    if (!a) return;
    a->attach_functor([this, name](const caf::error& reason) { died(name, reason); });
  }

  /// From now on terminations are the shutdown's own.
  void stopping() { stopping_ = true; }
  bool failed() const { return failed_; }

 private:
  void died(const std::string& name, const caf::error& reason) {
    if (stopping_ || failed_.exchange(true)) return;
    log::error("essential actor terminated: the node exits",
               {{"actor", name}, {"reason", reason ? sys_.render(reason) : "normal exit"}});
    // Wakes the main thread's sigwait into the ordinary shutdown; should that
    // hang on a wedged actor, the node still goes down.
    std::thread([] {
      std::this_thread::sleep_for(std::chrono::seconds(15));
      std::_Exit(exit_code);
    }).detach();
    ::kill(::getpid(), SIGTERM);
  }

  caf::actor_system& sys_;
  std::atomic<bool> stopping_{false};
  std::atomic<bool> failed_{false};
};

/// Whether an HTTP bind address only accepts local clients.
bool is_loopback(const std::string& host) {
  return host == "localhost" || host == "::1" || host.rfind("127.", 0) == 0;
}

}  // namespace

int run_scheduler_node(const config& cfg, sigset_t& signals) {
  std::error_code ec;
  std::filesystem::create_directories(cfg.data_dir, ec);
  if (ec) {
    log::error("cannot create data dir", {{"dir", cfg.data_dir}, {"error", ec.message()}});
    return 1;
  }
  storage::open_options db_opts;
  if (!cfg.fault_file.empty()) {
    db_opts.fault = storage::fault_while_file_exists(cfg.fault_file);
    log::warn("TEST HOOK: storage writes fail while the fault file exists",
              {{"fault_file", cfg.fault_file}});
  }
  // Before RocksDB opens anything: data of a newer format is never opened.
  auto newer = [&](const caf::error& err) {
    log::error("refusing to start: the data directory's format is newer than this build's",
               {{"error", view(err).message}, {"data_dir", cfg.data_dir}});
    return 2;
  };
  auto format = storage::check_format(cfg.data_dir, AISCHED_VERSION);
  if (!format) {
    if (view(format.error()).code != errc::invalid_argument)
      return fail("cannot check the format", format.error());
    return newer(format.error());
  }
  auto opened = storage::rocks::open(cfg.data_dir, std::move(db_opts));
  if (!opened) return fail("cannot open database", opened.error());
  std::shared_ptr<storage::rocks> db = std::move(*opened);
  // Before anything reads it: an older format is migrated, step by step.
  auto migrated = storage::migrate_format(*db, cfg.data_dir, *format, AISCHED_VERSION);
  if (!migrated) {
    if (view(migrated.error()).code == errc::invalid_argument) return newer(migrated.error());
    return fail("cannot migrate the data directory", migrated.error());
  }
  for (auto& step : *migrated)
    log::warn("data directory migrated", {{"step", step}, {"data_dir", cfg.data_dir}});
  auto sm_opened = storage::state_machine::open(*db);
  if (!sm_opened) return fail("cannot open state machine", sm_opened.error());
  std::shared_ptr<storage::state_machine> sm = std::move(*sm_opened);
  auto secrets = open_secrets(cfg, db);
  if (!secrets) return fail("cannot open the secret store", secrets.error());
  raft::raft_options ropts_raft;
  ropts_raft.node_id = cfg.node_id;
  ropts_raft.snapshot_every = cfg.snapshot_every;
  for (auto& p : cfg.peers)
    if (p.id != cfg.node_id) ropts_raft.peers.push_back({p.id, p.addr.host, p.addr.port});
  ropts_raft.join = cfg.join_group;
  ropts_raft.cluster_addr = cfg.cluster.host + ":" + std::to_string(cfg.cluster.port);
  // The data's membership wins over --peers: a disagreeing flag would start a
  // second group on this data (issue 41), so it is a usage error (exit 2).
  if (auto err = raft::check_stored_membership(*db, ropts_raft)) {
    if (view(err).code != errc::invalid_argument) return fail("cannot read the membership", err);
    log::error("refusing to start: --peers disagrees with the data directory's membership",
               {{"error", view(err).message}, {"data_dir", cfg.data_dir}});
    return 2;
  }
  auto cluster_id = raft::stored_cluster_id(*db, ropts_raft, cfg.cluster_token);
  if (!cluster_id) return fail("cannot read the cluster id", cluster_id.error());
  ropts_raft.cluster_id = *cluster_id;
  auto parts = raft::open_member(*db, *sm, ropts_raft);
  if (!parts) return fail("cannot restore the raft member", parts.error());
  auto raft_log = parts->log;
  log::info("state recovered", {{"applied_index", std::to_string(sm->applied_index())},
                                {"term", std::to_string(raft_log->state().term)},
                                {"members", std::to_string(parts->member->membership().size())},
                                {"cluster_id", ropts_raft.cluster_id},
                                {"data_dir", cfg.data_dir}});

  auto caf_cfg = make_caf_config(cfg);
  caf::actor_system sys{*caf_cfg};
  supervision essential{sys};
  // Before any connection: raft dials peers as soon as it runs.
  proto::set_cluster_identity(sys, cfg.cluster_secret, "member:" + cfg.node_id);

  auto raft_node = sys.spawn<caf::detached>(raft::raft_actor_impl, ropts_raft, db, sm, parts->log,
                                            parts->member);
  auto raft = caf::actor_cast<proto::raft_actor>(raft_node);
  auto store = sys.spawn<caf::detached>(storage::store_actor_impl, db,
                                        std::shared_ptr<const storage::state_machine>(sm));
  // The wall clock of every actor below that reads one: the system's, read
  // afresh each time (common/clock.hpp). A simulation gives them a simulated one.
  const wall_clock clock;
  // The HTTP server binds first (port 0 picks a free one) so external workers
  // can be told where to report; requests before wiring completes get 503.
  std::unique_ptr<gateway::server> http;
  auto late = std::make_shared<late_handler>();
  std::string report_base, http_addr;
  if (cfg.roles.count("gateway")) {
    gateway::server_options opts{cfg.http.host, cfg.http.port, cfg.max_body_bytes, 2};
    http = std::make_unique<gateway::server>(
        opts, [late](gateway::http_request req, gateway::reply_fn reply) {
          late->handle(std::move(req), std::move(reply));
        });
    auto port = http->start();
    if (!port) {
      for (auto a : {caf::actor_cast<caf::actor>(raft), caf::actor_cast<caf::actor>(store)})
        caf::anon_send_exit(a, caf::exit_reason::user_shutdown);
      return fail("cannot start HTTP gateway", port.error());
    }
    http_addr = cfg.http.host + ":" + std::to_string(*port);
    report_base = "http://" + http_addr;
    log::info("http listening", {{"addr", cfg.http.host + ":" + std::to_string(*port)}});
  }
  auto http_pool = std::make_shared<worker::run_pool>(4);
  router::router_options ropts{report_base, http_pool, worker_offline_after_ms, cfg.dispatch_rate,
                               cfg.dispatch_rate * 2};
  ropts.dead_after = cfg.worker_dead_after_ms;
  if ((*secrets)->enabled())
    ropts.reveal_secrets = [keeper = *secrets](const std::string& tenant,
                                               const std::set<std::string>& names) {
      return keeper->reveal(tenant, names);
    };
  // Leader-only actors (trigger, retry, router, backpressure), told by raft
  // whether this node leads and wired to each other (runtime/scheduling.hpp).
  scheduling_options scheduling{clock, duration_ms{cfg.fire_ahead_ms}, std::move(ropts), {}};
  scheduling.limits.max_backlog = cfg.max_backlog;
  auto leading = spawn_scheduling(sys, raft, store, std::move(scheduling));
  auto trigger = leading.trigger;
  auto retrier = leading.retrier;
  auto router = leading.router;
  auto pressure = leading.pressure;
  // The node's model client (shared by the AI agent and the AI features), and
  // failure analyses: stored here, automatic on the leader when a model is configured.
  auto llm_client = std::make_shared<llm::llm_client>(cfg.llm);
  ai::analysis_options analysis_opts;
  analysis_opts.judge = ai::make_llm_judge(llm_client);
  analysis_opts.write = replicated_ai_writer(sys, raft);
  analysis_opts.clock = clock;
  auto analysis = sys.spawn<caf::detached>(ai::analysis_actor_impl, db, store, analysis_opts);
  // Every commit is copied to each listener on the hot path, so the analysis
  // actor and the alerter listen only when they have work to do: a model for
  // automatic analyses, webhooks for alerts. On-demand analyses need no commits.
  if (cfg.llm.configured())
    caf::anon_send(raft, proto::subscribe_atom::value,
                   caf::actor_cast<proto::commit_listener_actor>(analysis));
  // Observability (leader only): worker load history and failure alerts.
  load_sampler::sampler_options sampling;
  sampling.interval = cfg.load_sample_interval_ms;
  sampling.clock = clock;
  auto sampler = sys.spawn(load_sampler::load_sampler_actor_impl, raft, router, sampling);
  // Run-history retention (leader only): the sweep of finished runs.
  retention::retention_options keeping;
  keeping.interval = cfg.retention_interval_ms;
  keeping.defaults = {cfg.retention_keep_for_ms, cfg.retention_keep_runs};
  keeping.clock = clock;
  auto keeper = sys.spawn(retention::retention_actor_impl, raft, store, keeping);
  alerter::alerter_options alerting;
  alerting.webhooks = cfg.alert_webhooks;
  alerting.node_id = cfg.node_id;
  auto alert_pool = std::make_shared<worker::run_pool>(2);
  auto alerts = sys.spawn(alerter::alerter_actor_impl, store, alerting, alert_pool);
  if (!cfg.alert_webhooks.empty()) {
    log::info("alert webhooks configured", {{"count", std::to_string(cfg.alert_webhooks.size())}});
    caf::anon_send(raft, proto::subscribe_atom::value,
                   caf::actor_cast<proto::commit_listener_actor>(alerts));
  }
  // Scheduled backups (leader only, with --backup-dir): files written on a
  // thread of their own; failures reach /readyz and the alerter.
  std::shared_ptr<worker::run_pool> backup_pool;
  auto backup_health = std::make_shared<backups::backup_health>();
  proto::backup_actor backup;
  if (!cfg.backup_dir.empty()) {
    std::error_code ec;
    if (std::filesystem::create_directories(cfg.backup_dir, ec))
      std::filesystem::permissions(cfg.backup_dir, std::filesystem::perms::owner_all, ec);
    if (ec)
      log::warn("cannot prepare the backup directory: scheduled backups fail until it exists "
                "and is writable",
                {{"dir", cfg.backup_dir}, {"error", ec.message()}});
    backups::backup_options backing;
    backing.dir = cfg.backup_dir;
    backing.interval = cfg.backup_interval_ms;
    backing.keep = cfg.backup_keep;
    backing.node_id = cfg.node_id;
    backing.written_by = AISCHED_VERSION;
    backing.db = db;
    backup_pool = std::make_shared<worker::run_pool>(1);
    backing.io = backup_pool;
    backing.health = backup_health;
    backing.alerter = alerts;
    backing.clock = clock;
    backup = sys.spawn(backups::backup_actor_impl, raft, backing);
    log::info("scheduled backups", {{"dir", cfg.backup_dir},
                                    {"interval_ms", std::to_string(cfg.backup_interval_ms)},
                                    {"keep", std::to_string(cfg.backup_keep)}});
  }

  // The built-in worker (registered with the leader's router once the
  // endpoint below is up: it finds the leader through it).
  std::shared_ptr<worker::run_pool> pool;
  proto::worker_actor local_worker;
  caf::actor local_registrar;
  if (cfg.roles.count("worker")) {
    pool = std::make_shared<worker::run_pool>(cfg.worker_slots);
    worker::worker_config wcfg;
    wcfg.id = cfg.node_id;
    worker::exec_options exec;  // the real executor: processes, HTTP, containers
    exec.scratch_root = cfg.scratch_dir;  // prepared by main (harden)
    exec.supervisor = cfg.supervisor;  // found by main (harden)
    exec.user = cfg.run_user;
    exec.tenant_users = cfg.tenant_users;
    exec.own_network = cfg.run_network == "none";  // settled by main (harden)
    wcfg.outbox_dir = cfg.data_dir + "/worker-outbox";
    wcfg.clock = clock;
    local_worker = sys.spawn(worker::worker_actor_impl, wcfg,
                             std::make_shared<worker::process_executor>(pool, std::move(exec)));
  }
  auto stop_actors = [&] {
    if (pool) pool->stop();  // cancels running attempts, joins the run threads
    http_pool->stop();
    alert_pool->stop();
    if (backup_pool) backup_pool->stop();  // abandons a backup being written (its .tmp removed)
    for (auto a : {caf::actor_cast<caf::actor>(trigger), caf::actor_cast<caf::actor>(retrier),
                   caf::actor_cast<caf::actor>(sampler), caf::actor_cast<caf::actor>(keeper),
                   caf::actor_cast<caf::actor>(alerts), caf::actor_cast<caf::actor>(backup),
                   caf::actor_cast<caf::actor>(router), caf::actor_cast<caf::actor>(local_worker),
                   local_registrar,
                   caf::actor_cast<caf::actor>(pressure), caf::actor_cast<caf::actor>(analysis),
                   caf::actor_cast<caf::actor>(raft), caf::actor_cast<caf::actor>(store)})
      if (a) caf::anon_send_exit(a, caf::exit_reason::user_shutdown);
  };

  // The cluster port serves the endpoint: how worker nodes and tools find us.
  auto inspector = spawn_inspector(sys, cfg, {{"raft", raft}, {"store", store},
                                              {"trigger", trigger}, {"retry", retrier},
                                              {"router", router}, {"backpressure", pressure},
                                              {"load_sampler", sampler}, {"retention", keeper},
                                              {"alerter", alerts}, {"backup", backup},
                                              {"analysis", analysis},
                                              {"worker", local_worker}});
  auto endpoint = sys.spawn(endpoint::endpoint_actor_impl, router,
                            caf::actor_cast<caf::actor>(raft_node), trigger, http_addr, inspector);
  caf::anon_send(inspector, proto::enroll_atom::value, std::string("endpoint"),
                 proto::inspectable_actor{endpoint});
  // Peers get the endpoint only through the gatekeeper (README "Cluster admission").
  auto gatekeeper = sys.spawn(endpoint::gatekeeper_actor_impl, endpoint, cfg.cluster_secret);
  auto cluster_port =
      proto::publish_cluster_endpoint(gatekeeper, endpoint, cfg.cluster.port, cfg.cluster.host);
  if (!cluster_port) {
    stop_actors();
    caf::anon_send_exit(gatekeeper, caf::exit_reason::user_shutdown);
    caf::anon_send_exit(endpoint, caf::exit_reason::user_shutdown);
    caf::anon_send_exit(inspector, caf::exit_reason::user_shutdown);
    return fail("cannot listen on cluster address", cluster_port.error());
  }
  log::info("cluster listening", {{"addr", cfg.cluster.host + ":" + std::to_string(*cluster_port)},
                                  {"transport", cfg.tls_cert.empty() ? "tcp" : "tls"},
                                  {"admission", cfg.cluster_secret.empty() ? "open" : "secret"}});
  if (local_worker) {
    worker::registrar_options ropts;
    ropts.seeds = {cfg.cluster.host + ":" + std::to_string(*cluster_port)};
    for (auto& p : cfg.peers)
      if (p.id != cfg.node_id) ropts.seeds.push_back(p.addr.host + ":" + std::to_string(p.addr.port));
    ropts.own_endpoint = endpoint;
    ropts.info.id = cfg.node_id;
    ropts.info.protocol = proto::worker_protocol::native;
    ropts.info.address = ropts.seeds.front();
    ropts.info.labels = cfg.worker_labels;
    ropts.info.tenant = cfg.worker_tenant;
    ropts.info.shared = cfg.worker_shared;
    ropts.info.max_load = static_cast<uint32_t>(cfg.worker_slots);
    ropts.worker = local_worker;
    local_registrar = sys.spawn(worker::registrar_actor_impl, std::move(ropts));
  }

  // The AI agent (gateway nodes): its tools call the REST handler in-process,
  // which itself routes /api/v1/ai to the agent, so the handler is handed over
  // once built.
  llm::llm_agent_actor agent;
  if (http) {
    auto tools_api = std::make_shared<gateway::handler_fn>();
    llm::llm_agent_options aopts;
    aopts.client = llm_client;
    aopts.db = db;
    aopts.write = replicated_ai_writer(sys, raft);
    aopts.api = tools_api;
    aopts.clock = clock;
    agent = sys.spawn<caf::detached>(llm::llm_agent_impl, aopts);
    caf::anon_send(inspector, proto::enroll_atom::value, std::string("llm_agent"),
                   caf::actor_cast<proto::inspectable_actor>(agent));
    auto ai = std::make_shared<gateway::ai_context>();
    ai->sys = &sys;
    ai->agent = agent;
    ai->client = llm_client;
    gateway::api_context api{&sys, raft, store, trigger, router, pressure, cfg.node_id, http_addr};
    api.ai = ai;
    api.analysis = analysis;
    api.judge = analysis_opts.judge;
    api.reads.task = [db, sm](const std::string& tenant, uint64_t id) {
      return sm->get_task(tenant, id);
    };
    api.reads.instance = [db, sm](const std::string& tenant, const std::string& id) {
      return sm->get_instance(tenant, id);
    };
    api.storage_problem = [health = db->health()] {
      return health->ok() ? std::string{} : health->problem();
    };
    api.backup_problem = [backup_health] { return backup_health->problem(); };
    api.auth = {cfg.auth, cfg.auth_secret, std::chrono::seconds(cfg.token_ttl_seconds)};
    api.secrets = *secrets;
    api.db = db;  // GET /api/v1/cluster/snapshot exports from it
    if (cfg.auth && !cfg.admin_password.empty()) gateway::bootstrap_admin(api, cfg.admin_password);
    if (!cfg.auth && !is_loopback(cfg.http.host))
      log::warn("AUTHENTICATION IS OFF on a non-loopback HTTP address: anyone who can reach "
                "it is admin; start with --auth and --auth-secret-file",
                {{"http_addr", http_addr}});
    auto handler = gateway::make_api(std::move(api));
    *tools_api = handler;  // the agent's tools re-enter the REST API with the caller's token
    late->set(gateway::with_metrics(handler));
    if (cfg.llm.configured())
      log::info("ai agent ready", {{"llm_endpoint", cfg.llm.endpoint}, {"model", cfg.llm.model},
                                   {"fallback", cfg.llm.fallback_endpoint}});
    else
      log::info("ai agent without a model: set AISCHED_LLM_ENDPOINT and AISCHED_LLM_MODEL");
  }
  for (auto& [name, handle] : std::vector<std::pair<std::string, caf::actor>>{
           {"raft", caf::actor_cast<caf::actor>(raft)},
           {"store", caf::actor_cast<caf::actor>(store)},
           {"trigger", caf::actor_cast<caf::actor>(trigger)},
           {"retry", caf::actor_cast<caf::actor>(retrier)},
           {"router", caf::actor_cast<caf::actor>(router)},
           {"backpressure", caf::actor_cast<caf::actor>(pressure)},
           {"load_sampler", caf::actor_cast<caf::actor>(sampler)},
           {"retention", caf::actor_cast<caf::actor>(keeper)},
           {"alerter", caf::actor_cast<caf::actor>(alerts)},
           {"backup", caf::actor_cast<caf::actor>(backup)},
           {"endpoint", caf::actor_cast<caf::actor>(endpoint)},
           {"worker", caf::actor_cast<caf::actor>(local_worker)}})
    essential.watch(handle, name);
  log::info("node started", {{"version", AISCHED_VERSION}});

  int sig = 0;
  sigwait(&signals, &sig);
  essential.stopping();
  int rc = essential.failed() ? supervision::exit_code : 0;
  log::info("shutting down", {{"signal", std::to_string(sig)}, {"exit_code", std::to_string(rc)}});
  if (http) http->stop();
  sys.middleman().unpublish(gatekeeper, *cluster_port);
  caf::anon_send_exit(gatekeeper, caf::exit_reason::user_shutdown);
  caf::anon_send_exit(endpoint, caf::exit_reason::user_shutdown);
  caf::anon_send_exit(inspector, caf::exit_reason::user_shutdown);
  if (agent) caf::anon_send_exit(agent, caf::exit_reason::user_shutdown);
  stop_actors();
  sys.await_all_actors_done();
  if (auto err = db->flush()) log::warn("flush on shutdown failed", {{"error", view(err).message}});
  log::info("stopped");
  return rc;
}

}  // namespace aisched::runtime
