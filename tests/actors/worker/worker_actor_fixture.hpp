// The worker actor's test fixture: a real actor_system with a real run_pool and a
// stand-in worker_proxy that forwards the worker's `report`s to the test's
// scoped_actor (worker_actor_test.cpp, worker_fence_test.cpp).
#pragma once

#include "actors/worker/worker_actor.hpp"

#include <gtest/gtest.h>
#include <stdlib.h>

#include <caf/actor_system.hpp>
#include <caf/actor_system_config.hpp>
#include <caf/after.hpp>
#include <caf/scoped_actor.hpp>
#include <caf/send.hpp>
#include <caf/typed_event_based_actor.hpp>
#include <chrono>
#include <filesystem>
#include <fstream>
#include <map>
#include <memory>
#include <optional>
#include <ostream>
#include <set>
#include <sstream>
#include <stdexcept>
#include <string>
#include <thread>
#include <tuple>
#include <vector>
#include <algorithm>

#include "actors/worker/outbox.hpp"
#include "proto/errors.hpp"
#include "proto/registry.hpp"

namespace aisched::proto {
// Failure messages name the state instead of dumping its byte.
inline void PrintTo(instance_state s, std::ostream* os) { *os << name_of(s); }
}  // namespace aisched::proto

namespace aisched::worker {
namespace {

namespace fs = std::filesystem;
using namespace std::chrono_literals;
using proto::execute_request;
using proto::instance_state;
using proto::run_result;
using steady = std::chrono::steady_clock;

struct worker_test_config : caf::actor_system_config {
  worker_test_config() { proto::register_types(*this); }
};

/// Stands in for the worker proxy: forwards reports to `sink` tagged with `name`, ignores
/// the rest.
inline proto::worker_proxy_actor::behavior_type forwarding_proxy(
    proto::worker_proxy_actor::pointer, caf::actor sink, std::string name) {
  return {
      [=](proto::report_atom, const run_result& r) {
        // anon_send: a typed actor may not send() to a dynamically typed one.
        caf::anon_send(sink, proto::report_atom::value, name, r);
      },
      [](proto::report_atom, const run_result&, proto::settle_atom) -> caf::result<proto::applied> {
        return proto::applied{};  // external workers only: not used here
      },
      [](proto::execute_atom, const execute_request&) {},
      [](proto::execute_atom, proto::flush_atom) {},
      [](proto::cancel_run_atom, const std::string&) {},
      [](proto::wake_atom, const std::string&, unix_ms) {},
      [](proto::flush_atom) {},
  };
}

inline size_t line_count(const fs::path& p) {
  std::ifstream in(p);
  size_t n = 0;
  for (std::string line; std::getline(in, line);) ++n;
  return n;
}

class worker_actor_test : public ::testing::Test {
 protected:
  worker_actor_test() : sys_(cfg_), self_(sys_) {
    char tmpl[] = "/tmp/aisched-worker-test-XXXXXX";
    if (mkdtemp(tmpl) == nullptr) throw std::runtime_error("mkdtemp failed");
    dir_ = tmpl;
    pool_ = std::make_shared<run_pool>(2);
    worker_config wcfg;
    wcfg.id = "w-test";
    worker_ = sys_.spawn(worker_actor_impl, wcfg, processes());
    proxy_ = spawn_proxy("proxy");
  }

  ~worker_actor_test() override {
    pool_->stop();  // kills what still runs and joins the run threads
    caf::anon_send_exit(worker_, caf::exit_reason::user_shutdown);
    for (auto& p : proxies_) caf::anon_send_exit(p, caf::exit_reason::user_shutdown);
    for (auto& w : workers_) caf::anon_send_exit(w, caf::exit_reason::user_shutdown);
    std::error_code ec;
    fs::remove_all(dir_, ec);
  }

  /// The real executor on the test's pool, its scratch directory under dir_.
  std::shared_ptr<run_executor> processes() const {
    exec_options exec;
    exec.scratch_root = (dir_ / "scratch").string();
    exec.supervisor = AISCHED_SUPERVISOR_PATH;
    return std::make_shared<process_executor>(pool_, std::move(exec));
  }

  /// A worker of `wcfg` on the real executor, stopped at teardown (a failed
  /// assertion that returns early leaves none running).
  proto::worker_actor spawn_worker(worker_config wcfg) {
    auto w = sys_.spawn(worker_actor_impl, std::move(wcfg), processes());
    workers_.push_back(w);
    return w;
  }

  proto::worker_proxy_actor spawn_proxy(std::string name) {
    auto p = sys_.spawn(forwarding_proxy, caf::actor_cast<caf::actor>(self_), std::move(name));
    proxies_.push_back(p);
    return p;
  }

  execute_request shell(std::string instance_id, std::string command, uint32_t attempt = 1) {
    execute_request req;
    req.instance_id = std::move(instance_id);
    req.task_id = 7;
    req.command = std::move(command);
    req.attempt = attempt;
    req.timeout = 60'000;
    return req;
  }

  /// Sends `execute` and returns the worker's answer (nullopt on error or timeout).
  std::optional<bool> execute(const execute_request& req) { return execute(req, proxy_); }

  std::optional<bool> execute(const execute_request& req, const proto::worker_proxy_actor& to) {
    std::optional<bool> out;
    self_->request(worker_, 5s, proto::execute_atom::value, req, to)
        .receive([&](bool accepted) { out = accepted; },
                 [&](caf::error& err) { ADD_FAILURE() << "execute: " << sys_.render(err); });
    return out;
  }

  /// Sends `execute` and returns the error the worker refused it with.
  error_view refusal(const execute_request& req) {
    error_view out;
    self_->request(worker_, 5s, proto::execute_atom::value, req, proxy_)
        .receive([&](bool) { ADD_FAILURE() << "the worker took " << req.instance_id; },
                 [&](caf::error& err) { out = view(err); });
    return out;
  }

  /// The next report any proxy forwarded; `last_from_` names that proxy.
  std::optional<run_result> next_report(std::chrono::milliseconds timeout = 5000ms) {
    std::optional<run_result> out;
    self_->receive(
        [&](proto::report_atom, const std::string& from, const run_result& r) {
          last_from_ = from;
          out = r;
        },
        caf::after(timeout) >> [] {});
    return out;
  }

  /// Fails the test unless no report arrives within `quiet`.
  void expect_no_report(std::chrono::milliseconds quiet = 300ms) {
    auto r = next_report(quiet);
    EXPECT_FALSE(r) << "unexpected report: " << proto::name_of(r->state) << " for "
                    << r->instance_id;
  }

  /// A command that appends a line to `count` and then waits until `go` exists (at most
  /// 20 s; the pool's stop kills it earlier at teardown).
  std::string gated(const fs::path& count, const fs::path& go) {
    return "echo run >> '" + count.string() + "'; i=0; while [ ! -e '" + go.string() +
           "' ] && [ $i -lt 1000 ]; do sleep 0.02; i=$((i+1)); done";
  }

  static void touch(const fs::path& p) { std::ofstream(p) << "go\n"; }

  /// The runs `w` says it holds, sorted by instance id then attempt; `fault`
  /// receives why its outbox failed ("" while it works).
  std::vector<proto::held_run> held(const proto::worker_actor& w, std::string* fault = nullptr,
                                    uint64_t leader_term = 0, std::string cluster = "c1") {
    std::vector<proto::held_run> out;
    self_->request(w, 5s, proto::held_atom::value, leader_term, std::move(cluster))
        .receive(
            [&](std::vector<proto::held_run>& h, std::string& why) {
              out = std::move(h);
              if (fault) *fault = std::move(why);
            },
            [&](caf::error& err) { ADD_FAILURE() << "held: " << sys_.render(err); });
    std::sort(out.begin(), out.end(), [](auto& a, auto& b) {
      return std::tie(a.instance_id, a.attempt) < std::tie(b.instance_id, b.attempt);
    });
    return out;
  }

  /// Stops worker `w` and waits until its outbox in `dir` can be opened again.
  void stop_worker(const proto::worker_actor& w, const fs::path& dir) {
    self_->monitor(w);
    caf::anon_send_exit(w, caf::exit_reason::user_shutdown);
    self_->receive([](const caf::down_msg&) {}, caf::after(5s) >> [] {});
    auto deadline = steady::now() + 5s;
    while (steady::now() < deadline) {
      if (outbox::open(dir.string())) return;  // closed again at once
      std::this_thread::sleep_for(20ms);
    }
    ADD_FAILURE() << "the stopped worker's outbox stays locked";
  }

  worker_test_config cfg_;
  caf::actor_system sys_;
  caf::scoped_actor self_;
  fs::path dir_;
  std::shared_ptr<run_pool> pool_;
  proto::worker_actor worker_;
  proto::worker_proxy_actor proxy_;
  std::vector<proto::worker_proxy_actor> proxies_;
  std::vector<proto::worker_actor> workers_;  // spawn_worker's
  std::string last_from_;
};

}  // namespace
}  // namespace aisched::worker
