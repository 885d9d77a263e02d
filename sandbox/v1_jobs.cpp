// Placeholder until issue 3 fills this area in (no routes registered: the paths answer 404).
#include "sandbox/service.hpp"
namespace orch::sandbox {
void register_v1_jobs_routes(v1_table&) {}
} // namespace orch::sandbox
