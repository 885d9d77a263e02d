-- exists($1 name): whether a campaign of that name exists (one index lookup).
SELECT EXISTS (SELECT 1 FROM campaigns WHERE name = $1);
