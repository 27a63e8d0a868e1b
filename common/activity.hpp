// What an inspected actor keeps about itself for the inspector: how many
// messages it handled and when it last did. A member of each actor's state;
// common/counted.hpp keeps it up to date and builds the summary.
#pragma once

#include <cstdint>

#include "proto/time.hpp"

namespace aisched::inspector {

struct activity {
  uint64_t handled = 0;
  unix_ms last_active = 0;  // 0: never; on the actor's wall clock (counted.hpp)
};

}  // namespace aisched::inspector
