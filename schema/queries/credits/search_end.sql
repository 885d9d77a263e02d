-- search_end($1 search id): the apply booked the search's charge, or stored nothing.
DELETE FROM searches_in_flight WHERE search_id = $1;
