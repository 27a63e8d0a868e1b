// JSON shapes outside the REST resources of proto/json.hpp: error bodies with
// codes of the gateway's own, the external-worker protocol (execute and cancel
// bodies, the report a worker sends back), the run_failed webhook alert, and
// the AI agent's stored records and their API views. Kept apart from json.hpp
// (included nearly everywhere) so that only their few users include it.
#pragma once

#include <string>

#include <boost/json/fwd.hpp>
#include <caf/expected.hpp>

#include "proto/ai_types.hpp"
#include "proto/commands.hpp"
#include "proto/interfaces.hpp"
#include "proto/types.hpp"

namespace aisched::proto {

// -- error bodies -------------------------------------------------------------

/// The REST error body `{"error": {"code", "message", "field"}}` for a code
/// errc has none for (method_not_allowed, too_many_requests, ...); json.hpp's
/// error_to_json(caf::error) writes the same shape. Message and field are made
/// valid UTF-8 (valid_utf8).
boost::json::value error_to_json(const std::string& code, const std::string& message,
                                 const std::string& field);

// -- the external-worker protocol (DESIGN §6) ---------------------------------

/// The body of `POST {callback}/internal/tasks/execute`: the run, its secrets
/// for this attempt (the worker masks `redact` in what it reports) and the
/// URL to report to.
boost::json::value execute_to_json(const execute_request& req, const std::string& report_url);

/// The body of `POST {callback}/internal/tasks/cancel`: `{"instance_id": id}`.
boost::json::value cancel_to_json(const std::string& instance_id);

/// Reads a worker's report (`POST /api/v1/instances/{id}/report`) over `base`
/// (which names the instance): worker_id, state (running, success, failed or
/// timed_out), attempt (0..999999), exit_code, output (cut to 64 KiB), error,
/// started_at and finished_at (RFC 3339 or null). state, worker_id and attempt
/// are required. Errors are `invalid_argument` naming the field: "body" when
/// `v` is not an object, else the first unknown or ill-typed field.
caf::expected<run_result> run_result_from_json(const boost::json::value& v, run_result base = {});

// -- alerts -------------------------------------------------------------------

/// The `run_failed` webhook document for final failure `x` of task `task_name`,
/// sent by node `node_id`.
boost::json::value alert_to_json(const instance& x, const std::string& task_name,
                                 const std::string& node_id);

/// The `backup_failed` webhook document: node `node_id` failed its scheduled
/// backups into `dir` `misses` times in a row, the last at `failed_at` with
/// `error`; `last_success` is when one last succeeded (0: never, null).
boost::json::value backup_alert_to_json(const std::string& node_id, const std::string& dir,
                                        const std::string& error, uint64_t misses,
                                        unix_ms failed_at, unix_ms last_success);

// -- the AI agent's conversations ---------------------------------------------

/// The API views (times as RFC 3339).
boost::json::value to_json(const conversation& c);
boost::json::value to_json(const stored_message& m);

/// The stored records (column ai_conversations; times as unix ms). Reading is
/// lenient so that every record written so far still reads: an absent or
/// ill-typed member reads as empty or 0. Errors: `corrupted` when `v` is not
/// an object.
boost::json::value conversation_record(const conversation& c);
caf::expected<conversation> conversation_from_record(const boost::json::value& v);
/// A message record (its seq is the key's, so `seq` is not read or written).
boost::json::value message_record(const chat_message& m, unix_ms at);
caf::expected<stored_message> message_from_record(const boost::json::value& v);
boost::json::value pending_action_record(const pending_action& a);
caf::expected<pending_action> pending_action_from_record(const boost::json::value& v);

}  // namespace aisched::proto
