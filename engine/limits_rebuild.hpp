// The quota counts of a Redis that lost the limits' state (a flush, a restart without
// persistence), written back from what the database records of the calls: the rebuild behind
// limits::settings::rebuild_state (engine/limits_gate.cpp: limiter_settings).
#pragma once

#include "engine/limits/limits.hpp"

#include <cstddef>
#include <optional>
#include <string>

namespace orch::engine {

// Reads the calls of the last nine days that took effect or may have (schema/queries/limits),
// counts each in its sender's quota day, and seeds `l` with them, an (account, action) at a time.
// The number of records written. Throws std::runtime_error, saying what failed, when the database
// or Redis did (the limiter logs it).
std::optional<std::size_t> rebuild_limits_state(const std::string& database_url, limits::limiter& l);

}  // namespace orch::engine
