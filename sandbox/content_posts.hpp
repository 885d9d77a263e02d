// Posts of the simulated network (content.cpp: /v2/content and the V1 reaction endpoints).
//
// The store is an area of the service (svc.area<post_store>()), built at the first content
// request: a seeded set of posts by people and company pages of the world, with their comments
// and the reactions people made on them, all drawn from the seed so that one seed gives one
// set of posts (ids included). Posts, comments and reactions made through the API are added to
// the same store. Times of seeded items are ages relative to the moment the store was built.
#pragma once

#include "sandbox/service.hpp"

#include <array>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

namespace orch::sandbox::content {

// The six reactions of the network, in the order they are shown.
enum class reaction_kind : std::uint8_t { like, celebrate, support, love, insightful, funny };
inline constexpr std::array<std::string_view, 6> reaction_names = {"LIKE",   "CELEBRATE",  "SUPPORT",
                                                                   "LOVE",   "INSIGHTFUL", "FUNNY"};
inline std::string_view name_of(reaction_kind k) { return reaction_names[static_cast<std::size_t>(k)]; }
// Case-insensitive; nullopt for anything else.
std::optional<reaction_kind> parse_reaction(std::string_view text);

// Who wrote or reacted: a person of the world, a company page, or an API account (its owner's
// profile). `id` is the person or company id, or the account's index in post_store::account_ids.
struct actor_ref {
    enum class kind : std::uint8_t { person, company, account };
    kind k = kind::person;
    std::uint32_t id = 0;
    bool operator==(const actor_ref&) const = default;
};

struct reaction {
    actor_ref who;
    std::int32_t comment = -1; // index in post::comments of the reacted comment; -1: the post itself
    reaction_kind type = reaction_kind::like;
    time_point at{};
};

struct mention {
    bool company = false;
    std::uint32_t id = 0;       // person or company id
    std::string display_text;
};

struct comment {
    std::uint64_t id = 0;       // 19 digits
    actor_ref author;
    std::int32_t parent = -1;   // index of the thread's first comment; -1: a top-level comment
    time_point at{};
    std::string text;
    std::vector<mention> mentions;
};

struct media_item {
    std::string type;           // image | video | document
    std::string filename;
    std::string url;
    std::string alt_text;       // items of `files`
    std::string thumbnail_url;  // a video's cover, when given
};

struct post {
    std::uint64_t activity = 0; // 19 digits; larger is newer
    actor_ref author;
    time_point at{};
    std::string text;           // mentions rendered as their display text
    std::vector<std::string> hashtags; // without '#'
    std::vector<mention> mentions;
    std::vector<media_item> media;
    std::int64_t reposted_from = -1; // index of the original post
    std::uint32_t reposts = 0;
    std::vector<reaction> reactions;  // on the post and on its comments, seeded first
    std::vector<comment> comments;    // oldest first
    std::string search_text;          // fold_lower of text, author name and hashtags
    std::unordered_map<std::uint32_t, std::int64_t> seconds_spent; // account index -> time_spent total
};

// A profile URL, company URL or post URL quoted in an error message, cut to a sane length.
std::string quote_text(std::string_view text);
std::string trimmed(std::string_view text);        // without surrounding blanks
std::string lower_ascii(std::string_view text);
std::size_t utf8_length(std::string_view text);    // in characters, as a user counts them

// "5m", "3h", "2d", "3w", "4mo", "1yr": the relative age the network shows next to an item.
std::string relative_age(time_point then, time_point now);

// Reads fields of a request object and names them "<prefix><field>" in INVALID_PARAMS messages:
// "params." for V2 actions, "" for V1 bodies. Absent and null are the same.
class field_reader {
public:
    field_reader(const json& object, std::string prefix) : obj_(object), prefix_(std::move(prefix)) {}
    std::string name(std::string_view field) const { return prefix_ + std::string(field); }
    const json* find(const char* field) const;
    std::optional<std::string> opt_string(const char* field) const;
    // Present, a string, and not blank.
    std::string req_string(const char* field) const;
    std::optional<std::int64_t> opt_int(const char* field, std::int64_t min, std::int64_t max) const;
    std::optional<bool> opt_bool(const char* field) const;
    const json& object() const { return obj_; }

private:
    const json& obj_;
    std::string prefix_;
};

// The activity id in a post URL: a feed-update URL ("<base>/feed/update/urn:li:activity:<id>/"),
// a posts URL ("<base>/posts/<slug>-activity-<id>-<code>") or a bare "urn:li:activity:<id>", in
// the shapes people paste (http or https, with or without www, any host case, trailing slash,
// query, fragment, percent-encoding). nullopt for anything else.
std::optional<std::uint64_t> activity_from_post_url(std::string_view url);
// The (activity, comment) ids of "urn:li:comment:(activity:<a>,<c>)".
std::optional<std::pair<std::uint64_t, std::uint64_t>> ids_from_comment_urn(std::string_view urn);

std::string post_urn(std::uint64_t activity);
std::string post_url(std::uint64_t activity);
std::string comment_urn(std::uint64_t activity, std::uint64_t comment_id);

// Item shapes of a reaction ON a post (spec, "Post reaction"): the documented shape
// {reaction_type, created_time, actor{...}} or the flat sample {type, name, subtitle,
// profile_url, actor_urn}; setting post_reaction_shape picks one, or `mixed` (per post).
enum class reaction_shape { documented, sample };

class post_store {
public:
    explicit post_store(service& svc);

    service& svc() const { return svc_; }
    const std::vector<post>& posts() const { return posts_; }
    std::vector<post>& posts() { return posts_; }
    std::size_t seeded_posts() const { return seeded_posts_; }

    // The post with this activity id; nullptr when none.
    post* find(std::uint64_t activity);
    std::int64_t index_of(const post& p) const { return &p - posts_.data(); }

    // Posts written by a person / a company page of the world (seeded only), oldest first.
    std::vector<std::uint32_t> posts_of_person(person_id who) const;
    std::vector<std::uint32_t> posts_of_company(company_id which) const;
    // Seeded reactions a person of the world made: (post index, reaction index), any order.
    const std::vector<std::pair<std::uint32_t, std::uint32_t>>& reactions_by(person_id who) const;

    // The index of an account in account_ids (interned on first use).
    std::uint32_t account_index(const std::string& account_id);
    const std::string& account_id_at(std::uint32_t index) const { return account_ids_[index]; }
    std::optional<std::uint32_t> known_account_index(const std::string& account_id) const;

    // Adds a post, a comment; ids come from one counter so they are unique and increasing.
    post& add_post(post p);
    comment& add_comment(post& p, comment c);
    std::uint64_t next_id();

    // Whether an account administers a company page: the page of its owner's current company,
    // and about one page in a hundred others, fixed per (account, page) by a hash.
    bool administers(const account_state& account, const company& c) const;

    // ---- Rendering ----
    // {type, name, profile_url|company_url, public_id|universal_name, entity_urn, headline}.
    json author_json(const actor_ref& who) const;
    // The person behind a person or account actor; nullptr for a company or an unknown account.
    const person* person_of(const actor_ref& who) const;
    std::string display_name(const actor_ref& who) const;
    std::string actor_url(const actor_ref& who) const;
    std::string actor_urn(const actor_ref& who) const;
    // The post record of the API answers, as seen by `viewer` (its my_reaction).
    json post_json(const post& p, std::optional<std::uint32_t> viewer, time_point now) const;
    json comment_json(const post& p, std::size_t index, time_point now) const;
    // A reaction ON a post in the item shape chosen, seen from `viewer`.
    json post_reaction_json(const reaction& r, reaction_shape shape, const account_state& viewer) const;
    reaction_shape shape_for(const post& p) const;
    // Counts of the reactions on the post itself (not its comments), by type.
    std::size_t post_reaction_count(const post& p) const;
    std::size_t comment_reaction_count(const post& p, std::size_t comment_index) const;

private:
    void generate();
    void generate_people_posts(std::uint64_t seed);
    void generate_company_posts(std::uint64_t seed);
    // tiers: 0 ordinary, 1 popular, 2 viral, per seeded post; drives comments, reposts and the
    // weight with which people pick the posts they react to.
    void generate_comments(std::uint64_t seed, const std::vector<std::uint8_t>& tiers);
    void generate_reactions(std::uint64_t seed, const std::vector<std::uint8_t>& tiers);
    void finish_post(post& p) const;

    service& svc_;
    time_point anchor_;
    std::vector<post> posts_;
    std::size_t seeded_posts_ = 0;
    std::unordered_map<std::uint64_t, std::uint32_t> by_activity_;
    std::vector<std::uint32_t> person_post_begin_;  // size people + 1, seeded posts by person
    std::vector<std::uint32_t> company_post_begin_; // size companies + 1
    std::vector<std::vector<std::pair<std::uint32_t, std::uint32_t>>> reactions_by_person_;
    std::vector<std::string> account_ids_;
    std::unordered_map<std::string, std::uint32_t> account_index_;
    std::uint64_t id_counter_ = 0;
};

} // namespace orch::sandbox::content
