// The external-worker protocol, client side: builds the JSON body of
// `POST {callback}/internal/tasks/execute` (sent with common/curl_session.hpp
// on dispatch threads, never on CAF's threads).
#pragma once

#include <string>
#include <vector>

#include <boost/json/fwd.hpp>

#include "proto/interfaces.hpp"

namespace aisched::worker_proxy {

/// The execute document an external worker receives (DESIGN §6).
std::string execute_body(const proto::execute_request& req, const std::string& report_url);

}  // namespace aisched::worker_proxy
