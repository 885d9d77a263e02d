-- search_basis($1 name): of the campaign's current version, what its audience search depends on
-- (engine/campaign_apply search_basis: the audience, the exclusions, the first account, which
-- sends the search, and the campaign's search limits), when its audience is a search; no row
-- otherwise. A file audience's leads are not read: they may be megabytes.
SELECT jsonb_build_object('audience', v.definition -> 'audience',
                          'exclude', v.definition -> 'exclude',
                          'first_account', v.definition -> 'accounts' -> 0,
                          'search_limits', v.definition -> 'limits' -> 'search')::text
FROM campaigns c JOIN campaign_versions v ON v.campaign_id = c.campaign_id AND v.version = c.current_version
WHERE c.name = $1 AND v.definition -> 'audience' ->> 'source' = 'search'
