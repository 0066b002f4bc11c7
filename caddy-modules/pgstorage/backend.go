package pgstorage

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"regexp"
	"strings"
	"sync"
	"time"

	"github.com/caddyserver/certmagic"
	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"
	"go.uber.org/zap"
)

// DefaultTable is the key table's name when the config names none.
const DefaultTable = "gatehouse_caddy_storage"

// DefaultLockTTL is how long a lock outlives its holder's last refresh.
const DefaultLockTTL = 10 * time.Second

// tableRE is what a table name may be: it is put into SQL as an identifier
// (with <table>_locks beside it), so only plain lower-case names are taken.
var tableRE = regexp.MustCompile(`^[a-z_][a-z0-9_]{0,50}$`)

// Options configure a Backend opened with Open.
type Options struct {
	// DSN is a PostgreSQL connection string (URL or key=value).
	DSN string
	// Table holds the keys; locks go to Table+"_locks". DefaultTable if empty.
	Table string
	// LockTTL: a lock expires this long after its holder's last refresh.
	// DefaultLockTTL if zero.
	LockTTL time.Duration
	// Logger for lock refresh failures; zap.NewNop() if nil.
	Logger *zap.Logger
}

// Backend is a certmagic.Storage (and TryLocker, LockLeaseRenewer) on a
// pgx pool. It is safe for concurrent use.
type Backend struct {
	pool    *pgxpool.Pool
	table   string // quoted identifier
	locks   string // quoted identifier
	name    string // unquoted, for the schema lock
	ttl     time.Duration
	ownerID string
	logger  *zap.Logger

	schemaMu    sync.Mutex
	schemaReady bool

	mu     sync.Mutex
	held   map[string]*heldLock
	closed bool
}

// heldLock is a lock this Backend holds and keeps alive.
type heldLock struct {
	token string
	stop  chan struct{}
	done  chan struct{}
}

var (
	_ certmagic.Storage          = (*Backend)(nil)
	_ certmagic.TryLocker        = (*Backend)(nil)
	_ certmagic.LockLeaseRenewer = (*Backend)(nil)
)

// Open makes a Backend. It does not connect: the tables are created (when
// absent) by the first operation that reaches the database.
func Open(o Options) (*Backend, error) {
	if strings.TrimSpace(o.DSN) == "" {
		return nil, errors.New("pgstorage: dsn is empty")
	}
	if o.Table == "" {
		o.Table = DefaultTable
	}
	if !tableRE.MatchString(o.Table) {
		return nil, fmt.Errorf("pgstorage: table %q: must match %s", o.Table, tableRE)
	}
	if o.LockTTL == 0 {
		o.LockTTL = DefaultLockTTL
	}
	if o.LockTTL < 100*time.Millisecond {
		return nil, fmt.Errorf("pgstorage: lock_ttl %s is below 100ms", o.LockTTL)
	}
	if o.Logger == nil {
		o.Logger = zap.NewNop()
	}
	cfg, err := pgxpool.ParseConfig(o.DSN)
	if err != nil {
		// pgx's message may quote the DSN (and so a password): keep it out.
		return nil, errors.New("pgstorage: the dsn is not a valid PostgreSQL connection string")
	}
	if cfg.ConnConfig.ConnectTimeout == 0 {
		cfg.ConnConfig.ConnectTimeout = 5 * time.Second
	}
	if cfg.MaxConns > 8 {
		cfg.MaxConns = 8
	}
	pool, err := pgxpool.NewWithConfig(context.Background(), cfg)
	if err != nil {
		return nil, fmt.Errorf("pgstorage: %w", err)
	}
	host, _ := os.Hostname()
	return &Backend{
		pool:    pool,
		table:   pgx.Identifier{o.Table}.Sanitize(),
		locks:   pgx.Identifier{o.Table + "_locks"}.Sanitize(),
		name:    o.Table,
		ttl:     o.LockTTL,
		ownerID: fmt.Sprintf("%s/%d", host, os.Getpid()),
		logger:  o.Logger,
		held:    map[string]*heldLock{},
	}, nil
}

// Close stops keeping this Backend's locks alive (they expire after the
// TTL) and closes its pool.
func (b *Backend) Close() {
	b.mu.Lock()
	b.closed = true
	held := b.held
	b.held = map[string]*heldLock{}
	b.mu.Unlock()
	for _, h := range held {
		close(h.stop)
		<-h.done
	}
	b.pool.Close()
}

// Destruct implements caddy.Destructor (the Backend lives in a UsagePool).
func (b *Backend) Destruct() error {
	b.Close()
	return nil
}

// ensureSchema creates the tables when absent, once per Backend (retried
// after a failure). Concurrent creators on other nodes are serialised by a
// transaction-level advisory lock, as CREATE TABLE IF NOT EXISTS alone can
// fail when two run at once.
func (b *Backend) ensureSchema(ctx context.Context) error {
	b.schemaMu.Lock()
	defer b.schemaMu.Unlock()
	if b.schemaReady {
		return nil
	}
	err := pgx.BeginFunc(ctx, b.pool, func(tx pgx.Tx) error {
		if _, err := tx.Exec(ctx, `SELECT pg_advisory_xact_lock(hashtext($1))`, "gatehouse_pgstorage:"+b.name); err != nil {
			return err
		}
		_, err := tx.Exec(ctx, `CREATE TABLE IF NOT EXISTS `+b.table+` (
			key text COLLATE "C" PRIMARY KEY,
			value bytea NOT NULL,
			modified timestamptz NOT NULL DEFAULT now())`)
		if err != nil {
			return err
		}
		_, err = tx.Exec(ctx, `CREATE TABLE IF NOT EXISTS `+b.locks+` (
			name text PRIMARY KEY,
			owner text NOT NULL,
			expires_at timestamptz NOT NULL)`)
		return err
	})
	if err != nil {
		return fmt.Errorf("pgstorage: creating tables %s: %w", b.name, err)
	}
	b.schemaReady = true
	return nil
}

// normKey drops leading and trailing slashes (certmagic's keys have none).
func normKey(key string) string { return strings.Trim(key, "/") }

// under returns the SQL condition for "key is strictly below prefix" (a
// component-wise prefix: "a" is one of "a/b", not of "ab") and its two
// arguments, numbered from n. With COLLATE "C" the range is byte order, so
// the primary key's index serves it: every "p/..." sorts in ["p/", "p0").
func under(prefix string, n int) (string, []any) {
	if prefix == "" {
		return "TRUE", nil
	}
	return fmt.Sprintf("(key >= $%d AND key < $%d)", n, n+1), []any{prefix + "/", prefix + "0"}
}

// Store puts value at key.
func (b *Backend) Store(ctx context.Context, key string, value []byte) error {
	key = normKey(key)
	if key == "" {
		return errors.New("pgstorage: empty key")
	}
	if err := b.ensureSchema(ctx); err != nil {
		return err
	}
	if value == nil {
		value = []byte{}
	}
	_, err := b.pool.Exec(ctx, `INSERT INTO `+b.table+` (key, value, modified) VALUES ($1, $2, clock_timestamp())
		ON CONFLICT (key) DO UPDATE SET value = EXCLUDED.value, modified = EXCLUDED.modified`, key, value)
	if err != nil {
		return fmt.Errorf("pgstorage: storing %s: %w", key, err)
	}
	return nil
}

// Load returns the value at key, or an error wrapping fs.ErrNotExist.
func (b *Backend) Load(ctx context.Context, key string) ([]byte, error) {
	key = normKey(key)
	if err := b.ensureSchema(ctx); err != nil {
		return nil, err
	}
	var value []byte
	err := b.pool.QueryRow(ctx, `SELECT value FROM `+b.table+` WHERE key = $1`, key).Scan(&value)
	if errors.Is(err, pgx.ErrNoRows) {
		return nil, fmt.Errorf("pgstorage: %s: %w", key, fs.ErrNotExist)
	}
	if err != nil {
		return nil, fmt.Errorf("pgstorage: loading %s: %w", key, err)
	}
	return value, nil
}

// Delete removes key and every key below it. A missing key is no error.
func (b *Backend) Delete(ctx context.Context, key string) error {
	key = normKey(key)
	if key == "" {
		return errors.New("pgstorage: refusing to delete the whole storage (empty key)")
	}
	if err := b.ensureSchema(ctx); err != nil {
		return err
	}
	cond, args := under(key, 2)
	_, err := b.pool.Exec(ctx, `DELETE FROM `+b.table+` WHERE key = $1 OR `+cond, append([]any{key}, args...)...)
	if err != nil {
		return fmt.Errorf("pgstorage: deleting %s: %w", key, err)
	}
	return nil
}

// Exists reports whether key is a stored key or the prefix of one.
func (b *Backend) Exists(ctx context.Context, key string) bool {
	key = normKey(key)
	if err := b.ensureSchema(ctx); err != nil {
		return false
	}
	cond, args := under(key, 2)
	var ok bool
	err := b.pool.QueryRow(ctx, `SELECT EXISTS (SELECT 1 FROM `+b.table+` WHERE key = $1 OR `+cond+`)`,
		append([]any{key}, args...)...).Scan(&ok)
	return err == nil && ok
}

// Stat describes key: a stored key (terminal, with size and modification
// time) or a prefix of stored keys (a directory, modified when the newest key
// below it was); fs.ErrNotExist otherwise.
func (b *Backend) Stat(ctx context.Context, key string) (certmagic.KeyInfo, error) {
	key = normKey(key)
	if err := b.ensureSchema(ctx); err != nil {
		return certmagic.KeyInfo{}, err
	}
	var size int64
	var modified time.Time
	err := b.pool.QueryRow(ctx, `SELECT octet_length(value), modified FROM `+b.table+` WHERE key = $1`, key).Scan(&size, &modified)
	if err == nil {
		return certmagic.KeyInfo{Key: key, Modified: modified, Size: size, IsTerminal: true}, nil
	}
	if !errors.Is(err, pgx.ErrNoRows) {
		return certmagic.KeyInfo{}, fmt.Errorf("pgstorage: stat %s: %w", key, err)
	}
	cond, args := under(key, 1)
	var newest *time.Time
	if err := b.pool.QueryRow(ctx, `SELECT max(modified) FROM `+b.table+` WHERE `+cond, args...).Scan(&newest); err != nil {
		return certmagic.KeyInfo{}, fmt.Errorf("pgstorage: stat %s: %w", key, err)
	}
	if newest == nil {
		return certmagic.KeyInfo{}, fmt.Errorf("pgstorage: %s: %w", key, fs.ErrNotExist)
	}
	return certmagic.KeyInfo{Key: key, Modified: *newest, IsTerminal: false}, nil
}

// List returns the keys below prefix as file storage does: without
// recursive, the direct children (files and directories); with it, every
// key and every directory at any depth. A prefix that is neither a stored
// key nor a directory gives fs.ErrNotExist; a stored key has no children.
func (b *Backend) List(ctx context.Context, prefix string, recursive bool) ([]string, error) {
	prefix = normKey(prefix)
	if err := b.ensureSchema(ctx); err != nil {
		return nil, err
	}
	cond, args := under(prefix, 1)
	rows, err := b.pool.Query(ctx, `SELECT key FROM `+b.table+` WHERE `+cond+` ORDER BY key`, args...)
	if err != nil {
		return nil, fmt.Errorf("pgstorage: listing %s: %w", prefix, err)
	}
	keys, err := pgx.CollectRows(rows, pgx.RowTo[string])
	if err != nil {
		return nil, fmt.Errorf("pgstorage: listing %s: %w", prefix, err)
	}
	if len(keys) == 0 {
		if prefix != "" && b.Exists(ctx, prefix) {
			return nil, nil
		}
		return nil, fmt.Errorf("pgstorage: %s: %w", prefix, fs.ErrNotExist)
	}
	base := ""
	if prefix != "" {
		base = prefix + "/"
	}
	seen := map[string]bool{}
	var out []string
	add := func(k string) {
		if !seen[k] {
			seen[k] = true
			out = append(out, k)
		}
	}
	for _, k := range keys {
		parts := strings.Split(strings.TrimPrefix(k, base), "/")
		if !recursive {
			add(base + parts[0])
			continue
		}
		for i := range parts {
			add(base + strings.Join(parts[:i+1], "/"))
		}
	}
	return out, nil
}

// newToken names one holding of a lock: this process and 16 random bytes.
func (b *Backend) newToken() string {
	var r [16]byte
	_, _ = rand.Read(r[:])
	return b.ownerID + "/" + hex.EncodeToString(r[:])
}

// pollInterval is how often a waiting Lock tries again.
func (b *Backend) pollInterval() time.Duration {
	return min(b.ttl/4, time.Second)
}

// TryLock takes the named lock if it is free or expired and reports whether
// it did. A held lock is refreshed in the background until Unlock.
func (b *Backend) TryLock(ctx context.Context, name string) (bool, error) {
	if err := b.ensureSchema(ctx); err != nil {
		return false, err
	}
	token := b.newToken()
	var got string
	err := b.pool.QueryRow(ctx, `INSERT INTO `+b.locks+` AS l (name, owner, expires_at)
		VALUES ($1, $2, clock_timestamp() + make_interval(secs => $3))
		ON CONFLICT (name) DO UPDATE SET owner = EXCLUDED.owner, expires_at = EXCLUDED.expires_at
		WHERE l.expires_at < clock_timestamp()
		RETURNING owner`, name, token, b.ttl.Seconds()).Scan(&got)
	if errors.Is(err, pgx.ErrNoRows) {
		return false, nil
	}
	if err != nil {
		return false, fmt.Errorf("pgstorage: locking %s: %w", name, err)
	}
	h := &heldLock{token: token, stop: make(chan struct{}), done: make(chan struct{})}
	b.mu.Lock()
	if b.closed {
		b.mu.Unlock()
		return false, errors.New("pgstorage: storage closed")
	}
	old := b.held[name]
	b.held[name] = h
	b.mu.Unlock()
	if old != nil {
		// Our earlier holding expired (its refresh failed) and we took it again.
		close(old.stop)
		<-old.done
	}
	go b.keepAlive(name, h)
	return true, nil
}

// Lock waits for the named lock until it is taken or ctx ends.
func (b *Backend) Lock(ctx context.Context, name string) error {
	for {
		ok, err := b.TryLock(ctx, name)
		if err != nil {
			return err
		}
		if ok {
			return nil
		}
		t := time.NewTimer(b.pollInterval())
		select {
		case <-ctx.Done():
			t.Stop()
			return ctx.Err()
		case <-t.C:
		}
	}
}

// keepAlive pushes the lock's expiry forward every TTL/3 until stopped, or
// until the row is no longer ours (it expired and another node took it).
func (b *Backend) keepAlive(name string, h *heldLock) {
	defer close(h.done)
	every := b.ttl / 3
	t := time.NewTicker(every)
	defer t.Stop()
	for {
		select {
		case <-h.stop:
			return
		case <-t.C:
		}
		ctx, cancel := context.WithTimeout(context.Background(), every)
		tag, err := b.pool.Exec(ctx, `UPDATE `+b.locks+` SET expires_at = greatest(expires_at, clock_timestamp() + make_interval(secs => $3))
			WHERE name = $1 AND owner = $2`, name, h.token, b.ttl.Seconds())
		cancel()
		switch {
		case err != nil:
			b.logger.Warn("refreshing a storage lock failed", zap.String("lock", name), zap.Error(err))
		case tag.RowsAffected() == 0:
			b.logger.Error("a storage lock was lost: it expired and another holder took it", zap.String("lock", name))
			return
		}
	}
}

// Unlock releases the named lock if this Backend holds it; a lock that
// expired and was taken by another holder is left to that holder.
func (b *Backend) Unlock(ctx context.Context, name string) error {
	b.mu.Lock()
	h := b.held[name]
	delete(b.held, name)
	b.mu.Unlock()
	if h == nil {
		return fmt.Errorf("pgstorage: unlock %s: not held here", name)
	}
	close(h.stop)
	<-h.done
	tag, err := b.pool.Exec(ctx, `DELETE FROM `+b.locks+` WHERE name = $1 AND owner = $2`, name, h.token)
	if err != nil {
		return fmt.Errorf("pgstorage: unlock %s: %w", name, err)
	}
	if tag.RowsAffected() == 0 {
		return fmt.Errorf("pgstorage: unlock %s: the lock had expired and was taken by another holder", name)
	}
	return nil
}

// RenewLockLease makes a held lock last at least leaseDuration from now.
func (b *Backend) RenewLockLease(ctx context.Context, name string, leaseDuration time.Duration) error {
	b.mu.Lock()
	h := b.held[name]
	b.mu.Unlock()
	if h == nil {
		return fmt.Errorf("pgstorage: renew %s: not held here", name)
	}
	tag, err := b.pool.Exec(ctx, `UPDATE `+b.locks+` SET expires_at = greatest(expires_at, clock_timestamp() + make_interval(secs => $3))
		WHERE name = $1 AND owner = $2`, name, h.token, leaseDuration.Seconds())
	if err != nil {
		return fmt.Errorf("pgstorage: renew %s: %w", name, err)
	}
	if tag.RowsAffected() == 0 {
		return fmt.Errorf("pgstorage: renew %s: the lock had expired and was taken by another holder", name)
	}
	return nil
}

// String names the storage in Caddy's logs (never the DSN).
func (b *Backend) String() string { return "gatehouse_postgres:" + b.name }
