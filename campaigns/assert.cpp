// ORCH_CAMPAIGNS_ASSERT's failure path (detail/assert.hpp).
#include "campaigns/detail/assert.hpp"

#include <cstdio>
#include <cstdlib>

namespace orch::campaigns::detail {

void assert_failed(const char* expression, const char* file, int line, const char* what) {
    // stderr and abort, not a logger: this library has no logging dependency, and a broken
    // invariant must stop the process whatever the logging setup is.
    std::fprintf(stderr, "orch_campaigns: assertion failed: %s (%s) at %s:%d\n", expression, what, file,
                 line);
    std::fflush(stderr);
    std::abort();
}

}  // namespace orch::campaigns::detail
