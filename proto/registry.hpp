// Registers every proto type that travels as a top-level message with CAF.
// Call once on the actor_system_config before creating the actor_system.
#pragma once

namespace caf {
class actor_system_config;
}

namespace aisched::proto {

/// Adds aisched's message types and its error category to `cfg`.
void register_types(caf::actor_system_config& cfg);

}  // namespace aisched::proto
