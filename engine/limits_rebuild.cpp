#include "engine/limits_rebuild.hpp"

#include "engine/account_quotas.hpp"
#include "schema/schema.hpp"

#include <pqxx/pqxx>
#include <spdlog/spdlog.h>

#include <chrono>
#include <map>
#include <unordered_map>
#include <utility>

namespace orch::engine {
namespace {

std::optional<limits::action> counted_action(const std::string& call) {
    if (call == "invite") {
        return limits::action::invite;
    }
    if (call == "send") {
        return limits::action::send;
    }
    if (call == "visit") {
        return limits::action::visit;
    }
    if (call == "withdraw") {
        return limits::action::withdraw;
    }
    return std::nullopt;
}

}  // namespace

std::optional<std::size_t> rebuild_limits_state(const std::string& database_url, limits::limiter& l) {
    using key = std::pair<std::string, limits::action>;
    std::map<key, limits::seed_counts> records;
    try {
        pqxx::connection conn(database_url);
        pqxx::read_transaction tx(conn);
        std::unordered_map<std::string, std::string> zones;
        for (const auto& r : tx.exec(std::string(schema::query("limits/account_zones")))) {
            zones.emplace(r[0].as<std::string>(), r[1].as<std::string>());
        }
        auto day_of = [&](const std::string& account, std::int64_t at_s) -> std::optional<std::int64_t> {
            const auto it = zones.find(account);
            const std::string& zone = quota_time_zone(it == zones.end() ? std::string() : it->second);
            const auto at = std::chrono::system_clock::time_point(std::chrono::seconds(at_s));
            auto d = limits::day_in_zone(at, zone);
            if (!d) {
                d = limits::day_in_zone(at, "UTC");
            }
            return d ? std::optional<std::int64_t>(d->day) : std::nullopt;
        };
        auto record = [&](const std::string& account, limits::action what) -> limits::seed_counts& {
            auto& r = records[{account, what}];
            r.account_id = account;
            r.what = what;
            return r;
        };
        // (account, action) -> day -> calls, and campaign -> day -> calls: each quarter of an hour
        // counted in its day.
        std::map<key, std::map<std::int64_t, std::int64_t>> days;
        std::map<key, std::map<std::pair<std::int64_t, std::int64_t>, std::int64_t>> campaign_days;
        for (const auto& r : tx.exec(std::string(schema::query("limits/calls_counted")))) {
            const auto what = counted_action(r[1].as<std::string>());
            const auto account = r[0].as<std::string>();
            const auto day = day_of(account, r[3].as<std::int64_t>());
            if (!what || !day) {
                continue;
            }
            const key k{account, *what};
            record(account, *what);
            days[k][*day] += r[4].as<std::int64_t>();
            campaign_days[k][{r[2].as<std::int64_t>(), *day}] += r[4].as<std::int64_t>();
        }
        for (const auto& r : tx.exec(std::string(schema::query("limits/first_calls")))) {
            const auto what = counted_action(r[1].as<std::string>());
            const auto account = r[0].as<std::string>();
            const auto day = day_of(account, r[2].as<std::int64_t>());
            if (what && day) {
                record(account, *what).first_day = *day;
            }
        }
        for (auto& [k, r] : records) {
            for (const auto& [day, calls] : days[k]) {
                r.days.emplace_back(day, calls);
            }
            for (const auto& [cd, calls] : campaign_days[k]) {
                r.campaigns.push_back({cd.first, cd.second, calls});
            }
        }
    } catch (const std::exception& e) {
        spdlog::error("limits: reading the calls the database records, to write the quota counts back: {}", e.what());
        return std::nullopt;
    }
    for (const auto& [k, r] : records) {
        if (!l.seed(r)) {
            spdlog::error("limits: writing the quota counts of account {} back: Redis did not take them", k.first);
            return std::nullopt;
        }
    }
    return records.size();
}

}  // namespace orch::engine
