// RFC 4180 CSV reader (see detail/csv.hpp). One pass over the text with a cursor that knows its
// line and column, so that every field and every error has a position in the file.
#include "campaigns/detail/csv.hpp"

namespace orch::campaigns::detail {

namespace {

class cursor {
public:
    explicit cursor(std::string_view text) : text_(text) {
        if (text_.substr(0, 3) == "\xEF\xBB\xBF") {
            at_ = 3;  // byte-order mark written by spreadsheet programs
        }
    }

    bool done() const { return at_ >= text_.size(); }
    char peek(std::size_t ahead = 0) const { return at_ + ahead < text_.size() ? text_[at_ + ahead] : '\0'; }
    int line() const { return line_; }
    int column() const { return column_; }

    // At a record end: "\n" or "\r\n".
    bool at_line_end() const { return peek() == '\n' || (peek() == '\r' && peek(1) == '\n'); }

    void skip_line_end() {
        if (peek() == '\r') {
            ++at_;
        }
        advance();
    }

    char advance() {
        char c = text_[at_++];
        if (c == '\n') {
            ++line_;
            column_ = 1;
        } else if ((static_cast<unsigned char>(c) & 0xC0) != 0x80) {
            ++column_;  // characters, not UTF-8 continuation bytes
        }
        return c;
    }

private:
    std::string_view text_;
    std::size_t at_ = 0;
    int line_ = 1;
    int column_ = 1;
};

// A quoted field, the cursor on its opening quote. False on a syntax error (reported).
bool read_quoted(cursor& in, csv_field& field, csv_document& doc) {
    in.advance();
    while (true) {
        if (in.done()) {
            doc.errors.push_back(
                {field.line, field.column, "unterminated quoted field (a \" opened here is never closed)"});
            return false;
        }
        char c = in.advance();
        if (c != '"') {
            field.value += c;
        } else if (in.peek() == '"') {
            field.value += in.advance();  // "" is one quote
        } else {
            break;
        }
    }
    if (!in.done() && in.peek() != ',' && !in.at_line_end()) {
        doc.errors.push_back({in.line(), in.column(),
                              "unexpected text after a closing quote (a field is either all quoted or not)"});
        return false;
    }
    return true;
}

bool read_plain(cursor& in, csv_field& field, csv_document& doc) {
    while (!in.done() && in.peek() != ',' && !in.at_line_end()) {
        if (in.peek() == '"') {
            doc.errors.push_back(
                {in.line(), in.column(),
                 "quote inside an unquoted field (quote the whole field and double the quote)"});
            return false;
        }
        field.value += in.advance();
    }
    return true;
}

bool read_record(cursor& in, csv_record& record, csv_document& doc) {
    while (true) {
        csv_field field{"", in.line(), in.column()};
        bool ok = in.peek() == '"' ? read_quoted(in, field, doc) : read_plain(in, field, doc);
        if (!ok) {
            return false;
        }
        record.fields.push_back(std::move(field));
        if (in.peek() != ',' || in.done()) {
            break;
        }
        in.advance();
    }
    if (!in.done()) {
        in.skip_line_end();
    }
    return true;
}

}  // namespace

csv_document parse_csv(std::string_view text) {
    csv_document doc;
    cursor in(text);
    while (!in.done()) {
        if (in.at_line_end()) {
            in.skip_line_end();  // blank line
            continue;
        }
        csv_record record{in.line(), {}};
        if (!read_record(in, record, doc)) {
            break;
        }
        doc.records.push_back(std::move(record));
    }
    return doc;
}

}  // namespace orch::campaigns::detail
