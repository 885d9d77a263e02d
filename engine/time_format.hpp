// ISO 8601 formatting and parsing of UTC instants, shared by the sandbox and the engine.
#pragma once

#include <chrono>
#include <optional>
#include <string>
#include <string_view>

namespace orch {

// "2026-11-22T03:00:00.123Z" (milliseconds, always UTC with Z).
std::string iso8601_ms(std::chrono::system_clock::time_point t);
// "2026-11-22T03:00:00Z".
std::string iso8601_s(std::chrono::system_clock::time_point t);

// Parses ISO 8601 date-times as the real service writes them: with or without fractional
// seconds (any number of digits), with Z, with a +hh:mm / -hh:mm offset, or with no zone at
// all (taken as UTC). Returns nullopt for anything else.
std::optional<std::chrono::system_clock::time_point> parse_iso8601(std::string_view text);

} // namespace orch
