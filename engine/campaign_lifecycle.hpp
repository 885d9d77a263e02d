// orch::engine campaign_lifecycle: what the CLI (`campaign show|versions|diff`, and the warnings
// of `campaign apply`) and the admin endpoint (GET /v1/campaigns/{name}, .../versions,
// .../diff, and POST /v1/campaigns' `warnings`) show of a campaign's life, shared so both say
// the same. The state changes themselves (completed, active again, ended) live in the database
// (migration 0017) and the apply (store::apply_campaign).
#pragma once

#include "campaigns/campaigns.hpp"
#include "engine/account_quotas.hpp"
#include "engine/config.hpp"
#include "engine/ledger.hpp"
#include "engine/outreach/types.hpp"

#include <nlohmann/json.hpp>
#include <pqxx/transaction_base>

#include <chrono>
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

namespace orch::limits {
class limiter;
}

namespace orch::engine {

struct account_row;

// A campaign as `campaign show` presents it; nullopt when there is no such campaign:
// {"name", "state", "pause_reason", "version", "start_at", "end_at" (null when not set),
//  "created_at", "updated_at",
//  "budget": {"total", "per_day", "per_account", "available", "reserved", "spent"} (the ledger's
//            views; null when the campaign has no budget in the ledger),
//  "steps": [{"id", "kind", "next": {...the step's targets...}}] (the current version's),
//  "counts": {"enrollments", "live", "by_status": {status: n}, "funnel": {found, skipped, checked,
//             invited, accepted, messaged, replied, failed, live, credits}}}
std::optional<nlohmann::json> campaign_overview(pqxx::transaction_base& tx, const std::string& name);

// Every stored version: {"name", "versions": [{"version", "digest", "created_at", "current",
// "enrollments"}]}; nullopt when there is no such campaign.
std::optional<nlohmann::json> campaign_versions_list(pqxx::transaction_base& tx, const std::string& name);

// A unified diff (3 lines of context) of two versions' canonical definitions, pretty-printed
// with sorted keys. `from`/`to` unset: the version before the current one, and the current one.
struct version_diff {
    bool found = false;      // false: no such campaign
    std::string error;       // a version that does not exist, or no previous version
    int from = 0, to = 0;
    std::string text;        // "" when the two are equal
};
version_diff campaign_diff(pqxx::transaction_base& tx, const std::string& name, std::optional<int> from,
                           std::optional<int> to);

// A unified diff of two texts, line by line ("--- a_label", "+++ b_label", "@@ -l,n +l,n @@"
// hunks with `context` lines around each change); "" when they are equal.
std::string unified_diff(const std::string& a, const std::string& b, const std::string& a_label,
                         const std::string& b_label, int context = 3);

// What an apply did, for the warnings.
struct apply_facts {
    std::int64_t audience = 0;   // leads the audience had
    std::int64_t enrolled = 0;   // new enrollments
    std::int64_t skipped = 0;    // owned by another campaign, or do-not-contact
    std::string state;           // the campaign's state after the apply
    // The search's hits, when the audience was a search (nullptr: a file audience).
    const std::vector<outreach::person_hit>* hits = nullptr;
    // false: the apply did not run the audience (a search audience unchanged from the current
    // version's): nothing to say about who it found.
    bool audience_run = true;
    // The senders with quotas of their own (`accounts limits`; store::apply_outcome::own_quotas),
    // and how many senders the campaign has (0: not known, the default quotas are said).
    const std::vector<account_overrides>* own_quotas = nullptr;
    std::size_t senders = 0;
    // The audience search's charge of this apply, and what it left of the campaign's budget and
    // caps (store::apply_outcome::caps).
    std::int64_t search_charged = 0;
    ledger::search_cap_use caps{};
    // The senders' use today of the first quota-limited action (senders_quota_today); unset when
    // it was not read (Redis not configured or not answering): the warning then speaks in general.
    struct quota_today {
        std::size_t read = 0;     // senders whose use was read
        std::size_t used_up = 0;  // of them, those with none of today's quota left
        // When the first of the used-up senders' quota days ends (their time zones).
        std::chrono::system_clock::time_point first_day_end{};
        // Of them, those still ramping up (today's limit below their day quota: new to the
        // orchestrator, or in their first days; none with ramp_up off).
        std::size_t ramping = 0;
    };
    std::optional<quota_today> today{};
};

// Whether the apply's warnings use the senders' quota today: only the pacing and ramp-up warning
// does, and only for a campaign with a quota-limited action. Callers skip the Redis reads otherwise.
bool uses_quota_today(const settings& s, const campaigns::campaign& c);

// The use today of the first quota-limited action of `c` (invite, else send) by each of `senders`
// found in `accounts`, each in its quota day, with its own quota overrides; nullopt when the
// campaign has no such action or Redis does not answer.
std::optional<apply_facts::quota_today> senders_quota_today(limits::limiter& limiter, const settings& s,
                                                            const campaigns::campaign& c,
                                                            const std::vector<account_row>& accounts,
                                                            const std::vector<std::string>& senders,
                                                            std::chrono::system_clock::time_point now);

// What an operator should know after an apply (none of it stops the apply):
//  - the audience matched nobody, or no lead of it was new (another campaign's, do-not-contact, or this campaign's already);
//  - the first step that calls the API sends a message, and people of the audience are not (or
//    may not be) connections, who cannot receive one;
//  - pacing and ramp-up are in effect: the day quota of the first action on a new sender, how it
//    grows, the gap between calls, when the first calls go out (working hours, start_at), and,
//    when it is more than a day, how many working days the new leads' first limited action takes
//    (campaigns::estimate, as `campaign estimate` counts it);
//  - the audience search's charge used up today's day cap (the leads wait for the next UTC day),
//    or the per-account cap of the sender it went through (that sender's leads wait for a raise),
//    or the budget itself;
//  - end_at has passed.
std::vector<std::string> apply_warnings(const campaigns::campaign& c, const apply_facts& facts, const settings& s,
                                        std::chrono::system_clock::time_point now);

}  // namespace orch::engine
