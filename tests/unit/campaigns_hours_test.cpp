// Working hours through the tz database (in_working_hours, next_working_start), across daylight
// saving changes; durations and hours texts.
#include "campaigns/campaigns.hpp"
#include "campaigns/detail/time_rules.hpp"

#include <gtest/gtest.h>

namespace {

using namespace orch::campaigns;
using namespace orch::campaigns::detail;
using std::chrono::hours;
using std::chrono::minutes;

// A UTC instant from its calendar fields.
time_point utc(int y, unsigned m, unsigned d, int h, int min = 0) {
    using namespace std::chrono;
    return sys_days{year{y} / month{m} / day{d}} + hours{h} + minutes{min};
}

schedule office(const char* zone, int start_minute = 9 * 60, int end_minute = 18 * 60) {
    schedule s;
    s.time_zone = zone;
    s.start_minute = start_minute;
    s.end_minute = end_minute;
    return s;  // mon..fri
}

TEST(working_hours, edges_of_the_window_in_local_time) {
    schedule s = office("Europe/Berlin");
    // Monday 2024-01-08, CET = UTC+1.
    EXPECT_FALSE(in_working_hours(s, utc(2024, 1, 8, 7, 59)));
    EXPECT_TRUE(in_working_hours(s, utc(2024, 1, 8, 8, 0)));  // 09:00 local
    EXPECT_TRUE(in_working_hours(s, utc(2024, 1, 8, 16, 59)));  // 17:59 local
    EXPECT_FALSE(in_working_hours(s, utc(2024, 1, 8, 17, 0)));  // 18:00 local: the end is excluded
    EXPECT_FALSE(in_working_hours(s, utc(2024, 1, 13, 10)));  // Saturday
    // Summer, CEST = UTC+2.
    EXPECT_TRUE(in_working_hours(s, utc(2024, 7, 1, 7, 0)));
    EXPECT_FALSE(in_working_hours(s, utc(2024, 7, 1, 6, 59)));
}

TEST(working_hours, inside_the_window_is_now) {
    schedule s = office("Europe/Berlin");
    time_point t = utc(2024, 1, 8, 12, 34) + std::chrono::milliseconds(567);
    EXPECT_EQ(next_working_start(s, t), t);
}

TEST(working_hours, next_start_later_today_tomorrow_and_after_the_weekend) {
    schedule s = office("Europe/Berlin");
    EXPECT_EQ(next_working_start(s, utc(2024, 1, 8, 5)), utc(2024, 1, 8, 8));  // Monday early
    EXPECT_EQ(next_working_start(s, utc(2024, 1, 8, 20)), utc(2024, 1, 9, 8));  // Monday evening
    EXPECT_EQ(next_working_start(s, utc(2024, 1, 12, 17)), utc(2024, 1, 15, 8));  // Friday 18:00
    EXPECT_EQ(next_working_start(s, utc(2024, 1, 13, 12)), utc(2024, 1, 15, 8));  // Saturday
}

TEST(working_hours, weekend_with_a_spring_forward_change) {
    // Europe/Berlin moves from UTC+1 to UTC+2 on Sunday 2024-03-31: Friday 18:30 CET -> Monday
    // 09:00 CEST is 07:00 UTC, not 08:00.
    schedule s = office("Europe/Berlin");
    EXPECT_EQ(next_working_start(s, utc(2024, 3, 29, 17, 30)), utc(2024, 4, 1, 7));
    // New York: UTC-5 -> UTC-4 on Sunday 2024-03-10.
    schedule ny = office("America/New_York");
    EXPECT_EQ(next_working_start(ny, utc(2024, 3, 8, 23)), utc(2024, 3, 11, 13));
}

TEST(working_hours, weekend_with_a_fall_back_change) {
    // Europe/Berlin back to UTC+1 on Sunday 2024-10-27: Monday 09:00 CET is 08:00 UTC.
    schedule s = office("Europe/Berlin");
    EXPECT_EQ(next_working_start(s, utc(2024, 10, 25, 16, 30)), utc(2024, 10, 28, 8));
    schedule ny = office("America/New_York");  // UTC-4 -> UTC-5 on Sunday 2024-11-03
    EXPECT_EQ(next_working_start(ny, utc(2024, 11, 1, 22)), utc(2024, 11, 4, 14));
}

TEST(working_hours, start_inside_the_spring_forward_gap_begins_when_the_gap_ends) {
    // 02:30 does not exist in Berlin on 2024-03-31 (02:00 -> 03:00): work starts at 03:00 CEST.
    schedule s = office("Europe/Berlin", 2 * 60 + 30, 6 * 60);
    s.days.fill(true);
    time_point start = next_working_start(s, utc(2024, 3, 30, 23));  // Sunday 00:00 CET
    EXPECT_EQ(start, utc(2024, 3, 31, 1));  // 03:00 CEST
    EXPECT_TRUE(in_working_hours(s, start));
    EXPECT_FALSE(in_working_hours(s, start - minutes(1)));  // 01:59 CET
}

TEST(working_hours, a_window_that_falls_entirely_into_the_gap_is_skipped) {
    // Sundays 02:00-02:30 only: on 2024-03-31 that half hour does not exist in Berlin.
    schedule s = office("Europe/Berlin", 2 * 60, 2 * 60 + 30);
    s.days = {false, false, false, false, false, false, true};
    EXPECT_EQ(next_working_start(s, utc(2024, 3, 30, 12)), utc(2024, 4, 7, 0));  // next Sunday 02:00 CEST
}

TEST(working_hours, start_inside_the_repeated_fall_back_hour_is_its_first_occurrence) {
    // 02:30 happens twice in Berlin on 2024-10-27: first at 00:30 UTC (CEST), then 01:30 UTC (CET).
    schedule s = office("Europe/Berlin", 2 * 60 + 30, 4 * 60);
    s.days.fill(true);
    EXPECT_EQ(next_working_start(s, utc(2024, 10, 26, 22)), utc(2024, 10, 27, 0, 30));
    EXPECT_TRUE(in_working_hours(s, utc(2024, 10, 27, 0, 30)));
    EXPECT_TRUE(in_working_hours(s, utc(2024, 10, 27, 1, 45)));  // 02:45 CET, the second pass
    EXPECT_FALSE(in_working_hours(s, utc(2024, 10, 27, 3, 0)));  // 04:00 CET
}

TEST(working_hours, whole_day_window_and_utc) {
    schedule s = office("UTC", 0, 24 * 60);
    EXPECT_TRUE(in_working_hours(s, utc(2024, 5, 6, 0)));
    EXPECT_TRUE(in_working_hours(s, utc(2024, 5, 6, 23, 59)));
    EXPECT_EQ(next_working_start(s, utc(2024, 5, 4, 13)), utc(2024, 5, 6, 0));  // Saturday -> Monday
}

// Over a year of instants in two zones with DST: the answer is never earlier than asked, is inside
// the window, and nothing earlier after `t` was (the minute before the answer is outside).
TEST(working_hours, next_start_is_the_first_working_minute) {
    for (const char* zone : {"Europe/Berlin", "America/New_York", "Australia/Sydney", "Asia/Kolkata"}) {
        schedule s = office(zone, 8 * 60 + 30, 17 * 60 + 15);
        s.days = {true, false, true, false, true, false, true};
        for (time_point t = utc(2024, 1, 1, 0); t < utc(2025, 1, 1, 0); t += hours(7) + minutes(13)) {
            time_point start = next_working_start(s, t);
            ASSERT_GE(start, t) << zone;
            ASSERT_TRUE(in_working_hours(s, start)) << zone;
            if (start != t) {
                ASSERT_FALSE(in_working_hours(s, start - minutes(1))) << zone;
                ASSERT_LT(start - t, hours(24 * 3)) << zone;
            }
        }
    }
}

// ---------------------------------------------------------------------------------------------
// Texts

TEST(durations, parse) {
    EXPECT_EQ(parse_duration("7d"), 7 * 86400);
    EXPECT_EQ(parse_duration("12h"), 12 * 3600);
    EXPECT_EQ(parse_duration("30m"), 1800);
    EXPECT_EQ(parse_duration("45s"), 45);
    EXPECT_EQ(parse_duration("1d12h"), 86400 + 12 * 3600);
    EXPECT_EQ(parse_duration("2h30m15s"), 2 * 3600 + 1815);
    EXPECT_EQ(parse_duration("0s"), 0);
    EXPECT_EQ(parse_duration("365d"), 365 * 86400);
    EXPECT_EQ(parse_duration("90m"), 5400);  // a unit need not be "normalised"
    for (const char* bad : {"", "7", "d", "7 d", "7days", "1h1d", "1d1d", "-1d", "+1d", "1.5h", "366d",
                            "8761h", "99999999999999999999s", "1w"}) {
        EXPECT_FALSE(parse_duration(bad).has_value()) << bad;
    }
}

TEST(durations, format) {
    EXPECT_EQ(format_duration(seconds{0}), "0s");
    EXPECT_EQ(format_duration(seconds{86400 * 7}), "7d");
    EXPECT_EQ(format_duration(seconds{86400 + 3600 + 61}), "1d1h1m1s");
    EXPECT_EQ(format_duration(seconds{5400}), "1h30m");
}

TEST(hours_text, parse) {
    std::string error;
    auto h = parse_hours("09:00-18:00", error);
    ASSERT_TRUE(h);
    EXPECT_EQ(h->start_minute, 540);
    EXPECT_EQ(h->end_minute, 1080);
    h = parse_hours("00:00-24:00", error);
    ASSERT_TRUE(h);
    EXPECT_EQ(h->end_minute, 1440);
    struct bad {
        const char* text;
        const char* fragment;
    };
    for (const bad& b :
         {bad{"9:00-18:00", "must look like 09:00-18:00"}, bad{"09:00 - 18:00", "must look like"},
          bad{"24:00-24:00", "24:00 is not a time of day"}, bad{"09:60-18:00", "09:60 is not a time"},
          bad{"09:00-24:30", "24:30 is not a time"}, bad{"18:00-09:00", "the end must be after"},
          bad{"09:00-09:00", "the end must be after"}, bad{"ab:cd-ef:gh", "ab:cd is not a time"}}) {
        error.clear();
        EXPECT_FALSE(parse_hours(b.text, error)) << b.text;
        EXPECT_NE(error.find(b.fragment), std::string::npos) << b.text << ": " << error;
    }
    EXPECT_EQ(format_minute(540), "09:00");
    EXPECT_EQ(format_minute(1440), "24:00");
}

TEST(time_zones, known_names) {
    EXPECT_TRUE(is_known_time_zone("Europe/Berlin"));
    EXPECT_TRUE(is_known_time_zone("UTC"));
    EXPECT_TRUE(is_known_time_zone("America/Argentina/Buenos_Aires"));
    EXPECT_FALSE(is_known_time_zone("Europe/Berln"));
    EXPECT_FALSE(is_known_time_zone(""));
    EXPECT_FALSE(is_known_time_zone("../../etc/passwd"));
    auto names = time_zone_names();
    EXPECT_NE(std::find(names.begin(), names.end(), "Asia/Tokyo"), names.end());
}

}  // namespace
