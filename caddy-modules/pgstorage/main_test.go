package pgstorage

import (
	"bufio"
	"context"
	"crypto/rand"
	"encoding/hex"
	"fmt"
	"os"
	"os/exec"
	"strings"
	"sync"
	"testing"
	"time"

	caddycmd "github.com/caddyserver/caddy/v2/cmd"
	"github.com/jackc/pgx/v5"
)

// The test binary doubles as the child processes of these tests:
//   - GATEHOUSE_PGSTORAGE_CHILD=lock: takes a lock, says "locked", and waits
//     to be killed (a holder that dies without Unlock);
//   - GATEHOUSE_PGSTORAGE_CHILD=caddy: is Caddy (with the standard modules
//     and this one), for the two-node certificate test.
func TestMain(m *testing.M) {
	switch os.Getenv("GATEHOUSE_PGSTORAGE_CHILD") {
	case "lock":
		childLock()
		return
	case "caddy":
		caddycmd.Main()
		return
	}
	code := m.Run()
	dropTestDatabase()
	os.Exit(code)
}

func childLock() {
	b, err := Open(Options{DSN: os.Getenv("PGS_DSN"), Table: os.Getenv("PGS_TABLE"), LockTTL: childTTL()})
	if err != nil {
		fmt.Println("error:", err)
		os.Exit(1)
	}
	if err := b.Lock(context.Background(), os.Getenv("PGS_LOCK")); err != nil {
		fmt.Println("error:", err)
		os.Exit(1)
	}
	fmt.Println("locked")
	select {}
}

func childTTL() time.Duration {
	d, _ := time.ParseDuration(os.Getenv("PGS_TTL"))
	return d
}

var (
	dsnOnce sync.Once
	baseDSN string // a role that may create databases
	dbName  string // this run's database
	dsn     string // ... and its URL
	dsnWhy  string
)

// testDSN is the URL of a database made for this run, by the role of
// TEST_DATABASE_URL or of the URL scripts/pg-test-server.sh prints (it
// starts Debian's PostgreSQL when needed). Without one the test is skipped,
// except in CI (CI=true), where it fails.
func testDSN(t *testing.T) string {
	t.Helper()
	dsnOnce.Do(func() {
		baseDSN = os.Getenv("TEST_DATABASE_URL")
		if baseDSN == "" {
			out, err := exec.Command("bash", "../../scripts/pg-test-server.sh").Output()
			lines := strings.Split(strings.TrimSpace(string(out)), "\n")
			if err != nil || !strings.HasPrefix(lines[len(lines)-1], "postgres://") {
				dsnWhy = fmt.Sprintf("no PostgreSQL (TEST_DATABASE_URL unset, scripts/pg-test-server.sh: %v)", err)
				return
			}
			baseDSN = lines[len(lines)-1]
		}
		ctx := context.Background()
		conn, err := pgx.Connect(ctx, baseDSN)
		if err != nil {
			dsnWhy = fmt.Sprintf("no PostgreSQL: %v", err)
			return
		}
		defer conn.Close(ctx)
		var r [4]byte
		_, _ = rand.Read(r[:])
		name := fmt.Sprintf("pgstorage_test_%d_%s", os.Getpid(), hex.EncodeToString(r[:]))
		if _, err := conn.Exec(ctx, "CREATE DATABASE "+name); err != nil {
			dsnWhy = fmt.Sprintf("cannot create a test database: %v", err)
			return
		}
		cfg, err := pgx.ParseConfig(baseDSN)
		if err != nil {
			dsnWhy = err.Error()
			return
		}
		dbName = name
		dsn = fmt.Sprintf("postgres://%s:%s@%s:%d/%s", cfg.User, cfg.Password, cfg.Host, cfg.Port, name)
	})
	if dsn == "" {
		if os.Getenv("CI") != "" {
			t.Fatal(dsnWhy)
		}
		t.Skip(dsnWhy)
	}
	return dsn
}

// dropTestDatabase drops the run's database (its tables with it).
func dropTestDatabase() {
	if dbName == "" {
		return
	}
	ctx := context.Background()
	conn, err := pgx.Connect(ctx, baseDSN)
	if err != nil {
		return
	}
	defer conn.Close(ctx)
	_, _ = conn.Exec(ctx, "DROP DATABASE IF EXISTS "+dbName+" WITH (FORCE)")
}

// newTable names a fresh table for one test and drops it (and its lock
// table) when the test ends.
func newTable(t *testing.T) string {
	t.Helper()
	d := testDSN(t)
	var r [5]byte
	_, _ = rand.Read(r[:])
	table := "pgstorage_test_" + hex.EncodeToString(r[:])
	t.Cleanup(func() {
		conn, err := pgx.Connect(context.Background(), d)
		if err != nil {
			return
		}
		defer conn.Close(context.Background())
		_, _ = conn.Exec(context.Background(), `DROP TABLE IF EXISTS `+table+`, `+table+`_locks`)
	})
	return table
}

// open opens a Backend (its own pool) on table and closes it at the end.
func open(t *testing.T, table string, ttl time.Duration) *Backend {
	t.Helper()
	b, err := Open(Options{DSN: testDSN(t), Table: table, LockTTL: ttl})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(b.Close)
	return b
}

// startLockChild runs the test binary as a process that takes the lock and
// returns once it holds it.
func startLockChild(t *testing.T, table, lock string, ttl time.Duration) *exec.Cmd {
	t.Helper()
	cmd := exec.Command(os.Args[0])
	cmd.Env = append(os.Environ(), "GATEHOUSE_PGSTORAGE_CHILD=lock", "PGS_DSN="+testDSN(t), "PGS_TABLE="+table,
		"PGS_LOCK="+lock, "PGS_TTL="+ttl.String())
	out, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = cmd.Process.Kill(); _ = cmd.Wait() })
	line, err := bufio.NewReader(out).ReadString('\n')
	if err != nil || strings.TrimSpace(line) != "locked" {
		t.Fatalf("lock child: %q %v", line, err)
	}
	return cmd
}
