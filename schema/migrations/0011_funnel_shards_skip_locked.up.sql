-- funnel_counts (migration 0008) without waits between writers.
--
-- A writer added its differences to the shard row of its backend (pg_backend_pid() % 8), locked
-- from that statement to the end of its transaction. Two backends with the same remainder took
-- turns: with 4 worker processes (8 lanes), settles waited 17 s in all on funnel_counts rows in
-- a 6-second run of tests/bench/engine_bench.sh, and 4 processes ran slower than 1.
--
-- Now a writer takes, for each (campaign, account) pair, the first shard row no other transaction
-- holds (FOR UPDATE SKIP LOCKED; rows its own transaction holds are not skipped), and adds a new
-- shard row when every one is held. No writer waits for another; a pair has as many shard rows as
-- it ever had concurrent writers (readers already sum the shards). Pairs are still visited in one
-- order.
CREATE OR REPLACE FUNCTION funnel_counts_add(facts funnel_fact[]) RETURNS void
LANGUAGE plpgsql AS $$
DECLARE
    s record;
    picked smallint;
BEGIN
FOR s IN
    SELECT campaign_id, account_id, sum(enrolled) AS enrolled, sum(checked) AS checked,
           sum(invited) AS invited, sum(accepted) AS accepted, sum(messaged) AS messaged,
           sum(replied) AS replied, sum(failed) AS failed, sum(live) AS live, sum(credits) AS credits
    FROM unnest(facts)
    GROUP BY campaign_id, account_id
    HAVING (sum(enrolled), sum(checked), sum(invited), sum(accepted), sum(messaged), sum(replied), sum(failed),
            sum(live), sum(credits)) <> (0, 0, 0, 0, 0, 0, 0, 0, 0)
    ORDER BY campaign_id, account_id
LOOP
    SELECT f.shard INTO picked FROM funnel_counts f
    WHERE f.campaign_id = s.campaign_id AND f.account_id = s.account_id
    ORDER BY f.shard
    LIMIT 1
    FOR UPDATE SKIP LOCKED;
    IF FOUND THEN
        UPDATE funnel_counts f
        SET enrolled = f.enrolled + s.enrolled, checked = f.checked + s.checked, invited = f.invited + s.invited,
            accepted = f.accepted + s.accepted, messaged = f.messaged + s.messaged, replied = f.replied + s.replied,
            failed = f.failed + s.failed, live = f.live + s.live, credits = f.credits + s.credits
        WHERE f.campaign_id = s.campaign_id AND f.account_id = s.account_id AND f.shard = picked;
    ELSE
        -- every shard row is held by another writer (or there is none yet): a new one, at a random
        -- number so that two writers adding one at once do not pick the same
        INSERT INTO funnel_counts AS f (campaign_id, account_id, shard, enrolled, checked, invited, accepted,
                                        messaged, replied, failed, live, credits)
        VALUES (s.campaign_id, s.account_id, (random() * 32767)::smallint, s.enrolled, s.checked, s.invited,
                s.accepted, s.messaged, s.replied, s.failed, s.live, s.credits)
        ON CONFLICT (campaign_id, account_id, shard) DO UPDATE
        SET enrolled = f.enrolled + excluded.enrolled, checked = f.checked + excluded.checked,
            invited = f.invited + excluded.invited, accepted = f.accepted + excluded.accepted,
            messaged = f.messaged + excluded.messaged, replied = f.replied + excluded.replied,
            failed = f.failed + excluded.failed, live = f.live + excluded.live,
            credits = f.credits + excluded.credits;
    END IF;
END LOOP;
END $$;
