#include "cmd/orchestrator/command_support.hpp"

#include "api/text.hpp"

#include <algorithm>
#include <charconv>
#include <cstdlib>

namespace orch::cli {

std::int64_t parse_id(const std::string& text, const std::string& what) {
    std::int64_t n = 0;
    auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), n);
    if (ec != std::errc() || end != text.data() + text.size() || n < 1) {
        throw failure(what + " must be a positive integer, got '" + orch::text::escaped(text) + "'", 2);
    }
    return n;
}

std::string who_default() {
    const char* u = std::getenv("USER");
    return std::string("cli") + (u != nullptr && *u != '\0' ? ":" + std::string(u) : "");
}

std::unique_ptr<engine::store> open_db(const engine::settings& s) {
    auto db = std::make_unique<engine::store>(s.database_url);
    db->require_current();
    return db;
}

std::string csv_cell(const std::string& v) {
    if (v.find_first_of(",\"\r\n") == std::string::npos) {
        return v;
    }
    std::string out = "\"";
    for (char c : v) {
        out += c == '"' ? std::string("\"\"") : std::string(1, c);
    }
    return out + "\"";
}

void print_csv(const text_table& t) {
    for (std::size_t i = 0; i < t.columns.size(); ++i) {
        std::cout << (i ? "," : "") << csv_cell(t.columns[i]);
    }
    std::cout << "\r\n";
    for (const auto& row : t.rows) {
        for (std::size_t i = 0; i < row.size(); ++i) {
            std::cout << (i ? "," : "") << csv_cell(row[i]);
        }
        std::cout << "\r\n";
    }
}

// Characters on a terminal (UTF-8 code points; wide characters count one).
std::size_t display_width(const std::string& s) {
    std::size_t n = 0;
    for (unsigned char c : s) {
        n += (c & 0xC0) != 0x80 ? 1 : 0;
    }
    return n;
}

// Aligned columns; text is escaped (control and bidirectional characters spelled out) so nothing
// from the database can move the cursor or reorder the line.
void print_aligned(const text_table& t) {
    if (!t.title.empty()) {
        std::cout << orch::text::escaped(t.title) << "\n";
    }
    std::vector<std::vector<std::string>> cells;
    cells.push_back(t.columns);
    for (const auto& row : t.rows) {
        std::vector<std::string> r;
        for (const auto& c : row) {
            r.push_back(orch::text::escaped(c.empty() ? "-" : c));
        }
        cells.push_back(std::move(r));
    }
    std::vector<std::size_t> width(t.columns.size(), 0);
    for (const auto& r : cells) {
        for (std::size_t i = 0; i < r.size() && i < width.size(); ++i) {
            width[i] = std::max(width[i], display_width(r[i]));
        }
    }
    for (const auto& r : cells) {
        std::string line = "  ";
        for (std::size_t i = 0; i < r.size(); ++i) {
            line += r[i];
            if (i + 1 < r.size()) {
                line += std::string(width[i] - display_width(r[i]) + 2, ' ');
            }
        }
        std::cout << line << "\n";
    }
    if (t.rows.empty()) {
        std::cout << "  (none)\n";
    }
}

}  // namespace orch::cli
