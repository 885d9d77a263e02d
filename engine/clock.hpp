// orch::engine clock: the time source of the engine's decisions, a port. The worker reads the
// system clock; the seeded simulation (tests/sim) its own simulated clock, so that a seed replays
// exactly. The call path's randomness (the backoff's jitter) is handed in the same way, as a
// seeded std::mt19937_64 (the standard's uniform random bit generator); the simulation seeds it
// from the run's seed.
#pragma once

#include "campaigns/campaigns.hpp"

namespace orch::engine {

class clock_port {
public:
    virtual ~clock_port() = default;
    virtual campaigns::time_point now() const = 0;
};

// The system clock (std::chrono::system_clock), shared: it has no state.
const clock_port& system_clock();

}  // namespace orch::engine
