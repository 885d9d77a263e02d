// Tolerant and strict readers of JSON fields, shared by the parsers (parse.cpp). Tolerant
// readers return an empty value for missing, null or oddly typed fields; strict readers throw
// detail::malformed, which the envelope decoder turns into error_kind::malformed_response.
#pragma once

#include <nlohmann/json.hpp>

#include <chrono>
#include <cstdint>
#include <initializer_list>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace orch::outreach::detail {

using json = nlohmann::json;

// Thrown by strict readers inside parsers only; never leaves the client.
struct malformed {
    std::string what;
};

[[noreturn]] void fail(std::string what);

// The first of `keys` present and not null in `o` (nullptr when none, or when `o` is no object).
const json* find_any(const json& o, std::initializer_list<std::string_view> keys);

// Text of the first present key. Numbers and booleans are written out; objects, arrays and
// null give "".
std::string text(const json& o, std::initializer_list<std::string_view> keys);
// Integer from a JSON integer, an integral float, or a decimal string; nullopt otherwise.
std::optional<std::int64_t> opt_int(const json& o, std::initializer_list<std::string_view> keys);
std::optional<double> opt_number(const json& o, std::initializer_list<std::string_view> keys);
// Boolean from true/false or "true"/"false"; nullopt otherwise.
std::optional<bool> opt_bool(const json& o, std::initializer_list<std::string_view> keys);
// A time from an ISO 8601 string (with or without zone, any fraction digits) or an epoch number
// (milliseconds; values below 10^11 are taken as seconds). nullopt when absent or unparseable.
std::optional<std::chrono::system_clock::time_point> opt_time(const json& o,
                                                              std::initializer_list<std::string_view> keys);
std::optional<std::chrono::system_clock::time_point> time_of(const json& v);
// Strings of an array, or a single string as a one-element list.
std::vector<std::string> strings(const json& o, std::initializer_list<std::string_view> keys);

// Strict: an exact unsigned 64-bit id from a JSON unsigned/non-negative integer or a decimal
// string. null/absent gives nullopt; a float (precision may be lost), a negative number, a
// non-digit string or an overflow throws malformed naming `field`.
std::optional<std::uint64_t> exact_id(const json& v, std::string_view field);
std::optional<std::uint64_t> exact_id_field(const json& o, std::initializer_list<std::string_view> keys,
                                            std::string_view field);
// The numeric tail of an urn ("urn:li:invitation:7453..." -> 7453...); nullopt when none.
std::optional<std::uint64_t> id_from_urn(std::string_view urn);
// Strict: an integer field when present (null counts as absent); anything else throws.
std::optional<std::int64_t> strict_int(const json& o, std::string_view key);
// Strict: a required non-empty string.
std::string required_text(const json& o, std::string_view key);
// Strict: a boolean when present.
std::optional<bool> strict_bool(const json& o, std::string_view key);
// The array at key (empty static array when absent or null); strict: another type throws.
const json& array_at(const json& o, std::string_view key);
// The object at the first present key; nullptr when absent or null; tolerant of other types.
const json* object_at(const json& o, std::initializer_list<std::string_view> keys);

} // namespace orch::outreach::detail
