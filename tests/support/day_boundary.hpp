// Integration tests count quota days, day caps and "today" in UTC (and, for a few, in a schedule's
// zone): a test that runs across a day's boundary sees two days, and its counts split between them.
// Such a test starts only when the boundary is further away than it runs: one starting less than
// `margin` before the hour `utc_hour`:00 UTC (midnight by default) waits until just past it. A run
// that crosses midnight pays this once per test process that starts in the margin, at most the
// margin; any other run, nothing.
#pragma once

#include <chrono>
#include <cstdio>
#include <thread>

namespace orch::test {

inline void wait_out_utc_boundary(std::chrono::seconds margin = std::chrono::seconds(120), int utc_hour = 0) {
    using namespace std::chrono;
    const auto now = system_clock::now();
    const auto day = floor<days>(now);
    auto boundary = day + hours(utc_hour);
    if (boundary <= now) {
        boundary += days(1);
    }
    if (boundary - now < margin) {
        const auto wait = boundary - now + seconds(2);
        std::fprintf(stderr, "[day boundary] %lld s to %02d:00 UTC: the test waits until past it\n",
                     static_cast<long long>(duration_cast<seconds>(boundary - now).count()), utc_hour);
        std::this_thread::sleep_for(wait);
    }
}

}  // namespace orch::test
