#include "cmd/orchestrator/command_support.hpp"

#include "api/text.hpp"

#include <spdlog/spdlog.h>

#include <locale.h>
#include <wchar.h>

#include <algorithm>
#include <array>
#include <cerrno>
#include <charconv>
#include <clocale>
#include <cstdlib>
#include <cstring>
#include <cwchar>
#include <filesystem>
#include <fstream>
#include <limits>
#include <sstream>
#include <string_view>

namespace orch::cli {

CLI::Validator not_empty(const std::string& what) {
    return CLI::Validator(
        [what](std::string& v) { return v.empty() ? what + ", not empty" : std::string(); }, "TEXT");
}

std::string no_campaign_named(const std::string& name) {
    if (name.empty()) {
        return "the campaign name is empty (`orchestrator campaign list` shows the campaigns)";
    }
    return "no campaign named '" + orch::text::escaped_clipped(name, 200) + "' (`orchestrator campaign list` shows them)";
}

std::int64_t parse_id(const std::string& text, const std::string& what) {
    std::int64_t n = 0;
    auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), n);
    if (ec == std::errc::result_out_of_range && end == text.data() + text.size() && text.front() != '-') {
        // No id is that large: say so, not that the digits are not a number.
        throw failure(what + " is too large: no id is above " +
                          std::to_string(std::numeric_limits<std::int64_t>::max()) + ", got '" +
                          orch::text::escaped_clipped(text, 40) + "'",
                      2);
    }
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

namespace {

// 1 MiB, 64 KiB, 100 bytes: a limit as an operator would write it.
std::string byte_size(std::size_t n) {
    if (n >= 1024 * 1024 && n % (1024 * 1024) == 0) {
        return std::to_string(n / (1024 * 1024)) + " MiB";
    }
    if (n >= 1024 && n % 1024 == 0) {
        return std::to_string(n / 1024) + " KiB";
    }
    return std::to_string(n) + " bytes";
}

}  // namespace

file_text read_file(const std::string& path, std::size_t max_bytes) {
    if (path.empty()) {
        return {std::nullopt, "no file was named (an empty path)"};
    }
    std::error_code ec;
    if (std::filesystem::is_directory(path, ec)) {
        return {std::nullopt, "it is a directory, not a file"};
    }
    errno = 0;
    std::ifstream in(path, std::ios::binary);
    if (!in) {
        return {std::nullopt, errno != 0 ? std::strerror(errno) : "it cannot be opened"};
    }
    std::string text;
    std::array<char, 64 * 1024> chunk{};
    while (in.read(chunk.data(), chunk.size()) || in.gcount() > 0) {
        text.append(chunk.data(), static_cast<std::size_t>(in.gcount()));
        if (text.size() > max_bytes) {
            return {std::nullopt, "it is larger than " + byte_size(max_bytes)};
        }
    }
    if (in.bad()) {
        return {std::nullopt, "reading it failed"};
    }
    return {std::move(text), ""};
}

std::string csv_cell(const std::string& v) { return orch::text::csv_field(v); }

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

namespace {

// The terminal's widths come from the C library (wcwidth) under a UTF-8 locale of its own, so
// the process's locale stays "C" for everything else.
locale_t utf8_locale() {
    static const locale_t l = newlocale(LC_CTYPE_MASK, "C.UTF-8", static_cast<locale_t>(nullptr));
    return l;
}

// The thread's locale for the lifetime of the guard, given back on every path.
class thread_locale {
public:
    explicit thread_locale(locale_t l) : old_(l != static_cast<locale_t>(nullptr) ? uselocale(l) : l) {}
    ~thread_locale() {
        if (old_ != static_cast<locale_t>(nullptr)) {
            uselocale(old_);
        }
    }
    thread_locale(const thread_locale&) = delete;
    thread_locale& operator=(const thread_locale&) = delete;

private:
    locale_t old_;
};

// Calls f(bytes, width) for each character of s (UTF-8; an invalid byte counts as one of width 1).
// Without the UTF-8 locale (not installed), a character is its lead byte and the continuation
// bytes after it, one column wide, so a cut still never splits it.
template <typename F>
void each_char(const std::string& s, F&& f) {
    const locale_t l = utf8_locale();
    const thread_locale in_utf8(l);
    std::mbstate_t st{};
    for (std::size_t i = 0; i < s.size();) {
        if (l == static_cast<locale_t>(nullptr)) {
            std::size_t n = 1;
            while (i + n < s.size() && (static_cast<unsigned char>(s[i + n]) & 0xC0) == 0x80) {
                ++n;
            }
            f(std::string_view(s).substr(i, n), 1);
            i += n;
            continue;
        }
        wchar_t wc = 0;
        const std::size_t n = std::mbrtowc(&wc, s.data() + i, s.size() - i, &st);
        if (n == 0 || n > s.size() - i) {  // NUL, invalid or cut short: one byte, one column
            st = std::mbstate_t{};
            f(std::string_view(s).substr(i, 1), 1);
            ++i;
            continue;
        }
        const int w = ::wcwidth(wc);
        f(std::string_view(s).substr(i, n), w < 0 ? 1 : static_cast<std::size_t>(w));
        i += n;
    }
}

}  // namespace

std::size_t display_width(const std::string& s) {
    std::size_t n = 0;
    each_char(s, [&n](std::string_view, std::size_t w) { n += w; });
    return n;
}

std::string cut_to_width(const std::string& s, std::size_t width) {
    if (display_width(s) <= width) {
        return s;
    }
    const std::size_t room = width > 3 ? width - 3 : 0;
    std::string out;
    std::size_t used = 0;
    bool full = false;
    each_char(s, [&](std::string_view c, std::size_t w) {
        if (full || used + w > room) {
            full = true;
            return;
        }
        out += c;
        used += w;
    });
    return out + std::string(std::min<std::size_t>(width, 3), '.');
}

void print_aligned(const text_table& t, const std::vector<std::size_t>& max_widths) {
    if (!t.title.empty()) {
        std::cout << orch::text::escaped(t.title) << "\n";
    }
    std::vector<std::vector<std::string>> cells;
    cells.push_back(t.columns);
    for (const auto& row : t.rows) {
        std::vector<std::string> r;
        for (std::size_t i = 0; i < row.size(); ++i) {
            // Escaped first, then cut: the width is the one the terminal shows.
            auto text = orch::text::escaped(row[i].empty() ? "-" : row[i]);
            if (i < max_widths.size() && max_widths[i] > 0) {
                text = cut_to_width(text, max_widths[i]);
            }
            r.push_back(std::move(text));
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

void result_on_stdout(const engine::settings& s) {
    if (s.log_level == "info") {
        spdlog::set_level(spdlog::level::warn);
    }
}

}  // namespace orch::cli
