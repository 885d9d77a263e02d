// orch::engine::record_rows: a PostgreSQL array of composite values, written straight to text,
// for the hot batch statements' parameters (read in SQL with `rows_of($1::<row type>[])`,
// migration 0013).
//
// Why not JSON: json_to_recordset validates the document (json_in), parses it again, and builds
// a hash table of every object's keys; for the worker's batches that was about a sixth of
// Postgres's CPU (perf, tests/bench/engine_bench.sh). The array input reads each field with its
// type's input function and nothing else: a 14-field row costs about 2.5 times less.
//
// Rows are held as text from the start: a batch waiting for its statement holds a couple of
// hundred bytes per row (an nlohmann object per row held about 1.5 KB, once most of a worker's
// memory per in-flight lead), and writing one costs the appends of its text.
//
// A writer knows its row type's fields, in the type's order (the lists in batch_rows.hpp; a pg
// test holds them equal to the types of migration 0013). add(name, value) must name the fields
// in that order; a field not added is NULL. A name out of order or unknown is a programming error
// (std::logic_error), never a silently shifted column.
//
// Text values are always quoted, and escaped twice: once for the composite ('"' and '\'), once
// for the array around it. Text that is not valid UTF-8 (say an API error message) has the bad
// sequences replaced, and NUL bytes too (a parameter is a C string), rather than failing the
// statement.
#pragma once

#include <nlohmann/json.hpp>

#include <concepts>
#include <cstddef>
#include <cstdint>
#include <optional>
#include <span>
#include <stdexcept>
#include <string>
#include <string_view>
#include <vector>

namespace orch::engine {

class record_rows {
public:
    explicit record_rows(std::span<const std::string_view> fields) : fields_(fields) {}

    // Opens the next row; the fields added from here on belong to it.
    record_rows& row() {
        close_row();
        text_ += rows_ == 0 ? "\"(" : ",\"(";
        ++rows_;
        open_ = true;
        next_ = 0;
        return *this;
    }

    template <std::integral T>
        requires(!std::same_as<T, bool>)
    record_rows& add(std::string_view name, T v) {
        field(name);
        text_ += std::to_string(v);
        return *this;
    }
    record_rows& add(std::string_view name, bool v) {
        field(name);
        text_ += v ? 't' : 'f';
        return *this;
    }
    record_rows& add(std::string_view name, std::nullptr_t) {
        field(name);   // NULL: nothing between the commas
        return *this;
    }
    record_rows& add(std::string_view name, std::string_view v) {
        field(name);
        quoted(v);
        return *this;
    }
    record_rows& add(std::string_view name, const char* v) { return add(name, std::string_view(v)); }
    record_rows& add(std::string_view name, const std::string& v) { return add(name, std::string_view(v)); }
    // "" and nullopt are written as NULL.
    record_rows& add_or_null(std::string_view name, std::string_view v) {
        return v.empty() ? add(name, nullptr) : add(name, v);
    }
    record_rows& add_or_null(std::string_view name, std::optional<std::int64_t> v) {
        return v ? add(name, *v) : add(name, nullptr);
    }
    // A bigint[] field: {1,2,3}, quoted (it holds commas).
    record_rows& add(std::string_view name, const std::vector<std::int64_t>& v) {
        field(name);
        text_ += "\\\"{";
        for (std::size_t i = 0; i < v.size(); ++i) {
            text_ += i == 0 ? "" : ",";
            text_ += std::to_string(v[i]);
        }
        text_ += "}\\\"";
        return *this;
    }

    bool empty() const { return rows_ == 0; }
    std::size_t size() const { return rows_; }

    // The array's text. The rows stay: text() may be called again (a retried statement).
    std::string text() const {
        std::string out = "{" + text_;
        if (open_) {
            out.append(commas_to(fields_.size()), ',');
            out += ")\"";
        }
        return out + "}";
    }

private:
    // Moves to field `name`, leaving the ones skipped NULL (nothing between their commas).
    void field(std::string_view name) {
        if (!open_) {
            throw std::logic_error("record_rows: field " + std::string(name) + " added before row()");
        }
        std::size_t i = next_;
        while (i < fields_.size() && fields_[i] != name) {
            ++i;
        }
        if (i == fields_.size()) {
            throw std::logic_error("record_rows: field " + std::string(name) +
                                   " is unknown or out of order (fields are written in the row type's order)");
        }
        text_.append(commas_to(i + 1), ',');
        next_ = i + 1;
    }
    // The commas in front of fields next_ .. end - 1 (one before each field but the first).
    std::size_t commas_to(std::size_t end) const {
        const std::size_t from = next_ == 0 ? 1 : next_;
        return end > from ? end - from : 0;
    }
    void close_row() {
        if (open_) {
            text_.append(commas_to(fields_.size()), ',');
            text_ += ")\"";
            open_ = false;
        }
    }
    void quoted(std::string_view v) {
        for (unsigned char ch : v) {
            if (ch == 0 || ch >= 0x80) {
                escaped(clean(v));
                return;
            }
        }
        escaped(v);
    }
    // The field's quotes and its '"' and '\' escaped for the composite (\" \\), then every '"'
    // and '\' of that escaped again for the array element around it.
    void escaped(std::string_view v) {
        text_ += "\\\"";
        for (char ch : v) {
            if (ch == '"') {
                text_ += "\\\\\\\"";
            } else if (ch == '\\') {
                text_ += "\\\\\\\\";
            } else {
                text_ += ch;
            }
        }
        text_ += "\\\"";
    }
    // Valid UTF-8 without NUL bytes: invalid sequences and NULs become U+FFFD.
    static std::string clean(std::string_view v) {
        std::string s = nlohmann::json::parse(nlohmann::json(std::string(v)).dump(
                                                  -1, ' ', false, nlohmann::json::error_handler_t::replace))
                            .get<std::string>();
        std::string out;
        out.reserve(s.size());
        for (char ch : s) {
            if (ch == '\0') {
                out += "\xEF\xBF\xBD";
            } else {
                out += ch;
            }
        }
        return out;
    }

    std::span<const std::string_view> fields_;
    std::string text_;
    std::size_t rows_ = 0;
    bool open_ = false;
    std::size_t next_ = 0;   // index of the next field that may be written
};

}  // namespace orch::engine
