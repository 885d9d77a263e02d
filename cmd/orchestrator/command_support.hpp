// What the database commands of the CLI share (dnc and leads, inbox and campaign watch): a
// failure they report themselves with its exit code, the wrapper that turns it into the message
// and the code, and the readers of ids, the operator's name and the database.
#pragma once

#include "engine/config.hpp"
#include "engine/store.hpp"

#include <cstddef>
#include <cstdint>
#include <functional>
#include <iostream>
#include <memory>
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
            std::cerr << e.what() << "\n";
            return e.code;
        }
    };
}

// `text` as a positive integer; a failure with exit code 2 naming `what` otherwise.
std::int64_t parse_id(const std::string& text, const std::string& what);
// Who the CLI acts as when not told: "cli:<USER>", or "cli".
std::string who_default();
// The store of `s`, checked to be at this binary's schema version.
std::unique_ptr<engine::store> open_db(const engine::settings& s);

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
// Characters on a terminal (UTF-8 code points; wide characters count one).
std::size_t display_width(const std::string& s);
// Aligned columns; text is escaped (control and bidirectional characters spelled out) so nothing
// from the database can move the cursor or reorder the line. An empty cell shows as "-".
void print_aligned(const text_table& t);

}  // namespace orch::cli
