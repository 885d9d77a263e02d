// The apply's warnings of what a version does to the leads already there (outcome_warnings) and of
// a live budget (live_budget_text), from an apply's outcome: the words the CLI, the admin API and
// their previews (validate, the dry run) share.
#include "engine/campaign_apply.hpp"

#include <gtest/gtest.h>

namespace {

using orch::engine::apply_outcome;
using orch::engine::live_budget_text;
using orch::engine::outcome_warnings;

orch::campaigns::campaign a_campaign() {
    orch::campaigns::campaign c;
    c.name = "tour";
    c.schedule.time_zone = "UTC";
    c.budget_credits = 40;
    return c;
}

bool says(const std::vector<std::string>& said, const std::string& text) {
    for (const auto& s : said) {
        if (s.find(text) != std::string::npos) {
            return true;
        }
    }
    return false;
}

TEST(ApplyWarnings, ABudgetBelowWhatIsSpentPausesAnActiveCampaignAndLeavesACompletedOneNothing) {
    apply_outcome r;
    r.state = "active";
    r.budget_below_committed = apply_outcome::budget_below{40, 43};
    auto said = outcome_warnings(r, a_campaign());
    ASSERT_EQ(said.size(), 1u);
    EXPECT_NE(said[0].find("this version's budget of 40 credits is no more than what is already spent or reserved "
                           "(43 credits)"),
              std::string::npos)
        << said[0];
    EXPECT_NE(said[0].find("pauses at its next call"), std::string::npos) << said[0];
    r.state = "completed";
    said = outcome_warnings(r, a_campaign());
    ASSERT_EQ(said.size(), 1u);
    EXPECT_EQ(said[0].find("pauses"), std::string::npos) << said[0];
    EXPECT_NE(said[0].find("nothing is available for a lead an apply adds later"), std::string::npos) << said[0];
}

TEST(ApplyWarnings, CapsBelowWhatTheyHoldAreSaidByScope) {
    apply_outcome r;
    r.state = "active";
    r.caps_below_used.push_back({"day", "2026-12-01", 10, 43});
    r.caps_below_used.push_back({"account", "acc_1", 1, 2});
    auto said = outcome_warnings(r, a_campaign());
    ASSERT_EQ(said.size(), 2u);
    EXPECT_TRUE(says(said, "this version's day cap of 10 credits is no more than what the campaign has spent or "
                           "holds today (43 credits, UTC day 2026-12-01): nothing more is spent today"));
    EXPECT_TRUE(says(said, "this version's per-account cap of 1 credit is no more than what the campaign has spent "
                           "or holds through account acc_1 (2 credits)"));
}

TEST(ApplyWarnings, ASenderInAnotherQuotaDayIsNamedByItsLabelAndId) {
    apply_outcome r;
    r.zone_conflicts.push_back({"acc_1", "Pacific/Kiritimati", "sender-1"});
    r.zone_conflicts.push_back({"acc_2", "Europe/Paris", ""});
    auto said = outcome_warnings(r, a_campaign());
    ASSERT_EQ(said.size(), 2u);
    EXPECT_TRUE(says(said, "account sender-1 (acc_1) counts its day quotas in Pacific/Kiritimati, not in this "
                           "campaign's time zone (UTC)"));
    EXPECT_TRUE(says(said, "account acc_2 counts its day quotas in Europe/Paris"));
}

TEST(ApplyWarnings, NothingToSayIsNothingSaid) {
    EXPECT_TRUE(outcome_warnings(apply_outcome{}, a_campaign()).empty());
    EXPECT_EQ(live_budget_text(apply_outcome{}, a_campaign()), "");
}

TEST(ApplyWarnings, APreviewOfTheLiveBudgetSaysWhatWouldHappen) {
    apply_outcome r;
    r.live_budget = orch::engine::ledger::budget{3000, std::nullopt, std::nullopt};
    r.live_budget_kept = false;
    EXPECT_NE(live_budget_text(r, a_campaign()).find(") replaced the live one ("), std::string::npos)
        << live_budget_text(r, a_campaign());
    EXPECT_NE(live_budget_text(r, a_campaign(), true).find(") would replace the live one"), std::string::npos)
        << live_budget_text(r, a_campaign(), true);
    r.live_budget_kept = true;
    EXPECT_NE(live_budget_text(r, a_campaign()).find("the campaign keeps its live budget"), std::string::npos);
    EXPECT_NE(live_budget_text(r, a_campaign()).find("this version did not change"), std::string::npos);
    EXPECT_NE(live_budget_text(r, a_campaign(), true).find("the campaign would keep its live budget"),
              std::string::npos);
    EXPECT_NE(live_budget_text(r, a_campaign(), true).find("this version does not change"), std::string::npos);
}

}  // namespace
