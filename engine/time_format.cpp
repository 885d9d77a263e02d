#include "engine/time_format.hpp"

#include <cctype>
#include <cstdio>

namespace orch {

namespace {

std::string format(std::chrono::system_clock::time_point t, bool with_ms) {
    using namespace std::chrono;
    auto ms_total = duration_cast<milliseconds>(t.time_since_epoch()).count();
    auto secs = ms_total / 1000;
    auto ms = ms_total % 1000;
    if (ms < 0) {
        ms += 1000;
        secs -= 1;
    }
    sys_days day{days{secs >= 0 ? secs / 86400 : (secs - 86399) / 86400}};
    long long sod = secs - static_cast<long long>(day.time_since_epoch().count()) * 86400;
    year_month_day ymd{day};
    char buf[40];
    if (with_ms) {
        std::snprintf(buf, sizeof buf, "%04d-%02u-%02uT%02lld:%02lld:%02lld.%03lldZ", int(ymd.year()),
                      unsigned(ymd.month()), unsigned(ymd.day()), sod / 3600, (sod / 60) % 60, sod % 60,
                      static_cast<long long>(ms));
    } else {
        std::snprintf(buf, sizeof buf, "%04d-%02u-%02uT%02lld:%02lld:%02lldZ", int(ymd.year()),
                      unsigned(ymd.month()), unsigned(ymd.day()), sod / 3600, (sod / 60) % 60, sod % 60);
    }
    return buf;
}

bool digits(std::string_view s, std::size_t pos, std::size_t n, int& out) {
    if (pos + n > s.size()) {
        return false;
    }
    int v = 0;
    for (std::size_t i = pos; i < pos + n; ++i) {
        if (!std::isdigit(static_cast<unsigned char>(s[i]))) {
            return false;
        }
        v = v * 10 + (s[i] - '0');
    }
    out = v;
    return true;
}

} // namespace

std::string iso8601_ms(std::chrono::system_clock::time_point t) { return format(t, true); }
std::string iso8601_s(std::chrono::system_clock::time_point t) { return format(t, false); }

std::optional<std::chrono::system_clock::time_point> parse_iso8601(std::string_view s) {
    using namespace std::chrono;
    int y, mo, d, h, mi, sec;
    if (!digits(s, 0, 4, y) || s.size() < 19 || s[4] != '-' || !digits(s, 5, 2, mo) || s[7] != '-' ||
        !digits(s, 8, 2, d) || (s[10] != 'T' && s[10] != 't' && s[10] != ' ') || !digits(s, 11, 2, h) ||
        s[13] != ':' || !digits(s, 14, 2, mi) || s[16] != ':' || !digits(s, 17, 2, sec)) {
        return std::nullopt;
    }
    year_month_day ymd{year{y}, month{static_cast<unsigned>(mo)}, day{static_cast<unsigned>(d)}};
    // system_clock counts nanoseconds in 64 bits here: instants past 2262 do not fit.
    if (!ymd.ok() || y < 1678 || y > 2261 || h > 23 || mi > 59 || sec > 60) {
        return std::nullopt;
    }
    std::size_t pos = 19;
    long long frac_us = 0;
    if (pos < s.size() && s[pos] == '.') {
        ++pos;
        std::size_t start = pos;
        long long scale = 100000;
        while (pos < s.size() && std::isdigit(static_cast<unsigned char>(s[pos]))) {
            if (scale > 0) {
                frac_us += (s[pos] - '0') * scale;
                scale /= 10;
            }
            ++pos;
        }
        if (pos == start) {
            return std::nullopt;
        }
    }
    long long offset_s = 0;
    if (pos < s.size()) {
        if ((s[pos] == 'Z' || s[pos] == 'z') && pos + 1 == s.size()) {
            pos = s.size();
        } else if (s[pos] == '+' || s[pos] == '-') {
            int oh = 0, om = 0;
            bool ok = digits(s, pos + 1, 2, oh);
            std::size_t next = pos + 3;
            if (ok && next < s.size() && s[next] == ':') {
                ++next;
            }
            ok = ok && digits(s, next, 2, om) && next + 2 == s.size();
            if (!ok) {
                return std::nullopt;
            }
            offset_s = (oh * 3600LL + om * 60LL) * (s[pos] == '+' ? 1 : -1);
        } else {
            return std::nullopt;
        }
    }
    auto tp = sys_days{ymd} + hours{h} + minutes{mi} + seconds{sec} + microseconds{frac_us} - seconds{offset_s};
    return time_point_cast<system_clock::duration>(tp);
}

} // namespace orch
