// Durations ("7d", "12h", "1d12h"), working hours ("09:00-18:00") and time-zone names.
#pragma once

#include "campaigns/model.hpp"

#include <optional>
#include <string>
#include <vector>

namespace orch::campaigns::detail {

inline constexpr std::int64_t duration_seconds_max = 365LL * 24 * 3600;

// Seconds of a duration text; nullopt when malformed (number-unit pairs in the order d, h, m,
// s, each at most once) or longer than duration_seconds_max.
std::optional<std::int64_t> parse_duration(const std::string& text);
std::string format_duration(seconds d);

struct hours_range {
    int start_minute = 0;
    int end_minute = 0;
};
// "HH:MM-HH:MM", 00:00 <= start < end <= 24:00; on failure `error` says what is wrong.
std::optional<hours_range> parse_hours(const std::string& text, std::string& error);
std::string format_minute(int minute_of_day);

bool is_known_time_zone(const std::string& name);
// Every zone and link name of the tz database (for "did you mean").
std::vector<std::string> time_zone_names();

}  // namespace orch::campaigns::detail
