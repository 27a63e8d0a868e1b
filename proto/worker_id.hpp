// Worker ids as tenants know them and as the cluster keeps them (#41 item 7):
// the mapping at the API boundary, so another tenant's worker id is neither
// taken from nor shown to a tenant. Defined in types.cpp.
#pragma once

#include <string>

namespace aisched::proto {

/// Worker ids are scoped by tenant: the external worker `id` that `tenant`
/// registers is known inside the cluster (registry, runs, metrics) as
/// `id@tenant`, so two tenants may both register `w1` and neither can take,
/// nor learn of, the other's. The default tenant's ids without '@' stay bare
/// (as cluster members' workers do): no other tenant's scoped id is one of them.
std::string scoped_worker_id(const std::string& tenant, const std::string& id);

/// The id `tenant` knows its worker `id` (scoped or bare) by: the inverse of
/// scoped_worker_id, and `id` itself for a worker that is not scoped so.
std::string api_worker_id(const std::string& tenant, const std::string& id);

}  // namespace aisched::proto
