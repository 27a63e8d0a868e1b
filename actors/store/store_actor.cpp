// Read handlers of the store actor; see store_actor.hpp.
#include "actors/store/store_actor.hpp"

#include <caf/stateful_actor.hpp>
#include <caf/typed_event_based_actor.hpp>

#include "common/counted.hpp"
#include "storage/auth_state.hpp"
#include "storage/controls_state.hpp"
#include "storage/load_history.hpp"
#include "storage/rocks.hpp"
#include "storage/state_machine.hpp"

namespace aisched::storage {

using namespace proto;

namespace {

template <class T>
caf::result<T> answer(caf::expected<T> x) {
  if (!x) return x.error();
  return std::move(*x);
}

}  // namespace

store_actor::behavior_type store_actor_impl(store_actor::stateful_pointer<store_state> self,
                                            std::shared_ptr<rocks> db,
                                            std::shared_ptr<const state_machine> sm) {
  self->state.db = std::move(db);
  self->state.sm = std::move(sm);
  return inspector::counted(self, {
      [=](inspect_atom) {
        auto applied = std::to_string(self->state.sm->applied_index());
        return inspector::summary_of(self, {{"applied_index", applied}});
      },
      [=](get_task_atom, const std::string& tenant, uint64_t id) -> caf::result<task> {
        auto r = self->state.sm->get_task(tenant, id);
        if (!r) return r.error();
        return std::move(*r);
      },
      [=](list_tasks_atom, const task_query& q) -> caf::result<task_page> {
        auto r = self->state.sm->list_tasks(q);
        if (!r) return r.error();
        return std::move(*r);
      },
      [=](get_instance_atom, const std::string& tenant,
          const std::string& id) -> caf::result<instance> {
        auto r = self->state.sm->get_instance(tenant, id);
        if (!r) return r.error();
        return std::move(*r);
      },
      [=](attempts_atom, const std::string& tenant,
          const std::string& id) -> caf::result<attempt_list> {
        auto r = self->state.sm->list_attempts(tenant, id);
        if (!r) return r.error();
        return std::move(*r);
      },
      [=](list_instances_atom, const instance_query& q) -> caf::result<instance_page> {
        auto r = self->state.sm->list_instances(q);
        if (!r) return r.error();
        return std::move(*r);
      },
      [=](scan_atom, const task_query& q) -> caf::result<schedule_page> {
        auto r = self->state.sm->scan_schedules(q);
        if (!r) return r.error();
        return std::move(*r);
      },
      [=](get_user_atom, const std::string& name) -> caf::result<user> {
        return answer(read_user(*self->state.db, name));
      },
      [=](list_users_atom, const std::string& tenant) -> caf::result<user_list> {
        return answer(read_users(*self->state.db, tenant));
      },
      [=](get_token_atom, const std::string& hash) -> caf::result<api_token> {
        return answer(read_token_by_hash(*self->state.db, hash));
      },
      [=](share_atom, const std::string& worker_id) -> caf::result<std::string> {
        return answer(read_worker_share(*self->state.db, worker_id));
      },
      [=](controls_atom, const std::string& tenant) -> caf::result<controls> {
        return answer(storage::read_controls(*self->state.db, tenant));
      },
      [=](list_tokens_atom, const std::string& tenant) -> caf::result<token_list> {
        return answer(read_tokens(*self->state.db, tenant));
      },
      [=](list_audit_atom, const audit_query& q) -> caf::result<audit_page> {
        return answer(read_audit(*self->state.db, q));
      },
      [=](scan_atom, const instance_query& q) -> caf::result<schedule_page> {
        auto r = self->state.sm->scan_active(q);
        if (!r) return r.error();
        return std::move(*r);
      },
      [=](prune_scan_atom, const prune_query& q) -> caf::result<prune_page> {
        return answer(self->state.sm->scan_prunable(q));
      },
      [=](load_history_atom, const load_query& q) -> caf::result<load_history> {
        auto r = read_load_history(*self->state.db, q);
        if (!r) return r.error();
        return std::move(*r);
      },
  });
}

}  // namespace aisched::storage
