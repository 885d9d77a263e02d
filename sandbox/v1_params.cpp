#include "sandbox/v1_params.hpp"

namespace orch::sandbox::v1 {

namespace {

const char* type_word(const json& v) {
    if (v.is_string()) return "a string";
    if (v.is_boolean()) return "a boolean";
    if (v.is_number_integer() || v.is_number_unsigned()) return "an integer";
    if (v.is_number()) return "a number";
    if (v.is_array()) return "an array";
    if (v.is_object()) return "an object";
    return "null";
}

// The offending value as the caller sent it, for messages ("got 0", "got \"ten\"").
std::string shown(const json& v) {
    constexpr std::size_t max_chars = 60;
    std::string text = v.dump();
    return text.size() <= max_chars ? text : text.substr(0, max_chars) + "...";
}

const json* field(const json& body, const char* name) {
    auto it = body.find(name);
    return it == body.end() || it->is_null() ? nullptr : &*it;
}

} // namespace

std::string quoted(std::string_view text) {
    constexpr std::size_t max_chars = 120;
    return "'" + std::string(text.substr(0, max_chars)) + (text.size() > max_chars ? "...'" : "'");
}

std::string_view trim(std::string_view text) {
    auto is_space = [](char c) { return c == ' ' || c == '\t' || c == '\n' || c == '\r'; };
    while (!text.empty() && is_space(text.front())) {
        text.remove_prefix(1);
    }
    while (!text.empty() && is_space(text.back())) {
        text.remove_suffix(1);
    }
    return text;
}

std::string require_text(const json& body, const char* name) {
    const json* v = field(body, name);
    if (v == nullptr) {
        throw invalid_params(std::string(name) + " is required");
    }
    if (!v->is_string()) {
        throw invalid_params(std::string(name) + " must be a string, got " + type_word(*v));
    }
    std::string text(trim(v->get_ref<const std::string&>()));
    if (text.empty()) {
        throw invalid_params(std::string(name) + " must not be empty");
    }
    return text;
}

std::optional<std::string> optional_text(const json& body, const char* name) {
    const json* v = field(body, name);
    if (v == nullptr) {
        return std::nullopt;
    }
    if (!v->is_string()) {
        throw invalid_params(std::string(name) + " must be a string, got " + type_word(*v));
    }
    return std::string(trim(v->get_ref<const std::string&>()));
}

std::optional<std::int64_t> optional_int(const json& body, const char* name, std::int64_t min, std::int64_t max) {
    const json* v = field(body, name);
    if (v == nullptr) {
        return std::nullopt;
    }
    auto range_error = [&] {
        std::string rule = min == 1 ? "a positive integer" : "an integer";
        std::string bounds = min == 1 ? " (at most " + std::to_string(max) + ")"
                                      : " between " + std::to_string(min) + " and " + std::to_string(max);
        return invalid_params(std::string(name) + " must be " + rule + bounds + ", got " + shown(*v));
    };
    if (v->is_number_unsigned()) {
        if (v->get<std::uint64_t>() > static_cast<std::uint64_t>(max)) {
            throw range_error();
        }
    } else if (!v->is_number_integer()) {
        throw range_error();
    }
    auto n = v->get<std::int64_t>();
    if (n < min || n > max) {
        throw range_error();
    }
    return n;
}

std::optional<bool> optional_bool(const json& body, const char* name) {
    const json* v = field(body, name);
    if (v == nullptr) {
        return std::nullopt;
    }
    if (!v->is_boolean()) {
        throw invalid_params(std::string(name) + " must be a boolean (true or false), got " + type_word(*v));
    }
    return v->get<bool>();
}

std::vector<std::string> text_list(const json& body, const char* name, std::size_t max_items) {
    const json* v = field(body, name);
    if (v == nullptr) {
        return {};
    }
    std::vector<std::string> out;
    auto add = [&](const std::string& text) {
        auto t = trim(text);
        if (!t.empty()) {
            out.emplace_back(t);
        }
    };
    if (v->is_string()) {
        add(v->get_ref<const std::string&>());
        return out;
    }
    if (!v->is_array()) {
        throw invalid_params(std::string(name) + " must be a string or an array of strings, got " + type_word(*v));
    }
    if (v->size() > max_items) {
        throw invalid_params(std::string(name) + " accepts at most " + std::to_string(max_items) + " values, got " +
                             std::to_string(v->size()));
    }
    for (std::size_t i = 0; i < v->size(); ++i) {
        const json& item = (*v)[i];
        if (!item.is_string()) {
            throw invalid_params(std::string(name) + "[" + std::to_string(i) + "] must be a string, got " +
                                 type_word(item));
        }
        add(item.get_ref<const std::string&>());
    }
    return out;
}

bool has_all_words(std::string_view folded_text, const std::vector<std::string>& words) {
    for (const auto& w : words) {
        if (folded_text.find(w) == std::string_view::npos) {
            return false;
        }
    }
    return true;
}

std::int64_t per_ten_or_zero(std::size_t results) { return static_cast<std::int64_t>((results + 9) / 10); }

} // namespace orch::sandbox::v1
