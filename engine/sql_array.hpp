// orch::engine sql_array: a Postgres array literal ('{1,2,3}') built value by value, for the
// `= ANY($1::bigint[])` and unnest($1::text[]) parameters of the engine's statements. Values are
// numbers (or words Postgres wrote itself, such as an enum label): nothing here quotes.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>

namespace orch::engine {

class sql_array {
public:
    void add(std::int64_t value) { add_text(std::to_string(value)); }
    // A value as Postgres wrote it (an id read as text, an enum label).
    void add_text(std::string_view value) {
        if (size_ > 0) {
            text_ += ',';
        }
        text_ += value;
        ++size_;
    }
    bool empty() const { return size_ == 0; }
    std::size_t size() const { return size_; }
    std::string str() const { return "{" + text_ + "}"; }

    template <typename Range>
    static std::string of(const Range& values) {
        sql_array a;
        for (const auto v : values) {
            a.add(v);
        }
        return a.str();
    }

private:
    std::string text_;
    std::size_t size_ = 0;
};

}  // namespace orch::engine
