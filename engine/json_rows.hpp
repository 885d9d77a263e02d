// orch::engine::json_rows: a JSON array of flat objects, written straight to text, for small
// batch parameters read in SQL with json_to_recordset (the ledger's (campaign, sender) pairs).
// The hot batches (transitions, intents, settles, transfers, entries) are arrays of row types
// instead (record_rows.hpp), cheaper for Postgres to read.
//
// A row costs the appends of its text (an nlohmann object per row, a std::map, cost far more).
// Keys are the caller's literal identifiers and are not escaped; string values are: plain ASCII
// as is, anything else through nlohmann's serializer (invalid UTF-8 is replaced rather than
// thrown on).
#pragma once

#include <nlohmann/json.hpp>

#include <concepts>
#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace orch::engine {

class json_rows {
public:
    // Opens the next row; the fields added from here on belong to it.
    json_rows& row() {
        close_row();
        text_ += rows_ == 0 ? "{" : ",{";
        ++rows_;
        open_ = true;
        first_ = true;
        return *this;
    }

    template <std::integral T>
        requires(!std::same_as<T, bool>)
    json_rows& add(std::string_view key, T v) {
        this->key(key);
        text_ += std::to_string(v);
        return *this;
    }

    json_rows& add(std::string_view key, bool v) {
        this->key(key);
        text_ += v ? "true" : "false";
        return *this;
    }
    json_rows& add(std::string_view key, std::nullptr_t) {
        this->key(key);
        text_ += "null";
        return *this;
    }
    json_rows& add(std::string_view key, std::string_view v) {
        this->key(key);
        string(v);
        return *this;
    }
    json_rows& add(std::string_view key, const char* v) { return add(key, std::string_view(v)); }
    json_rows& add(std::string_view key, const std::string& v) { return add(key, std::string_view(v)); }
    // "" and nullopt are written as null.
    json_rows& add_or_null(std::string_view key, std::string_view v) {
        return v.empty() ? add(key, nullptr) : add(key, v);
    }
    json_rows& add_or_null(std::string_view key, std::optional<std::int64_t> v) {
        return v ? add(key, *v) : add(key, nullptr);
    }
    json_rows& add(std::string_view key, const std::vector<std::int64_t>& v) {
        this->key(key);
        text_ += '[';
        for (std::size_t i = 0; i < v.size(); ++i) {
            text_ += i == 0 ? "" : ",";
            text_ += std::to_string(v[i]);
        }
        text_ += ']';
        return *this;
    }

    bool empty() const { return rows_ == 0; }
    std::size_t size() const { return rows_; }

    // The array's text. The rows stay: text() may be called again (a retried statement).
    std::string text() const {
        std::string out = text_;
        out += open_ ? "}]" : "]";
        return out;
    }

private:
    void key(std::string_view k) {
        text_ += first_ ? "\"" : ",\"";
        first_ = false;
        text_ += k;
        text_ += "\":";
    }
    void close_row() {
        if (open_) {
            text_ += '}';
            open_ = false;
        }
    }
    void string(std::string_view v) {
        for (unsigned char ch : v) {
            if (ch < 0x20 || ch >= 0x7f || ch == '"' || ch == '\\') {
                text_ += nlohmann::json(std::string(v)).dump(-1, ' ', false, nlohmann::json::error_handler_t::replace);
                return;
            }
        }
        text_ += '"';
        text_ += v;
        text_ += '"';
    }

    std::string text_ = "[";
    std::size_t rows_ = 0;
    bool open_ = false;
    bool first_ = true;
};

}  // namespace orch::engine
