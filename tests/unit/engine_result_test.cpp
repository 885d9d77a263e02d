// engine/result.hpp: the engine's error taxonomy and result<T> (the client's result is the same
// template, engine/basic_result.hpp).
#include "engine/result.hpp"
#include "engine/outreach/result.hpp"

#include <gtest/gtest.h>

#include <type_traits>

namespace {

using orch::engine::error;
using orch::engine::error_category;
using orch::engine::result;

TEST(EngineResult, SqlStatesFallIntoTheirCategories) {
    using orch::engine::category_of_sqlstate;
    EXPECT_EQ(category_of_sqlstate("08006"), error_category::unavailable);  // connection failure
    EXPECT_EQ(category_of_sqlstate("57P01"), error_category::unavailable);  // admin shutdown
    EXPECT_EQ(category_of_sqlstate("40001"), error_category::contended);    // serialization failure
    EXPECT_EQ(category_of_sqlstate("40P01"), error_category::contended);    // deadlock
    EXPECT_EQ(category_of_sqlstate("22P02"), error_category::invalid_input);
    EXPECT_EQ(category_of_sqlstate("23505"), error_category::internal);
    EXPECT_EQ(category_of_sqlstate(""), error_category::internal);
}

TEST(EngineResult, AValueOrAnErrorWithItsCategory) {
    result<int> ok = 3;
    ASSERT_TRUE(ok);
    EXPECT_EQ(*ok, 3);
    result<int> no = error{error_category::contended, "lost a race"};
    ASSERT_FALSE(no);
    EXPECT_EQ(no.error().category, error_category::contended);
    result<void> done;
    EXPECT_TRUE(done);
    EXPECT_EQ(orch::engine::to_string(error_category::unprocessable), "unprocessable");
    // One template for the engine's and the client's results.
    static_assert(std::is_same_v<orch::outreach::result<int>, orch::basic_result<int, orch::outreach::error>>);
}

TEST(EngineResult, AFailureCarriesTheSameError) {
    const orch::engine::failure f(error_category::conflict, "the campaign was cancelled");
    EXPECT_EQ(f.category(), error_category::conflict);
    EXPECT_STREQ(f.what(), "the campaign was cancelled");
    EXPECT_EQ(f.as_error().message, "the campaign was cancelled");
}

TEST(EngineResultDeathTest, ReadingTheValueOfAnErrorAborts) {
    result<int> no = error{error_category::internal, "x"};
    EXPECT_DEATH((void)*no, "value\\(\\) of an error");
}

}  // namespace
