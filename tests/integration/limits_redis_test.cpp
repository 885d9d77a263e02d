// orch::limits against a real Redis: the one from deploy/dev-services.sh (REDIS_URL), and for the
// outage test a redis-server this test starts, stops and restarts on a free port of its own.
// Each test uses its own random API key, so its keys (one hash tag) never meet another test's.
#include "engine/limits/limits.hpp"
#include "tests/support/require_services.hpp"

#include <gtest/gtest.h>
#include <hiredis/hiredis.h>

#include <arpa/inet.h>
#include <netinet/in.h>
#include <signal.h>
#include <spawn.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstdlib>
#include <memory>
#include <random>
#include <string>
#include <thread>
#include <vector>

extern char** environ;

namespace {

using namespace orch::limits;
using namespace std::chrono;
using namespace std::chrono_literals;

struct reply_deleter {
    void operator()(redisReply* r) const { freeReplyObject(r); }
};
using reply_ptr = std::unique_ptr<redisReply, reply_deleter>;

constexpr std::int64_t day0 = 20'000;
const local_day today{day0, hours{5}};

std::string random_key() {
    std::random_device rd;
    return "test-key-" + std::to_string(rd()) + "-" + std::to_string(rd());
}

// Polls `pred` every 20 ms until it holds or `limit` passes (no bare sleeps in assertions).
template <typename Pred>
bool eventually(Pred pred, milliseconds limit = 5s) {
    auto end = steady_clock::now() + limit;
    while (steady_clock::now() < end) {
        if (pred()) {
            return true;
        }
        std::this_thread::sleep_for(20ms);
    }
    return pred();
}

class LimitsRedis : public ::testing::Test {
protected:
    void SetUp() override {
        const char* url = std::getenv("REDIS_URL");
        ORCH_REQUIRE_SERVICE("REDIS_URL");
        url_ = url;
        std::string error;
        auto ep = parse_redis_url(url_, error);
        ASSERT_TRUE(ep) << error;
        raw_ = redisConnect(ep->host.c_str(), ep->port);
        ASSERT_TRUE(raw_ != nullptr && raw_->err == 0);
        if (ep->db != 0) {
            cmd({"SELECT", std::to_string(ep->db)});
        }
    }
    void TearDown() override {
        if (raw_ != nullptr) {
            redisFree(raw_);
        }
    }

    // Settings for one test: its own API key, no key rate bucket unless a test sets one,
    // no ramp-up unless a test sets one, and no pacing jitter.
    settings base() const {
        settings s;
        s.redis_url = url_;
        s.api_key = random_key();
        s.key_requests_per_s = 0;
        for (auto& a : s.actions) {
            a.ramp = {};
        }
        s.pacing_factor_min = s.pacing_factor_max = 1.0;
        s.reconnect_interval_ms = 50;
        return s;
    }

    static check invite(const std::string& account, std::int64_t per_day, std::int64_t per_week = -1) {
        check c;
        c.account_id = account;
        c.what = action::invite;
        c.account_quota = quota{per_day, per_week};
        c.day = today;
        return c;
    }

    reply_ptr cmd(const std::vector<std::string>& args) {
        std::vector<const char*> argv;
        std::vector<std::size_t> lens;
        for (const auto& a : args) {
            argv.push_back(a.data());
            lens.push_back(a.size());
        }
        return reply_ptr(static_cast<redisReply*>(
            redisCommandArgv(raw_, static_cast<int>(argv.size()), argv.data(), lens.data())));
    }
    std::int64_t pttl(const std::string& key) { return cmd({"PTTL", key})->integer; }
    // The doubles of a binary record (see schema/redis/buckets.lua), read back with Redis's own
    // struct library; empty when the key does not exist.
    std::vector<double> record(const std::string& key) {
        auto r = cmd({"EVAL",
                      "local raw = redis.call('GET', KEYS[1]) if not raw then return {} end "
                      "local out = {} for i = 1, #raw, 8 do out[#out + 1] = string.format('%.0f', "
                      "(struct.unpack('<d', raw, i))) end return out",
                      "1", key});
        std::vector<double> out;
        for (std::size_t i = 0; r && r->type == REDIS_REPLY_ARRAY && i < r->elements; ++i) {
            out.push_back(std::stod(r->element[i]->str));
        }
        return out;
    }

    std::string url_;
    redisContext* raw_ = nullptr;
};

TEST_F(LimitsRedis, DayQuotaIsNeverExceededByManyThreadsRacing) {
    limiter lim(base());
    constexpr int threads = 16, attempts = 20, per_day = 50;
    std::atomic<int> allowed{0}, wrong{0};
    std::vector<std::thread> pool;
    for (int t = 0; t < threads; ++t) {
        pool.emplace_back([&] {
            for (int i = 0; i < attempts; ++i) {
                verdict v = lim.take(invite("acc_race", per_day));
                if (v.allowed) {
                    ++allowed;
                } else if (v.why != reason::day_quota || v.retry_after != today.left) {
                    ++wrong;
                }
            }
        });
    }
    for (auto& th : pool) {
        th.join();
    }
    EXPECT_EQ(allowed.load(), per_day);
    EXPECT_EQ(wrong.load(), 0);
    auto st = lim.status("acc_race", today);
    ASSERT_TRUE(st);
    const auto& inv = st->actions[static_cast<std::size_t>(action::invite)];
    EXPECT_EQ(inv.used_today, per_day);
    EXPECT_EQ(inv.used_week, per_day);
}

// Concurrent take() calls share round trips (limiter::take combines them into take_many
// batches): every caller still gets the verdict of its own check, and each check is counted
// exactly once. Each thread takes for its own account (its counts must run 1, 2, ... in its own
// verdicts) and, in between, for one shared account with a quota smaller than the demand.
TEST_F(LimitsRedis, ConcurrentTakesGetTheirOwnVerdictsAndCountOnce) {
    limiter lim(base());
    constexpr int threads = 16, rounds = 30, shared_quota = 100;
    std::atomic<int> shared_allowed{0}, misrouted{0};
    std::vector<std::thread> pool;
    for (int t = 0; t < threads; ++t) {
        pool.emplace_back([&, t] {
            const std::string own = "acc_own_" + std::to_string(t);
            for (int i = 1; i <= rounds; ++i) {
                verdict v = lim.take(invite(own, 1000));
                if (!v.allowed || v.used_today != i) {
                    ++misrouted;
                }
                verdict w = lim.take(invite("acc_shared", shared_quota));
                if (w.allowed) {
                    ++shared_allowed;
                } else if (w.why != reason::day_quota) {
                    ++misrouted;
                }
            }
        });
    }
    for (auto& th : pool) {
        th.join();
    }
    EXPECT_EQ(misrouted.load(), 0);
    EXPECT_EQ(shared_allowed.load(), shared_quota);
    for (int t = 0; t < threads; ++t) {
        auto st = lim.status("acc_own_" + std::to_string(t), today);
        ASSERT_TRUE(st);
        EXPECT_EQ(st->actions[static_cast<std::size_t>(action::invite)].used_today, rounds) << t;
    }
}

TEST_F(LimitsRedis, DayAndRollingWeekRollOverWithTheDayNumber) {
    limiter lim(base());
    auto on = [](std::int64_t day) {
        check c = invite("acc_week", 3, 5);
        c.day = {day, hours{2}};
        return c;
    };
    for (int i = 0; i < 3; ++i) {
        EXPECT_TRUE(lim.take(on(day0)).allowed);
    }
    verdict full = lim.take(on(day0));
    EXPECT_FALSE(full.allowed);
    EXPECT_EQ(full.why, reason::day_quota);
    EXPECT_EQ(full.retry_after, hours{2});  // when the local day ends
    // Next day: the day quota is fresh, the week holds 3 of 5.
    EXPECT_TRUE(lim.take(on(day0 + 1)).allowed);
    EXPECT_TRUE(lim.take(on(day0 + 1)).allowed);
    verdict week = lim.take(on(day0 + 1));
    EXPECT_FALSE(week.allowed);
    EXPECT_EQ(week.why, reason::week_quota);
    // Day0's 3 calls leave the window on day0 + 7: 2 h left today + 5 more days.
    EXPECT_EQ(week.retry_after, hours{2} + hours{24 * 5});
    EXPECT_EQ(week.used_week, 5);
    for (std::int64_t d = day0 + 2; d <= day0 + 6; ++d) {
        verdict v = lim.take(on(d));
        EXPECT_FALSE(v.allowed) << d;
        EXPECT_EQ(v.why, reason::week_quota) << d;
    }
    verdict later = lim.take(on(day0 + 7));
    EXPECT_TRUE(later.allowed);
    EXPECT_EQ(later.used_week, 3);  // day0 + 1's two calls and this one
}

// An account's time zone moved west to an earlier date (its quota day went back from day0 + 1 to
// day0): the calls counted on day0 + 1 were made today, so day0 counts them with its own, in the
// day quota and the week; the takes after the move count on day0 itself. Moved east (day0 to
// day0 + 1), a new day starts, and the week still holds day0's calls.
TEST_F(LimitsRedis, ACallOfTheNextDateCountsTodayAfterTheTimeZoneMovedWest) {
    limiter lim(base());
    auto on = [](const std::string& account, std::int64_t day) {
        check c = invite(account, 3, 4);
        c.day = {day, hours{2}};
        return c;
    };
    EXPECT_TRUE(lim.take(on("acc_west", day0 + 1)).allowed);
    EXPECT_TRUE(lim.take(on("acc_west", day0 + 1)).allowed);
    verdict third = lim.take(on("acc_west", day0));
    ASSERT_TRUE(third.allowed);
    EXPECT_EQ(third.used_today, 3) << "day0 + 1's two calls are today's";
    verdict full = lim.take(on("acc_west", day0));
    EXPECT_FALSE(full.allowed);
    EXPECT_EQ(full.why, reason::day_quota) << "a second day quota on one day";
    auto st = lim.status("acc_west", {day0, hours{2}});
    ASSERT_TRUE(st);
    EXPECT_EQ(st->actions[static_cast<std::size_t>(action::invite)].used_today, 3);
    EXPECT_EQ(st->actions[static_cast<std::size_t>(action::invite)].used_week, 3);
    // The refund of the take made on day0 gives back day0's own place, not day0 + 1's.
    EXPECT_TRUE(lim.refund(on("acc_west", day0)));
    auto back = lim.status("acc_west", {day0 + 1, hours{2}});
    ASSERT_TRUE(back);
    EXPECT_EQ(back->actions[static_cast<std::size_t>(action::invite)].used_today, 2);

    EXPECT_TRUE(lim.take(on("acc_east", day0)).allowed);
    EXPECT_TRUE(lim.take(on("acc_east", day0)).allowed);
    EXPECT_TRUE(lim.take(on("acc_east", day0 + 1)).allowed) << "a new day";
    EXPECT_TRUE(lim.take(on("acc_east", day0 + 1)).allowed);
    verdict week = lim.take(on("acc_east", day0 + 1));
    EXPECT_FALSE(week.allowed);
    EXPECT_EQ(week.why, reason::week_quota) << "day0's calls stay in the week";
}

TEST_F(LimitsRedis, RampUpStartsNewAccountsLow) {
    settings s = base();
    s.actions[static_cast<std::size_t>(action::invite)] = {{80, 200}, {2, 1}};
    limiter lim(s);
    check c;
    c.account_id = "acc_new";
    c.what = action::invite;
    c.day = today;
    EXPECT_TRUE(lim.take(c).allowed);
    EXPECT_TRUE(lim.take(c).allowed);
    verdict v = lim.take(c);
    EXPECT_FALSE(v.allowed);
    EXPECT_EQ(v.why, reason::day_quota);
    c.day = {day0 + 1, hours{5}};  // the recorded first day is day0: 3 today
    for (int i = 0; i < 3; ++i) {
        EXPECT_TRUE(lim.take(c).allowed) << i;
    }
    EXPECT_FALSE(lim.take(c).allowed);
    auto st = lim.status("acc_new", c.day);
    ASSERT_TRUE(st);
    const auto& inv = st->actions[static_cast<std::size_t>(action::invite)];
    EXPECT_EQ(inv.first_day, day0);
    EXPECT_EQ(inv.limit_today, 3);
    EXPECT_EQ(inv.left_today, 0);
    EXPECT_EQ(inv.left_week, 200 - 5);
    // An account the caller knows to be old gets the full quota.
    c.account_id = "acc_old";
    c.first_day = day0 - 100;
    for (int i = 0; i < 10; ++i) {
        EXPECT_TRUE(lim.take(c).allowed) << i;
    }
}

TEST_F(LimitsRedis, PacingSpreadsTheDayQuotaOverTheWorkingWindow) {
    limiter lim(base());
    check c = invite("acc_pace", 20);
    c.working_window = 10s;  // 20 a day over 10 s: one every 500 ms (factor fixed at 1)
    verdict first = lim.take(c);
    ASSERT_TRUE(first.allowed);
    verdict second = lim.take(c);
    EXPECT_FALSE(second.allowed);
    EXPECT_EQ(second.why, reason::pacing);
    EXPECT_GT(second.retry_after, 300ms);
    EXPECT_LE(second.retry_after, 500ms);
    std::this_thread::sleep_for(second.retry_after + 10ms);  // the verdict's own time
    EXPECT_TRUE(lim.take(c).allowed);
    // Another action of the same account has its own pace.
    c.what = action::visit;
    EXPECT_TRUE(lim.take(c).allowed);
}

// With the time left in the window known, the gap fits the rest of the day quota into it: 20 a
// day over a 10 s window is one every 500 ms, but with 1 s of the window left and 19 calls still
// allowed the gap is 1 s / 20 = 50 ms; with the whole window left it stays 500 ms.
TEST_F(LimitsRedis, PacingFitsTheRestOfTheQuotaIntoWhatIsLeftOfTheWindow) {
    limiter lim(base());
    check late = invite("acc_pace_late", 20);
    late.working_window = 10s;
    late.window_left = 1s;
    ASSERT_TRUE(lim.take(late).allowed);
    verdict v = lim.take(late);
    ASSERT_EQ(v.why, reason::pacing);
    EXPECT_GT(v.retry_after, 30ms);
    EXPECT_LE(v.retry_after, 50ms);

    check early = invite("acc_pace_early", 20);
    early.working_window = 10s;
    early.window_left = 10s;
    ASSERT_TRUE(lim.take(early).allowed);
    v = lim.take(early);
    ASSERT_EQ(v.why, reason::pacing);
    EXPECT_GT(v.retry_after, 300ms);
    EXPECT_LE(v.retry_after, 500ms);
}

TEST_F(LimitsRedis, PacingGapsAreRandomWithinTheFactorRange) {
    settings s = base();
    s.pacing_factor_min = 0.5;
    s.pacing_factor_max = 1.5;
    limiter lim(s);
    std::vector<std::int64_t> gaps;
    for (int i = 0; i < 12; ++i) {
        check c = invite("acc_jitter_" + std::to_string(i), 10);
        c.working_window = 100s;  // 10 s base gap
        ASSERT_TRUE(lim.take(c).allowed);
        verdict v = lim.take(c);
        ASSERT_EQ(v.why, reason::pacing);
        EXPECT_GT(v.retry_after, 4'900ms);
        EXPECT_LE(v.retry_after, 15'000ms);
        gaps.push_back(v.retry_after.count() / 100);
    }
    std::sort(gaps.begin(), gaps.end());
    EXPECT_GT(gaps.back() - gaps.front(), 10) << "gaps are not random";
}

TEST_F(LimitsRedis, CampaignCapIsPerCampaignAndTheAccountQuotaIsShared) {
    limiter lim(base());
    check a = invite("acc_shared", 5);
    a.campaign_id = 1;
    a.campaign_cap = quota{2, -1};
    check b = invite("acc_shared", 5);
    b.campaign_id = 2;
    EXPECT_TRUE(lim.take(a).allowed);
    EXPECT_TRUE(lim.take(a).allowed);
    verdict capped = lim.take(a);
    EXPECT_FALSE(capped.allowed);
    EXPECT_EQ(capped.why, reason::campaign_quota);
    EXPECT_EQ(capped.retry_after, today.left);
    EXPECT_TRUE(lim.take(b).allowed);
    EXPECT_TRUE(lim.take(b).allowed);
    verdict b3 = lim.take(b);
    EXPECT_TRUE(b3.allowed);
    EXPECT_EQ(b3.used_today, 5);
    verdict shared = lim.take(b);  // the account's 5 are spent by the two campaigns together
    EXPECT_FALSE(shared.allowed);
    EXPECT_EQ(shared.why, reason::day_quota);
}

TEST_F(LimitsRedis, SeveralCappedCampaignsEachKeepTheirOwnCountOnOneAccount) {
    limiter lim(base());
    auto on = [](std::int64_t campaign, std::int64_t per_day, std::int64_t per_week, std::int64_t day) {
        check c = invite("acc_multi", 100);
        c.campaign_id = campaign;
        c.campaign_cap = quota{per_day, per_week};
        c.day = {day, hours{3}};
        return c;
    };
    int allowed1 = 0, allowed2 = 0, allowed3 = 0;
    for (int i = 0; i < 6; ++i) {  // interleaved: each record is updated in place
        allowed1 += lim.take(on(1, 2, -1, day0)).allowed;
        allowed2 += lim.take(on(2, 3, -1, day0)).allowed;
        allowed3 += lim.take(on(3, 4, -1, day0)).allowed;
    }
    EXPECT_EQ(allowed1, 2);
    EXPECT_EQ(allowed2, 3);
    EXPECT_EQ(allowed3, 4);
    auto st = lim.status("acc_multi", today);
    ASSERT_TRUE(st);
    EXPECT_EQ(st->actions[static_cast<std::size_t>(action::invite)].used_today, 9);
    // A campaign's rolling-week cap: 3 over day0 and day0 + 1, free again when day0 leaves.
    EXPECT_TRUE(lim.take(on(4, -1, 3, day0)).allowed);
    EXPECT_TRUE(lim.take(on(4, -1, 3, day0)).allowed);
    EXPECT_TRUE(lim.take(on(4, -1, 3, day0 + 1)).allowed);
    verdict v = lim.take(on(4, -1, 3, day0 + 1));
    EXPECT_FALSE(v.allowed);
    EXPECT_EQ(v.why, reason::campaign_quota);
    EXPECT_EQ(v.retry_after, hours{3} + hours{24 * 5});  // day0's 2 leave on day0 + 7
    EXPECT_FALSE(lim.take(on(4, -1, 3, day0 + 6)).allowed);
    EXPECT_TRUE(lim.take(on(4, -1, 3, day0 + 7)).allowed);
}

TEST_F(LimitsRedis, KeyRequestRateIsAGcraBucketSharedByAllAccounts) {
    settings s = base();
    s.key_requests_per_s = 10;  // one per 100 ms
    s.key_burst = 3;
    limiter lim(s);
    check c;
    c.what = action::check_invitation;
    c.day = today;
    for (int i = 0; i < 3; ++i) {
        c.account_id = "acc_rate_" + std::to_string(i);
        EXPECT_TRUE(lim.take(c).allowed) << i;
    }
    c.account_id = "acc_rate_other";
    verdict v = lim.take(c);
    EXPECT_FALSE(v.allowed);
    EXPECT_EQ(v.why, reason::rate);
    EXPECT_GT(v.retry_after, 0ms);
    EXPECT_LE(v.retry_after, 100ms);
    std::this_thread::sleep_for(v.retry_after + 5ms);
    EXPECT_TRUE(lim.take(c).allowed);
}

// A call of two requests (a follow-up's read and send) takes two places of the key's rate: with a
// burst of 2 it needs the whole burst free, leaves none, and its unsend gives both back.
TEST_F(LimitsRedis, ACallOfTwoRequestsTakesTwoPlacesOfTheKeysRate) {
    settings s = base();
    s.key_requests_per_s = 1;  // one per second: nothing refills during the test's steps
    s.key_burst = 2;
    limiter lim(s);
    check one;
    one.what = action::check_invitation;
    one.day = today;
    one.account_id = "acc_places_one";
    check two = one;
    two.account_id = "acc_places_two";
    two.key_places = 2;
    ASSERT_TRUE(lim.take(one).allowed);
    const verdict held = lim.take(two);
    EXPECT_FALSE(held.allowed) << "one place of the burst left, two asked for";
    EXPECT_EQ(held.why, reason::rate);
    EXPECT_TRUE(lim.unsend(one, false));
    ASSERT_TRUE(lim.take(two).allowed) << "the whole burst free";
    EXPECT_EQ(lim.take(one).why, reason::rate) << "the two-place take left no place";
    EXPECT_TRUE(lim.unsend(two, false));
    EXPECT_TRUE(lim.take(one).allowed) << "the unsend gave both places back";
    EXPECT_TRUE(lim.take(one).allowed);
    EXPECT_EQ(lim.take(one).why, reason::rate);
    check bad = two;
    bad.key_places = 9;
    EXPECT_EQ(lim.take(bad).why, reason::bad_input);
}

TEST_F(LimitsRedis, DeniedTakesNothing) {
    settings s = base();
    s.key_requests_per_s = 1000;
    s.key_burst = 1000;
    limiter lim(s);
    check c = invite("acc_nothing", 1);
    ASSERT_TRUE(lim.take(c).allowed);
    for (int i = 0; i < 5; ++i) {
        EXPECT_EQ(lim.take(c).why, reason::day_quota);
    }
    auto st = lim.status("acc_nothing", today);
    ASSERT_TRUE(st);
    EXPECT_EQ(st->actions[static_cast<std::size_t>(action::invite)].used_today, 1);
    // The rate bucket was not charged by the denials: the GCRA state advanced once (1 ms).
    auto key = record(key_scope_key(lim.tag()));
    ASSERT_EQ(key.size(), 5u);  // tat, until, streak, streak_until, refreshed
    auto time = cmd({"TIME"});
    double now_us = std::stod(time->element[0]->str) * 1e6 + std::stod(time->element[1]->str);
    EXPECT_LT(key[0] - now_us, 1000.0 + 1.0);
}

TEST_F(LimitsRedis, CooldownWithRetryAfterHoldsTheScopeForEveryWorker) {
    settings s = base();
    limiter lim(s);
    limiter other_worker(s);  // same API key: another process would see the same
    check c = invite("acc_cd", 100);
    ASSERT_TRUE(lim.take(c).allowed);
    auto cd = lim.rate_limited(c, scope::account_action, 1500ms);
    ASSERT_TRUE(cd);
    EXPECT_EQ(*cd, 1500ms);
    verdict v = other_worker.take(c);
    EXPECT_FALSE(v.allowed);
    EXPECT_EQ(v.why, reason::cooldown_account);
    EXPECT_GT(v.retry_after, 1300ms);
    EXPECT_LE(v.retry_after, 1500ms);
    EXPECT_TRUE(v.account_streak);
    // Other accounts and other actions of this account are not held.
    EXPECT_TRUE(other_worker.take(invite("acc_cd_2", 100)).allowed);
    check visit = c;
    visit.what = action::visit;
    EXPECT_TRUE(other_worker.take(visit).allowed);
    // The key scope holds every account.
    auto kcd = lim.rate_limited(c, scope::key, 800ms);
    ASSERT_TRUE(kcd);
    verdict k = other_worker.take(invite("acc_cd_3", 100));
    EXPECT_FALSE(k.allowed);
    EXPECT_EQ(k.why, reason::cooldown_key);
    EXPECT_LE(k.retry_after, 800ms);
    EXPECT_TRUE(k.key_streak);
    // After the cooldown it passes again, by the verdict's own time.
    verdict again = other_worker.take(c);
    std::this_thread::sleep_for(again.retry_after + 10ms);
    EXPECT_TRUE(other_worker.take(c).allowed);
    auto st = lim.status("acc_cd", today);
    ASSERT_TRUE(st);
    EXPECT_FALSE(st->key_cooldown_until);
}

TEST_F(LimitsRedis, BackoffWithoutRetryAfterGrowsWithTheStreakAndResetsAfterSuccess) {
    settings s = base();
    s.backoff_base_ms = 100;
    s.backoff_cap_ms = 10'000'000;
    s.backoff_min_ms = 0;
    limiter lim(s);
    std::int64_t largest_late = 0;
    for (int n = 0; n <= 12; ++n) {
        check c = invite("acc_streak_" + std::to_string(n), 100);
        for (int i = 0; i < n; ++i) {  // n hits with Retry-After 0: a streak of n, no wait
            ASSERT_EQ(lim.rate_limited(c, scope::account_action, 0ms), 0ms);
        }
        auto cd = lim.rate_limited(c, scope::account_action, std::nullopt);
        ASSERT_TRUE(cd);
        EXPECT_LE(cd->count(), 100LL << n) << "streak " << n;
        if (n >= 8) {
            largest_late = std::max<std::int64_t>(largest_late, cd->count());
        }
        auto st = lim.status(c.account_id, today);
        ASSERT_TRUE(st);
        EXPECT_EQ(st->actions[static_cast<std::size_t>(action::invite)].streak, n + 1);
    }
    // Five draws with ceilings of 25.6 s .. 409.6 s all under 100 ms: about 1e-12.
    EXPECT_GT(largest_late, 100);

    // Reset: a take sees the streak, the success clears it, the next hit starts from 1 again.
    check c = invite("acc_reset", 100);
    ASSERT_EQ(lim.rate_limited(c, scope::account_action, 0ms), 0ms);
    ASSERT_EQ(lim.rate_limited(c, scope::account_action, 0ms), 0ms);
    verdict v = lim.take(c);
    ASSERT_TRUE(v.allowed);
    EXPECT_TRUE(v.account_streak);
    EXPECT_FALSE(v.key_streak);
    lim.succeeded(c, v);
    verdict after = lim.take(c);
    EXPECT_FALSE(after.account_streak);
    auto st = lim.status("acc_reset", today);
    ASSERT_TRUE(st);
    EXPECT_EQ(st->actions[static_cast<std::size_t>(action::invite)].streak, 0);
    auto cd = lim.rate_limited(c, scope::account_action, std::nullopt);
    ASSERT_TRUE(cd);
    EXPECT_LE(*cd, 100ms);  // streak 0 again: base

    // The key scope's streak is reset the same way.
    check k = invite("acc_reset_key", 100);
    ASSERT_EQ(lim.rate_limited(k, scope::key, 0ms), 0ms);
    verdict kv = lim.take(k);
    ASSERT_TRUE(kv.allowed);
    EXPECT_TRUE(kv.key_streak);
    lim.succeeded(k, kv);
    EXPECT_FALSE(lim.take(k).key_streak);
}

// The rest of a batch answered RATE_LIMITED after the first hit set the cooldown were let
// through before it: the same episode. They keep the cooldown drawn by the first hit and the
// streak at 1 (else 20 calls in flight meant a backoff of base * 2^20, capped at 10 minutes).
TEST_F(LimitsRedis, HitsDuringACooldownAreOneEpisode) {
    settings s = base();
    s.backoff_base_ms = 2'000;
    s.backoff_min_ms = 1'000;
    limiter lim(s);
    check c = invite("acc_wave", 100);
    auto first = lim.rate_limited(c, scope::account_action, std::nullopt);
    ASSERT_TRUE(first);
    EXPECT_GE(*first, 1000ms);
    EXPECT_LE(*first, 2000ms);
    for (int i = 0; i < 19; ++i) {
        auto later = lim.rate_limited(c, scope::account_action, std::nullopt);
        ASSERT_TRUE(later);
        EXPECT_LE(*later, *first);  // what is left of the first one, never longer
    }
    auto st = lim.status(c.account_id, today);
    ASSERT_TRUE(st);
    EXPECT_EQ(st->actions[static_cast<std::size_t>(action::invite)].streak, 1);
    // A Retry-After that ends later still extends it.
    auto extended = lim.rate_limited(c, scope::account_action, 5000ms);
    ASSERT_TRUE(extended);
    EXPECT_EQ(*extended, 5000ms);
}

TEST_F(LimitsRedis, RefundGivesBackThePlaceOfACallWithoutEffect) {
    limiter lim(base());
    check c = invite("acc_refund", 2);
    c.campaign_id = 7;
    c.campaign_cap = quota{1, -1};
    ASSERT_TRUE(lim.take(c).allowed);
    EXPECT_EQ(lim.take(c).why, reason::campaign_quota);
    EXPECT_TRUE(lim.refund(c));
    EXPECT_TRUE(lim.take(c).allowed);
    EXPECT_TRUE(lim.refund(c));
    EXPECT_TRUE(lim.refund(c));
    EXPECT_TRUE(lim.refund(c));  // never below zero
    auto st = lim.status("acc_refund", today);
    ASSERT_TRUE(st);
    EXPECT_EQ(st->actions[static_cast<std::size_t>(action::invite)].used_today, 0);
}

// A take whose call is not sent after all (the ledger refused it, or its cycle rolled back) gives
// back everything: its counters, its place in the key's request rate, and its pacing gap. A trial
// saw a campaign out of budget slow the whole key: each refused lead spent a rate place. A call
// that was sent keeps its rate place and gap when its counters are refunded.
TEST_F(LimitsRedis, ATakeNotSentGivesBackItsRatePlaceAndItsPacingGap) {
    settings rated = base();
    rated.key_requests_per_s = 1;
    rated.key_burst = 1;
    limiter lim(rated);
    check c = invite("acc_unsent_rate", 100);
    ASSERT_TRUE(lim.take(c).allowed);
    EXPECT_EQ(lim.take(c).why, reason::rate);
    EXPECT_TRUE(lim.unsend(c, false));
    ASSERT_TRUE(lim.take(c).allowed) << "the rate place came back";
    EXPECT_EQ(lim.take(c).why, reason::rate);
    EXPECT_TRUE(lim.refund(c));
    EXPECT_EQ(lim.take(c).why, reason::rate) << "a sent call's refund keeps its rate place";

    limiter paced_lim(base());
    check p = invite("acc_unsent_paced", 10);
    p.working_window = 1000s;  // a gap of 100 s
    ASSERT_TRUE(paced_lim.take(p).allowed);
    EXPECT_EQ(paced_lim.take(p).why, reason::pacing);
    EXPECT_TRUE(paced_lim.unsend(p, true));
    ASSERT_TRUE(paced_lim.take(p).allowed) << "the pacing gap came back";
    // An unpaced take (a worker without pacing) does not wait for the gap, and its own unsend does
    // not give back the paced take's gap.
    check u = p;
    u.working_window = 0s;
    ASSERT_TRUE(paced_lim.take(u).allowed);
    EXPECT_TRUE(paced_lim.unsend(u, false));
    EXPECT_EQ(paced_lim.take(p).why, reason::pacing);
    auto st = paced_lim.status("acc_unsent_paced", today);
    ASSERT_TRUE(st);
    EXPECT_EQ(st->actions[static_cast<std::size_t>(action::invite)].used_today, 1);
}

TEST_F(LimitsRedis, StatusShowsUsedLeftAndCooldownsPerAction) {
    limiter lim(base());
    check c = invite("acc_status", 10, 30);
    c.working_window = 1000s;
    for (int i = 0; i < 1; ++i) {
        ASSERT_TRUE(lim.take(c).allowed);
    }
    check send = c;
    send.what = action::send;
    send.account_quota.reset();  // the default: 150 a day
    send.working_window = 0s;
    for (int i = 0; i < 4; ++i) {
        ASSERT_TRUE(lim.take(send).allowed);
    }
    ASSERT_TRUE(lim.rate_limited(send, scope::account_action, 60s));
    std::array<std::optional<quota>, action_count> quotas{};
    quotas[static_cast<std::size_t>(action::invite)] = quota{10, 30};
    auto before = system_clock::now();
    auto st = lim.status("acc_status", today, quotas);
    ASSERT_TRUE(st);
    ASSERT_EQ(st->actions.size(), action_count);
    const auto& inv = st->actions[static_cast<std::size_t>(action::invite)];
    EXPECT_EQ(inv.used_today, 1);
    EXPECT_EQ(inv.left_today, 9);
    EXPECT_EQ(inv.left_week, 29);
    ASSERT_TRUE(inv.pace_until);  // 1000 s / 10
    EXPECT_GT(*inv.pace_until, before + 90s);
    EXPECT_FALSE(inv.cooldown_until);
    const auto& snd = st->actions[static_cast<std::size_t>(action::send)];
    EXPECT_EQ(snd.used_today, 4);
    EXPECT_EQ(snd.limit_today, 150);
    EXPECT_EQ(snd.left_today, 146);
    EXPECT_EQ(snd.limit_week, -1);
    EXPECT_EQ(snd.left_week, -1);
    ASSERT_TRUE(snd.cooldown_until);
    EXPECT_GT(*snd.cooldown_until, before + 55s);
    EXPECT_LE(*snd.cooldown_until, before + 61s);
    EXPECT_EQ(snd.streak, 1);
    const auto& chk = st->actions[static_cast<std::size_t>(action::check_invitation)];
    EXPECT_EQ(chk.used_today, 0);
    EXPECT_EQ(chk.left_today, -1);
    EXPECT_FALSE(lim.status("", today));
}

TEST_F(LimitsRedis, EveryKeyExpiresWhenIdle) {
    settings s = base();
    s.key_requests_per_s = 100;
    limiter lim(s);
    check c = invite("acc_ttl", 10);
    c.campaign_id = 3;
    c.campaign_cap = quota{5, -1};
    ASSERT_TRUE(lim.take(c).allowed);
    const std::string k = key_scope_key(lim.tag());
    const std::string a = account_key(lim.tag(), "acc_ttl", action::invite);
    EXPECT_GT(pttl(k), 0);
    EXPECT_LE(pttl(k), s.idle_ttl_ms);
    EXPECT_GT(pttl(a), s.counters_ttl_ms - 60'000);
    EXPECT_LE(pttl(a), s.counters_ttl_ms);
    auto acc = record(a);  // 14 doubles, then campaign 3's record: id and 8 day slots
    ASSERT_EQ(acc.size(), 14u + 9u);
    EXPECT_EQ(acc[13], 1);
    EXPECT_EQ(acc[14], 3);
    EXPECT_EQ(acc[15 + day0 % 8], day0 * 1e9 + 1);
    // A read-only check writes nothing that lacks a TTL either.
    check r;
    r.account_id = "acc_ttl_read";
    r.day = today;
    r.what = action::check_invitation;
    ASSERT_TRUE(lim.take(r).allowed);
    // A cooldown longer than the idle TTL keeps its key alive past the cooldown.
    ASSERT_TRUE(lim.rate_limited(c, scope::key, milliseconds(2 * s.idle_ttl_ms)));
    EXPECT_GT(pttl(k), 3 * s.idle_ttl_ms - 60'000);
    auto keys = cmd({"KEYS", "orch:{" + lim.tag() + "}:*"});
    ASSERT_EQ(keys->type, REDIS_REPLY_ARRAY);
    // The key scope, two account hashes, the cooldown index and the state's marker.
    EXPECT_EQ(keys->elements, 5u);
    for (std::size_t i = 0; i < keys->elements; ++i) {
        std::string key(keys->element[i]->str, keys->element[i]->len);
        EXPECT_GT(pttl(key), 0) << key;
    }
}

// A take sets a record's TTL again only when due (a SET with PX costs Redis more): the key
// scope's once half its idle TTL has passed since it was last set, the account record's on its
// first take of a day. Neither ever expires while in use.
TEST_F(LimitsRedis, TakesRefreshTheTtlsOnlyWhenDue) {
    settings s = base();
    s.key_requests_per_s = 1000;
    s.key_burst = 1000;
    s.idle_ttl_ms = 1000;  // the smallest allowed: half of it passes within the test
    limiter lim(s);
    check c = invite("acc_refresh", 100);
    const std::string k = key_scope_key(lim.tag());
    const std::string a = account_key(lim.tag(), "acc_refresh", action::invite);
    ASSERT_TRUE(lim.take(c).allowed);
    const double first_refresh = record(k).at(4);
    EXPECT_GT(first_refresh, 0);
    // The account record's TTL is kept by later takes of the same day: shorten it by hand and
    // see it stay shortened.
    ASSERT_EQ(cmd({"PEXPIRE", a, "100000"})->integer, 1);
    ASSERT_TRUE(lim.take(c).allowed);
    EXPECT_LE(pttl(a), 100'000);
    EXPECT_GT(pttl(a), 90'000);
    EXPECT_EQ(record(k).at(4), first_refresh);  // within half the idle TTL: kept
    // The first take of the next day sets it again.
    check tomorrow = c;
    tomorrow.day = {day0 + 1, hours{5}};
    ASSERT_TRUE(lim.take(tomorrow).allowed);
    EXPECT_GT(pttl(a), s.counters_ttl_ms - 60'000);
    // The key scope, taken every 100 ms for 2 s (twice its idle TTL), never expires and is set
    // again after half of it.
    bool refreshed = false;
    for (int i = 0; i < 20; ++i) {
        std::this_thread::sleep_for(100ms);
        ASSERT_TRUE(lim.take(tomorrow).allowed) << i;
        auto key = record(k);
        ASSERT_EQ(key.size(), 5u) << "the key scope's record expired at take " << i;
        refreshed = refreshed || key[4] > first_refresh;
        EXPECT_GT(pttl(k), 0);
        EXPECT_LE(pttl(k), s.idle_ttl_ms);
    }
    EXPECT_TRUE(refreshed);
}

// A key scope record of the earlier layout (4 doubles, no refreshed time) is read as it was and
// rewritten in the current one.
TEST_F(LimitsRedis, KeyRecordsOfTheEarlierLayoutAreRead) {
    settings s = base();
    s.key_requests_per_s = 1000;
    s.key_burst = 1;
    limiter lim(s);
    const std::string k = key_scope_key(lim.tag());
    auto time = cmd({"TIME"});
    const double now_us = std::stod(time->element[0]->str) * 1e6 + std::stod(time->element[1]->str);
    // tat 10 s ahead: the rate bucket denies with a wait of about 10 s.
    auto set = cmd({"EVAL", "return redis.call('SET', KEYS[1], struct.pack('<dddd', ARGV[1], 0, 0, 0), 'PX', 60000)", "1", k,
                    std::to_string(static_cast<long long>(now_us + 10e6))});
    ASSERT_TRUE(set && set->type == REDIS_REPLY_STATUS);
    ASSERT_EQ(cmd({"STRLEN", k})->integer, 32);
    verdict v = lim.take(invite("acc_old_layout", 100));
    EXPECT_FALSE(v.allowed);
    EXPECT_EQ(v.why, reason::rate);
    EXPECT_GT(v.retry_after, 9s);
    // A cooldown rewrites it in the current layout.
    ASSERT_TRUE(lim.rate_limited(invite("acc_old_layout", 100), scope::key, 5ms));
    EXPECT_EQ(cmd({"STRLEN", k})->integer, 40);
    EXPECT_EQ(record(k).at(0), static_cast<double>(static_cast<long long>(now_us + 10e6)));
}

TEST_F(LimitsRedis, DaySlotsAreReusedAfterAWeekAndIdleCampaignsAreDropped) {
    limiter lim(base());
    check c = invite("acc_slots", 100, 1000);
    c.campaign_id = 4;
    c.campaign_cap = quota{100, 1000};
    for (int i = 0; i < 3; ++i) {
        ASSERT_TRUE(lim.take(c).allowed);
    }
    // day0 + 8 uses day0's slot: its 3 calls must not count as that day's, nor in its week.
    c.day = {day0 + 8, hours{5}};
    verdict v = lim.take(c);
    ASSERT_TRUE(v.allowed);
    EXPECT_EQ(v.used_today, 1);
    EXPECT_EQ(v.used_week, 1);
    // Campaign 4 has no call in the week of day0 + 16; another campaign's take drops its record.
    c.day = {day0 + 16, hours{5}};
    c.campaign_id = 5;
    ASSERT_TRUE(lim.take(c).allowed);
    auto acc = record(account_key(lim.tag(), "acc_slots", action::invite));
    ASSERT_EQ(acc.size(), 14u + 9u);
    EXPECT_EQ(acc[13], 1);   // one campaign record
    EXPECT_EQ(acc[14], 5);   // campaign 5's
    // A campaign cap of 0 denies even before the campaign's first call.
    c.campaign_id = 6;
    c.campaign_cap = quota{0, -1};
    EXPECT_EQ(lim.take(c).why, reason::campaign_quota);
}

// The operators' line: tickets in the order asked, the ones ahead counted while their holders
// keep saying they wait, a holder that stops saying so dropped after `alive`, and a ticket that
// leaves no longer counted.
TEST_F(LimitsRedis, TheOperatorsLineServesTicketsInOrderAndDropsSilentOnes) {
    limiter lim(base());
    const std::chrono::milliseconds alive{400};
    auto first = lim.line(0, alive);
    auto second = lim.line(0, alive);
    auto third = lim.line(0, alive);
    ASSERT_TRUE(first && second && third);
    EXPECT_EQ(second->ticket, first->ticket + 1);
    EXPECT_EQ(third->ticket, first->ticket + 2);
    EXPECT_EQ(first->ahead, 0);
    EXPECT_EQ(second->ahead, 1);
    EXPECT_EQ(third->ahead, 2);

    // The first leaves (it took its place): the second is at the front.
    ASSERT_TRUE(lim.line(first->ticket, alive, true));
    EXPECT_EQ(lim.line(second->ticket, alive)->ahead, 0);
    EXPECT_EQ(lim.line(third->ticket, alive)->ahead, 1);

    // The second goes silent (killed while it waited); the third keeps saying it waits, and is
    // at the front once the second's ticket is older than `alive`.
    const auto silent_since = std::chrono::steady_clock::now();
    std::int64_t ahead = 1;
    while (ahead > 0 && std::chrono::steady_clock::now() - silent_since < std::chrono::seconds(5)) {
        std::this_thread::sleep_for(std::chrono::milliseconds(50));
        ahead = lim.line(third->ticket, alive)->ahead;
    }
    EXPECT_EQ(ahead, 0);
    EXPECT_GE(std::chrono::steady_clock::now() - silent_since, alive);
    // The silent one speaks again (a stopped process resumed): it is back at its place.
    EXPECT_EQ(lim.line(second->ticket, alive)->ahead, 0);
    EXPECT_EQ(lim.line(third->ticket, alive)->ahead, 1);
    ASSERT_TRUE(lim.line(second->ticket, alive, true));

    // Every key of the line expires (an emptied set or hash is gone; the counter stays).
    ASSERT_TRUE(lim.line(third->ticket, alive, true));
    EXPECT_GT(pttl(key_scope_key(lim.tag()) + ":line:last"), 0);
    for (const char* suffix : {":line", ":line:seen"}) {
        const std::string key = key_scope_key(lim.tag()) + suffix;
        EXPECT_TRUE(cmd({"EXISTS", key})->integer == 0 || pttl(key) > 0) << key;
    }
}

TEST_F(LimitsRedis, ScriptsAreReloadedAfterScriptFlush) {
    limiter lim(base());
    check c = invite("acc_noscript", 100);
    ASSERT_TRUE(lim.take(c).allowed);
    ASSERT_EQ(cmd({"SCRIPT", "FLUSH"})->type, REDIS_REPLY_STATUS);
    verdict v = lim.take(c);  // NOSCRIPT -> SCRIPT LOAD -> EVALSHA, invisible to the caller
    EXPECT_TRUE(v.allowed);
    EXPECT_EQ(v.used_today, 2);
    EXPECT_FALSE(lim.unavailable());
    ASSERT_EQ(cmd({"SCRIPT", "FLUSH"})->type, REDIS_REPLY_STATUS);
    EXPECT_TRUE(lim.rate_limited(c, scope::account_action, 10ms));
    ASSERT_EQ(cmd({"SCRIPT", "FLUSH"})->type, REDIS_REPLY_STATUS);
    EXPECT_TRUE(lim.status("acc_noscript", today));
}

TEST_F(LimitsRedis, BadChecksAreRefusedClearly) {
    limiter lim(base());
    check c = invite("", 10);
    verdict v = lim.take(c);
    EXPECT_FALSE(v.allowed);
    EXPECT_EQ(v.why, reason::bad_input);
    EXPECT_GT(v.retry_after, 0ms);
    c = invite("acc_bad", 10);
    c.day.left = 0ms;
    EXPECT_EQ(lim.take(c).why, reason::bad_input);
    c.day = {3, hours{1}};
    EXPECT_EQ(lim.take(c).why, reason::bad_input);
    c.day = today;
    c.day.left = hours{30};
    EXPECT_EQ(lim.take(c).why, reason::bad_input);
    EXPECT_FALSE(lim.refund(invite("", 1)));
    EXPECT_FALSE(lim.rate_limited(invite("", 1), scope::account_action, std::nullopt));
}

// ---- take_many: a batch of checks in one pipelined round trip ----

void expect_same_verdict(const verdict& a, const verdict& b, std::size_t i) {
    EXPECT_EQ(a.allowed, b.allowed) << "check " << i;
    EXPECT_EQ(a.why, b.why) << "check " << i;
    EXPECT_EQ(a.used_today, b.used_today) << "check " << i;
    EXPECT_EQ(a.used_week, b.used_week) << "check " << i;
    EXPECT_EQ(a.key_streak, b.key_streak) << "check " << i;
    EXPECT_EQ(a.account_streak, b.account_streak) << "check " << i;
}

TEST_F(LimitsRedis, TakeManyOnAQuotaBoundaryEqualsSequentialTakes) {
    limiter lim(base());
    // Quota 5, a batch of 8 on the same account: evaluated in order, 5 allowed then 3 denied.
    std::vector<check> batch(8, invite("acc_many", 5));
    std::vector<verdict> got = lim.take_many(batch);
    ASSERT_EQ(got.size(), 8u);
    for (std::size_t i = 0; i < 5; ++i) {
        EXPECT_TRUE(got[i].allowed) << i;
        EXPECT_EQ(got[i].why, reason::none) << i;
        EXPECT_EQ(got[i].used_today, static_cast<std::int64_t>(i + 1)) << i;
    }
    for (std::size_t i = 5; i < 8; ++i) {
        EXPECT_FALSE(got[i].allowed) << i;
        EXPECT_EQ(got[i].why, reason::day_quota) << i;
        EXPECT_EQ(got[i].retry_after, today.left) << i;
        EXPECT_EQ(got[i].used_today, 5) << i;
    }
    // The same 8 checks as sequential take() calls on a fresh account give the same verdicts.
    for (std::size_t i = 0; i < batch.size(); ++i) {
        expect_same_verdict(got[i], lim.take(invite("acc_seq", 5)), i);
    }
    auto st = lim.status("acc_many", today);
    ASSERT_TRUE(st);
    EXPECT_EQ(st->actions[static_cast<std::size_t>(action::invite)].used_today, 5);
}

TEST_F(LimitsRedis, TakeManyMixesAccountsActionsAndCampaignCapsInOrder) {
    limiter lim(base());
    auto batch_of = [](const std::string& prefix) {
        std::vector<check> b;
        for (int i = 0; i < 24; ++i) {
            check c = invite(prefix + std::to_string(i % 3), 4, 6);
            if (i % 4 == 3) {
                c.what = action::send;
                c.account_quota = quota{1, -1};
            }
            if (i % 2 == 0) {
                c.campaign_id = 7;
                c.campaign_cap = quota{2, -1};
            }
            b.push_back(c);
        }
        return b;
    };
    std::vector<check> batch = batch_of("acc_mix_batch_");
    std::vector<check> seq = batch_of("acc_mix_seq_");
    std::vector<verdict> got = lim.take_many(batch);
    ASSERT_EQ(got.size(), batch.size());
    int allowed = 0;
    for (std::size_t i = 0; i < seq.size(); ++i) {
        expect_same_verdict(got[i], lim.take(seq[i]), i);
        allowed += got[i].allowed ? 1 : 0;
    }
    EXPECT_GT(allowed, 0);
    EXPECT_LT(allowed, 24);  // caps and quotas denied some: the comparison covered both kinds
}

TEST_F(LimitsRedis, TakeManyFromManyThreadsNeverExceedsTheQuota) {
    limiter lim(base());
    constexpr int threads = 8, batches = 5, batch_size = 10, per_day = 120;
    std::atomic<int> allowed{0}, wrong{0};
    std::vector<std::thread> pool;
    for (int t = 0; t < threads; ++t) {
        pool.emplace_back([&] {
            std::vector<check> batch(batch_size, invite("acc_many_race", per_day));
            for (int i = 0; i < batches; ++i) {
                for (const verdict& v : lim.take_many(batch)) {
                    if (v.allowed) {
                        ++allowed;
                    } else if (v.why != reason::day_quota) {
                        ++wrong;
                    }
                }
            }
        });
    }
    for (auto& th : pool) {
        th.join();
    }
    EXPECT_EQ(allowed.load(), per_day);
    EXPECT_EQ(wrong.load(), 0);
}

TEST_F(LimitsRedis, TakeManyRefusesBadChecksAloneAndTakesTheOthers) {
    limiter lim(base());
    std::vector<check> batch{invite("acc_many_bad", 10), invite("", 10), invite("acc_many_bad", 10)};
    batch.push_back(invite("acc_many_bad", 10));
    batch.back().day.left = 0ms;
    std::vector<verdict> got = lim.take_many(batch);
    ASSERT_EQ(got.size(), 4u);
    EXPECT_TRUE(got[0].allowed);
    EXPECT_EQ(got[0].used_today, 1);
    EXPECT_FALSE(got[1].allowed);
    EXPECT_EQ(got[1].why, reason::bad_input);
    EXPECT_GT(got[1].retry_after, 0ms);
    EXPECT_TRUE(got[2].allowed);
    EXPECT_EQ(got[2].used_today, 2);
    EXPECT_EQ(got[3].why, reason::bad_input);
    EXPECT_TRUE(lim.take_many({}).empty());
    EXPECT_FALSE(lim.unavailable());
}

TEST_F(LimitsRedis, TakeManyReloadsTheScriptAfterScriptFlush) {
    limiter lim(base());
    ASSERT_TRUE(lim.take(invite("acc_many_noscript", 6)).allowed);
    ASSERT_EQ(cmd({"SCRIPT", "FLUSH"})->type, REDIS_REPLY_STATUS);
    // Every EVALSHA of the pipeline gets NOSCRIPT; all are sent again, in order, after SCRIPT LOAD.
    std::vector<check> batch(7, invite("acc_many_noscript", 6));
    std::vector<verdict> got = lim.take_many(batch);
    ASSERT_EQ(got.size(), 7u);
    for (std::size_t i = 0; i < 5; ++i) {
        EXPECT_TRUE(got[i].allowed) << i;
        EXPECT_EQ(got[i].used_today, static_cast<std::int64_t>(i + 2)) << i;
    }
    EXPECT_EQ(got[5].why, reason::day_quota);
    EXPECT_EQ(got[6].why, reason::day_quota);
    EXPECT_FALSE(lim.unavailable());
}

// ---- Outage: a redis-server of this test's own, stopped and restarted ----

int free_port() {
    int fd = ::socket(AF_INET, SOCK_STREAM, 0);
    sockaddr_in addr{};
    addr.sin_family = AF_INET;
    addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    addr.sin_port = 0;
    ::bind(fd, reinterpret_cast<sockaddr*>(&addr), sizeof addr);
    socklen_t len = sizeof addr;
    ::getsockname(fd, reinterpret_cast<sockaddr*>(&addr), &len);
    ::close(fd);
    return ntohs(addr.sin_port);
}

class own_redis {
public:
    explicit own_redis(int port) : port_(port) {}
    ~own_redis() { stop(); }
    bool start() {
        std::string p = std::to_string(port_);
        std::vector<std::string> args{"redis-server", "--bind", "127.0.0.1", "--port", p, "--save", "",
                                      "--appendonly", "no", "--loglevel", "warning", "--logfile", "/dev/null"};
        std::vector<char*> argv;
        for (auto& a : args) {
            argv.push_back(a.data());
        }
        argv.push_back(nullptr);
        if (posix_spawnp(&pid_, "redis-server", nullptr, nullptr, argv.data(), environ) != 0) {
            pid_ = 0;
            return false;
        }
        return eventually([&] {
            redisContext* c = redisConnect("127.0.0.1", port_);
            bool ok = c != nullptr && c->err == 0;
            if (ok) {
                reply_ptr r(static_cast<redisReply*>(redisCommand(c, "PING")));
                ok = r && r->type == REDIS_REPLY_STATUS;
            }
            if (c) {
                redisFree(c);
            }
            return ok;
        });
    }
    void stop() {
        if (pid_ > 0) {
            ::kill(pid_, SIGKILL);
            ::waitpid(pid_, nullptr, 0);
            pid_ = 0;
        }
    }

private:
    int port_;
    pid_t pid_ = 0;
};

// Settings of a limiter on a Redis of the test's own (on `port`): no key rate bucket and no
// ramp-up, so only Redis's state denies a take; after a failure it reconnects every `reconnect_ms`.
settings own_redis_settings(int port, std::int64_t reconnect_ms) {
    settings s;
    s.redis_url = "redis://127.0.0.1:" + std::to_string(port) + "/0";
    s.api_key = random_key();
    s.key_requests_per_s = 0;
    s.reconnect_interval_ms = reconnect_ms;
    s.actions[static_cast<std::size_t>(action::invite)].ramp = {};
    return s;
}

check invite_of(const std::string& account) {
    check c;
    c.account_id = account;
    c.what = action::invite;
    c.day = today;
    return c;
}

TEST(LimitsOutage, ClosedPortFailsClosedAndFast) {
    settings s;
    s.redis_url = "redis://127.0.0.1:" + std::to_string(free_port()) + "/0";
    s.api_key = random_key();
    s.reconnect_interval_ms = 60'000;
    s.unavailable_retry_ms = 3'000;
    limiter lim(s);
    check c;
    c.account_id = "acc_down";
    c.what = action::invite;
    c.day = today;
    verdict v = lim.take(c);
    EXPECT_FALSE(v.allowed);
    EXPECT_EQ(v.why, reason::unavailable);
    EXPECT_EQ(v.retry_after, 3s);
    EXPECT_TRUE(lim.unavailable());
    auto start = steady_clock::now();
    for (int i = 0; i < 1000; ++i) {  // no connection attempt per call while it is down
        ASSERT_EQ(lim.take(c).why, reason::unavailable);
    }
    EXPECT_LT(steady_clock::now() - start, 500ms);
    EXPECT_FALSE(lim.rate_limited(c, scope::key, std::nullopt));
    EXPECT_FALSE(lim.refund(c));
    EXPECT_FALSE(lim.status("acc_down", today));
    // A batch: every verdict unavailable (a bad check stays bad_input), no connection attempt.
    std::vector<check> batch(50, c);
    batch[7].account_id.clear();
    start = steady_clock::now();
    std::vector<verdict> got = lim.take_many(batch);
    EXPECT_LT(steady_clock::now() - start, 100ms);
    ASSERT_EQ(got.size(), 50u);
    for (std::size_t i = 0; i < got.size(); ++i) {
        EXPECT_FALSE(got[i].allowed) << i;
        EXPECT_EQ(got[i].why, i == 7 ? reason::bad_input : reason::unavailable) << i;
        EXPECT_GT(got[i].retry_after, 0ms) << i;
    }
}

TEST(LimitsOutage, RedisStoppedMidRunFailsClosedThenResumesByItself) {
    if (std::system("command -v redis-server >/dev/null 2>&1") != 0) {
        GTEST_SKIP() << "redis-server is not installed";
    }
    int port = free_port();
    own_redis server(port);
    ASSERT_TRUE(server.start());
    limiter lim(own_redis_settings(port, 50));
    const check c = invite_of("acc_outage");
    ASSERT_TRUE(lim.take(c).allowed);

    server.stop();
    for (int i = 0; i < 20; ++i) {  // many threads would see the same: every call is denied
        verdict v = lim.take(c);
        ASSERT_FALSE(v.allowed);
        ASSERT_EQ(v.why, reason::unavailable);
    }
    EXPECT_TRUE(lim.unavailable());

    std::vector<check> batch(10, c);
    for (const verdict& v : lim.take_many(batch)) {
        ASSERT_FALSE(v.allowed);
        ASSERT_EQ(v.why, reason::unavailable);
    }

    // A new, empty Redis on the same port: the limiter reconnects and reloads its script.
    ASSERT_TRUE(server.start());
    EXPECT_TRUE(eventually([&] { return lim.take(c).allowed; }));
    EXPECT_FALSE(lim.unavailable());
    // A batch goes through again too (the new Redis has counted one take).
    std::vector<verdict> got = lim.take_many(batch);
    ASSERT_EQ(got.size(), 10u);
    for (std::size_t i = 0; i < got.size(); ++i) {
        EXPECT_TRUE(got[i].allowed) << i;
        EXPECT_EQ(got[i].used_today, static_cast<std::int64_t>(i + 2)) << i;
    }
}

TEST(LimitsOutage, RedisStoppedBetweenBatchesFailsTheNextBatchClosed) {
    if (std::system("command -v redis-server >/dev/null 2>&1") != 0) {
        GTEST_SKIP() << "redis-server is not installed";
    }
    int port = free_port();
    own_redis server(port);
    ASSERT_TRUE(server.start());
    limiter lim(own_redis_settings(port, 60'000));
    const check c = invite_of("acc_batch_outage");
    std::vector<check> batch(20, c);
    for (const verdict& v : lim.take_many(batch)) {  // a pooled connection, then the server dies
        ASSERT_TRUE(v.allowed);
    }
    server.stop();
    // The pooled connection is dead: the pipeline fails on it, every check is unavailable.
    std::vector<verdict> got = lim.take_many(batch);
    ASSERT_EQ(got.size(), 20u);
    for (const verdict& v : got) {
        EXPECT_FALSE(v.allowed);
        EXPECT_EQ(v.why, reason::unavailable);
    }
    EXPECT_TRUE(lim.unavailable());
}


// Redis closes a client's connection when it sits idle past Redis's `timeout`, when an operator
// kills it, and when Redis restarts. A pooled connection it closed is replaced when it is next
// taken, without an outage: a take waiting between calls (an operator's command waiting for the
// key's rate, a worker at a quiet key) must not fail closed while Redis answers.
TEST(LimitsOutage, AConnectionRedisClosedWhileIdleIsReplacedWithoutAnOutage) {
    if (std::system("command -v redis-server >/dev/null 2>&1") != 0) {
        GTEST_SKIP() << "redis-server is not installed";
    }
    int port = free_port();
    own_redis server(port);
    ASSERT_TRUE(server.start());
    limiter lim(own_redis_settings(port, 60'000));  // an outage, once started, would deny every take below
    const check c = invite_of("acc_idle_closed");
    ASSERT_TRUE(lim.take(c).allowed);
    std::vector<check> batch(5, c);
    for (const verdict& v : lim.take_many(batch)) {
        ASSERT_TRUE(v.allowed);
    }

    redisContext* admin = redisConnect("127.0.0.1", port);
    ASSERT_TRUE(admin != nullptr && admin->err == 0);
    auto kill_the_limiters_connections = [&] {
        reply_ptr killed(static_cast<redisReply*>(redisCommand(admin, "CLIENT KILL TYPE normal SKIPME yes")));
        ASSERT_TRUE(killed && killed->type == REDIS_REPLY_INTEGER);
        ASSERT_GE(killed->integer, 1);
        // Closed once Redis lists only this connection.
        ASSERT_TRUE(eventually([&] {
            reply_ptr list(static_cast<redisReply*>(redisCommand(admin, "CLIENT LIST TYPE normal")));
            return list && list->type == REDIS_REPLY_STRING &&
                   std::count(list->str, list->str + list->len, '\n') == 1;
        }));
    };

    kill_the_limiters_connections();
    verdict one = lim.take(c);
    EXPECT_TRUE(one.allowed) << to_string(one.why);
    EXPECT_EQ(one.used_today, 7);
    EXPECT_FALSE(lim.unavailable());

    kill_the_limiters_connections();
    std::vector<verdict> got = lim.take_many(batch);
    ASSERT_EQ(got.size(), batch.size());
    for (std::size_t i = 0; i < got.size(); ++i) {
        EXPECT_TRUE(got[i].allowed) << i << ": " << to_string(got[i].why);
        EXPECT_EQ(got[i].used_today, static_cast<std::int64_t>(8 + i)) << i;
    }
    EXPECT_FALSE(lim.unavailable());
    redisFree(admin);

    // A restart closes every connection; the first take after it goes on a new one (and counts
    // in the new, empty Redis).
    server.stop();
    ASSERT_TRUE(server.start());
    verdict after = lim.take(c);
    EXPECT_TRUE(after.allowed) << to_string(after.why);
    EXPECT_EQ(after.used_today, 1);
    EXPECT_FALSE(lim.unavailable());
}

}  // namespace
