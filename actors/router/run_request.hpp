// What a worker receives for one attempt, pure: the execute_request the router
// builds from a task and its run, with an event-fired run's payload substituted
// (actors/router/substitute) where it lands. Used by the router when it sends a
// placed run to the worker's proxy.
#pragma once

#include <functional>
#include <map>
#include <set>
#include <string>

#include <caf/expected.hpp>

#include "proto/interfaces.hpp"
#include "proto/types.hpp"

namespace aisched::router {

/// The execute request of run `x` of task `t` (its current attempt).
proto::execute_request make_request(const proto::task& t, const proto::instance& x);

/// Opens secrets `names` of `tenant`: name -> value (storage::secret_keeper::reveal).
using reveal_fn = std::function<caf::expected<std::map<std::string, std::string>>(
    const std::string& tenant, const std::set<std::string>& names)>;

/// The same with the values of the task's secrets opened by `reveal`: its
/// `secrets` map as environment variables (secret_env), an HTTP task's
/// `{{secret.NAME}}` filled in headers (as is) and body (JSON-escaped) before
/// any event value lands (a payload cannot name a secret), every value in
/// `redact`. The values exist only in the returned request. An error (the
/// run cannot be sent) when a secret is gone or secrets are disabled
/// (`reveal` empty while the task refers to one).
caf::expected<proto::execute_request> make_request(const proto::task& t,
                                                   const proto::instance& x,
                                                   const reveal_fn& reveal);

/// The failed result committed for an attempt that could not be sent (`why`),
/// started and finished at `now`.
proto::run_result unsendable(const proto::instance& x, const caf::error& why, unix_ms now);

}  // namespace aisched::router
