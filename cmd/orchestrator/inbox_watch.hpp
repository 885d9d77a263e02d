// `orchestrator inbox ...` (the replies inbox, engine/inbox.hpp) and `orchestrator campaign watch`.
//
//   inbox list [--campaign NAME] [--account ID] [--limit N] [--format table|json]
//   inbox show REPLY_ID [--live] [--format table|json]   the reply, its conversation (--live: read
//       from the API with get_conversation, charged to the campaign), our manual replies
//   inbox reply REPLY_ID TEXT [--key KEY] [--by WHO] [--wait SECONDS]
//       writes the reply's durable intent (a repeat with the same text or --key is the same reply)
//       and waits up to --wait seconds (default 30; 0: not at all) for `serve` to send it
//   inbox mark REPLY_ID not-interested [--by WHO]    the person on the do-not-contact list
//   campaign watch NAME [--interval SECONDS] [--once]
//       state, progress, the funnel and why leads wait, redrawn every --interval seconds
//       (default 2) until Ctrl-C; --once prints one frame and exits
//
// Exit codes: 0 done (for reply: sent, or queued with --wait 0); 1 refused, failed, not sent
// within --wait (the intent stays: serve sends it later), or a database failure; 2 bad input
// (nothing changed).
#pragma once

#include "engine/config.hpp"

#include <CLI/CLI.hpp>

#include <functional>

namespace orch::cli {

// Adds `inbox` to `app` and `watch` to its `campaign` command (which must exist).
void add_inbox_and_watch_commands(CLI::App& app, std::function<int()>& action,
                                  std::function<engine::settings()> load_db);

}  // namespace orch::cli
