// The external-worker protocol, client side: the JSON bodies of
// `POST {callback}/internal/tasks/execute` and `.../cancel` (their shapes are
// proto/json_wire's; sent with common/curl_session.hpp on dispatch threads,
// never on CAF's threads).
#pragma once

#include <string>
#include <vector>

#include "proto/interfaces.hpp"

namespace aisched::worker_proxy {

/// The execute document an external worker receives (DESIGN §6).
std::string execute_body(const proto::execute_request& req, const std::string& report_url);

/// The cancel document: `{"instance_id": ...}`, escaped whatever the id holds.
std::string cancel_body(const std::string& instance_id);

}  // namespace aisched::worker_proxy
