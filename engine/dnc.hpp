// orch::engine dnc: the do-not-contact list (migration 0016), shared by the CLI (`orchestrator dnc
// add|remove|list|import`) and the admin API (/v1/dnc). An entry names a person by profile URL
// (kept in canonical form, engine::canonical_profile_url) or a company by name (matched against a
// lead's `company` field ignoring case and surrounding blanks), with who added it, when and why.
//
// The list is checked at enrollment (campaigns/enroll). Adding entries also stops, in the same
// transaction, every live enrollment of a matching lead that is not in a call: status cancelled,
// reason "stopped: do-not-contact". A lead in `calling` has a request queued or in flight; it is
// counted (in_flight) and left to its worker, whose check before each side-effecting call
// (dnc::mirror, below) stops it without sending. Adding and removing notify orch_dnc, on which
// the workers reload their mirror.
#pragma once

#include <nlohmann/json.hpp>
#include <pqxx/connection>

#include <atomic>
#include <cstdint>
#include <optional>
#include <shared_mutex>
#include <string>
#include <unordered_map>
#include <unordered_set>
#include <vector>

namespace orch::engine::dnc {

using json = nlohmann::json;

inline constexpr const char* stopped_reason = "stopped: do-not-contact";
// A live lead of a campaign whose current version's `exclude:` names the person (as
// campaigns/cancel_excluded writes it).
inline constexpr const char* excluded_reason = "stopped: excluded by the campaign";
inline constexpr std::size_t reason_max = 500;
inline constexpr std::size_t value_max = 2048;

struct entry {
    std::int64_t id = 0;
    std::string kind;           // "profile" or "company"
    std::string profile_url;    // as given (profile entries)
    std::string canonical_url;  // profile entries
    std::string company;        // company entries
    std::string reason;
    std::string added_by;
    std::string added_at;       // ISO 8601 UTC
};
json to_json(const entry& e);

// One entry to add, as the operator gave it: exactly one of profile_url and company.
struct input {
    std::string profile_url;
    std::string company;
    std::string reason;
    int line = 0;  // where it came from (CSV line, 1-based), or the index in a request's list
};

// What is wrong with an input ("" when nothing): which field, and why.
// What is wrong with an entry's reason ("" when nothing), as check() says it.
std::string reason_problem(const std::string& reason);
std::string check(const input& in);
// The company name as stored: the blanks at its ends trimmed (inside, as typed: a lead's company
// is matched trimmed and in any case, its inner blanks as they are).
std::string normal_company(const std::string& name);

struct duplicate {
    int line = 0;
    std::int64_t existing_id = 0;  // the entry it repeats (0: repeats an earlier line of the input)
    int repeats = 0;               // that earlier line (or index), when existing_id is 0
    std::string value;
};
struct add_outcome {
    std::vector<entry> added;
    std::vector<duplicate> duplicates;
    std::int64_t cancelled = 0;  // live enrollments stopped ("stopped: do-not-contact")
    std::int64_t in_flight = 0;  // matching enrollments in a call: their worker stops them (engine/call_path.hpp)
    // When a company entry was added: the live enrollments whose lead has no company field, which
    // no company entry can match (leads from a search), read once the entries are committed; -1
    // when none was added, or when that read failed.
    std::int64_t live_without_company = -1;
};

// Adds the inputs (each must pass check(): precondition) in one transaction and stops the matching
// live enrollments. Entries equal to existing ones (or to earlier inputs) are duplicates, not
// errors. Runs again after a deadlock with a worker (three tries in all). Throws store_error.
add_outcome add(pqxx::connection& conn, const std::vector<input>& inputs, const std::string& added_by);

// nullopt: no such entry. Leads the entry stopped stay stopped.
std::optional<entry> remove(pqxx::connection& conn, std::int64_t id);
// The entry of a profile URL (canonicalised) or company (ignoring case); nullopt: none.
std::optional<std::int64_t> find(pqxx::connection& conn, const std::string& profile_url, const std::string& company);

// Entries after `cursor` (an entry id), at most `limit`, in the order they were added.
std::vector<entry> list(pqxx::connection& conn, std::int64_t cursor, std::int64_t limit);

// A CSV file of entries: a header row with a profile_url column or a company column (or both;
// a reason column is optional); each data row gives one entry (a row with both values gives two).
// Problems name the line; a file with any problem adds nothing.
struct csv_rows {
    std::vector<input> inputs;
    std::vector<std::string> problems;  // "line N: ..."
};
csv_rows read_csv(const std::string& text, const std::string& default_reason);

// The channel adds and removals notify, in their transaction.
inline constexpr const char* changed_channel = "orch_dnc";

// A worker's copy of the whole list, of each live campaign's `exclude:` (its current version's),
// and of the campaigns an operator cancelled or paused, checked before every side-effecting call and again when a call's outcome is
// recorded: loaded before the first call, again whenever orch_dnc is notified (within
// milliseconds of an add, an apply storing a new version, or a campaign's pause, resume or cancel
// committing), and at least every
// `reload_every` (a lost notification, a removal). Thread-safe; stops() costs no round trip.
// Matching is the same as at enrollment and in cancel_matching / cancel_excluded: the lead's
// canonical profile URL, or its `company` field with surrounding spaces trimmed, ASCII
// lower-cased.
class mirror {
public:
    static constexpr int reload_every_seconds = 30;
    void load(pqxx::connection& conn);  // throws pqxx errors; the old copy stays on failure
    // Why the person may not be contacted by the campaign: stopped_reason (the list),
    // excluded_reason (the campaign's `exclude:`), or nullptr.
    const char* stops(const std::string& profile_url, const std::string& company, std::int64_t campaign_id) const;
    // Whether an operator cancelled or paused the campaign: its calls still queued are not sent
    // (they went out after the command, for as long as the queue took).
    bool halted(std::int64_t campaign_id) const;
    std::size_t size() const;

private:
    struct people {
        std::unordered_set<std::string> urls;
        std::unordered_set<std::string> companies;
        bool has(const std::string& canonical_url, const std::string& company_key) const {
            return urls.contains(canonical_url) || (!company_key.empty() && companies.contains(company_key));
        }
    };
    mutable std::shared_mutex mutex_;
    people list_;
    std::unordered_map<std::int64_t, people> excluded_;  // by campaign
    std::unordered_set<std::int64_t> halted_;            // campaigns cancelled, or paused by an operator
    std::atomic<bool> empty_{true};
    std::atomic<bool> none_halted_{true};
};

// A lead's `company` field as matched against company entries.
std::string company_key(const std::string& company_field);

}  // namespace orch::engine::dnc
