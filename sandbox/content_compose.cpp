// Composition of posts and comments (content_compose.hpp).
#include "sandbox/content_compose.hpp"

#include <algorithm>
#include <cctype>

namespace orch::sandbox::content {

namespace {

constexpr std::size_t alt_text_max_chars = 1'000;
constexpr std::size_t files_max = 20;

// Replaces mention_user(public_id, display_text) and mention_company(slug, display_text) by
// their display text, checking that the person or company exists.
void parse_mentions(const service& svc, const std::string& field, const std::string& message, composed& out) {
    constexpr std::string_view user_call = "mention_user(";
    constexpr std::string_view company_call = "mention_company(";
    std::size_t i = 0;
    while (i < message.size()) {
        auto u = message.find(user_call, i);
        auto c = message.find(company_call, i);
        auto next = std::min(u, c);
        if (next == std::string::npos) {
            out.text += message.substr(i);
            break;
        }
        out.text += message.substr(i, next - i);
        bool company = next == c;
        std::string_view call = company ? company_call : user_call;
        std::string usage = company ? "mention_company(slug, display_text)" : "mention_user(public_id, display_text)";
        auto open = next + call.size();
        auto close = message.find(')', open);
        if (close == std::string::npos) {
            throw invalid_params(field + ": " + std::string(call) + "... is not closed; write " + usage);
        }
        std::string inner = message.substr(open, close - open);
        auto comma = inner.find(',');
        std::string id = trimmed(inner.substr(0, comma));
        std::string display = comma == std::string::npos ? std::string() : trimmed(inner.substr(comma + 1));
        if (id.empty() || display.empty()) {
            throw invalid_params(field + ": " + std::string(call) + inner + ") needs two arguments: " + usage);
        }
        if (company) {
            const sandbox::company* found = svc.world().find_company_by_slug(lower_ascii(id));
            if (found == nullptr) {
                throw invalid_params(field + ": mention_company(" + id + ", ...): company not found");
            }
            out.mentions.push_back({true, found->id, display});
        } else {
            const person* found = svc.world().find_by_public_id(id);
            if (found == nullptr) {
                throw invalid_params(field + ": mention_user(" + id + ", ...): profile not found");
            }
            out.mentions.push_back({false, found->id, display});
        }
        out.text += display;
        i = close + 1;
    }
}

// Hashtags: '#' after a non-word character, then letters, digits, '_' or any non-ASCII byte.
std::vector<std::string> hashtags_in(std::string_view text) {
    auto word = [](unsigned char c) { return std::isalnum(c) != 0 || c == '_' || c >= 0x80; };
    std::vector<std::string> out;
    for (std::size_t i = 0; i < text.size(); ++i) {
        if (text[i] != '#' || (i > 0 && word(static_cast<unsigned char>(text[i - 1])))) {
            continue;
        }
        std::size_t j = i + 1;
        while (j < text.size() && word(static_cast<unsigned char>(text[j]))) {
            ++j;
        }
        if (j > i + 1) {
            std::string tag(text.substr(i + 1, j - i - 1));
            if (std::find(out.begin(), out.end(), tag) == out.end()) {
                out.push_back(std::move(tag));
            }
        }
        i = j - 1;
    }
    return out;
}


std::optional<std::string> media_type_of(std::string_view filename) {
    auto dot = filename.rfind('.');
    if (dot == std::string_view::npos) {
        return std::nullopt;
    }
    std::string ext = lower_ascii(std::string(filename.substr(dot + 1)));
    for (const char* e : {"jpg", "png", "gif", "webp"}) {
        if (ext == e) return "image";
    }
    for (const char* e : {"mp4", "mov", "webm"}) {
        if (ext == e) return "video";
    }
    for (const char* e : {"pdf", "doc", "docx", "ppt", "pptx"}) {
        if (ext == e) return "document";
    }
    return std::nullopt;
}

constexpr const char* allowed_extensions =
    "images .jpg .png .gif .webp, videos .mp4 .mov .webm, documents .pdf .doc .docx .ppt .pptx";

// Whether `data` is standard base64 (line breaks allowed, padding optional) of at least one byte.
bool valid_base64(std::string_view data) {
    std::size_t chars = 0;
    std::size_t padding = 0;
    for (char c : data) {
        if (c == '\r' || c == '\n') {
            continue;
        }
        bool alphabet = std::isalnum(static_cast<unsigned char>(c)) != 0 || c == '+' || c == '/';
        if (c == '=') {
            ++padding;
        } else if (!alphabet || padding > 0) {
            return false;
        } else {
            ++chars;
        }
    }
    if (chars < 2 || padding > 2 || chars % 4 == 1) {
        return false;
    }
    return padding == 0 || (chars + padding) % 4 == 0;
}

// A `file`/`thumbnail` value or an item of `files`: a URL string or {filename, data (base64)}.
media_item read_media(const json& v, const std::string& name, bool item_of_files, std::string& extension) {
    media_item m;
    if (v.is_string()) {
        if (item_of_files) {
            throw invalid_params(name + " must be an object {filename, data, altText}");
        }
        std::string url = trimmed(v.get<std::string>());
        std::string low = lower_ascii(url.substr(0, 8));
        bool http = low.starts_with("https://") || low.starts_with("http://");
        std::string path = url.substr(0, url.find_first_of("?#"));
        auto scheme_end = path.find("://");
        auto slash = scheme_end == std::string::npos ? std::string::npos : path.find('/', scheme_end + 3);
        if (!http || slash == std::string::npos || slash == scheme_end + 3) {
            throw invalid_params(name + " must be an http(s) URL of the file, or an object {filename, data}; got " +
                                 quote_text(url));
        }
        m.filename = path.substr(path.rfind('/') + 1);
        auto type = media_type_of(m.filename);
        if (!type) {
            throw invalid_params(name + " must point to a file with an allowed extension (" +
                                 std::string(allowed_extensions) + "), got " + quote_text(url));
        }
        m.type = *type;
        m.url = url;
        return m;
    }
    if (!v.is_object()) {
        throw invalid_params(name + (item_of_files ? " must be an object {filename, data, altText}"
                                                   : " must be a URL string or an object {filename, data}"));
    }
    field_reader f(v, name + ".");
    m.filename = trimmed(f.req_string("filename"));
    auto type = media_type_of(m.filename);
    if (!type) {
        throw invalid_params(f.name("filename") + " must have an allowed extension (" +
                             std::string(allowed_extensions) + "), got " + quote_text(m.filename));
    }
    m.type = *type;
    std::string data = f.req_string("data");
    if (!valid_base64(data)) {
        throw invalid_params(f.name("data") + " must be the file's content in base64");
    }
    if (item_of_files) {
        if (auto alt = f.opt_string("altText")) {
            if (utf8_length(*alt) > alt_text_max_chars) {
                throw invalid_params(f.name("altText") + " is too long: at most " + std::to_string(alt_text_max_chars) +
                                     " characters");
            }
            m.alt_text = *alt;
        }
    }
    extension = lower_ascii(m.filename.substr(m.filename.rfind('.') + 1));
    return m;
}

void compose_files(const field_reader& f, composed& out) {
    const json* file = f.find("file");
    const json* files = f.find("files");
    const json* thumbnail = f.find("thumbnail");
    if (file != nullptr && files != nullptr) {
        throw invalid_params("give either " + f.name("file") + " or " + f.name("files") + ", not both");
    }
    if (file != nullptr) {
        std::string ext;
        out.media.push_back(read_media(*file, f.name("file"), false, ext));
        out.upload_extensions.push_back(ext);
    }
    if (files != nullptr) {
        if (!files->is_array() || files->empty() || files->size() > files_max) {
            throw invalid_params(f.name("files") + " must be an array of 1 to " + std::to_string(files_max) +
                                 " objects {filename, data, altText}");
        }
        for (std::size_t i = 0; i < files->size(); ++i) {
            std::string name = f.name("files") + "[" + std::to_string(i) + "]";
            std::string ext;
            media_item m = read_media((*files)[i], name, true, ext);
            if (m.type != "image") {
                throw invalid_params(name + ".filename: only images (.jpg .png .gif .webp) can be posted together in " +
                                     f.name("files") + "; post a video or a document alone with " + f.name("file"));
            }
            out.media.push_back(std::move(m));
            out.upload_extensions.push_back(ext);
        }
    }
    if (thumbnail != nullptr) {
        if (file == nullptr || out.media.size() != 1 || out.media[0].type != "video") {
            throw invalid_params(f.name("thumbnail") + " is only valid when " + f.name("file") + " is a single video");
        }
        std::string ext;
        media_item cover = read_media(*thumbnail, f.name("thumbnail"), false, ext);
        if (cover.type != "image") {
            throw invalid_params(f.name("thumbnail") + " must be an image (.jpg .png .gif .webp)");
        }
        out.media[0].thumbnail_url = cover.url.empty() ? "upload:" + ext : cover.url;
    }
}

} // namespace

void compose_text(const service& svc, const field_reader& f, std::size_t max_chars, composed& out) {
    auto message = f.opt_string("message");
    if (!message) {
        return;
    }
    parse_mentions(svc, f.name("message"), *message, out);
    if (utf8_length(out.text) > max_chars) {
        throw invalid_params(f.name("message") + " is too long: " + std::to_string(utf8_length(out.text)) +
                             " characters, at most " + std::to_string(max_chars));
    }
    out.hashtags = hashtags_in(out.text);
}

composed compose_post(const service& svc, const field_reader& f, std::size_t max_chars) {
    composed out;
    compose_text(svc, f, max_chars, out);
    compose_files(f, out);
    if (trimmed(out.text).empty() && out.media.empty()) {
        throw invalid_params(f.name("message") + " is required when no file is given");
    }
    return out;
}

} // namespace orch::sandbox::content
