// Names and construction of aisched errors; see errors.hpp.
#include "proto/errors.hpp"

#include <caf/atom.hpp>
#include <caf/message.hpp>
#include <caf/sec.hpp>

namespace aisched {

const char* to_string(errc x) {
  switch (x) {
    case errc::none: return "none";
    case errc::invalid_argument: return "invalid_argument";
    case errc::not_found: return "not_found";
    case errc::already_exists: return "already_exists";
    case errc::version_conflict: return "version_conflict";
    case errc::not_leader: return "not_leader";
    case errc::storage_error: return "storage_error";
    case errc::corrupted: return "corrupted";
    case errc::payload_too_large: return "payload_too_large";
    case errc::unavailable: return "unavailable";
    case errc::illegal_transition: return "illegal_transition";
    case errc::internal: return "internal";
    case errc::unauthenticated: return "unauthenticated";
    case errc::forbidden: return "forbidden";
    case errc::storage_full: return "storage_full";
    case errc::storage_unavailable: return "storage_unavailable";
    case errc::has_dependents: return "has_dependents";
    case errc::outcome_unknown: return "outcome_unknown";
    case errc::gone: return "gone";
  }
  return "internal";
}

caf::error make_error(errc code, std::string field, std::string message) {
  return caf::error{static_cast<uint8_t>(code), caf::atom("aisched"),
                    caf::make_message(std::move(field), std::move(message))};
}

error_view view(const caf::error& err) {
  error_view out;
  if (!err) return out;
  if (err.category() == caf::atom("aisched")) {
    out.code = static_cast<errc>(err.code());
    const auto& ctx = err.context();
    if (ctx.match_elements<std::string, std::string>()) {
      out.field = ctx.get_as<std::string>(0);
      out.message = ctx.get_as<std::string>(1);
    }
    return out;
  }
  if (err.category() == caf::atom("system")) {
    auto code = static_cast<caf::sec>(err.code());
    out.code = code == caf::sec::request_timeout || code == caf::sec::request_receiver_down
                   ? errc::unavailable
                   : errc::internal;
    out.message = caf::to_string(code);
    return out;
  }
  out.code = errc::internal;
  out.message = "unexpected error";
  return out;
}

}  // namespace aisched
