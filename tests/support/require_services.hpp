// Fixtures of tests that need the Postgres or Redis of deploy/dev-services.sh begin SetUp with
//   ORCH_REQUIRE_SERVICE("DATABASE_URL");   (or "REDIS_URL")
// The test is skipped when the variable is unset or empty, and fails instead when
// ORCH_REQUIRE_SERVICES is set (deploy/test.sh and CI set it, so a missing service is never a
// silent skip there). A macro because GTEST_SKIP and FAIL return from the function they are in.
// A test that runs against the services starts only when midnight UTC is further away than such
// a test runs (tests/support/day_boundary.hpp): their quota days, day caps and "today" are UTC's.
#pragma once

#include "tests/support/day_boundary.hpp"

#include <gtest/gtest.h>

#include <cstdlib>

#define ORCH_REQUIRE_SERVICE(var)                                                        \
    do {                                                                                 \
        const char* orch_service_value_ = std::getenv(var);                              \
        if (orch_service_value_ == nullptr || *orch_service_value_ == '\0') {            \
            if (std::getenv("ORCH_REQUIRE_SERVICES")) {                                  \
                FAIL() << var " is not set (start deploy/dev-services.sh)";              \
            }                                                                            \
            GTEST_SKIP() << var " is not set; run through deploy/test.sh";               \
        }                                                                                \
        orch::test::wait_out_utc_boundary();                                             \
    } while (0)
