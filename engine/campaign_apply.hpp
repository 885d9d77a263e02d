// orch::engine campaign_apply: loading, checking and applying a campaign definition, shared by
// the CLI (`campaign validate|apply FILE`) and the admin endpoint (POST /v1/campaigns), so both
// enforce the same rules: validation first (nothing is stored on any error), then the audience
// (the file's rows, or a search_people through the first sender), then one transaction
// (store::apply_campaign) that also books the search's charge in the campaign's ledger.
#pragma once

#include "campaigns/campaigns.hpp"
#include "engine/limits/limits.hpp"
#include "engine/outreach/client.hpp"
#include "engine/outreach/types.hpp"
#include "engine/store.hpp"

#include <boost/asio/awaitable.hpp>

#include <chrono>
#include <functional>
#include <optional>
#include <string>
#include <string_view>
#include <type_traits>
#include <vector>

namespace orch::engine {

// Reads an audience file named in a definition (path as written); no text, and why, when it cannot.
using audience_reader = std::function<campaigns::file_read(const std::string& path)>;

// Validates a definition (YAML or JSON text). Accounts are checked against `db` when it is not
// null; audience files are read through `read_file` (nullptr: none can be read, which the loader
// reports at the `file:` key). Pure apart from the account lookups.
campaigns::load_result check_definition(std::string_view text, const std::string& file_name, store* db,
                                        audience_reader read_file);

// The sender account ids of a validated campaign (labels resolved), in the file's order.
// Precondition: check_definition succeeded against the same database (every account is known).
std::vector<std::string> sender_ids(store& db, const campaigns::campaign& c);

// The search_people parameters of a search audience.
outreach::search_people_params audience_search(const campaigns::campaign& c);
// The whole audience of a search: search_people pages until `total_results` people or the end,
// or (with `room`) until the pages' credits would pass what the campaign's budget has left: each
// page asks for no more people than the room's credits cover, at the cost model's price or at what
// the server billed so far per person when that is more (a server that caps its pages counts a
// full page), and the search stops, saying so, once the room covers nobody more (a first page it
// cannot cover is not sent). A first page the server bills above the cost model can pass the room
// by the difference.
//
// (a server may cap the people per call; each further page starts at the page the last named,
// else the page after those read, at 50 people a page as in V1). `before_page` (may be empty) is
// asked before each call and returns a reason when the call must not go out (the search bucket);
// a reason that passes soon is waited out, at most `page_wait_max` for each page (a search of many
// pages takes the key's rate's time, not 30 s in all). A page the API answers 429 is asked again
// within the same wait: through the gate's cooldown when the gate records it, else after the
// Retry-After (a second without one).
// A failure after some pages keeps what was found (the API billed those pages) and says why.
struct audience_found {
    std::vector<outreach::person_hit> people;
    std::int64_t asked = 0;            // total_results of the campaign's search
    std::optional<std::int64_t> available;  // total_available_results, when the server says
    std::int64_t credits = 0;          // what the pages cost (metadata, else the cost model)
    int calls = 0;
    std::string stopped;               // why it stopped short of `asked` ("" when it did not)
    // Whether the budget or a cap held it short (it asked for fewer people from the start, which
    // is no stop), not a page that could not be sent or failed.
    bool held = false;
};
// The credits an audience search may spend: what the campaign's budget, today's day cap and the
// per-account cap of the sender it goes through have left (search_room), and which of them is the
// tightest, in words for the operator.
struct search_budget {
    std::int64_t credits = 0;
    std::string what;  // "the budget of 5 credits (budget_credits)", ...
};
// A page the gate does not let through now: why, and whether it passes soon (the key's rate, a
// cooldown, the pacing: the page waits for it, at most search_wait_max) or not (a quota).
struct page_refusal {
    std::string why;
    std::chrono::milliseconds retry_after{0};
    bool passing = false;
    bool unavailable = false;  // the rate-limit store did not answer (no limit said no)
    bool queued = false;       // operators' commands that asked first still wait (`why` names them)
};
inline constexpr std::chrono::seconds search_wait_max{30};
// The gate of an audience search's pages. `ask` is asked before each page and returns why the
// page must not go out now (empty: it may). `answered` (may be empty) hears each page's answer:
// nullptr for a page the API answered, its error otherwise. For the API's 429 it gives the page's
// place back and writes the cooldown where every process reads it, and returns true: the next
// `ask` then waits for the cooldown as for any passing limit (and the CLI says so). False: the
// 429 could not be recorded (no Redis, or Redis not answering), and the search waits out the
// Retry-After on its own.
// `billed` (may be empty) is told what the search may have been billed so far: before each page
// is sent, the pages answered and that page at its most; after, what the pages cost. An apply
// keeps it where the balance reads count it as in flight (store::hold_search_in_flight).
struct page_gate {
    std::function<std::optional<page_refusal>()> ask;
    std::function<bool(const outreach::error*)> answered;
    std::function<void(std::int64_t)> billed;

    page_gate() = default;
    template <typename F>
        requires(!std::is_same_v<std::remove_cvref_t<F>, page_gate> &&
                 std::is_invocable_r_v<std::optional<page_refusal>, F&>)
    page_gate(F f) : ask(std::move(f)) {}  // NOLINT(google-explicit-constructor): a gate that only asks
    explicit operator bool() const { return static_cast<bool>(ask); }
    std::optional<page_refusal> operator()() const { return ask(); }
};
boost::asio::awaitable<outreach::result<audience_found>> search_audience(outreach::client& api,
                                                                         const std::string& sender,
                                                                         const campaigns::campaign& c,
                                                                         page_gate before_page = {},
                                                                         std::chrono::milliseconds page_wait_max =
                                                                             search_wait_max,
                                                                         std::optional<search_budget> room = std::nullopt);
apply_charge audience_charge(const audience_found& found, const std::string& sender);
// What an apply says of a failed audience search: a page our own limits held back (NOT_SENT,
// LIMITS_UNAVAILABLE: nothing left this process) in its own words, else the API's error.
std::string search_failure_text(const outreach::error& e);
// What the sender's own row says about its searches (search_limits_of).
struct sender_search_limits {
    std::optional<limits::quota> quota;  // its override of the search quota; nullopt: the default
    std::string time_zone;               // its quota day (accounts.time_zone); "": not chosen yet
};
// The search bucket of `sender` (the day quota of the account's quota day, as the workers count
// it, and the key's rate and cooldowns) as a page gate:
// it takes a token per page and refuses, with the reason and when to ask again, when the bucket
// says no. Each page stands in the operators' line (limiter::line) as a CLI command's call does:
// it takes only when no command that asked before it still waits, and leaves the line once it
// has its place (the next page joins again at the end), so an apply and the commands waiting
// beside it take the key's places in the order they asked. `own`: the sender's override of the
// search quota (else the default) and its quota day's time zone; a sender without one counts in
// the campaign's, which the apply gives it. The campaign's `limits.search` caps the pages of this
// search (per_day and per_week: a campaign searches only when it is applied, and the campaign may
// not exist yet to be counted by id).
page_gate search_gate(limits::limiter& limiter, const std::string& sender, const campaigns::campaign& c,
                      const sender_search_limits& own = {});
// The sender's search quota when its overrides set one (accounts.quotas) and its quota day, for
// search_gate.
sender_search_limits search_limits_of(store& db, const std::string& sender,
                                      const std::array<limits::action_defaults, limits::action_count>& defaults);

// The leads of a file audience (rows the loader read), or of a search's hits.
std::vector<lead_input> leads_from_file(const campaigns::campaign& c);
std::vector<lead_input> leads_from_search(const std::vector<outreach::person_hit>& hits);

// What an apply of `c` will do, decided before anything is sent or billed. Throws
// campaign_conflict for a cancelled campaign (no audience search is sent for it). `unchanged`: the
// current stored version has the same definition; `audience_unchanged`: the same audience (a
// change of the budget, a message or the schedule leaves it so). A search audience found once is
// not searched again for either (a search bills credits, and finds the people the campaign has
// enrolled already), unless the operator asks for it (`search_again`: people the platform added
// since, or who were another campaign's then).
struct apply_plan {
    bool exists = false;
    bool unchanged = false;
    bool audience_unchanged = false;
    int version = 0;  // the current version when it exists
    bool active = false;  // the campaign's state is active (its workers may be spending)
    std::int64_t budget_used = 0;  // current_definition_row's, when it exists
    std::int64_t today_used = 0;
    std::string search_sender;     // the sender an audience search goes through (the first account)
    std::int64_t sender_used = 0;  // current_definition_row's, of search_sender
    std::optional<ledger::budget> file_budget{};
    std::optional<ledger::budget> live_budget{};
    // What of the search differs from the current version's ("the search", "its exclusions",
    // "the first account", "limits.search"), when the audience is not unchanged.
    std::vector<std::string> search_changes;
};
apply_plan plan_apply(store& db, const campaigns::campaign& c);
// The outcome of an apply that `plan` found unchanged and that sent no search.
apply_outcome unchanged_outcome(const apply_plan& plan);
// True when the apply of `c` sends no search and stores nothing new (see apply_plan).
bool skips_search(const campaigns::campaign& c, const apply_plan& plan, bool search_again = false);
// For a campaign that exists, when an apply of `c` would send its audience search (billed): says
// so and why, for `campaign validate` and the admin API's dry run; "" when it would send none, or
// the campaign is new (its first apply searches, as everyone expects).
// `search_again_flag` names how the caller asked for a search anyway ("--search-again",
// "search_again=true").
std::string search_again_note(const campaigns::campaign& c, const apply_plan& plan, bool search_again,
                              std::string_view search_again_flag);
// True when the apply of `c` stores a new version but sends no search: the audience is the
// current version's, whose people are enrolled already (see apply_plan).
bool reuses_audience(const campaigns::campaign& c, const apply_plan& plan, bool search_again = false);
// Why an apply of `c` that sends its audience search must not send it, "" when it may: the
// campaign's budget, or today's day cap, as they will be after the apply (the file's when it
// changes the budget its last version gave, else the live ones, which the apply keeps), or the
// per-account cap of the sender it goes through, has nothing left of what the stored campaign has
// used: this keeps a used-up budget or day from being billed again by an apply, and search_room
// bounds a search that goes to what is left. `predicted`: said before any apply
// (`campaign validate`, the admin API's dry run), of an apply sent now.
std::string search_refusal(const campaigns::campaign& c, const apply_plan& plan, bool predicted = false);
// What an apply's audience search of `c` may spend, by the same budget, caps and use as
// search_refusal (see search_audience's `room`).
search_budget search_room(const campaigns::campaign& c, const apply_plan& plan);
// What a dry run says of the audience search an apply sent now (with `search_again`) would refuse
// to send: "" when it would send it, or would not need to (a file audience, an unchanged one).
std::string predicted_search_refusal(const campaigns::campaign& c, const apply_plan& plan, bool search_again = false);
// What a dry run says when the audience search an apply sent now would be held to the budget,
// the day cap or the sender's cap (search_room) before it found everyone asked for: "" when it
// would not (or would not be sent, or would be refused).
std::string predicted_search_hold(const campaigns::campaign& c, const apply_plan& plan, bool search_again = false);

// pause / resume / cancel, shared by the CLI and the admin API so both follow the same rules:
// pause an active campaign, resume a paused one, cancel either. Asking for the state it is in
// changes nothing (changed false); any other move is a conflict, and nothing changes. One
// transaction with the campaign's row locked. `verb` is pause, resume or cancel.
struct state_change {
    bool found = false;   // false: no such campaign
    std::string from;     // the state before
    std::string to;       // the state asked for
    bool changed = false;
    bool conflict = false;
    std::string why;      // a conflict's reason beyond its state ("" for "it is <from>")
    // A resume of a campaign the ledger paused for its budget: the credits available, and that it
    // pauses again at the first call they cannot cover ("" otherwise).
    std::string warning;
};
state_change change_campaign_state(store& db, const std::string& name, const std::string& verb);
// "cannot resume campaign 'x': it is cancelled" (or the change's `why`)
std::string state_conflict_message(const std::string& verb, const std::string& name, const state_change& o);

// Stores the definition (a new version when it changed), enrolls `leads` and records `charge`
// (the audience search's cost, when there was one) in the campaign's ledger, in one transaction.
apply_outcome apply_definition(store& db, const campaigns::campaign& c, const std::string& source,
                               const std::vector<std::string>& senders, const std::vector<lead_input>& leads,
                               const std::optional<apply_charge>& charge, std::chrono::system_clock::time_point now,
                               const store::apply_progress& progress = {}, bool move_running = false);
// "moved 3 running leads to version 2; 1 kept on its version: at step 'msg' (not in the
// version)", or "" when nothing was live on an older version.
std::string moved_running_text(const apply_outcome& r);
// The apply's warnings from its outcome: one per sender whose quota day is in another time zone
// than the campaign's (apply_outcome::zone_conflicts: its day quotas start again at its own
// midnight, which may fall inside this campaign's working hours); a new budget below what is spent
// or reserved already; live leads held until a start_at still to come; live leads on senders the
// version no longer lists.
std::vector<std::string> outcome_warnings(const apply_outcome& r, const campaigns::campaign& c);
// What an apply of `c` sent now would say of what its version does to the leads already there
// (outcome_warnings) and of a live budget (live_budget_text, as `live_budget`), for `campaign
// validate` and the admin API's dry run: the apply itself, with no new leads and no search,
// in a transaction rolled back (store::apply_campaign), so the counts are the apply's own of the
// leads enrolled now (an audience's new leads are not counted). Nothing is stored or billed.
// Empty for a cancelled campaign (the caller says that refusal), and for an unchanged definition
// without `move_running` (the apply then stores nothing and says nothing).
struct apply_preview {
    std::vector<std::string> warnings;
    std::string live_budget;     // live_budget_text; "" when there is none
    bool live_budget_kept = false;
    std::string moved;           // with move_running: moved_running_text of the apply rolled back
};
apply_preview preview_apply(store& db, const campaigns::campaign& c, const std::vector<std::string>& senders,
                            bool move_running = false);
// "<the budget> is no more than what is already spent or reserved (N credits): …", said by an apply and
// by `budget set` (the CLI and the admin API) alike.
std::string budget_below_text(const std::string& the_budget, std::int64_t committed);
// What became of a live budget (`budget set`) that differs from the file's
// (apply_outcome::live_budget): kept, or replaced by the file's; "" when there was none.
// `preview`: said of an apply not made (preview_apply): "would keep", "would replace".
std::string live_budget_text(const apply_outcome& r, const campaigns::campaign& c, bool preview = false);

}  // namespace orch::engine
