// `orchestrator dnc ...` and `orchestrator leads ...`: the do-not-contact list (engine/dnc.hpp)
// and an operator's actions on a campaign's leads (engine/lead_ops.hpp).
//
//   dnc add [URL ...] [--company NAME ...] [--reason TEXT] [--by WHO]
//   dnc remove (ID | URL | --company NAME)
//   dnc list [--format table|json|csv]
//   dnc import FILE [--reason TEXT] [--by WHO]   CSV with a profile_url and/or company column
//   leads list CAMPAIGN [--state S] [--format table|json|csv] [--limit N]
//   leads show CAMPAIGN LEAD_ID [--format table|json]
//   leads stop|retry CAMPAIGN (LEAD_ID ... | --state S) [--format table|json]
//   leads skip CAMPAIGN (LEAD_ID ... | --state S) --to STEP
//   leads move CAMPAIGN (LEAD_ID ... | --state S) --account ACCOUNT
//
// Exit codes: 0 done; 1 a database failure, or the one lead named was refused (calling,
// finished: the message says why; nothing changed); 2 bad input (nothing changed).
#pragma once

#include "engine/config.hpp"

#include <CLI/CLI.hpp>

#include <functional>

namespace orch::cli {

// Adds the two command groups to `app`; a chosen command sets `action`. `load_db` loads the
// settings a database command needs (and throws the caller's usage error when they are bad).
void add_dnc_and_leads_commands(CLI::App& app, std::function<int()>& action,
                                std::function<engine::settings()> load_db);

}  // namespace orch::cli
