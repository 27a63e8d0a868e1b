// The snapshot route; see snapshot_route.hpp.
#include "gateway/snapshot_route.hpp"

#include <chrono>
#include <memory>

#include <caf/actor_system.hpp>
#include <caf/event_based_actor.hpp>

#include "common/log.hpp"
#include "proto/errors.hpp"
#include "common/clock.hpp"
#include "storage/backup_export.hpp"
#include "storage/rocks.hpp"

namespace aisched::gateway {

using namespace proto;

namespace {

using pump_atom = caf::atom_constant<caf::atom("snappump")>;

constexpr size_t piece_bytes = 1 << 20;         // read from RocksDB at a time
constexpr size_t max_queued = 8 << 20;          // waiting in the server for the client
constexpr auto wait_for_client = std::chrono::milliseconds(20);
constexpr auto stall_limit = std::chrono::seconds(120);  // a client that reads nothing

/// One export in progress. `db` is declared first: it outlives the export.
struct export_job {
  std::shared_ptr<storage::rocks> db;
  std::unique_ptr<storage::backup_export> source;
  std::shared_ptr<stream_writer> out;
  std::chrono::steady_clock::time_point progress = steady_now();
  size_t last_queued = 0;
};

/// Hands the file to the client piece by piece, on its own thread (detached):
/// reading RocksDB never blocks a scheduler thread or the I/O threads.
caf::behavior pump_export(caf::event_based_actor* self, std::shared_ptr<export_job> job) {
  self->send(self, pump_atom::value);
  return {
      [=](pump_atom) {
        auto& j = *job;
        auto now = steady_now();
        if (!j.out->open()) {
          log::warn("snapshot not saved: the client went away",
                    {{"index", std::to_string(j.source->header().index)},
                     {"bytes", std::to_string(j.source->bytes())}});
          return self->quit();
        }
        auto queued = j.out->queued_bytes();
        if (queued < j.last_queued || queued == 0) j.progress = now;
        j.last_queued = queued;
        if (queued > max_queued) {
          if (now - j.progress > stall_limit) {
            log::warn("snapshot not saved: the client stopped reading",
                      {{"index", std::to_string(j.source->header().index)}});
            j.out->close();  // without the trailer: the client sees a truncated file
            return self->quit();
          }
          self->delayed_send(self, wait_for_client, pump_atom::value);
          return;
        }
        auto piece = j.source->next(piece_bytes);
        if (!piece) {
          log::error("snapshot export failed", {{"error", view(piece.error()).message}});
          j.out->close();  // without the trailer: refused as truncated by every reader
          return self->quit();
        }
        if (piece->empty()) {
          log::info("snapshot saved", {{"index", std::to_string(j.source->header().index)},
                                       {"records", std::to_string(j.source->records())},
                                       {"bytes", std::to_string(j.source->bytes())},
                                       {"sha256", j.source->checksum()}});
          j.out->close();
          return self->quit();
        }
        j.progress = now;
        if (!j.out->write(std::move(*piece))) return self->quit();
        self->send(self, pump_atom::value);
      },
  };
}

/// On the leader: pins the state now, answers with the stream of its file.
void answer_with_export(const api_context& ctx, const reply_fn& reply) {
  auto job = std::make_shared<export_job>();
  job->db = ctx.db;
  auto source = storage::backup_export::open(
      *job->db, storage::backup_export::origin{ctx.node_id, AISCHED_VERSION, system_now_ms()});
  if (!source) return reply(error_response(source.error()));
  job->source = std::move(*source);
  auto& h = job->source->header();
  http_response res;
  res.content_type = "application/octet-stream";
  res.headers = {{"X-Aisched-Snapshot-Index", std::to_string(h.index)},
                 {"X-Aisched-Cluster-Id", h.cluster_id},
                 {"Content-Disposition", "attachment; filename=\"aisched-" +
                                             std::to_string(h.index) + ".snapshot\""}};
  auto* sys = ctx.sys;
  // Not called if the client is gone before the headers: the job (and its
  // pinned snapshot) goes with the response then.
  res.stream = [sys, job](std::shared_ptr<stream_writer> out) {
    job->out = std::move(out);
    sys->spawn<caf::detached>(pump_export, job);
  };
  reply(std::move(res));
}

}  // namespace

void get_cluster_snapshot(route_call& c) {
  auto ctx = c.ctx;
  auto reply = c.reply;
  if (!ctx.db)
    return reply(error_response(
        make_error(errc::unavailable, "", "this node has no state to export")));
  ctx.sys->spawn([ctx, reply](caf::event_based_actor* self) {
    self->request(ctx.raft, ctx.timeout, raft_status_atom::value)
        .then(
            [=](raft_status& s) {
              if (s.role != "leader")
                return reply(error_response(make_error(
                    errc::not_leader, "",
                    "member " + s.node_id + " is not the leader: the leader serves snapshots (" +
                        (s.leader_id.empty() ? std::string("none is known now; retry shortly")
                                             : "member " + s.leader_id +
                                                   "; `aischedctl cluster status` shows its "
                                                   "http_addr") +
                        ")")));
              answer_with_export(ctx, reply);
            },
            [=](caf::error& e) { reply(error_response(e)); });
  });
}

}  // namespace aisched::gateway
