#pragma once

// When each account's next full catch-up sweep is due (serve's leader). The sweep is a safety net
// for events the deliveries lost, and every sweep is billed: an account whose sweeps keep finding
// nothing the deliveries missed is swept less often, its interval doubling from sweep_seconds up
// to a ceiling, and one whose sweep finds a missed event is swept every sweep_seconds again. A
// sweep that failed leaves the interval as it was (it proved nothing either way). Sweeps after a
// gap in intake are not governed by this: they run as soon as the gap is known.

#include <algorithm>
#include <chrono>
#include <cstddef>
#include <map>
#include <optional>
#include <string>

namespace orch::engine {

class sweep_schedule {
public:
    using clock = std::chrono::steady_clock;

    // every: sweep_seconds; ceiling: the longest interval a quiet account reaches (taken as
    // `every` when smaller).
    sweep_schedule(std::chrono::seconds every, std::chrono::seconds ceiling)
        : every_(every), ceiling_(std::max(every, ceiling)) {}

    // Whether the account's full sweep is due at a tick at `now`. The ticks come every
    // sweep_seconds, give or take the time the sweeps take: a sweep due within half an interval
    // of a tick is taken at it, not a whole interval later.
    bool due(const std::string& account, clock::time_point now) const {
        auto it = accounts_.find(account);
        return it == accounts_.end() || now + every_ / 2 >= it->second.started + it->second.interval;
    }

    // Records a full sweep started at `started`: completed (every read it meant to make was
    // answered) and the events it stored that no delivery had. Returns the account's new interval
    // when it changed.
    std::optional<std::chrono::seconds> done(const std::string& account, clock::time_point started, bool completed,
                                             std::size_t found) {
        auto [it, fresh] = accounts_.try_emplace(account, state{started, every_});
        auto& s = it->second;
        s.started = started;
        const auto before = s.interval;
        if (found > 0) {
            s.interval = every_;
        } else if (completed) {
            s.interval = std::min(ceiling_, s.interval * 2);
        }
        if (s.interval == before) {
            return std::nullopt;
        }
        return s.interval;
    }

    std::chrono::seconds interval(const std::string& account) const {
        auto it = accounts_.find(account);
        return it == accounts_.end() ? every_ : it->second.interval;
    }

    std::chrono::seconds every() const { return every_; }
    std::chrono::seconds ceiling() const { return ceiling_; }

private:
    struct state {
        clock::time_point started;
        std::chrono::seconds interval;
    };
    std::chrono::seconds every_;
    std::chrono::seconds ceiling_;
    std::map<std::string, state> accounts_;
};

}  // namespace orch::engine
