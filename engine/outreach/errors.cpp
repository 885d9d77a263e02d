#include "engine/outreach/errors.hpp"

#include <algorithm>
#include <array>
#include <cctype>
#include <charconv>
#include <vector>

namespace orch::outreach {

std::string_view to_string(error_kind k) {
    switch (k) {
    case error_kind::transport_connect: return "transport_connect";
    case error_kind::connection_lost: return "connection_lost";
    case error_kind::timeout: return "timeout";
    case error_kind::http_status: return "http_status";
    case error_kind::api_error: return "api_error";
    case error_kind::v1_error: return "v1_error";
    case error_kind::malformed_response: return "malformed_response";
    case error_kind::cancelled: return "cancelled";
    }
    return "unknown";
}

std::string_view to_string(disposition d) {
    switch (d) {
    case disposition::retry_later: return "retry_later";
    case disposition::back_off: return "back_off";
    case disposition::pause_account: return "pause_account";
    case disposition::stop_everything: return "stop_everything";
    case disposition::pause_budget: return "pause_budget";
    case disposition::give_up: return "give_up";
    }
    return "unknown";
}

std::string_view to_string(failure_step s) {
    switch (s) {
    case failure_step::none: return "none";
    case failure_step::pool_wait: return "pool_wait";
    case failure_step::resolve: return "resolve";
    case failure_step::connect: return "connect";
    case failure_step::tls_handshake: return "tls_handshake";
    case failure_step::write: return "write";
    case failure_step::read: return "read";
    case failure_step::parse: return "parse";
    }
    return "unknown";
}

std::string describe(const error& e) {
    std::string out(to_string(e.kind));
    if (!e.code.empty()) {
        out += " " + e.code;
    }
    if (e.http_status != 0) {
        out += " (HTTP " + std::to_string(e.http_status) + ")";
    }
    out += ": " + e.message + " [" + std::string(to_string(e.what_to_do));
    if (e.retry_after_s) {
        out += ", retry after " + std::to_string(*e.retry_after_s) + " s";
    }
    if (e.may_have_taken_effect) {
        out += ", may have taken effect";
    }
    if (e.step != failure_step::none) {
        out += ", at " + std::string(to_string(e.step));
    }
    return out + "]";
}

bool limit_names_account(std::string_view message, std::string_view account_id) {
    if (account_id.empty()) {
        return false;
    }
    // A character that may continue an id: an id inside a longer word is not named.
    const auto word = [](char c) {
        return std::isalnum(static_cast<unsigned char>(c)) != 0 || c == '_' || c == '-';
    };
    for (auto at = message.find(account_id); at != std::string_view::npos;
         at = message.find(account_id, at + 1)) {
        const auto end = at + account_id.size();
        if ((at == 0 || !word(message[at - 1])) && (end == message.size() || !word(message[end]))) {
            return true;
        }
    }
    return false;
}

disposition disposition_for(std::string_view code, int http_status) {
    struct rule {
        std::string_view code;
        disposition d;
    };
    static constexpr std::array<rule, 13> known{{
        {"RATE_LIMITED", disposition::back_off},
        {"ACCOUNT_INACTIVE", disposition::pause_account},
        {"INVALID_ACCOUNT", disposition::pause_account},
        {"INVALID_API_KEY", disposition::stop_everything},
        {"INSUFFICIENT_CREDITS", disposition::pause_budget},
        {"INVALID_PARAMS", disposition::give_up},
        {"INVALID_ACTION", disposition::give_up},
        {"CHANNEL_ERROR", disposition::give_up},
        {"FORBIDDEN", disposition::give_up},
        {"NOT_FOUND", disposition::give_up},
        {"METHOD_NOT_ALLOWED", disposition::give_up},
        {"INTERNAL_ERROR", disposition::retry_later},
        {"SERVICE_UNAVAILABLE", disposition::retry_later},
    }};
    for (const auto& r : known) {
        if (r.code == code) {
            return r.d;
        }
    }
    if (http_status >= 500) {
        return disposition::retry_later;
    }
    switch (http_status) {
    case 429: return disposition::back_off;
    case 402: return disposition::pause_budget;
    case 408: return disposition::retry_later;
    default: break;
    }
    return http_status >= 400 ? disposition::give_up : disposition::retry_later;
}

bool status_may_have_taken_effect(int http_status) {
    return http_status == 500 || http_status == 502 || http_status == 503 || http_status == 504;
}

namespace {

std::string lower(std::string_view s) {
    std::string out(s);
    std::transform(out.begin(), out.end(), out.begin(), [](unsigned char c) { return std::tolower(c); });
    return out;
}

bool contains(const std::string& haystack, std::string_view needle) {
    return haystack.find(needle) != std::string::npos;
}

} // namespace

std::string v1_code_from_message(std::string_view message) {
    std::string m = lower(message);
    if (contains(m, "insufficient credit") || contains(m, "not enough credit")) {
        return "INSUFFICIENT_CREDITS";
    }
    if (contains(m, "temporarily unavailable") || contains(m, "try again later")) {
        return "SERVICE_UNAVAILABLE";
    }
    if (contains(m, "rate limit") || contains(m, "too many requests")) {
        return "RATE_LIMITED";
    }
    if (contains(m, "api key") || contains(m, "api_key")) {
        return "INVALID_API_KEY";
    }
    if (contains(m, "is required") || contains(m, "must be") || contains(m, "invalid")) {
        return "INVALID_PARAMS";
    }
    return "V1_ERROR";
}

namespace {

bool all_digits(std::string_view s) {
    return !s.empty() && std::all_of(s.begin(), s.end(), [](unsigned char c) { return std::isdigit(c) != 0; });
}

std::optional<int> to_int(std::string_view s) {
    if (!all_digits(s)) {
        return std::nullopt;
    }
    int v = 0;
    auto [p, ec] = std::from_chars(s.data(), s.data() + s.size(), v);
    if (ec != std::errc{} || p != s.data() + s.size()) {
        return std::nullopt;
    }
    return v;
}

std::optional<unsigned> month_number(std::string_view name) {
    static constexpr std::array<std::string_view, 12> months{"Jan", "Feb", "Mar", "Apr", "May", "Jun",
                                                             "Jul", "Aug", "Sep", "Oct", "Nov", "Dec"};
    for (unsigned i = 0; i < months.size(); ++i) {
        if (months[i] == name) {
            return i + 1;
        }
    }
    return std::nullopt;
}

// "08:49:37" -> seconds of the day.
std::optional<int> clock_seconds(std::string_view s) {
    if (s.size() != 8 || s[2] != ':' || s[5] != ':') {
        return std::nullopt;
    }
    auto h = to_int(s.substr(0, 2));
    auto m = to_int(s.substr(3, 2));
    auto sec = to_int(s.substr(6, 2));
    if (!h || !m || !sec || *h > 23 || *m > 59 || *sec > 60) {
        return std::nullopt;
    }
    return *h * 3600 + *m * 60 + *sec;
}

std::optional<std::chrono::system_clock::time_point> make_time(int year, unsigned month, int day, int sod) {
    using namespace std::chrono;
    year_month_day ymd{std::chrono::year{year}, std::chrono::month{month}, std::chrono::day{static_cast<unsigned>(day)}};
    if (!ymd.ok()) {
        return std::nullopt;
    }
    return sys_days{ymd} + seconds{sod};
}

std::vector<std::string_view> split_spaces(std::string_view s) {
    std::vector<std::string_view> out;
    std::size_t i = 0;
    while (i < s.size()) {
        while (i < s.size() && s[i] == ' ') {
            ++i;
        }
        std::size_t j = i;
        while (j < s.size() && s[j] != ' ') {
            ++j;
        }
        if (j > i) {
            out.push_back(s.substr(i, j - i));
        }
        i = j;
    }
    return out;
}

// IMF-fixdate "Sun, 06 Nov 1994 08:49:37 GMT", RFC 850 "Sunday, 06-Nov-94 08:49:37 GMT",
// asctime "Sun Nov  6 08:49:37 1994".
std::optional<std::chrono::system_clock::time_point> parse_http_date(std::string_view s) {
    auto parts = split_spaces(s);
    if (parts.size() == 6 && parts[0].ends_with(",") && parts[5] == "GMT") {
        auto day = to_int(parts[1]);
        auto month = month_number(parts[2]);
        auto year = to_int(parts[3]);
        auto sod = clock_seconds(parts[4]);
        if (day && month && year && sod) {
            return make_time(*year, *month, *day, *sod);
        }
        return std::nullopt;
    }
    if (parts.size() == 4 && parts[0].ends_with(",") && parts[3] == "GMT" && parts[1].size() == 9 &&
        parts[1][2] == '-' && parts[1][6] == '-') {
        auto day = to_int(parts[1].substr(0, 2));
        auto month = month_number(parts[1].substr(3, 3));
        auto yy = to_int(parts[1].substr(7, 2));
        auto sod = clock_seconds(parts[2]);
        if (day && month && yy && sod) {
            // RFC 7231 7.1.1.1: a two-digit year more than 50 years ahead is in the past century.
            return make_time(*yy < 70 ? 2000 + *yy : 1900 + *yy, *month, *day, *sod);
        }
        return std::nullopt;
    }
    if (parts.size() == 5) {
        auto month = month_number(parts[1]);
        auto day = to_int(parts[2]);
        auto sod = clock_seconds(parts[3]);
        auto year = to_int(parts[4]);
        if (month && day && sod && year) {
            return make_time(*year, *month, *day, *sod);
        }
    }
    return std::nullopt;
}

std::string_view trim(std::string_view s) {
    while (!s.empty() && (s.front() == ' ' || s.front() == '\t')) {
        s.remove_prefix(1);
    }
    while (!s.empty() && (s.back() == ' ' || s.back() == '\t')) {
        s.remove_suffix(1);
    }
    return s;
}

} // namespace

std::optional<std::int64_t> parse_retry_after(std::string_view header, std::chrono::system_clock::time_point now) {
    header = trim(header);
    if (header.empty()) {
        return std::nullopt;
    }
    if (all_digits(header)) {
        std::int64_t v = 0;
        auto [p, ec] = std::from_chars(header.data(), header.data() + header.size(), v);
        if (ec != std::errc{} || v > max_retry_after_s) {
            return std::nullopt;  // out of range too: not believable
        }
        return v;
    }
    auto at = parse_http_date(header);
    if (!at) {
        return std::nullopt;
    }
    auto ms = std::chrono::duration_cast<std::chrono::milliseconds>(*at - now).count();
    if (ms <= 0) {
        return 0;
    }
    const std::int64_t s = (ms + 999) / 1000;
    return s > max_retry_after_s ? std::nullopt : std::optional<std::int64_t>(s);
}

error make_api_error(error_kind kind, int http_status, std::string code, std::string message,
                     std::optional<std::int64_t> retry_after_s, bool side_effect) {
    error e;
    e.kind = kind;
    e.what_to_do = disposition_for(code, http_status);
    e.code = code.empty() ? "HTTP_" + std::to_string(http_status) : std::move(code);
    e.http_status = http_status;
    e.message = std::move(message);
    e.retry_after_s = retry_after_s;
    e.may_have_taken_effect = side_effect && status_may_have_taken_effect(http_status);
    e.step = failure_step::none;
    return e;
}

error make_transport_error(error_kind kind, failure_step step, std::string message, bool request_written,
                           bool side_effect) {
    error e;
    e.kind = kind;
    e.step = step;
    e.message = std::move(message);
    e.what_to_do = disposition::retry_later;
    e.may_have_taken_effect = side_effect && request_written;
    e.may_have_been_charged = request_written;
    switch (kind) {
    case error_kind::timeout: e.code = "TIMEOUT"; break;
    case error_kind::connection_lost: e.code = "CONNECTION_LOST"; break;
    case error_kind::cancelled: e.code = "CANCELLED"; break;
    default: e.code = "CONNECT_FAILED"; break;
    }
    return e;
}

error make_malformed(std::string message, int http_status, bool side_effect) {
    error e;
    e.kind = error_kind::malformed_response;
    e.code = "MALFORMED_RESPONSE";
    e.http_status = http_status;
    e.message = std::move(message);
    // A read-only call is tried again later (bounded by the executor's tries): an unreadable
    // answer is more likely a passing fault than a lasting one, and one such answer to a check
    // failed its lead for good at its first try. A side-effecting call gives up, and its effect is
    // reconciled below.
    e.what_to_do = side_effect ? disposition::give_up : disposition::retry_later;
    e.step = failure_step::parse;
    // The API answered 2xx, so a side-effecting call most likely did happen.
    e.may_have_taken_effect = side_effect && http_status >= 200 && http_status < 300;
    e.may_have_been_charged = http_status >= 200 && http_status < 300;
    return e;
}

} // namespace orch::outreach
