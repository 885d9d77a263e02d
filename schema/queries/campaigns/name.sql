-- name($1 campaign id): the campaign's name, for what serve logs of it (nothing: no such campaign).
SELECT name FROM campaigns WHERE campaign_id = $1;
