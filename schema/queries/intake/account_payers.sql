-- account_payers($1 account): the campaigns that may pay for a read on the account made before
-- it is known whom it serves (serve's read of a conversation to find the sender of a message
-- event that names only its conversation), in the order they are asked for credits: those with
-- a live enrollment on the account first, then the others with an enrollment there; the newest
-- first. Each campaign is reached through its own enrollments (enrollments_campaign_status).
SELECT c.campaign_id
FROM campaigns c
WHERE EXISTS (SELECT 1 FROM enrollments e WHERE e.campaign_id = c.campaign_id AND e.account_id = $1)
ORDER BY EXISTS (SELECT 1 FROM enrollments e
                 WHERE e.campaign_id = c.campaign_id AND e.account_id = $1
                   AND e.status IN ('ready', 'calling', 'waiting')) DESC,
         c.campaign_id DESC
LIMIT 16;
