-- insert($1 name): a new campaign at version 1.
INSERT INTO campaigns (name) VALUES ($1) RETURNING campaign_id;
