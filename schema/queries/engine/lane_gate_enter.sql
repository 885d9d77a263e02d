-- lane_gate_enter($1 gate, $2 how long to wait for it, in ms): the lane transaction's first
-- statement (migration 0021): true once the gate is held until the transaction ends, false when
-- it was not free in time (the lane goes on without it).
SELECT lane_gate_enter($1::integer, $2::integer);
