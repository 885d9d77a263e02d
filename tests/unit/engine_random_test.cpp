// The randomness port (engine/random.hpp): the engine's random choices draw from a source handed
// in, so a seeded source replays them, and a scripted one pins them.
#include "engine/executor.hpp"
#include "engine/random.hpp"

#include <gtest/gtest.h>

#include <algorithm>
#include <chrono>
#include <cstdint>
#include <vector>

namespace {

using orch::engine::backoff_delay;
using orch::engine::backoff_settings;
using orch::engine::random_port;
using orch::engine::seeded_random;
using namespace std::chrono_literals;

// A seeded source that counts its draws.
class counting_random final : public random_port {
public:
    explicit counting_random(std::uint64_t seed) : inner_(seed) {}
    result_type operator()() override {
        ++draws;
        return inner_();
    }
    int draws = 0;

private:
    seeded_random inner_;
};

TEST(RandomPort, ASeedReplaysTheSameDraws) {
    seeded_random a(42), b(42), c(43);
    std::vector<random_port::result_type> da, db, dc;
    for (int i = 0; i < 16; ++i) {
        da.push_back(a());
        db.push_back(b());
        dc.push_back(c());
    }
    EXPECT_EQ(da, db);
    EXPECT_NE(da, dc);
}

TEST(RandomPort, TheBackoffDrawsItsJitterFromThePortHandedIn) {
    const backoff_settings b{2'000, 600'000};
    counting_random source(1);
    for (int attempt = 0; attempt < 12; ++attempt) {
        const int before = source.draws;
        const auto d = backoff_delay(b, attempt, source);
        EXPECT_GT(source.draws, before) << "attempt " << attempt;
        // Full jitter under base * 2^attempt (capped), never under 1 s.
        EXPECT_GE(d, 1'000ms);
        EXPECT_LE(d, std::min<std::chrono::milliseconds>(600'000ms, 2'000ms * (1LL << attempt)));
    }
    // Two sources with one seed give one sequence of delays; another seed, another.
    seeded_random x(7), y(7), z(8);
    std::vector<std::chrono::milliseconds> dx, dy, dz;
    for (int i = 0; i < 20; ++i) {
        dx.push_back(backoff_delay(b, 8, x));
        dy.push_back(backoff_delay(b, 8, y));
        dz.push_back(backoff_delay(b, 8, z));
    }
    EXPECT_EQ(dx, dy);
    EXPECT_NE(dx, dz);
}

}  // namespace
