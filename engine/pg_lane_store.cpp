#include "engine/pg_lane_store.hpp"
#include "engine/sql_array.hpp"

#include "api/text.hpp"
#include "campaigns/loader.hpp"
#include "engine/batch_rows.hpp"
#include "engine/record_rows.hpp"
#include "engine/store.hpp"
#include "schema/schema.hpp"

#include <nlohmann/json.hpp>
#include <pqxx/pqxx>
#include <spdlog/spdlog.h>

#include <chrono>
#include <map>
#include <unordered_map>

namespace orch::engine {

namespace cs = campaigns;
using json = nlohmann::json;

namespace {

std::string q(std::string_view name) { return std::string(schema::query(name)); }

// The hot-path statements, prepared once per lane connection (parsed and planned once).
constexpr const char* hot_statements[] = {
    "engine/claim_pick_slices",  "engine/claim_due",    "engine/pending_events",
    "engine/apply_transitions",  "engine/wake_pending", "engine/insert_intents",
    "engine/close_lost_attempts", "engine/settle",      "engine/next_attempt_ids",
    "engine/chain_hold",         "engine/lane_enter",
};

constexpr int claim_slices = 64;  // migration 0019's enrollment_id % 64
// Slices a pick visits before it takes the rest of its batch in due order over all slices: near
// the end of the due work, not 64 probes of empty slices per idle poll.
constexpr int claim_hops = 8;

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

// Opens a row of `rows` with the enrollment's state `s` (the statement adds its own fields).
record_rows& state_row(record_rows& rows, const lane_row& c, const cs::enrollment_state& s) {
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
record_rows& settle_row(record_rows& rows, const lane_row& c, const cs::enrollment_state& s, const settled_call& h) {
    return state_row(rows, c, s)
        .add("attempt_id", h.attempt_id)
        .add("outcome", to_string(h.outcome))
        .add("error", h.error)
        .add("credits", h.credits)
        .add("call", h.call);
}

json ids_json(const std::vector<std::int64_t>& ids) {
    json a = json::array();
    for (auto id : ids) {
        a.push_back(id);
    }
    return a;
}

}  // namespace

std::shared_ptr<const cached_campaign> campaign_cache::get(pqxx::work& tx, std::int64_t id, int version) {
    std::lock_guard lock(mutex_);
    auto key = std::make_pair(id, version);
    if (auto* hit = cache_.find(key)) {
        return *hit;
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
    cache_.put(key, c);
    return c;
}

void prepare_hot_statements(pqxx::connection& conn) {
    for (const char* name : hot_statements) {
        conn.prepare(name, q(name));
    }
}

session_others name_lane_session(pqxx::connection& conn, std::int64_t slots, const std::string& limits,
                                 const std::string& owner) {
    pqxx::nontransaction tx(conn);
    tx.exec_params("SELECT set_config('application_name', $1, false)",
                   "orch-worker slots=" + std::to_string(slots) + " limits=" + limits + " " + owner);
    session_others others;
    for (const auto& r : tx.exec_params(q("engine/lane_session_others"), std::to_string(slots))) {
        others.slots.push_back(r[0].as<std::int64_t>());
    }
    others.other_limits = tx.exec_params1(q("engine/limits_session_others"), limits)[0].as<std::int64_t>();
    return others;
}

std::int64_t name_serve_session(pqxx::connection& conn, const std::string& limits, const std::string& owner) {
    pqxx::nontransaction tx(conn);
    tx.exec_params("SELECT set_config('application_name', $1, false)", "orch-serve limits=" + limits + " " + owner);
    return tx.exec_params1(q("engine/limits_session_others"), limits)[0].as<std::int64_t>();
}

// From the claim slot bit-reversed, so that lanes of all processes start evenly spread without
// knowing how many there are; a random slice when all slots are held.
void start_sweep(pqxx::connection& conn, claim_sweep& sweep) {
    pqxx::nontransaction tx(conn);
    const auto r = tx.exec(q("engine/claim_slot"));
    if (r.empty()) {
        sweep.slot = -1;
        sweep.slice = static_cast<int>(sweep.rng() % claim_slices);
        return;
    }
    sweep.slot = r[0][0].as<int>();
    static_assert(claim_slices == 64);
    sweep.slice = 0;
    for (int bit = 0; bit < 6; ++bit) {  // 64 = 2^6 slices
        sweep.slice |= ((sweep.slot >> bit) & 1) << (5 - bit);
    }
}

// What the cycle's settle wrote, as settle_again writes it if that transaction fails: every
// call's row released (those the cycle held on to its next step too). It stands for the settled
// batch, which is let go before the cycle claims (about 0.5 KB per in-flight lead,
// tests/bench/engine_bench.sh's memory part).
struct pg_lane_store::replay final : settle_replay {
    std::string rows;       // engine/settle's rows, those not held on
    std::string held_rows;  // engine/settle's rows, those held on
    std::vector<std::int64_t> touched;
    std::vector<ledger::post_request> posts;
    std::vector<std::int64_t> voids;
    std::map<std::string, unavailable_account> unavailable;
    std::string out_of_credits;
};

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
class pg_lane_store::pg_ledger final : public ledger_port {
public:
    explicit pg_ledger(pg_lane_store& s) : s_(s), tx_(s.tx_) {}

    void reserve(std::span<const ledger_ask> asks,
                 const std::function<void(std::span<const planner::verdict>)>& write) override {
        std::vector<ledger::reserve_request> reserves;
        reserves.reserve(asks.size());
        for (const auto& a : asks) {
            const call_target& t = a.item->target;
            reserves.push_back({a.attempt_id, t.campaign_id, t.account_id, a.action, a.credits});
        }
        const std::vector<planner::verdict> all_allowed(asks.size());
        if (s_.posts_.empty() && s_.voids_.empty() && reserves.empty()) {
            write(all_allowed);
            wake_held_of_capped();
            return;
        }
        tx_.exec0("SAVEPOINT ledger_fast");
        if (auto fast = fast_path(asks, reserves, write); fast) {
            tx_.exec0("RELEASE SAVEPOINT ledger_fast");
            ++s_.lane_.stats.ledger_fast;
            wake_held_of_capped();
            return;
        } else {
            spdlog::debug("worker: the ledger takes the locked path: {}", fast.error().message);
        }
        tx_.exec0("ROLLBACK TO SAVEPOINT ledger_fast");
        ++s_.lane_.stats.ledger_locked;
        const auto t = s_.lane_.clock.now();
        std::map<std::int64_t, std::string> parked;   // campaign id -> why it was paused, for the log
        if (!s_.posts_.empty() || !s_.voids_.empty()) {
            // A charge above its reservation that the budget could not cover pauses the campaign
            // (the ledger does, in this transaction): its waiting leads are parked like any other
            // paused campaign's, so claims do not walk past them.
            json short_of_budget = json::array();
            for (const auto& s : ledger::settle(tx_, s_.posts_, s_.voids_, t)) {
                if (s.shortfall > 0) {
                    short_of_budget.push_back(s.attempt_id);
                }
            }
            if (!short_of_budget.empty()) {
                for (const auto& r : tx_.exec_params(q("engine/paused_campaigns_of_attempts"), short_of_budget.dump())) {
                    parked.emplace(r[0].as<std::int64_t>(), "a charge above its reservation exhausted its budget");
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
                    parked.emplace(asks[i].item->target.campaign_id, "its budget cannot cover the next call");
                } else if (r.why == ledger::refusal::day_budget || r.why == ledger::refusal::account_budget) {
                    note_capped(asks[i].item->target, r.why, r.available);
                }
            }
            if (!dropped.empty()) {
                tx_.exec_params(q("engine/drop_intents"), dropped.dump());
            }
        }
        write(verdicts);
        wake_held_of_capped();
        // After the rows, so that the batch's rows of these campaigns are parked too.
        for (const auto& [campaign_id, why] : parked) {
            const auto named = tx_.exec_params(q("engine/park_campaign"), campaign_id);
            spdlog::warn("worker: campaign '{}' (id {}) paused: {}",
                         named.empty() ? std::string("?") : orch::text::escaped(named[0][0].as<std::string>()),
                         campaign_id, why);
        }
    }

    std::vector<planner::verdict> standing_refusals(std::span<const ledger_ask> asks, cs::time_point now) override {
        std::vector<ledger::reserve_request> requests;
        requests.reserve(asks.size());
        for (const auto& a : asks) {
            const call_target& t = a.item->target;
            requests.push_back({a.attempt_id, t.campaign_id, t.account_id, a.action, a.credits});
        }
        std::vector<planner::verdict> out(asks.size());
        const auto refused = ledger::standing_refusals(tx_, requests, now);
        for (std::size_t i = 0; i < asks.size(); ++i) {
            if (refused[i].why != ledger::refusal::none) {
                out[i] = planner::ledger_refused(refused[i].why, refused[i].retry_at, asks[i].item->target.account_id, now);
                if (refused[i].why == ledger::refusal::day_budget || refused[i].why == ledger::refusal::account_budget) {
                    note_capped(asks[i].item->target, refused[i].why, refused[i].available);
                }
            }
        }
        return out;
    }

private:
    // A cap that refused a call in this cycle (the campaign's day cap, or its cap on the call's
    // sender), with what the cap had left.
    void note_capped(const call_target& t, ledger::refusal why, std::int64_t left) {
        auto [it, fresh] = capped_.try_emplace({t.campaign_id, why == ledger::refusal::day_budget ? "" : t.account_id}, left);
        if (!fresh) {
            it->second = std::min(it->second, left);
        }
    }
    // The caps that refused calls in this cycle: the leads they refuse that the gate holds back
    // for a moment are woken to meet the cap (engine/wake_held_of_capped), once a
    // capped_wake_every per cap and lane, and again at once when the cap has less left than at
    // the last wake-up; and each wake-up once more capped_wake_again later. After the plan's rows
    // are written, so that this batch's own rows keep the waits just decided.
    void wake_held_of_capped() {
        auto& sweep = s_.lane_.sweep;
        if (capped_.empty() && sweep.capped_again.empty()) {
            return;
        }
        const auto now = s_.lane_.clock.now();
        json due = json::array();
        std::string capped_text;   // each cap and what it had left, for the log
        const auto name = [&](const claim_sweep::cap_key& cap) {
            capped_text += (capped_text.empty() ? "" : "; ") + std::string("campaign ") + std::to_string(cap.first) +
                           (cap.second.empty() ? "'s day cap" : "'s cap on " + orch::text::escaped(cap.second));
            due.push_back(json::array({cap.first, cap.second}));
        };
        for (const auto& [cap, left] : capped_) {
            const auto last = sweep.capped_woken.find(cap);
            if (capped_wake_due(last == sweep.capped_woken.end() ? nullptr : &last->second, left, now)) {
                sweep.capped_woken[cap] = {now, left};
                sweep.capped_again[cap] = now + capped_wake_again;
                name(cap);
                capped_text += " with " + orch::text::counted(left, "credit", "credits") + " left";
            }
        }
        capped_.clear();
        // The second look at a wake-up (one just woken above is due again later).
        for (auto it = sweep.capped_again.begin(); it != sweep.capped_again.end();) {
            if (it->second > now) {
                ++it;
                continue;
            }
            name(it->first);
            capped_text += " again (for leads another lane held at the first wake-up)";
            it = sweep.capped_again.erase(it);
        }
        if (!due.empty()) {
            const auto woken = tx_.exec_params(q("engine/wake_held_of_capped"), due.dump())[0][0].as<std::int64_t>();
            if (woken > 0) {
                spdlog::info("worker: {} leads held back by the limits gate are due now to meet the cap that refused a "
                             "call of theirs: {}",
                             woken, capped_text);
            }
        }
    }
    std::map<claim_sweep::cap_key, std::int64_t> capped_;   // cap -> the least it had left
    // The fast path: every charge posted and every call reserved without locks, the plan written
    // in between; `contended` when any of it needs the locked path.
    result<void> fast_path(std::span<const ledger_ask> asks, const std::vector<ledger::reserve_request>& reserves,
                           const std::function<void(std::span<const planner::verdict>)>& write) {
        ledger::held_balances held;
        const auto t = s_.lane_.clock.now();
        // The settled calls' charges first: what they release is there for the reservations.
        if (!s_.posts_.empty() || !s_.voids_.empty()) {
            if (auto r = ledger::settle(tx_, s_.posts_, s_.voids_, t, held); !r) {
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
            // Every enrollment was locked by this transaction, so each intent is written; one that
            // is not is a bug, and the transaction must not commit a call without its intent.
            const auto written = tx_.exec_prepared("engine/insert_intents", intents.text(), s_.lane_.owner).affected_rows();
            if (written != asks.size()) {
                throw store_error("engine/insert_intents: wrote " + std::to_string(written) + " of " +
                                  std::to_string(asks.size()) + " intents (an enrollment is missing: a bug; the "
                                  "transaction is rolled back)");
            }
        }
    }
    pg_lane_store& s_;
    pqxx::work& tx_;
};

pg_lane_store::pg_lane_store(pqxx::connection& conn, const lane_refs& lane)
    : lane_(lane), began_(lane.clock.now()), tx_(conn), ledger_(std::make_unique<pg_ledger>(*this)) {
    // The lane gate (migration 0021) first, before any other lock of this transaction, then the
    // lanes' shared lock that a budget change waits on (engine/lane_enter). The gate's wait counts
    // as the cycle's time (the worker's settle delay): the busier the database, the larger the
    // batches a lane settles.
    const auto gates = lane_.cfg.lane_transaction_slots;
    std::int64_t preferred = 0;
    if (gates > 0) {
        preferred = lane_.sweep.slot >= 0 ? lane_.sweep.slot % gates
                                          : static_cast<std::int64_t>(lane_.sweep.rng() % gates);
    }
    if (tx_.exec_prepared1("engine/lane_enter", gates, preferred, lane_gate_wait_ms)[0].as<int>() < 0 && gates > 0) {
        ++lane_.stats.gate_timeouts;
        spdlog::debug("worker: lane {} found every database gate taken for {} ms; going on without one",
                      lane_.owner, lane_gate_wait_ms);
    }
}

pg_lane_store::~pg_lane_store() = default;

ledger_port& pg_lane_store::ledger() { return *ledger_; }

void pg_lane_store::commit() { tx_.commit(); }

// Each outcome and its next state through engine/settle, a compare-and-set on (calling, the
// lane's lease). A row whose next step is due at once and that this lane still holds
// (engine/chain_hold) is not released to be claimed again: it moves to `chain` (lane_row::settled)
// and the cycle plans its step and writes both in one row version; `done.again` keeps what
// settle_again needs to write the settle again, should the cycle's transaction fail.
void pg_lane_store::settle(finished_calls& done, settle_decisions& d, std::vector<lane_row>* chain) {
    auto r = std::make_unique<replay>();
    sql_array due_now;  // ids of the rows that may go on at once
    for (std::size_t i = 0; i < done.calls.size(); ++i) {
        const lane_row& c = done.batch[done.calls[i]];
        if (d.ledger[i].post) {
            posts_.emplace_back(c.attempt_id, d.ledger[i].credits);
        } else {
            voids_.push_back(c.attempt_id);
        }
        if (d.due_now[i]) {
            due_now.add(c.enrollment_id);
        }
    }
    std::set<std::int64_t> holding;
    if (chain != nullptr && !due_now.empty()) {
        for (const auto& row : tx_.exec_prepared("engine/chain_hold", due_now.str(), lane_.owner)) {
            holding.insert(row[0].as<std::int64_t>());
        }
    }
    record_rows rows(batch_rows::settle);
    record_rows held_rows(batch_rows::settle);
    for (std::size_t i = 0; i < done.calls.size(); ++i) {
        const lane_row& c = done.batch[done.calls[i]];
        if (chain != nullptr) {
            r->touched.push_back(c.enrollment_id);
        }
        if (holding.count(c.enrollment_id) != 0) {
            settle_row(held_rows, c, d.nexts[i], d.outcomes[i]);
            continue;  // written by the plan; woken there if its next step starts no call
        }
        touched_.push_back(c.enrollment_id);
        settle_row(rows, c, d.nexts[i], d.outcomes[i]);
    }
    r->rows = rows.text();
    r->held_rows = held_rows.text();
    r->unavailable = std::move(d.unavailable);
    r->out_of_credits = std::move(d.out_of_credits);
    r->calls = done.calls.size();
    if (chain == nullptr) {
        write_settle(*r, true);  // nothing is held without a chain
        return;
    }
    r->posts = posts_;
    r->voids = voids_;
    // Set before anything is moved out of `done` or written: from here on, a failed cycle's
    // settle is written again from it.
    const replay& again = *r;
    done.again = std::move(r);
    for (std::size_t i = 0; i < done.calls.size(); ++i) {
        lane_row& c = done.batch[done.calls[i]];
        if (holding.count(c.enrollment_id) == 0) {
            continue;
        }
        lane_row next = std::move(c);
        next.state = std::move(d.nexts[i]);
        next.was_calling = false;
        next.call.reset();
        next.attempt_id = 0;
        next.settled = std::make_shared<const settled_call>(std::move(d.outcomes[i]));
        chain->push_back(std::move(next));
    }
    write_settle(again, false);
}

void pg_lane_store::settle_again(const settle_replay& base) {
    const auto& r = dynamic_cast<const replay&>(base);
    write_settle(r, true);
    posts_ = r.posts;
    voids_ = r.voids;
    touched_ = r.touched;
}

// engine/settle over `rows`, then engine/settle_facts over those whose outcome it recorded but
// whose enrollment it did not move (cancelled while the call was out): the funnel counts what
// their call did (a cancelled campaign's invite on the wire was sent and billed, and the funnel
// said it was not).
void pg_lane_store::exec_settle(const std::string& rows) {
    json unmoved = json::array();
    for (const auto& row : tx_.exec_prepared("engine/settle", rows, lane_.owner, lane_.cfg.lease_seconds)) {
        if (!row[1].as<bool>()) {
            unmoved.push_back(row[0].as<std::int64_t>());
        }
    }
    if (!unmoved.empty()) {
        tx_.exec_params(q("engine/settle_facts"), rows, unmoved.dump());
    }
}

// engine/settle over `r`'s rows (with `held_too`, the held ones as well: released), then what the
// calls found (accounts unavailable, the key out of credits).
void pg_lane_store::write_settle(const replay& r, bool held_too) {
    if (!r.rows.empty()) {
        exec_settle(r.rows);
    }
    if (held_too && !r.held_rows.empty()) {
        exec_settle(r.held_rows);
    }
    // After the settle statement, so this batch's rows are no longer `calling`: they are parked
    // and, when their campaign chose it, reassigned with the others.
    for (const auto& [account, found] : r.unavailable) {
        auto marked = account_unavailable_if_login(tx_, account, "INACTIVE", found.logins);
        if (!marked) {
            spdlog::debug("worker: account={} answered {} to a call claimed before its latest login: left connected "
                          "(its next call finds out)",
                          orch::text::escaped(account), found.error);
            continue;
        }
        // Said once per pause: by the settle that marked the account, not by every lane that
        // settles the same answer after it.
        if (marked->was_connected) {
            spdlog::warn("worker: account={} paused ({}); {} leads moved to other senders",
                         orch::text::escaped(account), found.error, marked->moved);
        } else if (marked->moved > 0) {
            spdlog::info("worker: account={} is paused: {} more leads moved to other senders",
                         orch::text::escaped(account), marked->moved);
        }
    }
    if (!r.out_of_credits.empty()) {
        auto n = pause_for_credits(tx_, "the API key is out of credits (" + r.out_of_credits + ")");
        spdlog::warn("worker: the API key is out of credits ({}): {} campaigns paused until serve reads a "
                     "positive balance", r.out_of_credits, n);
    }
}

void pg_lane_store::claim(std::size_t limit, std::vector<lane_row>& batch) {
    claim_sweep& sweep = lane_.sweep;
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
        tx_.exec0("SAVEPOINT claim_pick");
        sql_array ids;
        for (const auto& r :
             tx_.exec_prepared("engine/claim_pick_slices", static_cast<std::int64_t>(limit), sweep.slice, claim_hops)) {
            ids.add_text(r[0].c_str());
            sweep.slice = r[1].as<int>();
        }
        const std::size_t picked = ids.size();
        tx_.exec0("ROLLBACK TO SAVEPOINT claim_pick");
        tx_.exec0("RELEASE SAVEPOINT claim_pick");
        if (picked == 0) {
            sweep.slice = (sweep.slice + claim_hops) % claim_slices;
            return;
        }
        rows = tx_.exec_prepared("engine/claim_due", ids.str());
        if (rows.size() < picked) {
            sweep.slice = static_cast<int>(sweep.rng() % claim_slices);
        }
    }
    batch.reserve(batch.size() + rows.size());
    for (const auto& r : rows) {
        lane_row c;
        c.enrollment_id = r[0].as<std::int64_t>();
        c.campaign_id = r[1].as<std::int64_t>();
        auto cached = lane_.cache.get(tx_, c.campaign_id, r[2].as<int>());
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
        c.account_login = r[17].as<std::int64_t>();
        c.account_time_zone = r[18].as<std::string>();
        c.variant = r[19].as<std::string>();
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

void pg_lane_store::pending_events(std::span<const lane_row> batch, std::span<plan_item> items) {
    json ids = json::array();
    std::unordered_map<std::int64_t, std::size_t> index;
    for (std::size_t i = 0; i < batch.size(); ++i) {
        ids.push_back(batch[i].enrollment_id);
        index.emplace(batch[i].enrollment_id, i);
    }
    for (const auto& r : tx_.exec_prepared("engine/pending_events", ids.dump())) {
        items[index.at(r[0].as<std::int64_t>())].events.emplace_back(
            r[1].as<std::int64_t>(), event_kind_from_string(r[2].as<std::string>()).value_or(event_kind::other));
    }
}

// Attempts whose worker died: they may have been charged, so their whole reservation is posted.
void pg_lane_store::close_lost(std::span<const lane_row> batch) {
    json lost = json::array();
    for (const auto& c : batch) {
        if (c.was_calling) {
            lost.push_back(c.enrollment_id);
        }
    }
    if (lost.empty()) {
        return;
    }
    for (const auto& r : tx_.exec_prepared("engine/close_lost_attempts", lost.dump())) {
        cs::api_call call;
        auto name = r[1].as<std::string>();
        call.reconcile = r[2].as<bool>();
        if (call.reconcile) {
            call.kind = name == "send" ? cs::call_kind::get_conversation : cs::call_kind::check_invitation;
        } else if (auto k = cs::call_kind_from_string(name); k) {
            call.kind = *k;
        }
        posts_.emplace_back(r[0].as<std::int64_t>(), credits_upper_bound(call));
    }
}

std::vector<std::int64_t> pg_lane_store::attempt_ids(std::size_t n) {
    std::vector<std::int64_t> out;
    out.reserve(n);
    for (const auto& r : tx_.exec_prepared("engine/next_attempt_ids", static_cast<int>(n))) {
        out.push_back(r[0].as<std::int64_t>());
    }
    return out;
}

// The rows as plan_cycle decided them: the settled rows that went on (lane_row::settled) through
// engine/settle with their outcome, the claimed rows through engine/apply_transitions, and
// wake_pending over every row written and released (its fresh snapshot catches inbox events
// committed while those statements ran). Rows written leased (a call starts) are left out of it:
// an event's writer (events/wake) waits for this transaction's lock on the row, so such an event
// is read by the cycle that settles the call, as by a claim after an expired lease.
void pg_lane_store::write(std::span<const lane_row> batch) {
    record_rows transitions(batch_rows::transition);
    record_rows settles(batch_rows::settle);
    json wake = ids_json(touched_);
    for (const auto& c : batch) {
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
        exec_settle(settles.text());
    }
    if (!transitions.empty()) {
        tx_.exec_prepared("engine/apply_transitions", transitions.text(), lane_.owner, lane_.cfg.lease_seconds);
    }
    if (!wake.empty()) {
        tx_.exec_prepared("engine/wake_pending", wake.dump());
    }
}

}  // namespace orch::engine
