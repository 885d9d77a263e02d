// Body validation for the V1 data endpoints (v1_data.cpp, v1_jobs.cpp). V1 messages name the
// bare field, as the spec's samples do ("total_results must be a positive integer"), where the
// V2 helpers of service.hpp say "params.<name>". Every function throws INVALID_PARAMS.
#pragma once

#include "sandbox/service.hpp"

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace orch::sandbox::v1 {

// Caller-supplied text quoted in an error message, cut so a huge value cannot bloat the answer.
std::string quoted(std::string_view text);
std::string_view trim(std::string_view text);

// A required string, trimmed; missing, null, another type or blank are errors.
std::string require_text(const json& body, const char* name);
// An optional string, trimmed; nullopt when absent or null (a blank string comes back empty).
std::optional<std::string> optional_text(const json& body, const char* name);
// An optional integer in [min, max]; floats, strings and booleans are errors.
std::optional<std::int64_t> optional_int(const json& body, const char* name, std::int64_t min, std::int64_t max);
std::optional<bool> optional_bool(const json& body, const char* name);
// A string or an array of strings, trimmed, blank values dropped; at most `max_items` values.
std::vector<std::string> text_list(const json& body, const char* name, std::size_t max_items);

// Whether every word occurs in `folded_text`.
bool has_all_words(std::string_view folded_text, const std::vector<std::string>& words);

// Credits for a V1 list answer: 1 per 10 results, rounded up; 0 when nothing was found (the
// spec's V1 rule: "credits are deducted only on successful searches").
std::int64_t per_ten_or_zero(std::size_t results);

} // namespace orch::sandbox::v1
