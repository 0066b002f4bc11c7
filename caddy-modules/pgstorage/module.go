package pgstorage

import (
	"errors"
	"fmt"
	"time"

	"github.com/caddyserver/caddy/v2"
	"github.com/caddyserver/caddy/v2/caddyconfig/caddyfile"
	"github.com/caddyserver/certmagic"
)

func init() {
	caddy.RegisterModule(Storage{})
}

// pools shares one Backend between config loads with the same DSN, table
// and TTL, so a reload neither reconnects nor drops the locks it holds.
var pools = caddy.NewUsagePool()

// Storage is the `caddy.storage.gatehouse_postgres` module.
type Storage struct {
	// DSN of the PostgreSQL database; placeholders such as
	// {env.GATEHOUSE_CADDY_STORAGE_DSN} are replaced, so the secret need not
	// be in the config.
	DSN string `json:"dsn,omitempty"`
	// Table for the keys (locks: <table>_locks). Default gatehouse_caddy_storage.
	Table string `json:"table,omitempty"`
	// LockTTL: how long a lock outlives its holder's last refresh. Default 10s.
	LockTTL caddy.Duration `json:"lock_ttl,omitempty"`

	backend *Backend
	poolKey string
}

// CaddyModule returns the Caddy module information.
func (Storage) CaddyModule() caddy.ModuleInfo {
	return caddy.ModuleInfo{
		ID:  "caddy.storage.gatehouse_postgres",
		New: func() caddy.Module { return new(Storage) },
	}
}

// Provision resolves the DSN and takes (or opens) the shared Backend.
func (s *Storage) Provision(ctx caddy.Context) error {
	dsn := caddy.NewReplacer().ReplaceKnown(s.DSN, "")
	if dsn == "" {
		if s.DSN != "" {
			return fmt.Errorf("gatehouse_postgres: dsn %q is empty after replacing placeholders", s.DSN)
		}
		return errors.New("gatehouse_postgres: dsn is required")
	}
	table := s.Table
	if table == "" {
		table = DefaultTable
	}
	ttl := time.Duration(s.LockTTL)
	if ttl == 0 {
		ttl = DefaultLockTTL
	}
	if ttl < time.Second {
		return fmt.Errorf("gatehouse_postgres: lock_ttl %s is below 1s", ttl)
	}
	logger := ctx.Logger()
	s.poolKey = fmt.Sprintf("%s\x00%s\x00%s", dsn, table, ttl)
	val, _, err := pools.LoadOrNew(s.poolKey, func() (caddy.Destructor, error) {
		return Open(Options{DSN: dsn, Table: table, LockTTL: ttl, Logger: logger})
	})
	if err != nil {
		s.poolKey = ""
		return err
	}
	s.backend = val.(*Backend)
	return nil
}

// Cleanup gives back this config's use of the shared Backend.
func (s *Storage) Cleanup() error {
	if s.poolKey == "" {
		return nil
	}
	_, err := pools.Delete(s.poolKey)
	s.poolKey = ""
	return err
}

// CertMagicStorage implements caddy.StorageConverter.
func (s *Storage) CertMagicStorage() (certmagic.Storage, error) {
	if s.backend == nil {
		return nil, errors.New("gatehouse_postgres: not provisioned")
	}
	return s.backend, nil
}

// UnmarshalCaddyfile reads
//
//	storage gatehouse_postgres {
//		dsn   <dsn>
//		table <name>
//		lock_ttl <duration>
//	}
func (s *Storage) UnmarshalCaddyfile(d *caddyfile.Dispenser) error {
	d.Next() // the module name
	if d.NextArg() {
		return d.ArgErr()
	}
	for d.NextBlock(0) {
		key := d.Val()
		if !d.NextArg() {
			return d.ArgErr()
		}
		val := d.Val()
		if d.NextArg() {
			return d.ArgErr()
		}
		switch key {
		case "dsn":
			s.DSN = val
		case "table":
			s.Table = val
		case "lock_ttl":
			dur, err := caddy.ParseDuration(val)
			if err != nil {
				return d.Errf("lock_ttl: %v", err)
			}
			s.LockTTL = caddy.Duration(dur)
		default:
			return d.Errf("unknown subdirective %q", key)
		}
	}
	return nil
}

var (
	_ caddy.Provisioner      = (*Storage)(nil)
	_ caddy.CleanerUpper     = (*Storage)(nil)
	_ caddy.StorageConverter = (*Storage)(nil)
	_ caddyfile.Unmarshaler  = (*Storage)(nil)
)
