// What the database commands of the CLI share (dnc and leads, inbox and campaign watch): a
// failure they report themselves with its exit code, the wrapper that turns it into the message
// and the code, and the readers of ids, the operator's name and the database.
#pragma once

#include "api/text.hpp"
#include "engine/config.hpp"

#include <CLI/CLI.hpp>
#include "engine/store.hpp"

#include <cstddef>
#include <cstdint>
#include <functional>
#include <iostream>
#include <memory>
#include <optional>
#include <stdexcept>
#include <string>
#include <vector>

namespace orch::cli {

// A failure a command reports itself: the message, and the exit code.
struct failure : std::runtime_error {
    failure(const std::string& what, int code_) : std::runtime_error(what), code(code_) {}
    int code;
};

// Runs `f`, turning a failure into its message on stderr and its exit code.
template <typename F>
std::function<int()> guarded(F f) {
    return [f = std::move(f)]() -> int {
        try {
            return f();
        } catch (const failure& e) {
            std::cerr << orch::text::terminal_error(e.what()) << "\n";
            return e.code;
        }
    };
}

// A CLI11 check that refuses an empty value ("a campaign name, not empty"): an empty name is a
// mistake, not "every campaign".
CLI::Validator not_empty(const std::string& what);

// "no campaign named 'x' (`orchestrator campaign list` shows them)", the name escaped.
std::string no_campaign_named(const std::string& name);

// `text` as a positive integer; a failure with exit code 2 naming `what` otherwise.
std::int64_t parse_id(const std::string& text, const std::string& what);
// Who the CLI acts as when not told: "cli:<USER>", or "cli".
std::string who_default();
// For a command that prints its own result (dnc add, leads retry, inbox mark, ...): the engine's
// info line saying the same thing on stderr is left out at the default log level (info); a level
// asked for below it (debug, trace) keeps it, and warnings and errors always show.
void result_on_stdout(const engine::settings& s);
// The store of `s`, checked to be at this binary's schema version.
std::unique_ptr<engine::store> open_db(const engine::settings& s);

// A file's whole text, or why it cannot be read: "no file was named" (an empty path), "it is a
// directory", "it is larger than <max_bytes>", or the system's reason ("No such file or
// directory"). Reading stops past max_bytes: a device or a pipe that never ends is refused, not
// read until memory runs out. (A FIFO nobody writes to waits for a writer, as `cat` does.)
struct file_text {
    std::optional<std::string> text;
    std::string why;
};
file_text read_file(const std::string& path, std::size_t max_bytes);

// ---- output formats ----
// Every listing command takes --format table|json|csv. A command with several tables gives them
// all in table and json form; csv gives one table (its main one, or the one --section names), as
// RFC 4180: one header line, CRLF line ends, a field quoted when it holds a comma, a quote or a
// line break. Dates are ISO 8601; rates are percentages (57.1%) in table and csv, fractions in json.
struct text_table {
    std::string title;  // heading in table form; "" for none
    std::vector<std::string> columns;
    std::vector<std::vector<std::string>> rows;
};

// A field of RFC 4180: quoted (quotes doubled) when it holds a comma, a quote or a line break.
std::string csv_cell(const std::string& v);
void print_csv(const text_table& t);
// Columns on a terminal: each character's width as the C library's wcwidth gives it under
// UTF-8 (a wide CJK character 2, a combining mark 0); an invalid byte counts 1.
std::size_t display_width(const std::string& s);
// `s` cut to at most `width` columns, ending in "..." when cut; never inside a character.
std::string cut_to_width(const std::string& s, std::size_t width);
// Aligned columns; text is escaped (control and bidirectional characters spelled out) so nothing
// from the database can move the cursor or reorder the line. An empty cell shows as "-". A column
// with a maximum width in `max_widths` (0: none) is cut to it, after the escaping.
void print_aligned(const text_table& t, const std::vector<std::size_t>& max_widths = {});

}  // namespace orch::cli
