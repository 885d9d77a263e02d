#include "tests/sim/sim.hpp"

#include "campaigns/campaigns.hpp"
#include "campaigns/loader.hpp"
#include "engine/call_path.hpp"
#include "engine/cycle_plan.hpp"
#include "engine/lane_cycle.hpp"
#include "engine/outreach/cost_model.hpp"
#include "engine/planner.hpp"

#include <boost/asio/async_result.hpp>
#include <boost/asio/io_context.hpp>
#include <boost/asio/post.hpp>
#include <boost/asio/use_awaitable.hpp>

#include <algorithm>
#include <cmath>
#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <queue>
#include <random>
#include <set>
#include <sstream>

namespace orch::sim {

namespace {

namespace asio = boost::asio;
namespace cs = campaigns;
namespace eng = engine;
using cs::time_point;
using std::chrono::milliseconds;
using std::chrono::seconds;

// Monday 2024-03-04 10:00 UTC.
const time_point t0 = time_point{} + seconds{1709546400};

constexpr const char* campaign_text = R"(name: sim
accounts: [ACCOUNTS]
audience:
  file: leads.csv
schedule:
  time_zone: UTC
  days: [mon, tue, wed, thu, fri, sat, sun]
  hours: "00:00-24:00"
budget_credits: BUDGET
stop_on_reply: true
max_attempts: 4
steps:
  - id: invite
    kind: invite
    note: "Hi {{first_name}}"
  - id: wait
    kind: wait_accepted
    timeout: 3d
    next: intro
    on_timeout: withdraw
  - id: intro
    kind: send
    message_text: "Thanks for connecting, {{first_name}}."
  - id: pause
    kind: delay
    duration: 1d
  - id: follow_up
    kind: send
    message_text: "Following up, {{first_name}}."
  - id: finished
    kind: end
  - id: withdraw
    kind: withdraw
    next: end
)";

std::uint64_t fnv(std::uint64_t h, std::string_view s) {
    for (unsigned char c : s) {
        h = (h ^ c) * 1099511628211ULL;
    }
    return (h ^ 0xff) * 1099511628211ULL;
}

std::string day_of(time_point t) {
    return std::to_string(std::chrono::duration_cast<std::chrono::hours>(t.time_since_epoch()).count() / 24);
}

double secs(time_point t) { return std::chrono::duration<double>(t - t0).count(); }

// ---- the simulated world: clock, event queue, the API's side -----------------------------------

struct message {
    std::string text;
    bool from_me = false;
    time_point at;
};

struct person {
    std::string url;
    std::map<std::string, outreach::invitation_state> invitation;  // account -> state
    std::vector<message> messages;                                 // oldest first
};

struct cooldown_window {
    std::string account;  // "" = the whole key
    time_point known_at;  // when the 429 reached the process
    time_point until;
};

class simulation;

// One worker process: its lanes' state collapsed into one lane (one cycle at a time), its window
// of calls in flight, its gate's mirror. A crash drops all of it; the generation tells the calls
// still on the wire that their process is gone.
struct process;

// The in-memory store (what Postgres holds): enrollments with their leases, the inbox, the
// attempts, the accounts' and the campaign's pauses.
struct enrollment {
    std::int64_t id = 0;
    int lead = 0;
    std::string account;
    cs::enrollment_state state;
    std::int64_t cursor = 0;
    int owner = -1;  // the process holding the lease, -1 none
    std::uint64_t owner_generation = 0;
    time_point lease_until{};
    std::int64_t attempt_id = 0;  // the open intent
};

// A call a process holds: the row its lane cycle claimed (engine/lane_cycle.hpp), shared with the
// call's coroutine, which may outlive a crash of its process.
struct finished_call {
    std::shared_ptr<eng::lane_row> held;
    eng::call_outcome outcome;
};

// The gate of one process: a mirror of cooldowns and unavailable accounts (its own answers at
// once, the shared store's when it reads it) over the shared limits (quotas, cooldowns).
struct shared_limits {
    std::map<std::string, time_point> cooldown;            // account ("" key) -> until
    std::map<std::pair<std::string, std::string>, int> invites_taken;  // (account, day)
    int quota = 10;
};

class sim_gate final : public eng::call_gate {
public:
    sim_gate(shared_limits& s, const eng::clock_port& clock, bool broken) : shared_(s), clock_(clock), broken_(broken) {}

    eng::gate_decision before(const eng::call_target& t, const cs::campaign&, const cs::api_call& call,
                              time_point now) override {
        for (const std::string& scope : {t.account_id, std::string()}) {
            if (auto it = shared_.cooldown.find(scope); it != shared_.cooldown.end() && it->second > now) {
                return {false, it->second, "cooldown",
                        scope.empty() ? cs::wait_code::key_cooldown : cs::wait_code::account_cooldown};
            }
        }
        if (call.kind == cs::call_kind::invite && !call.reconcile) {
            int& n = shared_.invites_taken[{t.account_id, day_of(now)}];
            if (n >= shared_.quota) {
                const auto next_day = time_point(std::chrono::duration_cast<time_point::duration>(
                    std::chrono::hours((std::chrono::duration_cast<std::chrono::hours>(now.time_since_epoch()).count() / 24 + 1) * 24)));
                return {false, next_day, "day quota", cs::wait_code::day_quota};
            }
            ++n;
            eng::gate_decision d;
            d.take = ++last_take_;
            taken_.insert(d.take);
            return d;
        }
        return {};
    }
    std::optional<time_point> after(const eng::call_target& t, const cs::campaign&, const cs::api_call& call,
                                    const eng::call_outcome& o) override {
        if (call.kind == cs::call_kind::invite && !call.reconcile && eng::failed_without_effect(o.attempt_outcome)) {
            give_back(t);
        }
        taken_.erase(t.gate_take);
        if (o.error_code == "RATE_LIMITED") {
            return cool(t, o);
        }
        return std::nullopt;
    }
    void released(const eng::call_target& t, const cs::campaign&, const cs::api_call& call) override {
        if (call.kind == cs::call_kind::invite && !call.reconcile) {
            give_back(t);
        }
    }
    std::optional<time_point> hold(const eng::call_target& t, const cs::api_call&, time_point now) override {
        if (broken_) {
            return std::nullopt;
        }
        // What this process's own answers said, for ten minutes (as engine/limits_gate): the
        // store's pause (claims skip the account until it logs in again) covers what comes after.
        if (auto it = unavailable_.find(t.account_id); it != unavailable_.end() && now < it->second) {
            return now + std::chrono::minutes(10);
        }
        for (const std::string& scope : {t.account_id, std::string()}) {
            if (auto it = shared_.cooldown.find(scope); it != shared_.cooldown.end() && it->second > now) {
                return it->second;
            }
        }
        return std::nullopt;
    }
    void answered(const eng::call_target& t, const cs::campaign&, const cs::api_call&,
                  const eng::call_outcome& o) override {
        if (broken_) {
            return;
        }
        if (o.error_code == "RATE_LIMITED") {
            cool(t, o);
        } else if (o.consequence == eng::call_consequence::pause_account) {
            unavailable_[t.account_id] = clock_.now() + std::chrono::minutes(10);
        }
    }
    void relogged(const std::string& account) { unavailable_.erase(account); }

private:
    time_point cool(const eng::call_target& t, const eng::call_outcome& o) {
        const bool account = outreach::limit_names_account(o.error_message, t.account_id);
        const auto until = clock_.now() + (o.retry_after ? std::chrono::duration_cast<time_point::duration>(*o.retry_after)
                                                     : std::chrono::duration_cast<time_point::duration>(seconds(2)));
        auto& u = shared_.cooldown[account ? t.account_id : std::string()];
        u = std::max(u, until);
        return u;
    }
    void give_back(const eng::call_target& t) {
        if (taken_.erase(t.gate_take) == 0) {
            return;
        }
        // The take was today's or an earlier day's; giving back today's is what the real gate does
        // (its buckets refill per day).
        int& n = shared_.invites_taken[{t.account_id, day_of(clock_.now())}];
        n = std::max(0, n - 1);
    }
    shared_limits& shared_;
    const eng::clock_port& clock_;
    bool broken_;
    std::map<std::string, time_point> unavailable_;  // account -> until
    std::set<std::uint64_t> taken_;  // by gate_decision::take, as the real gate keys them
    std::uint64_t last_take_ = 0;
};

struct process {
    int id = 0;
    std::uint64_t generation = 1;
    bool up = true;
    std::unique_ptr<eng::call_window> window;
    std::shared_ptr<sim_gate> gate;
    std::shared_ptr<eng::api_port> api;
    eng::call_path_ports ports;
    std::map<std::int64_t, std::shared_ptr<eng::lane_row>> held;
    std::vector<finished_call> done;
    eng::lane_context context;  // what its lane cycles decide with besides the store
    eng::seeded_random rng{0};  // the call path's (backoff jitter), seeded from the run's seed
    std::optional<time_point> cycle_at;
    std::vector<std::unique_ptr<eng::call_window>> old_windows;  // kept: their coroutines may still run
    std::map<std::string, time_point> knows_unavailable;         // account -> since (its own answers)
};

class simulation {
public:
    explicit simulation(const options& o) : o_(o), rng_(o.seed) {
        if (o_.key_credits == 0) {
            o_.key_credits = static_cast<std::int64_t>(o_.leads) * 4;
        }
        if (o_.budget == 0) {
            o_.budget = static_cast<std::int64_t>(o_.leads) * 8;
        }
        credits_ = o_.key_credits;
        budget_ = o_.budget;
        limits_.quota = o_.invite_day_quota;
        load_campaign();
        for (int i = 0; i < o_.leads; ++i) {
            person p;
            p.url = "https://www.linkedin.com/in/sim-" + std::to_string(i);
            people_.push_back(p);
            enrollment e;
            e.id = i + 1;
            e.lead = i;
            e.account = accounts_[static_cast<std::size_t>(i) % accounts_.size()];
            e.state = cs::initial_state(*campaign_, t0);
            rows_.push_back(e);
            cs::lead_view v;
            v.key = std::to_string(i + 1);
            v.fields["first_name"] = "P" + std::to_string(i);
            leads_.push_back(v);
        }
        for (int p = 0; p < o_.processes; ++p) {
            auto proc = std::make_unique<process>();
            proc->id = p;
            proc->rng = eng::seeded_random(o_.seed * 7919 + static_cast<std::uint64_t>(p));
            procs_.push_back(std::move(proc));
            start(*procs_.back());
        }
    }

    report run();

    // ---- the clock and the event queue ----
    time_point now() const { return now_; }
    // The clock port over the simulated time (the call path's and the gates').
    struct sim_clock final : eng::clock_port {
        const simulation& s;
        explicit sim_clock(const simulation& sim) : s(sim) {}
        time_point now() const override { return s.now_; }
    };
    sim_clock clock_{*this};
    void at(time_point t, std::function<void()> fn) { queue_.push({std::max(t, now_), seq_++, std::move(fn)}); }
    auto sleep(time_point::duration d) {
        return asio::async_initiate<const asio::use_awaitable_t<>&, void()>(
            [this, d](auto handler) {
                auto h = std::make_shared<decltype(handler)>(std::move(handler));
                at(now_ + d, [this, h] { asio::post(io_, [h] { std::move (*h)(); }); });
            },
            asio::use_awaitable);
    }
    double uniform() { return std::uniform_real_distribution<double>(0, 1)(rng_); }
    bool chance(double p) { return uniform() < p; }
    time_point::duration latency() {
        std::lognormal_distribution<double> d(std::log(o_.latency_median_ms), o_.latency_sigma);
        return std::chrono::duration_cast<time_point::duration>(
            std::chrono::duration<double, std::milli>(std::min(10'000.0, d(rng_))) / 2);
    }
    void violation(std::string what) {
        if (violations_.size() < 20) {
            std::ostringstream s;
            s << "t=" << secs(now_) << "s: " << what;
            violations_.push_back(s.str());
        }
    }

    // ---- the API's side: one request ----
    struct request {
        int process = 0;
        std::uint64_t generation = 0;
        std::string account;
        std::string action;  // "invite", "send_message", ...
        bool side_effect = false;
        int person = -1;
        time_point left{};  // when it left its process
    };
    // Called when a request leaves its process: the send-time guarantees.
    void leaving(const request& r) {
        ++requests_;
        digest_ = fnv(digest_, std::to_string(now_.time_since_epoch().count()) + r.action + r.account + std::to_string(r.person));
        for (const auto& w : windows_) {
            if ((w.account.empty() || w.account == r.account) && w.known_at <= now_ && now_ < w.until) {
                violation("request " + r.action + " on " + r.account + " inside a Retry-After window of " +
                          (w.account.empty() ? "the key" : w.account) + " (known at " + std::to_string(secs(w.known_at)) +
                          "s, until " + std::to_string(secs(w.until)) + "s)");
                break;
            }
        }
        const process& p = *procs_[static_cast<std::size_t>(r.process)];
        if (r.side_effect) {
            if (auto it = p.knows_unavailable.find(r.account); it != p.knows_unavailable.end() && it->second <= now_) {
                violation(r.action + " on " + r.account + ", known unavailable to process " + std::to_string(r.process));
            }
        }
    }
    int person_of(const std::string& url) const {
        for (std::size_t i = 0; i < people_.size(); ++i) {
            if (people_[i].url == url) {
                return static_cast<int>(i);
            }
        }
        return -1;
    }
    // The faults a request meets on arrival; nullopt: it goes through.
    std::optional<outreach::error> fault(const request& r, std::int64_t cost, bool& lost_after) {
        if (now_ < key_burst_until_) {
            return rate_limited("", key_burst_ra_);
        }
        auto& acc = accounts_state_[r.account];
        if (now_ < acc.inactive_until) {
            return outreach::make_api_error(outreach::error_kind::api_error, 403, "ACCOUNT_INACTIVE",
                                            "account " + r.account + " is logged out", std::nullopt, r.side_effect);
        }
        if (now_ < acc.burst_until) {
            return rate_limited(r.account, acc.burst_ra);
        }
        if (chance(o_.key_burst_rate)) {
            key_burst_until_ = now_ + milliseconds(500 + static_cast<int>(uniform() * 3000));
            key_burst_ra_ = chance(o_.burst_retry_after_share);
            return rate_limited("", key_burst_ra_);
        }
        if (chance(o_.account_burst_rate)) {
            acc.burst_until = now_ + milliseconds(500 + static_cast<int>(uniform() * 4000));
            acc.burst_ra = chance(o_.burst_retry_after_share);
            return rate_limited(r.account, acc.burst_ra);
        }
        if (chance(o_.disconnect_rate)) {
            acc.inactive_until = now_ + std::chrono::minutes(10 + static_cast<int>(uniform() * 360));
            at(acc.inactive_until, [this, a = r.account] { relogin(a); });
            return outreach::make_api_error(outreach::error_kind::api_error, 403, "ACCOUNT_INACTIVE",
                                            "account " + r.account + " is logged out", std::nullopt, r.side_effect);
        }
        if (credits_ < cost) {
            if (!topup_scheduled_) {
                topup_scheduled_ = true;
                at(now_ + std::chrono::hours(2 + static_cast<int>(uniform() * 10)), [this] { topup(); });
            }
            return outreach::make_api_error(outreach::error_kind::api_error, 402, "INSUFFICIENT_CREDITS",
                                            "not enough credits", std::nullopt, false);
        }
        if (chance(o_.connect_failure)) {
            return outreach::make_transport_error(outreach::error_kind::transport_connect,
                                                  outreach::failure_step::connect, "connect failed", false,
                                                  r.side_effect);
        }
        if (chance(o_.lost_before_effect)) {
            return outreach::make_transport_error(outreach::error_kind::timeout, outreach::failure_step::read,
                                                  "timed out", true, r.side_effect);
        }
        lost_after = chance(o_.lost_after_effect);
        return std::nullopt;
    }
    outreach::error rate_limited(const std::string& account, bool with_retry_after) {
        ++rate_limited_;
        std::optional<std::int64_t> ra;
        if (with_retry_after) {
            ra = 1 + static_cast<std::int64_t>(uniform() * 3);
        }
        // Worded as any API may: half the key's 429s say "your account" (the customer's, the
        // whole key), which must not read as an account's limit; a quarter of an account's name
        // no account, which reads as the key's, a wider hold.
        const double wording = uniform();
        const std::string message = account.empty()
                                        ? (wording < 0.5 ? "too many requests for this key"
                                                         : "rate limit exceeded for your account")
                                        : (wording < 0.75 ? "too many requests for account " + account
                                                          : std::string("too many requests"));
        auto e = outreach::make_api_error(outreach::error_kind::api_error, 429, "RATE_LIMITED", message, ra, false);
        pending_window_ = cooldown_window{account, {}, now_ + seconds(ra.value_or(0))};
        if (!ra) {
            pending_window_.reset();  // no window declared: the gate's own backoff applies
        }
        return e;
    }
    // The answer reached process `p` (not lost): a declared Retry-After window becomes known.
    void answer_reached(const request& r, const outreach::error* e) {
        if (e == nullptr) {
            return;
        }
        // An answer to a request that left before the account's last login says nothing of now.
        if (e->code == "ACCOUNT_INACTIVE" && r.left >= last_login_[r.account]) {
            auto& k = procs_[static_cast<std::size_t>(r.process)]->knows_unavailable;
            k.emplace(r.account, now_);
        }
    }

    template <typename T, typename Apply>
    asio::awaitable<outreach::result<T>> serve(request r, std::string category, std::string action_name,
                                               outreach::json params, Apply apply) {
        if (procs_[static_cast<std::size_t>(r.process)]->generation != r.generation) {
            co_return outreach::result<T>(outreach::make_transport_error(
                outreach::error_kind::cancelled, outreach::failure_step::pool_wait, "the process is gone", false, false));
        }
        leaving(r);
        co_await sleep(latency());  // on its way
        const std::int64_t cost = outreach::estimate_v2(category, action_name, params).credits;
        bool lost_after = false;
        pending_window_.reset();
        auto f = fault(r, cost, lost_after);
        std::optional<cooldown_window> window = pending_window_;
        outreach::result<T> out = f ? outreach::result<T>(*f) : outreach::result<T>(T{});
        if (!f) {
            auto applied = apply();
            if (!applied) {
                out = outreach::result<T>(applied.error());
            } else {
                credits_ -= cost;
                charged_ += cost;
                if (charged_ > budget_) {
                    violation("the API charged " + std::to_string(charged_) + " credits, the budget is " +
                              std::to_string(budget_));
                }
                T value = std::move(*applied);
                value.meta.credits_consumed = cost;
                out = outreach::result<T>(std::move(value));
            }
            if (lost_after) {
                out = outreach::result<T>(outreach::make_transport_error(
                    outreach::error_kind::timeout, outreach::failure_step::read, "timed out", true, r.side_effect));
            }
        }
        maybe_crash(r.process, r.generation, "while a request is on the wire");
        co_await sleep(latency());  // the answer's way back
        if (procs_[static_cast<std::size_t>(r.process)]->generation == r.generation) {
            if (window) {
                window->known_at = now_;
                windows_.push_back(*window);
            }
            answer_reached(r, out ? nullptr : &out.error());
        }
        co_return out;
    }

    // ---- the world's reactions ----
    void invited(int who, const std::string& account) {
        if (!chance(o_.accept_share)) {
            return;
        }
        // Some accept at once, so that their event often arrives before the invitation is settled.
        const double within_ms = chance(o_.early_accept_share) ? 3'000.0 : 2 * 86'400'000.0;
        at(now_ + milliseconds(static_cast<std::int64_t>(uniform() * within_ms)), [this, who, account] {
            auto& inv = people_[static_cast<std::size_t>(who)].invitation[account];
            if (inv != outreach::invitation_state::pending) {
                return;  // withdrawn meanwhile
            }
            inv = outreach::invitation_state::accepted;
            deliver(who, eng::event_kind::accepted_invitation);
        });
    }
    void messaged(int who) {
        if (replied_.count(who) != 0 || !chance(o_.reply_share)) {
            return;
        }
        replied_.insert(who);
        at(now_ + milliseconds(static_cast<std::int64_t>(uniform() * 86'400'000.0)), [this, who] {
            people_[static_cast<std::size_t>(who)].messages.push_back({"thanks!", false, now_});
            deliver(who, eng::event_kind::message);
        });
    }
    // Webhook delivery: late (so out of order), sometimes twice, sometimes never.
    void deliver(int who, eng::event_kind kind) {
        if (chance(o_.event_lost)) {
            return;
        }
        const double late_ms = chance(o_.early_accept_share) ? 500.0 : 600'000.0;
        const int copies = chance(o_.event_duplicated) ? 2 : 1;
        for (int i = 0; i < copies; ++i) {
            at(now_ + milliseconds(static_cast<std::int64_t>(uniform() * late_ms)), [this, who, kind] {
                ++events_;
                inbox_.push_back({++event_id_, rows_[static_cast<std::size_t>(who)].id, kind});
                if (kind == eng::event_kind::accepted_invitation) {
                    acceptance_delivered_.insert(who);
                }
                // As events/wake: a lead not in a call is due at once; one in a call is woken by
                // the settle that ends it (below).
                enrollment& e = rows_[static_cast<std::size_t>(who)];
                if (!cs::is_terminal(e.state.st) && e.owner < 0 && e.state.st != cs::status::calling) {
                    e.state.next_run_at = std::min(e.state.next_run_at, now_);
                }
                wake_all();
            });
        }
    }
    void relogin(const std::string& account) {
        if (now_ < accounts_state_[account].inactive_until) {
            return;
        }
        unavailable_.erase(account);
        last_login_[account] = now_;
        for (auto& p : procs_) {
            p->knows_unavailable.erase(account);
            if (p->gate) {
                p->gate->relogged(account);
            }
        }
        wake_all();
    }
    void topup() {
        topup_scheduled_ = false;
        credits_ += o_.key_credits;
        out_of_credits_ = false;
        wake_all();
    }
    void raise_budget() {
        budget_ += o_.budget;  // the operator adds the first budget again
        campaign_paused_ = false;
        budget_raise_scheduled_ = false;
        wake_all();
    }

    // ---- the processes ----
    void start(process& p) {
        p.up = true;
        p.window = std::make_unique<eng::call_window>(io_.get_executor(), o_.pool);
        p.gate = std::make_shared<sim_gate>(limits_, clock_, o_.break_send_time_check);
        p.api = make_api(p);
        p.ports.api = p.api.get();
        p.ports.gate = p.gate.get();
        p.ports.do_not_contact = nullptr;
        p.ports.clock = &clock_;
        p.ports.backoff = {2'000, 600'000};
        p.context.gate = p.gate.get();
        p.context.clock = &clock_;
        p.context.stopping = [] { return false; };
        // A request's round trip is at most 10 s here (latency()); a second of margin.
        if (!o_.break_send_window) {
            p.context.send_window = std::chrono::milliseconds(o_.lease_seconds * 1000 - 11'000);
        }
        p.context.outcome_refused = [this](std::int64_t enrollment, const std::string& why) {
            violation("enrollment " + std::to_string(enrollment) + ": the machine refused an outcome: " + why);
        };
        p.context.event_refused = [this](const eng::plan_item& it, const std::string& why) {
            violation("enrollment " + std::to_string(it.target.enrollment_id) + ": the due event was refused: " + why);
        };
        p.context.stop_everything = [this](const std::string& error) {
            violation("a call found the key refused: " + error);
        };
        schedule(p, now_);
    }
    std::shared_ptr<eng::api_port> make_api(process& p);
    void crash(process& p, const char* where) {
        ++crashes_;
        digest_ = fnv(digest_, where);
        p.up = false;
        ++p.generation;
        p.held.clear();
        p.done.clear();
        p.old_windows.push_back(std::move(p.window));
        p.cycle_at.reset();
        p.knows_unavailable.clear();
        at(now_ + milliseconds(1000 + static_cast<std::int64_t>(uniform() * 120'000)), [this, &p] { start(p); });
    }
    void maybe_crash(int process_id, std::uint64_t generation, const char* where) {
        process& p = *procs_[static_cast<std::size_t>(process_id)];
        if (p.up && p.generation == generation && chance(o_.crash_rate)) {
            crash(p, where);
        }
    }
    void schedule(process& p, time_point t) {
        if (!p.up || (p.cycle_at && *p.cycle_at <= t)) {
            return;
        }
        p.cycle_at = t;
        const auto gen = p.generation;
        at(t, [this, &p, gen, t] {
            if (p.generation != gen || !p.cycle_at || *p.cycle_at != t) {
                return;
            }
            p.cycle_at.reset();
            cycle(p);
        });
    }
    void wake_all() {
        for (auto& p : procs_) {
            schedule(*p, now_);
        }
    }
    asio::awaitable<void> run_call(process* p, std::uint64_t generation, std::shared_ptr<eng::lane_row> h);
    void cycle(process& p);
    class sim_store;
    time_point next_due() const;
    enrollment& row(std::int64_t enrollment_id) { return rows_[static_cast<std::size_t>(enrollment_id - 1)]; }
    // As engine/wake_pending: an inbox event after the row's cursor makes a released row due.
    void wake_if_pending(enrollment& e) {
        const bool pending = std::any_of(inbox_.begin(), inbox_.end(), [&](const inbox_row& ev) {
            return ev.enrollment == e.id && ev.id > e.cursor;
        });
        if (pending && !cs::is_terminal(e.state.st)) {
            e.state.next_run_at = std::min(e.state.next_run_at, now_);
        }
    }
    bool all_finished() const {
        return std::all_of(rows_.begin(), rows_.end(), [](const enrollment& e) { return cs::is_terminal(e.state.st); });
    }

    // ---- the ledger ----
    // A refused reservation that the calls in flight (their leases live, as
    // ledger/reserved_balance.sql counts them, and this batch's) could cover once they settle:
    // what they hold is an upper bound of their charge. The real ledger's in_flight refusal.
    bool could_come_back(std::int64_t credits, std::int64_t batch_reserved, const std::set<std::int64_t>& batch) const {
        std::int64_t held = batch_reserved;
        for (const auto& e : rows_) {
            if (e.attempt_id != 0 && batch.count(e.attempt_id) == 0 && e.owner >= 0 && e.lease_until > now_ &&
                e.state.st == cs::status::calling) {
                if (auto it = reservations_.find(e.attempt_id); it != reservations_.end()) {
                    held += it->second;
                }
            }
        }
        return held > 0 && budget_ - spent_ - reserved_ + held >= credits;
    }
    bool reserve(std::int64_t attempt, std::int64_t credits) {
        if (spent_ + reserved_ + credits > budget_) {
            return false;
        }
        reserved_ += credits;
        reservations_[attempt] = credits;
        return true;
    }
    void post(std::int64_t attempt, std::int64_t credits) {
        auto it = reservations_.find(attempt);
        if (it == reservations_.end()) {
            violation("a post for attempt " + std::to_string(attempt) + ", which holds no reservation");
            return;
        }
        reserved_ -= it->second;
        spent_ += credits;
        reservations_.erase(it);
        if (spent_ + reserved_ > budget_) {
            // An overrun above its reservation: the real ledger pauses the campaign.
            campaign_paused_ = true;
        }
    }

    options o_;
    std::mt19937_64 rng_;
    asio::io_context io_;
    time_point now_ = t0;
    struct scheduled {
        time_point at;
        std::uint64_t seq;
        std::function<void()> fn;
        bool operator>(const scheduled& b) const { return at != b.at ? at > b.at : seq > b.seq; }
    };
    std::priority_queue<scheduled, std::vector<scheduled>, std::greater<>> queue_;
    std::uint64_t seq_ = 0;

    std::shared_ptr<const cs::campaign> campaign_;
    std::vector<std::string> accounts_;
    std::vector<person> people_;
    std::vector<cs::lead_view> leads_;
    std::vector<enrollment> rows_;
    struct inbox_row {
        std::int64_t id;
        std::int64_t enrollment;
        eng::event_kind kind;
    };
    std::vector<inbox_row> inbox_;
    std::int64_t event_id_ = 0;
    std::int64_t next_attempt_ = 0;
    std::set<std::string> unavailable_;  // the store's: accounts paused after an ACCOUNT_INACTIVE settle
    bool out_of_credits_ = false;
    bool campaign_paused_ = false;
    std::int64_t in_flight_waits_ = 0;   // reservations refused to wait for the calls in flight
    bool budget_raise_scheduled_ = false;
    shared_limits limits_;
    std::vector<std::unique_ptr<process>> procs_;
    std::int64_t budget_ = 0, reserved_ = 0, spent_ = 0, credits_ = 0, charged_ = 0;
    std::map<std::int64_t, std::int64_t> reservations_;
    bool topup_scheduled_ = false;

    struct account_state {
        time_point inactive_until{};
        time_point burst_until{};
        bool burst_ra = false;
    };
    std::map<std::string, account_state> accounts_state_;
    time_point key_burst_until_{};
    bool key_burst_ra_ = false;
    std::optional<cooldown_window> pending_window_;
    std::vector<cooldown_window> windows_;
    std::set<int> replied_;
    std::set<int> acceptance_delivered_;
    std::map<std::string, time_point> last_login_;
    std::map<std::pair<std::string, std::string>, int> invites_by_day_;  // (account, day) -> effective

    std::vector<std::string> violations_;
    std::uint64_t digest_ = 1469598103934665603ULL;
    std::uint64_t requests_ = 0, invites_ = 0, messages_ = 0, rate_limited_ = 0, crashes_ = 0, events_ = 0,
                  cycles_ = 0, chained_ = 0;

    void load_campaign() {
        for (int i = 0; i < o_.accounts; ++i) {
            accounts_.push_back("acc_" + std::to_string(i + 1));
        }
        campaign_ = std::make_shared<const cs::campaign>(sim_campaign(o_.accounts, o_.budget));
    }

    friend class sim_api;
};

// The simulated API behind the call path's port: each request leaves (the send-time checks),
// travels, meets the faults, takes effect on the world, and its answer travels back.
class sim_api final : public eng::api_port {
public:
    // One per process start: a coroutine of a crashed process that comes back to send its call's
    // next request finds its generation gone, and the request never leaves.
    sim_api(simulation& s, process& p) : s_(s), p_(p), generation_(p.generation) {}
    answer<outreach::invitation_status> check_invitation(std::string_view account,
                                                         const outreach::profile_url_params& p) override {
        return s_.serve<outreach::invitation_status>(req(account, "check_invitation", false, p.profile_url), "network",
                                                     "check_invitation", outreach::json::object(),
                                                     [this, a = std::string(account), url = p.profile_url] {
                                                         outreach::invitation_status st;
                                                         const int who = s_.person_of(url);
                                                         auto& inv = s_.people_[static_cast<std::size_t>(who)].invitation;
                                                         auto it = inv.find(a);
                                                         st.state = it == inv.end() ? outreach::invitation_state::no_invitation
                                                                                    : it->second;
                                                         st.type = st.state == outreach::invitation_state::pending
                                                                       ? outreach::invitation_type::sent
                                                                       : outreach::invitation_type::none;
                                                         st.invitation_id = static_cast<std::uint64_t>(who + 1);
                                                         return outreach::result<outreach::invitation_status>(st);
                                                     });
    }
    answer<outreach::invite_result> invite(std::string_view account, const outreach::invite_params& p) override {
        return s_.serve<outreach::invite_result>(
            req(account, "invite", true, p.profile_url), "network", "invite", outreach::json::object(),
            [this, a = std::string(account), url = p.profile_url] {
                const int who = s_.person_of(url);
                auto& inv = s_.people_[static_cast<std::size_t>(who)].invitation;
                bool any = false;
                for (const auto& [acc, st] : inv) {
                    any = any || st != outreach::invitation_state::no_invitation;
                }
                if (any) {
                    s_.violation("a second invite to " + url + " (from " + a + ")");
                    return outreach::result<outreach::invite_result>(outreach::make_api_error(
                        outreach::error_kind::api_error, 400, "CHANNEL_ERROR", "already invited", std::nullopt, true));
                }
                int& today = s_.invites_by_day_[{a, day_of(s_.now_)}];
                if (++today > s_.o_.invite_day_quota) {
                    s_.violation("invite " + std::to_string(today) + " of the day on " + a + ", the quota is " +
                                 std::to_string(s_.o_.invite_day_quota));
                }
                inv[a] = outreach::invitation_state::pending;
                ++s_.invites_;
                s_.invited(who, a);
                outreach::invite_result r;
                r.invitation_id = static_cast<std::uint64_t>(who + 1);
                return outreach::result<outreach::invite_result>(r);
            });
    }
    answer<outreach::withdraw_result> withdraw(std::string_view account, const outreach::withdraw_params& p) override {
        const int who = static_cast<int>(p.invitation_id) - 1;
        return s_.serve<outreach::withdraw_result>(
            req(account, "withdraw", true, s_.people_[static_cast<std::size_t>(who)].url), "network", "withdraw",
            outreach::json::object(), [this, a = std::string(account), who] {
                auto& inv = s_.people_[static_cast<std::size_t>(who)].invitation;
                if (inv[a] == outreach::invitation_state::pending) {
                    inv[a] = outreach::invitation_state::no_invitation;
                }
                return outreach::result<outreach::withdraw_result>(outreach::withdraw_result{});
            });
    }
    answer<outreach::send_message_result> send_message(std::string_view account,
                                                       const outreach::send_message_params& p) override {
        return s_.serve<outreach::send_message_result>(
            req(account, "send_message", true, p.profile_url), "messages", "send", outreach::json::object(),
            [this, url = p.profile_url, text = p.message_text] {
                const int who = s_.person_of(url);
                auto& msgs = s_.people_[static_cast<std::size_t>(who)].messages;
                for (const auto& m : msgs) {
                    if (m.from_me && m.text == text) {
                        s_.violation("the same message sent twice to " + url + ": " + text);
                    }
                }
                msgs.push_back({text, true, s_.now_});
                ++s_.messages_;
                s_.messaged(who);
                return outreach::result<outreach::send_message_result>(outreach::send_message_result{});
            });
    }
    answer<outreach::conversation_page> get_conversation(std::string_view account,
                                                         const outreach::get_conversation_params& p) override {
        return s_.serve<outreach::conversation_page>(
            req(account, "get_conversation", false, p.profile_url), "messages", "get_conversation",
            outreach::json{{"count", p.count.value_or(10)}}, [this, url = p.profile_url] {
                const int who = s_.person_of(url);
                const auto& msgs = s_.people_[static_cast<std::size_t>(who)].messages;
                if (msgs.empty()) {
                    return outreach::result<outreach::conversation_page>(outreach::make_api_error(
                        outreach::error_kind::api_error, 404, "NOT_FOUND", "no conversation", std::nullopt, false));
                }
                outreach::conversation_page page;
                for (auto it = msgs.rbegin(); it != msgs.rend(); ++it) {
                    outreach::conversation_message m;
                    m.text = it->text;
                    m.from_me = it->from_me;
                    m.at = it->at;
                    page.messages.push_back(std::move(m));
                }
                return outreach::result<outreach::conversation_page>(std::move(page));
            });
    }
    answer<outreach::visit_result> visit(std::string_view account, const outreach::profile_url_params& p) override {
        return s_.serve<outreach::visit_result>(req(account, "visit", true, p.profile_url), "profiles", "visit",
                                                outreach::json::object(), [] {
                                                    return outreach::result<outreach::visit_result>(
                                                        outreach::visit_result{});
                                                });
    }

private:
    simulation::request req(std::string_view account, const char* action, bool side_effect, const std::string& url) {
        return {p_.id, generation_, std::string(account), action, side_effect, s_.person_of(url), s_.now_};
    }
    simulation& s_;
    process& p_;
    std::uint64_t generation_;
};

std::shared_ptr<eng::api_port> simulation::make_api(process& p) { return std::make_shared<sim_api>(*this, p); }

asio::awaitable<void> simulation::run_call(process* p, std::uint64_t generation, std::shared_ptr<eng::lane_row> h) {
    if (p->generation != generation) {
        co_return;  // its process crashed while it waited in the window: it never left
    }
    // Kept alive for the call: a crash replaces them.
    std::shared_ptr<sim_gate> gate = p->gate;
    std::shared_ptr<eng::api_port> api = p->api;
    eng::call_job job{eng::target_of(*h), h->campaign.get(), h->campaign_id, &*h->call, h->company, h->state.attempt,
                      h->send_by};
    eng::call_path_ports ports = p->ports;
    eng::call_outcome o;
    co_await eng::send_checked(ports, job, p->rng, o);
    if (p->generation != generation) {
        co_return;  // its process crashed: the answer is lost
    }
    maybe_crash(p->id, generation, "after an answer, before its settle");
    if (p->generation != generation) {
        co_return;
    }
    p->done.push_back({h, std::move(o)});
    schedule(*p, now_ + milliseconds(5));
}

// The store port over the simulation's rows (what Postgres holds), one cycle of one process at a
// time: its transactions never fail, so a settle is never written again. Leases are compared
// and set as engine/settle and engine/chain_hold do: a row whose lease its process lost is
// someone else's.
class simulation::sim_store final : public eng::lane_store {
public:
    sim_store(simulation& s, process& p) : s_(s), p_(p), ledger_(s) {}

    void settle(eng::finished_calls& done, eng::settle_decisions& d, std::vector<eng::lane_row>* chain) override {
        // What the calls found about their accounts or the key counts even when a row's lease was
        // lost (as the worker's write_settle).
        for (const auto& [account, error] : d.unavailable) {
            if (s_.now_ < s_.accounts_state_[account].inactive_until) {
                s_.unavailable_.insert(account);  // not when it logged in again already
            }
        }
        if (!d.out_of_credits.empty()) {
            s_.out_of_credits_ = true;
            if (!s_.topup_scheduled_) {
                s_.topup_scheduled_ = true;
                s_.at(s_.now_ + std::chrono::hours(1), [sim = &s_] { sim->topup(); });
            }
        }
        // Which rows go on is decided before any post, as engine/chain_hold runs before the
        // ledger's statements: a campaign this settle's charges pause is paused after the holds.
        std::vector<bool> hold(done.calls.size(), false);
        for (std::size_t i = 0; i < done.calls.size(); ++i) {
            const enrollment& e = s_.row(done.batch[done.calls[i]].enrollment_id);
            // As engine/chain_hold: its lease held and not yet expired, the campaign and the
            // account workable.
            hold[i] = chain != nullptr && d.due_now[i] && holds(e, done.batch[done.calls[i]].attempt_id) &&
                      e.lease_until > s_.now_ && !s_.campaign_paused_ && !s_.out_of_credits_ &&
                      s_.unavailable_.count(e.account) == 0;
        }
        if (chain != nullptr) {
            done.again = std::make_unique<eng::settle_replay>();
            done.again->calls = done.calls.size();
        }
        for (std::size_t i = 0; i < done.calls.size(); ++i) {
            eng::lane_row& c = done.batch[done.calls[i]];
            enrollment& e = s_.row(c.enrollment_id);
            if (!holds(e, c.attempt_id)) {
                continue;  // its lease expired and another claim has it: that one reconciles
            }
            s_.post(c.attempt_id, d.ledger[i].post ? d.ledger[i].credits : 0);
            e.attempt_id = 0;
            if (hold[i]) {
                e.state = d.nexts[i];
                eng::lane_row next = std::move(c);
                next.state = std::move(d.nexts[i]);
                next.was_calling = false;
                next.call.reset();
                next.attempt_id = 0;
                next.settled = std::make_shared<const eng::settled_call>(std::move(d.outcomes[i]));
                chain->push_back(std::move(next));
                continue;
            }
            e.state = std::move(d.nexts[i]);
            e.owner = -1;
            s_.wake_if_pending(e);
        }
    }
    void settle_again(const eng::settle_replay&) override {
        s_.violation("a settle written again: the simulation's transactions do not fail");
    }
    void claim(std::size_t limit, std::vector<eng::lane_row>& batch) override {
        if (s_.out_of_credits_ || s_.campaign_paused_) {
            return;
        }
        // The due rows, oldest first, as the worker's claim takes them (by due_at: a row in a
        // call is due when its lease ends): taken in id order, leads that come back every few
        // seconds (waiting for the calls in flight) starved the rows whose lease had ended, and
        // so the calls that would settle.
        std::vector<std::pair<time_point, enrollment*>> due;
        for (auto& e : s_.rows_) {
            if (cs::is_terminal(e.state.st) || s_.unavailable_.count(e.account) != 0) {
                continue;
            }
            if (e.owner >= 0 && e.lease_until > s_.now_) {
                continue;  // leased (a row this cycle holds on is too)
            }
            if (e.state.st != cs::status::calling && e.state.next_run_at > s_.now_) {
                continue;
            }
            const time_point at = e.state.st != cs::status::calling ? e.state.next_run_at
                                  : e.owner >= 0                    ? e.lease_until
                                                                    : time_point::min();
            due.emplace_back(at, &e);
        }
        std::stable_sort(due.begin(), due.end(),
                         [](const auto& a, const auto& b) { return a.first < b.first; });
        std::size_t taken = 0;
        for (auto& [at, row] : due) {
            if (taken >= limit) {
                break;
            }
            enrollment& e = *row;
            eng::lane_row c;
            c.enrollment_id = e.id;
            c.campaign_id = 1;
            c.account_id = e.account;
            c.profile_url = s_.people_[static_cast<std::size_t>(e.lead)].url;
            c.campaign = s_.campaign_;
            c.lead = s_.leads_[static_cast<std::size_t>(e.lead)];
            c.state = e.state;
            c.event_cursor = e.cursor;
            c.was_calling = e.state.st == cs::status::calling;
            e.owner = -1;  // the plan's write leases it again if it makes a call
            batch.push_back(std::move(c));
            ++taken;
        }
    }
    void pending_events(std::span<const eng::lane_row> batch, std::span<eng::plan_item> items) override {
        for (std::size_t i = 0; i < batch.size(); ++i) {
            for (const auto& ev : s_.inbox_) {
                if (ev.enrollment == batch[i].enrollment_id && ev.id > batch[i].event_cursor) {
                    items[i].events.emplace_back(ev.id, ev.kind);
                }
            }
        }
    }
    void close_lost(std::span<const eng::lane_row> batch) override {
        for (const auto& c : batch) {
            enrollment& e = s_.row(c.enrollment_id);
            if (c.was_calling && e.attempt_id != 0) {
                // Its worker is gone: the call may have been charged, so its reservation is posted whole.
                auto it = s_.reservations_.find(e.attempt_id);
                s_.post(e.attempt_id, it == s_.reservations_.end() ? 0 : it->second);
                e.attempt_id = 0;
            }
        }
    }
    eng::ledger_port& ledger() override { return ledger_; }
    std::vector<std::int64_t> attempt_ids(std::size_t n) override {
        std::vector<std::int64_t> ids;
        for (std::size_t i = 0; i < n; ++i) {
            ids.push_back(++s_.next_attempt_);
        }
        return ids;
    }
    void write(std::span<const eng::lane_row> batch) override {
        for (const auto& c : batch) {
            enrollment& e = s_.row(c.enrollment_id);
            e.state = c.state;
            e.cursor = c.event_cursor;
            if (c.call) {
                e.owner = p_.id;
                e.owner_generation = p_.generation;
                e.lease_until = s_.now_ + seconds(s_.o_.lease_seconds);
                e.attempt_id = c.attempt_id;
            } else {
                e.owner = -1;
                e.attempt_id = 0;
                s_.wake_if_pending(e);
            }
        }
    }
    void commit() override {}
    cs::time_point leases_from() const override { return s_.now_; }  // a cycle takes no simulated time

private:
    bool holds(const enrollment& e, std::int64_t attempt_id) const {
        return e.owner == p_.id && e.owner_generation == p_.generation && e.attempt_id == attempt_id;
    }
    // The in-memory ledger: sometimes first an optimistic answer, undone, as the worker's
    // Postgres ledger gives when its fast path gives way to the locked one.
    struct sim_ledger final : eng::ledger_port {
        simulation& s;
        explicit sim_ledger(simulation& sim) : s(sim) {}
        void reserve(std::span<const eng::ledger_ask> asks,
                     const std::function<void(std::span<const eng::planner::verdict>)>& write) override {
            if (!asks.empty() && s.chance(0.3)) {
                write(std::vector<eng::planner::verdict>(asks.size()));
            }
            std::vector<eng::planner::verdict> verdicts(asks.size());
            std::int64_t batch_reserved = 0;
            std::set<std::int64_t> batch;   // this batch's attempts (the optimistic write above leased their rows)
            for (const auto& a : asks) {
                batch.insert(a.attempt_id);
            }
            for (std::size_t i = 0; i < asks.size(); ++i) {
                if (s.reserve(asks[i].attempt_id, asks[i].credits)) {
                    batch_reserved += asks[i].credits;
                    continue;
                }
                if (s.could_come_back(asks[i].credits, batch_reserved, batch)) {
                    // As engine/ledger.cpp: the calls in flight may give credits back; wait for them.
                    ++s.in_flight_waits_;
                    const auto retry = s.now_ + eng::in_flight_retry_after(asks[i].attempt_id);
                    verdicts[i] = eng::planner::ledger_refused(eng::budget_refusal::in_flight, retry,
                                                               asks[i].item->target.account_id, s.now_);
                    continue;
                }
                verdicts[i] = eng::planner::ledger_refused(eng::budget_refusal::campaign_budget, s.now_,
                                                           asks[i].item->target.account_id, s.now_);
                s.campaign_paused_ = true;
            }
            write(verdicts);
        }
    };
    simulation& s_;
    process& p_;
    sim_ledger ledger_;
};

// One cycle of a process: engine/lane_cycle over the in-memory store, then the calls it made
// start in the process's window.
void simulation::cycle(process& p) {
    ++cycles_;
    std::optional<eng::finished_calls> pending;
    if (!p.done.empty()) {
        eng::finished_calls f;
        for (auto& d : p.done) {
            if (auto it = p.held.find(d.held->enrollment_id); it != p.held.end() && it->second == d.held) {
                p.held.erase(it);
            }
            f.calls.push_back(f.batch.size());
            f.batch.push_back(*d.held);
            f.outcomes.push_back(std::move(d.outcome));
        }
        p.done.clear();
        pending = std::move(f);
    }
    const std::size_t room = o_.batch > p.held.size() ? o_.batch - p.held.size() : 0;
    sim_store store(*this, p);
    auto r = eng::lane_cycle(store, p.context, pending, room);
    chained_ += r.counts.chained;
    // The simulated operator raises a paused campaign's budget three hours after a cycle saw it.
    if (campaign_paused_ && !budget_raise_scheduled_) {
        budget_raise_scheduled_ = true;
        at(now_ + std::chrono::hours(3), [this] { raise_budget(); });
    }
    for (auto& c : r.calls) {
        std::shared_ptr<eng::lane_row> h = std::move(c);
        p.held[h->enrollment_id] = h;
        const auto gen = p.generation;
        p.window->add([this, pp = &p, gen, h] { return run_call(pp, gen, h); });
    }
    maybe_crash(p.id, p.generation, "after a cycle's commit, before its calls leave");
    if (!p.up) {
        return;
    }
    if (!p.done.empty()) {
        schedule(p, now_ + milliseconds(5));
    }
    if (p.held.size() < o_.batch) {
        schedule(p, std::max(now_ + milliseconds(1), next_due()));
    }
    // A full process cycles again when a call comes back (run_call).
}

time_point simulation::next_due() const {
    time_point t = now_ + std::chrono::hours(6);
    const bool paused = out_of_credits_ || campaign_paused_;
    for (const auto& e : rows_) {
        if (cs::is_terminal(e.state.st)) {
            continue;
        }
        if (e.owner >= 0) {
            t = std::min(t, e.lease_until);
        } else if (!paused && unavailable_.count(e.account) == 0) {
            t = std::min(t, e.state.next_run_at);
        }
    }
    return t;
}

report simulation::run() {
    const time_point end = t0 + o_.horizon;
    while (!queue_.empty() && now_ <= end && !all_finished()) {
        auto next = queue_.top();
        queue_.pop();
        now_ = std::max(now_, next.at);
        next.fn();
        io_.restart();
        io_.poll();
        // After every step: the ledger never holds more than the budget.
        if (spent_ + reserved_ > budget_) {
            violation("the ledger holds " + std::to_string(spent_ + reserved_) + " credits, the budget is " +
                      std::to_string(budget_));
        }
    }
    report r;
    r.seed = o_.seed;
    for (const auto& e : rows_) {
        digest_ = fnv(digest_, std::string(cs::to_string(e.state.st)) + e.state.step + e.state.reason);
        // An acceptance that reached the inbox is never lost on the way (early, duplicated, out of
        // order): a lead that ended normally sent its introduction.
        if (e.state.st == cs::status::done && acceptance_delivered_.count(e.lead) != 0) {
            const auto& msgs = people_[static_cast<std::size_t>(e.lead)].messages;
            const bool introduced = std::any_of(msgs.begin(), msgs.end(), [](const message& m) {
                return m.from_me && m.text.rfind("Thanks for connecting", 0) == 0;
            });
            if (!introduced) {
                violation("lead " + std::to_string(e.id) + " accepted (the event was delivered) but ended without "
                          "its introduction");
            }
        }
        if (!cs::is_terminal(e.state.st)) {
            violation("lead " + std::to_string(e.id) + " lost: " + cs::to_string(e.state.st) + " at " + e.state.step +
                      " (" + e.state.reason + "), owner " + std::to_string(e.owner));
        } else {
            ++r.finished;
        }
    }
    r.violations = violations_;
    r.digest = digest_;
    r.requests = requests_;
    r.invites = invites_;
    r.messages = messages_;
    r.rate_limited = rate_limited_;
    r.crashes = crashes_;
    r.events = events_;
    r.cycles = cycles_;
    r.chained = chained_;
    r.budget_waits = static_cast<std::uint64_t>(in_flight_waits_);
    r.sim_days = secs(now_) / 86'400;
    // Let the coroutines still suspended end with the io_context.
    return r;
}

}  // namespace

cs::campaign sim_campaign(int accounts, std::int64_t budget) {
    std::string names;
    for (int i = 0; i < accounts; ++i) {
        names += (i > 0 ? ", acc_" : "acc_") + std::to_string(i + 1);
    }
    std::string text = campaign_text;
    text.replace(text.find("ACCOUNTS"), 8, names);
    text.replace(text.find("BUDGET"), 6, std::to_string(budget));
    cs::load_options lo;
    lo.read_file = [](const std::string&) -> std::optional<std::string> {
        return std::string("profile_url,first_name\nhttps://www.linkedin.com/in/x,X\n");
    };
    auto loaded = cs::load_campaign(text, lo);
    if (!loaded.value) {
        throw std::runtime_error("sim: the campaign does not load: " + loaded.errors.front().to_string());
    }
    return std::move(*loaded.value);
}

std::string report::summary() const {
    std::ostringstream s;
    s << "seed " << seed << ": " << (violations.empty() ? "ok" : "FAILED") << "; " << finished << " leads finished in "
      << sim_days << " simulated days; " << requests << " requests (" << invites << " invitations, " << messages
      << " messages, " << rate_limited << " 429s), " << events << " events, " << crashes << " crashes, " << cycles
      << " cycles (" << chained << " settles went on in the same cycle), " << budget_waits
      << " calls waited for the calls in flight; digest " << std::hex << digest;
    for (const auto& v : violations) {
        s << "\n  " << v;
    }
    return s.str();
}

report run(const options& o) {
    simulation s(o);
    return s.run();
}

}  // namespace orch::sim
