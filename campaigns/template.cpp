// Message templates (see detail/template.hpp): parsing, the fields they use, rendering.
#include "campaigns/detail/template.hpp"
#include "campaigns/loader.hpp"

#include <algorithm>

namespace orch::campaigns {

namespace detail {

namespace {

std::string trim(const std::string& s) {
    std::size_t begin = s.find_first_not_of(" \t");
    if (begin == std::string::npos) {
        return "";
    }
    std::size_t end = s.find_last_not_of(" \t");
    return s.substr(begin, end - begin + 1);
}

// The inside of one "{{...}}" -> a placeholder, or an error message.
bool parse_inside(const std::string& inside, placeholder& p, std::string& error) {
    std::size_t bar = inside.find('|');
    p.name = trim(inside.substr(0, bar));
    if (bar != std::string::npos) {
        p.has_default = true;
        p.default_text = trim(inside.substr(bar + 1));
    }
    if (p.name.empty()) {
        error = "empty placeholder " + p.raw + ": write {{field}} or {{field|default}}";
        return false;
    }
    if (!is_field_name(p.name)) {
        error = "bad field name '" + p.name + "' in " + p.raw +
                " (letters, digits and _, not starting with a digit)";
        return false;
    }
    return true;
}

}  // namespace

bool is_field_name(const std::string& name) {
    if (name.empty() || (name[0] >= '0' && name[0] <= '9')) {
        return false;
    }
    return std::all_of(name.begin(), name.end(), [](char c) {
        return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '_';
    });
}

parsed_template parse_template(const std::string& source) {
    parsed_template out;
    std::size_t at = 0;
    while ((at = source.find("{{", at)) != std::string::npos) {
        std::size_t close = source.find("}}", at + 2);
        std::size_t nested = source.find("{{", at + 2);
        if (close == std::string::npos || (nested != std::string::npos && nested < close)) {
            std::size_t line_end = source.find('\n', at);
            std::string shown = source.substr(at, std::min<std::size_t>(line_end - at, 30));
            out.errors.push_back(
                {at, shown, "unclosed placeholder '" + shown + "': a placeholder ends with }}"});
            at += 2;
            continue;
        }
        placeholder p;
        p.offset = at;
        p.raw = source.substr(at, close + 2 - at);
        std::string error;
        if (parse_inside(source.substr(at + 2, close - at - 2), p, error)) {
            out.placeholders.push_back(std::move(p));
        } else {
            out.errors.push_back({at, p.raw, std::move(error)});
        }
        at = close + 2;
    }
    return out;
}

}  // namespace detail

std::vector<template_field> template_fields(const text_template& t) {
    std::vector<template_field> fields;
    for (const detail::placeholder& p : detail::parse_template(t.source).placeholders) {
        fields.push_back({p.name, p.has_default});
    }
    return fields;
}

std::vector<std::string> fields_used(const campaign& c) {
    std::vector<std::string> names;
    auto add = [&](const text_template& t) {
        for (auto& f : template_fields(t)) {
            names.push_back(std::move(f.name));
        }
    };
    for (const auto& s : c.steps) {
        if (s.note) {
            add(*s.note);
        }
        for (const auto& v : s.variants) {
            add(v.text);
        }
    }
    std::sort(names.begin(), names.end());
    names.erase(std::unique(names.begin(), names.end()), names.end());
    return names;
}

std::string render(const text_template& t, const std::map<std::string, std::string>& fields) {
    std::string out;
    std::size_t copied = 0;
    for (const detail::placeholder& p : detail::parse_template(t.source).placeholders) {
        out.append(t.source, copied, p.offset - copied);
        auto it = fields.find(p.name);
        // An empty value counts as missing, so a blank CSV cell takes the default too.
        if (it != fields.end() && !it->second.empty()) {
            out += it->second;
        } else if (p.has_default) {
            out += p.default_text;
        }
        copied = p.offset + p.raw.size();
    }
    out.append(t.source, copied, std::string::npos);
    return out;
}

}  // namespace orch::campaigns
