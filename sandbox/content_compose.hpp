// Composing a post or a comment for /v2/content: the `message` text with its mentions
// (mention_user(public_id, display_text), mention_company(slug, display_text)) and hashtags,
// and the files of a post (`file` as a URL or {filename, data (base64)}, `thumbnail` for a single
// video, `files` of images with altText). Every problem is INVALID_PARAMS naming the field.
#pragma once

#include "sandbox/content_posts.hpp"

namespace orch::sandbox::content {

struct composed {
    std::string text;                           // mentions rendered as their display text
    std::vector<std::string> hashtags;
    std::vector<mention> mentions;
    std::vector<media_item> media;              // uploads have no URL yet
    std::vector<std::string> upload_extensions; // per media item; empty for a URL
};

// The text of `message` (absent: nothing), at most `max_chars` characters once rendered.
void compose_text(const service& svc, const field_reader& f, std::size_t max_chars, composed& out);
// A whole post: the text and the files; a post needs a text or a file.
composed compose_post(const service& svc, const field_reader& f, std::size_t max_chars);

} // namespace orch::sandbox::content
