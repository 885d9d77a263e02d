#include "engine/worker.hpp"

#include "engine/call_gate.hpp"
#include "engine/dnc.hpp"
#include "engine/invariant.hpp"
#include "engine/limits_gate.hpp"
#include "engine/outage_log.hpp"
#include "engine/call_path.hpp"
#include "engine/lane_cycle.hpp"
#include "engine/pg_lane_store.hpp"
#include "engine/store.hpp"
#include "api/text.hpp"
#include "schema/schema.hpp"

#include <boost/asio/co_spawn.hpp>
#include <nlohmann/json.hpp>
#include <boost/asio/post.hpp>
#include <boost/asio/detached.hpp>
#include <boost/asio/executor_work_guard.hpp>
#include <boost/asio/io_context.hpp>
#include <pqxx/pqxx>
#include <spdlog/fmt/ranges.h>
#include <spdlog/spdlog.h>

#include <poll.h>
#include <sys/eventfd.h>
#include <unistd.h>

#include <array>
#include <cerrno>
#include <condition_variable>
#include <exception>
#include <unordered_map>
#include <mutex>
#include <optional>
#include <random>
#include <system_error>
#include <thread>

namespace orch::engine {

namespace asio = boost::asio;
namespace cs = campaigns;

namespace {

std::string q(std::string_view name) { return std::string(schema::query(name)); }

}  // namespace

struct worker::impl {
    settings cfg;
    worker_stats stats;
    std::atomic<bool> stopping{false};
    std::atomic<bool> failed{false};
    std::atomic<bool> slots_differ_told{false};  // the warning of another lane_transaction_slots, once
    std::atomic<bool> limits_differ_told{false};  // the warning of other rate-limit settings, once
    // PostgreSQL's outages, as the lanes (callers 0..n-1) and the wake-up listener (-1) meet them.
    outage_log database_outage{"worker", "database"};
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
            const lane_row* job = nullptr;  // which call of the row (a row may be claimed again)
            call_outcome outcome;
            std::exception_ptr failure;
        };
        call_queue(asio::any_io_executor ex, std::size_t share, std::shared_ptr<call_slots> slots)
            : window(std::move(ex), share, std::move(slots)) {}
        // Network thread only.
        call_window window;
        seeded_random rng;  // from std::random_device
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

    explicit impl(settings s) : cfg(std::move(s)) {
        if (stop_fd < 0) {
            throw std::system_error(errno, std::generic_category(), "worker: eventfd");
        }
        backoff.base_ms = cfg.retry_base_ms;
        backoff.cap_ms = cfg.retry_cap_ms;
        backoff.reconcile_delay_ms = cfg.reconcile_delay_ms;
        // Each lane runs at most its share of the API connections at once.
        const auto lanes = static_cast<std::size_t>(std::max<std::int64_t>(1, cfg.worker_lanes));
        const auto share = std::max<std::size_t>(1, (static_cast<std::size_t>(cfg.api_pool_size) + lanes - 1) / lanes);
        // And all of them together at most the pool's connections (the shares round up).
        auto slots = std::make_shared<call_slots>(static_cast<std::size_t>(std::max<std::int64_t>(1, cfg.api_pool_size)));
        for (std::size_t i = 0; i < lanes; ++i) {
            queues.push_back(std::make_shared<call_queue>(io.get_executor(), share, slots));
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

    const clock_port* clock = &system_clock();  // the engine's time source

    // The last call the API gave no answer to, for the warning that says so (stats.unreached).
    std::mutex unreached_m;
    std::string last_unreached;
    std::string last_unreadable;  // the last answer the client could not read (stats.unreadable)

    // What a lane's cycle decides with besides its store (set by run() once the gate is made).
    lane_context context;
    void committed(const cycle_counts& c) {
        stats.transitions += c.transitions;
        stats.calls += c.calls;
        stats.chained += c.chained;
    }
    // One cycle of a lane (engine/lane_cycle.hpp) over a transaction of its connection; when it
    // fails, the calls it was settling are settled on their own.
    lane_cycle_result cycle(pqxx::connection& conn, std::optional<finished_calls>& pending, const std::string& owner,
                            claim_sweep& sweep, std::size_t room);
    void enqueue(const std::shared_ptr<call_queue>& q, std::vector<lane_row*> jobs);
    asio::awaitable<void> run_one(std::shared_ptr<call_queue> q, lane_row* job);
    void settle_alone(pqxx::connection& conn, std::optional<finished_calls>& pending, const std::string& owner,
                      claim_sweep& sweep);
    void listen();
    void lane(int index);
};

lane_cycle_result worker::impl::cycle(pqxx::connection& conn, std::optional<finished_calls>& pending,
                                     const std::string& owner, claim_sweep& sweep, std::size_t room) {
    try {
        pg_lane_store store(conn, {cfg, cache, stats, *clock, owner, sweep});
        auto r = lane_cycle(store, context, pending, room);
        committed(r.counts);
        return r;
    } catch (...) {
        // The settle rolled back with the cycle: it is tried on its own so finished calls do not
        // wait for their lease to expire (if this fails too, the lease expiry reconciles them).
        settle_alone(conn, pending, owner, sweep);
        throw;
    }
}

void worker::impl::enqueue(const std::shared_ptr<call_queue>& q, std::vector<lane_row*> jobs) {
    q->in_flight += jobs.size();
    asio::post(io, [this, q, jobs = std::move(jobs)] {
        // A call beyond the lane's share would only wait for a connection, holding its coroutine
        // frames meanwhile (about 4 KB each), so the others wait in the window as plain jobs.
        for (lane_row* job : jobs) {
            q->window.add([this, q, job] { return run_one(q, job); });
        }
    });
}

asio::awaitable<void> worker::impl::run_one(std::shared_ptr<call_queue> q, lane_row* job) {
    call_queue::finished f;
    f.enrollment_id = job->enrollment_id;
    f.job = job;
    try {
        call_job j{target_of(*job), job->campaign.get(), job->campaign_id, &*job->call, job->company, job->state.attempt,
                   job->send_by};
        co_await send_checked(ports, j, q->rng, f.outcome);
        if (const auto& code = f.outcome.error_code;
            code == "CONNECT_FAILED" || code == "TIMEOUT" || code == "CONNECTION_LOST") {
            ++stats.unreached;
            std::lock_guard lock(unreached_m);
            last_unreached = f.outcome.error;
        } else if (!f.outcome.nothing_sent) {
            ++stats.answered;
        }
        if (f.outcome.error.starts_with("malformed_response ") || f.outcome.error.starts_with("http_status ")) {
            // An answer of a shape the client cannot read (outreach::describe's kind): the call is
            // reconciled or retried, and an API that changed its answers must show in the log.
            ++stats.unreadable;
            std::lock_guard lock(unreached_m);
            last_unreadable = f.outcome.error;
        }
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

void worker::impl::settle_alone(pqxx::connection& conn, std::optional<finished_calls>& pending,
                                const std::string& owner, claim_sweep& sweep) {
    if (!pending) {
        return;
    }
    try {
        pg_lane_store store(conn, {cfg, cache, stats, *clock, owner, sweep});
        committed(engine::settle_alone(store, context, *pending));
    } catch (const std::exception& e) {
        if (!pending->gated && pending->again == nullptr) {
            // Failed before anything was decided (the connection broke, the transaction could not
            // begin): kept for the lane's next cycle, as calls that come back while the lane has
            // no connection are. Dropped, their outcomes would never reach the gate: a refused or
            // unsent call's quota not given back, a success not ending a 429 streak.
            spdlog::warn("worker: settling {} calls failed ({}); kept for the lane's next cycle",
                         pending->calls.size(), e.what());
            return;
        }
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
    // Accounts that became unavailable or available again (migration 0022), from any process:
    // the gate's send-time mirror holds or frees their queued calls at once.
    struct account_receiver final : pqxx::notification_receiver {
        impl& self;
        account_receiver(pqxx::connection& c, impl& s) : pqxx::notification_receiver(c, "orch_account"), self(s) {}
        void operator()(const std::string& payload, int) override {
            const auto j = nlohmann::json::parse(payload, nullptr, false);
            if (j.is_discarded() || !j.is_object() || !j.contains("account_id") || !j["account_id"].is_string() ||
                !j.contains("connected") || !j["connected"].is_boolean()) {
                spdlog::warn("worker: ignored an account notification it cannot read: {}", orch::text::escaped(payload));
                return;
            }
            const auto account = j["account_id"].get<std::string>();
            const bool connected = j["connected"].get<bool>();
            // The login it became available under (migration 0025; 0 when the payload has none).
            const std::int64_t login = j.contains("since") && j["since"].is_number_integer() ? j["since"].get<std::int64_t>() : 0;
            self.gate->account_changed(account, connected, self.clock->now(), login);
            spdlog::info("worker: account {} is {}: {}", orch::text::escaped(account),
                         connected ? "available again" : "unavailable",
                         connected ? "its calls go out again" : "its queued calls are held");
        }
    };
    struct dnc_receiver final : pqxx::notification_receiver {
        bool changed = false;
        explicit dnc_receiver(pqxx::connection& c) : pqxx::notification_receiver(c, dnc::changed_channel) {}
        void operator()(const std::string&, int) override { changed = true; }
    };
    constexpr int listener = -1;
    reconnect_backoff retry;
    while (!stopping) {
        try {
            pqxx::connection conn(cfg.database_url);
            receiver r(conn, *this);
            account_receiver accounts(conn, *this);
            dnc_receiver list_changed(conn);
            // Listening first, then loading: an add committed in between is in the load or
            // notifies after it.
            do_not_contact.load(conn);
            database_outage.succeeded(listener);
            retry.reset();
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
            // Said once per outage (outage_log), with the lanes' attempts: the lanes poll every
            // idle_poll_ms meanwhile.
            database_outage.failed(listener, std::string("the wake-up listener: ") + e.what());
            wait_readable_or_stop(-1, static_cast<int>(retry.next().count()));
        }
    }
}

void worker::impl::lane(int index) {
    const std::shared_ptr<call_queue> q = queues[static_cast<std::size_t>(index)];
    claim_sweep sweep{0, -1, std::minstd_rand(std::random_device{}() ^ static_cast<std::uint_fast32_t>(index))};
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
    std::unordered_map<std::int64_t, std::unique_ptr<lane_row>> held;
    // Calls whose rows this lane claimed again before they came back: their leases ended while
    // they waited (the send window keeps them from leaving then). Their answers are dropped when
    // they come back: the new claim closed their attempts and reconciles them.
    std::unordered_map<const lane_row*, std::unique_ptr<lane_row>> superseded;
    std::unique_ptr<pqxx::connection> conn;
    reconnect_backoff retry;  // the wait before reconnecting after the database failed
    std::optional<finished_calls> pending;
    bool drained = false;  // the last claim found less than it asked for
    std::uint64_t wakes_seen = 0;
    steady::time_point last_claim{};
    steady::time_point last_cycle_end{};
    steady::duration last_cycle{};
    // A lane without a claim slot (more than 64 lanes on the database) asks again now and then,
    // and says so once it has none and once it got one.
    steady::time_point last_slot_try{};
    bool without_slot_told = false;
    const auto tell_slot = [&] {
        if (sweep.slot < 0 && !without_slot_told) {
            without_slot_told = true;
            spdlog::warn("worker: lane={} got no claim slot: all 64 are held by the lanes on this database; it "
                         "claims from random slices of the due work and asks again every {} s",
                         index, claim_slot_retry.count());
        } else if (sweep.slot >= 0 && without_slot_told) {
            without_slot_told = false;
            spdlog::info("worker: lane={} got claim slot {}", index, sweep.slot);
        }
    };
    // The gate hears the end of a call that is not settled: a superseded one's answer, or
    // nothing from a call that failed (it may have been sent, so its take is kept as spent).
    const auto gate_hears = [this](const lane_row& row, const call_queue::finished& f) {
        if (!row.call) {
            return;
        }
        call_outcome failed;
        failed.attempt_outcome = attempt_outcome::uncertain;
        try {
            gate->after(target_of(row), *row.campaign, *row.call, f.failure ? failed : f.outcome);
        } catch (const std::exception& e) {
            spdlog::warn("worker: enrollment={} the limits gate did not hear its call's end: {}", row.enrollment_id,
                         e.what());
        }
    };
    for (;;) {
        std::vector<call_queue::finished> back;
        bool claim_now = false;
        {
            std::unique_lock lock(q->m);
            for (;;) {
                const bool stop = stopping;
                const auto t = steady::now();
                const std::size_t running = held.size() + superseded.size() - q->done.size();
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
            finished_calls u;
            u.batch.reserve(back.size());
            for (auto& f : back) {
                auto it = held.find(f.enrollment_id);
                if (it == held.end() || it->second.get() != f.job) {
                    const auto old = superseded.find(f.job);
                    ORCH_INVARIANT(old != superseded.end(), "lane {} got back a call it does not hold (enrollment {})",
                                   index, f.enrollment_id);
                    // Its answer is dropped, not what the gate took for it: a call not sent gives
                    // its quota back, a 429 its cooldown.
                    gate_hears(*old->second, f);
                    superseded.erase(old);
                    continue;
                }
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
                    gate_hears(*it->second, f);
                    held.erase(it);
                    continue;
                }
                u.calls.push_back(u.batch.size());
                u.batch.push_back(std::move(*it->second));
                u.outcomes.push_back(std::move(f.outcome));
                held.erase(it);
            }
            if (!u.calls.empty() && !pending) {
                pending = std::move(u);
            } else if (!u.calls.empty()) {
                // Kept from a cycle that could not run (no connection): settled together. A cycle
                // that ran settled its calls, or tried them on their own (settle_alone).
                ORCH_INVARIANT(pending->again == nullptr && !pending->gated,
                               "lane {} kept calls that a cycle already settled", index);
                const std::size_t offset = pending->batch.size();
                for (auto& row : u.batch) {
                    pending->batch.push_back(std::move(row));
                }
                for (const std::size_t i : u.calls) {
                    pending->calls.push_back(offset + i);
                }
                for (auto& o : u.outcomes) {
                    pending->outcomes.push_back(std::move(o));
                }
            }
        }
        try {
            if (!conn) {
                // Ready before it is kept: a connection that failed half-way is made again whole.
                auto fresh = std::make_unique<pqxx::connection>(cfg.database_url);
                prepare_hot_statements(*fresh);
                const auto others = name_lane_session(*fresh, cfg.lane_transaction_slots, limits_fingerprint(cfg), owner);
                if (!others.slots.empty() && !slots_differ_told.exchange(true)) {
                    spdlog::warn("worker: other workers on this database run with lane_transaction_slots {} where this "
                                 "one has {}: give every worker the same value (the largest holds, and workers with "
                                 "fewer gates get fewer turns)",
                                 fmt::join(others.slots, ", "), cfg.lane_transaction_slots);
                }
                if (others.other_limits > 0 && !limits_differ_told.exchange(true)) {
                    spdlog::warn("{}", limits_differ_warning("worker", others.other_limits));
                }
                start_sweep(*fresh, sweep);
                conn = std::move(fresh);
                last_slot_try = steady::now();
                tell_slot();
            } else if (sweep.slot < 0 && steady::now() - last_slot_try >= claim_slot_retry) {
                start_sweep(*conn, sweep);
                last_slot_try = steady::now();
                tell_slot();
            }
            const std::size_t holding = held.size() + superseded.size();
            const std::size_t room = max_held > holding ? max_held - holding : 0;
            if (claim_now) {
                last_claim = steady::now();
            }
            const auto cycle_start = steady::now();
            auto r = cycle(*conn, pending, owner, sweep, claim_now ? room : 0);
            last_cycle_end = steady::now();
            last_cycle = last_cycle_end - cycle_start;
            ++stats.cycles;
            database_outage.succeeded(index);
            retry.reset();
            if (claim_now) {
                drained = r.drained;
            }
            if (!r.calls.empty()) {
                std::vector<lane_row*> jobs;
                jobs.reserve(r.calls.size());
                for (auto& c : r.calls) {
                    jobs.push_back(c.get());
                    auto [it, fresh] = held.try_emplace(c->enrollment_id);
                    if (!fresh) {
                        spdlog::warn("worker: lane={} claimed enrollment {} again before its earlier call came back "
                                     "(its lease ended while it waited to be sent): that call is not sent, or its "
                                     "answer is dropped, and this claim reconciles it",
                                     index, c->enrollment_id);
                        superseded.emplace(it->second.get(), std::move(it->second));
                    }
                    it->second = std::move(c);
                }
                enqueue(q, std::move(jobs));
            }
        } catch (...) {
            // A failed transaction rolled back: the claimed rows are untouched, or leased and
            // reconciled after the lease. Nothing is lost; what the lane does next depends on the
            // failure's category (engine/result.hpp).
            const error e = error_of_current_exception();
            // A cycle that failed has settled its calls on their own, or let them go (settle_alone),
            // or kept them when nothing about them was decided yet (the connection broke). Calls
            // kept so, or because the lane has no connection, are settled by the next cycle that
            // runs (their leases may expire meanwhile, and then the compare-and-set drops them and
            // the next claim reconciles).
            switch (e.category) {
            case error_category::unavailable: {
                // Said once per outage, with a summary every 30 s and its end (outage_log); the
                // lane waits longer after each failure, and a stop ends the wait.
                database_outage.failed(index, "lane=" + std::to_string(index) + ": " + e.message);
                conn.reset();
                const auto wait = retry.next();
                std::unique_lock lock(q->m);
                q->cv.wait_for(lock, wait, [this] { return stopping.load(); });
                break;
            }
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
    auto made_gate = std::make_unique<limits_gate>(std::move(limits_cfg), m.cfg.pacing, *m.clock);
    limits_gate& key_gate = *made_gate;
    key_gate.start_refresher();
    m.gate = std::move(made_gate);
    m.client_api.emplace(*m.api);
    m.ports.api = &*m.client_api;
    m.ports.gate = m.gate.get();
    m.ports.do_not_contact = [&m](const std::string& profile_url, const std::string& company, std::int64_t campaign_id) {
        return m.do_not_contact.stops(profile_url, company, campaign_id);
    };
    m.ports.campaign_halted = [&m](std::int64_t campaign_id) { return m.do_not_contact.halted(campaign_id); };
    m.ports.clock = m.clock;
    m.ports.backoff = m.backoff;
    m.context.gate = m.gate.get();
    m.context.clock = m.clock;
    m.context.stopping = [&m] { return m.stopping.load(); };
    // A request takes at most api_timeout_ms (the client's total deadline, pool wait included);
    // a second of margin for the clocks' reading. The settings keep it at 1 s or more.
    m.context.send_window = std::chrono::milliseconds(m.cfg.lease_seconds * 1000 - m.cfg.api_timeout_ms - 1000);
    // A call of two requests (a follow-up's reply check, then its send; withdraw's look-up, then
    // the withdrawal) sends its second within the same window: when the first may take the whole
    // window, the second cannot go, and the call is a failed attempt with its first request billed.
    if (!lease_fits_two_requests(m.cfg)) {
        spdlog::warn("worker: lease_seconds ({} s) is below twice api_timeout_ms ({} ms) plus 2 s: a follow-up whose "
                     "reply check is answered more than {} ms after its claim cannot send in time, and counts as a "
                     "failed attempt (the check billed); raise lease_seconds to {} or more, or lower api_timeout_ms",
                     m.cfg.lease_seconds, m.cfg.api_timeout_ms, m.context.send_window->count(),
                     (2 * m.cfg.api_timeout_ms + 2000 + 999) / 1000);
    }
    m.context.outcome_refused = [](std::int64_t enrollment_id, const std::string& why) {
        spdlog::error("worker: enrollment={} result refused by the state machine: {}", enrollment_id, why);
    };
    m.context.event_refused = [](const plan_item& it, const std::string& why) {
        spdlog::warn("worker: enrollment={} step={} due event refused: {}", it.target.enrollment_id,
                     it.row.state.step, why);
    };
    m.context.stop_everything = [&m](const std::string& error) {
        spdlog::critical("worker: the API refuses this key or TLS setup ({}); stopping", error);
        m.failed = true;
        m.stop();
    };
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
            spdlog::info("worker: {} leads waiting for a quota or the pacing are due again under "
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
    spdlog::info("worker: {} started with {} lanes, batch {}, lane transaction slots {}, API {}", m.cfg.worker_id,
                 m.cfg.worker_lanes, m.cfg.batch_size,
                 m.cfg.lane_transaction_slots > 0 ? std::to_string(m.cfg.lane_transaction_slots) : "unlimited",
                 m.cfg.api_url);
    {
        std::optional<store> s;  // with exit_when_idle: reads whether work is left
        bool idle_read_failed = false;
        const auto every = std::chrono::seconds(m.cfg.progress_log_seconds);
        auto last = std::chrono::steady_clock::now();
        std::uint64_t last_transitions = 0;
        std::uint64_t last_calls = 0;
        std::uint64_t last_unanswered = 0;
        std::uint64_t gate_timeouts_told = 0;
        auto gate_told_at = last - std::chrono::seconds(10);  // the first at once
        std::uint64_t unreached_told = 0;
        std::uint64_t unreadable_told = 0;
        auto unreadable_told_at = last - std::chrono::seconds(10);  // the first at once
        auto unreached_told_at = last - std::chrono::seconds(10);  // the first at once
        while (!m.stopping) {
            // live_total reads a few funnel_counts rows: polling often costs nothing and ends
            // the run (the demo's, a benchmark's) close to when the last lead finished.
            m.wait_readable_or_stop(-1, exit_when_idle ? 20 : 1000);
            if (exit_when_idle) {
                // A database that cannot be reached here does not end the worker (its lanes wait
                // for it too): this thread says so once and reads again.
                try {
                    if (!s) {
                        s.emplace(m.cfg.database_url);
                    }
                    pqxx::nontransaction tx(s->connection());
                    if (tx.exec(q("engine/live_total"))[0][0].as<std::int64_t>() == 0) {
                        m.stop();
                    }
                    idle_read_failed = false;
                } catch (const std::exception& e) {
                    s.reset();
                    if (!idle_read_failed) {
                        spdlog::warn("worker: cannot read whether work is left ({}); reading again", e.what());
                    }
                    idle_read_failed = true;
                }
            }
            const auto t = std::chrono::steady_clock::now();
            // Lanes that went on without a gate: said as it happens (at most every 10 s), not
            // only in the last line of a worker that may run for weeks.
            if (const auto n = m.stats.gate_timeouts.load(); n > gate_timeouts_told && t - gate_told_at >= std::chrono::seconds(10)) {
                spdlog::warn("worker: {} lane transaction(s) found every database gate taken for {} ms and went on "
                             "without one: a transaction holding a gate is stalled, or lane_transaction_slots ({}) is "
                             "far below the lanes of all workers",
                             n - gate_timeouts_told, lane_gate_wait_ms, m.cfg.lane_transaction_slots);
                gate_timeouts_told = n;
                gate_told_at = t;
            }
            // Calls that find no API are retried with backoff and settle as transient: without a
            // line here an outage of the API left no trace in the log (a trial: 71 connect
            // failures, no warning). At most one line every 10 s.
            if (const auto n = m.stats.unreached.load(); n > unreached_told && t - unreached_told_at >= std::chrono::seconds(10)) {
                std::string last_error;
                {
                    std::lock_guard lock(m.unreached_m);
                    last_error = m.last_unreached;
                }
                // A worker none of whose calls was ever answered is most likely pointed at the wrong
                // place: said with the address, which a timeout's or a refused connection's text
                // does not carry.
                spdlog::warn("worker: {} {}API call(s) got no answer from the API at {} (retried with backoff){}; "
                             "the last: {}",
                             n - unreached_told, unreached_told == 0 ? "" : "more ",
                             orch::text::escaped(m.cfg.api_url),
                             m.stats.answered.load() == 0
                                 ? "; none of this worker's calls has been answered: is OUTREACH_API_URL right?"
                                 : "",
                             orch::text::escaped(last_error));
                unreached_told = n;
                unreached_told_at = t;
            }
            if (const auto n = m.stats.unreadable.load();
                n > unreadable_told && t - unreadable_told_at >= std::chrono::seconds(10)) {
                std::string last_error;
                {
                    std::lock_guard lock(m.unreached_m);
                    last_error = m.last_unreadable;
                }
                spdlog::warn("worker: {} {}API answer(s) the client could not read (the calls are reconciled or "
                             "retried; orch_api_unreadable_answers_total counts them); the last: {}",
                             n - unreadable_told, unreadable_told == 0 ? "" : "more ",
                             orch::text::escaped_clipped(last_error, 400));
                unreadable_told = n;
                unreadable_told_at = t;
            }
            if (every.count() > 0 && t - last >= every) {
                const auto transitions = m.stats.transitions.load();
                const auto calls = m.stats.calls.load();
                const double secs = std::chrono::duration<double>(t - last).count();
                std::size_t in_flight = 0;
                for (const auto& lane_queue : m.queues) {
                    in_flight += lane_queue->in_flight.load();
                }
                // Calls that reached no API are calls made, not calls the API answered: said apart.
                const auto unanswered = m.stats.unreached.load();
                const std::string unanswered_text =
                    unanswered > last_unanswered ? " (" + std::to_string(unanswered - last_unanswered) + " got no answer)"
                                                 : std::string();
                spdlog::info("worker: progress: {} transitions ({:.0f}/s), {} API calls{} ({:.1f}/s) in the last {:.0f} s; "
                             "{} calls queued or in flight; {} in total",
                             transitions - last_transitions, static_cast<double>(transitions - last_transitions) / secs,
                             calls - last_calls, unanswered_text, static_cast<double>(calls - last_calls) / secs, secs,
                             in_flight, transitions);
                last = t;
                last_transitions = transitions;
                last_calls = calls;
                last_unanswered = unanswered;
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
                 "that settled them); ledger writes: {} on the fast path, {} under locks{}{}",
                 m.cfg.worker_id, m.stats.transitions.load(), m.stats.calls.load(), m.stats.chained.load(),
                 m.stats.ledger_fast.load(), m.stats.ledger_locked.load(),
                 m.cfg.lane_transaction_slots > 0
                     ? fmt::format("; {} lane transactions went on without a database gate", m.stats.gate_timeouts.load())
                     : std::string(),
                 [&] {
                     const auto q = key_gate.key_queue();
                     return q.places_kept + q.turns_missed == 0
                                ? std::string()
                                : fmt::format("; the API key's queue: {} calls waited for a queued lead's place, {} "
                                              "turns passed without their lead",
                                              q.places_kept, q.turns_missed);
                 }());
    return m.failed ? 1 : 0;
}

}  // namespace orch::engine
