// /v2/content (create, create_company, search, get_feed, like, react, comment, answer_comment,
// repost, get_comments, get_reactions, time_spent) and the V1 endpoints that read reactions
// (/v1/data/profile/reactions, /v1/data/post/reactions), over the post store of
// content_posts.hpp. Every handler validates its params first, computes the answer, charges
// (1 credit; lists 1 per 10 results; post reactions in page mode 1 per page fetched) and only
// then changes the store.
#include "sandbox/content_compose.hpp"
#include "sandbox/content_posts.hpp"

#include "engine/time_format.hpp"

#include <algorithm>
#include <cctype>
#include <tuple>

namespace orch::sandbox {

namespace {

using namespace content;

constexpr std::size_t post_max_chars = 3'000;
constexpr std::size_t comment_max_chars = 1'250;
constexpr std::int64_t list_page_size = 10;      // search, get_comments, profile reactions
constexpr std::int64_t list_total_max = 1'000;
constexpr std::int64_t reactions_page_size = 50; // reactions on a post (spec: typically 50)
constexpr std::int64_t reactions_total_max = 10'000;
constexpr std::int64_t feed_count_max = 100;
constexpr std::int64_t time_spent_max_s = 3'600;
constexpr std::int64_t time_spent_default_s = 10;
constexpr std::uint64_t cursor_salt = 0x63757273'6f720007ULL;
constexpr std::string_view proxy_countries[] = {"US", "UK", "FR", "DE", "NL", "IT", "IL", "CA", "BR", "ES", "IN"};

post_store& store(service& svc) { return svc.area<post_store>(); }

// Content runs on the professional network: a messaging account has no feed.
void require_network(const action_context& ctx) {
    if (ctx.account.platform != "network") {
        throw channel_error("account '" + ctx.account.id + "' is a messaging account; /v2/content needs a network "
                            "account");
    }
}

// The index of the post named by a post URL field; INVALID_PARAMS for a malformed URL or a post
// that does not exist.
std::size_t post_index(post_store& st, const field_reader& f, const char* field) {
    std::string url = f.req_string(field);
    auto activity = activity_from_post_url(url);
    if (!activity) {
        throw invalid_params(f.name(field) + " is not a post URL of the network (" + std::string(network_base_url) +
                             "/feed/update/urn:li:activity:<id>/, " + std::string(network_base_url) +
                             "/posts/<slug>-activity-<id>-<code> or urn:li:activity:<id>), got " + quote_text(url));
    }
    post* p = st.find(*activity);
    if (p == nullptr) {
        throw invalid_params(f.name(field) + ": post not found: " + quote_text(url));
    }
    return static_cast<std::size_t>(st.index_of(*p));
}

// The index in post.comments of the comment named by `field`, which must belong to the post.
std::size_t comment_index(const post& p, const field_reader& f, const char* field) {
    std::string urn = f.req_string(field);
    auto ids = ids_from_comment_urn(urn);
    if (!ids) {
        throw invalid_params(f.name(field) + " is not a comment urn (urn:li:comment:(activity:<id>,<id>)), got " +
                             quote_text(urn));
    }
    if (ids->first != p.activity) {
        throw invalid_params(f.name(field) + " is a comment of another post than params.post_url: " + quote_text(urn));
    }
    for (std::size_t i = 0; i < p.comments.size(); ++i) {
        if (p.comments[i].id == ids->second) {
            return i;
        }
    }
    throw invalid_params(f.name(field) + ": comment not found: " + quote_text(urn));
}

// Stores a composed post; uploads get their media URLs once the post has its id.
json publish(post_store& st, actor_ref author, composed c, std::int64_t reposted_from, time_point now) {
    post p;
    p.author = author;
    p.at = now;
    p.text = std::move(c.text);
    p.hashtags = std::move(c.hashtags);
    p.mentions = std::move(c.mentions);
    p.media = std::move(c.media);
    p.reposted_from = reposted_from;
    post& added = st.add_post(std::move(p));
    std::string id = std::to_string(added.activity);
    std::string stem = "https://media.network.example/";
    for (std::size_t i = 0; i < added.media.size(); ++i) {
        media_item& m = added.media[i];
        std::string n = std::to_string(i + 1);
        if (m.url.empty()) {
            m.url = stem + m.type + "/" + id + "-" + n + "." + c.upload_extensions[i];
        }
        if (m.thumbnail_url.starts_with("upload:")) {
            m.thumbnail_url = stem + "image/" + id + "-" + n + "-cover." + m.thumbnail_url.substr(7);
        }
    }
    json full = st.post_json(added, std::nullopt, now);
    return json{{"post_url", full["post_url"]}, {"post_urn", full["post_urn"]}, {"share_url", full["share_url"]}};
}

json create_post(action_context& ctx) {
    require_network(ctx);
    post_store& st = store(ctx.svc);
    field_reader f(ctx.params, "params.");
    composed c = compose_post(ctx.svc, f, post_max_chars);
    ctx.charge(1);
    ctx.side_effect = true;
    return publish(st, {actor_ref::kind::account, st.account_index(ctx.account.id)}, std::move(c), -1, ctx.now);
}

json create_company_post(action_context& ctx) {
    require_network(ctx);
    post_store& st = store(ctx.svc);
    field_reader f(ctx.params, "params.");
    std::string url = trimmed(f.req_string("company_url"));
    auto slug = slug_from_company_url(url);
    if (!slug) {
        throw invalid_params("params.company_url is not a company page URL (" + std::string(network_base_url) +
                             "/company/<universal_name>), got " + quote_text(url));
    }
    const company* c = ctx.svc.world().find_company_by_slug(*slug);
    if (c == nullptr) {
        throw invalid_params("params.company_url: company not found: " + quote_text(url));
    }
    composed body = compose_post(ctx.svc, f, post_max_chars);
    if (!st.administers(ctx.account, *c)) {
        throw forbidden("account '" + ctx.account.id + "' is not an admin of the company page " +
                        world::company_url(*c));
    }
    ctx.charge(1);
    ctx.side_effect = true;
    return publish(st, {actor_ref::kind::company, c->id}, std::move(body), -1, ctx.now);
}

// ---------------------------------------------------------------------------------------------
// Result windows: total_results, or start_page..end_page of `page_size` results.

struct result_window {
    std::size_t offset = 0;
    std::size_t limit = 0;
    bool pages = false;
    std::int64_t start_page = 1;
    std::int64_t end_page = 1;
    std::int64_t page_size = 10;
};

result_window read_window(const field_reader& f, std::int64_t page_size, std::int64_t total_max) {
    auto total = f.opt_int("total_results", 1, total_max);
    std::int64_t max_page = std::max<std::int64_t>(1, total_max / page_size);
    auto start = f.opt_int("start_page", 1, max_page);
    auto end = f.opt_int("end_page", 1, max_page);
    result_window w;
    w.page_size = page_size;
    if (!start && !end) {
        w.limit = static_cast<std::size_t>(total.value_or(10));
        return w;
    }
    // Page mode: total_results is ignored (spec, post reactions; the same rule everywhere here).
    w.pages = true;
    w.start_page = start.value_or(1);
    w.end_page = end.value_or(w.start_page);
    if (w.end_page < w.start_page) {
        throw invalid_params(f.name("end_page") + " (" + std::to_string(w.end_page) + ") must not be less than " +
                             f.name("start_page") + " (" + std::to_string(w.start_page) + ")");
    }
    w.offset = static_cast<std::size_t>((w.start_page - 1) * page_size);
    w.limit = static_cast<std::size_t>((w.end_page - w.start_page + 1) * page_size);
    return w;
}

std::pair<std::size_t, std::size_t> slice(std::size_t size, const result_window& w) {
    std::size_t begin = std::min(w.offset, size);
    return {begin, std::min(size, begin + w.limit)};
}

std::int64_t pages_with_results(std::size_t returned, std::int64_t page_size) {
    return static_cast<std::int64_t>((returned + static_cast<std::size_t>(page_size) - 1) /
                                     static_cast<std::size_t>(page_size));
}

json pagination_json(const result_window& w, std::size_t returned, std::size_t available) {
    std::int64_t fetched = pages_with_results(returned, w.page_size);
    std::int64_t end_page = w.pages ? w.end_page : std::max<std::int64_t>(1, fetched);
    return json{{"start_page", w.start_page},
                {"end_page", end_page},
                {"results_per_page", w.page_size},
                {"pages_fetched", fetched},
                {"has_more", available > w.offset + returned}};
}

void describe_window(json& data, const result_window& w, std::size_t returned, std::size_t available) {
    data["total_results"] = returned;
    data["total_available_results"] = available;
    if (w.pages) {
        data["pagination"] = pagination_json(w, returned, available);
    }
}

// ---------------------------------------------------------------------------------------------
// search, get_feed

std::optional<std::chrono::minutes> date_filter(const field_reader& f) {
    auto v = f.opt_string("date_posted");
    if (!v) {
        return std::nullopt;
    }
    if (*v == "past-24h") return std::chrono::minutes(24 * 60);
    if (*v == "past-week") return std::chrono::minutes(7 * 24 * 60);
    if (*v == "past-month") return std::chrono::minutes(30 * 24 * 60);
    throw invalid_params(f.name("date_posted") + " must be past-24h, past-week or past-month, got " + quote_text(*v));
}

json search_posts(action_context& ctx) {
    require_network(ctx);
    post_store& st = store(ctx.svc);
    field_reader f(ctx.params, "params.");
    auto words = fold_words(f.req_string("keyword"));
    std::string sort_by = f.opt_string("sort_by").value_or("relevance");
    if (sort_by != "relevance" && sort_by != "date_posted") {
        throw invalid_params("params.sort_by must be relevance or date_posted, got " + quote_text(sort_by));
    }
    auto within = date_filter(f);
    result_window w = read_window(f, list_page_size, list_total_max);
    // (engagement, activity, index) of every match; engagement orders "relevance".
    std::vector<std::tuple<std::size_t, std::uint64_t, std::size_t>> hits;
    const auto& posts = st.posts();
    for (std::size_t i = 0; i < posts.size(); ++i) {
        const post& p = posts[i];
        if (within && p.at < ctx.now - *within) {
            continue;
        }
        bool all = std::all_of(words.begin(), words.end(),
                               [&](const std::string& word) { return p.search_text.find(word) != std::string::npos; });
        if (all) {
            std::size_t engagement = sort_by == "relevance" ? st.post_reaction_count(p) + p.comments.size() : 0;
            hits.emplace_back(engagement, p.activity, i);
        }
    }
    std::sort(hits.begin(), hits.end(), [](const auto& a, const auto& b) {
        return std::get<0>(a) != std::get<0>(b) ? std::get<0>(a) > std::get<0>(b) : std::get<1>(a) > std::get<1>(b);
    });
    auto [begin, end] = slice(hits.size(), w);
    auto viewer = st.known_account_index(ctx.account.id);
    json items = json::array();
    for (std::size_t k = begin; k < end; ++k) {
        items.push_back(st.post_json(posts[std::get<2>(hits[k])], viewer, ctx.now));
    }
    json data = {{"posts", std::move(items)}};
    describe_window(data, w, end - begin, hits.size());
    ctx.charge(list_cost(end - begin));
    return data;
}

std::string feed_cursor(const service& svc, const account_state& account, std::uint64_t activity) {
    auto check = hash64(account.id + ":" + std::to_string(activity), svc.cfg().seed ^ cursor_salt);
    return hex(activity, 16) + hex(check, 8);
}

std::uint64_t decode_feed_cursor(const service& svc, const account_state& account, const std::string& cursor) {
    auto fail = [&] {
        return invalid_params("params.cursor is not a cursor returned by get_feed for this account: " +
                              quote_text(cursor));
    };
    if (cursor.size() != 24 || cursor.find_first_not_of("0123456789abcdef") != std::string::npos) {
        throw fail();
    }
    std::uint64_t activity = std::stoull(cursor.substr(0, 16), nullptr, 16);
    if (feed_cursor(svc, account, activity) != cursor) {
        throw fail();
    }
    return activity;
}

// The posts an account sees at home: its connections', its company's and administered pages',
// and its own, newest first.
std::vector<std::size_t> feed_of(post_store& st, const account_state& account) {
    std::vector<std::size_t> out;
    for (const auto& [who, rel] : account.relations) {
        if (rel.state == relation_state::connected) {
            for (auto i : st.posts_of_person(who)) {
                out.push_back(i);
            }
        }
    }
    const world& wd = st.svc().world();
    std::vector<company_id> pages;
    for (const company& c : wd.companies()) {
        if (st.administers(account, c)) {
            pages.push_back(c.id);
        }
    }
    for (company_id c : pages) {
        for (auto i : st.posts_of_company(c)) {
            out.push_back(i);
        }
    }
    auto self = st.known_account_index(account.id);
    for (std::size_t i = st.seeded_posts(); i < st.posts().size(); ++i) {
        const actor_ref& a = st.posts()[i].author;
        bool mine = self && a == actor_ref{actor_ref::kind::account, *self};
        bool page = a.k == actor_ref::kind::company && std::find(pages.begin(), pages.end(), a.id) != pages.end();
        if (mine || page) {
            out.push_back(i);
        }
    }
    std::sort(out.begin(), out.end(),
              [&](std::size_t a, std::size_t b) { return st.posts()[a].activity > st.posts()[b].activity; });
    out.erase(std::unique(out.begin(), out.end()), out.end());
    return out;
}

json get_feed(action_context& ctx) {
    require_network(ctx);
    post_store& st = store(ctx.svc);
    field_reader f(ctx.params, "params.");
    auto count = static_cast<std::size_t>(f.opt_int("count", 1, feed_count_max).value_or(10));
    auto cursor = f.opt_string("cursor");
    std::optional<std::uint64_t> before;
    if (cursor && !cursor->empty()) {
        before = decode_feed_cursor(ctx.svc, ctx.account, *cursor);
    }
    auto feed = feed_of(st, ctx.account);
    std::size_t begin = 0;
    while (before && begin < feed.size() && st.posts()[feed[begin]].activity >= *before) {
        ++begin;
    }
    std::size_t end = std::min(feed.size(), begin + count);
    auto viewer = st.known_account_index(ctx.account.id);
    json items = json::array();
    for (std::size_t k = begin; k < end; ++k) {
        items.push_back(st.post_json(st.posts()[feed[k]], viewer, ctx.now));
    }
    bool more = end < feed.size();
    json next = more ? json(feed_cursor(ctx.svc, ctx.account, st.posts()[feed[end - 1]].activity)) : json(nullptr);
    ctx.charge(list_cost(end - begin));
    return json{{"posts", std::move(items)}, {"total_results", end - begin}, {"has_more", more}, {"next_cursor", next}};
}

// ---------------------------------------------------------------------------------------------
// like, react, comment, answer_comment, repost, time_spent

json react_to(action_context& ctx, std::optional<reaction_kind> fixed) {
    require_network(ctx);
    post_store& st = store(ctx.svc);
    field_reader f(ctx.params, "params.");
    std::size_t index = post_index(st, f, "post_url");
    reaction_kind type = fixed.value_or(reaction_kind::like);
    if (!fixed) {
        if (auto given = f.opt_string("reaction_type")) {
            auto parsed = parse_reaction(*given);
            if (!parsed) {
                throw invalid_params("params.reaction_type must be one of LIKE, CELEBRATE, SUPPORT, LOVE, INSIGHTFUL, "
                                     "FUNNY; got " + quote_text(*given));
            }
            type = *parsed;
        }
    }
    std::int32_t target = -1;
    if (f.find("comment_urn") != nullptr) {
        target = static_cast<std::int32_t>(comment_index(st.posts()[index], f, "comment_urn"));
    }
    ctx.charge(1);
    ctx.side_effect = true;
    actor_ref me{actor_ref::kind::account, st.account_index(ctx.account.id)};
    post& p = st.posts()[index];
    // One reaction per member and target: reacting again changes it.
    auto it = std::find_if(p.reactions.begin(), p.reactions.end(),
                           [&](const reaction& r) { return r.who == me && r.comment == target; });
    if (it == p.reactions.end()) {
        p.reactions.push_back({me, target, type, ctx.now});
    } else {
        it->type = type;
        it->at = ctx.now;
    }
    json data = {{"post_urn", post_urn(p.activity)},
                 {"post_url", post_url(p.activity)},
                 {"reaction_type", name_of(type)},
                 {"reaction_target", target < 0 ? "POST" : "COMMENT"},
                 {"reacted_at", iso8601_s(ctx.now)}};
    if (target >= 0) {
        data["comment_urn"] = comment_urn(p.activity, p.comments[static_cast<std::size_t>(target)].id);
    }
    return data;
}

json like_post(action_context& ctx) { return react_to(ctx, reaction_kind::like); }
json react_post(action_context& ctx) { return react_to(ctx, std::nullopt); }

composed compose_comment(const service& svc, const field_reader& f) {
    f.req_string("message");
    composed c;
    compose_text(svc, f, comment_max_chars, c);
    return c;
}

json add_comment_to(action_context& ctx, post_store& st, std::size_t index, composed body, std::int32_t parent) {
    ctx.charge(1);
    ctx.side_effect = true;
    post& p = st.posts()[index];
    comment c;
    c.author = {actor_ref::kind::account, st.account_index(ctx.account.id)};
    c.parent = parent;
    c.at = ctx.now;
    c.text = std::move(body.text);
    c.mentions = std::move(body.mentions);
    const comment& added = st.add_comment(p, std::move(c));
    json data = {{"comment_urn", comment_urn(p.activity, added.id)},
                 {"comment_id", std::to_string(added.id)},
                 {"post_urn", post_urn(p.activity)},
                 {"post_url", post_url(p.activity)},
                 {"created_at", iso8601_s(ctx.now)}};
    if (parent >= 0) {
        data["parent_comment_urn"] = comment_urn(p.activity, p.comments[static_cast<std::size_t>(parent)].id);
    }
    return data;
}

json comment_post(action_context& ctx) {
    require_network(ctx);
    post_store& st = store(ctx.svc);
    field_reader f(ctx.params, "params.");
    std::size_t index = post_index(st, f, "post_url");
    composed body = compose_comment(ctx.svc, f);
    return add_comment_to(ctx, st, index, std::move(body), -1);
}

json answer_comment(action_context& ctx) {
    require_network(ctx);
    post_store& st = store(ctx.svc);
    field_reader f(ctx.params, "params.");
    std::string urn = f.req_string("comment_urn");
    std::size_t index = 0;
    if (f.find("post_url") != nullptr) {
        index = post_index(st, f, "post_url");
    } else {
        // The urn names its post, so post_url may be left out.
        auto ids = ids_from_comment_urn(urn);
        if (!ids) {
            throw invalid_params("params.comment_urn is not a comment urn (urn:li:comment:(activity:<id>,<id>)), got " +
                                 quote_text(urn));
        }
        post* p = st.find(ids->first);
        if (p == nullptr) {
            throw invalid_params("params.comment_urn: comment not found: " + quote_text(urn));
        }
        index = static_cast<std::size_t>(st.index_of(*p));
    }
    std::size_t answered = comment_index(st.posts()[index], f, "comment_urn");
    composed body = compose_comment(ctx.svc, f);
    // Threads are one level deep: an answer to an answer joins the thread of its first comment.
    std::int32_t thread = st.posts()[index].comments[answered].parent;
    json data =
        add_comment_to(ctx, st, index, std::move(body), thread >= 0 ? thread : static_cast<std::int32_t>(answered));
    data["answered_comment_urn"] = comment_urn(st.posts()[index].activity, st.posts()[index].comments[answered].id);
    return data;
}

json repost(action_context& ctx) {
    require_network(ctx);
    post_store& st = store(ctx.svc);
    field_reader f(ctx.params, "params.");
    std::size_t index = post_index(st, f, "post_url");
    composed body;
    compose_text(ctx.svc, f, post_max_chars, body);
    // Reposting a plain repost shares the original, as the network does.
    const post& target = st.posts()[index];
    auto original = target.reposted_from >= 0 && trimmed(target.text).empty()
                        ? static_cast<std::size_t>(target.reposted_from)
                        : index;
    ctx.charge(1);
    ctx.side_effect = true;
    ++st.posts()[original].reposts;
    std::uint64_t original_activity = st.posts()[original].activity;
    json data = publish(st, {actor_ref::kind::account, st.account_index(ctx.account.id)}, std::move(body),
                        static_cast<std::int64_t>(original), ctx.now);
    data["reposted_from"] = json{{"post_urn", post_urn(original_activity)}, {"post_url", post_url(original_activity)}};
    return data;
}

json time_spent(action_context& ctx) {
    require_network(ctx);
    post_store& st = store(ctx.svc);
    field_reader f(ctx.params, "params.");
    std::size_t index = post_index(st, f, "post_url");
    std::int64_t seconds = f.opt_int("duration_s", 1, time_spent_max_s).value_or(time_spent_default_s);
    ctx.charge(1);
    ctx.side_effect = true;
    post& p = st.posts()[index];
    std::int64_t& total = p.seconds_spent[st.account_index(ctx.account.id)];
    total += seconds;
    return json{{"post_urn", post_urn(p.activity)},
                {"post_url", post_url(p.activity)},
                {"duration_s", seconds},
                {"total_duration_s", total},
                {"recorded", true}};
}

// ---------------------------------------------------------------------------------------------
// get_comments, get_reactions (and V1 post reactions)

json get_comments(action_context& ctx) {
    require_network(ctx);
    post_store& st = store(ctx.svc);
    field_reader f(ctx.params, "params.");
    std::size_t index = post_index(st, f, "post_url");
    result_window w = read_window(f, list_page_size, list_total_max);
    const post& p = st.posts()[index];
    std::vector<std::size_t> threads;
    for (std::size_t i = 0; i < p.comments.size(); ++i) {
        if (p.comments[i].parent < 0) {
            threads.push_back(i);
        }
    }
    auto [begin, end] = slice(threads.size(), w);
    json items = json::array();
    for (std::size_t k = begin; k < end; ++k) {
        json item = st.comment_json(p, threads[k], ctx.now);
        json replies = json::array();
        for (std::size_t i = 0; i < p.comments.size(); ++i) {
            if (p.comments[i].parent == static_cast<std::int32_t>(threads[k])) {
                replies.push_back(st.comment_json(p, i, ctx.now));
            }
        }
        item["num_replies"] = replies.size();
        item["replies"] = std::move(replies);
        items.push_back(std::move(item));
    }
    json data = {{"post_urn", post_urn(p.activity)}, {"comments", std::move(items)}};
    describe_window(data, w, end - begin, threads.size());
    data["total_comments"] = p.comments.size();
    ctx.charge(list_cost(end - begin));
    return data;
}

// Reactions on the post itself, newest first, in the item shape of the settings. `cost` gets the
// credits: 1 per page fetched in page mode (spec, Credits 6), else 1 per 10 results.
json reactions_on(post_store& st, std::size_t index, const field_reader& f, const account_state& viewer,
                  std::int64_t& cost) {
    result_window w = read_window(f, reactions_page_size, reactions_total_max);
    const post& p = st.posts()[index];
    std::vector<const reaction*> list;
    for (const auto& r : p.reactions) {
        if (r.comment < 0) {
            list.push_back(&r);
        }
    }
    std::stable_sort(list.begin(), list.end(), [](const reaction* a, const reaction* b) { return a->at > b->at; });
    auto [begin, end] = slice(list.size(), w);
    reaction_shape shape = st.shape_for(p);
    json items = json::array();
    for (std::size_t k = begin; k < end; ++k) {
        items.push_back(st.post_reaction_json(*list[k], shape, viewer));
    }
    std::size_t returned = end - begin;
    cost = w.pages ? std::max<std::int64_t>(1, pages_with_results(returned, w.page_size))
                   : list_cost(returned);
    return json{{"post_urn", post_urn(p.activity)},
                {"total_results", returned},
                {"total_available_results", list.size()},
                {"reactions", std::move(items)},
                {"pagination", pagination_json(w, returned, list.size())}};
}

json get_post_reactions(action_context& ctx) {
    require_network(ctx);
    post_store& st = store(ctx.svc);
    field_reader f(ctx.params, "params.");
    std::size_t index = post_index(st, f, "post_url");
    std::int64_t cost = 1;
    json data = reactions_on(st, index, f, ctx.account, cost);
    ctx.charge(cost);
    return data;
}

// ---------------------------------------------------------------------------------------------
// V1: reactions made by a profile, reactions on a post

std::string check_country(const field_reader& f, const char* field) {
    std::string value = f.opt_string(field).value_or("FR");
    std::string upper = trimmed(value);
    for (char& c : upper) {
        c = static_cast<char>(std::toupper(static_cast<unsigned char>(c)));
    }
    for (auto allowed : proxy_countries) {
        if (upper == allowed) {
            return upper;
        }
    }
    throw invalid_params(f.name(field) + " must be one of US, UK, FR, DE, NL, IT, IL, CA, BR, ES, IN; got " +
                         quote_text(value));
}

// The profile named by `profile_url`: a person of the world, or the owner of an account of the
// sandbox (whose reactions are those its account made through the API).
struct profile_target {
    const person* who = nullptr;
    const account_state* account = nullptr;
};

profile_target find_profile(service& svc, const field_reader& f) {
    std::string url = f.req_string("profile_url");
    auto id = public_id_from_profile_url(url);
    if (!id) {
        throw invalid_params(f.name("profile_url") + " is not a profile URL of the network (" +
                             std::string(network_base_url) + "/in/<public_id>), got " + quote_text(url));
    }
    if (const person* p = svc.world().find_by_public_id(*id)) {
        return {p, nullptr};
    }
    for (const auto& [aid, a] : svc.accounts()) {
        if (a.self.public_id == *id) {
            return {&a.self, &a};
        }
    }
    throw invalid_params(f.name("profile_url") + ": profile not found: " + quote_text(url));
}

std::string profile_cursor(const service& svc, const person& who, std::size_t offset) {
    auto check = hash64(who.public_id + "#" + std::to_string(offset), svc.cfg().seed ^ cursor_salt);
    return hex(offset, 8) + hex(check, 8);
}

std::size_t decode_profile_cursor(const service& svc, const person& who, const field_reader& f,
                                  const std::string& cursor) {
    if (cursor.size() == 16 && cursor.find_first_not_of("0123456789abcdef") == std::string::npos) {
        auto offset = static_cast<std::size_t>(std::stoull(cursor.substr(0, 8), nullptr, 16));
        if (profile_cursor(svc, who, offset) == cursor) {
            return offset;
        }
    }
    throw invalid_params(f.name("cursor") + " is not a cursor returned for this profile: " + quote_text(cursor));
}

json author_brief(const post_store& st, const actor_ref& who) {
    return json{{"name", st.display_name(who)}, {"profile_url", st.actor_url(who)}, {"entity_urn", st.actor_urn(who)}};
}

json profile_reaction_item(const post_store& st, const post& p, const reaction& r, const person& who,
                           time_point now) {
    auto id = 7'400'000'000'000'000'000ULL +
              hash64(std::to_string(p.activity) + "/" + who.public_id + "/" + std::to_string(r.comment)) %
                  100'000'000'000'000'000ULL;
    json item = {{"reaction_id", std::to_string(id)},
                 {"reaction_type", name_of(r.type)},
                 {"reaction_target", r.comment < 0 ? "POST" : "COMMENT"},
                 {"reaction_time", relative_age(r.at, now)},
                 {"reactor",
                  {{"profile_url", world::profile_url(who)},
                   {"profile_picture", who.profile_picture_url.empty() ? json(nullptr) : json(who.profile_picture_url)},
                   {"entity_urn", world::member_urn(who)},
                   {"headline", who.headline}}},
                 {"post",
                  {{"urn", post_urn(p.activity)},
                   {"url", post_url(p.activity)},
                   {"content", p.text},
                   {"author", author_brief(st, p.author)}}}};
    if (r.comment >= 0) {
        const comment& c = p.comments[static_cast<std::size_t>(r.comment)];
        item["comment"] = json{{"content", c.text}, {"author", author_brief(st, c.author)}};
    }
    return item;
}

json v1_profile_reactions(v1_context& ctx) {
    post_store& st = store(ctx.svc);
    field_reader f(ctx.body, "");
    profile_target target = find_profile(ctx.svc, f);
    check_country(f, "proxy_country");
    auto cursor = f.opt_string("cursor");
    bool has_cursor = cursor && !trimmed(*cursor).empty();
    if (has_cursor && (f.find("start_page") != nullptr || f.find("end_page") != nullptr)) {
        throw invalid_params("give either cursor or start_page/end_page, not both");
    }
    result_window w = read_window(f, list_page_size, list_total_max);
    if (has_cursor) {
        w.offset = decode_profile_cursor(ctx.svc, *target.who, f, trimmed(*cursor));
        w.start_page = static_cast<std::int64_t>(w.offset) / list_page_size + 1;
    }
    // (post index, reaction index) of every reaction the profile made, newest first.
    std::vector<std::pair<std::uint32_t, std::uint32_t>> made;
    if (target.account == nullptr) {
        made = st.reactions_by(target.who->id);
    } else if (auto me = st.known_account_index(target.account->id)) {
        for (std::size_t i = 0; i < st.posts().size(); ++i) {
            const auto& rs = st.posts()[i].reactions;
            for (std::size_t k = 0; k < rs.size(); ++k) {
                if (rs[k].who == actor_ref{actor_ref::kind::account, *me}) {
                    made.emplace_back(static_cast<std::uint32_t>(i), static_cast<std::uint32_t>(k));
                }
            }
        }
    }
    auto at = [&](const std::pair<std::uint32_t, std::uint32_t>& m) {
        return st.posts()[m.first].reactions[m.second].at;
    };
    std::stable_sort(made.begin(), made.end(), [&](const auto& a, const auto& b) { return at(a) > at(b); });
    auto [begin, end] = slice(made.size(), w);
    json items = json::array();
    for (std::size_t k = begin; k < end; ++k) {
        const post& p = st.posts()[made[k].first];
        items.push_back(profile_reaction_item(st, p, p.reactions[made[k].second], *target.who, ctx.now));
    }
    std::size_t returned = end - begin;
    json pagination = pagination_json(w, returned, made.size());
    if (!w.pages) {
        pagination["end_page"] =
            w.start_page + std::max<std::int64_t>(1, pagination["pages_fetched"].get<std::int64_t>()) - 1;
    }
    pagination["next_cursor"] = end < made.size() ? profile_cursor(ctx.svc, *target.who, end) : std::string();
    ctx.charge(list_cost(returned));
    return json{{"reactions", std::move(items)},
                {"total_results", returned},
                {"profile_url", world::profile_url(*target.who)},
                {"entity_urn", world::member_urn(*target.who)},
                {"profile_urn", "urn:li:fsd_profile:" + hex(hash64(target.who->public_id, ctx.svc.cfg().seed), 16)},
                {"pagination", std::move(pagination)}};
}

json v1_post_reactions(v1_context& ctx) {
    post_store& st = store(ctx.svc);
    field_reader f(ctx.body, "");
    std::size_t index = post_index(st, f, "post_url");
    std::string token = f.req_string("login_token");
    check_country(f, "country");
    // Connection degrees are seen from the account of this login token when the key has one;
    // any other token stands for a member outside the world's graph.
    account_state outsider;
    outsider.id = "v1:" + hex(hash64(token, ctx.svc.cfg().seed));
    const account_state* viewer = &outsider;
    for (const auto& [id, a] : ctx.svc.accounts()) {
        if (a.key == ctx.key.key && a.login_token == token) {
            viewer = &a;
        }
    }
    std::int64_t cost = 1;
    json data = reactions_on(st, index, f, *viewer, cost);
    ctx.charge(cost);
    return data;
}

} // namespace

void register_content_actions(action_table& table) {
    table.add("content", "create", create_post);
    table.add("content", "create_company", create_company_post);
    table.add("content", "search", search_posts);
    table.add("content", "get_feed", get_feed);
    table.add("content", "like", like_post);
    table.add("content", "react", react_post);
    table.add("content", "comment", comment_post);
    table.add("content", "answer_comment", answer_comment);
    table.add("content", "repost", repost);
    table.add("content", "get_comments", get_comments);
    table.add("content", "get_reactions", get_post_reactions);
    table.add("content", "time_spent", time_spent);
}

void register_v1_reaction_routes(v1_table& table) {
    table.add("POST", "/v1/data/profile/reactions", "profile_reactions", v1_profile_reactions);
    table.add("POST", "/v1/data/post/reactions", "post_reactions", v1_post_reactions);
}

} // namespace orch::sandbox
