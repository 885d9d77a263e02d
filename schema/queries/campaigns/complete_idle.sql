-- complete_idle(): every active campaign with nothing live is completed (campaign_complete_if_idle
-- of migration 0017, its lock and check again). The safety net of the completion trigger, run with
-- each credits read of `serve` (store::record_credit_read): a completion the trigger could miss
-- (more leads of one campaign ending at once than its 1,000-row bound) is made here.
SELECT count(*) FILTER (WHERE campaign_complete_if_idle(c.campaign_id))
FROM campaigns c
WHERE c.state = 'active'
  AND NOT EXISTS (SELECT 1 FROM enrollments e
                  WHERE e.campaign_id = c.campaign_id AND e.status IN ('ready', 'calling', 'waiting'));
