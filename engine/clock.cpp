#include "engine/clock.hpp"

#include <chrono>

namespace orch::engine {

namespace {
class system_clock_port final : public clock_port {
public:
    campaigns::time_point now() const override { return std::chrono::system_clock::now(); }
};
}  // namespace

const clock_port& system_clock() {
    static const system_clock_port clock;
    return clock;
}

}  // namespace orch::engine
