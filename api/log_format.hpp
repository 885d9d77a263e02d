// One log record is one line: every spdlog message's text goes through orch::text::escaped
// (newlines, control, bidirectional and invalid bytes spelled out), so text from a request, a
// campaign file or the API can neither forge a log line nor send escape sequences to a terminal.
// Call sites still wrap user text in orch::text::escaped where they log it; this is the net under
// them for messages that carry user text through an exception's what().
#pragma once

namespace orch::api {

// Installs the escaping formatter on every registered logger and as the default for new ones.
// Pattern: "[time] [logger] [level] message", as spdlog's default.
void escape_log_messages();

}  // namespace orch::api
