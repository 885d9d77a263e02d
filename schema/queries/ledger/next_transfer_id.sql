-- next_transfer_id(): a transfer id taken ahead of its insert, for a transfer written posted at
-- once with its entries in one apply (ledger charge(): no attempt id to tie the entries to). The
-- sequence is the column's own (its default, bigserial of migration 0002).
SELECT nextval('ledger_transfers_transfer_id_seq'::regclass);
