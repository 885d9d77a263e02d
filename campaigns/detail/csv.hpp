// A small RFC 4180 CSV reader: comma separated, fields optionally in double quotes (a quote
// inside is doubled; commas and line breaks inside quotes are data), records end at LF or CRLF.
// A UTF-8 byte-order mark at the start is skipped; blank lines are skipped.
#pragma once

#include <string>
#include <string_view>
#include <vector>

namespace orch::campaigns::detail {

struct csv_field {
    std::string value;
    int line = 0;  // 1-based position of the field's first character
    int column = 0;
};

struct csv_record {
    int line = 0;  // 1-based line where the record starts
    std::vector<csv_field> fields;
};

struct csv_error {
    int line = 0;
    int column = 0;
    std::string message;
};

struct csv_document {
    std::vector<csv_record> records;
    std::vector<csv_error> errors;  // reading stops at the first syntax error
};

csv_document parse_csv(std::string_view text);

}  // namespace orch::campaigns::detail
