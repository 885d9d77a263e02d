// engine/codes.hpp: each enum's names round-trip through to_string/from_string, are distinct, and
// are the spellings the database stores (engine_rows_pg_test holds them to the database itself).
#include "engine/codes.hpp"

#include <gtest/gtest.h>

#include <set>
#include <string>

namespace {

using namespace orch::engine;

TEST(AttemptOutcome, EveryOutcomeRoundTrips) {
    std::set<std::string> seen;
    for (attempt_outcome o : all_attempt_outcomes) {
        const std::string name(to_string(o));
        EXPECT_TRUE(seen.insert(name).second) << name << " is not unique";
        auto back = attempt_outcome_from_string(name);
        ASSERT_TRUE(back.has_value()) << name;
        EXPECT_EQ(*back, o) << name;
    }
    EXPECT_EQ(seen.size(), 8u);
}

TEST(AttemptOutcome, TheStoredSpellings) {
    // step_attempts.outcome's values (the Postgres enum of migration 0001, and 0040), which reports and the
    // milestones in engine/settle match.
    EXPECT_EQ(to_string(attempt_outcome::in_flight), "in_flight");
    EXPECT_EQ(to_string(attempt_outcome::ok), "ok");
    EXPECT_EQ(to_string(attempt_outcome::transient), "transient");
    EXPECT_EQ(to_string(attempt_outcome::permanent), "permanent");
    EXPECT_EQ(to_string(attempt_outcome::uncertain), "uncertain");
    EXPECT_EQ(to_string(attempt_outcome::reconciled_present), "reconciled_present");
    EXPECT_EQ(to_string(attempt_outcome::reconciled_absent), "reconciled_absent");
    EXPECT_EQ(to_string(attempt_outcome::not_sent), "not_sent");  // migration 0040
}

TEST(AttemptOutcome, UnknownNamesAreRefused) {
    EXPECT_FALSE(attempt_outcome_from_string("").has_value());
    EXPECT_FALSE(attempt_outcome_from_string("OK").has_value());
    EXPECT_FALSE(attempt_outcome_from_string("failed").has_value());
    EXPECT_FALSE(attempt_outcome_from_string("ok ").has_value());
}

TEST(AttemptOutcome, EffectClasses) {
    EXPECT_TRUE(took_effect(attempt_outcome::ok));
    EXPECT_TRUE(took_effect(attempt_outcome::reconciled_present));
    EXPECT_TRUE(failed_without_effect(attempt_outcome::transient));
    EXPECT_TRUE(failed_without_effect(attempt_outcome::permanent));
    // An uncertain call may have taken effect: neither class (it keeps its rate-limit take and
    // is charged the most its lost request could have cost).
    for (attempt_outcome o : {attempt_outcome::uncertain, attempt_outcome::in_flight, attempt_outcome::reconciled_absent}) {
        EXPECT_FALSE(took_effect(o)) << to_string(o);
        EXPECT_FALSE(failed_without_effect(o)) << to_string(o);
    }
    // A follow-up not sent (its read found a reply) took no effect and did not fail: its quota
    // place is given back with the failures'.
    EXPECT_FALSE(took_effect(attempt_outcome::not_sent));
    EXPECT_FALSE(failed_without_effect(attempt_outcome::not_sent));
    EXPECT_TRUE(known_without_effect(attempt_outcome::not_sent));
    EXPECT_TRUE(known_without_effect(attempt_outcome::transient));
    EXPECT_FALSE(known_without_effect(attempt_outcome::uncertain));
    // May have reached the person: what took effect, what is in flight, what was lost.
    for (attempt_outcome o : all_attempt_outcomes) {
        const bool expected = o == attempt_outcome::ok || o == attempt_outcome::reconciled_present ||
                              o == attempt_outcome::in_flight || o == attempt_outcome::uncertain;
        EXPECT_EQ(may_have_taken_effect(o), expected) << to_string(o);
    }
}

TEST(EventKind, EveryKindRoundTrips) {
    std::set<std::string> seen;
    for (event_kind k : all_event_kinds) {
        const std::string name(to_string(k));
        EXPECT_TRUE(seen.insert(name).second) << name << " is not unique";
        auto back = event_kind_from_string(name);
        ASSERT_TRUE(back.has_value()) << name;
        EXPECT_EQ(*back, k) << name;
    }
    EXPECT_EQ(seen, (std::set<std::string>{"accepted_invitation", "message", "disconnection", "other"}));
}

TEST(EventKind, UnknownNamesAreRefused) {
    // The API's own event type names are not inbox kinds.
    EXPECT_FALSE(event_kind_from_string("message_received").has_value());
    EXPECT_FALSE(event_kind_from_string("").has_value());
    EXPECT_FALSE(event_kind_from_string("Message").has_value());
}

}  // namespace
