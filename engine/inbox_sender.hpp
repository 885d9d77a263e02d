// orch::engine inbox_sender: `serve`'s sender of the inbox's manual replies (engine/inbox.hpp),
// with the guarantees of a campaign step.
//
// It runs on a thread of its own (its own io_context, Outreach client, database connection and
// limits gate) in every replica; replicas never take the same reply (the claim locks the row and
// skips locked ones). For each due reply:
//   - Checked again at send time: the person or company on the do-not-contact list, a cancelled
//     campaign or an unavailable account make it `refused` (not sent, not billed).
//   - The limits gate (engine/limits_gate.hpp) as for a step's send: the key's request rate, the
//     account's send quota of its quota day and week, the campaign's own caps and any
//     RATE_LIMITED cooldown (no pacing: an operator's answer does not wait for the day's spread).
//     A denial leaves it queued until the time the gate names, its reason shown.
//   - The credit ledger: the send's upper bound is reserved for the campaign (keyed by the call's
//     step_attempts row, step 'manual_reply'); the day cap's refusal waits for the next UTC day,
//     the campaign's or the account's budget refuses it (not sent, not billed).
//   - The intent (the step_attempts row and the reply's lease) is committed before the call
//     leaves; its outcome and the ledger's post or void after.
//   - An outcome that may have taken effect (a timeout after the request was written), and an
//     intent found in flight under an expired lease (the sender stopped during the call), are
//     reconciled: the conversation is read (get_conversation, through the same gate and ledger)
//     and our text sent since the reply was asked for means it was sent; only when it is absent
//     is the reply sent again.
#pragma once

#include "engine/config.hpp"
#include "engine/outage_log.hpp"

#include <atomic>
#include <memory>
#include <string>

namespace orch::engine {

class inbox_sender {
public:
    // `owner`: this replica's name in leases and intent rows. `database_outage`: where a lost
    // database is told (shared with the rest of `serve`, so that an outage is said once).
    inbox_sender(settings s, std::string owner, std::shared_ptr<outage_log> database_outage);
    ~inbox_sender();  // stops and joins
    inbox_sender(const inbox_sender&) = delete;
    inbox_sender& operator=(const inbox_sender&) = delete;

    // Starts the thread; a setup failure (database, API settings, Redis) is logged and the
    // thread retries every few seconds.
    void start();
    void stop();

    static constexpr int lease_seconds = 120;   // the longest a send may take (the API's deadline is shorter)
    static constexpr int max_tries = 6;          // transient failures before `failed`

private:
    struct impl;
    std::unique_ptr<impl> impl_;
};

}  // namespace orch::engine
