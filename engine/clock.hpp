// orch::engine clock: the time source of the engine's decisions, a port. The worker reads the
// system clock; the seeded simulation (tests/sim) its own simulated clock, so that a seed replays
// exactly. Randomness is a port of its own (engine/random.hpp).
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
