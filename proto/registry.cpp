// Message-type registration; see registry.hpp.
#include "proto/registry.hpp"

#include <caf/actor_system_config.hpp>
#include <caf/to_string.hpp>

#include "proto/analysis.hpp"
#include "proto/commands.hpp"
#include "proto/errors.hpp"

#include "proto/interfaces.hpp"
#include "proto/types.hpp"

namespace aisched::proto {

void register_types(caf::actor_system_config& cfg) {
  cfg.add_message_type<task>("aisched.task");
  cfg.add_message_type<pool>("aisched.pool");
  cfg.add_message_type<calendar>("aisched.calendar");
  cfg.add_message_type<controls>("aisched.controls");
  cfg.add_message_type<instance>("aisched.instance");
  cfg.add_message_type<worker>("aisched.worker");
  cfg.add_message_type<attempt_list>("aisched.attempt_list");
  cfg.add_message_type<std::vector<held_run>>("aisched.held_runs");
  cfg.add_message_type<worker_heartbeat>("aisched.worker_heartbeat");
  cfg.add_message_type<task_query>("aisched.task_query");
  cfg.add_message_type<task_page>("aisched.task_page");
  cfg.add_message_type<instance_query>("aisched.instance_query");
  cfg.add_message_type<instance_page>("aisched.instance_page");
  cfg.add_message_type<command>("aisched.command");
  cfg.add_message_type<log_entry>("aisched.log_entry");
  cfg.add_message_type<applied>("aisched.applied");
  cfg.add_message_type<run_result>("aisched.run_result");
  cfg.add_message_type<std::vector<run_result>>("aisched.run_results");
  cfg.add_message_type<raft_status>("aisched.raft_status");
  cfg.add_message_type<leadership>("aisched.leadership");
  cfg.add_message_type<pressure>("aisched.pressure");
  cfg.add_message_type<execute_request>("aisched.execute_request");
  cfg.add_message_type<std::vector<execute_request>>("aisched.execute_requests");
  cfg.add_message_type<schedule_page>("aisched.schedule_page");
  cfg.add_message_type<worker_list>("aisched.worker_list");
  cfg.add_message_type<pressure_status>("aisched.pressure_status");
  cfg.add_message_type<member_info>("aisched.member_info");
  cfg.add_message_type<membership_change>("aisched.membership_change");
  cfg.add_message_type<user>("aisched.user");
  cfg.add_message_type<api_token>("aisched.api_token");
  cfg.add_message_type<audit_entry>("aisched.audit_entry");
  cfg.add_message_type<audit_query>("aisched.audit_query");
  cfg.add_message_type<audit_page>("aisched.audit_page");
  cfg.add_message_type<user_list>("aisched.user_list");
  cfg.add_message_type<token_list>("aisched.token_list");
  cfg.add_message_type<load_query>("aisched.load_query");
  cfg.add_message_type<load_history>("aisched.load_history");
  cfg.add_message_type<prune_query>("aisched.prune_query");
  cfg.add_message_type<prune_page>("aisched.prune_page");
  cfg.add_message_type<actor_summary>("aisched.actor_summary");
  cfg.add_message_type<node_summary>("aisched.node_summary");
  cfg.add_message_type<failure_analysis>("aisched.failure_analysis");
  // Actor handles that travel between nodes.
  cfg.add_message_type<worker_actor>("aisched.worker_actor");
  cfg.add_message_type<worker_proxy_actor>("aisched.worker_proxy_actor");
  cfg.add_message_type<router_actor>("aisched.router_actor");
  cfg.add_message_type<trigger_actor>("aisched.trigger_actor");
  cfg.add_message_type<raft_actor>("aisched.raft_actor");
  cfg.add_message_type<commit_listener_actor>("aisched.commit_listener_actor");
  cfg.add_message_type<inspector_actor>("aisched.inspector_actor");
  cfg.add_message_type<endpoint_actor>("aisched.endpoint_actor");  // the gatekeeper's answer
  cfg.add_message_type<inspectable_actor>("aisched.inspectable_actor");
  cfg.add_message_type<analysis_actor>("aisched.analysis_actor");
  cfg.add_error_category(caf::atom("aisched"),
                         [](uint8_t code, caf::atom_value, const caf::message& ctx) {
                           return std::string("aisched_error(") +
                                  to_string(static_cast<errc>(code)) +
                                  (ctx.empty() ? "" : ", " + caf::to_string(ctx)) + ")";
                         });
}

}  // namespace aisched::proto
