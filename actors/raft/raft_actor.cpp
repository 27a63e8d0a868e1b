// Behaviour of the raft actor for a group of one; see raft_actor.hpp.
#include "actors/raft/raft_actor.hpp"

#include <caf/stateful_actor.hpp>
#include <caf/typed_event_based_actor.hpp>

#include "proto/errors.hpp"
#include "storage/rocks.hpp"
#include "storage/state_machine.hpp"

namespace aisched::raft {

using namespace proto;

caf::expected<storage::raft_log> recover(storage::rocks& db, storage::state_machine& sm,
                                         const std::string& node_id) {
  auto log = storage::raft_log::open(db);
  if (!log) return log.error();
  // Replay in bounded chunks so a long log does not need to fit in memory.
  constexpr size_t chunk = 4096;
  while (sm.applied_index() < log->last_index()) {
    auto entries = log->read(sm.applied_index() + 1, log->last_index(), chunk);
    if (!entries) return entries.error();
    if (entries->empty())
      return make_error(errc::corrupted, "raft log ends before index " +
                                             std::to_string(sm.applied_index() + 1));
    auto r = sm.apply(*entries);
    if (!r) return r.error();
  }
  // A new term for the new incarnation; it votes for itself and leads.
  storage::hard_state hs = log->state();
  hs.term += 1;
  hs.voted_for = node_id;
  hs.commit = log->last_index();
  if (auto err = log->save(hs)) return err;
  return log;
}

namespace {

void flush(raft_actor::stateful_pointer<raft_state> self) {
  auto& st = self->state;
  st.flush_scheduled = false;
  if (st.pending.empty()) return;
  auto entries = std::move(st.pending);
  auto promises = std::move(st.promises);
  st.pending.clear();
  st.promises.clear();
  auto hs = st.log->state();
  hs.commit = entries.back().index;
  auto fail_all = [&](const caf::error& err) {
    for (auto& p : promises) p.deliver(err);
    // A node that cannot write its log must not pretend to lead.
    self->quit(err);
  };
  if (auto err = st.log->append(entries, hs)) return fail_all(err);
  auto results = st.sm->apply(entries);
  if (!results) return fail_all(results.error());
  for (size_t i = 0; i < results->size(); ++i) {
    auto& r = (*results)[i];
    if (r) {
      for (auto& l : st.listeners) self->send(l, committed_atom::value, *r);
      promises[i].deliver(std::move(*r));
    } else {
      promises[i].deliver(r.error());
    }
  }
}

}  // namespace

raft_actor::behavior_type raft_actor_impl(raft_actor::stateful_pointer<raft_state> self,
                                          std::string node_id,
                                          std::shared_ptr<storage::rocks> db,
                                          std::shared_ptr<storage::state_machine> sm,
                                          storage::raft_log log) {
  auto& st = self->state;
  st.db = std::move(db);
  st.sm = std::move(sm);
  st.log = std::make_unique<storage::raft_log>(std::move(log));
  st.node_id = std::move(node_id);
  return {
      [=](propose_atom, command& cmd) -> caf::result<applied> {
        auto& st = self->state;
        log_entry e;
        e.index = st.log->last_index() + st.pending.size() + 1;
        e.term = st.log->state().term;
        e.cmd = std::move(cmd);
        st.pending.push_back(std::move(e));
        auto rp = self->make_response_promise<applied>();
        st.promises.push_back(rp);
        if (!st.flush_scheduled) {
          // Proposals already queued behind this one join the same batch:
          // the flush message is handled after them.
          st.flush_scheduled = true;
          self->send(self, flush_atom::value);
        }
        return rp;
      },
      [=](flush_atom) { flush(self); },
      [=](raft_status_atom) {
        auto& st = self->state;
        raft_status s;
        s.node_id = st.node_id;
        s.role = "leader";
        s.leader_id = st.node_id;
        s.term = st.log->state().term;
        s.commit_index = st.log->state().commit;
        s.applied_index = st.sm->applied_index();
        s.last_log_index = st.log->last_index();
        return s;
      },
      [=](subscribe_atom, commit_listener_actor listener) {
        auto& st = self->state;
        leadership l{true, st.log->state().term, st.node_id};
        self->send(listener, leader_atom::value, l);
        st.listeners.push_back(std::move(listener));
      },
  };
}

}  // namespace aisched::raft
