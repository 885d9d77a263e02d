// The limits gate's Redis state as an orchestrator_env's commands see it: a limiter on the
// services' Redis (REDIS_URL) under the environment's API key, whose buckets are theirs. For tests
// that set up a sender's use of a quota before running a command.
#pragma once

#include "engine/limits/limits.hpp"
#include "engine/limits/redis_url.hpp"

#include <hiredis/hiredis.h>

#include <chrono>
#include <cstdint>
#include <cstdlib>
#include <memory>
#include <string>

namespace orch::test {

inline std::unique_ptr<orch::limits::limiter> env_limiter(const std::string& api_key = "test-key") {
    orch::limits::settings ls;
    const char* url = std::getenv("REDIS_URL");
    ls.redis_url = url != nullptr ? url : "";
    ls.api_key = api_key;  // orchestrator_env's default
    ls.key_requests_per_s = 0;
    return std::make_unique<orch::limits::limiter>(ls);
}

// One `what` taken today (UTC) by `account` under a day quota of `per_day`.
inline bool take_today(orch::limits::limiter& limiter, const std::string& account, orch::limits::action what,
                       std::int64_t per_day) {
    orch::limits::check taken;
    taken.account_id = account;
    taken.what = what;
    taken.account_quota = orch::limits::quota{per_day, -1};
    taken.day = *orch::limits::day_in_zone(std::chrono::system_clock::now(), "UTC");
    return limiter.take(taken).allowed;
}

// Moves the first day Redis recorded for `account`'s `what` (its ramp-up's start; set by its first
// take) to `days_ago` days before today: the record's fifth double (schema/redis/buckets.lua's
// ACC layout), rewritten in place with its TTL kept. The limiter records only the day of a first
// take, and a test cannot wait weeks for a ramp-up to pass. False when the record is missing.
inline bool move_first_day_back(const std::string& account, orch::limits::action what, std::int64_t days_ago,
                                const std::string& api_key = "test-key") {
    const char* url = std::getenv("REDIS_URL");
    std::string error;
    const auto ep = orch::limits::parse_redis_url(url != nullptr ? url : "", error);
    if (!ep) {
        return false;
    }
    redisContext* c = redisConnect(ep->host.c_str(), ep->port);
    if (c == nullptr || c->err != 0) {
        if (c != nullptr) {
            redisFree(c);
        }
        return false;
    }
    const auto day = orch::limits::day_in_zone(std::chrono::system_clock::now(), "UTC")->day - days_ago;
    const std::string key = orch::limits::account_key(orch::limits::key_tag(api_key), account, what);
    const std::string script =
        "local raw = redis.call('GET', KEYS[1]) if not raw then return 0 end "
        "redis.call('SET', KEYS[1], string.sub(raw, 1, 32) .. struct.pack('<d', tonumber(ARGV[1])) .. "
        "string.sub(raw, 41), 'KEEPTTL') return 1";
    const std::string db = std::to_string(ep->db);
    const std::string first = std::to_string(day);
    const char* select[] = {"SELECT", db.c_str()};
    auto* chosen = static_cast<redisReply*>(redisCommandArgv(c, 2, select, nullptr));
    const bool selected = chosen != nullptr && chosen->type != REDIS_REPLY_ERROR;
    freeReplyObject(chosen);
    const char* argv[] = {"EVAL", script.c_str(), "1", key.c_str(), first.c_str()};
    auto* r = selected ? static_cast<redisReply*>(redisCommandArgv(c, 5, argv, nullptr)) : nullptr;
    const bool moved = r != nullptr && r->type == REDIS_REPLY_INTEGER && r->integer == 1;
    freeReplyObject(r);
    redisFree(c);
    return moved;
}

}  // namespace orch::test
