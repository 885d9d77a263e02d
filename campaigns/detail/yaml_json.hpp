// YAML (or JSON) text -> nlohmann::json plus the source position of every node, keyed by JSON
// pointer, so that schema and semantic errors can say file:line:column. Plain scalars resolve
// as in the YAML 1.2 core schema (null, true/false, integers, floats, else string); quoted
// scalars are always strings.
#pragma once

#include <nlohmann/json.hpp>

#include <map>
#include <string>
#include <string_view>
#include <vector>

namespace orch::campaigns::detail {

struct source_pos {
    int line = 0;  // 1-based; 0 when unknown
    int column = 0;  // 1-based
    int offset = -1;  // byte offset in the text; -1 when unknown
};

struct node_pos {
    source_pos value;  // where the node's value starts
    source_pos key;  // for a mapping entry: where its key is; else same as value
};

struct syntax_error {
    source_pos at;
    std::string message;
    // One value could not be read (a whole number past 64 bits, a tag that does not fit it): it
    // reads as null, and the rest of the document stands, so its shape is checked too.
    bool value_only = false;
};

struct parsed_document {
    nlohmann::json value;
    std::map<std::string, node_pos> positions;  // JSON pointer ("" = root, "/steps/0/id") -> position
    std::vector<syntax_error> errors;  // syntax errors, duplicate keys, several documents
};

// Never throws on bad input: problems land in `errors` (then `value` is not to be trusted).
// `nodes_max` bounds the values converted (aliases can expand a small text without bound).
parsed_document parse_yaml(std::string_view text, std::size_t nodes_max);

// JSON pointer helpers (RFC 6901 escaping of ~ and /).
std::string pointer_append(const std::string& pointer, const std::string& token);
std::string pointer_append(const std::string& pointer, std::size_t index);
std::vector<std::string> pointer_tokens(const std::string& pointer);

// 1-based line and column of a byte offset in text.
source_pos position_of(std::string_view text, std::size_t offset);

}  // namespace orch::campaigns::detail
