// orch::engine intake: `orchestrator serve`'s event side, built so that no single process or
// reading of the spec is a point of failure.
//
// Receivers (every replica): custom mode, when webhook_public_url is set. The receiver (its own
// listener, webhook_listen) takes POST <public path>/<account_id>, verifies X-Service-Signature
// over "<X-Service-Timestamp>.<raw body>" with the account's secret (read from Postgres, where
// the leader keeps it encrypted under ORCH_SECRET_KEY) and a 5-minute tolerance, and answers 401
// to anything unsigned, forged or stale. A verified event is stored once: keyed by the body's own
// event id, else the X-Service-Event-Id header, else a digest of the body.
//
// Reading events: any envelope a faithful reading of the spec may use (outreach::
// parse_webhook_event). A verified delivery that cannot be read is kept raw in events_quarantine,
// logged once with its id, counted, and answered 200 {"status":"quarantined"}: the API must not
// redeliver it forever, and nothing is lost (the CLI's `events quarantine` and the admin API's
// /v1/events/quarantine show it). Only failed verification gets a 4xx. Unknown event types are
// stored as kind `other` and counted.
//
// The leader (one replica at a time, a Postgres session advisory lock; it stops leading the moment
// its lock connection fails a check, within leader_check_ms): manages the webhooks (one per
// network account, filter message_received, accepted_invitation and disconnection; created, read
// back, started with /start when not active on create, confirmed with the list; reused across
// restarts after checking it is active and signed; its secret rotated when the stored one cannot
// be opened), follows hosted streams and polls (by `after`, `cursor` or `since`, whichever the
// server honours), reads the key's credits, and runs the catch-up sweep: after any gap in intake
// (a leader starting, a webhook created, a stream lost while polling cannot catch up, a delivery
// answered 503 because the database failed) and every sweep_seconds, it checks the pending
// invitations (list_sent, then check_invitation for those no longer listed, or checks alone when
// they are fewer) and the replies (list_inbox) of live enrollments, and after a gap the later
// messages of the leads who replied already, and feeds what it finds into the inbox as events. Its calls pass the shared rate-limit buckets, and their credits
// are charged to the campaigns they serve.
//
// Events health: an account with pending invitations and no event for events_quiet_seconds is
// reported (a warning, /readyz "status": "degraded", orch_intake_events{state="quiet_accounts"}).
#pragma once

#include "engine/config.hpp"

#include <atomic>
#include <cstdint>
#include <memory>

namespace orch::engine {

// The advisory lock the leading serve replica holds for as long as its session lives (its
// webhooks, streams, sweeps and the manual replies' sending); schema/queries/intake/
// leader_running.sql asks whether one holds it.
constexpr std::int64_t intake_leader_lock_key = 0x6f72636853727665;  // "orchSrve"

struct intake_stats {
    std::atomic<std::uint64_t> received{0};     // deliveries or stream/poll items seen
    std::atomic<std::uint64_t> stored{0};       // new inbox events
    std::atomic<std::uint64_t> duplicates{0};   // already stored
    std::atomic<std::uint64_t> refused_path{0};      // requests to a path not the receiver's (404)
    std::atomic<std::uint64_t> refused_account{0};   // deliveries for an account with no webhook of ours (404)
    std::atomic<std::uint64_t> refused_signature{0}; // failed signature verification (401)
    // Webhook secrets taken for lost: deliveries that kept failing the signature check with the
    // stored secret (rotated outside the orchestrator), handed to the leader to rotate.
    std::atomic<std::uint64_t> secrets_lost{0};
    std::atomic<std::uint64_t> quarantined{0};  // verified but unreadable, kept raw
    std::atomic<std::uint64_t> unknown_types{0};// readable events of a type the engine does not use
    std::atomic<std::uint64_t> swept{0};        // events the catch-up sweep found
    // Full sweeps of an account made, and skipped because its sweeps found nothing the deliveries
    // missed (its interval backed off towards sweep_max_seconds).
    std::atomic<std::uint64_t> full_sweeps{0};
    std::atomic<std::uint64_t> full_sweeps_skipped{0};
    // Message events naming only their conversation, stored with no lead unread: no campaign of
    // the account had credits for the read that finds their sender.
    std::atomic<std::uint64_t> unread_conversations{0};
    std::atomic<bool> leader{false};            // this replica manages webhooks and sweeps
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
