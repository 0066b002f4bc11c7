// The cluster's timings and its advisory-lock key (docs/guides/cluster.md). One place, so that the
// guide, the jobs (cluster/feature.ts) and the tests agree.

/** How often each node refreshes its row in cluster_nodes (a per-node job). */
export const HEARTBEAT_INTERVAL_MS = 5_000;
/** A node whose row was not refreshed for this many heartbeats is lost (the leader announces it once). */
export const LOST_AFTER_HEARTBEATS = 3;
export const LOST_AFTER_MS = HEARTBEAT_INTERVAL_MS * LOST_AFTER_HEARTBEATS;
/** How often a follower tries the leader's lock, and the leader checks its lock connection (a per-node job). */
export const LEADER_RETRY_MS = 1_500;
/** How long the leader's connection check may take before the leader gives up leading. */
export const LEADER_CHECK_TIMEOUT_MS = 3_000;
/**
 * PostgreSQL ends the lock's session when it has been idle this long (idle_session_timeout, PostgreSQL
 * 14+): the holder checks it every LEADER_RETRY_MS, so only a holder that stopped (killed, cut off)
 * goes quiet, and its lock is freed even when a proxy or relay between it and PostgreSQL keeps the
 * TCP connection open (where the TCP keepalives below see nothing).
 */
export const LEADER_IDLE_TIMEOUT_MS = 10_000;
/**
 * The PostgreSQL session advisory lock the leader holds (pg_try_advisory_lock(bigint)): one number
 * for every Gatehouse node on a database ("gatehous" as eight ASCII bytes, big-endian).
 */
export const LEADER_LOCK_KEY = '7449363237540164979';
/**
 * The PostgreSQL transaction advisory lock (pg_advisory_xact_lock(bigint)) that serialises the nodes'
 * joins: the licence check (who else is live) and the node's row are one transaction under it, so
 * two unlicensed nodes starting at the same instant cannot both join ("gatejoin" as eight ASCII
 * bytes, big-endian). Held for the transaction only; another number than the leader's session lock.
 */
export const JOIN_LOCK_KEY = '7449363237573716334';
