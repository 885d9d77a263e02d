-- A follow-up send of one message_text (variant 'default') overwrote the variant a lead got in an
-- A/B-tested send before it, so `report accounts` grouped a tested campaign's leads under
-- 'default' (campaigns/machine.hpp api_call::variant_chosen now keeps it). The leads it happened
-- to get back the last other variant their sends recorded (step_attempts.variant); a lead whose
-- sends were all of one variant keeps 'default'.
UPDATE enrollments e
SET variant = t.variant
FROM (
    SELECT DISTINCT ON (a.enrollment_id) a.enrollment_id, a.variant
    FROM step_attempts a
    WHERE a.variant IS NOT NULL AND a.variant <> 'default'
    ORDER BY a.enrollment_id, a.attempt_id DESC
) t
WHERE e.enrollment_id = t.enrollment_id AND e.variant = 'default';
