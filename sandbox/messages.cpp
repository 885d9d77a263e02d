#include "sandbox/service.hpp"
namespace orch::sandbox {
void register_messages_actions(action_table& table) { (void)table; }
bool simulate_reply(service&, account_state&, person_id, const std::string&, std::string& why) { why = "todo"; return false; }
} // namespace orch::sandbox
