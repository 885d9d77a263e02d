// orch::engine json_syntax_error: what is wrong with a text that is not JSON, and where, for the
// error a client, an operator or the quarantine reads ("parse error at line 3, column 7: syntax
// error while parsing object key - ...", "number overflow parsing '1e400' at line 1, column 28").
// nlohmann's messages say where for a syntax error but not for a number overflow; its SAX
// interface hands every error its byte position, which this adds when the message lacks it.
#pragma once

#include "api/text.hpp"

#include <nlohmann/json.hpp>

#include <algorithm>
#include <cstddef>
#include <string>
#include <string_view>

namespace orch::engine {

namespace json_syntax_detail {

struct locator final : nlohmann::json::json_sax_t {
    std::size_t position = 0;
    std::string what;
    bool failed = false;
    bool null() override { return true; }
    bool boolean(bool) override { return true; }
    bool number_integer(number_integer_t) override { return true; }
    bool number_unsigned(number_unsigned_t) override { return true; }
    bool number_float(number_float_t, const string_t&) override { return true; }
    bool string(string_t&) override { return true; }
    bool binary(binary_t&) override { return true; }
    bool start_object(std::size_t) override { return true; }
    bool key(string_t&) override { return true; }
    bool end_object() override { return true; }
    bool start_array(std::size_t) override { return true; }
    bool end_array() override { return true; }
    bool parse_error(std::size_t at, const std::string&, const nlohmann::detail::exception& e) override {
        failed = true;
        position = at;
        what = e.what();
        return false;
    }
};

}  // namespace json_syntax_detail

// "" when `text` is one JSON value; else the parser's message, without its exception id, with
// "at line L, column C" (1-based; the column of the last byte read) when it did not say where.
// The message quotes the bytes last read, which need not be UTF-8 nor printable: such a message
// comes back escaped (orch::text::escaped), fit for a log line, a JSON answer or a Postgres text
// column.
inline std::string json_syntax_error(std::string_view text) {
    json_syntax_detail::locator where;
    nlohmann::json::sax_parse(text, &where);
    if (!where.failed) {
        return {};
    }
    std::string why = std::move(where.what);
    if (const auto end = why.find("] "); why.rfind("[json.exception.", 0) == 0 && end != std::string::npos) {
        why.erase(0, end + 2);
    }
    if (why.find(" at line ") == std::string::npos) {
        const std::size_t last = std::min(where.position, text.size());
        std::size_t line = 1, column = 0;
        for (std::size_t i = 0; i < last; ++i) {
            if (text[i] == '\n') {
                ++line;
                column = 0;
            } else {
                ++column;
            }
        }
        why += " at line " + std::to_string(line) + ", column " + std::to_string(column);
    }
    // Escaped only when it has to be: escaping doubles the backslashes of a message that quotes
    // JSON's own escapes ("must be escaped to \u000A").
    return orch::text::check_name(why) ? orch::text::escaped(why) : why;
}

}  // namespace orch::engine
