// orch::campaigns loader: campaign definition text (YAML, or JSON) -> a validated campaign, or
// every problem found, each with file:line:column. Checks run in order: syntax, the JSON Schema
// (campaigns/schema.json, embedded at build time and enforced with valijson), then the semantic
// checks a schema cannot express (durations, template fields, branch targets, reachability,
// accounts). No I/O: the caller passes the texts of files the definition refers to and a lookup
// for accounts.
#pragma once

#include "campaigns/model.hpp"

#include <functional>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace orch::campaigns {

struct diagnostic {
    std::string file;
    int line = 0;    // 1-based; 0 when unknown
    int column = 0;  // 1-based; 0 when unknown
    std::string message;
    std::string to_string() const;  // "file:line:column: message"
};

enum class account_status { unknown, connected, disconnected };
// What the account check found for a name in `accounts`: its status, and the account's id when
// the name is a label or the id itself ("" when not known).
struct account_found {
    account_status status = account_status::unknown;
    std::string account_id;
    // Implicit from a status alone (a lookup that knows no labels).
    account_found(account_status s = account_status::unknown, std::string id = {})
        : status(s), account_id(std::move(id)) {}
};

// What reading an audience file gave: its text, or nullopt and why not (a reader that only knows
// it could not may leave `why` empty). Converts from a bare optional text.
struct file_read {
    file_read(std::optional<std::string> t = std::nullopt, std::string w = {})  // NOLINT: implicit by design
        : text(std::move(t)), why(std::move(w)) {}
    std::optional<std::string> text;
    std::string why;
};

// The largest campaign file, and the largest audience file, the loader takes. A caller reading
// either stops reading past it (a file linked to /dev/zero is refused, not read until memory ends).
inline constexpr std::size_t definition_bytes_max = 1024 * 1024;
inline constexpr std::size_t audience_file_bytes_max = 64 * 1024 * 1024;

struct load_options {
    std::string file_name = "<input>";  // used in diagnostics
    // Account check: nullptr skips it (validate without a database).
    std::function<account_found(const std::string& account_id)> account_lookup;
    // The text of an audience file named in the definition (path as written); no text when the
    // caller could not read it (a diagnostic then points at the `file:` key and says why).
    std::function<file_read(const std::string& path)> read_file;
};

struct load_result {
    std::optional<campaign> value;      // set iff errors is empty
    std::vector<diagnostic> errors;
    // Findings that do not stop the load (a wait no invitation precedes, a profile URL listed
    // twice in the audience file); shown to the user, never blocking.
    std::vector<diagnostic> warnings;
};

// Errors are sorted by position, the definition's own first, then those of the audience file.
// Phases stop at the first one that finds errors (a document that breaks the schema is not
// checked further), and each phase reports everything it finds.
load_result load_campaign(std::string_view text, const load_options& options);

// The embedded JSON Schema text (the same bytes as campaigns/schema.json).
std::string_view schema_text();

// Template helpers (also used by the loader's checks).
// Field names used by a template, in order of appearance, with whether each has a default.
struct template_field {
    std::string name;
    bool has_default = false;
};
std::vector<template_field> template_fields(const text_template& t);
// The lead fields any of the campaign's templates (invitation notes, message variants) reads,
// sorted, each once.
std::vector<std::string> fields_used(const campaign& c);
// Renders with the lead's fields; a missing field without default renders as "" (the loader
// guarantees this cannot happen for a validated campaign).
std::string render(const text_template& t, const std::map<std::string, std::string>& fields);

// "" when `name` is a time zone of the tz database; else what is wrong, with the nearest name
// ("unknown time zone 'Europe/Pari' (an IANA name such as ...); did you mean 'Europe/Paris'?").
// The host's own names (localtime, posixrules, Factory) are refused: they mean another zone on
// another machine, or none.
std::string time_zone_problem(const std::string& name);

}  // namespace orch::campaigns
