// The step graph checks of the loader: duplicate and reserved ids, targets that name no step,
// steps never reached from the entry, loops, and waits or withdrawals that no invitation can
// precede. A campaign that passes is a graph without cycles whose every step is reachable, so each
// lead's sequence ends.
#include "campaigns/detail/load_context.hpp"

#include <algorithm>
#include <functional>

namespace orch::campaigns::detail {

namespace {

using json = nlohmann::json;

// One edge of the graph: from step `from` to step `to`, through the key `key` ("" = the default
// next, i.e. the step below).
struct edge {
    std::size_t to = 0;
    std::string key;
};

struct graph {
    const campaign& c;
    std::map<std::string, std::size_t> index;  // first step of each id
    std::vector<std::vector<edge>> out;

    std::string step_pointer(std::size_t i) const { return pointer_append("/steps", i); }
};

// The keys and model fields of a step's targets ("" in the model = end).
std::vector<std::pair<const char*, const std::string*>> targets_of(const step& s) {
    switch (s.kind) {
    case step_kind::check_invitation:
        return {{"on_accepted", &s.on_accepted},
                {"on_pending", &s.on_pending},
                {"on_no_invitation", &s.on_no_invitation}};
    case step_kind::wait_accepted:
        return {{"next", &s.next}, {"on_timeout", &s.on_timeout}};
    case step_kind::end:
        return {};
    default:
        return {{"next", &s.next}};
    }
}

bool check_ids(load_context& ctx, graph& g) {
    bool ok = true;
    for (std::size_t i = 0; i < g.c.steps.size(); ++i) {
        const std::string& id = g.c.steps[i].id;
        std::string pointer = pointer_append(g.step_pointer(i), "id");
        if (id == "end") {
            ctx.error(pointer, "step id 'end' is reserved: as a target it means the end of the sequence");
            ok = false;
        }
        auto [first, fresh] = g.index.emplace(id, i);
        if (!fresh) {
            ctx.error(
                pointer,
                "duplicate step id '" + id + "' (first at line " +
                    std::to_string(ctx.position(pointer_append(g.step_pointer(first->second), "id")).line) +
                    ")");
            ok = false;
        }
    }
    return ok;
}

bool build_edges(load_context& ctx, graph& g) {
    bool ok = true;
    std::vector<std::string> ids;
    for (const step& s : g.c.steps) {
        ids.push_back(s.id);
    }
    g.out.resize(g.c.steps.size());
    for (std::size_t i = 0; i < g.c.steps.size(); ++i) {
        const json& written = ctx.doc.value["steps"][i];
        for (const auto& [key, target] : targets_of(g.c.steps[i])) {
            if (target->empty()) {
                continue;  // end
            }
            auto it = g.index.find(*target);
            if (it == g.index.end()) {
                ctx.error(pointer_append(g.step_pointer(i), key),
                          "step '" + g.c.steps[i].id + "': " + key + " '" + *target +
                              "' is not a step id (nor end)" + did_you_mean(*target, ids));
                ok = false;
                continue;
            }
            g.out[i].push_back({it->second, written.contains(key) ? key : ""});
        }
    }
    return ok;
}

std::vector<bool> reachable_from(const graph& g, const std::vector<std::size_t>& starts) {
    std::vector<bool> seen(g.c.steps.size(), false);
    std::vector<std::size_t> stack = starts;
    while (!stack.empty()) {
        std::size_t i = stack.back();
        stack.pop_back();
        if (seen[i]) {
            continue;
        }
        seen[i] = true;
        for (const edge& e : g.out[i]) {
            stack.push_back(e.to);
        }
    }
    return seen;
}

bool check_reachable(load_context& ctx, const graph& g) {
    std::vector<bool> seen = reachable_from(g, {0});
    bool ok = true;
    for (std::size_t i = 1; i < seen.size(); ++i) {
        if (!seen[i]) {
            ctx.error(g.step_pointer(i), "step '" + g.c.steps[i].id +
                                             "' is never reached from the first step '" + g.c.steps[0].id +
                                             "'");
            ok = false;
        }
    }
    return ok;
}

// Depth-first search from the entry; an edge back to a step on the current path closes a loop.
void check_no_loops(load_context& ctx, const graph& g) {
    enum class mark { fresh, on_path, finished };
    std::vector<mark> marks(g.c.steps.size(), mark::fresh);
    std::vector<std::size_t> path;
    std::function<void(std::size_t)> visit = [&](std::size_t i) {
        marks[i] = mark::on_path;
        path.push_back(i);
        for (const edge& e : g.out[i]) {
            if (marks[e.to] == mark::on_path) {
                std::string loop;
                auto from = std::find(path.begin(), path.end(), e.to);
                for (auto it = from; it != path.end(); ++it) {
                    loop += g.c.steps[*it].id + " -> ";
                }
                std::string pointer =
                    e.key.empty() ? g.step_pointer(i) : pointer_append(g.step_pointer(i), e.key);
                ctx.error(pointer, "steps loop: " + loop + g.c.steps[e.to].id +
                                       "; a sequence must end, so no step may lead back to an earlier one");
            } else if (marks[e.to] == mark::fresh) {
                visit(e.to);
            }
        }
        path.pop_back();
        marks[i] = mark::finished;
    };
    visit(0);  // the recursion depth is bounded by the step count (schema: at most 200)
}

// A wait for an acceptance, or a withdrawal, needs an invitation: an invite step, or the PENDING
// branch of check_invitation, somewhere before it on at least one path. Otherwise the step is
// almost certainly a mistake, but not meaningless (the invitation may predate the campaign), so
// this is a warning.
void warn_without_invitation(load_context& ctx, const graph& g) {
    std::vector<std::size_t> after_invitation;
    for (std::size_t i = 0; i < g.c.steps.size(); ++i) {
        const step& s = g.c.steps[i];
        for (const edge& e : g.out[i]) {
            if (s.kind == step_kind::invite ||
                (s.kind == step_kind::check_invitation && e.key == "on_pending")) {
                after_invitation.push_back(e.to);
            }
        }
    }
    std::vector<bool> covered = reachable_from(g, after_invitation);
    for (std::size_t i = 0; i < g.c.steps.size(); ++i) {
        const step& s = g.c.steps[i];
        if (covered[i] || (s.kind != step_kind::wait_accepted && s.kind != step_kind::withdraw)) {
            continue;
        }
        ctx.warning(g.step_pointer(i),
                    "step '" + s.id + "' (" + to_string(s.kind) +
                        ") follows no invite and no PENDING branch of check_invitation on any "
                        "path: it only works for invitations sent outside this campaign");
    }
}

// A message needs a connection. One sent after an invite with no wait for the acceptance (or a
// check of the invitation) between goes to a person who has most likely not accepted yet; one
// after a wait_accepted's timeout, or a check_invitation's PENDING or NO_INVITATION branch, to a
// person who has not (the spec gives a connection as ACCEPTED, type CONNECTED): the platform
// refuses it. Not an error: the person may be connected already.
void warn_send_without_connection(load_context& ctx, const graph& g) {
    std::vector<bool> warned(g.c.steps.size(), false);
    for (std::size_t i = 0; i < g.c.steps.size(); ++i) {
        const step& from = g.c.steps[i];
        for (const edge& e : g.out[i]) {
            std::string after;  // what the send follows, and why the person is not connected
            if (from.kind == step_kind::invite) {
                after = "invite step '" + from.id + "' with no wait_accepted or check_invitation between: the person "
                        "has most likely not accepted yet";
            } else if (from.kind == step_kind::wait_accepted && e.key == "on_timeout") {
                after = "the timeout of wait_accepted step '" + from.id + "': the person did not accept";
            } else if (from.kind == step_kind::check_invitation && e.key == "on_pending") {
                after = "the PENDING branch of check_invitation step '" + from.id + "': the person has not accepted yet";
            } else if (from.kind == step_kind::check_invitation && e.key == "on_no_invitation") {
                after = "the NO_INVITATION branch of check_invitation step '" + from.id +
                        "': the person is not connected (the check gives a connection as ACCEPTED)";
            } else {
                continue;
            }
            // Each branch on its own, so that a send is told the branch it follows.
            std::vector<std::size_t> stack{e.to};
            std::vector<bool> seen(g.c.steps.size(), false);
            while (!stack.empty()) {
                const std::size_t j = stack.back();
                stack.pop_back();
                const step_kind kind = g.c.steps[j].kind;
                if (seen[j] || kind == step_kind::wait_accepted || kind == step_kind::check_invitation) {
                    continue;   // these look at the invitation again
                }
                seen[j] = true;
                if (kind == step_kind::send && !warned[j]) {
                    warned[j] = true;
                    ctx.warning(g.step_pointer(j), "step '" + g.c.steps[j].id + "' (send) can follow " + after +
                                                       ", and a message to someone not connected is refused");
                }
                if (kind == step_kind::invite) {
                    continue;   // what follows the invite is its own case, told from the invite
                }
                for (const edge& next : g.out[j]) {
                    stack.push_back(next.to);
                }
            }
        }
    }
}

}  // namespace

void check_step_graph(load_context& ctx, const campaign& c) {
    graph g{c, {}, {}};
    bool ids_ok = check_ids(ctx, g);
    bool edges_ok = build_edges(ctx, g);
    if (!ids_ok || !edges_ok) {
        return;  // the graph is not well defined; its other checks would only repeat these errors
    }
    bool reachable_ok = check_reachable(ctx, g);
    check_no_loops(ctx, g);
    if (reachable_ok) {
        warn_without_invitation(ctx, g);
        warn_send_without_connection(ctx, g);
    }
}

}  // namespace orch::campaigns::detail
