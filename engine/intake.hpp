// orch::engine intake: `orchestrator serve`'s event side. At start it ensures one V2 webhook per
// known account (message_received, accepted_invitation; disconnection always comes):
//   - custom mode with signing when webhook_public_url is set: the receiver (its own listener,
//     webhook_listen) takes POST <public path>/<account_id>, verifies X-Service-Signature over
//     "<X-Service-Timestamp>.<raw body>" with that webhook's secret and a 5-minute tolerance,
//     answers 401 to anything unsigned, forged or stale, and stores each event once (its
//     X-Service-Event-Id, else a digest of the body), so redeliveries change nothing;
//   - hosted mode otherwise: the SSE stream per account, resumed with Last-Event-ID, and polling
//     (after the last event id) whenever the stream fails, until it comes back.
// Events go to the inbox first (store::insert_event), which wakes the lead's enrollments;
// a disconnection marks the account disconnected so workers leave its leads waiting.
#pragma once

#include "engine/config.hpp"

#include <atomic>
#include <cstdint>
#include <memory>

namespace orch::engine {

struct intake_stats {
    std::atomic<std::uint64_t> received{0};   // deliveries or stream/poll items seen
    std::atomic<std::uint64_t> stored{0};     // new inbox events
    std::atomic<std::uint64_t> duplicates{0}; // already stored
    std::atomic<std::uint64_t> rejected{0};   // 401 or unparseable
};

class intake {
public:
    explicit intake(settings s);
    ~intake();
    intake(const intake&) = delete;
    intake& operator=(const intake&) = delete;

    // Runs until request_stop(); returns 0 on a clean stop. Prints nothing; logs via spdlog.
    int run();
    void request_stop();
    unsigned short receiver_port() const;  // after start (0 before)
    const intake_stats& stats() const;

private:
    struct impl;
    std::unique_ptr<impl> impl_;
};

}  // namespace orch::engine
