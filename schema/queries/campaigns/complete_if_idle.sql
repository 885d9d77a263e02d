-- complete_if_idle($1 campaign id): an active campaign with nothing live (an audience that
-- matched nobody, or whose every lead another campaign owns) is completed (migration 0017).
SELECT campaign_complete_if_idle($1);
