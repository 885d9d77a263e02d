// Phase 2 of the loader: validate the document against campaigns/schema.json with valijson, then
// turn each valijson error (instance path + terse description) into a diagnostic at the node's
// file:line:column with a message that says what is expected, using the schema's own words
// (title, description, enum, minimum, ...) found by walking the schema along the instance path.
#include "campaigns/detail/load_context.hpp"

#include "api/text.hpp"

#include <valijson/adapters/nlohmann_json_adapter.hpp>
#include <valijson/schema.hpp>
#include <valijson/schema_parser.hpp>
#include <valijson/validation_results.hpp>
#include <valijson/validator.hpp>

#include <algorithm>
#include <set>

namespace orch::campaigns::detail {

namespace {

using json = nlohmann::json;

struct compiled_schema {
    json source;
    valijson::Schema schema;

    compiled_schema() : source(json::parse(schema_text())) {
        valijson::SchemaParser parser(valijson::SchemaParser::kDraft7);
        valijson::adapters::NlohmannJsonAdapter adapter(source);
        parser.populateSchema(adapter, schema);
    }
};

const compiled_schema& the_schema() {
    static const compiled_schema compiled;  // parsed once; read-only afterwards
    return compiled;
}

struct raw_error {
    std::string pointer;
    std::string description;
};

bool starts_with(const std::string& s, std::string_view prefix) {
    return s.rfind(prefix, 0) == 0;
}

// valijson context ["<root>", "[steps]", "[0]"] -> "/steps/0"
std::string pointer_of(const std::vector<std::string>& context) {
    std::string pointer;
    for (const std::string& part : context) {
        if (part.size() >= 2 && part.front() == '[' && part.back() == ']') {
            pointer = pointer_append(pointer, part.substr(1, part.size() - 2));
        }
    }
    return pointer;
}

// "Failed to validate ..." errors only summarise the errors of their children; keep one only when
// no child explains it.
std::vector<raw_error> leaf_errors(const valijson::ValidationResults& results) {
    std::vector<raw_error> all;
    for (const auto& e : results) {
        all.push_back({pointer_of(e.context), e.description});
    }
    auto is_summary = [](const raw_error& e) { return starts_with(e.description, "Failed to validate"); };
    std::vector<raw_error> kept;
    for (const raw_error& e : all) {
        bool explained = is_summary(e) && std::any_of(all.begin(), all.end(), [&](const raw_error& other) {
                             return !is_summary(other) && (other.pointer == e.pointer ||
                                                           starts_with(other.pointer, e.pointer + "/"));
                         });
        if (!explained) {
            kept.push_back(e);
        }
    }
    return kept;
}

// ---- the schema along an instance path ----

const json* deref(const json& root, const json* node) {
    for (int hops = 0; node && node->is_object() && node->contains("$ref") && hops < 8; ++hops) {
        std::string ref = (*node)["$ref"].get<std::string>();
        if (!starts_with(ref, "#/")) {
            return node;
        }
        node = &root.at(json::json_pointer(ref.substr(1)));
    }
    return node;
}

const json* schema_at(const std::vector<std::string>& tokens) {
    const json& root = the_schema().source;
    const json* node = &root;
    for (const std::string& token : tokens) {
        node = deref(root, node);
        if (!node || !node->is_object()) {
            return nullptr;
        }
        if (node->contains("properties") && (*node)["properties"].contains(token)) {
            node = &(*node)["properties"][token];
        } else if (node->contains("items") && (*node)["items"].is_object()) {
            node = &(*node)["items"];
        } else if (node->contains("additionalProperties") && (*node)["additionalProperties"].is_object()) {
            node = &(*node)["additionalProperties"];
        } else {
            return nullptr;
        }
    }
    return deref(root, node);
}

// A keyword of the schema node (nullptr when absent).
const json* keyword(const json* schema, const char* name) {
    if (!schema || !schema->is_object() || !schema->contains(name)) {
        return nullptr;
    }
    return &(*schema)[name];
}

std::string schema_words(const json* schema, const char* name, std::string fallback) {
    const json* k = keyword(schema, name);
    return k && k->is_string() ? k->get<std::string>() : std::move(fallback);
}

std::vector<std::string> property_names(const json* schema) {
    std::vector<std::string> names;
    if (const json* props = keyword(schema, "properties")) {
        for (const auto& [name, _] : props->items()) {
            names.push_back(name);
        }
    }
    return names;
}

// ---- wording ----

std::string type_words(const std::string& t) {
    if (t == "string")
        return "a text";
    if (t == "integer")
        return "a whole number";
    if (t == "number")
        return "a number";
    if (t == "boolean")
        return "true or false";
    if (t == "object")
        return "a mapping (key: value)";
    if (t == "array")
        return "a list";
    return t;
}

std::string expected_type(const json* schema) {
    const json* t = keyword(schema, "type");
    if (!t) {
        return "something else";
    }
    if (t->is_string()) {
        return type_words(t->get<std::string>());
    }
    std::string out;
    for (std::size_t i = 0; i < t->size(); ++i) {
        out += (i == 0 ? "" : " or ") + type_words((*t)[i].get<std::string>());
    }
    return out;
}

// A text quoted in a message, cut past 80 bytes (orch::text::escaped_clipped): a file that is no
// campaign (a whole document read as one text) put itself whole on one line.
std::string shown(const json& v) {
    if (!v.is_string()) {
        return v.dump();
    }
    const auto& s = v.get_ref<const std::string&>();
    constexpr std::size_t most = 80;
    return "'" + (s.size() <= most ? s : orch::text::escaped_clipped(s, most)) + "'";
}

std::string actual_type(const json& v) {
    switch (v.type()) {
    case json::value_t::null:
        return "nothing";
    case json::value_t::string:
        return "the text " + shown(v);
    case json::value_t::boolean:
        return shown(v);
    case json::value_t::object:
        return "a mapping";
    case json::value_t::array:
        return "a list";
    default:
        return "the number " + v.dump();
    }
}

std::string enum_list(const json* schema) {
    std::string out;
    if (const json* values = keyword(schema, "enum")) {
        for (const json& v : *values) {
            out += (out.empty() ? "" : ", ") + (v.is_string() ? v.get<std::string>() : v.dump());
        }
    }
    return out;
}

std::vector<std::string> enum_strings(const json* schema) {
    std::vector<std::string> out;
    if (const json* values = keyword(schema, "enum")) {
        for (const json& v : *values) {
            if (v.is_string()) {
                out.push_back(v.get<std::string>());
            }
        }
    }
    return out;
}

std::string number_keyword(const json* schema, const char* name) {
    const json* k = keyword(schema, name);
    return k ? k->dump() : "?";
}

// "/steps/2/kind" -> "steps[2].kind"; the root is "campaign".
std::string readable_path(const json& doc, const std::vector<std::string>& tokens) {
    std::string out;
    const json* node = &doc;
    for (const std::string& token : tokens) {
        if (node && node->is_array()) {
            out += "[" + token + "]";
            std::size_t index = std::stoul(token);
            node = index < node->size() ? &(*node)[index] : nullptr;
        } else {
            out += (out.empty() ? "" : ".") + token;
            node = node && node->is_object() && node->contains(token) ? &(*node)[token] : nullptr;
        }
    }
    return out.empty() ? "campaign" : out;
}

const json* instance_at(const json& doc, const std::string& pointer) {
    json::json_pointer p(pointer);
    return doc.contains(p) ? &doc.at(p) : nullptr;
}

// The quoted name at the end of a valijson description ("... constraints: 'foo'.").
std::string quoted_tail(const std::string& description) {
    std::size_t open = description.find(": '");
    if (open == std::string::npos || description.size() < open + 5) {
        return "";
    }
    return description.substr(open + 3, description.size() - open - 5);
}

// The first quoted name of a valijson description ("Missing required property 'id'.").
std::string first_quoted(const std::string& description) {
    std::size_t open = description.find('\'');
    std::size_t close = open == std::string::npos ? open : description.find('\'', open + 1);
    return close == std::string::npos ? "" : description.substr(open + 1, close - open - 1);
}

// "an invite", "a send"
std::string with_article(const std::string& word) {
    bool vowel = !word.empty() && std::string_view("aeiou").find(word[0]) != std::string_view::npos;
    return (vowel ? "an " : "a ") + word;
}

std::string kind_of_object(const json* object) {
    if (object && object->is_object() && object->contains("kind") && (*object)["kind"].is_string()) {
        return (*object)["kind"].get<std::string>();
    }
    return "";
}

class reporter {
public:
    reporter(load_context& ctx) : ctx_(ctx), doc_(ctx.doc.value) {}

    void report(const raw_error& e) {
        std::vector<std::string> tokens = pointer_tokens(e.pointer);
        std::string path = readable_path(doc_, tokens);
        const json* schema = schema_at(tokens);
        const json* value = instance_at(doc_, e.pointer);
        const std::string& d = e.description;
        if (starts_with(d, "Object contains a property that could not be validated")) {
            unknown_key(e.pointer, path, quoted_tail(d), schema, value);
        } else if (starts_with(d, "Missing required property")) {
            std::string kind = kind_of_object(value);
            emit(e.pointer, path + ": missing required key '" + first_quoted(d) + "'" +
                                (kind.empty() ? "" : " for " + with_article(kind) + " step"));
        } else if (starts_with(d, "Elements at indexes")) {
            duplicate_item(e.pointer, path, d);
        } else if (value) {
            emit(e.pointer, path + ": " + value_message(d, tokens, schema, *value));
        } else {
            emit(e.pointer, path + ": " + d);
        }
    }

private:
    void emit(const std::string& pointer, std::string message, at where = at::value) {
        if (seen_.insert(pointer + "\n" + message).second) {
            ctx_.error(pointer, std::move(message), where);
        }
    }

    void unknown_key(const std::string& pointer, const std::string& path, const std::string& key,
                     const json* schema, const json* object) {
        std::string key_pointer = pointer_append(pointer, key);
        std::vector<std::string> known = property_names(schema);
        std::string kind = kind_of_object(object);
        if (!kind.empty() && std::find(known.begin(), known.end(), key) != known.end()) {
            emit(key_pointer, path + ": key '" + key + "' does not apply to " + with_article(kind) + " step",
                 at::key);
            return;
        }
        emit(key_pointer, path + ": unknown key '" + key + "'" + did_you_mean(key, known), at::key);
    }

    void duplicate_item(const std::string& pointer, const std::string& path, const std::string& d) {
        // "Elements at indexes #0 and #2 violate uniqueness constraint."
        std::size_t second = d.find("and #");
        std::string index =
            second == std::string::npos ? "" : d.substr(second + 5, d.find(' ', second + 5) - second - 5);
        std::string item_pointer = index.empty() ? pointer : pointer_append(pointer, index);
        const json* item = instance_at(doc_, item_pointer);
        emit(item_pointer, path + ": duplicate entry" + (item ? " " + shown(*item) : std::string()));
    }

    std::string value_message(const std::string& d, const std::vector<std::string>& tokens,
                              const json* schema, const json& value) {
        std::string key = tokens.empty() ? "" : tokens.back();
        if (starts_with(d, "Value type not permitted")) {
            return "must be " + expected_type(schema) + ", not " + actual_type(value);
        }
        if (starts_with(d, "Failed to match against any enum values")) {
            std::string text = value.is_string() ? value.get<std::string>() : value.dump();
            std::string what = key == "kind" ? "unknown step kind " : "unknown value ";
            return what + shown(value) + " (one of: " + enum_list(schema) + ")" +
                   did_you_mean(text, enum_strings(schema));
        }
        if (starts_with(d, "Failed to match regex")) {
            return pattern_message(key, schema, value);
        }
        return bounds_message(d, schema, value);
    }

    static std::string pattern_message(const std::string& key, const json* schema, const json& value) {
        std::string text = value.is_string() ? value.get<std::string>() : "";
        if (text.find_first_not_of(" \t\r\n") == std::string::npos) {
            return "must not be blank";
        }
        return "bad " + schema_words(schema, "title", key) + " " + shown(value) + ": " +
               schema_words(schema, "description", "see campaigns/schema.json");
    }

    static std::string bounds_message(const std::string& d, const json* schema, const json& value) {
        if (starts_with(d, "Expected number greater than or equal to")) {
            return "must be at least " + number_keyword(schema, "minimum") + ", not " + value.dump();
        }
        if (starts_with(d, "Expected number less than or equal to")) {
            return "must be at most " + number_keyword(schema, "maximum") + ", not " + value.dump();
        }
        if (starts_with(d, "String should be no fewer than")) {
            std::string min = number_keyword(schema, "minLength");
            return min == "1" ? "must not be empty" : "must be at least " + min + " characters long";
        }
        if (starts_with(d, "String should be no more than")) {
            return "must be at most " + number_keyword(schema, "maxLength") + " characters long";
        }
        if (starts_with(d, "Array should contain no fewer than")) {
            return "must list at least " + number_keyword(schema, "minItems") + " item(s)";
        }
        if (starts_with(d, "Array should contain no more than")) {
            return "must list at most " + number_keyword(schema, "maxItems") + " items";
        }
        if (starts_with(d, "Object should have no fewer than")) {
            return "must not be empty: " + schema_words(schema, "description", "give at least one key");
        }
        return d;
    }

    load_context& ctx_;
    const json& doc_;
    std::set<std::string> seen_;
};

}  // namespace

void check_schema(load_context& ctx) {
    const compiled_schema& compiled = the_schema();
    valijson::Validator validator;  // strong types: "5" is not an integer
    valijson::ValidationResults results;
    valijson::adapters::NlohmannJsonAdapter target(ctx.doc.value);
    if (validator.validate(compiled.schema, target, &results)) {
        return;
    }
    reporter out(ctx);
    for (const raw_error& e : leaf_errors(results)) {
        out.report(e);
    }
}

}  // namespace orch::campaigns::detail
