// Helpers shared by the network and messages modules (network.cpp, messages.cpp): naming a
// person by profile URL in params, text limits, picture URLs and time conversions. Private to
// those two files.
#pragma once

#include "sandbox/service.hpp"

#include <initializer_list>
#include <string>

namespace orch::sandbox::detail {

inline std::int64_t unix_ms(time_point t) {
    return std::chrono::duration_cast<std::chrono::milliseconds>(t.time_since_epoch()).count();
}

inline const char* json_type_name(const json& v) {
    if (v.is_string()) return "a string";
    if (v.is_boolean()) return "a boolean";
    if (v.is_number_integer() || v.is_number_unsigned()) return "an integer";
    if (v.is_number()) return "a number";
    if (v.is_array()) return "an array";
    if (v.is_object()) return "an object";
    return "null";
}

// Caller-supplied text in_quotes in an error message, cut so a huge value cannot bloat the answer.
inline std::string in_quotes(const std::string& text) {
    constexpr std::size_t max_chars = 120;
    return "'" + (text.size() <= max_chars ? text : text.substr(0, max_chars) + "...") + "'";
}

// Length in characters (UTF-8 code points), which is what a user counts against a limit.
inline std::size_t utf8_length(const std::string& text) {
    std::size_t n = 0;
    for (unsigned char c : text) {
        n += (c & 0xC0) != 0x80 ? 1 : 0;
    }
    return n;
}

inline std::string full_name(const person& p) { return p.first_name + " " + p.last_name; }

// The person's picture URL, or null for a person without one.
inline json profile_picture_url(const person& p) {
    return p.profile_picture_url.empty() ? json(nullptr) : json(p.profile_picture_url);
}

// The person named by the first present parameter among `names` (a profile URL and its
// aliases, in order of preference); nullptr when none is present. Every present name is
// type-checked. A malformed URL or an unknown person is INVALID_PARAMS naming the parameter.
inline const person* person_from_url_params(const service& svc, const json& params,
                                            std::initializer_list<const char*> names) {
    const person* found = nullptr;
    bool seen = false;
    for (const char* name : names) {
        auto url = optional_string(params, name);
        if (!url || seen) {
            continue;
        }
        seen = true;
        std::string field = std::string("params.") + name;
        if (url->empty()) {
            throw invalid_params(field + " must not be empty");
        }
        found = svc.world().find_by_profile_url(*url);
        if (found == nullptr && !public_id_from_profile_url(*url)) {
            throw invalid_params(field + " is not a profile URL of the network (" + std::string(network_base_url) +
                                 "/in/<public_id>), got " + in_quotes(*url));
        }
        if (found == nullptr) {
            throw invalid_params(field + ": profile not found: " + in_quotes(*url));
        }
    }
    return found;
}

} // namespace orch::sandbox::detail
