// Invariant checks of orch_campaigns (STYLE C1): always on, print what broke, then abort. For bugs
// only (a precondition of the pure functions broken by the caller, a corrupt canonical form), never
// for user input, which the loader reports as diagnostics.
#pragma once

namespace orch::campaigns::detail {

[[noreturn]] void assert_failed(const char* expression, const char* file, int line, const char* what);

}  // namespace orch::campaigns::detail

#define ORCH_CAMPAIGNS_ASSERT(expression, what)                                                \
    do {                                                                                       \
        if (!(expression)) {                                                                   \
            ::orch::campaigns::detail::assert_failed(#expression, __FILE__, __LINE__, (what)); \
        }                                                                                      \
    } while (false)
