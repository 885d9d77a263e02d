#include "sandbox/world.hpp"
#include "sandbox/util.hpp"

namespace orch::sandbox {

std::optional<std::string> public_id_from_profile_url(std::string_view url) {
    auto pos = url.find("/in/");
    if (pos == std::string_view::npos) return std::nullopt;
    std::string id(url.substr(pos + 4));
    while (!id.empty() && id.back() == '/') id.pop_back();
    if (id.empty()) return std::nullopt;
    return id;
}
std::optional<std::string> slug_from_company_url(std::string_view url) {
    auto pos = url.find("/company/");
    if (pos == std::string_view::npos) return std::nullopt;
    return std::string(url.substr(pos + 9));
}

world::world(std::uint64_t seed, int people, int companies) : seed_(seed) {
    for (int i = 0; i < companies; ++i) {
        company c;
        c.id = static_cast<company_id>(i);
        c.name = "Company " + std::to_string(i);
        c.universal_name = "company-" + std::to_string(i);
        by_slug_[c.universal_name] = c.id;
        companies_.push_back(c);
    }
    for (int i = 0; i < people; ++i) {
        person p;
        p.id = static_cast<person_id>(i);
        p.first_name = "First" + std::to_string(i);
        p.last_name = "Last" + std::to_string(i);
        p.public_id = "person-" + hex(hash64(std::to_string(i), seed), 6);
        p.company = static_cast<company_id>(i % companies);
        by_public_id_[p.public_id] = p.id;
        people_.push_back(p);
    }
}

const person* world::find_by_public_id(std::string_view public_id) const {
    auto it = by_public_id_.find(std::string(public_id));
    return it == by_public_id_.end() ? nullptr : &people_[it->second];
}
const person* world::find_by_profile_url(std::string_view url) const {
    auto id = public_id_from_profile_url(url);
    return id ? find_by_public_id(*id) : nullptr;
}
const company* world::find_company_by_slug(std::string_view slug) const {
    auto it = by_slug_.find(std::string(slug));
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
std::string world::member_urn(const person& p) { return "urn:li:member:" + std::to_string(p.urn_number); }
std::string world::company_urn(const company& c) { return "urn:li:company:" + std::to_string(c.urn_number); }
person world::make_account_owner(std::string_view seed_text) const {
    person p;
    p.first_name = "Owner";
    p.last_name = hex(hash64(seed_text, seed_), 6);
    p.public_id = "owner-" + p.last_name;
    return p;
}

} // namespace orch::sandbox
