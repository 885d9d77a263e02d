// ORCH_INVARIANT (engine/invariant.hpp): silent when the condition holds, and otherwise logs the
// condition, its place and the message, then aborts, in every build type.
#include "engine/invariant.hpp"

#include <gtest/gtest.h>

#include <vector>

namespace {

TEST(Invariant, HoldsSilently) {
    std::vector<int> v{1, 2, 3};
    int evaluated = 0;
    ORCH_INVARIANT((++evaluated, v.size() == 3), "size {}", v.size());
    EXPECT_EQ(evaluated, 1);  // the condition runs once, the message not at all
}

TEST(InvariantDeathTest, BrokenAbortsWithTheConditionAndTheMessage) {
    GTEST_FLAG_SET(death_test_style, "threadsafe");
    EXPECT_DEATH(ORCH_INVARIANT(2 + 2 == 5, "lane {} lost enrollment {}", 3, 42),
                 "invariant broken at .*engine_invariant_test.cpp:[0-9]+: 2 \\+ 2 == 5: lane 3 lost enrollment 42");
}

}  // namespace
