-- add_credits($1 reply, $2 credits): what the reply's calls were charged.
UPDATE manual_replies SET credits = credits + $2 WHERE reply_id = $1;
