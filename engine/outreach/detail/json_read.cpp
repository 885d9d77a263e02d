#include "engine/outreach/detail/json_read.hpp"

#include "engine/time_format.hpp"

#include <charconv>
#include <cmath>

namespace orch::outreach::detail {

void fail(std::string what) { throw malformed{std::move(what)}; }

const json* find_any(const json& o, std::initializer_list<std::string_view> keys) {
    if (!o.is_object()) {
        return nullptr;
    }
    for (auto k : keys) {
        auto it = o.find(k);
        if (it != o.end() && !it->is_null()) {
            return &*it;
        }
    }
    return nullptr;
}

std::string text(const json& o, std::initializer_list<std::string_view> keys) {
    const json* v = find_any(o, keys);
    if (v == nullptr) {
        return {};
    }
    if (v->is_string()) {
        return v->get<std::string>();
    }
    if (v->is_number() || v->is_boolean()) {
        return v->dump();
    }
    return {};
}

namespace {

std::optional<std::int64_t> int_of(const json& v) {
    if (v.is_number_unsigned()) {
        auto u = v.get<std::uint64_t>();
        if (u > static_cast<std::uint64_t>(INT64_MAX)) {
            return std::nullopt;
        }
        return static_cast<std::int64_t>(u);
    }
    if (v.is_number_integer()) {
        return v.get<std::int64_t>();
    }
    if (v.is_number_float()) {
        double d = v.get<double>();
        if (std::isfinite(d) && d == std::floor(d) && std::fabs(d) < 9.0e15) {
            return static_cast<std::int64_t>(d);
        }
        return std::nullopt;
    }
    if (v.is_string()) {
        const auto& s = v.get_ref<const std::string&>();
        std::int64_t out = 0;
        auto [p, ec] = std::from_chars(s.data(), s.data() + s.size(), out);
        if (ec == std::errc{} && p == s.data() + s.size() && !s.empty()) {
            return out;
        }
    }
    return std::nullopt;
}

} // namespace

std::optional<std::int64_t> opt_int(const json& o, std::initializer_list<std::string_view> keys) {
    const json* v = find_any(o, keys);
    return v == nullptr ? std::nullopt : int_of(*v);
}

std::optional<double> opt_number(const json& o, std::initializer_list<std::string_view> keys) {
    const json* v = find_any(o, keys);
    if (v == nullptr) {
        return std::nullopt;
    }
    if (v->is_number()) {
        return v->get<double>();
    }
    if (v->is_string()) {
        const auto& s = v->get_ref<const std::string&>();
        double out = 0;
        auto [p, ec] = std::from_chars(s.data(), s.data() + s.size(), out);
        if (ec == std::errc{} && p == s.data() + s.size() && !s.empty()) {
            return out;
        }
    }
    return std::nullopt;
}

std::optional<bool> opt_bool(const json& o, std::initializer_list<std::string_view> keys) {
    const json* v = find_any(o, keys);
    if (v == nullptr) {
        return std::nullopt;
    }
    if (v->is_boolean()) {
        return v->get<bool>();
    }
    if (v->is_string()) {
        if (*v == "true") {
            return true;
        }
        if (*v == "false") {
            return false;
        }
    }
    return std::nullopt;
}

std::optional<std::chrono::system_clock::time_point> time_of(const json& v) {
    if (v.is_string()) {
        if (auto t = parse_iso8601(v.get_ref<const std::string&>())) {
            return t;
        }
    }
    auto n = int_of(v);
    if (!n) {
        return std::nullopt;
    }
    // Epoch milliseconds as the V1 API sends them; a value this small can only be seconds. A
    // number before 1970 or past the year 9999 is no time of an event: left unread rather than
    // multiplied past int64 (or the clock's nanoseconds), which is undefined.
    constexpr std::int64_t year_10000_ms = 253'402'300'800'000;
    if (*n < 0 || *n >= year_10000_ms) {
        return std::nullopt;
    }
    std::int64_t ms = *n < 100'000'000'000 ? *n * 1000 : *n;
    return std::chrono::system_clock::time_point{std::chrono::milliseconds{ms}};
}

std::optional<std::chrono::system_clock::time_point> opt_time(const json& o,
                                                              std::initializer_list<std::string_view> keys) {
    const json* v = find_any(o, keys);
    return v == nullptr ? std::nullopt : time_of(*v);
}

std::vector<std::string> strings(const json& o, std::initializer_list<std::string_view> keys) {
    std::vector<std::string> out;
    const json* v = find_any(o, keys);
    if (v == nullptr) {
        return out;
    }
    if (v->is_string()) {
        out.push_back(v->get<std::string>());
    } else if (v->is_array()) {
        for (const auto& item : *v) {
            if (item.is_string()) {
                out.push_back(item.get<std::string>());
            }
        }
    }
    return out;
}

std::optional<std::uint64_t> exact_id(const json& v, std::string_view field) {
    if (v.is_null()) {
        return std::nullopt;
    }
    if (v.is_number_unsigned()) {
        return v.get<std::uint64_t>();
    }
    if (v.is_number_integer()) {
        auto i = v.get<std::int64_t>();
        if (i < 0) {
            fail(std::string(field) + " is negative: " + v.dump());
        }
        return static_cast<std::uint64_t>(i);
    }
    if (v.is_string()) {
        const auto& s = v.get_ref<const std::string&>();
        std::uint64_t out = 0;
        auto [p, ec] = std::from_chars(s.data(), s.data() + s.size(), out);
        if (s.empty() || ec != std::errc{} || p != s.data() + s.size()) {
            fail(std::string(field) + " is not a decimal id: " + v.dump());
        }
        return out;
    }
    // A float cannot be trusted to hold a 19-digit id exactly.
    fail(std::string(field) + " must be an integer or a decimal string, got " + v.dump());
}

std::optional<std::uint64_t> exact_id_field(const json& o, std::initializer_list<std::string_view> keys,
                                            std::string_view field) {
    const json* v = find_any(o, keys);
    return v == nullptr ? std::nullopt : exact_id(*v, field);
}

std::optional<std::uint64_t> id_from_urn(std::string_view urn) {
    auto colon = urn.rfind(':');
    std::string_view tail = colon == std::string_view::npos ? urn : urn.substr(colon + 1);
    std::uint64_t out = 0;
    auto [p, ec] = std::from_chars(tail.data(), tail.data() + tail.size(), out);
    if (tail.empty() || ec != std::errc{} || p != tail.data() + tail.size()) {
        return std::nullopt;
    }
    return out;
}

std::optional<std::int64_t> strict_int(const json& o, std::string_view key) {
    auto it = o.find(key);
    if (it == o.end() || it->is_null()) {
        return std::nullopt;
    }
    if (it->is_number_unsigned() && it->get<std::uint64_t>() <= static_cast<std::uint64_t>(INT64_MAX)) {
        return it->get<std::int64_t>();
    }
    if (it->is_number_integer()) {
        return it->get<std::int64_t>();
    }
    fail(std::string(key) + " must be an integer, got " + it->dump());
}

std::string required_text(const json& o, std::string_view key) {
    auto it = o.find(key);
    if (it == o.end() || !it->is_string() || it->get_ref<const std::string&>().empty()) {
        fail(std::string(key) + " must be a non-empty string, got " + (it == o.end() ? "nothing" : it->dump()));
    }
    return it->get<std::string>();
}

std::optional<bool> strict_bool(const json& o, std::string_view key) {
    auto it = o.find(key);
    if (it == o.end() || it->is_null()) {
        return std::nullopt;
    }
    if (!it->is_boolean()) {
        fail(std::string(key) + " must be a boolean, got " + it->dump());
    }
    return it->get<bool>();
}

const json& array_at(const json& o, std::string_view key) {
    static const json empty = json::array();
    auto it = o.find(key);
    if (it == o.end() || it->is_null()) {
        return empty;
    }
    if (!it->is_array()) {
        fail(std::string(key) + " must be an array, got " + std::string(it->type_name()));
    }
    return *it;
}

const json* object_at(const json& o, std::initializer_list<std::string_view> keys) {
    const json* v = find_any(o, keys);
    return v != nullptr && v->is_object() ? v : nullptr;
}

} // namespace orch::outreach::detail
