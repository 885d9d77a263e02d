// The simulated world: generation from a seed, lookups, URL parsing, search and records.
//
// Determinism: every entity draws from its own rng64 stream, seeded by hash64("<kind>:<index>",
// seed). Only integer arithmetic and unit() (an exact integer-to-double scaling) decide
// anything, so one seed gives the same bytes on every machine and compiler.
#include "sandbox/world.hpp"

#include "sandbox/util.hpp"

#include <algorithm>
#include <array>
#include <charconv>
#include <span>
#include <unordered_set>

namespace orch::sandbox {

namespace {

#include "sandbox/world_data.inc"

// ---------------------------------------------------------------------------------------------
// Text helpers

// ASCII replacements of Latin-1 and Latin Extended-A letters, by code point range.
struct fold_range {
    char32_t lo;
    char32_t hi;
    const char* ascii;
};
constexpr fold_range fold_ranges[] = {
    {0xC0, 0xC5, "a"},   {0xC6, 0xC6, "ae"},  {0xC7, 0xC7, "c"},   {0xC8, 0xCB, "e"},   {0xCC, 0xCF, "i"},
    {0xD0, 0xD0, "d"},   {0xD1, 0xD1, "n"},   {0xD2, 0xD6, "o"},   {0xD8, 0xD8, "o"},   {0xD9, 0xDC, "u"},
    {0xDD, 0xDD, "y"},   {0xDE, 0xDE, "th"},  {0xDF, 0xDF, "ss"},  {0xE0, 0xE5, "a"},   {0xE6, 0xE6, "ae"},
    {0xE7, 0xE7, "c"},   {0xE8, 0xEB, "e"},   {0xEC, 0xEF, "i"},   {0xF0, 0xF0, "d"},   {0xF1, 0xF1, "n"},
    {0xF2, 0xF6, "o"},   {0xF8, 0xF8, "o"},   {0xF9, 0xFC, "u"},   {0xFD, 0xFD, "y"},   {0xFE, 0xFE, "th"},
    {0xFF, 0xFF, "y"},   {0x100, 0x105, "a"}, {0x106, 0x10D, "c"}, {0x10E, 0x111, "d"}, {0x112, 0x11B, "e"},
    {0x11C, 0x123, "g"}, {0x124, 0x127, "h"}, {0x128, 0x131, "i"}, {0x132, 0x133, "ij"}, {0x134, 0x135, "j"},
    {0x136, 0x138, "k"}, {0x139, 0x142, "l"}, {0x143, 0x14B, "n"}, {0x14C, 0x151, "o"}, {0x152, 0x153, "oe"},
    {0x154, 0x159, "r"}, {0x15A, 0x161, "s"}, {0x162, 0x167, "t"}, {0x168, 0x173, "u"}, {0x174, 0x175, "w"},
    {0x176, 0x178, "y"}, {0x179, 0x17E, "z"}, {0x17F, 0x17F, "s"}};

const char* ascii_of(char32_t cp) {
    for (const auto& r : fold_ranges) {
        if (cp >= r.lo && cp <= r.hi) {
            return r.ascii;
        }
    }
    return nullptr;
}

char ascii_lower(char c) { return (c >= 'A' && c <= 'Z') ? static_cast<char>(c - 'A' + 'a') : c; }

std::string ascii_lower(std::string_view s) {
    std::string out(s);
    for (char& c : out) {
        c = ascii_lower(c);
    }
    return out;
}

std::string_view trim(std::string_view s) {
    while (!s.empty() && (s.front() == ' ' || s.front() == '\t' || s.front() == '\n' || s.front() == '\r')) {
        s.remove_prefix(1);
    }
    while (!s.empty() && (s.back() == ' ' || s.back() == '\t' || s.back() == '\n' || s.back() == '\r')) {
        s.remove_suffix(1);
    }
    return s;
}

bool starts_with_ci(std::string_view s, std::string_view prefix) {
    if (s.size() < prefix.size()) {
        return false;
    }
    for (std::size_t i = 0; i < prefix.size(); ++i) {
        if (ascii_lower(s[i]) != prefix[i]) {
            return false;
        }
    }
    return true;
}

int hex_value(char c) {
    if (c >= '0' && c <= '9') return c - '0';
    if (c >= 'a' && c <= 'f') return c - 'a' + 10;
    if (c >= 'A' && c <= 'F') return c - 'A' + 10;
    return -1;
}

std::optional<std::string> percent_decode(std::string_view s) {
    std::string out;
    out.reserve(s.size());
    for (std::size_t i = 0; i < s.size(); ++i) {
        if (s[i] != '%') {
            out.push_back(s[i]);
            continue;
        }
        if (i + 2 >= s.size()) {
            return std::nullopt;
        }
        int hi = hex_value(s[i + 1]);
        int lo = hex_value(s[i + 2]);
        if (hi < 0 || lo < 0) {
            return std::nullopt;
        }
        out.push_back(static_cast<char>(hi * 16 + lo));
        i += 2;
    }
    return out;
}

// A path segment id is letters, digits, '-', '_', '.' or non-ASCII (UTF-8) bytes.
bool valid_id(std::string_view id) {
    if (id.empty() || id == "." || id == "..") {
        return false;
    }
    return std::all_of(id.begin(), id.end(), [](char c) {
        auto u = static_cast<unsigned char>(c);
        return u >= 0x80 || (u >= '0' && u <= '9') || (u >= 'a' && u <= 'z') || (u >= 'A' && u <= 'Z') ||
               c == '-' || c == '_' || c == '.';
    });
}

// "<scheme>://<host>/<kind>/<id>[/][?query][#fragment]" of the network host -> the id.
std::optional<std::string> id_from_network_url(std::string_view url, std::string_view kind) {
    url = trim(url);
    if (starts_with_ci(url, "https://")) {
        url.remove_prefix(8);
    } else if (starts_with_ci(url, "http://")) {
        url.remove_prefix(7);
    } else if (url.find("://") != std::string_view::npos) {
        return std::nullopt;
    }
    url = url.substr(0, url.find_first_of("?#"));
    auto slash = url.find('/');
    if (slash == std::string_view::npos) {
        return std::nullopt;
    }
    std::string host = ascii_lower(url.substr(0, slash));
    std::string_view canonical_host = network_base_url.substr(network_base_url.find("://") + 3);
    if (host != canonical_host && "www." + host != canonical_host) {
        return std::nullopt;
    }
    std::string_view path = url.substr(slash + 1);
    if (!starts_with_ci(path, kind) || path.size() <= kind.size() || path[kind.size()] != '/') {
        return std::nullopt;
    }
    std::string_view rest = path.substr(kind.size() + 1);
    if (!rest.empty() && rest.back() == '/') {
        rest.remove_suffix(1);
    }
    if (rest.empty() || rest.find('/') != std::string_view::npos) {
        return std::nullopt;
    }
    auto id = percent_decode(rest);
    if (!id || !valid_id(*id)) {
        return std::nullopt;
    }
    return ascii_lower(*id);
}

// URL slug: folded, runs of anything but [a-z0-9] become one '-'.
std::string slugify(std::string_view text) {
    std::string folded = fold_lower(text);
    std::string out;
    for (char c : folded) {
        bool keep = (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9');
        if (keep) {
            out.push_back(c);
        } else if (!out.empty() && out.back() != '-') {
            out.push_back('-');
        }
    }
    while (!out.empty() && out.back() == '-') {
        out.pop_back();
    }
    return out;
}

std::string without_dashes(std::string s) {
    s.erase(std::remove(s.begin(), s.end(), '-'), s.end());
    return s;
}

std::string replace_braces(std::string_view pattern, std::string_view value) {
    std::string out(pattern);
    auto pos = out.find("{}");
    if (pos != std::string::npos) {
        out.replace(pos, 2, value);
    }
    return out;
}

// Fills a pattern: '9' becomes a digit, 'A' an upper-case letter.
std::string fill_pattern(rng64& r, std::string_view pattern) {
    std::string out(pattern);
    for (char& c : out) {
        if (c == '9') {
            c = static_cast<char>('0' + r.between(0, 9));
        } else if (c == 'A') {
            c = static_cast<char>('A' + r.between(0, 25));
        }
    }
    return out;
}

std::string join(const std::vector<std::string>& items, std::string_view sep) {
    std::string out;
    for (const auto& s : items) {
        if (!out.empty()) {
            out += sep;
        }
        out += s;
    }
    return out;
}

// ---------------------------------------------------------------------------------------------
// Draws

template <typename T, std::size_t N, typename Weight>
std::size_t weighted_index(rng64& r, const T (&items)[N], Weight weight_of) {
    std::int64_t total = 0;
    for (const auto& item : items) {
        total += weight_of(item);
    }
    std::int64_t x = r.between(0, total - 1);
    for (std::size_t i = 0; i < N; ++i) {
        x -= weight_of(items[i]);
        if (x < 0) {
            return i;
        }
    }
    return N - 1;
}

template <typename T>
const T& pick(rng64& r, std::span<const T> items) {
    return items[static_cast<std::size_t>(r.between(0, static_cast<std::int64_t>(items.size()) - 1))];
}

template <typename T, std::size_t N>
const T& pick(rng64& r, const T (&items)[N]) {
    return pick(r, std::span<const T>(items, N));
}

template <typename T, std::size_t N>
const T& pick(rng64& r, const std::array<T, N>& items) {
    return pick(r, std::span<const T>(items.data(), N));
}

// One of the '|'-separated alternatives of a title.
std::string pick_alternative(rng64& r, std::string_view options) {
    std::vector<std::string_view> parts;
    std::size_t start = 0;
    while (true) {
        auto bar = options.find('|', start);
        parts.push_back(options.substr(start, bar == std::string_view::npos ? std::string_view::npos : bar - start));
        if (bar == std::string_view::npos) {
            break;
        }
        start = bar + 1;
    }
    return std::string(pick(r, std::span<const std::string_view>(parts)));
}

// `count` distinct items, in draw order (partial Fisher-Yates over indices).
template <typename T, std::size_t N>
std::vector<std::string> pick_distinct(rng64& r, const std::array<T, N>& items, std::size_t count) {
    std::array<std::size_t, N> idx{};
    for (std::size_t i = 0; i < N; ++i) {
        idx[i] = i;
    }
    std::vector<std::string> out;
    for (std::size_t i = 0; i < count && i < N; ++i) {
        auto j = static_cast<std::size_t>(r.between(static_cast<std::int64_t>(i), static_cast<std::int64_t>(N) - 1));
        std::swap(idx[i], idx[j]);
        out.emplace_back(items[idx[i]]);
    }
    return out;
}

std::size_t city_of_country(rng64& r, std::size_t country) {
    std::int64_t total = 0;
    for (const auto& c : cities) {
        total += static_cast<std::size_t>(c.country) == country ? c.weight : 0;
    }
    std::int64_t x = r.between(0, total - 1);
    for (std::size_t i = 0; i < std::size(cities); ++i) {
        if (static_cast<std::size_t>(cities[i].country) != country) {
            continue;
        }
        x -= cities[i].weight;
        if (x < 0) {
            return i;
        }
    }
    return 0;
}

std::size_t any_city(rng64& r) {
    return weighted_index(r, cities, [](const city_info& c) { return c.weight * countries[c.country].weight; });
}

std::string month_year(int months) { return std::to_string(months % 12 + 1) + "/" + std::to_string(months / 12); }

std::size_t city_index(std::string_view name) {
    for (std::size_t i = 0; i < std::size(cities); ++i) {
        if (name == cities[i].city) {
            return i;
        }
    }
    return 0;
}

std::string location_text(const city_info& c) {
    return std::string(c.city) + ", " + c.region + ", " + countries[c.country].name;
}

const function_info& function_by_name(std::string_view name) {
    for (const auto& f : functions) {
        if (name == f.name) {
            return f;
        }
    }
    return functions[0];
}

// FNV-1a exactly as hash64 (util.hpp) computes it, split so that a fixed prefix is hashed once
// and many suffixes continue from it without building strings.
std::uint64_t fnv_start(std::uint64_t seed) { return 0xcbf29ce484222325ULL ^ splitmix64(seed); }
std::uint64_t fnv_add(std::uint64_t h, std::string_view text) {
    for (char c : text) {
        h ^= static_cast<unsigned char>(c);
        h *= 0x100000001b3ULL;
    }
    return h;
}

// Salt of member distances. Equal to network.cpp's, so that get, search and check_invitation
// agree on the distance of a person from an account.
constexpr std::uint64_t distance_salt = 0x64697374'616e0002ULL;
constexpr std::uint64_t knows_salt = 0x6b6e6f77'73000001ULL;
constexpr std::uint64_t follows_salt = 0x666f6c6c'6f770001ULL;

} // namespace

// ---------------------------------------------------------------------------------------------
// Public text and URL helpers

std::vector<std::string> fold_words(std::string_view text) {
    std::vector<std::string> out;
    std::string folded = fold_lower(text);
    std::size_t i = 0;
    while ((i = folded.find_first_not_of(" \t\r\n", i)) != std::string::npos) {
        auto end = folded.find_first_of(" \t\r\n", i);
        out.push_back(folded.substr(i, end == std::string::npos ? std::string::npos : end - i));
        i = end;
    }
    return out;
}

std::string fold_lower(std::string_view text) {
    std::string out;
    out.reserve(text.size());
    for (std::size_t i = 0; i < text.size(); ++i) {
        auto b0 = static_cast<unsigned char>(text[i]);
        if (b0 >= 0xC2 && b0 <= 0xDF && i + 1 < text.size() &&
            (static_cast<unsigned char>(text[i + 1]) & 0xC0) == 0x80) {
            char32_t cp = ((b0 & 0x1Fu) << 6) | (static_cast<unsigned char>(text[i + 1]) & 0x3Fu);
            if (const char* ascii = ascii_of(cp)) {
                out += ascii;
                ++i;
                continue;
            }
        }
        out.push_back(ascii_lower(text[i]));
    }
    return out;
}

std::optional<std::string> public_id_from_profile_url(std::string_view url) { return id_from_network_url(url, "in"); }
std::optional<std::string> slug_from_company_url(std::string_view url) { return id_from_network_url(url, "company"); }
std::optional<std::string> slug_from_school_url(std::string_view url) { return id_from_network_url(url, "school"); }

std::optional<std::uint64_t> member_number_from_urn(std::string_view urn) {
    constexpr std::string_view prefix = "urn:li:member:";
    if (!urn.starts_with(prefix) || urn.size() == prefix.size() || urn.size() > prefix.size() + 19) {
        return std::nullopt;
    }
    std::uint64_t out = 0;
    auto digits = urn.substr(prefix.size());
    auto [ptr, ec] = std::from_chars(digits.data(), digits.data() + digits.size(), out);
    if (ec != std::errc{} || ptr != digits.data() + digits.size()) {
        return std::nullopt;
    }
    return out;
}

const std::vector<std::string>& company_size_ranges() {
    static const std::vector<std::string> ranges = [] {
        std::vector<std::string> out;
        for (const auto& b : size_buckets) {
            out.emplace_back(b.label);
        }
        return out;
    }();
    return ranges;
}

location_term make_location_term(std::string_view value) {
    location_term t;
    t.folded = fold_lower(trim(value));
    if (t.folded == "uk") {
        t.folded = "gb";
    }
    if (t.folded.size() == 2) {
        for (const auto& c : countries) {
            if (ascii_lower(c.code) == t.folded) {
                t.country_code = true;
            }
        }
    }
    return t;
}

// ---------------------------------------------------------------------------------------------
// Generation

world::world(std::uint64_t seed, int people, int companies) : seed_(seed) {
    build_schools();
    build_companies(std::max(1, companies));
    build_people(std::max(0, people));
}

void world::build_schools() {
    for (const auto& c : cities) {
        const country_info& country = countries[c.country];
        for (const char* pattern : {country.school_a, country.school_b}) {
            school s;
            s.name = replace_braces(pattern, c.city);
            s.slug = slugify(s.name);
            school_by_slug_[s.slug] = schools_.size();
            schools_.push_back(std::move(s));
        }
    }
}

namespace {

std::string company_description(const company& c, const industry_info& ind) {
    std::string text = c.name + " " + ind.activity + ". Founded in " + std::to_string(c.founded_year) +
                       " and headquartered in " + c.city + ", " + c.offices[0].country_name + ", the team of " +
                       c.size_range + " people works with " + ind.audience;
    if (c.offices.size() > 1) {
        std::vector<std::string> others;
        for (std::size_t i = 1; i < c.offices.size(); ++i) {
            others.push_back(c.offices[i].city);
        }
        text += ", with offices in " + join(others, ", ");
    }
    return text + ". Specialties: " + join(c.specialties, ", ") + ".";
}

std::string company_tagline(rng64& r, const company& c, const industry_info& ind) {
    switch (r.between(0, 3)) {
    case 0: return c.specialties[0] + " and " + c.specialties[1] + " for " + ind.audience;
    case 1: return "Trusted by " + std::string(ind.audience) + " since " + std::to_string(c.founded_year);
    case 2: return "The " + ascii_lower(ind.name) + " partner for " + ind.audience;
    default: return ""; // no tagline: the record shows null
    }
}

company_office make_office(rng64& r, std::size_t city) {
    const city_info& ci = cities[city];
    const country_info& co = countries[ci.country];
    company_office o;
    o.city = ci.city;
    o.region = ci.region;
    o.country = co.code;
    o.country_name = co.name;
    std::string number = std::to_string(r.between(1, 220));
    std::string street = pick(r, co.streets);
    o.line1 = co.number_first ? number + " " + street : street + " " + number;
    if (r.chance(0.2)) {
        o.line2 = (co.number_first ? "Suite " : "Floor ") + std::to_string(r.between(2, 30));
    }
    o.postal_code = fill_pattern(r, co.postal);
    return o;
}

void place_offices(company& c, rng64& r, std::size_t bucket) {
    std::size_t hq = any_city(r);
    c.offices.push_back(make_office(r, hq));
    static constexpr std::array<std::pair<int, int>, 8> extra = {
        {{0, 0}, {0, 0}, {0, 1}, {0, 1}, {1, 2}, {1, 2}, {2, 4}, {2, 4}}};
    auto wanted = r.between(extra[bucket].first, extra[bucket].second);
    std::vector<std::size_t> used = {hq};
    for (std::int64_t k = 0; k < wanted * 3 && static_cast<std::int64_t>(used.size()) <= wanted; ++k) {
        auto home = static_cast<std::size_t>(cities[hq].country);
        std::size_t city = r.chance(0.6) ? city_of_country(r, home) : any_city(r);
        if (std::find(used.begin(), used.end(), city) == used.end()) {
            used.push_back(city);
            c.offices.push_back(make_office(r, city));
        }
    }
    c.city = c.offices[0].city;
    c.region = c.offices[0].region;
    c.country = c.offices[0].country;
    c.default_locale = countries[cities[hq].country].language;
}

int employee_count_in(rng64& r, const size_bucket& b) {
    if (b.end > 0) {
        return static_cast<int>(r.between(b.start, b.end));
    }
    // Open-ended bucket: mostly tens of thousands, a few giants.
    double u = r.unit();
    if (u < 0.6) return static_cast<int>(r.between(10'001, 30'000));
    if (u < 0.9) return static_cast<int>(r.between(30'001, 100'000));
    return static_cast<int>(r.between(100'001, 300'000));
}

void fill_company_facts(company& c, rng64& r, const industry_info& ind, std::size_t bucket) {
    static constexpr std::array<int, 8> founded_min = {2015, 2008, 2000, 1990, 1980, 1960, 1940, 1900};
    static constexpr std::array<int, 8> founded_max = {2024, 2023, 2022, 2020, 2018, 2015, 2010, 2005};
    const size_bucket& b = size_buckets[bucket];
    c.industry = ind.name;
    c.sector = ind.sector;
    c.size_range = b.label;
    c.size_start = b.start;
    c.size_end = b.end;
    c.employee_count = employee_count_in(r, b);
    c.founded_year = static_cast<int>(r.between(founded_min[bucket], founded_max[bucket]));
    bool nonprofit = std::string_view(ind.sector) == "Public & Non-profit";
    c.funded = !nonprofit && r.chance(c.founded_year >= 2005 && bucket <= 4 ? 0.55 : 0.08);
    int per_employee = static_cast<int>(r.between(3, 25));
    c.followers = c.employee_count * per_employee + static_cast<int>(r.between(20, 2000));
    bool partnership_kind = std::string_view(ind.name) == "Legal Services" ||
                            std::string_view(ind.name) == "Business Consulting and Services";
    if (nonprofit) {
        c.organization_type = "Nonprofit";
    } else if (bucket >= 5 && r.chance(0.5)) {
        c.organization_type = "Public Company";
    } else if (partnership_kind && r.chance(0.4)) {
        c.organization_type = "Partnership";
    } else if (bucket == 0 && r.chance(0.1)) {
        c.organization_type = "Self-Employed";
    } else {
        c.organization_type = "Privately Held";
    }
    c.verified = r.chance(bucket >= 3 ? 0.7 : 0.25);
    c.page_mailbox = r.chance(0.2);
    double cta = r.unit();
    c.call_to_action = cta < 0.6 ? "VIEW_WEBSITE" : (cta < 0.75 ? "LEARN_MORE" : "");
}

void fill_company_texts(company& c, rng64& r, const industry_info& ind) {
    auto count = static_cast<std::size_t>(r.between(3, 4));
    c.specialties = pick_distinct(r, ind.specialties, count);
    c.website = "https://www." + c.domain;
    c.logo_url = "https://media.network.example/company-logo/" + c.universal_name + ".png";
    c.cover_image_url = r.chance(0.7) ? "https://media.network.example/company-cover/" + c.universal_name + ".jpg" : "";
    c.tagline = company_tagline(r, c, ind);
    c.description = company_description(c, ind);
    std::string location = c.city + ", " + c.region + ", " + c.offices[0].country_name;
    c.name_key = fold_lower(c.name);
    c.industry_key = fold_lower(c.industry);
    c.sector_key = fold_lower(c.sector);
    c.location_key = fold_lower(location);
    c.search_text = fold_lower(c.name + "\n" + c.tagline + "\n" + c.description + "\n" + c.industry + "\n" +
                               c.sector + "\n" + location + "\n" + join(c.specialties, " "));
}

} // namespace

void world::build_companies(int count) {
    companies_.reserve(static_cast<std::size_t>(count));
    std::unordered_set<std::string> domains;
    static constexpr std::array<std::uint64_t, 8> people_weight = {1, 2, 4, 6, 8, 10, 12, 14};
    std::uint64_t cumulative = 0;
    for (int i = 0; i < count; ++i) {
        rng64 r(hash64("company:" + std::to_string(i), seed_));
        company c;
        c.id = static_cast<company_id>(i);
        const industry_info& ind = industries[weighted_index(r, industries, [](const industry_info& x) {
            return x.weight;
        })];
        // Redraw the name until both its slug and its domain are free; after many tries the
        // index makes it unique, so generation always ends.
        for (int attempt = 0;; ++attempt) {
            c.name = pick(r, company_prefixes);
            c.name.append(" ").append(pick(r, ind.nouns));
            if (attempt >= 20) {
                c.name.append(1, ' ').append(std::to_string(i));
            }
            c.universal_name = slugify(c.name);
            c.domain = without_dashes(c.universal_name) + ".example";
            if (!by_slug_.contains(c.universal_name) && !domains.contains(c.domain)) {
                break;
            }
        }
        std::size_t bucket = weighted_index(r, size_buckets, [](const size_bucket& b) { return b.weight; });
        fill_company_facts(c, r, ind, bucket);
        place_offices(c, r, bucket);
        fill_company_texts(c, r, ind);
        c.urn_number = (hash64("company-urn:" + std::to_string(i), seed_) % 90'000 + 10'000) * 100'000ULL +
                       static_cast<std::uint64_t>(i);
        by_slug_[c.universal_name] = c.id;
        domains.insert(c.domain);
        cumulative += people_weight[bucket];
        company_pick_weights_.push_back(cumulative);
        companies_.push_back(std::move(c));
    }
}

namespace {

int function_weight(const function_info& f) { return f.weight; }

int pick_level(rng64& r) {
    std::int64_t total = 0;
    for (int w : seniority_weights) {
        total += w;
    }
    std::int64_t x = r.between(0, total - 1);
    for (int i = 0; i < 7; ++i) {
        x -= seniority_weights[i];
        if (x < 0) {
            return i;
        }
    }
    return 1;
}

std::string title_for(rng64& r, const function_info& fn, int level) {
    return pick_alternative(r, fn.titles[static_cast<std::size_t>(level)]);
}

std::string headline_for(rng64& r, const person& p, const std::string& company_name, const function_info& fn) {
    double u = r.unit();
    const std::string& s0 = p.skills[0];
    const std::string& s1 = p.skills[1];
    if (u < 0.65) return p.title + " at " + company_name;
    if (u < 0.80) return p.title + " @ " + company_name + " | " + s0 + " | " + s1;
    if (u < 0.90) return p.title + " | " + s0 + " & " + s1;
    return std::string(fn.mission) + " | " + p.title + " at " + company_name;
}

std::string article_for(const std::string& word) {
    char c = word.empty() ? 'x' : ascii_lower(word[0]);
    return (c == 'a' || c == 'e' || c == 'i' || c == 'o' || c == 'u') ? "an" : "a";
}

} // namespace

person world::generate_person(std::uint64_t stream, person_id id) const {
    rng64 r(stream);
    person p;
    p.id = id;
    // Employer first (bigger companies employ more people), then where the person lives.
    auto x = r.between(0, static_cast<std::int64_t>(company_pick_weights_.back()) - 1);
    auto it = std::upper_bound(company_pick_weights_.begin(), company_pick_weights_.end(),
                               static_cast<std::uint64_t>(x));
    const company& employer = companies_[static_cast<std::size_t>(it - company_pick_weights_.begin())];
    p.company = employer.id;
    double where = r.unit();
    std::size_t city_at = where < 0.65   ? city_index(employer.offices[0].city)
                          : where < 0.80 ? city_index(pick(r, std::span<const company_office>(employer.offices)).city)
                                         : any_city(r);
    const city_info& city = cities[city_at];
    const country_info& country = countries[city.country];
    p.city = city.city;
    p.region = city.region;
    p.country = country.code;
    p.country_name = country.name;
    p.location = location_text(city);
    // Names: mostly the country's own culture, a share from anywhere.
    int culture_index = r.chance(country.mixed_share) ? static_cast<int>(r.between(0, culture_count - 1))
                                                      : static_cast<int>(country.local);
    const name_lists& names = culture_names[culture_index];
    p.first_name = pick(r, names.first);
    p.last_name = pick(r, names.last);
    // Job: founders only in small companies.
    const function_info& fn = functions[weighted_index(r, functions, function_weight)];
    bool founder = employer.size_start <= 200 && r.chance(0.04);
    int level = founder ? 6 : pick_level(r);
    p.function = fn.name;
    p.seniority = seniority_names[level];
    p.title = founder ? pick_alternative(r, "Founder & CEO|Co-Founder|Founder|Co-Founder & CTO")
                      : title_for(r, fn, level);
    p.industry = employer.industry;
    fill_career(p, r, fn.name, level);
    fill_education(p, r, fn.name, level, static_cast<std::size_t>(city.country));
    fill_profile_texts(p, r, employer);
    fill_contact(p, r, employer);
    // 11 digits: a drawn head, and a tail that is a bijection of the id (6,700,417 is prime to
    // 10), so urns are unique for up to ten million people without looking sequential.
    std::uint64_t tail = (static_cast<std::uint64_t>(id) * 6'700'417ULL + splitmix64(seed_) % 10'000'000ULL) %
                         10'000'000ULL;
    p.urn_number = (hash64("member-urn:" + std::to_string(id), seed_) % 9'000 + 1'000) * 10'000'000ULL + tail;
    return p;
}

void world::fill_career(person& p, rng64& r, std::string_view function, int level) const {
    const function_info& fn = function_by_name(function);
    int now_months = world_reference_year * 12 + 5; // June of the reference year
    int years_in_role = level == 0 ? 0 : static_cast<int>(r.between(0, 7));
    int start = (world_reference_year - years_in_role) * 12 +
                static_cast<int>(r.between(0, years_in_role == 0 ? 5 : 11));
    start = std::min(start, now_months);
    p.experience.push_back(experience_item{p.company, p.title, pick(r, fn.duties), month_year(start), ""});
    static constexpr std::array<std::pair<int, int>, 7> past_range = {
        {{0, 0}, {0, 1}, {1, 2}, {1, 3}, {2, 3}, {2, 3}, {2, 3}}};
    auto past = r.between(past_range[static_cast<std::size_t>(level)].first,
                          past_range[static_cast<std::size_t>(level)].second);
    company_id previous = p.company;
    for (std::int64_t k = 0; k < past; ++k) {
        int end = start - 1 - static_cast<int>(r.between(0, 3));
        start = end - static_cast<int>(r.between(10, 48));
        auto other = static_cast<company_id>(r.between(0, static_cast<std::int64_t>(companies_.size()) - 1));
        if (other == previous || other == p.company) {
            other = static_cast<company_id>((other + 1) % companies_.size());
        }
        if (other == p.company && companies_.size() > 2) {
            other = static_cast<company_id>((other + 1) % companies_.size());
        }
        int past_level = std::max(level == 0 ? 0 : 1, level - 1 - static_cast<int>(k));
        const function_info& past_fn = r.chance(0.8) ? fn : functions[weighted_index(r, functions, function_weight)];
        p.experience.push_back(experience_item{other, title_for(r, past_fn, past_level), pick(r, past_fn.duties),
                                               month_year(start), month_year(end)});
        if (std::find(p.past_companies.begin(), p.past_companies.end(), other) == p.past_companies.end() &&
            other != p.company) {
            p.past_companies.push_back(other);
        }
        previous = other;
    }
}

void world::fill_education(person& p, rng64& r, std::string_view function, int level, std::size_t country) const {
    const function_info& fn = function_by_name(function);
    auto school_near = [&]() -> const school& {
        std::size_t city = r.chance(0.8) ? city_of_country(r, country) : any_city(r);
        return schools_[city * 2 + static_cast<std::size_t>(r.between(0, 1))];
    };
    // Draws in statement order: the order in which function arguments are evaluated is
    // unspecified, and a world must not depend on the compiler.
    auto add = [&](std::span<const char* const> degrees, int from, int to) {
        const school& s = school_near();
        std::string degree = pick(r, degrees);
        std::string field_of_study = pick(r, fn.fields);
        p.education.push_back(education_item{s.name, school_url(s.slug), std::move(degree), std::move(field_of_study),
                                             std::to_string(from),
                                             to > world_reference_year ? "" : std::to_string(to)});
    };
    if (level == 0) {
        // Interns are still studying: no end date yet.
        int from = world_reference_year - static_cast<int>(r.between(1, 3));
        add(bachelor_degrees, from, world_reference_year + 1);
        return;
    }
    const std::string& first_start = p.experience.back().start_date;
    int first_year = std::stoi(first_start.substr(first_start.find('/') + 1));
    bool master = r.chance(level >= 4 ? 0.5 : 0.3);
    int bachelor_end = first_year - static_cast<int>(r.between(0, 1)) - (master ? 2 : 0);
    int bachelor_start = bachelor_end - static_cast<int>(r.between(3, 4));
    if (master) {
        add(master_degrees, bachelor_end, bachelor_end + 2);
    }
    add(bachelor_degrees, bachelor_start, bachelor_end);
}

void world::fill_profile_texts(person& p, rng64& r, const company& employer) const {
    const function_info& fn = function_by_name(p.function);
    p.skills = pick_distinct(r, fn.skills, static_cast<std::size_t>(r.between(3, 7)));
    for (auto& s : pick_distinct(r, std::to_array(general_skills), static_cast<std::size_t>(r.between(0, 2)))) {
        p.skills.push_back(std::move(s));
    }
    p.headline = headline_for(r, p, employer.name, fn);
    const std::string& first_start = p.experience.back().start_date;
    int years = std::max(1, world_reference_year - std::stoi(first_start.substr(first_start.find('/') + 1)));
    double u = r.unit();
    if (u < 0.10) {
        p.summary = "";
    } else if (u < 0.45 || p.past_companies.empty()) {
        p.summary = p.title + " with " + std::to_string(years) + "+ years of experience in " +
                    ascii_lower(employer.industry) + ". At " + employer.name + " I focus on " + p.skills[0] + ", " +
                    p.skills[1] + " and " + p.skills[2] + ". Based in " + p.city + ".";
    } else if (u < 0.75) {
        std::vector<std::string> past;
        for (company_id id : p.past_companies) {
            past.push_back(companies_[id].name);
        }
        p.summary = std::string(fn.mission) + ". Currently " + p.title + " at " + employer.name +
                    "; previously at " + join(past, " and ") + ". Always happy to talk about " + p.skills[0] +
                    " and " + p.skills[1] + ".";
    } else {
        p.summary = "I work on " + p.skills[0] + " and " + p.skills[1] + " at " + employer.name + ", where I am " +
                    article_for(p.title) + " " + p.title + ". " + std::to_string(years) + " years in " +
                    ascii_lower(p.function) + " across " + std::to_string(p.past_companies.size() + 1) +
                    " companies.";
    }
}

void world::fill_contact(person& p, rng64& r, const company& employer) const {
    std::string first = without_dashes(slugify(p.first_name));
    std::string last = without_dashes(slugify(p.last_name));
    // Contact details are public for a minority only, as on the real network.
    if (r.chance(0.35)) {
        p.email = first + "." + last + "@" + (r.chance(0.7) ? employer.domain : std::string("mail.example"));
    }
    if (r.chance(0.20)) {
        for (const auto& c : countries) {
            if (p.country == c.code) {
                p.phone = fill_pattern(r, c.phone);
            }
        }
    }
    if (r.chance(0.12)) {
        p.website = "https://" + first + last + ".example";
    }
}

void world::finish_person(person& p, std::uint64_t salt) const {
    std::string base = slugify(p.first_name) + "-" + slugify(p.last_name) + "-";
    for (std::uint64_t k = 0;; ++k) {
        std::string candidate = base + hex(hash64(base + std::to_string(k), seed_ ^ salt), 6);
        if (!by_public_id_.contains(candidate)) {
            p.public_id = std::move(candidate);
            break;
        }
    }
    p.profile_picture_url = "https://media.network.example/profile-displayphoto/" + p.public_id + ".jpg";
    const company& employer = companies_[p.company];
    p.search_text = fold_lower(p.first_name + " " + p.last_name + "\n" + p.headline + "\n" + p.title + "\n" +
                               employer.name + "\n" + p.location + "\n" + p.industry + "\n" + join(p.skills, ", "));
}

void world::build_people(int count) {
    people_.reserve(static_cast<std::size_t>(count));
    by_public_id_.reserve(static_cast<std::size_t>(count));
    for (int i = 0; i < count; ++i) {
        auto id = static_cast<person_id>(i);
        person p = generate_person(hash64("person:" + std::to_string(i), seed_), id);
        finish_person(p, static_cast<std::uint64_t>(i));
        by_public_id_[p.public_id] = id;
        by_urn_[p.urn_number] = id;
        index_person(p);
        people_.push_back(std::move(p));
    }
}

person world::make_account_owner(std::string_view seed_text) const {
    std::uint64_t h = hash64(seed_text, seed_ ^ 0x6f776e6572ULL);
    person p = generate_person(h, owner_person_id);
    // Owner urns have 12 digits; people of the world have at most 11, so they never meet.
    p.urn_number = 100'000'000'000ULL + h % 900'000'000'000ULL;
    finish_person(p, h);
    return p;
}

// ---------------------------------------------------------------------------------------------
// Lookups

const person* world::find_by_public_id(std::string_view public_id) const {
    auto it = by_public_id_.find(ascii_lower(public_id));
    return it == by_public_id_.end() ? nullptr : &people_[it->second];
}
const person* world::find_by_profile_url(std::string_view url) const {
    auto id = public_id_from_profile_url(url);
    return id ? find_by_public_id(*id) : nullptr;
}
const person* world::find_by_member_urn(std::string_view urn) const {
    auto number = member_number_from_urn(urn);
    if (!number) {
        return nullptr;
    }
    auto it = by_urn_.find(*number);
    return it == by_urn_.end() ? nullptr : &people_[it->second];
}
const company* world::find_company_by_slug(std::string_view slug) const {
    auto it = by_slug_.find(ascii_lower(slug));
    return it == by_slug_.end() ? nullptr : &companies_[it->second];
}
const company* world::find_company_by_url(std::string_view url) const {
    auto slug = slug_from_company_url(url);
    return slug ? find_company_by_slug(*slug) : nullptr;
}

std::string world::profile_url(const person& p) { return std::string(network_base_url) + "/in/" + p.public_id; }
std::string world::company_url(const company& c) {
    return std::string(network_base_url) + "/company/" + c.universal_name;
}
std::string world::school_url(std::string_view slug) {
    return std::string(network_base_url) + "/school/" + std::string(slug);
}
std::string world::member_urn(const person& p) { return "urn:li:member:" + std::to_string(p.urn_number); }
std::string world::company_urn(const company& c) { return "urn:li:company:" + std::to_string(c.urn_number); }

// ---------------------------------------------------------------------------------------------
// Social graph

std::uint64_t world::distance_prefix(const account_state& account) const {
    return fnv_add(fnv_add(fnv_start(seed_ ^ distance_salt), account.id), "|");
}

int world::distance_of(const account_state& account, std::uint64_t prefix, person_id id,
                       std::string_view public_id) const {
    auto rel = account.relations.find(id);
    if (rel != account.relations.end() && rel->second.state == relation_state::connected) {
        return 1;
    }
    // hash64(account.id + "|" + public_id, seed ^ salt), continued from the account's prefix.
    // Six in ten people outside the network are second-degree contacts.
    return unit_from_hash(splitmix64(fnv_add(prefix, public_id))) < 0.6 ? 2 : 3;
}

int world::member_distance(const account_state& account, const person& p) const {
    if (p.id == owner_person_id && p.public_id == account.self.public_id) {
        return 0;
    }
    return distance_of(account, distance_prefix(account), p.id, p.public_id);
}

bool world::knows(std::uint64_t urn_a, company_id company_a, std::uint64_t urn_b, company_id company_b) const {
    if (urn_a == urn_b) {
        return false;
    }
    std::uint64_t lo = std::min(urn_a, urn_b);
    std::uint64_t hi = std::max(urn_a, urn_b);
    double u = unit_from_hash(splitmix64(splitmix64(lo ^ seed_ ^ knows_salt) + hi));
    return u < (company_a == company_b ? 0.25 : 0.008);
}

bool world::knows(const person& a, const person& b) const {
    return knows(a.urn_number, a.company, b.urn_number, b.company);
}

bool world::follows(std::uint64_t follower_urn, company_id follower_company, const person& followed) const {
    if (follower_urn == followed.urn_number) {
        return false;
    }
    double u = unit_from_hash(splitmix64(splitmix64(follower_urn ^ seed_ ^ follows_salt) + followed.urn_number));
    return u < 0.02 || knows(follower_urn, follower_company, followed.urn_number, followed.company);
}

bool world::follows(const person& follower, const person& followed) const {
    return follows(follower.urn_number, follower.company, followed);
}

// ---------------------------------------------------------------------------------------------
// Search index

std::uint32_t world::dictionary::intern(std::string_view value) {
    auto it = ids.find(value);
    if (it != ids.end()) {
        return it->second;
    }
    auto id = static_cast<std::uint32_t>(values.size());
    values.emplace_back(value);
    ids.emplace(values.back(), id);
    return id;
}

namespace {

bool is_space(char c) { return c == ' ' || c == '\n' || c == '\t' || c == '\r'; }

} // namespace

void world::index_person(const person& p) {
    person_row row;
    row.urn_number = p.urn_number;
    row.company = p.company;
    row.public_id_offset = static_cast<std::uint32_t>(public_ids_.size());
    row.public_id_size = static_cast<std::uint16_t>(p.public_id.size());
    public_ids_ += p.public_id;
    row.first_name = first_names_.intern(fold_lower(p.first_name));
    row.last_name = last_names_.intern(fold_lower(p.last_name));
    row.title = titles_.intern(fold_lower(p.title));
    row.industry = industries_.intern(fold_lower(p.industry));
    row.location = locations_.intern(fold_lower(p.location));
    if (row.location == location_countries_.size()) {
        location_countries_.push_back(ascii_lower(p.country));
    }
    row.ids_offset = static_cast<std::uint32_t>(row_ids_.size());
    for (company_id c : p.past_companies) {
        row_ids_.push_back(c);
        ++row.past_count;
    }
    for (const auto& e : p.education) {
        auto slug = slug_from_school_url(e.school_url);
        auto it = slug ? school_by_slug_.find(*slug) : school_by_slug_.end();
        if (it != school_by_slug_.end()) {
            row_ids_.push_back(static_cast<std::uint32_t>(it->second));
            ++row.school_count;
        }
    }
    // Posting lists of the whitespace-separated words of search_text.
    std::string_view text = p.search_text;
    while (!text.empty()) {
        while (!text.empty() && is_space(text.front())) {
            text.remove_prefix(1);
        }
        std::size_t n = 0;
        while (n < text.size() && !is_space(text[n])) {
            ++n;
        }
        if (n > 0) {
            std::uint32_t word = words_.intern(text.substr(0, n));
            if (word == word_people_.size()) {
                word_people_.emplace_back();
            }
            if (word_people_[word].empty() || word_people_[word].back() != p.id) {
                word_people_[word].push_back(p.id);
            }
        }
        text.remove_prefix(n);
    }
    rows_.push_back(row);
}

// A bit per person: whether a word of their search_text contains `keyword`. A keyword without
// whitespace can only occur inside one word, so this equals a substring test on search_text.
std::vector<std::uint64_t> world::people_with_word_containing(const std::string& keyword) const {
    std::vector<std::uint64_t> bits((people_.size() + 63) / 64, 0);
    auto set = [&](person_id id) { bits[id / 64] |= std::uint64_t{1} << (id % 64); };
    if (std::any_of(keyword.begin(), keyword.end(), is_space)) {
        for (const person& p : people_) {
            if (p.search_text.find(keyword) != std::string::npos) {
                set(p.id);
            }
        }
        return bits;
    }
    for (std::size_t w = 0; w < words_.values.size(); ++w) {
        if (words_.values[w].find(keyword) != std::string::npos) {
            for (person_id id : word_people_[w]) {
                set(id);
            }
        }
    }
    return bits;
}

// ---------------------------------------------------------------------------------------------
// Search

namespace {

template <typename T>
bool in(const std::vector<T>& items, const T& value) {
    return std::find(items.begin(), items.end(), value) != items.end();
}

bool any_contains(std::string_view text, const std::vector<std::string>& needles) {
    return std::any_of(needles.begin(), needles.end(),
                       [&](const std::string& n) { return text.find(n) != std::string_view::npos; });
}

bool location_matches(const std::vector<location_term>& terms, std::string_view country_code,
                      std::string_view location_key) {
    return std::any_of(terms.begin(), terms.end(), [&](const location_term& t) {
        return t.country_code ? country_code == t.folded : location_key.find(t.folded) != std::string_view::npos;
    });
}

// Which values of a dictionary a text filter accepts (1) or not (0); empty when no filter.
std::vector<char> accepted(const std::deque<std::string>& values, const std::vector<std::string>& needles) {
    std::vector<char> out;
    if (needles.empty()) {
        return out;
    }
    out.reserve(values.size());
    for (const auto& v : values) {
        out.push_back(any_contains(v, needles) ? 1 : 0);
    }
    return out;
}

std::vector<std::string> one_or_none(const std::string& value) {
    return value.empty() ? std::vector<std::string>{} : std::vector<std::string>{value};
}

} // namespace

struct world::people_search {
    const account_state* account = nullptr;
    std::uint64_t distance_prefix = 0;
    std::vector<char> first_names, last_names, titles, locations, industries, companies; // accepted values
    std::vector<std::uint64_t> keyword_people;  // AND of every keyword; empty when no keyword
    std::vector<std::uint32_t> schools;         // indices of q.schools that exist
};

bool world::row_matches(const person_row& row, const people_query& q, const people_search& s) const {
    auto rejected = [](const std::vector<char>& accepted_values, std::uint32_t id) {
        return !accepted_values.empty() && accepted_values[id] == 0;
    };
    auto id = static_cast<person_id>(&row - rows_.data());
    if (rejected(s.first_names, row.first_name) || rejected(s.last_names, row.last_name) ||
        rejected(s.titles, row.title) || rejected(s.locations, row.location) ||
        rejected(s.industries, row.industry) || rejected(s.companies, row.company) ||
        (!s.keyword_people.empty() && (s.keyword_people[id / 64] >> (id % 64) & 1) == 0) ||
        (q.current_companies && !in(*q.current_companies, row.company))) {
        return false;
    }
    const std::uint32_t* ids = row_ids_.data() + row.ids_offset;
    if (q.past_companies && std::none_of(ids, ids + row.past_count, [&](std::uint32_t c) {
            return in(*q.past_companies, static_cast<company_id>(c));
        })) {
        return false;
    }
    if (q.schools && std::none_of(ids + row.past_count, ids + row.past_count + row.school_count,
                                  [&](std::uint32_t school) { return in(s.schools, school); })) {
        return false;
    }
    if (!q.distances.empty() && !in(q.distances, distance_of(*s.account, s.distance_prefix, id, public_id_of(row)))) {
        return false;
    }
    if (q.connection_of != nullptr) {
        // The account owner's connections are the account's relations, not the world's graph.
        const person& other = *q.connection_of;
        bool connected = &other == &s.account->self
                             ? distance_of(*s.account, s.distance_prefix, id, public_id_of(row)) == 1
                             : knows(row.urn_number, row.company, other.urn_number, other.company);
        if (!connected) {
            return false;
        }
    }
    return q.follower_of == nullptr || follows(row.urn_number, row.company, *q.follower_of);
}

std::vector<person_id> world::search_people(const people_query& q, const account_state& account) const {
    people_search s;
    s.account = &account;
    s.distance_prefix = distance_prefix(account);
    s.first_names = accepted(first_names_.values, one_or_none(q.first_name));
    s.last_names = accepted(last_names_.values, one_or_none(q.last_name));
    s.titles = accepted(titles_.values, one_or_none(q.title));
    s.industries = accepted(industries_.values, q.industries);
    if (!q.company_name.empty()) {
        for (const company& c : companies_) {
            s.companies.push_back(c.name_key.find(q.company_name) != std::string::npos ? 1 : 0);
        }
    }
    if (!q.locations.empty()) {
        for (std::size_t i = 0; i < locations_.values.size(); ++i) {
            s.locations.push_back(location_matches(q.locations, location_countries_[i], locations_.values[i]) ? 1 : 0);
        }
    }
    for (const auto& k : q.keywords) {
        auto bits = people_with_word_containing(k);
        if (s.keyword_people.empty()) {
            s.keyword_people = std::move(bits);
        } else {
            for (std::size_t i = 0; i < bits.size(); ++i) {
                s.keyword_people[i] &= bits[i];
            }
        }
    }
    if (q.schools) {
        for (const auto& slug : *q.schools) {
            auto it = school_by_slug_.find(ascii_lower(slug));
            if (it != school_by_slug_.end()) {
                s.schools.push_back(static_cast<std::uint32_t>(it->second));
            }
        }
    }
    std::vector<person_id> out;
    for (const person_row& row : rows_) {
        if (row_matches(row, q, s)) {
            out.push_back(static_cast<person_id>(&row - rows_.data()));
        }
    }
    return out;
}

std::vector<company_id> world::search_companies(const company_query& q) const {
    std::vector<company_id> out;
    for (const company& c : companies_) {
        std::string code = ascii_lower(c.country);
        if ((!q.industries.empty() && !any_contains(c.industry_key, q.industries)) ||
            (!q.sectors.empty() && !any_contains(c.sector_key, q.sectors)) ||
            (!q.sizes.empty() && !in(q.sizes, c.size_range)) ||
            (!q.locations.empty() && !location_matches(q.locations, code, c.location_key)) ||
            !std::all_of(q.keywords.begin(), q.keywords.end(),
                         [&](const auto& k) { return c.search_text.find(k) != std::string::npos; })) {
            continue;
        }
        out.push_back(c.id);
    }
    return out;
}

// ---------------------------------------------------------------------------------------------
// Records

json world::profile_record(const person& p) const {
    json experience = json::array();
    for (const auto& e : p.experience) {
        const company& c = companies_[e.company];
        experience.push_back(json{{"company", c.name},
                                  {"company_url", company_url(c)},
                                  {"title", e.title},
                                  {"description", e.description},
                                  {"start_date", e.start_date},
                                  {"end_date", e.end_date}});
    }
    json education = json::array();
    for (const auto& e : p.education) {
        education.push_back(json{{"school", e.school},
                                 {"school_url", e.school_url},
                                 {"degree", e.degree},
                                 {"field_of_study", e.field_of_study},
                                 {"start_date", e.start_year},
                                 {"end_date", e.end_year}});
    }
    return json{{"public_id", p.public_id},
                {"first_name", p.first_name},
                {"last_name", p.last_name},
                {"headline", p.headline},
                {"location", p.location},
                {"summary", p.summary},
                {"industry", p.industry},
                {"experience", std::move(experience)},
                {"education", std::move(education)},
                {"skills", p.skills},
                {"profile_picture_url", p.profile_picture_url},
                {"network_url", profile_url(p)},
                {"entity_urn", member_urn(p)}};
}

namespace {

json address_json(const company_office& o) {
    return json{{"country", o.country},
                {"geographicArea", o.region},
                {"city", o.city},
                {"line1", o.line1},
                {"line2", o.line2.empty() ? json(nullptr) : json(o.line2)},
                {"postalCode", o.postal_code}};
}

json call_to_action_json(const company& c) {
    if (c.call_to_action.empty()) {
        return nullptr;
    }
    bool view = c.call_to_action == "VIEW_WEBSITE";
    return json{{"displayText", view ? "Visit website" : "Learn more"},
                {"visible", true},
                {"type", c.call_to_action},
                {"url", c.website}};
}

} // namespace

json world::company_record(const company& c) const {
    json locations = json::array();
    for (std::size_t i = 0; i < c.offices.size(); ++i) {
        locations.push_back(json{{"streetAddressOptOut", false},
                                 {"description", i == 0 ? "Headquarters" : c.offices[i].city + " office"},
                                 {"address", address_json(c.offices[i])},
                                 {"headquarter", i == 0}});
    }
    json range = {{"start", c.size_start}, {"end", c.size_end > 0 ? json(c.size_end) : json(nullptr)}};
    return json{{"name", c.name},
                {"universalName", c.universal_name},
                {"description", c.description},
                {"tagline", c.tagline.empty() ? json(nullptr) : json(c.tagline)},
                {"websiteUrl", c.website},
                {"industry", c.industry},
                {"employeeCount", c.employee_count},
                {"employeeCountRange", std::move(range)},
                {"headquarter", address_json(c.offices[0])},
                {"logoUrl", c.logo_url},
                {"coverImageUrl", c.cover_image_url.empty() ? json(nullptr) : json(c.cover_image_url)},
                {"callToAction", call_to_action_json(c)},
                {"locations", std::move(locations)},
                {"organizationType", c.organization_type},
                {"defaultLocale", c.default_locale},
                {"followersCount", c.followers},
                {"pageMailbox", c.page_mailbox},
                {"verified", c.verified},
                {"company_url", company_url(c)},
                {"entity_urn", company_urn(c)}};
}

} // namespace orch::sandbox
