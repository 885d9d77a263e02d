// The campaign dates (start_at, end_at): ISO 8601 with a zone, errors at the key's line:column,
// end after start, and the canonical form (written only when set, so a campaign without dates
// keeps the digest it had before dates existed).
#include "campaigns/campaigns.hpp"

#include <gtest/gtest.h>

namespace {

using namespace orch::campaigns;
using namespace std::chrono;

load_result load(const std::string& dates) {
    load_options options;
    options.file_name = "c.yaml";
    return load_campaign("name: t\n"
                         "accounts: acc_1\n"
                         "audience:\n"
                         "  search: {title: Engineer}\n"
                         "schedule:\n"
                         "  time_zone: UTC\n"
                         "budget_credits: 10\n" +
                             dates +
                             "steps:\n"
                             "  - {id: invite, kind: invite}\n",
                         options);
}

std::string all(const std::vector<diagnostic>& list) {
    std::string out;
    for (const auto& d : list) {
        out += d.to_string() + "\n";
    }
    return out;
}

TEST(dates, instants_with_a_zone_are_read_to_the_second) {
    std::string error;
    auto utc = parse_instant("2026-12-01T09:00:00Z", error);
    ASSERT_TRUE(utc) << error;
    EXPECT_EQ(*utc, sys_days{2026y / December / 1} + 9h);
    auto offset = parse_instant("2026-12-01T09:00+01:00", error);
    ASSERT_TRUE(offset) << error;
    EXPECT_EQ(*offset, sys_days{2026y / December / 1} + 8h);
    auto west = parse_instant("2026-12-01T23:30:15.250-0530", error);
    ASSERT_TRUE(west) << error;
    EXPECT_EQ(*west, sys_days{2026y / December / 2} + 5h + 0min + 15s);
    EXPECT_EQ(format_instant(*west), "2026-12-02T05:00:15Z");
    EXPECT_EQ(format_instant(*offset), "2026-12-01T08:00:00Z");
}

TEST(dates, malformed_instants_say_what_is_wrong) {
    std::string error;
    EXPECT_FALSE(parse_instant("2026-12-01T09:00:00", error));
    EXPECT_NE(error.find("has no zone"), std::string::npos) << error;
    EXPECT_FALSE(parse_instant("2026-12-01", error));
    EXPECT_NE(error.find("not an ISO 8601 date and time with a zone"), std::string::npos) << error;
    EXPECT_FALSE(parse_instant("2026-02-30T09:00Z", error));
    EXPECT_NE(error.find("names a day that does not exist"), std::string::npos) << error;
    EXPECT_FALSE(parse_instant("2026-12-01T24:10Z", error));
    EXPECT_NE(error.find("no such time of day"), std::string::npos) << error;
    EXPECT_FALSE(parse_instant("2026-12-01T09:00+25:00", error));
    EXPECT_FALSE(parse_instant("2026-12-01T09:00Zjunk", error));
    EXPECT_FALSE(parse_instant("next tuesday", error));
}

TEST(dates, the_loader_reads_both_dates) {
    auto r = load("start_at: 2026-12-01T09:00:00+01:00\nend_at: \"2027-01-31T18:00:00Z\"\n");
    ASSERT_TRUE(r.value) << all(r.errors);
    ASSERT_TRUE(r.value->start_at);
    ASSERT_TRUE(r.value->end_at);
    EXPECT_EQ(*r.value->start_at, sys_days{2026y / December / 1} + 8h);
    EXPECT_EQ(*r.value->end_at, sys_days{2027y / January / 31} + 18h);
    auto j = to_json(*r.value);
    EXPECT_EQ(j["start_at"], "2026-12-01T08:00:00Z");
    EXPECT_EQ(j["end_at"], "2027-01-31T18:00:00Z");
    EXPECT_EQ(to_json(campaign_from_json(j)), j);
}

TEST(dates, without_dates_the_canonical_form_has_no_date_keys) {
    auto r = load("");
    ASSERT_TRUE(r.value) << all(r.errors);
    EXPECT_FALSE(r.value->start_at);
    EXPECT_FALSE(r.value->end_at);
    auto j = to_json(*r.value);
    EXPECT_FALSE(j.contains("start_at"));
    EXPECT_FALSE(j.contains("end_at"));
}

TEST(dates, a_bad_date_is_reported_at_its_line_and_column) {
    auto r = load("start_at: 2026-12-01 09:00\n");
    ASSERT_FALSE(r.value);
    ASSERT_EQ(r.errors.size(), 1u) << all(r.errors);
    EXPECT_EQ(r.errors[0].line, 8);
    EXPECT_EQ(r.errors[0].column, 11);
    EXPECT_NE(r.errors[0].message.find("start_at: '2026-12-01 09:00' is not an ISO 8601"), std::string::npos)
        << r.errors[0].message;
}

// A day its month has not says so (it said "not a date between the years 2000 and 2999").
TEST(dates, a_day_that_does_not_exist_is_named) {
    for (const auto& [text, why] : std::vector<std::pair<std::string, std::string>>{
             {"2026-02-30T09:00:00Z", "names a day that does not exist (28 days in that month)"},
             {"2028-02-30T09:00:00Z", "names a day that does not exist (29 days in that month)"},
             {"2026-13-01T09:00:00Z", "names a day that does not exist (no month 13)"},
             {"1999-01-01T09:00:00Z", "is not a date between the years 2000 and 2999"}}) {
        auto r = load("start_at: \"" + text + "\"\n");
        ASSERT_FALSE(r.value) << text;
        ASSERT_EQ(r.errors.size(), 1u) << all(r.errors);
        EXPECT_NE(r.errors[0].message.find("'" + text + "' " + why), std::string::npos) << r.errors[0].message;
    }
}

TEST(dates, end_at_must_come_after_start_at) {
    auto r = load("start_at: 2026-12-01T09:00:00Z\nend_at: 2026-12-01T10:00:00+01:00\n");
    ASSERT_FALSE(r.value);
    ASSERT_EQ(r.errors.size(), 1u) << all(r.errors);
    EXPECT_EQ(r.errors[0].line, 9);
    EXPECT_EQ(r.errors[0].message,
              "end_at: 2026-12-01T09:00:00Z is not after start_at (2026-12-01T09:00:00Z)");
}

TEST(dates, a_date_must_be_a_string) {
    auto r = load("start_at: 5\n");
    ASSERT_FALSE(r.value);
    ASSERT_FALSE(r.errors.empty());
    EXPECT_EQ(r.errors[0].line, 8) << all(r.errors);
    EXPECT_NE(r.errors[0].message.find("start_at"), std::string::npos) << all(r.errors);
}

}  // namespace
