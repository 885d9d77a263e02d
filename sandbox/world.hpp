// The simulated world: a seeded, deterministic population of people and companies.
// Generated once at start; read-only afterwards. The same seed gives a byte-identical world on
// every machine: every draw goes through rng64/hash64 (util.hpp), never through <random>.
#pragma once

#include "sandbox/state.hpp"

#include <array>
#include <cstdint>
#include <deque>
#include <optional>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

namespace orch::sandbox {

class rng64;

// Base of every URL in the world. Profile URLs are "<base>/in/<public_id>", company pages
// "<base>/company/<universal_name>", schools "<base>/school/<slug>".
inline constexpr std::string_view network_base_url = "https://www.network.example";

// The year the world takes as "now" for careers and education, fixed so that the world never
// depends on the clock.
inline constexpr int world_reference_year = 2025;

// Lower-cases ASCII and folds accented Latin letters to ASCII ("Zoé MÜLLER" -> "zoe muller"),
// so that searches ignore case and accents. Other bytes are kept as they are.
std::string fold_lower(std::string_view text);
// The words of `text`, fold_lower'ed (keyword filters: every word must occur).
std::vector<std::string> fold_words(std::string_view text);

// Extracts the public id from a profile URL in any of the shapes people paste: http or https
// (or no scheme), with or without "www.", any case in the host, a trailing slash, a query or a
// fragment, percent-encoded characters. The id comes back lower-cased. nullopt when the text is
// not "<network host>/in/<id>" (the API answers INVALID_PARAMS): another host, a port, an empty
// id, more path segments, another kind of page, garbage.
std::optional<std::string> public_id_from_profile_url(std::string_view url);
// Same for company pages ("/company/<slug>").
std::optional<std::string> slug_from_company_url(std::string_view url);
// Same for school pages ("/school/<slug>").
std::optional<std::string> slug_from_school_url(std::string_view url);
// The digits of a member urn "urn:li:member:<digits>"; nullopt for anything else.
std::optional<std::uint64_t> member_number_from_urn(std::string_view urn);

// Company size buckets of the network, smallest first: "1-10", "11-50", ..., "10001+".
const std::vector<std::string>& company_size_ranges();

// One value of a location filter. A two-letter value naming a country of the world ("FR",
// "uk") matches the country code; anything else matches a substring of "city, region, country".
struct location_term {
    std::string folded;          // fold_lower of the trimmed value
    bool country_code = false;   // true: `folded` is a lower-case country code ("gb" for "uk")
};
location_term make_location_term(std::string_view value);

// A people search. Every given criterion must hold (AND); values inside one list are
// alternatives (OR). Text values are fold_lower'ed and matched as substrings.
struct people_query {
    std::vector<std::string> keywords;   // each word must occur in search_text
    std::string first_name;
    std::string last_name;
    std::string title;                   // current title
    std::string company_name;            // current company name
    std::optional<std::vector<company_id>> current_companies; // company_url; empty list: nobody
    std::optional<std::vector<company_id>> past_companies;    // past_company; empty list: nobody
    std::vector<location_term> locations;
    std::optional<std::vector<std::string>> schools;           // school slugs (school_url)
    std::vector<std::string> industries;
    std::vector<int> distances;          // network: 1 (F), 2 (S), 3 (O)
    // connection_of / follower_of: a person of the world or the account owner (account.self).
    const person* connection_of = nullptr;
    const person* follower_of = nullptr;
};

// A company search, same matching rules.
struct company_query {
    std::vector<std::string> keywords;   // each word must occur in search_text
    std::vector<std::string> industries;
    std::vector<location_term> locations; // headquarters
    std::vector<std::string> sizes;      // exact buckets from company_size_ranges()
    std::vector<std::string> sectors;
};

class world {
public:
    world(std::uint64_t seed, int people, int companies);

    const std::vector<person>& people() const { return people_; }
    const std::vector<company>& companies() const { return companies_; }
    const person& at(person_id id) const { return people_.at(id); }
    const company& company_at(company_id id) const { return companies_.at(id); }

    const person* find_by_public_id(std::string_view public_id) const;
    // nullopt-like nullptr for an unknown or malformed URL.
    const person* find_by_profile_url(std::string_view url) const;
    const person* find_by_member_urn(std::string_view urn) const;
    const company* find_company_by_url(std::string_view url) const;
    const company* find_company_by_slug(std::string_view slug) const;

    static std::string profile_url(const person& p);
    static std::string company_url(const company& c);
    static std::string school_url(std::string_view slug);
    static std::string member_urn(const person& p);    // "urn:li:member:<digits>"-style opaque urn
    static std::string company_urn(const company& c);

    // The profile of an account's owner, derived from a seed string (login token or e-mail);
    // not part of the searchable population: its id is `owner_person_id`, its public id and urn
    // differ from every person of the world.
    person make_account_owner(std::string_view seed_text) const;
    static constexpr person_id owner_person_id = 0xffffffffu;

    // Network distance of a person from an account: 1 when connected (account.relations),
    // otherwise 2 or 3, fixed per (account, person).
    int member_distance(const account_state& account, const person& p) const;
    // Whether two people are connected with each other (symmetric; colleagues are much more
    // likely to be). Drives the connection_of filter.
    bool knows(const person& a, const person& b) const;
    // Whether `follower` follows `followed`: every connection, plus a few others.
    bool follows(const person& follower, const person& followed) const;

    // Matching ids in ascending order (the deterministic order of search results).
    std::vector<person_id> search_people(const people_query& q, const account_state& account) const;
    std::vector<company_id> search_companies(const company_query& q) const;

    // The profile record (get, get_me, profile enrichment): public_id, names, headline,
    // location, summary, industry, experience[], education[], skills[], profile_picture_url,
    // network_url, entity_urn.
    json profile_record(const person& p) const;
    // The detailed company record of the spec ("Company record, detailed"), plus company_url
    // and entity_urn.
    json company_record(const company& c) const;

private:
    struct school {
        std::string name;
        std::string slug;
    };
    void build_schools();
    void build_companies(int count);
    void build_people(int count);
    person generate_person(std::uint64_t stream, person_id id) const;
    void fill_career(person& p, rng64& r, std::string_view function, int level) const;
    void fill_education(person& p, rng64& r, std::string_view function, int level, std::size_t country) const;
    void fill_profile_texts(person& p, rng64& r, const company& employer) const;
    void fill_contact(person& p, rng64& r, const company& employer) const;
    // Gives `p` a public id free in the world (salted redraws), its picture and search keys.
    void finish_person(person& p, std::uint64_t salt) const;

    // The search index: every searchable text field of a person is dictionary-encoded (a text
    // filter is decided once per distinct value, then per person by one lookup), and keywords
    // go through the words of search_text with their posting lists. A search is then one
    // sequential pass over small rows instead of a substring search in every person.
    struct dictionary {
        std::deque<std::string> values;                          // fold_lower'ed, distinct; stable addresses
        std::unordered_map<std::string_view, std::uint32_t> ids; // views into `values`
        std::uint32_t intern(std::string_view value);
    };
    struct person_row {
        std::uint64_t urn_number = 0;
        std::uint32_t public_id_offset = 0;      // in public_ids_, public_id_size bytes
        std::uint32_t ids_offset = 0;            // in row_ids_: past companies, then school indices
        std::uint16_t public_id_size = 0;
        std::uint16_t past_count = 0;
        std::uint16_t school_count = 0;
        company_id company = 0;
        std::uint32_t first_name = 0, last_name = 0, title = 0, location = 0, industry = 0; // dictionary ids
    };
    struct people_search;                        // per-search precomputation (world.cpp)
    void index_person(const person& p);
    std::string_view public_id_of(const person_row& row) const {
        return std::string_view(public_ids_).substr(row.public_id_offset, row.public_id_size);
    }
    bool row_matches(const person_row& row, const people_query& q, const people_search& s) const;
    std::vector<std::uint64_t> people_with_word_containing(const std::string& keyword) const;
    std::uint64_t distance_prefix(const account_state& account) const;
    int distance_of(const account_state& account, std::uint64_t prefix, person_id id,
                    std::string_view public_id) const;
    bool knows(std::uint64_t urn_a, company_id company_a, std::uint64_t urn_b, company_id company_b) const;
    bool follows(std::uint64_t follower_urn, company_id follower_company, const person& followed) const;

    std::uint64_t seed_;
    std::vector<person> people_;
    std::vector<company> companies_;
    std::vector<school> schools_;
    std::vector<std::uint64_t> company_pick_weights_; // cumulative, for placing people
    std::unordered_map<std::string, person_id> by_public_id_;
    std::unordered_map<std::uint64_t, person_id> by_urn_;
    std::unordered_map<std::string, company_id> by_slug_;
    std::unordered_map<std::string, std::size_t> school_by_slug_;
    std::vector<person_row> rows_;
    std::vector<std::uint32_t> row_ids_;
    std::string public_ids_;
    dictionary first_names_, last_names_, titles_, locations_, industries_, words_;
    std::vector<std::string> location_countries_;      // lower-case country code per locations_ id
    std::vector<std::vector<person_id>> word_people_;  // per words_ id, ascending
};

} // namespace orch::sandbox
