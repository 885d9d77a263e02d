-- lane_gate_enter($1 gates, $2 the lane's preferred gate, $3 how long to queue for it, in ms): the
-- lane transaction's first statement (migration 0021): the gate it holds until the transaction
-- ends, or -1 when none was free in time (the lane goes on without one).
SELECT lane_gate_enter($1::integer, $2::integer, $3::integer);
