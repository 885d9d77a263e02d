// The simulated world: a seeded, deterministic population of people and companies.
// Generated once at start; read-only afterwards.
#pragma once

#include "sandbox/state.hpp"

#include <optional>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

namespace orch::sandbox {

// Base of every URL in the world. Profile URLs are "<base>/in/<public_id>", company pages
// "<base>/company/<universal_name>", schools "<base>/school/<slug>".
inline constexpr std::string_view network_base_url = "https://www.network.example";

// Extracts the public id from a profile URL in any of the shapes people paste: http or https,
// with or without "www.", a trailing slash, a query or a fragment, percent-encoded characters.
// nullopt when the text is not a profile URL of the network (the API answers INVALID_PARAMS).
std::optional<std::string> public_id_from_profile_url(std::string_view url);
// Same for company pages ("/company/<slug>").
std::optional<std::string> slug_from_company_url(std::string_view url);

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
    const company* find_company_by_url(std::string_view url) const;
    const company* find_company_by_slug(std::string_view slug) const;

    static std::string profile_url(const person& p);
    static std::string company_url(const company& c);
    static std::string member_urn(const person& p);    // "urn:li:member:<digits>"-style opaque urn
    static std::string company_urn(const company& c);

    // The profile of an account's owner, derived from a seed string (login token or e-mail);
    // not part of the searchable population.
    person make_account_owner(std::string_view seed_text) const;

private:
    std::uint64_t seed_;
    std::vector<person> people_;
    std::vector<company> companies_;
    std::unordered_map<std::string, person_id> by_public_id_;
    std::unordered_map<std::string, company_id> by_slug_;
};

} // namespace orch::sandbox
