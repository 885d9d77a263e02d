// Durations, working hours and the time-zone rules of machine.hpp (in_working_hours,
// next_working_start) through Howard Hinnant's date/tz, which reads the system tz database.
#include "api/text.hpp"
#include "campaigns/detail/assert.hpp"
#include "campaigns/detail/time_rules.hpp"
#include "campaigns/loader.hpp"
#include "campaigns/machine.hpp"

#include <date/tz.h>

#include <cmath>

#include <charconv>

namespace orch::campaigns {

namespace detail {

namespace {

struct duration_unit {
    char letter;
    std::int64_t seconds;
};
constexpr duration_unit duration_units[] = {{'d', 86400}, {'h', 3600}, {'m', 60}, {'s', 1}};

// Two digits at text[at]; -1 when not digits.
int two_digits(const std::string& text, std::size_t at) {
    char a = text[at];
    char b = text[at + 1];
    if (a < '0' || a > '9' || b < '0' || b > '9') {
        return -1;
    }
    return (a - '0') * 10 + (b - '0');
}

// "HH:MM" at text[at] -> minute of day (24:00 allowed when `end`); -1 when not a time of day.
int time_of_day(const std::string& text, std::size_t at, bool end) {
    if (text[at + 2] != ':') {
        return -1;
    }
    int h = two_digits(text, at);
    int m = two_digits(text, at + 3);
    if (h < 0 || m < 0 || m > 59) {
        return -1;
    }
    if (h < 24 || (end && h == 24 && m == 0)) {
        return h * 60 + m;
    }
    return -1;
}

}  // namespace

std::optional<std::int64_t> parse_duration(const std::string& text) {
    std::int64_t total = 0;
    std::size_t at = 0;
    std::size_t next_unit = 0;  // units must come in the order d, h, m, s, each once
    while (at < text.size()) {
        if (text[at] < '0' || text[at] > '9') {
            return std::nullopt;  // also refuses a sign
        }
        std::int64_t count = 0;
        auto [end, ec] = std::from_chars(text.data() + at, text.data() + text.size(), count);
        if (ec != std::errc() || end == text.data() + text.size()) {
            return std::nullopt;
        }
        at = static_cast<std::size_t>(end - text.data());
        while (next_unit < std::size(duration_units) && duration_units[next_unit].letter != text[at]) {
            ++next_unit;
        }
        if (next_unit == std::size(duration_units) || count > duration_seconds_max) {
            return std::nullopt;
        }
        total += count * duration_units[next_unit].seconds;
        if (total > duration_seconds_max) {
            return std::nullopt;
        }
        ++next_unit;
        ++at;
    }
    if (text.empty()) {
        return std::nullopt;
    }
    return total;
}

std::string format_duration(seconds d) {
    std::int64_t left = d.count();
    if (left == 0) {
        return "0s";
    }
    std::string out;
    for (const duration_unit& u : duration_units) {
        if (left >= u.seconds) {
            out += std::to_string(left / u.seconds) + u.letter;
            left %= u.seconds;
        }
    }
    return out;
}

std::optional<hours_range> parse_hours(const std::string& text, std::string& error) {
    if (text.size() != 11 || text[5] != '-') {
        error = "hours '" + text + "' must look like 09:00-18:00";
        return std::nullopt;
    }
    int start = time_of_day(text, 0, false);
    int end = time_of_day(text, 6, true);
    if (start < 0 || end < 0) {
        error = "hours '" + text + "': " + (start < 0 ? text.substr(0, 5) : text.substr(6)) +
                " is not a time of day (00:00 to 23:59; the end may be 24:00)";
        return std::nullopt;
    }
    if (end <= start) {
        error = "hours '" + text +
                "': the end must be after the start (a window across midnight is not supported)";
        return std::nullopt;
    }
    return hours_range{start, end};
}

std::string format_minute(int minute_of_day) {
    auto two = [](int v) { return std::string(v < 10 ? "0" : "") + std::to_string(v); };
    return two(minute_of_day / 60) + ":" + two(minute_of_day % 60);
}

bool is_known_time_zone(const std::string& name) {
    if (name == "localtime" || name == "posixrules" || name == "Factory") {
        return false;  // the host's choice, or no zone: a campaign must mean the same everywhere
    }
    try {
        return date::locate_zone(name) != nullptr;
    } catch (const std::exception&) {
        return false;  // date reports an unknown name with std::runtime_error
    }
}

std::vector<std::string> time_zone_names() {
    // With the system database (USE_OS_TZDB) every file is a zone, links included.
    std::vector<std::string> names;
    const date::tzdb& db = date::get_tzdb();
    for (const date::time_zone& z : db.zones) {
        names.emplace_back(z.name());
    }
    return names;
}

}  // namespace detail

namespace {

const date::time_zone* zone_of(const schedule& s) {
    const date::time_zone* zone = nullptr;
    try {
        zone = date::locate_zone(s.time_zone);
    } catch (const std::exception&) {
        zone = nullptr;
    }
    ORCH_CAMPAIGNS_ASSERT(zone != nullptr, "schedule time zone unknown (the loader validates it)");
    return zone;
}

bool in_hours_at(const schedule& s, const date::time_zone* zone, time_point t) {
    date::local_seconds local = zone->to_local(date::floor<seconds>(t));
    date::local_days day = date::floor<date::days>(local);
    unsigned weekday_index = date::weekday(day).iso_encoding() - 1;  // Monday = 0
    auto minute = static_cast<int>(std::chrono::duration_cast<std::chrono::minutes>(local - day).count());
    return s.days[weekday_index] && minute >= s.start_minute && minute < s.end_minute;
}

}  // namespace

bool in_working_hours(const schedule& s, time_point t) {
    return in_hours_at(s, zone_of(s), t);
}

time_point next_working_start(const schedule& s, time_point t) {
    const date::time_zone* zone = zone_of(s);
    if (in_hours_at(s, zone, t)) {
        return t;
    }
    date::local_days today = date::floor<date::days>(zone->to_local(date::floor<seconds>(t)));
    // Two weeks bound the search: an enabled day comes within 7, and a start time that falls into
    // a daylight-saving gap (the window may then be empty that day) happens once a year.
    for (int i = 0; i < 15; ++i) {
        date::local_days day = today + date::days{i};
        if (!s.days[date::weekday(day).iso_encoding() - 1]) {
            continue;
        }
        date::local_seconds local_start = day + std::chrono::minutes{s.start_minute};
        // A start inside a spring-forward gap maps to the end of the gap; an ambiguous one
        // (fall back) to its first occurrence.
        time_point candidate = zone->to_sys(local_start, date::choose::earliest);
        if (candidate >= t && in_hours_at(s, zone, candidate)) {
            return candidate;
        }
    }
    ORCH_CAMPAIGNS_ASSERT(false, "no working day within two weeks (the loader requires one day)");
    return t;
}

std::string finish_date(const schedule& s, time_point from, double working_days, seconds waits, int* days_from) {
    const date::time_zone* zone = zone_of(s);
    const date::local_days start = date::floor<date::days>(zone->to_local(date::floor<seconds>(from)));
    const auto works = [&](date::local_days d) { return s.days[date::weekday(d).iso_encoding() - 1]; };
    date::local_days day =
        date::floor<date::days>(zone->to_local(date::floor<seconds>(next_working_start(s, from))));
    double left = working_days;
    for (int guard = 0; guard < 400'000; ++guard) {
        if (works(day)) {
            left -= 1.0;
            if (left <= 0) {
                break;
            }
        }
        day += date::days{1};
    }
    // The waits in whole days, to the nearest: an hour's wait ends the same day.
    day += date::days{static_cast<int>(std::lround(static_cast<double>(waits.count()) / 86'400.0))};
    for (int guard = 0; guard < 7 && !works(day); ++guard) {
        day += date::days{1};
    }
    if (days_from != nullptr) {
        *days_from = static_cast<int>((day - start).count());
    }
    return date::format("%F", day);
}

std::string time_zone_problem(const std::string& name) {
    if (detail::is_known_time_zone(name)) {
        return "";
    }
    const std::string what = "unknown time zone '" + orch::text::escaped(name) +
                             "' (an IANA name such as Europe/Berlin or America/New_York)";
    // Zone names are case-sensitive: `utc` or `europe/paris` is one only in another case.
    const auto& names = detail::time_zone_names();
    for (const auto& z : names) {
        if (z.size() == name.size() && orch::text::ascii_lower(z) == orch::text::ascii_lower(name)) {
            return what + " (did you mean '" + z + "'? zone names are case-sensitive)";
        }
    }
    return what + orch::text::did_you_mean(name, names);
}

}  // namespace orch::campaigns
