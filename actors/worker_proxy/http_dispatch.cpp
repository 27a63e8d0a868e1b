// External-worker protocol client; see http_dispatch.hpp.
#include "actors/worker_proxy/http_dispatch.hpp"

#include <boost/json.hpp>

#include "proto/json_wire.hpp"

namespace aisched::worker_proxy {

std::string execute_body(const proto::execute_request& req, const std::string& report_url) {
  return boost::json::serialize(proto::execute_to_json(req, report_url));
}

std::string cancel_body(const std::string& instance_id) {
  return boost::json::serialize(proto::cancel_to_json(instance_id));
}

}  // namespace aisched::worker_proxy
