// The fields of the hot batch statements' row types (migration 0013), in the types' order, for
// record_rows writers. engine_rows_pg_test holds each list equal to its type in the database.
#pragma once

#include <array>
#include <string_view>

namespace orch::engine::batch_rows {

// engine/apply_transitions: worker_transition_row_v2 (the enrollment's state as decide() left it,
// its wait code last: migration 0018; then the statement's own fields)
inline constexpr std::array<std::string_view, 12> transition{
    "enrollment_id", "step",    "status",    "next_run_at_ms", "attempt",      "reconcile",
    "accepted_seen", "reason",  "variant",   "wait_code",      "event_cursor", "leased"};
// engine/settle: worker_settle_row_v3 (the same state, then the call's outcome; then, for a row
// whose next step was decided in the same cycle, its event cursor and lease: migration 0014)
inline constexpr std::array<std::string_view, 17> settle{
    "enrollment_id", "step",    "status",    "next_run_at_ms", "attempt", "reconcile", "accepted_seen",
    "reason",        "variant", "wait_code", "attempt_id",     "outcome", "error",     "credits",
    "call",          "event_cursor", "leased"};
// engine/insert_intents: worker_intent_row
inline constexpr std::array<std::string_view, 8> intent{"attempt_id", "enrollment_id", "step",    "call",
                                                        "reconcile",  "attempt",       "variant", "body"};
// ledger/apply $1: ledger_transfer_row
inline constexpr std::array<std::string_view, 12> transfer{"transfer_id", "attempt_id", "campaign_id", "sender",
                                                           "action",      "day",        "reserved",    "scopes",
                                                           "state",       "posted",     "overrun",     "shortfall"};
// ledger/apply $2: ledger_settled_row
inline constexpr std::array<std::string_view, 5> settled{"transfer_id", "state", "posted", "overrun", "shortfall"};
// ledger/reserve_scopes and ledger/ensure_scopes: ledger_pair_row
inline constexpr std::array<std::string_view, 2> pair{"campaign_id", "sender"};
// ledger/apply $3: ledger_entry_row
inline constexpr std::array<std::string_view, 7> entry{"transfer_id", "attempt_id", "scope_id", "kind",
                                                       "debit",       "credit",     "amount"};

}  // namespace orch::engine::batch_rows
