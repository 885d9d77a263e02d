// Message templates: "Hi {{first_name}}, how is {{company|your team}}?". A placeholder is `{{`,
// a field name ([A-Za-z_][A-Za-z0-9_]*) with optional spaces around it, optionally `|` and a
// default (trimmed; may be empty), then `}}`. Everything else is literal text; `{{` always opens
// a placeholder, single braces are plain text.
#pragma once

#include <cstddef>
#include <string>
#include <vector>

namespace orch::campaigns::detail {

struct placeholder {
    std::size_t offset = 0;  // of the opening "{{" in the template source
    std::string raw;  // the placeholder as written, braces included
    std::string name;
    bool has_default = false;
    std::string default_text;
};

struct template_error {
    std::size_t offset = 0;
    std::string raw;  // the text the error is about, as written
    std::string message;
};

struct parsed_template {
    std::vector<placeholder> placeholders;
    std::vector<template_error> errors;
};

parsed_template parse_template(const std::string& source);

bool is_field_name(const std::string& name);

}  // namespace orch::campaigns::detail
