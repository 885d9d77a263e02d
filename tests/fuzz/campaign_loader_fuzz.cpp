// libFuzzer target: the campaign loader (campaigns::load_campaign) on arbitrary text. The first
// byte chooses how the audience file named in a definition reads (missing, the rest of the input
// as CSV, or a small valid CSV), so the CSV reader is fuzzed too. Any crash, sanitizer report or
// exception escaping the loader is a finding; the loader's contract is diagnostics, never a throw.
#include "campaigns/campaigns.hpp"

#include <cstddef>
#include <cstdint>
#include <string>

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
    if (size == 0) {
        return 0;
    }
    const std::uint8_t mode = data[0] % 3;
    const std::string text(reinterpret_cast<const char*>(data + 1), size - 1);
    orch::campaigns::load_options o;
    o.file_name = "fuzz.yaml";
    o.account_lookup = [](const std::string& id) {
        return id.size() % 3 == 0 ? orch::campaigns::account_status::unknown : orch::campaigns::account_status::connected;
    };
    o.read_file = [mode, &text](const std::string&) -> std::optional<std::string> {
        if (mode == 0) {
            return std::nullopt;
        }
        if (mode == 1) {
            return text;
        }
        return std::string("profile_url,first_name\nhttps://www.linkedin.com/in/a,A\n");
    };
    auto r = orch::campaigns::load_campaign(text, o);
    if (r.value) {
        // A loaded campaign's canonical form reads back (what the store keeps).
        auto j = orch::campaigns::to_json(*r.value);
        (void)orch::campaigns::campaign_from_json(j);
    }
    for (const auto& d : r.errors) {
        (void)d.to_string();
    }
    return 0;
}
