// ORCH_INVARIANT(condition, format, args...): an always-on check of an invariant of the engine's
// own making (a broken one is a bug, and going on could contact a person twice or spend past a
// budget). It logs the condition, the place and the message, then aborts; it is compiled in every
// build type, unlike assert(). Operating errors (a refused call, a lost connection, bad input)
// are never checked with it: they are outcomes, handled where they happen.
#pragma once

#include <spdlog/spdlog.h>

#include <cstdio>
#include <cstdlib>
#include <string>

namespace orch::detail {
// Logged, and written to stderr as well (the log may go to stdout, or to a file that is lost with
// the process).
[[noreturn]] inline void invariant_broken(const char* file, int line, const char* condition, const std::string& message) {
    spdlog::critical("invariant broken at {}:{}: {}: {}", file, line, condition, message);
    spdlog::shutdown();
    std::fprintf(stderr, "invariant broken at %s:%d: %s: %s\n", file, line, condition, message.c_str());
    std::abort();
}
}  // namespace orch::detail

#define ORCH_INVARIANT(condition, ...)                                                                 \
    do {                                                                                                \
        if (!(condition)) [[unlikely]] {                                                                \
            ::orch::detail::invariant_broken(__FILE__, __LINE__, #condition, fmt::format(__VA_ARGS__)); \
        }                                                                                               \
    } while (false)
