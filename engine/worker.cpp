#include "engine/worker.hpp"

#include "campaigns/loader.hpp"
#include "engine/batch_rows.hpp"
#include "engine/call_gate.hpp"
#include "engine/dnc.hpp"
#include "engine/executor.hpp"
#include "engine/invariant.hpp"
#include "engine/ledger.hpp"
#include "engine/limits_gate.hpp"
#include "engine/planner.hpp"
#include "engine/call_path.hpp"
#include "engine/cycle_plan.hpp"
#include "engine/record_rows.hpp"
#include "engine/store.hpp"
#include "schema/schema.hpp"

#include <boost/asio/co_spawn.hpp>
#include <boost/asio/post.hpp>
#include <boost/asio/detached.hpp>
#include <boost/asio/executor_work_guard.hpp>
#include <boost/asio/io_context.hpp>
#include <pqxx/pqxx>
#include <spdlog/spdlog.h>

#include <poll.h>
#include <sys/eventfd.h>
#include <unistd.h>

#include <array>
#include <cerrno>
#include <condition_variable>
#include <cstdlib>
#include <exception>
#include <future>
#include <deque>
#include <map>
#include <unordered_map>
#include <mutex>
#include <optional>
#include <random>
#include <set>
#include <system_error>
#include <thread>

namespace orch::engine {

namespace asio = boost::asio;
namespace cs = campaigns;

namespace {

std::string q(std::string_view name) { return std::string(schema::query(name)); }

// The hot-path statements, prepared once per lane connection (parsed and planned once).
constexpr const char* hot_statements[] = {
    "engine/claim_pick_slices",  "engine/claim_due",    "engine/pending_events",
    "engine/apply_transitions",  "engine/wake_pending", "engine/insert_intents",
    "engine/close_lost_attempts", "engine/settle",      "engine/next_attempt_ids",
    "engine/chain_hold",
};

void prepare_hot_statements(pqxx::connection& conn) {
    for (const char* name : hot_statements) {
        conn.prepare(name, q(name));
    }
}

std::int64_t epoch_ms(cs::time_point t) {
    return std::chrono::duration_cast<std::chrono::milliseconds>(t.time_since_epoch()).count();
}
cs::time_point from_ms(std::int64_t ms) { return cs::time_point(std::chrono::milliseconds(ms)); }

cs::status parse_status(const std::string& s) {
    static const std::map<std::string, cs::status> m = {
        {"ready", cs::status::ready},   {"calling", cs::status::calling}, {"waiting", cs::status::waiting},
        {"done", cs::status::done},     {"replied", cs::status::replied}, {"failed", cs::status::failed},
        {"cancelled", cs::status::cancelled}};
    return m.at(s);
}

// A stored campaign version, and the lead fields its templates read: the only ones a claimed
// lead keeps (a file's other columns, the profile URL among them, are not copied per lead).
struct cached_campaign {
    std::shared_ptr<const cs::campaign> campaign;
    std::set<std::string, std::less<>> fields;
};

// Cache of campaign versions: definitions never change once stored.
class campaign_cache {
public:
    std::shared_ptr<const cached_campaign> get(pqxx::work& tx, std::int64_t id, int version) {
        std::lock_guard lock(mutex_);
        auto key = std::make_pair(id, version);
        auto it = cache_.find(key);
        if (it != cache_.end()) {
            return it->second;
        }
        auto r = tx.exec_params(q("engine/campaign_definition"), id, version);
        if (r.empty()) {
            throw store_error("campaign " + std::to_string(id) + " version " + std::to_string(version) + " missing");
        }
        auto c = std::make_shared<cached_campaign>();
        c->campaign = std::make_shared<const cs::campaign>(cs::campaign_from_json(json::parse(r[0][0].as<std::string>())));
        for (auto& f : cs::fields_used(*c->campaign)) {
            c->fields.insert(std::move(f));
        }
        cache_.emplace(key, c);
        return c;
    }

private:
    std::mutex mutex_;
    std::map<std::pair<std::int64_t, int>, std::shared_ptr<const cached_campaign>> cache_;
};

// A call settled in this cycle whose row goes on to its next step at once (settle, chain): its
// outcome, written by engine/settle together with that step's state.
struct settled_call {
    std::int64_t attempt_id = 0;
    attempt_outcome outcome = attempt_outcome::ok;
    std::string error;
    std::string call;
    std::int64_t credits = 0;
};

struct claimed {
    std::int64_t enrollment_id = 0;
    std::int64_t campaign_id = 0;
    std::string account_id;
    std::string account_quotas;  // accounts.quotas as text, "" for none (the limits gate reads it)
    std::string profile_url;
    std::string company;  // the lead's `company` field (do-not-contact by company)
    std::shared_ptr<const cs::campaign> campaign;
    cs::lead_view lead;
    cs::enrollment_state state;
    std::int64_t event_cursor = 0;
    bool was_calling = false;
    // `settled` is needed only in the cycle that sets it and is dropped at its end: a row's
    // memory while its call runs is a worker's memory per in-flight lead.
    std::optional<cs::api_call> call;
    std::string variant;
    std::int64_t attempt_id = 0;
    std::shared_ptr<const settled_call> settled;  // set: not claimed but held on from this cycle's settle
};

call_target target_of(const claimed& c) {
    return {c.account_id, c.profile_url, c.campaign_id, c.enrollment_id, c.account_quotas};
}

// Opens a row of `rows` with the enrollment's state `s` (the statement adds its own fields).
record_rows& state_row(record_rows& rows, const claimed& c, const cs::enrollment_state& s) {
    return rows.row()
        .add("enrollment_id", c.enrollment_id)
        .add("step", s.step)
        .add("status", cs::to_string(s.st))
        .add("next_run_at_ms", epoch_ms(s.next_run_at))
        .add("attempt", s.attempt)
        .add("reconcile", s.reconcile)
        .add("accepted_seen", s.accepted_seen)
        .add("reason", s.reason)
        .add_or_null("variant", c.variant)
        .add_or_null("wait_code", s.wait == cs::wait_code::none ? std::string_view() : cs::to_string(s.wait));
}

// An engine/settle row: the state, then the call's outcome.
record_rows& settle_row(record_rows& rows, const claimed& c, const cs::enrollment_state& s, const settled_call& h) {
    return state_row(rows, c, s)
        .add("attempt_id", h.attempt_id)
        .add("outcome", to_string(h.outcome))
        .add("error", h.error)
        .add("credits", h.credits)
        .add("call", h.call);
}

}  // namespace

struct worker::impl {
    settings cfg;
    worker_stats stats;
    std::atomic<bool> stopping{false};
    std::atomic<bool> failed{false};
    asio::io_context io{1};
    std::optional<outreach::client> api;
    campaign_cache cache;
    backoff_settings backoff;
    std::unique_ptr<call_gate> gate = std::make_unique<open_gate>();
    dnc::mirror do_not_contact;  // checked before each side-effecting call
    std::optional<client_port> client_api;  // the port over `api`
    call_path_ports ports;  // set by run() before the lanes start

    // A lane's calls: queued rows start on the network thread while fewer than the lane's share
    // of the API connections are in flight, and each finished call is handed back to the lane,
    // which settles what has finished in small batches (settle_delay_ms, or as soon as every
    // call it holds is back) while the others are still running. No call waits for a batch's
    // slowest one, and a call checks the gate's send-time mirror when it leaves, not when its
    // row was claimed.
    struct call_queue {
        struct finished {
            std::int64_t enrollment_id = 0;
            call_outcome outcome;
            std::exception_ptr failure;
        };
        call_queue(asio::any_io_executor ex, std::size_t share, std::uint64_t seed) : window(std::move(ex), share), rng(seed) {}
        // Network thread only.
        call_window window;
        std::mt19937_64 rng;
        // Shared with the lane, under `m`.
        std::mutex m;
        std::condition_variable cv;
        std::vector<finished> done;
        std::chrono::steady_clock::time_point first_done{};
        std::uint64_t wakes = 0;       // LISTEN orch_wake notifications (work became due)
        std::atomic<std::size_t> in_flight{0};  // queued or running: the progress line; 0 when all are back
    };
    std::vector<std::shared_ptr<call_queue>> queues;  // one per lane, made before the lanes start
    void notify_lanes() {
        for (auto& q : queues) {
            {
                std::lock_guard lock(q->m);
                ++q->wakes;
            }
            q->cv.notify_all();
        }
    }
    // Readable once a stop is requested: the wake-up listener waits on it next to its Postgres
    // socket, so a stop never waits out the listener's poll interval (it did, up to 200 ms, and 1 s
    // while the listener reconnected).
    int stop_fd = ::eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK);

    // A batch whose calls have returned and wait to be settled: settled in the same transaction
    // that claims the lane's next batch (one commit per cycle, not two).
    struct unsettled {
        std::vector<claimed> batch;
        std::vector<std::size_t> calls;  // indexes into batch, in the order of outcomes
        std::vector<call_outcome> outcomes;
        bool gated = false;  // the gate has been told the outcomes (Redis is not rolled back)
        // What the cycle's settle wrote, as settle_alone writes it again if that transaction
        // fails: every call's row released (those the cycle held on to its next step too).
        // Set, the batch and outcomes above are let go before the cycle claims its next batch
        // (the rows that go on are moved into it): a lane holds one batch of rows at a time, not
        // two (about 0.5 KB per in-flight lead, tests/bench/engine_bench.sh's memory part).
        struct replay {
            std::string rows;       // engine/settle's rows, those not held on
            std::string held_rows;  // engine/settle's rows, those held on
            json touched = json::array();
            std::vector<ledger::post_request> posts;
            std::vector<std::int64_t> voids;
            std::map<std::string, std::string> unavailable;  // account -> the error that said so
            std::string out_of_credits;
            std::size_t calls = 0;
        };
        std::optional<replay> again;
        void let_go() {
            std::vector<claimed>().swap(batch);
            std::vector<std::size_t>().swap(calls);
            std::vector<call_outcome>().swap(outcomes);
        }
    };

    explicit impl(settings s) : cfg(std::move(s)) {
        if (stop_fd < 0) {
            throw std::system_error(errno, std::generic_category(), "worker: eventfd");
        }
        backoff.base_ms = cfg.retry_base_ms;
        backoff.cap_ms = cfg.retry_cap_ms;
        // Each lane runs at most its share of the API connections at once.
        const auto lanes = static_cast<std::size_t>(std::max<std::int64_t>(1, cfg.worker_lanes));
        const auto share = std::max<std::size_t>(1, (static_cast<std::size_t>(cfg.api_pool_size) + lanes - 1) / lanes);
        std::random_device seed;
        for (std::size_t i = 0; i < lanes; ++i) {
            queues.push_back(std::make_shared<call_queue>(io.get_executor(), share, (static_cast<std::uint64_t>(seed()) << 32) ^ seed()));
        }
    }
    ~impl() { ::close(stop_fd); }
    impl(const impl&) = delete;
    impl& operator=(const impl&) = delete;

    // Stops claiming: idle lanes, the listener and the exit-when-idle poll wake at once.
    void stop() {
        stopping = true;
        notify_lanes();
        std::uint64_t one = 1;
        [[maybe_unused]] auto n = ::write(stop_fd, &one, sizeof one);
    }
    // Waits until `fd` (if >= 0) is readable, a stop is requested, or `timeout_ms` passed.
    void wait_readable_or_stop(int fd, int timeout_ms) const {
        std::array<pollfd, 2> fds{{{stop_fd, POLLIN, 0}, {fd, POLLIN, 0}}};
        ::poll(fds.data(), fd < 0 ? 1 : 2, timeout_ms);
    }

    static cs::time_point now() { return std::chrono::system_clock::now(); }

    void claim(pqxx::work& tx, std::int64_t limit, std::vector<claimed>& batch);
    // The ledger's part of a cycle's settle: posted by its plan's ledger (pg_ledger).
    struct ledger_work {
        std::vector<ledger::post_request> posts;
        std::vector<std::int64_t> voids;
    };
    // One transaction's work: the lease owner it writes (the lane's), its ledger part, and what it
    // counts, added to `stats` once it commits.
    struct cycle_work {
        const std::string& owner;
        ledger_work lw;
        std::uint64_t transitions = 0;
        std::uint64_t calls = 0;
        std::uint64_t chained = 0;
        void committed(worker_stats& stats) const {
            stats.transitions += transitions;
            stats.calls += calls;
            stats.chained += chained;
        }
    };
    class pg_ledger;
    void write_plan(pqxx::work& tx, std::vector<claimed>& batch, const json& touched, cycle_work& w);
    void finish_cycle(pqxx::work& tx, std::vector<claimed>& batch, const json& touched, cycle_work& w);
    void post_lost(const pqxx::result& lost, ledger_work& lw);
    void settle(pqxx::work& tx, unsettled& done, json& touched, cycle_work& w,
                std::vector<claimed>* chain = nullptr);
    void write_settle(pqxx::work& tx, const unsettled::replay& r, bool held_too, cycle_work& w);
    // What a cycle leaves the lane: the rows whose calls are to start now, and whether its claim
    // found fewer due rows than it asked for (the lane then claims again only when woken, or
    // after idle_poll_ms).
    struct cycle_result {
        std::vector<std::unique_ptr<claimed>> calls;
        bool drained = false;
    };
    cycle_result cycle(pqxx::connection& conn, std::optional<unsettled>& pending, const std::string& owner,
                       std::size_t room);
    void enqueue(const std::shared_ptr<call_queue>& q, std::vector<claimed*> jobs);
    asio::awaitable<void> run_one(std::shared_ptr<call_queue> q, claimed* job);
    void settle_alone(pqxx::connection& conn, std::optional<unsettled>& pending, const std::string& owner);
    void listen();
    void lane(int index);
};

namespace {
// A lane's place in its sweep over the slices of the due work (migration 0019): set up by lane()
// for its thread, moved on by claim(). Lanes start at slices spread by their index and, per
// process, by a random offset, and sweep at the same pace, so each picks rows no other holds.
struct claim_sweep {
    int slice = 0;
    std::minstd_rand rng;
};
thread_local claim_sweep* lane_sweep = nullptr;
constexpr int claim_slices = 64;  // migration 0019's enrollment_id % 64
// Slices a pick visits before it takes the rest of its batch in due order over all slices: near
// the end of the due work, not 64 probes of empty slices per idle poll.
constexpr int claim_hops = 8;

// Where a lane's sweep starts: from its claim slot (engine/claim_slot, held by its connection),
// bit-reversed, so that lanes of all processes start evenly spread without knowing how many
// there are; a random slice when all slots are held.
int claim_start_slice(pqxx::connection& conn, std::minstd_rand& rng) {
    pqxx::nontransaction tx(conn);
    const auto r = tx.exec(q("engine/claim_slot"));
    if (r.empty()) {
        return static_cast<int>(rng() % claim_slices);
    }
    const int slot = r[0][0].as<int>();
    static_assert(claim_slices == 64);
    int slice = 0;
    for (int bit = 0; bit < 6; ++bit) {  // 64 = 2^6 slices
        slice |= ((slot >> bit) & 1) << (5 - bit);
    }
    return slice;
}
}  // namespace

// Appends the claimed rows to `batch`.
void worker::impl::claim(pqxx::work& tx, std::int64_t limit, std::vector<claimed>& batch) {
    claim_sweep fallback;
    claim_sweep& sweep = lane_sweep != nullptr ? *lane_sweep : fallback;
    pqxx::result rows;
    // Pick, then lock (schema/queries/engine/claim_pick.sql says why): the pick's row locks,
    // among them locks on rows other claims leased meanwhile, end with its savepoint, which is
    // then released so that the rest of the cycle runs in the transaction itself. Between the two
    // statements a concurrent claim may pick and lock the same rows, and claim_due skips them; a
    // pick may also find only rows to park. Either way the lane picks again (a few times) rather
    // than idle while rows are due.
    // The pick sweeps the slices from the lane's (engine/claim_pick_slices). Picked rows that
    // claim_due did not get went to another lane sweeping the same slices: this lane jumps to a
    // random slice, so the two do not go on splitting every slice they meet.
    for (int round = 0; round < 3 && rows.empty(); ++round) {
        tx.exec0("SAVEPOINT claim_pick");
        std::string ids = "{";
        std::size_t picked = 0;
        for (const auto& r : tx.exec_prepared("engine/claim_pick_slices", limit, sweep.slice, claim_hops)) {
            ids += (ids.size() > 1 ? "," : "") + r[0].as<std::string>();
            sweep.slice = r[1].as<int>();
            ++picked;
        }
        tx.exec0("ROLLBACK TO SAVEPOINT claim_pick");
        tx.exec0("RELEASE SAVEPOINT claim_pick");
        if (picked == 0) {
            sweep.slice = (sweep.slice + claim_hops) % claim_slices;
            return;
        }
        rows = tx.exec_prepared("engine/claim_due", ids + "}");
        if (rows.size() < picked) {
            sweep.slice = static_cast<int>(sweep.rng() % claim_slices);
        }
    }
    batch.reserve(batch.size() + rows.size());
    for (const auto& r : rows) {
        claimed c;
        c.enrollment_id = r[0].as<std::int64_t>();
        c.campaign_id = r[1].as<std::int64_t>();
        auto cached = cache.get(tx, c.campaign_id, r[2].as<int>());
        c.campaign = cached->campaign;
        c.lead.key = std::to_string(r[3].as<std::int64_t>());
        c.account_id = r[4].as<std::string>();
        c.state.step = r[5].as<std::string>();
        c.state.st = parse_status(r[6].as<std::string>());
        c.state.next_run_at = from_ms(r[7].as<std::int64_t>());
        c.state.attempt = r[8].as<int>();
        c.state.reconcile = r[9].as<bool>();
        c.state.accepted_seen = r[10].as<bool>();
        c.state.reason = r[11].as<std::string>();
        c.state.wait = r[16].is_null() ? cs::wait_code::none
                                       : cs::wait_code_from_string(r[16].as<std::string>()).value_or(cs::wait_code::none);
        c.event_cursor = r[12].as<std::int64_t>();
        c.profile_url = r[13].as<std::string>();
        c.account_quotas = r[15].as<std::string>();
        const json fields = json::parse(r[14].as<std::string>());
        for (auto it = fields.begin(); it != fields.end(); ++it) {
            if (!it->is_string() || it->get_ref<const std::string&>().empty()) {
                continue;
            }
            if (it.key() == "company") {
                c.company = it->get<std::string>();
            }
            if (cached->fields.contains(it.key())) {
                c.lead.fields.emplace(it.key(), it->get<std::string>());
            }
        }
        c.was_calling = c.state.st == cs::status::calling;
        batch.push_back(std::move(c));
    }
}

// The cycle's ledger over Postgres (engine/ledger.hpp), the ledger port of plan_cycle. The
// settled calls' charges are posted (or their reservations voided), and every call the gate
// allowed reserves its cost model's upper bound from its campaign's budget; its intent row,
// which the ledger's transfer refers to, is written first.
// The fast path (held_balances) reserves without locks, has the plan written, posts, and locks
// the campaigns' balance rows only in its last statement: taken when every reservation fits its
// budget and every charge its reservation, as nearly always. Otherwise its savepoint is rolled
// back and the same work is done under locks (the balance rows are then held from the ledger's
// first statement through the plan's writes to the commit: the rare path): the verdicts are the
// locked ledger's, the plan is written again with them, and a refused call's intent row is
// dropped (the lead waits: a campaign out of budget is paused by the ledger and parked here, a
// day cap waits for the next day).
class worker::impl::pg_ledger final : public ledger_port {
public:
    pg_ledger(impl& self, pqxx::work& tx, cycle_work& w) : self_(self), tx_(tx), w_(w) {}

    void reserve(std::span<const ledger_ask> asks,
                 const std::function<void(std::span<const planner::verdict>)>& write) override {
        ledger_work& lw = w_.lw;
        std::vector<ledger::reserve_request> reserves;
        reserves.reserve(asks.size());
        for (const auto& a : asks) {
            const call_target& t = a.item->target;
            reserves.push_back({a.attempt_id, t.campaign_id, t.account_id, a.action, a.credits});
        }
        const std::vector<planner::verdict> all_allowed(asks.size());
        if (lw.posts.empty() && lw.voids.empty() && reserves.empty()) {
            write(all_allowed);
            return;
        }
        tx_.exec0("SAVEPOINT ledger_fast");
        if (auto fast = fast_path(asks, reserves, write); fast) {
            tx_.exec0("RELEASE SAVEPOINT ledger_fast");
            ++self_.stats.ledger_fast;
            return;
        } else {
            spdlog::debug("worker: the ledger takes the locked path: {}", fast.error().message);
        }
        tx_.exec0("ROLLBACK TO SAVEPOINT ledger_fast");
        ++self_.stats.ledger_locked;
        const auto t = now();
        std::set<std::int64_t> parked;
        if (!lw.posts.empty() || !lw.voids.empty()) {
            // A charge above its reservation that the budget could not cover pauses the campaign
            // (the ledger does, in this transaction): its waiting leads are parked like any other
            // paused campaign's, so claims do not walk past them.
            json short_of_budget = json::array();
            for (const auto& s : ledger::settle(tx_, lw.posts, lw.voids, t)) {
                if (s.shortfall > 0) {
                    short_of_budget.push_back(s.attempt_id);
                }
            }
            if (!short_of_budget.empty()) {
                for (const auto& r : tx_.exec_params(q("engine/paused_campaigns_of_attempts"), short_of_budget.dump())) {
                    parked.insert(r[0].as<std::int64_t>());
                    spdlog::warn("worker: campaign={} paused: a charge above its reservation exhausted its budget",
                                 r[0].as<std::int64_t>());
                }
            }
        }
        write_intents(asks);
        std::vector<planner::verdict> verdicts(asks.size());
        if (!reserves.empty()) {
            json dropped = json::array();
            const auto results = ledger::reserve(tx_, reserves, t);
            for (std::size_t i = 0; i < asks.size(); ++i) {
                const auto& r = results[i];
                if (r.reserved) {
                    continue;
                }
                verdicts[i] = planner::ledger_refused(r.why, r.retry_at, asks[i].item->target.account_id, t);
                dropped.push_back(asks[i].attempt_id);
                if (r.why == ledger::refusal::campaign_budget) {
                    parked.insert(asks[i].item->target.campaign_id);
                    spdlog::warn("worker: campaign={} paused: its budget cannot cover the next call",
                                 asks[i].item->target.campaign_id);
                }
            }
            if (!dropped.empty()) {
                tx_.exec_params(q("engine/drop_intents"), dropped.dump());
            }
        }
        write(verdicts);
        // After the rows, so that the batch's rows of these campaigns are parked too.
        for (auto campaign_id : parked) {
            tx_.exec_params(q("engine/park_campaign"), campaign_id);
        }
    }

private:
    // The fast path: every charge posted and every call reserved without locks, the plan written
    // in between; `contended` when any of it needs the locked path.
    result<void> fast_path(std::span<const ledger_ask> asks, const std::vector<ledger::reserve_request>& reserves,
                           const std::function<void(std::span<const planner::verdict>)>& write) {
        ledger_work& lw = w_.lw;
        ledger::held_balances held;
        const auto t = now();
        // The settled calls' charges first: what they release is there for the reservations.
        if (!lw.posts.empty() || !lw.voids.empty()) {
            if (auto r = ledger::settle(tx_, lw.posts, lw.voids, t, held); !r) {
                return r.error();
            }
        }
        write_intents(asks);
        if (!reserves.empty()) {
            if (auto r = ledger::reserve(tx_, reserves, t, held); !r) {
                return r.error();
            }
        }
        write(std::vector<planner::verdict>(asks.size()));
        return ledger::apply_balances(tx_, held);
    }
    void write_intents(std::span<const ledger_ask> asks) {
        record_rows intents(batch_rows::intent);
        for (const auto& a : asks) {
            const plan_item& it = *a.item;
            const cs::api_call& call = *it.proposal->call;
            intents.row()
                .add("attempt_id", a.attempt_id)
                .add("enrollment_id", it.target.enrollment_id)
                .add("step", it.proposal->next.step)
                .add("call", a.action)
                .add("reconcile", call.reconcile)
                .add("attempt", it.proposal->next.attempt)
                .add_or_null("variant", call.variant)
                .add("body", call.text);
        }
        if (!intents.empty()) {
            tx_.exec_prepared("engine/insert_intents", intents.text(), w_.owner);
        }
    }
    impl& self_;
    pqxx::work& tx_;
    cycle_work& w_;
};

// The rows as plan_cycle decided them: the settled rows that went on (claimed::settled) through
// engine/settle with their outcome, the claimed rows through engine/apply_transitions, and
// wake_pending over every row written and released (its fresh snapshot catches inbox events
// committed while those statements ran). Rows written leased (a call starts) are left out of it:
// an event's writer (events/wake) waits for this transaction's lock on the row, so such an event
// is read by the cycle that settles the call, as by a claim after an expired lease.
void worker::impl::write_plan(pqxx::work& tx, std::vector<claimed>& batch, const json& touched, cycle_work& w) {
    record_rows transitions(batch_rows::transition);
    record_rows settles(batch_rows::settle);
    json wake = touched;
    for (auto& c : batch) {
        if (c.settled) {
            settle_row(settles, c, c.state, *c.settled)
                .add("event_cursor", c.event_cursor)
                .add("leased", c.call.has_value());
        } else {
            state_row(transitions, c, c.state).add("event_cursor", c.event_cursor).add("leased", c.call.has_value());
        }
        if (!c.call) {
            wake.push_back(c.enrollment_id);
        }
    }
    if (!settles.empty()) {
        tx.exec_prepared("engine/settle", settles.text(), w.owner, cfg.lease_seconds);
    }
    if (!transitions.empty()) {
        tx.exec_prepared("engine/apply_transitions", transitions.text(), w.owner, cfg.lease_seconds);
    }
    if (!wake.empty()) {
        tx.exec_prepared("engine/wake_pending", wake.dump());
    }
}

// The rest of a cycle after its settle and its claim: the claimed rows' (and the settled rows'
// that go on) inbox events, the attempts of rows whose worker died closed (their reservations
// posted whole), then plan_cycle over the gate and the Postgres ledger, ending with the commit's
// ledger statements.
void worker::impl::finish_cycle(pqxx::work& tx, std::vector<claimed>& batch, const json& touched, cycle_work& w) {
    pg_ledger ledger_port(*this, tx, w);
    if (batch.empty()) {
        ledger_port.reserve({}, [&](std::span<const planner::verdict>) { write_plan(tx, batch, touched, w); });
        return;
    }
    json ids = json::array();
    json lost = json::array();
    for (const auto& c : batch) {
        ids.push_back(c.enrollment_id);
        if (c.was_calling) {
            lost.push_back(c.enrollment_id);
        }
    }
    std::vector<plan_item> items(batch.size());
    std::unordered_map<std::int64_t, std::size_t> index;
    for (std::size_t i = 0; i < batch.size(); ++i) {
        claimed& c = batch[i];
        items[i].row = {c.campaign.get(), &c.lead, std::move(c.state), c.event_cursor};
        items[i].target = target_of(c);
        index.emplace(c.enrollment_id, i);
    }
    for (const auto& r : tx.exec_prepared("engine/pending_events", ids.dump())) {
        items[index.at(r[0].as<std::int64_t>())].events.emplace_back(
            r[1].as<std::int64_t>(), event_kind_from_string(r[2].as<std::string>()).value_or(event_kind::other));
    }
    if (!lost.empty()) {
        post_lost(tx.exec_prepared("engine/close_lost_attempts", lost.dump()), w.lw);
    }
    plan_ports ports;
    ports.gate = gate.get();
    ports.ledger = &ledger_port;
    ports.attempt_ids = [&tx](std::size_t n) {
        std::vector<std::int64_t> out;
        out.reserve(n);
        for (const auto& r : tx.exec_prepared("engine/next_attempt_ids", static_cast<int>(n))) {
            out.push_back(r[0].as<std::int64_t>());
        }
        return out;
    };
    ports.refused = [](const plan_item& it, const std::string& why) {
        spdlog::warn("worker: enrollment={} step={} due event refused: {}", it.target.enrollment_id,
                     it.row.state.step, why);
    };
    // The variant each row had before the plan: a call the locked ledger refuses after the fast
    // path's write set its variant must not leave it behind.
    std::vector<std::string> variants;
    variants.reserve(batch.size());
    for (const auto& c : batch) {
        variants.push_back(c.variant);
    }
    try {
        plan_cycle(items, ports, now(), [&] {
            for (std::size_t i = 0; i < batch.size(); ++i) {
                claimed& c = batch[i];
                plan_item& it = items[i];
                c.state = it.row.state;
                c.event_cursor = it.row.event_cursor;
                c.call = it.call;
                c.attempt_id = it.attempt_id;
                c.variant = c.call && !c.call->variant.empty() ? c.call->variant : variants[i];
            }
            write_plan(tx, batch, touched, w);
        });
    } catch (...) {
        // plan_cycle gave back the gate's takes: cycle() must not give them back again.
        for (auto& c : batch) {
            c.call.reset();
        }
        throw;
    }
    w.transitions += batch.size();
}

// Attempts whose worker died: they may have been charged, so their whole reservation is posted.
void worker::impl::post_lost(const pqxx::result& lost, ledger_work& lw) {
    auto& posts = lw.posts;
    for (const auto& r : lost) {
        cs::api_call call;
        auto name = r[1].as<std::string>();
        call.reconcile = r[2].as<bool>();
        if (call.reconcile) {
            call.kind = name == "send" ? cs::call_kind::get_conversation : cs::call_kind::check_invitation;
        } else if (auto k = cs::call_kind_from_string(name); k) {
            call.kind = *k;
        }
        posts.emplace_back(r[0].as<std::int64_t>(), credits_upper_bound(call));
    }
}

// Records the outcomes of `done`'s calls and the states the planner chose after them
// (planner::settle), and the ledger's part (posts and voids, applied by the cycle's pg_ledger).
// With `chain` (the cycle's own settle, not settle_alone): a row whose next step is due at once
// and that this lane still holds (engine/chain_hold) is not released to be claimed again; it moves
// from `done` to `chain` with that state and its outcome (claimed::settled), and finish_cycle
// plans the step and writes both in one row version (`done` keeps what settle_alone needs to
// write the settle again, unsettled::replay, should the cycle's transaction fail). Not when a call
// of the batch found its account unavailable or the key out of credits (the settle then parks
// rows), nor when the worker was asked to stop before this settle.
void worker::impl::settle(pqxx::work& tx, unsettled& done, json& touched, cycle_work& w,
                          std::vector<claimed>* chain) {
    auto& posts = w.lw.posts;
    auto& voids = w.lw.voids;
    std::map<std::string, std::string> unavailable;  // account -> the error that said so
    std::string out_of_credits;
    auto t = now();
    std::vector<cs::enrollment_state> nexts;
    nexts.reserve(done.calls.size());
    std::string due_now = "{";  // ids of the rows whose next step is due at once
    for (std::size_t i = 0; i < done.calls.size(); ++i) {
        claimed& c = done.batch[done.calls[i]];
        call_outcome& o = done.outcomes[i];
        call_target target = target_of(c);
        // Once only: a settle retried after a rolled-back transaction must not refund quota or
        // record a cooldown twice (the retry_at it set is kept in the outcome).
        if (!done.gated) {
            if (auto not_before = gate->after(target, *c.campaign, *c.call, o); not_before) {
                o.event.retry_at = std::max(o.event.retry_at, *not_before);
            }
        }
        const planner::row r{c.campaign.get(), &c.lead, c.state, c.event_cursor};
        planner::settled p = planner::settle(r, *c.call, o, t);
        if (!p.refused.empty()) {
            spdlog::error("worker: enrollment={} result refused by the state machine: {}", c.enrollment_id, p.refused);
        }
        if (p.due_now) {
            due_now += (due_now.size() > 1 ? "," : "") + std::to_string(c.enrollment_id);
        }
        nexts.push_back(std::move(p.next));
        if (p.ledger.post) {
            posts.emplace_back(c.attempt_id, p.ledger.credits);
        } else {
            voids.push_back(c.attempt_id);
        }
        if (o.consequence == call_consequence::pause_account) {
            unavailable[c.account_id] = o.error;
        } else if (o.consequence == call_consequence::pause_budget) {
            out_of_credits = o.error;
        } else if (o.consequence == call_consequence::stop_everything) {
            spdlog::critical("worker: the API refuses this key or TLS setup ({}); stopping", o.error);
            failed = true;
            stop();
        }
    }
    done.gated = true;
    std::set<std::int64_t> holding;
    if (chain != nullptr && !stopping && unavailable.empty() && out_of_credits.empty() &&
        due_now.size() > 1) {
        for (const auto& r : tx.exec_prepared("engine/chain_hold", due_now + "}", w.owner)) {
            holding.insert(r[0].as<std::int64_t>());
        }
    }
    unsettled::replay r;
    record_rows rows(batch_rows::settle);
    record_rows held_rows(batch_rows::settle);
    std::vector<settled_call> held_calls;  // parallel to the held rows
    for (std::size_t i = 0; i < done.calls.size(); ++i) {
        const claimed& c = done.batch[done.calls[i]];
        const call_outcome& o = done.outcomes[i];
        settled_call h{c.attempt_id, o.attempt_outcome, o.error, attempt_action(*c.campaign, c.state.step, *c.call),
                       o.credits};
        if (chain != nullptr) {
            r.touched.push_back(c.enrollment_id);
        }
        if (holding.count(c.enrollment_id) != 0) {
            settle_row(held_rows, c, nexts[i], h);
            held_calls.push_back(std::move(h));
            continue;   // cycle() passes it to wake_pending if its next step starts no call
        }
        touched.push_back(c.enrollment_id);
        settle_row(rows, c, nexts[i], h);
    }
    r.rows = rows.text();
    r.held_rows = held_rows.text();
    r.unavailable = std::move(unavailable);
    r.out_of_credits = std::move(out_of_credits);
    r.calls = done.calls.size();
    if (chain != nullptr) {
        // What settle_alone needs besides the rows (the posts and voids stay in `w` for this
        // transaction's ledger).
        r.posts = posts;
        r.voids = voids;
        done.again = std::move(r);
        // The held rows go on in the cycle's batch; `done` is let go after this (the replay
        // above stands for it if the transaction fails).
        std::size_t k = 0;
        for (std::size_t i = 0; i < done.calls.size(); ++i) {
            claimed& c = done.batch[done.calls[i]];
            if (holding.count(c.enrollment_id) == 0) {
                continue;
            }
            claimed next = std::move(c);
            next.state = std::move(nexts[i]);
            next.was_calling = false;
            next.call.reset();
            next.attempt_id = 0;
            next.settled = std::make_shared<const settled_call>(std::move(held_calls[k++]));
            chain->push_back(std::move(next));
        }
        write_settle(tx, *done.again, false, w);
    } else {
        write_settle(tx, r, true, w);  // nothing is held without a chain
    }
    w.chained += holding.size();
}

// engine/settle over `r`'s rows (with `held_too`, the held ones as well: released), then what the
// calls found (accounts unavailable, the key out of credits). Counts the calls in `w`; the
// caller adds the posts and voids to its ledger work.
void worker::impl::write_settle(pqxx::work& tx, const unsettled::replay& r, bool held_too, cycle_work& w) {
    if (!r.rows.empty()) {
        tx.exec_prepared("engine/settle", r.rows, w.owner, cfg.lease_seconds);
    }
    if (held_too && !r.held_rows.empty()) {
        tx.exec_prepared("engine/settle", r.held_rows, w.owner, cfg.lease_seconds);
    }
    // After the settle statement, so this batch's rows are no longer `calling`: they are parked
    // and, when their campaign chose it, reassigned with the others.
    for (const auto& [account, error] : r.unavailable) {
        auto moved = account_unavailable(tx, account, "INACTIVE");
        spdlog::warn("worker: account={} paused ({}); {} leads moved to other senders", account, error, moved);
    }
    if (!r.out_of_credits.empty()) {
        auto n = pause_for_credits(tx, "the API key is out of credits (" + r.out_of_credits + ")");
        spdlog::warn("worker: the API key is out of credits ({}): {} campaigns paused until serve reads a "
                     "positive balance", r.out_of_credits, n);
    }
    w.transitions += r.calls;
    w.calls += r.calls;
}

// One transaction: settle the calls that have come back (if any), claim up to `room` rows (those
// settled rows whose next step is due at once count against it), write every new state and
// intent, wake_pending over every row written and released (its fresh snapshot catches inbox
// events committed while those statements ran), then the ledger. The rows with a call come back
// to the lane, to be started once this commits.
worker::impl::cycle_result worker::impl::cycle(pqxx::connection& conn, std::optional<unsettled>& pending,
                                               const std::string& owner, std::size_t room) {
    std::vector<claimed> batch;  // the settled rows that go on at once (claimed::settled), then the claimed ones
    cycle_result result;
    try {
        pqxx::work tx(conn);
        json touched = json::array();
        cycle_work w{owner, {}};
        if (pending) {
            settle(tx, *pending, touched, w, &batch);
            pending->let_go();
        }
        if (!stopping && room > batch.size()) {
            const auto asked = static_cast<std::int64_t>(room - batch.size());
            const auto before = batch.size();
            claim(tx, asked, batch);
            result.drained = static_cast<std::int64_t>(batch.size() - before) < asked;
        } else {
            result.drained = stopping;
        }
        finish_cycle(tx, batch, touched, w);
        tx.commit();
        w.committed(stats);
        for (auto& c : batch) {
            c.settled.reset();
        }
    } catch (...) {
        // The claim rolled back: the rate-limit takes of its calls (Redis is not rolled back)
        // are given back. The settle rolled back with it: try it on its own so finished calls do
        // not wait for their lease to expire (if this fails too, the lease expiry reconciles them).
        for (auto& c : batch) {
            if (c.call) {
                gate->released(target_of(c), *c.campaign, *c.call);
            }
        }
        settle_alone(conn, pending, owner);
        throw;
    }
    pending.reset();
    for (auto& c : batch) {
        if (c.call) {
            result.calls.push_back(std::make_unique<claimed>(std::move(c)));
        }
    }
    return result;
}

void worker::impl::enqueue(const std::shared_ptr<call_queue>& q, std::vector<claimed*> jobs) {
    q->in_flight += jobs.size();
    asio::post(io, [this, q, jobs = std::move(jobs)] {
        // A call beyond the lane's share would only wait for a connection, holding its coroutine
        // frames meanwhile (about 4 KB each), so the others wait in the window as plain jobs.
        for (claimed* job : jobs) {
            q->window.add([this, q, job] { return run_one(q, job); });
        }
    });
}

asio::awaitable<void> worker::impl::run_one(std::shared_ptr<call_queue> q, claimed* job) {
    call_queue::finished f;
    f.enrollment_id = job->enrollment_id;
    try {
        call_job j{target_of(*job), job->campaign.get(), &*job->call, job->company, job->state.attempt};
        co_await send_checked(ports, j, q->rng, f.outcome);
    } catch (...) {
        f.failure = std::current_exception();
    }
    const bool all_back = --q->in_flight == 0;
    bool wake = false;
    {
        std::lock_guard lock(q->m);
        q->done.push_back(std::move(f));
        // The lane is woken when its first call comes back (it then times the settle delay),
        // when a batch's worth is back, and when nothing is left running: not once per call (a
        // wake-up per call cost a futex wake-up and a context switch per call).
        if (q->done.size() == 1) {
            q->first_done = std::chrono::steady_clock::now();
            wake = true;
        }
        wake = wake || all_back || q->done.size() >= static_cast<std::size_t>(cfg.batch_size) ||
               q->done.back().failure != nullptr;
    }
    if (wake) {
        q->cv.notify_all();
    }
}

void worker::impl::settle_alone(pqxx::connection& conn, std::optional<unsettled>& pending, const std::string& owner) {
    if (!pending) {
        return;
    }
    try {
        pqxx::work tx(conn);
        json touched = json::array();
        cycle_work w{owner, {}};
        if (pending->again) {
            const auto& r = *pending->again;
            write_settle(tx, r, true, w);
            w.lw.posts = r.posts;
            w.lw.voids = r.voids;
            touched = r.touched;
        } else {
            settle(tx, *pending, touched, w);
        }
        std::vector<claimed> none;
        finish_cycle(tx, none, touched, w);
        tx.commit();
        w.committed(stats);
    } catch (const std::exception& e) {
        spdlog::error("worker: settling {} calls failed ({}); their leases expire and they are reconciled",
                      pending->again ? pending->again->calls : pending->calls.size(), e.what());
    }
    pending.reset();
}

// LISTEN orch_wake on a connection of its own; every notification wakes the idle lanes.
void worker::impl::listen() {
    struct receiver final : pqxx::notification_receiver {
        impl& self;
        receiver(pqxx::connection& c, impl& s) : pqxx::notification_receiver(c, "orch_wake"), self(s) {}
        void operator()(const std::string&, int) override { self.notify_lanes(); }
    };
    struct dnc_receiver final : pqxx::notification_receiver {
        bool changed = false;
        explicit dnc_receiver(pqxx::connection& c) : pqxx::notification_receiver(c, dnc::changed_channel) {}
        void operator()(const std::string&, int) override { changed = true; }
    };
    while (!stopping) {
        try {
            pqxx::connection conn(cfg.database_url);
            receiver r(conn, *this);
            dnc_receiver list_changed(conn);
            // Listening first, then loading: an add committed in between is in the load or
            // notifies after it.
            do_not_contact.load(conn);
            auto loaded = std::chrono::steady_clock::now();
            const auto reload_every = std::chrono::seconds(dnc::mirror::reload_every_seconds);
            while (!stopping) {
                // Notifications libpq already read (with LISTEN's answer, say) first: the socket
                // does not show them. A broken connection makes the socket readable too, and
                // get_notifs() then throws.
                conn.get_notifs();
                if (list_changed.changed || std::chrono::steady_clock::now() - loaded >= reload_every) {
                    list_changed.changed = false;
                    do_not_contact.load(conn);
                    loaded = std::chrono::steady_clock::now();
                }
                wait_readable_or_stop(conn.sock(), 1'000);
            }
        } catch (const std::exception& e) {
            spdlog::warn("worker: wake-up listener lost its connection ({}); lanes poll every {} ms meanwhile",
                         e.what(), cfg.idle_poll_ms);
            wait_readable_or_stop(-1, 1000);
        }
    }
}

void worker::impl::lane(int index) {
    const std::shared_ptr<call_queue> q = queues[static_cast<std::size_t>(index)];
    claim_sweep sweep{0, std::minstd_rand(std::random_device{}() ^ static_cast<std::uint_fast32_t>(index))};
    lane_sweep = &sweep;
    // Each lane leases in its own name: a lane whose lease expired while its call ran cannot
    // settle over (or go on from) a row another lane of this worker has claimed since.
    const std::string owner = cfg.worker_id + "/" + std::to_string(index);
    using steady = std::chrono::steady_clock;
    const auto settle_delay = std::chrono::milliseconds(cfg.settle_delay_ms);
    const auto idle_poll = std::chrono::milliseconds(cfg.idle_poll_ms);
    // The rows this lane leased whose calls are queued or running: at most batch_size, so a
    // lane's memory and the rows it keeps from other lanes are bounded; the calls themselves run
    // at most the lane's share of the API connections at once.
    const auto max_held = static_cast<std::size_t>(cfg.batch_size);
    const std::size_t claim_min = std::max<std::size_t>(1, max_held / 2);
    std::unordered_map<std::int64_t, std::unique_ptr<claimed>> held;
    std::unique_ptr<pqxx::connection> conn;
    std::optional<unsettled> pending;
    bool drained = false;  // the last claim found less than it asked for
    std::uint64_t wakes_seen = 0;
    steady::time_point last_claim{};
    steady::time_point last_cycle_end{};
    steady::duration last_cycle{};
    for (;;) {
        std::vector<call_queue::finished> back;
        bool claim_now = false;
        {
            std::unique_lock lock(q->m);
            for (;;) {
                const bool stop = stopping;
                const auto t = steady::now();
                const std::size_t running = held.size() - q->done.size();
                if (stop && running == 0 && q->done.empty()) {
                    break;
                }
                // The delay is the longer of settle_delay_ms and twice the lane's last cycle:
                // a lane spends at most about a third of its time in transactions, so when
                // commits slow down (the campaigns' balance rows are shared by every lane) the
                // lane settles fewer, larger batches instead of queueing more small ones.
                const auto delay = std::max<steady::duration>(settle_delay, 2 * last_cycle);
                const bool settle_now =
                    !q->done.empty() && (stop || running == 0 || q->done.size() >= max_held ||
                                          (t - q->first_done >= settle_delay && t - last_cycle_end >= delay));
                // A claim rides along with every settle; on its own it waits until half the
                // lane's rows are free, so that a lane does not commit a transaction per call.
                const std::size_t free = stop || running >= max_held ? 0 : max_held - running;
                const bool may_claim =
                    free > 0 && (!drained || q->wakes != wakes_seen || t - last_claim >= idle_poll);
                claim_now = may_claim && (settle_now || free >= claim_min);
                if (settle_now || claim_now) {
                    break;
                }
                auto until = t + std::chrono::seconds(1);
                if (!q->done.empty()) {
                    until = std::min(until, std::max(q->first_done + settle_delay, last_cycle_end + delay));
                }
                if (free >= claim_min) {
                    until = std::min(until, last_claim + idle_poll);
                }
                q->cv.wait_until(lock, until);
            }
            back.swap(q->done);
            wakes_seen = q->wakes;
        }
        if (back.empty() && !claim_now) {
            break;  // stopping, and nothing is left in flight
        }
        if (!back.empty()) {
            unsettled u;
            u.batch.reserve(back.size());
            for (auto& f : back) {
                auto it = held.find(f.enrollment_id);
                ORCH_INVARIANT(it != held.end(), "lane {} got back a call it does not hold (enrollment {})", index,
                               f.enrollment_id);
                if (f.failure) {
                    // Its lease expires and whoever claims it next reconciles it.
                    try {
                        std::rethrow_exception(f.failure);
                    } catch (const std::exception& e) {
                        spdlog::error("worker: lane={} enrollment={} call failed: {}", index, f.enrollment_id,
                                      e.what());
                    } catch (...) {
                        spdlog::error("worker: lane={} enrollment={} call failed", index, f.enrollment_id);
                    }
                    held.erase(it);
                    continue;
                }
                u.calls.push_back(u.batch.size());
                u.batch.push_back(std::move(*it->second));
                u.outcomes.push_back(std::move(f.outcome));
                held.erase(it);
            }
            if (!u.calls.empty()) {
                pending = std::move(u);
            }
        }
        try {
            if (!conn) {
                conn = std::make_unique<pqxx::connection>(cfg.database_url);
                prepare_hot_statements(*conn);
                sweep.slice = claim_start_slice(*conn, sweep.rng);
            }
            const std::size_t room = max_held > held.size() ? max_held - held.size() : 0;
            if (claim_now) {
                last_claim = steady::now();
            }
            const auto cycle_start = steady::now();
            auto r = cycle(*conn, pending, owner, claim_now ? room : 0);
            last_cycle_end = steady::now();
            last_cycle = last_cycle_end - cycle_start;
            ++stats.cycles;
            if (claim_now) {
                drained = r.drained;
            }
            if (!r.calls.empty()) {
                std::vector<claimed*> jobs;
                jobs.reserve(r.calls.size());
                for (auto& c : r.calls) {
                    jobs.push_back(c.get());
                    const auto id = c->enrollment_id;
                    held.emplace(id, std::move(c));
                }
                enqueue(q, std::move(jobs));
            }
        } catch (...) {
            // A failed transaction rolled back: the claimed rows are untouched, or leased and
            // reconciled after the lease. Nothing is lost; what the lane does next depends on the
            // failure's category (engine/result.hpp).
            const error e = error_of_current_exception();
            pending.reset();
            switch (e.category) {
            case error_category::unavailable:
                spdlog::warn("worker: lane={} database unavailable ({}); reconnecting", index, e.message);
                conn.reset();
                std::this_thread::sleep_for(std::chrono::milliseconds(500));
                break;
            case error_category::contended:
                // A deadlock or a serialization failure: PostgreSQL chose this transaction; the
                // next cycle goes on soon.
                spdlog::info("worker: lane={} cycle rolled back ({}); going on", index, e.message);
                std::this_thread::sleep_for(std::chrono::milliseconds(20));
                break;
            default:
                spdlog::error("worker: lane={} cycle failed ({}): {}", index, to_string(e.category), e.message);
                std::this_thread::sleep_for(std::chrono::milliseconds(500));
                break;
            }
        }
    }
}

worker::worker(settings s) : impl_(std::make_unique<impl>(std::move(s))) {}
worker::~worker() = default;

void worker::request_stop() { impl_->stop(); }
const worker_stats& worker::stats() const { return impl_->stats; }

int worker::run(bool exit_when_idle) {
    auto& m = *impl_;
    {
        store s(m.cfg.database_url);
        s.require_current();
    }
    auto made = outreach::client::make(m.io.get_executor(),
                                       api_client_settings(m.cfg, static_cast<std::size_t>(m.cfg.api_pool_size)));
    if (!made) {
        spdlog::critical("worker: bad API settings: {}", outreach::describe(made.error()));
        return 2;
    }
    m.api.emplace(std::move(*made));
    auto limits_cfg = limiter_settings(m.cfg);
    if (auto problems = limits::validate(limits_cfg); !problems.empty()) {
        spdlog::critical("worker: bad rate-limit settings: {}", problems.front());
        return 2;
    }
    m.gate = std::make_unique<limits_gate>(std::move(limits_cfg), m.cfg.pacing);
    m.client_api.emplace(*m.api);
    m.ports.api = &*m.client_api;
    m.ports.gate = m.gate.get();
    m.ports.do_not_contact = [&m](const std::string& profile_url, const std::string& company) {
        return m.do_not_contact.blocks(profile_url, company);
    };
    m.ports.clock = &impl::now;
    m.ports.backoff = m.backoff;
    {
        // Before the first call: the listener reloads it from then on.
        store s(m.cfg.database_url);
        m.do_not_contact.load(s.connection());
        // The gate's waits were decided under the settings of the workers before this one: the
        // leads they parked are looked at again under this worker's (pacing turned off, a quota
        // raised), not when the old wait ends.
        pqxx::work tx(s.connection());
        const auto woken = tx.exec(q("engine/wake_gate_waiters"))[0][0].as<std::int64_t>();
        tx.commit();
        if (woken > 0) {
            spdlog::info("worker: {} leads waiting for a quota, the pacing or the key's rate are due again under "
                         "this worker's settings", woken);
        }
    }
    auto guard = asio::make_work_guard(m.io);
    std::thread net([&m] { m.io.run(); });
    std::thread listener([&m] { m.listen(); });
    std::vector<std::thread> lanes;
    for (int i = 0; i < m.cfg.worker_lanes; ++i) {
        lanes.emplace_back([&m, i] { m.lane(i); });
    }
    spdlog::info("worker: {} started with {} lanes, batch {}, API {}", m.cfg.worker_id, m.cfg.worker_lanes,
                 m.cfg.batch_size, m.cfg.api_url);
    {
        std::optional<store> s;
        if (exit_when_idle) {
            s.emplace(m.cfg.database_url);
        }
        const auto every = std::chrono::seconds(m.cfg.progress_log_seconds);
        auto last = std::chrono::steady_clock::now();
        std::uint64_t last_transitions = 0;
        std::uint64_t last_calls = 0;
        while (!m.stopping) {
            // live_total reads a few funnel_counts rows: polling often costs nothing and ends
            // the run (the demo's, a benchmark's) close to when the last lead finished.
            m.wait_readable_or_stop(-1, exit_when_idle ? 20 : 1000);
            if (s) {
                pqxx::nontransaction tx(s->connection());
                if (tx.exec(q("engine/live_total"))[0][0].as<std::int64_t>() == 0) {
                    m.stop();
                }
            }
            const auto t = std::chrono::steady_clock::now();
            if (every.count() > 0 && t - last >= every) {
                const auto transitions = m.stats.transitions.load();
                const auto calls = m.stats.calls.load();
                const double secs = std::chrono::duration<double>(t - last).count();
                std::size_t in_flight = 0;
                for (const auto& lane_queue : m.queues) {
                    in_flight += lane_queue->in_flight.load();
                }
                spdlog::info("worker: progress: {} transitions ({:.0f}/s), {} API calls ({:.1f}/s) in the last {:.0f} s; "
                             "{} calls queued or in flight; {} in total",
                             transitions - last_transitions, static_cast<double>(transitions - last_transitions) / secs,
                             calls - last_calls, static_cast<double>(calls - last_calls) / secs, secs, in_flight,
                             transitions);
                last = t;
                last_transitions = transitions;
                last_calls = calls;
            }
        }
    }
    for (auto& t : lanes) {
        t.join();
    }
    listener.join();
    m.api->shutdown();
    guard.reset();
    m.io.stop();
    net.join();
    spdlog::info("worker: {} stopped after {} transitions, {} calls ({} went on to their next step in the cycle "
                 "that settled them); ledger writes: {} on the fast path, {} under locks",
                 m.cfg.worker_id, m.stats.transitions.load(), m.stats.calls.load(), m.stats.chained.load(),
                 m.stats.ledger_fast.load(), m.stats.ledger_locked.load());
    return m.failed ? 1 : 0;
}

}  // namespace orch::engine
