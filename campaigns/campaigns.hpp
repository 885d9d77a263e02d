// orch_campaigns: pure domain code (no I/O) — the campaign model, the definition loader and the
// step state machine. Other folders include this header only.
#pragma once

#include "campaigns/estimate.hpp"
#include "campaigns/loader.hpp"
#include "campaigns/machine.hpp"
#include "campaigns/model.hpp"
