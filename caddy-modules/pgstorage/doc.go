// Package pgstorage provides Gatehouse's Caddy storage on PostgreSQL,
// registered as `caddy.storage.gatehouse_postgres`, so that every edge of a
// cluster shares one set of certificates, ACME accounts, the local CA and
// the locks that make one node issue while the others wait.
//
// Config (the top-level "storage" of Caddy's JSON):
//
//	{"module": "gatehouse_postgres",
//	 "dsn": "{env.GATEHOUSE_CADDY_STORAGE_DSN}",   // placeholders are replaced
//	 "table": "gatehouse_caddy_storage",           // optional
//	 "lock_ttl": "10s"}                            // optional
//
// Keys live in <table> (key text COLLATE "C" primary key, value bytea,
// modified timestamptz), locks in <table>_locks (name, owner token, expires_at).
// Both are created when absent. A lock is a row whose expiry the holder
// pushes forward every lock_ttl/3 while it holds it; a holder that dies stops
// doing so, and its lock is taken over once expired (lock_ttl after its last
// refresh). Every time comparison uses the database's clock, so nodes' clocks
// do not matter. Unlock deletes the row only when it still carries the
// holder's token. Pools are shared between config loads with the same DSN and
// table (a caddy.UsagePool), so a reload keeps its locks.
package pgstorage
