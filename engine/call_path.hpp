// orch::engine call path: what happens to a queued call when it leaves, and the bounded window
// of calls in flight. The worker and the seeded simulation (tests/sim) run the same code over
// their own ports (api_port, call_gate, the do-not-contact check, the clock).
//
// send_checked() is the send-time check, then the call:
//   - a person put on the do-not-contact list since the row was claimed is not contacted, nor
//     read about: the call (any but the check of an uncertain one) is not sent and the lead stops
//     (call_outcome::stop_reason); one put on it while the call was out stops the lead once the
//     call's outcome is recorded (call_outcome::stop_after_reason);
//   - a cooldown or an unavailable account seen since the claim holds the call (gate.hold(), a
//     local mirror: no I/O in the common case): not sent, no attempt spent;
//   - so does a lease too close to its end for an answer (call_job::send_by), checked before
//     every request of the call;
//   - otherwise execute(), and the gate hears the answer (answered()) before any further call
//     leaves, so a 429 closes its scope and ACCOUNT_INACTIVE holds the account's queued calls.
#pragma once

#include "campaigns/campaigns.hpp"
#include "engine/api_port.hpp"
#include "engine/call_gate.hpp"
#include "engine/executor.hpp"

#include <boost/asio/any_io_executor.hpp>
#include <boost/asio/awaitable.hpp>

#include <cstddef>
#include <deque>
#include <functional>
#include <memory>
#include <random>
#include <string>
#include <string_view>
#include <vector>

namespace orch::engine {

struct call_path_ports {
    api_port* api = nullptr;
    call_gate* gate = nullptr;
    // Why the person (profile URL, company) may not be contacted by the campaign (its id): the
    // stop reason a lead ends with (the do-not-contact list's, the campaign's `exclude:`), or
    // nullptr when they may be.
    std::function<const char*(const std::string&, const std::string&, std::int64_t)> do_not_contact;
    // True when an operator cancelled or paused the campaign (its id): a queued call is not sent.
    std::function<bool(std::int64_t)> campaign_halted;
    const clock_port* clock = &system_clock();
    backoff_settings backoff;
};

// One call as it leaves. The campaign and the call outlive the returned awaitable.
struct call_job {
    call_target target;
    const campaigns::campaign* campaign = nullptr;
    std::int64_t campaign_id = 0;
    const campaigns::api_call* call = nullptr;
    std::string company;
    int attempt = 0;  // failed attempts of the step so far (the backoff's exponent)
    // The last moment a request of the call may leave: its row's lease must outlast the answer
    // (the lease's end less the longest a request may take). Past it the call is not sent: a
    // worker that finds the lease expired reconciles the row, and could not see a request still
    // on its way.
    campaigns::time_point send_by = campaigns::time_point::max();
};

// The reason of a call not sent because an operator cancelled or paused its campaign.
inline constexpr std::string_view campaign_halted_reason = "not sent: its campaign was cancelled or paused";
// The reason of a call not sent because its lease would end before an answer.
inline constexpr std::string_view lease_too_short_reason = "not sent: its lease would end before an answer could come back";
// The reason of a call whose first request went (and was billed) but whose next was answered too
// late to leave within the lease: a transient failure, so that it spends an attempt and waits a
// backoff (due again at once, it read again, billed, at every claim, with no end).
inline constexpr std::string_view answered_too_late_reason =
    "not sent: its first request was answered too late for the next to go within the lease (raise lease_seconds "
    "to twice api_timeout_ms plus 2 s or more)";

// Sets `out` to the call's outcome. Never throws for an API failure (every failure is an
// outcome). `ports`, `job`, `rng` and `out` must outlive the returned awaitable (the caller
// co_awaits it at once, on its own frame's locals: a copy per call in flight would be memory per
// in-flight lead).
boost::asio::awaitable<void> send_checked(const call_path_ports& ports, const call_job& job, random_port& rng,
                                          call_outcome& out);

// At most `limit` calls in flight on one executor; the rest wait as plain jobs (no coroutine
// frame) and start the moment a running one returns. Used on the executor's thread only.
class call_window;
// The process's API connections, shared by its lanes' windows (one executor's thread only): a
// call starts only with a connection free for it, so its checks before each request (the do-not-
// contact list, exclusions, a campaign halted, the gate) run just before that request leaves. A
// call that passed them and then waited for a connection in the client went out after a cancel,
// a pause or an exclusion that came meanwhile.
struct call_slots {
    explicit call_slots(std::size_t limit) : limit(limit) {}
    const std::size_t limit;
    std::size_t running = 0;
    std::vector<call_window*> windows;  // when a slot frees: the others first, then the one it left
};

class call_window {
public:
    using start_fn = std::function<boost::asio::awaitable<void>()>;
    // At most `limit` calls at once, and, with `slots`, at most the process's free connections.
    call_window(boost::asio::any_io_executor ex, std::size_t limit, std::shared_ptr<call_slots> slots = nullptr);
    void add(start_fn job);

private:
    static boost::asio::awaitable<void> run(call_window* self, start_fn job);
    void pump();
    boost::asio::any_io_executor ex_;
    const std::size_t limit_;
    std::shared_ptr<call_slots> slots_;
    std::deque<start_fn> waiting_;
    std::size_t running_ = 0;
};

}  // namespace orch::engine
