#include "sandbox/service.hpp"
namespace orch::sandbox {
void register_network_actions(action_table& table) { (void)table; }
void seed_account_network(service&, account_state&) {}
bool simulate_acceptance(service&, account_state&, person_id, std::string& why) { why = "todo"; return false; }
bool simulate_received_invitation(service&, account_state&, person_id, std::string& why) { why = "todo"; return false; }
} // namespace orch::sandbox
