// orch::engine Postgres lane store: the store port of a worker lane's cycle (engine/lane_cycle.hpp)
// over one transaction of the lane's connection. Its optimisations stay inside it:
//   - claim and settle in one transaction, one commit per cycle;
//   - a settled row whose next step is due at once is held on (engine/chain_hold) and written
//     with that step in one row version;
//   - claims pick from disjoint slices of the due work (migration 0019), one sweep per lane;
//   - the ledger's fast path (reservations without locks, the balance rows locked by its last
//     statement) and, when it gives way, the same work under locks;
//   - hot statements prepared once per connection (prepare_hot_statements).
#pragma once

#include "engine/clock.hpp"
#include "engine/config.hpp"
#include "engine/lane_cycle.hpp"
#include "engine/lru_map.hpp"
#include "engine/ledger.hpp"
#include "engine/worker.hpp"

#include <chrono>

#include <pqxx/connection>
#include <pqxx/transaction>

#include <cstdint>
#include <map>
#include <memory>
#include <mutex>
#include <random>
#include <set>
#include <string>
#include <utility>
#include <vector>

namespace orch::engine {

// A stored campaign version, and the lead fields its templates read: the only ones a claimed
// lead keeps (a file's other columns, the profile URL among them, are not copied per lead).
struct cached_campaign {
    std::shared_ptr<const campaigns::campaign> campaign;
    std::set<std::string, std::less<>> fields;
};

// Cache of campaign versions, shared by a worker's lanes: definitions never change once stored.
// At most `capacity` versions are kept (the least recently claimed go; rows in flight keep theirs
// through their shared pointers), so a worker running for weeks over many re-applied campaigns
// does not keep every version it ever claimed.
class campaign_cache {
public:
    static constexpr std::size_t default_capacity = 256;
    explicit campaign_cache(std::size_t capacity = default_capacity) : cache_(capacity) {}
    std::shared_ptr<const cached_campaign> get(pqxx::work& tx, std::int64_t id, int version);
    std::size_t size() {
        std::lock_guard lock(mutex_);
        return cache_.size();
    }

private:
    std::mutex mutex_;
    lru_map<std::pair<std::int64_t, int>, std::shared_ptr<const cached_campaign>> cache_;
};

// A lane's place in its sweep over the slices of the due work (migration 0019), moved on by each
// claim. Lanes start at slices spread by their claim slots (start_sweep) and sweep at the
// same pace, so each picks rows no other holds.
struct claim_sweep {
    int slice = 0;
    int slot = -1;  // the lane's claim slot (engine/claim_slot), -1 when all were held
    std::minstd_rand rng;
    // A campaign's cap that refused calls: its day cap (account "") or its cap on one sender.
    using cap_key = std::pair<std::int64_t, std::string>;
    // Cap -> when this lane last woke the leads the gate held that the cap refuses, and what the
    // cap had left then (engine/wake_held_of_capped).
    struct capped_wake {
        campaigns::time_point at{};
        std::int64_t left = 0;
    };
    std::map<cap_key, capped_wake> capped_woken{};
    // Cap -> when this lane wakes its held leads once more after a wake-up (capped_wake_again).
    std::map<cap_key, campaigns::time_point> capped_again{};
};

// How often a lane wakes the held leads that a used-up cap (a campaign's day cap, or its cap on
// one sender) refuses, while what the cap has left stays the same: each wake-up walks the
// campaign's live rows. A cap with less left
// than at the last wake-up (a call refused with 1 credit left, then the cap used up) wakes them
// again at once.
inline constexpr std::chrono::seconds capped_wake_every{5};
// Whether a lane wakes a campaign's held leads now: its cap refuses with `left` credits left, and
// the lane last woke them at `last` (nullptr: never).
inline bool capped_wake_due(const claim_sweep::capped_wake* last, std::int64_t left, campaigns::time_point now) {
    return last == nullptr || left < last->left || now - last->at >= capped_wake_every;
}
// A wake-up skips the rows other lanes hold at that moment, and a lane whose transaction began
// before the cap was used up may write its held leads of that cap as waiting for the key's turn
// (its look at the cap found credits left): with no further refusal, nothing would wake them
// before their own turn, minutes away behind a busy key. So a lane that woke a cap's held leads
// wakes them once more this much later, when every lane transaction that ran alongside the first
// wake-up (milliseconds long) has committed.
inline constexpr std::chrono::seconds capped_wake_again{2};

// How long a lane queues for its gate (migration 0021), every gate being taken, before it goes on
// without one: far above a cycle's transaction (milliseconds) times the lanes that may queue
// ahead of it on a gate at the usual ratios of lanes to gates.
inline constexpr int lane_gate_wait_ms = 2500;

// How often a lane that got no claim slot (all 64 held) asks for one again: without one it sweeps
// from random slices and prefers a random gate, so lanes may step on each other's rows.
inline constexpr std::chrono::seconds claim_slot_retry{5};

// Prepares the lane's hot statements on its connection.
void prepare_hot_statements(pqxx::connection& conn);
// What the other processes on the database run with that differs from this one's.
struct session_others {
    std::vector<std::int64_t> slots;  // their lane_transaction_slots, where not this lane's
    std::int64_t other_limits = 0;    // the processes whose limits fingerprint is not this one's
};
// Names the lane's session for pg_stat_activity ("orch-worker slots=<lane_transaction_slots>
// limits=<limits_fingerprint> <owner>", cut to Postgres's 63 bytes) and answers what the other
// workers' lanes (and `serve`s, for the limits) on the database run with that differs (every
// process needs the same).
session_others name_lane_session(pqxx::connection& conn, std::int64_t slots, const std::string& limits,
                                 const std::string& owner);
// The same for `serve`'s inbox sender ("orch-serve limits=<fingerprint> <owner>"): the count of
// other processes whose limits differ.
std::int64_t name_serve_session(pqxx::connection& conn, const std::string& limits, const std::string& owner);
// Takes a claim slot for the lane's connection (engine/claim_slot, held by the connection) and
// starts the sweep from it.
void start_sweep(pqxx::connection& conn, claim_sweep& sweep);

class pg_lane_store final : public lane_store {
public:
    // What a lane's store uses of its worker and its lane: all outlive the store.
    struct lane_refs {
        const settings& cfg;
        campaign_cache& cache;
        worker_stats& stats;  // the ledger's fast and locked paths are counted
        const clock_port& clock;
        const std::string& owner;  // the lane's lease owner, "<worker_id>/<lane>"
        claim_sweep& sweep;
    };
    pg_lane_store(pqxx::connection& conn, const lane_refs& lane);
    ~pg_lane_store() override;
    pg_lane_store(const pg_lane_store&) = delete;
    pg_lane_store& operator=(const pg_lane_store&) = delete;

    void settle(finished_calls& done, settle_decisions& d, std::vector<lane_row>* chain) override;
    void settle_again(const settle_replay& r) override;
    void claim(std::size_t limit, std::vector<lane_row>& batch) override;
    void pending_events(std::span<const lane_row> batch, std::span<plan_item> items) override;
    void close_lost(std::span<const lane_row> batch) override;
    ledger_port& ledger() override;
    std::vector<std::int64_t> attempt_ids(std::size_t n) override;
    void write(std::span<const lane_row> batch) override;
    void commit() override;
    campaigns::time_point leases_from() const override { return began_; }

private:
    struct replay;
    class pg_ledger;
    void write_settle(const replay& r, bool held_too);
    void exec_settle(const std::string& rows);

    lane_refs lane_;
    campaigns::time_point began_;  // before tx_: read before the transaction begins
    pqxx::work tx_;
    std::vector<std::int64_t> touched_;  // rows the settle released: engine/wake_pending looks at them
    std::vector<ledger::post_request> posts_;  // the settle's ledger work, done by the ledger's reserve
    std::vector<std::int64_t> voids_;
    std::unique_ptr<pg_ledger> ledger_;
};

}  // namespace orch::engine
