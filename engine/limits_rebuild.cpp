#include "engine/limits_rebuild.hpp"

#include "engine/account_quotas.hpp"
#include "schema/schema.hpp"

#include <pqxx/pqxx>
#include <spdlog/spdlog.h>

#include <chrono>
#include <map>
#include <stdexcept>
#include <unordered_map>
#include <utility>

namespace orch::engine {
namespace {

// The database URL with a connect timeout and a statement timeout: the rebuild holds every take of
// the key while it runs, so a database that accepts connections and never answers (a frozen
// server) must fail it, not hang it. Both forms libpq takes: a URI, or key=value pairs.
std::string bounded(const std::string& url) {
    if (url.rfind("postgres://", 0) == 0 || url.rfind("postgresql://", 0) == 0) {
        return url + (url.find('?') == std::string::npos ? "?" : "&") +
               "connect_timeout=5&options=-c%20statement_timeout%3D10000";
    }
    return url + " connect_timeout=5 options='-c statement_timeout=10000'";
}

// libpq's messages run over several lines ("...\n\tIs the server running..."): one line in the log.
std::string one_line(std::string text) {
    for (char& c : text) {
        if (c == '\n' || c == '\t' || c == '\r') {
            c = ' ';
        }
    }
    while (!text.empty() && text.back() == ' ') {
        text.pop_back();
    }
    return text;
}

}  // namespace

std::optional<std::size_t> rebuild_limits_state(const std::string& database_url, limits::limiter& l) {
    using key = std::pair<std::string, limits::action>;
    std::map<key, limits::seed_counts> records;
    try {
        pqxx::connection conn(bounded(database_url));
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
            const auto what = limits::parse_action(r[1].c_str());
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
            const auto what = limits::parse_action(r[1].c_str());
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
        throw std::runtime_error("reading the calls the database records: " + one_line(e.what()));
    }
    for (const auto& [k, r] : records) {
        if (!l.seed(r)) {
            throw std::runtime_error("writing the counts of account " + k.first + " back: Redis did not take them");
        }
    }
    return records.size();
}

}  // namespace orch::engine
