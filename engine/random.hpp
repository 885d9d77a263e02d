// orch::engine randomness: the source of the engine's random choices, a port, as the clock is
// (engine/clock.hpp): the backoff's jitter, the spread of wake-ups after a cooldown. The worker
// seeds each source from std::random_device; the seeded simulation (tests/sim) from its run's
// seed, so that a seed replays exactly. Outside the port (none of them run in the simulation):
// the Redis limiter's (engine/limits) pacing gaps and its jitter of a cooldown without
// Retry-After, the lanes' claim sweeps (engine/pg_lane_store) and the store's pause before a
// retry after a deadlock, each from a generator of its own.
//
// A random_port is a uniform random bit generator (std::uniform_random_bit_generator), so the
// standard distributions draw from it directly. One source is used by one thread at a time (its
// owner's, or under its owner's lock).
#pragma once

#include <cstdint>
#include <limits>
#include <random>

namespace orch::engine {

class random_port {
public:
    using result_type = std::uint64_t;
    static constexpr result_type min() { return 0; }
    static constexpr result_type max() { return std::numeric_limits<result_type>::max(); }
    virtual ~random_port() = default;
    virtual result_type operator()() = 0;
};

// std::mt19937_64 behind the port.
class seeded_random final : public random_port {
public:
    explicit seeded_random(std::uint64_t seed) : engine_(seed) {}
    // Seeded from std::random_device (64 bits).
    seeded_random() : seeded_random(random_seed()) {}
    result_type operator()() override { return engine_(); }

    static std::uint64_t random_seed() {
        std::random_device rd;
        return (static_cast<std::uint64_t>(rd()) << 32) ^ rd();
    }

private:
    std::mt19937_64 engine_;
};

static_assert(std::uniform_random_bit_generator<random_port>);

}  // namespace orch::engine
