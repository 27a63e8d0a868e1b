// The OpenAPI 3 document of the REST API (gateway/openapi.json), embedded in
// the binary at build time (cmake/embed_file.cmake) so a node needs no file on
// disk to serve GET /api/v1/openapi.json.
#pragma once

#include <string_view>

namespace aisched::gateway {

/// The bytes of gateway/openapi.json, as built.
std::string_view openapi_document();

}  // namespace aisched::gateway
