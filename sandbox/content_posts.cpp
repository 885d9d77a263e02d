// The post store: seeded posts, comments and reactions, lookups and the JSON records of
// /v2/content and the V1 reaction endpoints. See content_posts.hpp.
#include "sandbox/content_posts.hpp"

#include "engine/time_format.hpp"

#include <algorithm>
#include <charconv>
#include <cmath>

namespace orch::sandbox::content {

namespace {

// Salts keep the draws of different purposes independent of each other.
constexpr std::uint64_t posts_salt = 0x706f7374'73000001ULL;
constexpr std::uint64_t comments_salt = 0x636f6d6d'656e0002ULL;
constexpr std::uint64_t reactions_salt = 0x72656163'74000003ULL;
constexpr std::uint64_t admin_salt = 0x61646d69'6e000004ULL;
constexpr std::uint64_t shape_salt = 0x73686170'65000005ULL;
constexpr std::uint64_t api_id_salt = 0x61706969'64000006ULL;
constexpr std::uint64_t tier_salt = 0x74696572'00000007ULL;
constexpr double admin_share = 0.01;

// Ids look like the network's: 19 digits, larger for newer items. Seeded ids go down with age
// (the age term dominates the index term, so they are unique); API ids count up above them.
constexpr std::uint64_t id_base = 7'300'000'000'000'000'000ULL;
constexpr std::uint64_t age_unit = 1'000'000'000'000ULL;
constexpr std::int64_t max_age_minutes = 90 * 24 * 60;

// Popularity tiers: a few viral posts collect hundreds of reactions (several pages of 50) and
// tens of comments, some get tens of reactions, most get a handful.
constexpr double viral_share = 0.01;
constexpr double popular_share = 0.10;
constexpr std::uint8_t ordinary = 0;
constexpr std::uint8_t popular = 1;
constexpr std::uint8_t viral = 2;
constexpr std::uint32_t viral_weight = 5'000;
constexpr std::uint32_t popular_weight = 200;
constexpr int reactions_per_person_max = 40;

constexpr std::array<std::string_view, 12> person_templates = {
    "Excited to share that our team at {company} just shipped a new approach to {skill}. Proud of everyone "
    "involved!",
    "Three lessons I learned about {skill} this quarter:\n1. Start small.\n2. Measure everything.\n3. Share what "
    "you learn.",
    "What is the most underrated skill in {industry}? My vote goes to {skill}.",
    "I'm hiring! We are looking for a {title} to join {company} in {city}. Send me a message if you are "
    "interested.",
    "Great conversations at the {industry} meetup in {city} yesterday. Thanks to everyone who came by.",
    "Reflecting on my journey as a {title}: curiosity beats certainty every time.",
    "Our {function} team at {company} is growing. If {skill} is your thing, let's talk.",
    "Hot take: {skill} matters more than the tools you use for it.",
    "Just finished a deep dive into {skill}. Happy to share my notes with anyone interested.",
    "Celebrating another year at {company} today. Grateful for the people I work with.",
    "Mentoring tip for new colleagues in {function}: ask the question everyone else is afraid to ask.",
    "The future of {industry} will be shaped by people who master {skill}.",
};

constexpr std::array<std::string_view, 7> company_templates = {
    "We're hiring in {city}! Explore open roles at {company} and join a team that loves {specialty}.",
    "{company} is proud to announce a new partnership that brings {specialty} to more customers.",
    "Meet the team: our {city} office shares how they approach {specialty} every day.",
    "Thank you to our {followers} followers! Here's to building the future of {industry} together.",
    "New on our blog: five trends shaping {industry} this year.",
    "{company} will be at the {industry} summit next week. Come and say hello!",
    "Customer story: how {specialty} helped a partner of {company} grow faster.",
};

constexpr std::array<std::string_view, 10> comment_templates = {
    "Congratulations!",
    "Great insight, thanks for sharing.",
    "Totally agree with this.",
    "Interesting perspective, {first}.",
    "Well said!",
    "This resonates with me.",
    "Thanks for sharing, {first}!",
    "Could not agree more.",
    "Love this!",
    "Very helpful, saving it for later.",
};

constexpr std::array<std::string_view, 4> reply_templates = {
    "Thanks, {first}!", "Appreciate it!", "Glad it helped.", "Good point, {first}.",
};

constexpr std::array<std::string_view, 5> generic_hashtags = {"hiring", "leadership", "careers", "innovation",
                                                              "teamwork"};

void replace_all(std::string& text, std::string_view from, std::string_view to) {
    for (auto pos = text.find(from); pos != std::string::npos; pos = text.find(from, pos + to.size())) {
        text.replace(pos, from.size(), to);
    }
}

// "project management" -> "ProjectManagement": the way people write a topic as a hashtag.
std::string hashtag_of(std::string_view topic) {
    std::string out;
    bool upper = true;
    for (char c : topic) {
        bool alnum = (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9');
        if (!alnum) {
            upper = true;
            continue;
        }
        out.push_back(upper && c >= 'a' && c <= 'z' ? static_cast<char>(c - 'a' + 'A') : c);
        upper = false;
    }
    return out;
}

// Ages in minutes, skewed towards recent items (square of a uniform draw).
std::int64_t draw_age_minutes(rng64& r, std::int64_t max_minutes) {
    double u = r.unit();
    return 10 + static_cast<std::int64_t>(u * u * static_cast<double>(std::max<std::int64_t>(1, max_minutes - 10)));
}

reaction_kind draw_reaction(rng64& r) {
    double u = r.unit();
    if (u < 0.60) return reaction_kind::like;
    if (u < 0.72) return reaction_kind::celebrate;
    if (u < 0.80) return reaction_kind::support;
    if (u < 0.88) return reaction_kind::love;
    if (u < 0.98) return reaction_kind::insightful;
    return reaction_kind::funny;
}

std::uint32_t draw_weight(rng64& r, std::uint8_t tier) {
    if (tier == viral) {
        return viral_weight;
    }
    if (tier == popular) {
        return popular_weight;
    }
    double v = r.unit();
    return 1 + static_cast<std::uint32_t>(50.0 * v * v * v);
}

std::string percent_decoded(std::string_view s) {
    auto hex_value = [](char c) -> int {
        if (c >= '0' && c <= '9') return c - '0';
        if (c >= 'a' && c <= 'f') return c - 'a' + 10;
        if (c >= 'A' && c <= 'F') return c - 'A' + 10;
        return -1;
    };
    std::string out;
    for (std::size_t i = 0; i < s.size(); ++i) {
        if (s[i] == '%' && i + 2 < s.size() && hex_value(s[i + 1]) >= 0 && hex_value(s[i + 2]) >= 0) {
            out.push_back(static_cast<char>(hex_value(s[i + 1]) * 16 + hex_value(s[i + 2])));
            i += 2;
        } else {
            out.push_back(s[i]);
        }
    }
    return out;
}

std::optional<std::uint64_t> digits_value(std::string_view s) {
    if (s.empty() || s.size() > 19) {
        return std::nullopt;
    }
    std::uint64_t v = 0;
    auto [ptr, ec] = std::from_chars(s.data(), s.data() + s.size(), v);
    if (ec != std::errc{} || ptr != s.data() + s.size()) {
        return std::nullopt;
    }
    return v;
}

std::string_view trim_view(std::string_view s) {
    while (!s.empty() && (s.front() == ' ' || s.front() == '\t' || s.front() == '\n' || s.front() == '\r')) {
        s.remove_prefix(1);
    }
    while (!s.empty() && (s.back() == ' ' || s.back() == '\t' || s.back() == '\n' || s.back() == '\r')) {
        s.remove_suffix(1);
    }
    return s;
}

const char* type_name(const json& v) {
    if (v.is_string()) return "a string";
    if (v.is_boolean()) return "a boolean";
    if (v.is_number_integer() || v.is_number_unsigned()) return "an integer";
    if (v.is_number()) return "a number";
    if (v.is_array()) return "an array";
    if (v.is_object()) return "an object";
    return "null";
}

std::string full_name(const person& p) { return p.first_name + " " + p.last_name; }

json nullable(const std::string& s) { return s.empty() ? json(nullptr) : json(s); }

// The first words of a text as a URL slug, as the network's posts URLs carry them.
std::string text_slug(std::string_view text) {
    std::string folded = fold_lower(text);
    std::string out;
    int words = 0;
    for (char c : folded) {
        bool alnum = (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9');
        if (alnum) {
            out.push_back(c);
        } else if (!out.empty() && out.back() != '-') {
            if (++words == 6) {
                break;
            }
            out.push_back('-');
        }
    }
    while (!out.empty() && out.back() == '-') {
        out.pop_back();
    }
    return out.empty() ? "post" : out;
}

} // namespace

// ---------------------------------------------------------------------------------------------
// Small helpers

std::optional<reaction_kind> parse_reaction(std::string_view text) {
    std::string upper(trim_view(text));
    for (char& c : upper) {
        if (c >= 'a' && c <= 'z') {
            c = static_cast<char>(c - 'a' + 'A');
        }
    }
    for (std::size_t i = 0; i < reaction_names.size(); ++i) {
        if (reaction_names[i] == upper) {
            return static_cast<reaction_kind>(i);
        }
    }
    return std::nullopt;
}

std::string quote_text(std::string_view text) {
    constexpr std::size_t max_chars = 120;
    return "'" + std::string(text.substr(0, max_chars)) + (text.size() > max_chars ? "...'" : "'");
}

std::string trimmed(std::string_view text) { return std::string(trim_view(text)); }

std::string lower_ascii(std::string_view text) {
    std::string out(text);
    for (char& c : out) {
        if (c >= 'A' && c <= 'Z') {
            c = static_cast<char>(c - 'A' + 'a');
        }
    }
    return out;
}

std::size_t utf8_length(std::string_view text) {
    std::size_t n = 0;
    for (unsigned char c : text) {
        n += (c & 0xC0) != 0x80 ? 1 : 0;
    }
    return n;
}

std::string relative_age(time_point then, time_point now) {
    auto minutes = std::max<std::int64_t>(1, std::chrono::duration_cast<std::chrono::minutes>(now - then).count());
    constexpr std::int64_t hour = 60;
    constexpr std::int64_t day = 24 * hour;
    if (minutes < hour) return std::to_string(minutes) + "m";
    if (minutes < day) return std::to_string(minutes / hour) + "h";
    if (minutes < 7 * day) return std::to_string(minutes / day) + "d";
    if (minutes < 30 * day) return std::to_string(minutes / (7 * day)) + "w";
    if (minutes < 365 * day) return std::to_string(minutes / (30 * day)) + "mo";
    return std::to_string(minutes / (365 * day)) + "yr";
}

const json* field_reader::find(const char* field) const {
    auto it = obj_.find(field);
    return (it == obj_.end() || it->is_null()) ? nullptr : &*it;
}

std::optional<std::string> field_reader::opt_string(const char* field) const {
    const json* v = find(field);
    if (v == nullptr) {
        return std::nullopt;
    }
    if (!v->is_string()) {
        throw invalid_params(name(field) + " must be a string, got " + type_name(*v));
    }
    return v->get<std::string>();
}

std::string field_reader::req_string(const char* field) const {
    auto v = opt_string(field);
    if (!v) {
        throw invalid_params(name(field) + " is required");
    }
    if (trim_view(*v).empty()) {
        throw invalid_params(name(field) + " must not be empty");
    }
    return *v;
}

std::optional<std::int64_t> field_reader::opt_int(const char* field, std::int64_t min, std::int64_t max) const {
    const json* v = find(field);
    if (v == nullptr) {
        return std::nullopt;
    }
    auto out_of_range = [&](const std::string& got) {
        if (min == 1 && got.size() > 0 && got[0] == '-') {
            return invalid_params(name(field) + " must be a positive integer, got " + got);
        }
        return invalid_params(name(field) + " must be an integer between " + std::to_string(min) + " and " +
                              std::to_string(max) + ", got " + got);
    };
    if (!v->is_number_integer() && !v->is_number_unsigned()) {
        std::string what = min == 1 ? " must be a positive integer, got " : " must be an integer, got ";
        throw invalid_params(name(field) + what + type_name(*v));
    }
    if (v->is_number_unsigned() && v->get<std::uint64_t>() > static_cast<std::uint64_t>(max)) {
        throw out_of_range(std::to_string(v->get<std::uint64_t>()));
    }
    auto n = v->get<std::int64_t>();
    if (n < min || n > max) {
        if (min == 1 && n < 1) {
            throw invalid_params(name(field) + " must be a positive integer, got " + std::to_string(n));
        }
        throw out_of_range(std::to_string(n));
    }
    return n;
}

std::optional<bool> field_reader::opt_bool(const char* field) const {
    const json* v = find(field);
    if (v == nullptr) {
        return std::nullopt;
    }
    if (!v->is_boolean()) {
        throw invalid_params(name(field) + " must be a boolean, got " + type_name(*v));
    }
    return v->get<bool>();
}

// ---------------------------------------------------------------------------------------------
// URLs and urns

std::string post_urn(std::uint64_t activity) { return "urn:li:activity:" + std::to_string(activity); }
std::string post_url(std::uint64_t activity) {
    return std::string(network_base_url) + "/feed/update/" + post_urn(activity) + "/";
}
std::string comment_urn(std::uint64_t activity, std::uint64_t comment_id) {
    return "urn:li:comment:(activity:" + std::to_string(activity) + "," + std::to_string(comment_id) + ")";
}

std::optional<std::uint64_t> activity_from_post_url(std::string_view url) {
    std::string text = percent_decoded(trim_view(url));
    std::string_view s = text;
    constexpr std::string_view urn_prefix = "urn:li:activity:";
    if (s.starts_with(urn_prefix)) {
        return digits_value(s.substr(urn_prefix.size()));
    }
    std::string lowered = lower_ascii(s.substr(0, 8));
    if (lowered.starts_with("https://")) {
        s.remove_prefix(8);
    } else if (lowered.starts_with("http://")) {
        s.remove_prefix(7);
    }
    auto host_end = s.find_first_of("/?#");
    std::string host = lower_ascii(s.substr(0, host_end));
    std::string_view base_host = network_base_url.substr(network_base_url.find("://") + 3);
    if (host.starts_with("www.")) {
        host.erase(0, 4);
    }
    if (host_end == std::string_view::npos || host != base_host.substr(base_host.starts_with("www.") ? 4 : 0)) {
        return std::nullopt;
    }
    std::string_view path = s.substr(host_end);
    path = path.substr(0, path.find_first_of("?#"));
    while (path.size() > 1 && path.back() == '/') {
        path.remove_suffix(1);
    }
    constexpr std::string_view feed_prefix = "/feed/update/";
    constexpr std::string_view posts_prefix = "/posts/";
    if (path.starts_with(feed_prefix)) {
        std::string_view rest = path.substr(feed_prefix.size());
        return rest.starts_with(urn_prefix) ? digits_value(rest.substr(urn_prefix.size())) : std::nullopt;
    }
    if (path.starts_with(posts_prefix)) {
        std::string_view rest = path.substr(posts_prefix.size());
        auto at = rest.rfind("-activity-");
        if (rest.find('/') != std::string_view::npos || at == std::string_view::npos) {
            return std::nullopt;
        }
        std::string_view tail = rest.substr(at + 10);
        return digits_value(tail.substr(0, tail.find('-')));
    }
    return std::nullopt;
}

std::optional<std::pair<std::uint64_t, std::uint64_t>> ids_from_comment_urn(std::string_view urn) {
    std::string text = percent_decoded(trim_view(urn));
    std::string_view s = text;
    constexpr std::string_view prefix = "urn:li:comment:(activity:";
    if (!s.starts_with(prefix) || !s.ends_with(")")) {
        return std::nullopt;
    }
    s = s.substr(prefix.size(), s.size() - prefix.size() - 1);
    auto comma = s.find(',');
    if (comma == std::string_view::npos) {
        return std::nullopt;
    }
    auto a = digits_value(s.substr(0, comma));
    auto c = digits_value(s.substr(comma + 1));
    if (!a || !c) {
        return std::nullopt;
    }
    return std::make_pair(*a, *c);
}

// ---------------------------------------------------------------------------------------------
// Generation

post_store::post_store(service& svc) : svc_(svc), anchor_(svc.now()) { generate(); }

void post_store::generate() {
    std::uint64_t seed = splitmix64(svc_.cfg().seed ^ posts_salt);
    generate_people_posts(seed);
    generate_company_posts(seed);
    seeded_posts_ = posts_.size();
    by_activity_.reserve(posts_.size() * 2);
    for (std::size_t i = 0; i < posts_.size(); ++i) {
        by_activity_[posts_[i].activity] = static_cast<std::uint32_t>(i);
    }
    std::vector<std::uint8_t> tiers;
    tiers.reserve(posts_.size());
    for (const post& p : posts_) {
        double u = unit_from_hash(splitmix64(seed ^ tier_salt ^ p.activity));
        tiers.push_back(u < viral_share ? viral : u < viral_share + popular_share ? popular : ordinary);
    }
    generate_comments(seed, tiers);
    generate_reactions(seed, tiers);
    for (auto& p : posts_) {
        finish_post(p);
    }
}

namespace {

// The seeded activity id of the post at `index` written `age` minutes before the anchor.
std::uint64_t seeded_id(std::int64_t age_minutes, std::size_t index, std::uint64_t h) {
    return id_base - static_cast<std::uint64_t>(age_minutes) * age_unit + static_cast<std::uint64_t>(index) * 10'000 +
           h % 10'000;
}

void add_seeded_media(post& p, rng64& r) {
    double u = r.unit();
    std::string stem = "https://media.network.example/";
    std::string id = std::to_string(p.activity);
    if (u < 0.25) {
        p.media.push_back({"image", "image-1.jpg", stem + "image/" + id + "-1.jpg", "", ""});
    } else if (u < 0.29) {
        auto n = r.between(2, 4);
        for (std::int64_t k = 1; k <= n; ++k) {
            std::string name = "image-" + std::to_string(k) + ".png";
            p.media.push_back({"image", name, stem + "image/" + id + "-" + std::to_string(k) + ".png",
                               "Picture " + std::to_string(k), ""});
        }
    } else if (u < 0.34) {
        p.media.push_back(
            {"video", "video.mp4", stem + "video/" + id + ".mp4", "", stem + "image/" + id + "-cover.jpg"});
    } else if (u < 0.38) {
        p.media.push_back({"document", "slides.pdf", stem + "document/" + id + ".pdf", "", ""});
    }
}

} // namespace

void post_store::generate_people_posts(std::uint64_t seed) {
    const world& wd = svc_.world();
    const auto& people = wd.people();
    person_post_begin_.assign(people.size() + 1, 0);
    for (const person& p : people) {
        person_post_begin_[p.id] = static_cast<std::uint32_t>(posts_.size());
        rng64 r(splitmix64(seed ^ (static_cast<std::uint64_t>(p.id) << 21)));
        double u = r.unit();
        std::int64_t n = u < 0.45 ? 0 : u < 0.75 ? 1 : u < 0.90 ? 2 : r.between(3, 5);
        const company& employer = wd.company_at(p.company);
        for (std::int64_t k = 0; k < n; ++k) {
            post q;
            q.author = {actor_ref::kind::person, p.id};
            std::int64_t age = draw_age_minutes(r, max_age_minutes);
            q.at = anchor_ - std::chrono::minutes(age);
            q.activity = seeded_id(age, posts_.size(), r.next());
            std::string skill = p.skills.empty() ? p.industry : p.skills[r.next() % p.skills.size()];
            std::string text(person_templates[r.next() % person_templates.size()]);
            replace_all(text, "{company}", employer.name);
            replace_all(text, "{skill}", skill);
            replace_all(text, "{industry}", p.industry);
            replace_all(text, "{city}", p.city);
            replace_all(text, "{title}", p.title);
            replace_all(text, "{function}", p.function);
            if (r.chance(0.10) && people.size() > 1) {
                auto other = static_cast<person_id>((p.id + 1 + r.next() % (people.size() - 1)) % people.size());
                const person& m = wd.at(other);
                q.mentions.push_back({false, m.id, full_name(m)});
                text += " Thanks to " + full_name(m) + " for the great collaboration.";
            }
            q.hashtags.push_back(hashtag_of(skill));
            if (r.chance(0.5)) {
                q.hashtags.push_back(hashtag_of(p.industry));
            }
            if (r.chance(0.4)) {
                q.hashtags.emplace_back(generic_hashtags[r.next() % generic_hashtags.size()]);
            }
            text += "\n\n";
            for (std::size_t h = 0; h < q.hashtags.size(); ++h) {
                text += (h == 0 ? "#" : " #") + q.hashtags[h];
            }
            q.text = std::move(text);
            add_seeded_media(q, r);
            posts_.push_back(std::move(q));
        }
    }
    person_post_begin_[people.size()] = static_cast<std::uint32_t>(posts_.size());
}

void post_store::generate_company_posts(std::uint64_t seed) {
    const world& wd = svc_.world();
    const auto& companies = wd.companies();
    company_post_begin_.assign(companies.size() + 1, 0);
    for (const company& c : companies) {
        company_post_begin_[c.id] = static_cast<std::uint32_t>(posts_.size());
        rng64 r(splitmix64(seed ^ 0xc0ULL ^ (static_cast<std::uint64_t>(c.id) << 23)));
        auto n = r.between(2, 8);
        for (std::int64_t k = 0; k < n; ++k) {
            post q;
            q.author = {actor_ref::kind::company, c.id};
            std::int64_t age = draw_age_minutes(r, max_age_minutes);
            q.at = anchor_ - std::chrono::minutes(age);
            q.activity = seeded_id(age, posts_.size(), r.next());
            std::string specialty =
                c.specialties.empty() ? c.industry : c.specialties[r.next() % c.specialties.size()];
            std::string text(company_templates[r.next() % company_templates.size()]);
            replace_all(text, "{company}", c.name);
            replace_all(text, "{specialty}", specialty);
            replace_all(text, "{industry}", c.industry);
            replace_all(text, "{city}", c.city);
            replace_all(text, "{followers}", std::to_string(c.followers));
            q.hashtags = {hashtag_of(c.name), hashtag_of(specialty)};
            text += "\n\n#" + q.hashtags[0] + " #" + q.hashtags[1];
            q.text = std::move(text);
            add_seeded_media(q, r);
            posts_.push_back(std::move(q));
        }
    }
    company_post_begin_[companies.size()] = static_cast<std::uint32_t>(posts_.size());
}

void post_store::generate_comments(std::uint64_t seed, const std::vector<std::uint8_t>& tiers) {
    const world& wd = svc_.world();
    const auto people = static_cast<std::uint64_t>(wd.people().size());
    std::uint64_t global = 0;
    for (std::size_t index = 0; index < posts_.size(); ++index) {
        post& p = posts_[index];
        std::uint8_t tier = tiers[index];
        rng64 r(splitmix64(seed ^ comments_salt ^ p.activity));
        std::int64_t n = tier == viral    ? r.between(20, 60)
                         : tier == popular ? r.between(2, 12)
                         : r.chance(0.5)   ? 0
                                           : r.between(1, 3);
        auto post_age = std::max<std::int64_t>(
            2, std::chrono::duration_cast<std::chrono::minutes>(anchor_ - p.at).count());
        std::vector<std::int64_t> ages;
        for (std::int64_t k = 0; k < n; ++k) {
            ages.push_back(1 + static_cast<std::int64_t>(r.unit() * static_cast<double>(post_age - 1)));
        }
        std::sort(ages.rbegin(), ages.rend()); // oldest first
        for (std::int64_t age : ages) {
            comment c;
            c.author = {actor_ref::kind::person, static_cast<std::uint32_t>(r.next() % people)};
            c.at = anchor_ - std::chrono::minutes(age);
            c.id = id_base - static_cast<std::uint64_t>(age) * age_unit + (++global) * 1'000 + r.next() % 1'000;
            std::string text(comment_templates[r.next() % comment_templates.size()]);
            std::string first =
                p.author.k == actor_ref::kind::person ? wd.at(p.author.id).first_name : std::string("team");
            replace_all(text, "{first}", first);
            c.text = std::move(text);
            p.comments.push_back(std::move(c));
        }
        // Some threads get a short answer, half of them from the author when a person wrote it.
        const std::size_t top = p.comments.size();
        for (std::size_t k = 0; k < top; ++k) {
            if (!r.chance(0.2)) {
                continue;
            }
            const comment& parent = p.comments[k];
            auto parent_age = std::chrono::duration_cast<std::chrono::minutes>(anchor_ - parent.at).count();
            std::int64_t age = std::max<std::int64_t>(1, static_cast<std::int64_t>(r.unit() * parent_age));
            comment reply;
            bool by_author = p.author.k == actor_ref::kind::person && r.chance(0.5);
            reply.author = by_author ? p.author : actor_ref{actor_ref::kind::person,
                                                            static_cast<std::uint32_t>(r.next() % people)};
            reply.parent = static_cast<std::int32_t>(k);
            reply.at = anchor_ - std::chrono::minutes(age);
            reply.id = id_base - static_cast<std::uint64_t>(age) * age_unit + (++global) * 1'000 + r.next() % 1'000;
            std::string text(reply_templates[r.next() % reply_templates.size()]);
            replace_all(text, "{first}", wd.at(parent.author.id).first_name);
            reply.text = std::move(text);
            p.comments.push_back(std::move(reply));
        }
        p.reposts = static_cast<std::uint32_t>(tier == viral    ? r.between(20, 200)
                                               : tier == popular ? r.between(1, 15)
                                                                 : r.between(0, 2));
    }
}

void post_store::generate_reactions(std::uint64_t seed, const std::vector<std::uint8_t>& tiers) {
    const world& wd = svc_.world();
    // Each post draws a popularity weight; people pick the posts they react to by weight.
    std::vector<std::uint64_t> cumulative;
    cumulative.reserve(posts_.size());
    std::uint64_t total = 0;
    for (std::size_t index = 0; index < posts_.size(); ++index) {
        rng64 r(splitmix64(seed ^ reactions_salt ^ posts_[index].activity));
        total += draw_weight(r, tiers[index]);
        cumulative.push_back(total);
    }
    reactions_by_person_.assign(wd.people().size(), {});
    if (total == 0) {
        return;
    }
    for (const person& who : wd.people()) {
        rng64 r(splitmix64(seed ^ reactions_salt ^ (static_cast<std::uint64_t>(who.id) << 17)));
        double u = r.unit();
        auto n = static_cast<int>(reactions_per_person_max * u * u);
        std::vector<std::uint32_t> chosen;
        for (int k = 0; k < n; ++k) {
            auto at = std::upper_bound(cumulative.begin(), cumulative.end(), r.next() % total);
            auto index = static_cast<std::uint32_t>(at - cumulative.begin());
            post& p = posts_[index];
            bool own = p.author == actor_ref{actor_ref::kind::person, who.id};
            if (own || std::find(chosen.begin(), chosen.end(), index) != chosen.end()) {
                continue;
            }
            chosen.push_back(index);
            reaction rc;
            rc.who = {actor_ref::kind::person, who.id};
            rc.type = draw_reaction(r);
            time_point target_at = p.at;
            if (!p.comments.empty() && r.chance(0.15)) {
                rc.comment = static_cast<std::int32_t>(r.next() % p.comments.size());
                target_at = p.comments[static_cast<std::size_t>(rc.comment)].at;
            }
            auto target_age = std::max<std::int64_t>(
                1, std::chrono::duration_cast<std::chrono::minutes>(anchor_ - target_at).count());
            rc.at = anchor_ - std::chrono::minutes(
                                  std::max<std::int64_t>(1, static_cast<std::int64_t>(r.unit() * target_age)));
            reactions_by_person_[who.id].emplace_back(index, static_cast<std::uint32_t>(p.reactions.size()));
            p.reactions.push_back(rc);
        }
    }
}

void post_store::finish_post(post& p) const {
    std::string tags;
    for (const auto& h : p.hashtags) {
        tags += " #" + h;
    }
    p.search_text = fold_lower(p.text + "\n" + display_name(p.author) + "\n" + tags);
}

// ---------------------------------------------------------------------------------------------
// Lookups and additions

post* post_store::find(std::uint64_t activity) {
    auto it = by_activity_.find(activity);
    return it == by_activity_.end() ? nullptr : &posts_[it->second];
}

std::vector<std::uint32_t> post_store::posts_of_person(person_id who) const {
    std::vector<std::uint32_t> out;
    if (who + 1 < person_post_begin_.size()) {
        for (auto i = person_post_begin_[who]; i < person_post_begin_[who + 1]; ++i) {
            out.push_back(i);
        }
    }
    return out;
}

std::vector<std::uint32_t> post_store::posts_of_company(company_id which) const {
    std::vector<std::uint32_t> out;
    if (which + 1 < company_post_begin_.size()) {
        for (auto i = company_post_begin_[which]; i < company_post_begin_[which + 1]; ++i) {
            out.push_back(i);
        }
    }
    return out;
}

const std::vector<std::pair<std::uint32_t, std::uint32_t>>& post_store::reactions_by(person_id who) const {
    static const std::vector<std::pair<std::uint32_t, std::uint32_t>> none;
    return who < reactions_by_person_.size() ? reactions_by_person_[who] : none;
}

std::uint32_t post_store::account_index(const std::string& account_id) {
    auto [it, inserted] = account_index_.try_emplace(account_id, static_cast<std::uint32_t>(account_ids_.size()));
    if (inserted) {
        account_ids_.push_back(account_id);
    }
    return it->second;
}

std::optional<std::uint32_t> post_store::known_account_index(const std::string& account_id) const {
    auto it = account_index_.find(account_id);
    return it == account_index_.end() ? std::nullopt : std::optional<std::uint32_t>(it->second);
}

std::uint64_t post_store::next_id() {
    ++id_counter_;
    return id_base + id_counter_ * 1'000'000 + splitmix64(svc_.cfg().seed ^ api_id_salt ^ id_counter_) % 1'000'000;
}

post& post_store::add_post(post p) {
    p.activity = next_id();
    finish_post(p);
    by_activity_[p.activity] = static_cast<std::uint32_t>(posts_.size());
    posts_.push_back(std::move(p));
    return posts_.back();
}

comment& post_store::add_comment(post& p, comment c) {
    c.id = next_id();
    p.comments.push_back(std::move(c));
    return p.comments.back();
}

bool post_store::administers(const account_state& account, const company& c) const {
    if (c.id == account.self.company) {
        return true;
    }
    return unit_from_hash(hash64(account.id + "\n" + c.universal_name, svc_.cfg().seed ^ admin_salt)) < admin_share;
}

// ---------------------------------------------------------------------------------------------
// Rendering

const person* post_store::person_of(const actor_ref& who) const {
    switch (who.k) {
    case actor_ref::kind::person: return &svc_.world().at(who.id);
    case actor_ref::kind::account: {
        const account_state* a = svc_.find_account(account_ids_.at(who.id));
        return a == nullptr ? nullptr : &a->self;
    }
    case actor_ref::kind::company: return nullptr;
    }
    return nullptr;
}

std::string post_store::display_name(const actor_ref& who) const {
    if (who.k == actor_ref::kind::company) {
        return svc_.world().company_at(who.id).name;
    }
    const person* p = person_of(who);
    return p == nullptr ? std::string("Former member") : full_name(*p);
}

std::string post_store::actor_url(const actor_ref& who) const {
    if (who.k == actor_ref::kind::company) {
        return world::company_url(svc_.world().company_at(who.id));
    }
    const person* p = person_of(who);
    return p == nullptr ? std::string() : world::profile_url(*p);
}

std::string post_store::actor_urn(const actor_ref& who) const {
    if (who.k == actor_ref::kind::company) {
        return world::company_urn(svc_.world().company_at(who.id));
    }
    const person* p = person_of(who);
    return p == nullptr ? std::string() : world::member_urn(*p);
}

json post_store::author_json(const actor_ref& who) const {
    if (who.k == actor_ref::kind::company) {
        const company& c = svc_.world().company_at(who.id);
        return json{{"type", "company"},           {"name", c.name},
                    {"universal_name", c.universal_name}, {"company_url", world::company_url(c)},
                    {"entity_urn", world::company_urn(c)}, {"logo_url", c.logo_url}};
    }
    const person* p = person_of(who);
    if (p == nullptr) {
        return json{{"type", "person"}, {"name", "Former member"}, {"profile_url", nullptr}, {"entity_urn", nullptr}};
    }
    return json{{"type", "person"},
                {"name", full_name(*p)},
                {"first_name", p->first_name},
                {"last_name", p->last_name},
                {"public_id", p->public_id},
                {"profile_url", world::profile_url(*p)},
                {"entity_urn", world::member_urn(*p)},
                {"headline", p->headline},
                {"profile_picture", nullable(p->profile_picture_url)}};
}

std::size_t post_store::post_reaction_count(const post& p) const {
    return static_cast<std::size_t>(
        std::count_if(p.reactions.begin(), p.reactions.end(), [](const reaction& r) { return r.comment < 0; }));
}

std::size_t post_store::comment_reaction_count(const post& p, std::size_t comment_index) const {
    auto target = static_cast<std::int32_t>(comment_index);
    return static_cast<std::size_t>(std::count_if(p.reactions.begin(), p.reactions.end(),
                                                  [&](const reaction& r) { return r.comment == target; }));
}

json post_store::post_json(const post& p, std::optional<std::uint32_t> viewer, time_point now) const {
    json mentions = json::array();
    for (const auto& m : p.mentions) {
        if (m.company) {
            const company& c = svc_.world().company_at(m.id);
            mentions.push_back(json{{"type", "company"},
                                    {"display_text", m.display_text},
                                    {"universal_name", c.universal_name},
                                    {"company_url", world::company_url(c)},
                                    {"entity_urn", world::company_urn(c)}});
        } else {
            const person& who = svc_.world().at(m.id);
            mentions.push_back(json{{"type", "person"},
                                    {"display_text", m.display_text},
                                    {"public_id", who.public_id},
                                    {"profile_url", world::profile_url(who)},
                                    {"entity_urn", world::member_urn(who)}});
        }
    }
    json media = json::array();
    for (const auto& m : p.media) {
        json item = {{"type", m.type}, {"url", m.url}, {"filename", m.filename}};
        if (!m.alt_text.empty()) {
            item["alt_text"] = m.alt_text;
        }
        if (!m.thumbnail_url.empty()) {
            item["thumbnail_url"] = m.thumbnail_url;
        }
        if (m.type == "document") {
            item["format"] = "carousel";
        }
        media.push_back(std::move(item));
    }
    json counts = json::object();
    json mine = nullptr;
    std::size_t on_post = 0;
    for (const auto& r : p.reactions) {
        if (r.comment >= 0) {
            continue;
        }
        ++on_post;
        std::string name(name_of(r.type));
        counts[name] = counts.value(name, 0) + 1;
        if (viewer && r.who == actor_ref{actor_ref::kind::account, *viewer}) {
            mine = name;
        }
    }
    json reposted = nullptr;
    if (p.reposted_from >= 0) {
        const post& original = posts_[static_cast<std::size_t>(p.reposted_from)];
        reposted = json{{"post_urn", post_urn(original.activity)},
                        {"post_url", post_url(original.activity)},
                        {"author", author_json(original.author)},
                        {"text", original.text}};
    }
    std::string author_slug = p.author.k == actor_ref::kind::company
                                  ? svc_.world().company_at(p.author.id).universal_name
                                  : (person_of(p.author) ? person_of(p.author)->public_id : std::string("member"));
    std::string share_url = std::string(network_base_url) + "/posts/" + author_slug + "_" + text_slug(p.text) +
                            "-activity-" + std::to_string(p.activity) + "-" +
                            hex(hash64(std::to_string(p.activity)), 4);
    return json{{"post_urn", post_urn(p.activity)},
                {"post_url", post_url(p.activity)},
                {"share_url", share_url},
                {"author", author_json(p.author)},
                {"text", p.text},
                {"hashtags", p.hashtags},
                {"mentions", std::move(mentions)},
                {"media", std::move(media)},
                {"reposted_from", std::move(reposted)},
                {"created_at", iso8601_s(p.at)},
                {"posted_ago", relative_age(p.at, now)},
                {"num_reactions", on_post},
                {"num_comments", p.comments.size()},
                {"num_reposts", p.reposts},
                {"reaction_counts", std::move(counts)},
                {"my_reaction", std::move(mine)}};
}

json post_store::comment_json(const post& p, std::size_t index, time_point now) const {
    const comment& c = p.comments[index];
    json out = {{"comment_urn", comment_urn(p.activity, c.id)},
                {"comment_id", std::to_string(c.id)},
                {"text", c.text},
                {"author", author_json(c.author)},
                {"created_at", iso8601_s(c.at)},
                {"posted_ago", relative_age(c.at, now)},
                {"num_reactions", comment_reaction_count(p, index)}};
    if (c.parent >= 0) {
        out["parent_comment_urn"] = comment_urn(p.activity, p.comments[static_cast<std::size_t>(c.parent)].id);
    }
    return out;
}

reaction_shape post_store::shape_for(const post& p) const {
    const std::string& setting = svc_.cfg().post_reaction_shape;
    if (setting == "sample") {
        return reaction_shape::sample;
    }
    if (setting == "mixed") {
        return unit_from_hash(splitmix64(p.activity ^ svc_.cfg().seed ^ shape_salt)) < 0.5 ? reaction_shape::sample
                                                                                           : reaction_shape::documented;
    }
    return reaction_shape::documented;
}

json post_store::post_reaction_json(const reaction& r, reaction_shape shape, const account_state& viewer) const {
    const person* p = person_of(r.who);
    std::string name = display_name(r.who);
    std::string url = actor_url(r.who);
    std::string headline = p == nullptr ? std::string() : p->headline;
    if (shape == reaction_shape::sample) {
        return json{{"type", name_of(r.type)},
                    {"name", name},
                    {"subtitle", headline},
                    {"profile_url", url},
                    {"actor_urn", actor_urn(r.who)}};
    }
    json degree = "3rd";
    if (r.who.k == actor_ref::kind::person) {
        static constexpr std::array<const char*, 4> names = {"1st", "1st", "2nd", "3rd"};
        int d = std::clamp(svc_.world().member_distance(viewer, *p), 1, 3);
        degree = names[static_cast<std::size_t>(d)];
    } else if (r.who.k == actor_ref::kind::account && account_ids_.at(r.who.id) == viewer.id) {
        degree = nullptr; // the viewer's own reaction has no degree
    }
    return json{{"reaction_type", name_of(r.type)},
                {"created_time", iso8601_s(r.at)},
                {"actor",
                 {{"name", name},
                  {"profile_url", url},
                  {"profile_picture", p == nullptr ? json(nullptr) : nullable(p->profile_picture_url)},
                  {"title", headline},
                  {"connection_degree", std::move(degree)}}}};
}

} // namespace orch::sandbox::content
