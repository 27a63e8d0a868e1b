// aisched-chaos, one leader per term: reads every member's whole log (each start
// appended) for its "elected leader" lines and finds any term that two members
// won. Pure: text in, violations out.
#pragma once

#include <cstddef>
#include <map>
#include <string>
#include <vector>

namespace aisched::chaos {

/// Checks that no term had two leaders over the whole history: `logs` holds each
/// member's whole log by member id. Returns the violations, one line each;
/// `elections` is set to the number of won elections seen.
std::vector<std::string> check_one_leader_per_term(const std::map<std::string, std::string>& logs,
                                                   size_t& elections);

}  // namespace aisched::chaos
