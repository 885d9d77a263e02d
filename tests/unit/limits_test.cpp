// Pure helpers of orch::limits: backoff, ramp-up, day math, key naming, URL and settings checks.
#include "engine/limits/limits.hpp"

#include <gtest/gtest.h>

#include <chrono>

namespace {

using namespace orch::limits;
using namespace std::chrono;

TEST(LimitsBackoff, FullJitterGrowsWithTheStreakUpToTheCap) {
    // jitter 1.0 gives the ceiling: base * 2^streak, capped.
    EXPECT_EQ(backoff_ms(1000, 60'000, 0, 0, 1.0), 1000);
    EXPECT_EQ(backoff_ms(1000, 60'000, 0, 1, 1.0), 2000);
    EXPECT_EQ(backoff_ms(1000, 60'000, 0, 5, 1.0), 32'000);
    EXPECT_EQ(backoff_ms(1000, 60'000, 0, 6, 1.0), 60'000);
    EXPECT_EQ(backoff_ms(1000, 60'000, 0, 1000, 1.0), 60'000);  // no overflow on a huge streak
    EXPECT_EQ(backoff_ms(1000, 60'000, 0, 3, 0.5), 4000);
    EXPECT_EQ(backoff_ms(1000, 60'000, 0, 3, 0.0), 0);
    EXPECT_EQ(backoff_ms(1000, 60'000, 1000, 3, 0.0), 1000);  // the floor
}

TEST(LimitsRamp, NewAccountsStartLowAndGrowToTheQuota) {
    quota q{80, 200};
    ramp_up r{20, 10};
    EXPECT_EQ(ramped_day_quota(q, r, 100, 100), 20);
    EXPECT_EQ(ramped_day_quota(q, r, 100, 101), 30);
    EXPECT_EQ(ramped_day_quota(q, r, 100, 106), 80);
    EXPECT_EQ(ramped_day_quota(q, r, 100, 400), 80);
    EXPECT_EQ(ramped_day_quota(q, r, 100, 90), 20);  // a day before the first counts as the first
    EXPECT_EQ(ramped_day_quota(q, ramp_up{}, 100, 100), 80);  // no ramp-up
    EXPECT_EQ(ramped_day_quota(quota{}, r, 100, 100), -1);    // no quota: nothing to ramp
}

TEST(LimitsDefaults, CommonPracticeQuotas) {
    auto d = default_actions();
    const auto& invite = d[static_cast<std::size_t>(action::invite)];
    EXPECT_EQ(invite.limit.per_day, 80);
    EXPECT_EQ(invite.limit.per_week, 200);
    EXPECT_EQ(invite.ramp.start_per_day, 20);
    EXPECT_EQ(d[static_cast<std::size_t>(action::send)].limit.per_day, 150);
    EXPECT_EQ(d[static_cast<std::size_t>(action::visit)].limit.per_day, 100);
    EXPECT_EQ(d[static_cast<std::size_t>(action::search)].limit.per_day, 300);
    EXPECT_EQ(d[static_cast<std::size_t>(action::withdraw)].limit.per_day, 50);
    EXPECT_EQ(d[static_cast<std::size_t>(action::check_invitation)].limit.per_day, -1);
}

TEST(LimitsActions, NamesRoundTripAndCallKindsMap) {
    for (std::size_t i = 0; i < action_count; ++i) {
        auto a = static_cast<action>(i);
        EXPECT_EQ(parse_action(to_string(a)), a);
    }
    EXPECT_FALSE(parse_action("invites"));
    EXPECT_FALSE(parse_action(""));
    using k = orch::campaigns::call_kind;
    EXPECT_EQ(action_of(k::invite, false), action::invite);
    EXPECT_EQ(action_of(k::invite, true), action::check_invitation);
    EXPECT_EQ(action_of(k::withdraw, false), action::withdraw);
    EXPECT_EQ(action_of(k::withdraw, true), action::check_invitation);
    EXPECT_EQ(action_of(k::send, false), action::send);
    EXPECT_EQ(action_of(k::send, true), action::get_conversation);
    EXPECT_EQ(action_of(k::visit, false), action::visit);
    EXPECT_EQ(action_of(k::check_invitation, false), action::check_invitation);
    EXPECT_EQ(action_of(k::get_conversation, false), action::get_conversation);
}

TEST(LimitsKeys, OneHashTagPerApiKeyAndNeverTheKeyItself) {
    std::string tag = key_tag("secret-api-key-123");
    EXPECT_EQ(tag.size(), 16u);
    EXPECT_EQ(tag.find_first_not_of("0123456789abcdef"), std::string::npos);
    EXPECT_EQ(tag, key_tag("secret-api-key-123"));
    EXPECT_NE(tag, key_tag("secret-api-key-124"));
    const std::string prefix = "orch:{" + tag + "}:";
    for (const std::string& k : {key_scope_key(tag), account_key(tag, "acc_1", action::invite)}) {
        EXPECT_EQ(k.rfind(prefix, 0), 0u) << k;
        EXPECT_EQ(k.find("secret"), std::string::npos) << k;
    }
    EXPECT_EQ(account_key(tag, "acc_1", action::invite), prefix + "acct:acc_1:invite");
    EXPECT_EQ(key_scope_key(tag), prefix + "key");
}

TEST(LimitsKeys, AccountIdsAreEncodedSoTheyCannotCollideOrMoveTheTag) {
    EXPECT_EQ(encode_key_part("acc_ABC-1.x"), "acc_ABC-1.x");
    EXPECT_EQ(encode_key_part("a:b"), "a%3Ab");
    EXPECT_EQ(encode_key_part("{x}"), "%7Bx%7D");
    EXPECT_EQ(encode_key_part("50%"), "50%25");
    EXPECT_EQ(encode_key_part("a b\n"), "a%20b%0A");
    EXPECT_EQ(encode_key_part("\xc3\xa9"), "%C3%A9");
    // "a:b" + invite must differ from account "a" with some other layout.
    std::string tag = key_tag("k");
    EXPECT_NE(account_key(tag, "a:invite", action::send), account_key(tag, "a", action::invite));
}

TEST(LimitsDay, UtcDayNumberAndTimeLeft) {
    // 2024-03-10 12:00:00 UTC = day 19792.
    sys_seconds t = sys_days{days{19792}} + hours{12};
    auto d = day_in_zone(t, "UTC");
    ASSERT_TRUE(d);
    EXPECT_EQ(d->day, 19792);
    EXPECT_EQ(d->left, hours{12});
}

TEST(LimitsDay, LocalCalendarOfTheTimeZoneIncludingShortDstDays) {
    // 2024-03-31 in Paris: clocks jump 02:00 -> 03:00, so the day lasts 23 h.
    // 2024-03-30 23:30 UTC = 2024-03-31 00:30 CET: the local day is 2024-03-31 (19813).
    sys_seconds t = sys_days{days{19812}} + hours{23} + minutes{30};
    auto d = day_in_zone(t, "Europe/Paris");
    ASSERT_TRUE(d);
    EXPECT_EQ(d->day, 19813);
    // It ends at 2024-03-31 24:00 CEST = 22:00 UTC, 22 h 30 min later.
    EXPECT_EQ(d->left, hours{22} + minutes{30});
    // New York, same instant: still 2024-03-30 (19:30 EDT), ending 4 h 30 min later.
    auto ny = day_in_zone(t, "America/New_York");
    ASSERT_TRUE(ny);
    EXPECT_EQ(ny->day, 19812);
    EXPECT_EQ(ny->left, hours{4} + minutes{30});
}

TEST(LimitsDay, UnknownTimeZoneIsAnError) {
    EXPECT_FALSE(day_in_zone(system_clock::now(), "Mars/Olympus"));
    EXPECT_FALSE(day_in_zone(system_clock::now(), ""));
}

TEST(LimitsUrl, ParsesHostPortPasswordAndDb) {
    std::string error;
    auto a = parse_redis_url("redis://127.0.0.1:6380/2", error);
    ASSERT_TRUE(a) << error;
    EXPECT_EQ(a->host, "127.0.0.1");
    EXPECT_EQ(a->port, 6380);
    EXPECT_EQ(a->db, 2);
    EXPECT_TRUE(a->password.empty());
    auto b = parse_redis_url("redis://:s3cret@cache.local", error);
    ASSERT_TRUE(b) << error;
    EXPECT_EQ(b->host, "cache.local");
    EXPECT_EQ(b->port, 6379);
    EXPECT_EQ(b->password, "s3cret");
    EXPECT_TRUE(b->user.empty());
    auto c = parse_redis_url("redis://app:pw@h:1/", error);
    ASSERT_TRUE(c) << error;
    EXPECT_EQ(c->user, "app");
    EXPECT_EQ(c->password, "pw");
    EXPECT_EQ(c->db, 0);
}

TEST(LimitsUrl, RejectsWhatItCannotUse) {
    std::string error;
    EXPECT_FALSE(parse_redis_url("http://h:1", error));
    EXPECT_NE(error.find("redis://"), std::string::npos);
    EXPECT_FALSE(parse_redis_url("redis://h:0", error));
    EXPECT_FALSE(parse_redis_url("redis://h:70000", error));
    EXPECT_FALSE(parse_redis_url("redis://h:x", error));
    EXPECT_FALSE(parse_redis_url("redis://h:1/db", error));
    EXPECT_FALSE(parse_redis_url("redis://:1", error));
    EXPECT_FALSE(parse_redis_url("", error));
}

TEST(LimitsSettings, DefaultsAreValidAndEveryProblemIsListed) {
    settings s;
    s.redis_url = "redis://127.0.0.1:6379/0";
    s.api_key = "k";
    EXPECT_TRUE(validate(s).empty());
    s.redis_url = "nope";
    s.api_key = "";
    s.key_burst = 0;
    s.backoff_cap_ms = 1;
    s.counters_ttl_ms = 1000;
    s.actions[0].limit.per_day = -5;
    auto bad = validate(s);
    EXPECT_GE(bad.size(), 6u);
    for (const auto& b : bad) {
        EXPECT_EQ(b.rfind("limits: ", 0), 0u) << b;
    }
}

// The key's learned share: a quarter off per RATE_LIMITED without Retry-After, once a second at
// most, down to 5 %; 10 points back per minute without one.
TEST(KeyRateShare, CutsByAQuarterOncePerSecondAndGrowsBackTenPointsAMinute) {
    key_rate_share share;
    const auto t0 = key_rate_share::clock::time_point{} + hours(1);
    EXPECT_DOUBLE_EQ(share.at(t0), 1.0);
    auto cut = share.cut(t0);
    ASSERT_TRUE(cut.has_value());
    EXPECT_DOUBLE_EQ(*cut, 0.75);
    // The other answers of the same burst cut nothing.
    EXPECT_FALSE(share.cut(t0 + milliseconds(10)).has_value());
    EXPECT_FALSE(share.cut(t0 + milliseconds(999)).has_value());
    EXPECT_DOUBLE_EQ(share.at(t0 + milliseconds(999)), 0.75 + 0.10 * 0.999 / 60.0);
    // The next second's answer cuts what has grown back since.
    cut = share.cut(t0 + seconds(30));
    ASSERT_TRUE(cut.has_value());
    EXPECT_NEAR(*cut, (0.75 + 0.05) * 0.75, 1e-12);
    // Grows back 10 points a minute, to 1 and no further.
    EXPECT_NEAR(share.at(t0 + seconds(90)), 0.6 + 0.10, 1e-12);
    EXPECT_DOUBLE_EQ(share.at(t0 + minutes(30)), 1.0);
    EXPECT_DOUBLE_EQ(share.at(t0 + minutes(31)), 1.0);
    // Grown back, the next cut cuts from the whole rate.
    cut = share.cut(t0 + minutes(31));
    ASSERT_TRUE(cut.has_value());
    EXPECT_DOUBLE_EQ(*cut, 0.75);
    // Down to 5 %, not below.
    for (int i = 1; i <= 40; ++i) {
        share.cut(t0 + minutes(31) + seconds(i));
    }
    EXPECT_NEAR(share.at(t0 + minutes(31) + seconds(40)), key_rate_share::floor, 0.001);
    EXPECT_GE(share.at(t0 + minutes(31) + seconds(40)), key_rate_share::floor);
}

}  // namespace
